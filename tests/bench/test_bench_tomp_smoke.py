"""Smoke test of bench/tomp_vs_abcast.py: the quick run works, and on one row TOMP
delivers what ABCAST delivers, never later, with the same t1 and a shorter t2."""

from __future__ import annotations

import importlib.util
import sys

from locations import ROOT

BENCH = ROOT / "bench" / "tomp_vs_abcast.py"


def _load():
    spec = importlib.util.spec_from_file_location("tomp_vs_abcast", BENCH)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["tomp_vs_abcast"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_quick_main_returns_zero(capsys):
    mod = _load()
    assert mod.main(["--quick", "--messages", "150", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "seed 3" in out and "TOMP/ABCAST" in out
    assert out.count("\nLAN ") == 2 and out.count("\nWAN ") == 2


def test_row_tomp_shortens_t2_only():
    mod = _load()
    r = mod.compare("2-LAN", 4, 2.0, messages=150, seed=1)
    assert r["t2_tomp"] < r["t2_abcast"]
    assert r["ratio"] < 1.0 and 0 < r["t2_ratio"] < 1.0
    # t1 is common, so latency differences are t2 differences
    assert abs((r["lat_abcast"] - r["lat_tomp"]) - (r["t2_abcast"] - r["t2_tomp"])) < 1e-9
    assert 0 < r["earlier"] < 1 and r["raised"] > 0
