"""The compiled interpretation (model/toto/compiled.py) decides exactly as ConcreteRuleView, for
every built-in rule, at every step of random runs; and the incremental activation advance
(DagView._advance) keeps the same state as recomputing it from scratch."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_model_dag import SETTINGS, causal_dags

from tomkit.model.toto.compiled import compiled
from tomkit.model.toto.dag import DagView
from tomkit.model.toto.rules import RULES, Params, drain
from tomkit.model.toto.vocab import ConcreteRuleView, Delivery, RuleView


def params_for(rule: str, n: int, rnd: random.Random) -> Params:
    if rule == "all-ack":
        return Params()
    lo = (n + 1) // 2 if rule in ("toto", "s-toto") else 1
    return Params(rnd.randint(lo, n - 1)) if lo < n else Params(None)


@pytest.mark.parametrize("rule", sorted(RULES))
@given(dag=causal_dags(max_procs=6, max_msgs=22), rnd=st.randoms(use_true_random=False))
@SETTINGS
def test_compiled_rule_decides_as_the_concrete_interpretation(rule, dag, rnd) -> None:
    procs, msgs = dag
    if len(procs) < 2:
        return
    params = params_for(rule, len(procs), rnd)
    fn = RULES[rule]
    g = DagView(procs)
    order = list(msgs)
    rnd.shuffle(order)  # any reveal order: the view buffers what is not causally ready
    for m in order:
        g.insert(m)
        while True:
            want = fn(ConcreteRuleView(g), params)
            cands, yes, tail, mk, rk, seen = g.rule_inputs()
            got = compiled(fn, params, g.n, len(cands))(cands, yes, tail, mk, rk, seen)
            assert got == want
            if want is None:
                break
            g.deliver(want.messages, end_activation=want.ends_activation)


@given(dag=causal_dags(max_procs=6, max_msgs=22), rnd=st.randoms(use_true_random=False))
@SETTINGS
def test_incremental_advance_equals_recomputing(dag, rnd) -> None:
    procs, msgs = dag
    g = DagView(procs)
    for m in msgs:
        g.insert(m)
        open_ = [c for c in g.candidates() if c not in g.marked]
        if rnd.random() < 0.3 and open_:
            pick = [c for c in open_ if rnd.random() < 0.5] or open_
            g.deliver(pick, end_activation=rnd.random() < 0.8)
            fresh = DagView(procs)
            # (a DagView compiled by mypyc, model/kernel.py, keeps no __dict__: its
            # attributes are named by __mypyc_attrs__)
            for k in getattr(DagView, "__mypyc_attrs__", None) or list(vars(g)):
                v = getattr(g, k)
                setattr(fresh, k, v.copy() if hasattr(v, "copy") else v)
            fresh._recompute_activation()
            assert g.activation_state() == fresh.activation_state()


def test_a_rule_outside_the_vocabulary_is_not_compiled_and_still_runs() -> None:
    def branching(v: RuleView, params: Params) -> Delivery | None:
        if v.ntail_g == v.n:  # a Python branch on a value: only concrete evaluation can
            return v.deliver(v.candidates, "default")
        return None

    assert compiled(branching, Params(), 2, 1) is None
    g = DagView(["a", "b"])
    from tomkit.model.toto.dag import Message

    g.insert(Message("a1", "a"))
    g.insert(Message("b1", "b", ("a1",)))
    # after a1, only b is heard from: the rule waits
    assert [a.delivery.messages for a in drain(g, branching)] == [("a1",)]


def test_compiled_source_is_straight_line_and_shares_subexpressions() -> None:
    src = compiled(RULES["toto"], Params(4), 8, 3).source
    assert "for " not in src and "lambda" not in src
    # votes(a, b) for each ordered pair of distinct slots, each computed once
    assert src.count("yes[0] & ~yes[1]") == 1
    assert "yes[0] & ~yes[0]" not in src
