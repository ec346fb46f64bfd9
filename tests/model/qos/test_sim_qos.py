"""The simulator's timed network (model/net/timed.py): local clocks and real time in the
trace, delays never above delta, packet records, schedules, and ``tomkit simulate
--protocol qos`` with its declared options; untimed protocols refuse the new fields."""

from __future__ import annotations

import json

import pytest

from tomkit.cli import main
from tomkit.model.net.links import Delay
from tomkit.model.net.timed import REAL_TIME, parse_schedule
from tomkit.model.sim import SimConfig, _Sim, simulate


def test_every_record_carries_real_time_and_local_time_is_real_plus_offset():
    cfg = SimConfig(protocol="qos", n=3, rate=20.0, messages=40, seed=2,
                    delay=Delay("exponential", 0.02), crashes=(("p2", 0.5),),
                    packet_records=True, options={"joins": "p1@0.2"})
    sim = _Sim(cfg, None)
    res = sim.run()
    kinds = {r["kind"] for r in res.records}
    assert {"send", "deliver", "packet", "join", "crash"} <= kinds
    for r in res.records:
        i = int(r["process"][1:])
        assert r["time"] == pytest.approx(r[REAL_TIME] + sim.off[i], abs=1e-12)
        assert abs(sim.off[i]) <= 0.01 / 2
    assert all("x_slot" in r for r in res.records if r["kind"] == "packet")


def test_delays_are_never_drawn_above_delta():
    # exponential delays of mean delta: a third of the draws exceed delta and are clipped
    cfg = SimConfig(protocol="qos", n=3, rate=30.0, messages=60, seed=4,
                    delay=Delay("exponential", 0.05), options={"loss": 0.0},
                    packet_records=True)
    sim = _Sim(cfg, None)
    seen = []
    record = sim.timed.sent
    sim.timed.sent = lambda i, arrive, c: (seen.append(arrive - sim.now), record(i, arrive, c))
    res = sim.run()
    assert len(seen) > 300 and max(seen) <= 0.05 + 1e-12
    assert sum(d > 0.05 - 1e-12 for d in seen) > len(seen) / 5  # clipped: land on delta
    # every slot's messages are delivered by the deadline: delays within delta
    assert res.stats["timeouts"] == 0
    assert res.stats["max_real_latency"] <= res.stats["bound"] + 1e-12


def test_untimed_protocols_refuse_the_timed_fields_and_keep_their_records():
    with pytest.raises(ValueError, match="no timed network"):
        simulate(SimConfig(protocol="toto", n=3, messages=5, packet_records=True))
    res = simulate(SimConfig(protocol="abcast", n=3, messages=5))
    assert all(REAL_TIME not in r for r in res.records)


def test_schedules_parse_and_refuse_with_the_entry():
    assert parse_schedule("join", "p3@0.5, p1@1") == (("join", "p3", 0.5),
                                                      ("join", "p1", 1.0))
    with pytest.raises(ValueError, match="'p3'"):
        parse_schedule("leave", "p3")
    with pytest.raises(ValueError, match="p1 recovers at 0.1 without a crash before"):
        simulate(SimConfig(protocol="qos", n=3, messages=5,
                           options={"recovers": "p1@0.1"}))


def test_cli_simulate_qos_with_its_options(tmp_path, capsys):
    out = tmp_path / "q.jsonl"
    rc = main(["simulate", "--protocol", "qos", "--n", "4", "--messages", "60",
               "--rate", "20", "--slot", "0.05", "--max-delay", "0.02", "--epsilon",
               "0.004", "--joins", "p3@0.2", "--leaves", "p1@0.5", "--crash", "p2@0.3",
               "--recovers", "p2@0.6", "--seed", "7", "--out", str(out)])
    text = capsys.readouterr().out
    assert rc == 0, text
    assert "seed 7" in text and "bound 74.000 without failures, 78.000 with" in text
    recs = [json.loads(x) for x in out.read_text().splitlines()[1:]]
    assert {r["kind"] for r in recs} >= {"join", "leave", "crash", "send", "deliver"}
    assert all(REAL_TIME in r for r in recs)
    rc = main(["check", "--property", "integrity,total-order-weak,global-order", str(out)])
    assert rc == 0


def test_cli_refuses_a_bad_schedule(tmp_path, capsys):
    rc = main(["simulate", "--protocol", "qos", "--n", "3", "--messages", "5",
               "--joins", "p9@0.1", "--out", str(tmp_path / "x.jsonl")])
    assert rc == 2 and "unknown process 'p9'" in capsys.readouterr().err


def test_simulated_runs_satisfy_the_qos_guarantee_of_the_checker(tmp_path, capsys):
    out = tmp_path / "q.jsonl"
    assert main(["simulate", "--protocol", "qos", "--n", "5", "--messages", "150",
                 "--rate", "20", "--joins", "p4@0.3", "--leaves", "p1@0.9", "--crash",
                 "p2@0.5", "--recovers", "p2@1.0", "--packets", "--seed", "3", "--out",
                 str(out)]) == 0
    capsys.readouterr()
    # Delta + delta + 2 eps; this run's busiest slot sends at most 15 network messages
    assert main(["check", "--guarantee", "qos", "--realtime-bound", "0.17", "--rate-max",
                 "15", str(out)]) == 0
    text = capsys.readouterr().out
    assert "member-liveness           holds" in text and "rate                      holds" in text
