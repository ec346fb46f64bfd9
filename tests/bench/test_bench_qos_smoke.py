"""Smoke test of bench/qos_bounds.py and the demo function: a small sweep runs, stays
within 003's bounds, and writes its PNG; ABCAST's latency grows with n where qos's
bound does not."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from locations import ROOT

from tomkit.model.sim import SimConfig, simulate
from tomkit.runs.qos import (
    NET,
    OPTIONS,
    RATE,
    baseline_row,
    busiest_window,
    judge,
    qos_row,
    run_demo,
)

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


def test_reserve_declares_the_contract_and_checks_the_rate_against_it(tmp_path, capsys):
    """``--reserve``: every process declares r at join(r); the rows show the busiest slot
    and window against the declared max' and avg', and the rate property is among the
    checks (--strict)."""
    mod = _load()
    assert mod.main(["--sizes", "2", "--quick", "--strict", "--seed", "2", "--reserve",
                     "20/6", "--window", "10", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "r = 20/6 over K = 10 slots: max' = 12.00, avg' = 63.33" in out
    rows = [line for line in out.splitlines() if "<= 12.00" in line]
    assert len(rows) == 2 and all("<= 63.33" in line for line in rows)
    assert "0 runs over the bound or failing a check" in out


def test_reserve_refuses_a_malformed_reservation(capsys):
    with pytest.raises(SystemExit):
        _load().main(["--sizes", "2", "--quick", "--reserve", "20"])
    assert "--reserve: expected AVG/MAX" in capsys.readouterr().err


def test_a_tight_reservation_holds_messages_and_keeps_the_declared_rate():
    """r = 3/1 over K = 2 slots against 10 messages a second per process: the shaper holds
    messages for later slots, the network stays within max' and avg', and order,
    liveness and the rate hold."""
    r = qos_row(2, 0, 2, 6, "3/1", 2)
    assert r["held"] > 0 and not r["problems"]
    assert 0 < r["slot_peak"] <= r["slot_max"] and 0 < r["window_peak"] <= r["window_avg"]


def test_the_reserved_runs_check_finds_an_unshaped_sender():
    """The same contract with the broken variant ``unshaped`` (excess sent at once): the
    bench's judge reports the rate: the busiest slot is over max'."""
    res = simulate(SimConfig(protocol="qos", n=2, rate=RATE, messages=12, delay=NET,
                             seed=2, options={**OPTIONS, "reserve": "3/1", "window": 2,
                                              "packets": True, "variant": "unshaped"}))
    assert "rate" in {v.property for v in judge(res.records, reserved=True)}
    assert "rate" not in {v.property for v in judge(res.records)}
    assert res.stats["declared_peak_packets"] > res.stats["declared_peak_max"]
    peak, avg = busiest_window(res.records)
    assert 0 < peak and avg == pytest.approx(11.0)  # avg' = 3 * 5/3 + 2 * 3
