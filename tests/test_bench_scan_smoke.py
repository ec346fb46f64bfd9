"""bench/scan_bench.py runs end to end on a tiny size and prints its table, on local[2]
and on a standalone cluster started for it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytestmark = pytest.mark.spark

pytest.importorskip("pyspark")


def test_scan_bench_smoke(capsys, tmp_path):
    path = Path(__file__).parent.parent / "bench" / "scan_bench.py"
    spec = importlib.util.spec_from_file_location("scan_bench", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    # the arrow and sql engines' rows take the same path, at many times the cost
    assert mod.main(["--sizes", "300", "--engine", "files", "--no-warmup", "--cluster",
                     "--workdir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    rows = {tuple(ln.split()[:2]): ln.split() for ln in out.splitlines()
            if len(ln.split()) > 3 and ln.split()[2] == "300"}
    assert set(rows) == {("local[2]", "files"), ("cluster", "files")}, out
    for (mode, _), cols in rows.items():
        assert int(cols[3].replace(",", "")) > 30000  # ~100 events a trace, plus planted
        assert float(cols[7]) > 0  # the ratio to the bare read on the same master
        if mode == "cluster":
            assert float(cols[-1]) > 0  # and to local[2]'s events per second
        else:
            assert float(cols[9]) > 0  # and to tomkit check
