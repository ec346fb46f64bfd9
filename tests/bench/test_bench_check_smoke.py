"""bench/check_bench.py runs end to end on a few traces and prints its two tables: end
to end against the DuckDB script (wall and CPU ratios), and in one process against the
bare parse (wall and CPU ratios), for Parquet and JSON Lines."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest


def test_check_bench_smoke(capsys, tmp_path):
    pytest.importorskip("duckdb")
    path = Path(__file__).parent.parent.parent / "bench" / "check_bench.py"
    spec = importlib.util.spec_from_file_location("check_bench", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main(["--traces", "20", "--processes", "3", "--messages", "5",
                     "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    # the end-to-end table: both formats with the check/peer ratio in wall and CPU time
    end = out.index(next(ln for ln in out if ln.startswith("end to end")))
    for fmt in ("parquet", "jsonl"):
        row = next(ln for ln in out[end:] if ln.startswith(fmt)).split()
        assert row[-1].endswith("x") and row[-2].endswith("x"), row
        assert float(row[-1][:-1]) > 0 and float(row[-2][:-1]) > 0
    # the in-process table: check/bare in wall and CPU time, reader/bare in CPU time
    one = out.index(next(ln for ln in out if ln.startswith("in one process")))
    for fmt in ("parquet", "jsonl"):
        row = next(ln for ln in out[one:] if ln.startswith(fmt)).split()
        ratios = [float(x[:-1]) for x in row if x.endswith("x")]
        assert len(ratios) == 4 and all(r > 0 for r in ratios), row
