"""The hybrid's three configurations on real clocks (model/net/clocks.py): every process
its own skewed, drifting clock, the rate synchronisation of 001's reference [19] on it
(Rodrigues, Fonseca and Verissimo, sections 2 and 4.1; tomkit/runs/clocks.py states
the theory). Clocks stay within their bounds; every run under skew and drift, with
crashes and scripted switches, holds the profile and delivers everything; skew moves
the symmetric baseline's latency the way the theory says."""

from __future__ import annotations

import pytest

from tomkit.checker.properties import Options, properties
from tomkit.checker.result import Verdict
from tomkit.checker.trace import Trace
from tomkit.model.hybrid.latency import latency_001
from tomkit.model.net.links import Delay
from tomkit.model.net.load import LoadSchedule
from tomkit.model.net.topology import LAN_VAR_MS2, absolute
from tomkit.model.sim import SimConfig, simulate
from tomkit.runs.clocks import clock_error

ALL = ["integrity", "total-order-weak", "total-order-strong", "prefix-order", "global-order",
       "fifo-order", "causal-order", "liveness", "agreement", "validity"]


def verdicts(records: list[dict]) -> dict[str, Verdict]:
    trace = Trace.from_records(records)
    return {n: properties()[n].check(trace, Options()).verdict for n in ALL}


@pytest.mark.parametrize("skew,drift", [(0.005, 0.0), (0.05, 1e-4), (0.5, 1e-3)])
@pytest.mark.parametrize("proto,options", [
    ("token-site", {}), ("symmetric", {}), ("hybrid", {"roles": "0,2"}),
    ("hybrid", {"roles": "1", "switches": 3}), ("symmetric", {"switches": 3}),
])
@pytest.mark.parametrize("crashes", [(), ((0, 0.3),)])
def test_runs_under_skew_and_drift_hold_every_property(proto, options, crashes, skew,
                                                       drift) -> None:
    res = simulate(SimConfig(protocol=proto, n=4, rate=50, messages=80,
                             delay=Delay("exponential", 0.01), seed=5, crashes=crashes,
                             options={**options, "clock_skew": skew, "clock_drift": drift}))
    assert verdicts(res.records) == dict.fromkeys(ALL, Verdict.HOLDS)
    assert res.stats["undelivered"] == 0
    if options.get("switches"):
        assert res.stats["role_changes"] > 0
    # every record's local time is within the configured bound of its real time, and
    # the bound is used (the clocks do differ)
    for r in res.records:
        assert abs(r["time"] - r["real_time"]) <= skew / 2 + drift * r["real_time"] + 1e-12
    assert clock_error(res) > skew / 10


def test_timers_run_on_the_local_clock() -> None:
    # a heartbeat is asked for in local time; fired at that number read as real time, a
    # process whose clock is behind would find nothing due, never ask again, and its
    # last tickets would never be shown: liveness would fail
    res = simulate(SimConfig(protocol="symmetric", n=3, rate=20, messages=30, seed=2,
                             delay=Delay("exponential", 0.01),
                             options={"clock_skew": 0.2, "clock_drift": 1e-3}))
    timers = [r for r in res.records if r.get("x_packet") == "timer"]
    assert timers
    assert verdicts(res.records)["liveness"] == Verdict.HOLDS


D = 0.1  # every link; t = 10 ms (100 msg/s): D + t = 110 ms, 2D + t = 210 ms


def sym_latency(e: float) -> dict[str, float]:
    """Per sender, the symmetric protocol's mean latency (s, real time) with p0's clock
    e/2 ahead of real time, p1's on time and p2's e/2 behind."""
    cfg = SimConfig(protocol="symmetric", n=3, source="quasi-periodic", rate=100.0,
                    messages=10 ** 9, delay=absolute(D, LAN_VAR_MS2),
                    load=LoadSchedule.constant([100.0] * 3, end=4.0), seed=1,
                    clock_offsets=[e / 2, 0.0, -e / 2],
                    options={"control_records": False, "clock_skew": e})
    lat = latency_001(simulate(cfg), since=1.0, until=3.5)
    return {p: m for p, (m, _) in lat.per_sender.items()} | {"mean": lat.mean}


def test_skew_moves_the_symmetric_baseline_the_way_the_theory_says() -> None:
    base = sym_latency(0.0)
    assert base["mean"] == pytest.approx(D + 0.01, abs=0.01)  # D + t
    prev = base
    for e in (0.02, 0.05, 0.1):
        got = sym_latency(e)
        # p0 is e ahead of p2: it waits until p2's clock reaches its numbers, about e
        # longer (p2 learns them after D at the latest)
        assert got["p0"] - base["p0"] == pytest.approx(min(e, D), rel=0.25, abs=0.005)
        # p2, behind everyone, waits no longer than on perfect clocks
        assert got["p2"] <= base["p2"] + 0.002
        assert got["mean"] > prev["mean"]  # the mean rises with the skew while e <= D
        prev = got
    # far beyond D: Lamport's rule caps the wait at 2D + t
    far = sym_latency(0.5)
    assert max(far["p0"], far["p1"], far["p2"]) <= 2 * D + 0.01 + 0.005
    assert far["p0"] > D + 0.05


def test_token_site_does_not_notice_the_clocks() -> None:
    def mean(skew: float) -> float:
        cfg = SimConfig(protocol="token-site", n=4, source="quasi-periodic", rate=20.0,
                        messages=200, delay=absolute(0.05, LAN_VAR_MS2), seed=4,
                        options={"control_records": False, "clock_skew": skew})
        return latency_001(simulate(cfg)).mean

    assert mean(0.3) == pytest.approx(mean(0.0), abs=1e-9)


def test_a_trace_on_skewed_drifting_clocks_replays_without_difference() -> None:
    # the processes saw their local times, which the trace logs as time: the replayer
    # feeds them back and the model does the same
    from tomkit.model.conform import replay

    opts = {"roles": "0,2", "switches": 2, "clock_skew": 0.1, "clock_drift": 1e-3,
            "rates": [50.0] * 4}
    recs = simulate(SimConfig(protocol="hybrid", n=4, rate=50, messages=60,
                              delay=Delay("exponential", 0.01), seed=4,
                              crashes=((3, 0.4),), options=opts)).records
    assert clock_error(recs) > 0.01
    reps = replay(recs, "hybrid", opts)
    assert reps and all(not r.differences for r in reps.values())


def test_the_process_fuzzer_refuses_clocks_it_would_not_run() -> None:
    from tomkit.fuzz.process_machine import process_machine

    with pytest.raises(ValueError, match="one logical clock"):
        process_machine("symmetric", 3, {"clock_skew": 0.1})
    process_machine("symmetric", 3, {})  # no clocks asked for: as before
