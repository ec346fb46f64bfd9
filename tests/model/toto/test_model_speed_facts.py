"""The simulator's speed-ups keep the model's behaviour: views sharing one DagFacts (the
simulator's processes) answer every query as unshared views and refuse the same bad
messages; Process's compiled drain delivers as the Decider/apply path does; a Step owns
its lists."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_dag_incremental import assert_bookkeeping
from test_model_dag import SETTINGS, causal_dags

from tomkit.model.toto.dag import DagFacts, DagView, Message
from tomkit.model.toto.process import Step
from tomkit.model.toto.process import TotoProcess as Process
from tomkit.model.toto.rules import RULES, Params


def snapshot(g: DagView) -> tuple:
    """Everything a view answers, on its visible messages."""
    vis = sorted(g.visible)
    return (vis, [g.vc(m) for m in vis], [g.seq(m) for m in vis], g.heads(), g.buffered,
            g.activation_state(), g.delivered_sequence, g.activation,
            [g.tail(m) for m in vis], [g.follows(a, b) for a in vis for b in vis])


@given(causal_dags(max_procs=5, max_msgs=20), st.randoms(use_true_random=False))
@SETTINGS
def test_views_sharing_facts_answer_as_unshared_views(dag, rnd) -> None:
    procs, msgs = dag
    facts = DagFacts(procs)
    shared = [DagView(procs, facts) for _ in range(3)]
    alone = [DagView(procs) for _ in range(3)]
    orders = []
    for _ in shared:
        order = list(msgs)
        rnd.shuffle(order)  # each view its own reveal order, as processes in a network
        orders.append(order)
    for step in range(len(msgs)):
        for g, h, order in zip(shared, alone, orders):
            m = order[step]
            assert [x.id for x in g.insert(m)] == [x.id for x in h.insert(m)]
            cands = [c for c in g.candidates() if c not in g.marked]
            if cands and rnd.random() < 0.5:
                pick = [c for c in cands if rnd.random() < 0.6] or cands[:1]
                g.deliver(pick)
                h.deliver(pick)
            assert snapshot(g) == snapshot(h)
            assert_bookkeeping(g)


def test_shared_facts_refuse_forks_and_conflicts_as_unshared_views() -> None:
    procs = ("a", "b")
    a1, b1 = Message("a1", "a"), Message("b1", "b")
    fork = Message("a1x", "a")  # a second first message of a: a fork
    facts = DagFacts(procs)
    g, h = DagView(procs, facts), DagView(procs, facts)
    g.insert(a1)
    with pytest.raises(ValueError, match="does not follow"):
        g.insert(fork)
    # h sees the fork first (its fact is computed there and shared), then a1, whose
    # shared fact must not let it in either
    h.insert(fork)
    with pytest.raises(ValueError, match="does not follow"):
        h.insert(a1)
    with pytest.raises(ValueError, match="conflicts"):
        g.insert(Message("a1", "a", ("b1",)))
    g.insert(b1)
    assert g.vc("b1") == (0, 1) and h.vc("a1x") == (1, 0)
    with pytest.raises(ValueError, match="facts of configuration"):
        DagView(("a", "b", "c"), facts)


@pytest.mark.parametrize("name", sorted(RULES))
@given(dag=causal_dags(min_procs=2, max_procs=5, max_msgs=20),
       rnd=st.randoms(use_true_random=False))
@SETTINGS
def test_compiled_drain_delivers_as_decider_and_apply(name, dag, rnd) -> None:
    """Process._drain's compiled path (slot mask applied directly) against a process
    whose rule cannot be compiled (it runs Decider.decision and rules.apply)."""
    procs, msgs = dag
    n = len(procs)
    delta = (n + 1) // 2 if name in ("toto", "s-toto") else max(1, n // 2)
    if name != "all-ack" and not delta < n:
        return
    params = Params(None if name == "all-ack" else delta)
    rule = RULES[name]

    def concrete(v, p):
        if v.ntail_g == v.n:  # a Python branch on a value: never compiled
            pass
        return rule(v, p)

    fast = Process(procs[0], procs, rule, params)
    slow = Process(procs[0], procs, concrete, params)
    order = list(msgs)
    rnd.shuffle(order)
    for m in order:
        a, b = fast.receive(m), slow.receive(m)
        assert a == b
    assert fast.dag.delivered_sequence == slow.dag.delivered_sequence


def test_each_step_owns_its_lists() -> None:
    a, b = Step(), Step()
    a.released.append("x")
    assert b == Step() and a != b and a.delivered is not b.delivered
    assert Step(["m"]).released == ["m"]
