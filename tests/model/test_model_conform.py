"""`tomkit conform`: traces produced by the rule itself conform; planted early deliveries,
reorders and missing deliveries are found at the first point they show."""

from __future__ import annotations

import json
import random

import pytest

from tomkit.cli import main
from tomkit.model.conform import ReplayError, replay
from tomkit.model.toto.dag import DagView, Message
from tomkit.model.toto.rules import RULES, Params, drain
from tomkit.traces.writer import write_records


def run_rule(rule: str, delta: int | None, n: int = 4, sends: int = 12, seed: int = 0,
             trace: str = "t") -> list[dict]:
    """A trace where every process delivers exactly as the rule says: processes send in
    turn (ACKing the heads of their view), and each process receives the others' messages
    in its own random, causally consistent order. Messages sent by the end of the budget
    may stay undelivered, as in any cut of a run."""
    rng = random.Random(seed)
    procs = [f"p{i}" for i in range(n)]
    views = {p: DagView(procs) for p in procs}
    pending = {p: [] for p in procs}  # messages sent but not yet received by p
    recs: list[dict] = []
    k = 0

    def log(p, kind, msg, **kw):
        recs.append({"trace": trace, "process": p, "kind": kind, "msg": msg, **kw})

    def receive(p, m):
        views[p].insert(m)
        log(p, "recv" if m.sender != p else "send", m.id,
            **({"deps": list(m.deps)} if m.sender == p else {}))
        for a in drain(views[p], RULES[rule], Params(delta)):
            for mid in a.delivery.messages:
                log(p, "deliver", mid)

    steps = 0
    while k < sends or any(pending.values()):
        steps += 1
        p = rng.choice(procs)
        ready = [m for m in pending[p] if all(d in views[p] for d in m.deps)]
        if k < sends and (not ready or rng.random() < 0.4):
            p = procs[k % n]  # everyone sends (ToTo's processes send ACKs when idle)
            heads = [views[p].messages_of(q)[-1] for q in procs if views[p].messages_of(q)]
            m = Message(f"m{k}", p, tuple(heads))
            k += 1
            for q in procs:
                if q != p:
                    pending[q].append(m)
            receive(p, m)
        elif ready:
            m = rng.choice(ready)
            pending[p].remove(m)
            receive(p, m)
        assert steps < 10_000
    return recs


@pytest.mark.parametrize("rule,delta", [("all-ack", None), ("toto", 2), ("s-toto", 2),
                                        ("g-toto", 2), ("gl-toto", 2)])
@pytest.mark.parametrize("seed", range(3))
def test_the_rules_own_traces_conform(rule, delta, seed):
    recs = run_rule(rule, delta, seed=seed)
    reports = replay(recs, rule, {"delta": delta})
    assert all(not r.differences for r in reports.values())
    assert all(r.implementation == r.model for r in reports.values())
    assert sum(len(r.model) for r in reports.values()) > 0


def test_early_delivery_is_found():
    recs = run_rule("toto", 2, seed=1)
    # p1 delivers its first message right after its first event: too early
    first = next(i for i, r in enumerate(recs) if r["process"] == "p1" and r["kind"] == "deliver")
    delivered = recs.pop(first)
    at = next(i for i, r in enumerate(recs) if r["process"] == "p1")
    recs.insert(at + 1, delivered)
    rep = replay(recs, "toto", {"delta": 2})["p1"]
    assert rep.differences and rep.differences[0].kind == "early"
    assert rep.differences[0].msg == delivered["msg"]


def test_reorder_and_missing_are_found():
    recs = run_rule("toto", 2, seed=2)
    ds = [i for i, r in enumerate(recs) if r["process"] == "p2" and r["kind"] == "deliver"]
    a, b = ds[0], ds[1]
    recs[a]["msg"], recs[b]["msg"] = recs[b]["msg"], recs[a]["msg"]
    rep = replay(recs, "toto", {"delta": 2})["p2"]
    assert rep.differences[0].kind in ("order", "early")
    assert any(d.kind == "order" and d.index == 0 for d in rep.differences)
    recs = run_rule("toto", 2, seed=2)
    last = max(i for i, r in enumerate(recs) if r["process"] == "p3" and r["kind"] == "deliver")
    gone = recs.pop(last)
    rep = replay(recs, "toto", {"delta": 2})["p3"]
    assert [(d.kind, d.msg) for d in rep.differences] == [("missing", gone["msg"])]


def test_later_deliveries_are_counted_not_reported():
    # all-ack waits for every processor; replayed against ToTo (delta 3 of 6) some of its
    # deliveries come after receptions the ToTo rule did not need
    later = 0
    for seed in range(4):
        reports = replay(run_rule("all-ack", None, n=6, sends=18, seed=seed), "toto", {"delta": 3})
        later += sum(r.later_than_model for r in reports.values())
    assert later > 0
    # and a trace of the rule itself has none
    reports = replay(run_rule("toto", 3, n=6, sends=18, seed=0), "toto", {"delta": 3})
    assert sum(r.later_than_model for r in reports.values()) == 0


def test_needs_receptions():
    recs = [r for r in run_rule("toto", 2) if r["kind"] != "recv"]
    with pytest.raises(ReplayError, match="no recv events"):
        replay(recs, "toto", {"delta": 2})


def test_cli(tmp_path, capsys):
    good = tmp_path / "good.jsonl"
    write_records(good, run_rule("toto", 2, seed=5))
    assert main(["conform", "--protocol", "toto", "--delta", "2", str(good)]) == 0
    assert "verdict: conforms" in capsys.readouterr().out
    recs = run_rule("toto", 2, seed=5)
    ds = [i for i, r in enumerate(recs) if r["process"] == "p0" and r["kind"] == "deliver"]
    recs[ds[0]]["msg"], recs[ds[1]]["msg"] = recs[ds[1]]["msg"], recs[ds[0]]["msg"]
    bad = tmp_path / "bad.jsonl"
    write_records(bad, recs)
    assert main(["conform", "--protocol", "toto", "--delta", "2", str(bad), "--format",
                 "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["conforms"] is False and doc["traces"]["t"]["p0"]["differences"]
    assert main(["conform", "--protocol", "toto", "--rule", "nope", str(good)]) == 2


@pytest.mark.parametrize("rule", ["toto", "s-toto", "gl-toto"])
def test_simulated_traces_conform_with_their_ack_only_messages(rule):
    """The simulator's ACK-only messages vote; the trace logs them as recv records marked
    x_ack_only (with x_sender and x_dag_deps), so the replay sees the DAG the processes
    saw and the rule's own run conforms. Without them, deliveries that needed their votes
    look early."""
    from tomkit.model.sim import SimConfig, simulate

    recs = simulate(SimConfig(protocol=rule, n=5, options={"delta": 3}, messages=150,
                              rate=100, seed=4)).records
    acks = [r for r in recs if r.get("x_ack_only")]
    assert acks, "the run should need ACK-only messages at its end"
    assert not any(r["kind"] == "send" and r.get("x_ack_only") for r in recs)
    reports = replay(recs, rule, {"delta": 3})
    assert all(not r.differences for r in reports.values())
    assert sum(len(r.implementation) for r in reports.values()) == 5 * 150

    stripped = [r for r in recs if not r.get("x_ack_only")]
    for r in stripped:
        r.pop("x_dag_deps", None)
    kinds = {d.kind for rep in replay(stripped, rule, {"delta": 3}).values()
             for d in rep.differences}
    assert kinds & {"early", "extra", "order"}


def test_ack_only_reception_without_sender_is_bad_input():
    recs = [{"trace": "t", "process": "a", "kind": "recv", "msg": "a.ack1",
             "x_ack_only": True, "x_dag_deps": []}]
    with pytest.raises(ReplayError, match="x_sender"):
        replay(recs, "toto", {"delta": 1})


# ---------------------------------------------------------------------- every protocol

@pytest.mark.parametrize("protocol", ["all-ack", "toto", "s-toto", "g-toto", "gl-toto",
                                      "abcast", "tomp"])
def test_every_protocols_simulated_trace_conforms(protocol):
    """The simulator logs what the replayer needs (ACK-only messages and Crash(q) notices
    of the ToTo family, acknowledgements and final timestamps of ABCAST and TOMP), so a
    simulated run, with crashes where the protocol handles them, replays exactly."""
    from tomkit.model.protocols import protocol as get
    from tomkit.model.sim import SimConfig, simulate

    crashes = (("p2", 0.2), ("p4", 0.5)) if get(protocol).crashes else ()
    recs = simulate(SimConfig(protocol=protocol, n=6, messages=240, seed=3,
                              crashes=crashes)).records
    reports = replay(recs, protocol)
    assert all(not r.differences for r in reports.values())
    assert all(r.implementation == r.model for r in reports.values())
    assert sum(len(r.model) for r in reports.values()) >= 4 * 240


def _tomp_run(n: int = 4, messages: int = 60) -> list[dict]:
    from tomkit.model.sim import SimConfig, simulate

    return simulate(SimConfig(protocol="tomp", n=n, messages=messages, rate=400,
                              seed=5)).records


def test_timestamp_protocols_planted_deviations_are_found():
    """A host that delivers two messages in the other order, or delivers a message before
    its final timestamp arrived, differs from the model at that point."""
    recs = _tomp_run()
    at = [i for i, r in enumerate(recs) if r["process"] == "p1" and r["kind"] == "deliver"]
    swapped = [dict(r) for r in recs]
    i, j = at[10], at[11]
    swapped[i]["msg"], swapped[j]["msg"] = swapped[j]["msg"], swapped[i]["msg"]
    rep = replay(swapped, "tomp")["p1"]
    assert rep.differences[0].kind == "order" and rep.differences[0].index == 10
    assert not any(r.differences for p, r in replay(swapped, "tomp").items() if p != "p1")

    # p2 delivers its 5th message right after receiving it, before its final timestamp
    early = [dict(r) for r in recs]
    k = [i for i, r in enumerate(early) if r["process"] == "p2" and r["kind"] == "deliver"][4]
    d = early.pop(k)
    data = next(i for i, r in enumerate(early) if r["process"] == "p2" and r["kind"] == "recv"
                and r["msg"] == d["msg"])
    early.insert(data + 1, d)
    kinds = [x.kind for x in replay(early, "tomp")["p2"].differences]
    assert "early" in kinds


def test_timestamp_protocols_need_their_control_records():
    from tomkit.model.sim import SimConfig, simulate

    recs = simulate(SimConfig(protocol="abcast", n=3, messages=30, seed=1,
                              options={"control_records": False})).records
    with pytest.raises(ReplayError, match="x_packet"):
        replay(recs, "abcast")
    recs = _tomp_run(3, 20)
    dup = next(i for i, r in enumerate(recs) if r.get("x_packet") == "final")
    recs.insert(dup + 1, dict(recs[dup]))  # a validation message received twice
    with pytest.raises(ReplayError, match=r"record \d+ \(recv .*/final\): the model refuses"):
        replay(recs, "tomp")


def test_cli_replays_any_protocol(tmp_path, capsys):
    path = tmp_path / "tomp.jsonl"
    write_records(path, _tomp_run())
    assert main(["conform", "--protocol", "tomp", str(path)]) == 0
    assert "verdict: conforms" in capsys.readouterr().out
    assert main(["conform", "--protocol", "tomp", "--delta", "2", str(path)]) == 2
    assert "--delta does not apply to tomp" in capsys.readouterr().err
