"""bench/stream_bench.py runs end to end on a tiny trace and prints its summary: the
clean trace and its double hold, the late breach is found, the DuckDB peer agrees."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest


def test_stream_bench_smoke(capsys, tmp_path):
    pytest.importorskip("duckdb")
    path = Path(__file__).parent.parent.parent / "bench" / "stream_bench.py"
    spec = importlib.util.spec_from_file_location("stream_bench", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main(["--smoke", "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "stream speed / DuckDB peer's" in out
    # the swap breaks the order properties; integrity holds
    breach = next(ln for ln in out.splitlines() if "; decided" in ln)
    assert "total-order-strong" in breach and "integrity" not in breach
    assert "early breach" in out  # held records spilled and kept: the same verdicts
    assert "early repeat" in out  # shifted by one after it: cut, the same verdicts
    assert "grouped by process" in out  # the lag read from disk, and sent whole
    ratio = next(ln for ln in out.splitlines() if "twice the trace" in ln)
    assert float(ratio.split("x")[0].split()[-1]) > 0


def test_stream_bench_latency_smoke(capsys, tmp_path):
    """--latency-only on the tiny trace: the late latency breach is decided in the pass,
    with the whole-trace engine's report."""
    path = Path(__file__).parent.parent.parent / "bench" / "stream_bench.py"
    spec = importlib.util.spec_from_file_location("stream_bench", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main(["--latency-only", "--smoke", "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "the same latency report: True" in out
    slow = next(ln for ln in out.splitlines() if ln.strip().startswith("slow "))
    assert "decided {'fast': 1} whole 0" in slow and "['latency']" in slow
