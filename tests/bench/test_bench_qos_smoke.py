"""Smoke test of bench/qos_bounds.py and the demo function: a small sweep runs, stays
within 003's bounds, and writes its PNG; ABCAST's latency grows with n where qos's
bound does not."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from locations import ROOT

from tomkit.runs.qos import baseline_row, qos_row, run_demo

BENCH = ROOT / "bench" / "qos_bounds.py"


def _load():
    spec = importlib.util.spec_from_file_location("qos_bounds", BENCH)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["qos_bounds"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_small_sweep_prints_rows_within_the_bound_and_a_png(tmp_path, capsys):
    mod = _load()
    assert mod.main(["--sizes", "2", "--quick", "--strict", "--seed", "2",
                     "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "seed 2" in out and "0 runs over the bound or failing a check" in out
    assert (tmp_path / "qos_latency_vs_n.png").stat().st_size > 10_000


def test_rows_a_crash_times_out_and_the_baseline_grows_with_n():
    r = qos_row(4, 1, 1, 6)
    assert r["timeouts"] > 0 and not r["problems"]
    assert r["bound"] == pytest.approx(0.17) and r["max"] <= r["bound"]
    assert r["packets"] <= r["reserved"]
    assert baseline_row("abcast", 8, 1, 6)["max"] > baseline_row("abcast", 2, 1, 6)["max"]


def test_run_demo(tmp_path):
    d = run_demo(str(tmp_path), seed=1)
    assert d["ok"] and d["max_latency"] <= d["bound"]
    assert Path(d["trace"]).exists() and Path(d["png"]).exists()
    assert "hold" in d["text"] and "p1 crashes" in d["text"]
