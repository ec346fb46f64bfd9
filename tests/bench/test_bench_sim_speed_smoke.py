"""Smoke test of bench/sim_speed.py's end-to-end tables: a small run against the pinned
baseline writes the same bytes in both formats and reports every step."""

from __future__ import annotations

import importlib.util
import sys

from locations import ROOT

BENCH = ROOT / "bench" / "sim_speed.py"


def _load():
    spec = importlib.util.spec_from_file_location("sim_speed", BENCH)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["sim_speed"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_end_to_end_tables(capsys):
    mod = _load()
    assert mod.main(["--n", "5", "--end-to-end", "60", "--repeat", "1", "--e2e-only"]) == 0
    out = capsys.readouterr().out
    for fmt in ("jsonl", "parquet"):
        assert f"{fmt}: now/before speed" in out
        assert f"{fmt}: now/before speed (CPU)" in out and "same bytes: yes" in out
        assert f"write {fmt}" in out and f"read {fmt}" in out
    assert "same bytes: NO" not in out
    # 60 messages delivered at each of 5 processes (delta 4), before and now, both formats
    assert out.count(" 300 ") >= 4
