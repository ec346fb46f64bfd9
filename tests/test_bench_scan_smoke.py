"""bench/scan_bench.py runs end to end on a tiny size and prints its table."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("pyspark")


def test_scan_bench_smoke(capsys, tmp_path):
    path = Path(__file__).parent.parent / "bench" / "scan_bench.py"
    spec = importlib.util.spec_from_file_location("scan_bench", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main(["--sizes", "300", "--workdir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    row = [ln for ln in out.splitlines() if ln.strip().startswith("300")]
    assert row, out
    cols = row[0].split()
    assert int(cols[1].replace(",", "")) > 30000  # ~100 events a trace, plus planted ones
    assert float(cols[5]) > 0 and float(cols[7]) > 0  # both ratios measured
