"""The fixed-sequencer protocol (model/sequencer/): its rules input by input, the view
change on the sequencer's crash (the flush, and what skipping it breaks), simulation,
conformance replay, and the fuzzer on the protocol and on its broken variant."""

from __future__ import annotations

import pytest

from tomkit.checker.oracle import promised
from tomkit.checker.properties import Options, properties
from tomkit.checker.result import Verdict
from tomkit.checker.trace import Trace
from tomkit.cli import main
from tomkit.fuzz.process_machine import process_machine
from tomkit.fuzz.reduce import reduce, replay
from tomkit.fuzz.stateful import run_machine
from tomkit.model.conform import ReplayError
from tomkit.model.conform import replay as conform
from tomkit.model.process import View
from tomkit.model.protocols import protocol
from tomkit.model.sequencer.process import Data, Order, Report, SequencerProcess, Takeover
from tomkit.model.sim import SimConfig, simulate
from tomkit.traces.writer import write_records

NAMES = ["p0", "p1", "p2"]
PROMISES = promised(protocol("sequencer").profile)


def procs(variant: str | None = None) -> list[SequencerProcess]:
    return [SequencerProcess(i, NAMES, variant=variant) for i in range(3)]


def delivered(out) -> list[str]:
    return [m for m, _ in out.delivered]


def packets(out) -> list:
    return [t.packet for t in out.sends]


def verdicts(records, names=PROMISES, scope="uniform") -> dict[str, Verdict]:
    props = properties()
    trace = Trace.from_records(records)
    return {n: props[n].check(trace, Options(scope=scope)).verdict for n in names}


# ------------------------------------------------------------------------ the rules


def test_the_sequencer_numbers_and_everyone_delivers_in_number_order():
    p = procs()
    d1 = packets(p[1].on_send("a", 0))[0]
    d2 = packets(p[2].on_send("b", 0))[0]
    assert d1 == Data("a", 1)
    # the sequencer numbers in the order messages reach it
    o_b = packets(p[0].on_receive(d2, 1))[0]
    o_a = packets(p[0].on_receive(d1, 2))[0]
    assert (o_b, o_a) == (Order("b", 1, 0), Order("a", 2, 0))
    # at p1 the order of b overtakes b itself (BB: two senders, two links)
    assert delivered(p[1].on_receive(d1, 3)) == []
    assert delivered(p[1].on_receive(o_a, 4)) == []  # number 2 waits for number 1
    assert delivered(p[1].on_receive(o_b, 5)) == []  # numbered, but b not received yet
    out = p[1].on_receive(d2, 6)
    assert delivered(out) == ["b", "a"]
    assert [f["x_seq"] for _, f in out.delivered] == [1, 2]
    # only the sequencer numbers
    assert packets(p[2].on_receive(d1, 7)) == []


def test_the_new_sequencer_learns_the_old_ones_numbers_in_the_flush():
    """p2 saw the old sequencer number x (1) and delivered it; p1 did not (in the model's
    drivers every packet of a crashed process still arrives, so this input order is the
    general network's: a crash cut the broadcast short). p1 waits for p2's report, learns
    x's number, and numbers a after it."""
    p = procs()
    x, a = Data("x", 2), Data("a", 1)
    p[1].on_receive(x, 0)
    p[1].on_receive(a, 0)
    assert packets(p[1].on_crash(0, 1)) == []  # p1 is the sequencer now: it waits
    assert p[1].waiting == {2}
    report = Report(2, 1, ((1, "x"),))
    out = p[1].on_receive(report, 2)
    takeover, order = packets(out)
    assert takeover == Takeover(1, ((1, "x"),))
    assert order == Order("a", 2, 1)
    assert delivered(out) == ["x"]
    # p2's side: Crash(p0) makes it report to p1, then it adopts p1's numbers
    p[2].on_receive(x, 0)
    p[2].on_receive(Order("x", 1, 0), 0)
    out = p[2].on_crash(0, 1)
    assert packets(out) == [report]
    p[2].on_receive(a, 2)
    assert delivered(p[2].on_receive(order, 3)) == ["a"]
    assert p[2].delivered == p[1].delivered[:1] + ["a"]


def test_a_crash_during_the_flush_ends_the_wait_for_that_process():
    p = SequencerProcess(1, ["p0", "p1", "p2", "p3"])
    p.on_receive(Data("m", 3), 0)
    p.on_crash(0, 1)
    assert p.waiting == {2, 3}
    p.on_receive(Report(3, 1, ()), 2)
    out = p.on_crash(2, 3)  # p2 crashed before it reported
    assert packets(out) == [Takeover(1, ()), Order("m", 1, 1)]


def test_the_broken_variant_numbers_a_message_a_second_time():
    p = procs("no-flush")
    p[1].on_receive(Data("a", 1), 0)
    p[1].on_receive(Order("x", 1, 0), 0)  # the order of x overtook x itself
    out = p[1].on_crash(0, 1)
    assert packets(out) == [Order("a", 1, 1)]  # number 1 again, without a flush
    assert delivered(p[1].on_receive(Order("a", 1, 1), 2)) == ["a"]  # its own order


def test_refusals_name_the_process_and_the_input():
    p = procs()
    with pytest.raises(ValueError, match="p1: the sequencer protocol runs its own view"):
        p[1].on_view(View("v1", (0, 1)), 0)
    with pytest.raises(ValueError, match="p0: a flush report for p1"):
        p[0].on_receive(Report(2, 1, ()), 0)
    with pytest.raises(ValueError, match="received twice"):
        p[2].on_receive(Data("a", 1), 0)
        p[2].on_receive(Data("a", 1), 0)
    with pytest.raises(ValueError, match="variant must be one of no-flush"):
        SequencerProcess(0, NAMES, variant="bogus")
    with pytest.raises(ValueError, match="sequencer cannot honour join"):
        simulate(SimConfig(protocol="sequencer", n=3, messages=10, joins=(("p1", 0.1),)))


# ------------------------------------------------------------------------ simulation


def _run(**kw) -> list[dict]:
    cfg = dict(protocol="sequencer", n=5, messages=600, seed=7,
               crashes=(("p0", 0.3), ("p1", 0.6)))
    cfg.update(kw)
    return simulate(SimConfig(**cfg)).records


def test_a_simulation_with_two_sequencer_crashes_keeps_every_promise():
    res = simulate(SimConfig(protocol="sequencer", n=5, messages=600, seed=7,
                             crashes=(("p0", 0.3), ("p1", 0.6))))
    assert res.stats["takeovers"] == 2 and res.stats["reports"] == 3 + 2
    assert res.stats["undelivered"] == 0
    v = verdicts(res.records, (*PROMISES, "liveness", "agreement"))
    assert set(v.values()) == {Verdict.HOLDS}, v
    # a message numbered by each of the three sequencers
    by = {r["x_from"] for r in res.records if r.get("x_packet") == "order"}
    assert by == {"p0", "p1", "p2"}
    assert res.records == _run()  # deterministic given the seed


def test_the_broken_variant_is_caught_in_simulation_too():
    """In the simulator the new sequencer has every old order when its Crash notice comes;
    what it can lack, with Crash noticed as soon as the old sequencer's last packet
    arrives, is a message whose order overtook it. The same runs with the flush hold."""
    bad = 0
    for seed in range(1, 9):
        for variant in ("no-flush", None):
            recs = simulate(SimConfig(protocol="sequencer", n=5, messages=400, seed=seed,
                                      rate=1000, crashes=(("p0", 0.03),),
                                      detection_delay=0.0,
                                      options={"variant": variant})).records
            v = verdicts(recs, ("total-order-weak", "total-order-strong"))
            if variant is None:
                assert set(v.values()) == {Verdict.HOLDS}, (seed, v)
            else:
                bad += Verdict.VIOLATED in v.values()
    assert bad >= 1


def test_cli_simulate_check_and_profile(tmp_path, capsys):
    out = tmp_path / "seq.jsonl"
    assert main(["simulate", "--protocol", "sequencer", "--n", "4", "--messages", "200",
                 "--crash", "p0@0.2", "--out", str(out), "-q"]) == 0
    text = capsys.readouterr().out
    assert "seed 1" in text and "1 takeovers" in text
    assert main(["check", str(out), "--guarantee", "model-sequencer"]) == 0
    assert "model-sequencer" in capsys.readouterr().out


# ------------------------------------------------------------------------ conformance


def test_its_own_traces_conform_and_a_planted_reorder_is_found(tmp_path, capsys):
    recs = _run()
    reports = conform(recs, "sequencer")
    assert all(not r.differences and r.implementation == r.model for r in reports.values())
    assert sum(len(r.model) for r in reports.values()) > 3 * 600
    at = [i for i, r in enumerate(recs) if r["process"] == "p3" and r["kind"] == "deliver"]
    swapped = [dict(r) for r in recs]
    i, j = at[20], at[21]
    swapped[i]["msg"], swapped[j]["msg"] = swapped[j]["msg"], swapped[i]["msg"]
    rep = conform(swapped, "sequencer")
    assert rep["p3"].differences[0].kind == "order" and rep["p3"].differences[0].index == 20
    assert not any(r.differences for p, r in rep.items() if p != "p3")
    good, bad = tmp_path / "good.jsonl", tmp_path / "bad.jsonl"
    write_records(good, recs)
    write_records(bad, swapped)
    assert main(["conform", "--protocol", "sequencer", str(good)]) == 0
    assert "verdict: conforms" in capsys.readouterr().out
    assert main(["conform", "--protocol", "sequencer", str(bad)]) == 1
    assert "p3" in capsys.readouterr().out


def test_replay_needs_the_control_records_and_names_bad_ones():
    recs = _run(options={"control_records": False}, crashes=())
    with pytest.raises(ReplayError, match="x_packet"):
        conform(recs, "sequencer")
    recs = _run(crashes=())
    k = next(i for i, r in enumerate(recs) if r.get("x_packet") == "order")
    recs[k] = {**recs[k], "x_from": "p9"}
    with pytest.raises(ReplayError, match=r"record \d+ .*x_from 'p9'"):
        conform(recs, "sequencer")


# ------------------------------------------------------------------------ fuzzing

#: the broken variant's failure, by hand: p2's x reaches p0, whose order of x reaches p1
#: before x does; p0 crashes; p1, notified, numbers its own a with x's number
BROKEN_RUN = [("send", 2), ("send", 1), ("transmit", (2, 0), 0), ("transmit", (0, 1), 0),
              ("crash", 0), ("notify", 1, 0)]


def test_the_fuzzer_finds_no_failure_with_crashes_of_the_sequencer():
    m = process_machine("sequencer", 3, max_messages=5)
    assert run_machine(m, 60, 1) is None
    # the hand-made run that breaks the variant passes with the flush
    assert replay(m, BROKEN_RUN) == (None, len(BROKEN_RUN))


def find_broken(label: str):
    """The fuzzer's search for the broken variant's failure: about one run in a few
    hundred breaks it (the order of a message must overtake the message on its way to the
    next sequencer, and the sequencer must crash just then). A search depends on its seed
    alone (fuzz/seeding.py): seed 4 finds it within 300 runs (seeds 1-6: only seed 4)."""
    m = process_machine("sequencer", 3, {"variant": "no-flush"}, max_messages=4,
                        label=label)
    return m, run_machine(m, 300, 4, shrink=False)


def test_the_fuzzer_catches_the_broken_variant_and_reduces_it_small(tmp_path, capsys):
    m, failure = find_broken("sequencer-no-flush")
    assert failure is not None
    found = failure.found
    assert found.kind in ("total-order-weak", "total-order-strong")
    red = reduce(m, found).failure
    assert len(red.schedule) <= 8 and len(red.records) <= len(found.records)
    assert ("crash", 0) in red.schedule  # the sequencer's crash is part of every cause
    assert verdicts(red.records, (red.kind,))[red.kind] == Verdict.VIOLATED
    path = tmp_path / "reduced.jsonl"
    write_records(path, red.records)
    assert main(["check", str(path), "--guarantee", "model-sequencer"]) == 1
    assert red.kind in capsys.readouterr().out
    # the hand-made run is already minimal
    f, applied = replay(m, BROKEN_RUN)
    assert f is not None and applied == len(BROKEN_RUN)
    assert len(reduce(m, f).failure.schedule) == len(BROKEN_RUN)


def test_cli_fuzz_runs_the_protocol_with_crashes(capsys):
    assert main(["fuzz", "--protocol", "sequencer", "--n", "3", "--examples", "30",
                 "--seed", "2"]) == 0
    text = capsys.readouterr().out
    assert "seed 2" in text and "no failure in 30 examples" in text
