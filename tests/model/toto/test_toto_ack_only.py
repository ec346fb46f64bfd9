"""ACK-only messages vote but are never candidates (000 section 4.1: a pending message is
an agreed message, a candidate a pending message that follows only delivered ones;
Figure 1's causal messages are never candidates). model/toto/dag.py retires them from G once
everything they follow is delivered; option ``ack_candidates`` keeps the earlier
reading, which ordered them as candidates. bench/ack_only.py measures the difference."""

from __future__ import annotations

import pytest

from tomkit.checker.properties import Options, properties
from tomkit.checker.result import Verdict
from tomkit.checker.trace import Trace
from tomkit.model.conform import replay
from tomkit.model.sim import SimConfig, simulate
from tomkit.model.toto.dag import DagView, Message
from tomkit.model.toto.process import PROMISES, AckOnly, TotoProcess


def ack(m: Message) -> bool:
    return m.id.startswith("x")


def test_an_ack_only_root_is_retired_not_a_candidate():
    v = DagView(["a", "b", "c"], never_candidate=ack)
    v.insert(Message("b1", "b"))
    v.insert(Message("x1", "a"))  # a's ACK-only message follows nothing: a root
    assert v.candidates() == ("b1",)
    assert v.retired == ("x1",) and "x1" not in v.delivered
    assert v.voter("a") is None  # retired: a has nothing in G, so it is unseen
    assert v.vv("b1") == (None, 1, None)
    v.insert(Message("a2", "a", ("x1",)))  # a's next message is its voter, a candidate
    assert v.candidates() == ("a2", "b1") and v.vv("b1") == (0, 1, None)


def test_an_ack_only_message_votes_while_it_follows_a_pending_one():
    v = DagView(["a", "b", "c"], never_candidate=ack)
    v.insert(Message("b1", "b"))
    v.insert(Message("x1", "a", ("b1",)))  # follows pending b1: in G, a's voter
    assert v.candidates() == ("b1",) and v.retired == ()
    assert v.voter("a") == "x1" and v.vv("b1") == (1, 1, None)
    v.deliver(["b1"])
    assert v.retired == ("x1",) and v.delivered_sequence == ("b1",)
    assert v.candidates() == () and v.voter("a") is None


def test_retiring_cascades_and_matches_a_recomputation():
    """An ACK-only message retired may uncover its sender's next one, ACK-only too; the
    incremental vocabulary equals the one recomputed from scratch."""
    v = DagView(["a", "b", "c"], never_candidate=ack)
    v.insert(Message("b1", "b"))
    v.insert(Message("x1", "a", ("b1",)))
    v.insert(Message("x2", "a", ("x1",)))
    v.insert(Message("a3", "a", ("x2",)))
    v.insert(Message("c1", "c", ("x1",)))
    v.deliver(["b1"])
    assert v.retired == ("x1", "x2")
    assert v.candidates() == ("a3", "c1")  # c1 follows only b1, x1: the prefix
    state = v.activation_state()
    v._recompute_activation()
    assert v.activation_state() == state


def test_old_reading_orders_ack_only_messages_as_candidates():
    v = DagView(["a", "b", "c"])
    v.insert(Message("b1", "b"))
    v.insert(Message("x1", "a"))
    assert v.candidates() == ("x1", "b1") and v.retired == ()


def test_processes_never_offer_an_ack_only_candidate():
    """Two ToTo processes: p1's idle ACK-only message, concurrent with p0's message, is a
    candidate under the old reading only."""
    names = ["p0", "p1", "p2"]
    for old in (False, True):
        procs = [TotoProcess(p, names, "toto", ack_timeout=0.1, ack_candidates=old)
                 for p in names]
        m0, _ = procs[0].send("m0")
        a1, _ = procs[1].send(ack_only=True)
        assert type(a1) is AckOnly
        procs[2].receive(m0)
        procs[2].receive(a1)
        cands = procs[2].dag.candidates()
        assert (a1.id in cands) == old
        assert (a1.id in procs[2].dag.retired) == (not old)


@pytest.mark.parametrize("rule", ["toto", "s-toto", "g-toto", "gl-toto", "all-ack"])
def test_eager_acknowledgers_runs_are_safe_and_conform(rule):
    """Half the messages ACK-only (an idle time of half a source period): every
    property ToTo promises holds, ACK-only messages are never delivered, and the trace
    replays through `tomkit conform` under the reading it was made with."""
    for old in (False, True):
        opts = {"delta": 3, "ack_timeout": 0.005, "ack_candidates": old}
        res = simulate(SimConfig(protocol=rule, n=5, options=opts, messages=120, rate=100,
                                 seed=7))
        recs = res.records
        acks = {r["msg"] for r in recs if r.get("x_ack_only")}
        assert len(acks) > 50
        assert not any(r["kind"] == "deliver" and r["msg"] in acks for r in recs)
        assert res.stats["undelivered"] == 0
        trace = Trace.from_records(recs)
        verdicts = {n: properties()[n].check(trace, Options()).verdict for n in PROMISES}
        assert set(verdicts.values()) == {Verdict.HOLDS}, verdicts
        reports = replay(recs, rule, opts)
        assert all(not r.differences for r in reports.values())
