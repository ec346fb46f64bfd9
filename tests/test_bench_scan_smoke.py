"""bench/scan_bench.py runs end to end on a tiny size and prints its table."""

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
    assert mod.main(["--sizes", "300", "--engine", "files,arrow", "--no-warmup",
                     "--workdir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    rows = {ln.split()[0]: ln.split() for ln in out.splitlines()
            if len(ln.split()) > 2 and ln.split()[1] == "300"}
    assert set(rows) == {"files", "arrow"}, out
    for cols in rows.values():
        assert int(cols[2].replace(",", "")) > 30000  # ~100 events a trace, plus planted
        assert float(cols[6]) > 0 and float(cols[8]) > 0  # both ratios measured
