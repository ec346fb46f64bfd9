"""Tests of model/toto/vocab.py and model/toto/rules.py: the worked examples of the papers (000
Figure 1, 002 section 6), hand examples for each decision taken where the OCR is
ambiguous, and properties on random DAGs revealed in different orders (every process
delivers the same sequence, in causal order; the rules relate as the papers say)."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_model_dag import causal_dags, figure1

from tomkit.model.toto.dag import DagView, Message
from tomkit.model.toto.rules import (
    RULES,
    Params,
    all_ack,
    drain,
    evaluate,
    g_toto,
    g_toto_external_stability,
    g_toto_internal_stability,
    gl_prefix,
    gl_toto,
    s_toto,
    step,
    toto,
)
from tomkit.model.toto.vocab import (
    WIN_BOTTOM,
    ConcreteRuleView,
    Delivery,
    OpaqueRuleView,
    future_has,
    future_is_one,
    generalized_sources,
    sources,
    win,
)

SETTINGS = settings(max_examples=100, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def build(procs, msgs) -> DagView:
    g = DagView(procs)
    for m in msgs:
        g.insert(m)
    return g


def msgs_of(spec: str) -> list[Message]:
    """'a1 b1:a1 c1:a1,b1' -> messages; the sender is the id's first letter."""
    out = []
    for tok in spec.split():
        mid, _, deps = tok.partition(":")
        out.append(Message(mid, mid[0], tuple(deps.split(",")) if deps else ()))
    return out


# --------------------------------------------------------- 002 section 6, n = 12, delta = 4

PROCS12 = tuple("ABCDEFGHIJKL")


def example6(with_h: bool = True) -> DagView:
    """002 section 6: only each processor's first message is shown, named by its
    processor. A, B, F, I, J are candidates; C, D, E vote for B and F, G for B, H for I;
    K and L are unseen."""
    spec = "A B F I J C:B,F D:B,F E:B,F G:B" + (" H:I" if with_h else "")
    return build(PROCS12, [Message(m.id[0], m.id[0], m.deps) for m in msgs_of(spec)])


def test_example6_nvt_and_votes_tables() -> None:
    v = ConcreteRuleView(example6())
    assert v.ntail_g == 10 and v.u == 2 and v.candidates == set("ABFIJ")
    assert {m: v.nvt(m) for m in "ABFIJ"} == {"A": 1, "B": 5, "F": 4, "I": 2, "J": 1}
    votes = {  # 002 section 6, votes(row, col)
        "A": {"B": 1, "F": 1, "I": 1, "J": 1},
        "B": {"A": 5, "F": 2, "I": 5, "J": 5},
        "F": {"A": 4, "B": 1, "I": 4, "J": 4},
        "I": {"A": 2, "B": 2, "F": 2, "J": 2},
        "J": {"A": 1, "B": 1, "F": 1, "I": 1},
    }
    assert {a: {b: v.votes(a, b) for b in row} for a, row in votes.items()} == votes


def test_example6_g_toto_delivers_b_and_f() -> None:
    g = example6()
    v = ConcreteRuleView(g)
    s = generalized_sources(v, 4)
    assert s == {"B", "F"}
    assert g_toto_internal_stability(v, s, 4) and g_toto_external_stability(v, s, 4)
    assert evaluate(g, g_toto, Params(4)) == Delivery(("B", "F"), "early")
    assert evaluate(g, gl_toto, Params(4)) == Delivery(("B", "F"), "early")
    # footnote 1: ToTo cannot elect with this DAG (delta must be >= n/2 = 6)
    assert evaluate(g, toto, Params(6)) is None


def test_example6_before_h_gl_toto_delivers_b_by_the_prefix_rule() -> None:
    g = example6(with_h=False)
    v = ConcreteRuleView(g)
    assert v.ntail_g == 9 and v.u == 3 and v.nvt("I") == 1
    assert all(v.votes("I", m) == 1 for m in "ABFJ")
    s = generalized_sources(v, 4)
    assert s == {"B"}
    assert not g_toto_internal_stability(v, s, 4)  # F: nvt(F) + u = 4 + 3 > 4
    assert evaluate(g, g_toto, Params(4)) is None
    assert gl_prefix(v, s, 4) == {"A", "B"}  # "The prefix {A, B} of M_G is stable"
    assert [a.delivery for a in drain(g, gl_toto, Params(4))] == [
        Delivery(("B",), "prefix", ends_activation=False)]
    assert g.marked == ("B",) and g.candidates() == tuple("ABFIJ")
    # H arrives: the activation completes with the remaining source
    g.insert(Message("H", "H", ("I",)))
    assert [a.delivery for a in drain(g, gl_toto, Params(4))] == [Delivery(("F",), "early")]
    assert g.delivered_sequence == ("B", "F") and g.activation == 1


# ------------------------------------------------------------------- 000 Figure 1, ToTo


def test_figure1_toto_and_all_ack() -> None:
    g = figure1()  # n = 5, u = 0, nobody beaten for sure with delta >= 3
    for d in (3, 4):
        assert evaluate(g, toto, Params(d)) == Delivery(("b1", "c1", "e2"), "default")
    assert evaluate(g, all_ack) == Delivery(("b1", "c1", "e2"), "default")


def test_toto_delivers_earlier_than_all_ack() -> None:
    # n = 4, delta = 2: b and c ACK a1; d is silent
    g = build("abcd", msgs_of("a1 b1:a1 c1:a1"))
    assert evaluate(g, all_ack) is None
    applied = drain(g, toto, Params(2))
    assert [(a.delivery, a.index_of_latency) for a in applied] == [
        (Delivery(("a1",), "early"), 3)]  # index of latency 3 < n
    h = build("abcd", msgs_of("a1 b1:a1 c1:a1 d1:a1"))
    assert [a.index_of_latency for a in drain(h, all_ack)] == [4]


def s_toto_example() -> DagView:
    """n = 8, delta = 4: a1 has 5 votes, b1 is a source with NTail(b1) = 3 < n - delta,
    g1 is beaten for sure by a1; h is unseen."""
    return build("abcdefgh", msgs_of("a1 b1 g1 c1:a1,b1 d1:a1,b1 e1:a1 f1:a1"))


def test_s_toto_drops_the_ntail_condition_of_toto() -> None:
    g = s_toto_example()
    v = ConcreteRuleView(g)
    assert sources(v, 4) == {"a1", "b1"} and v.ntail("b1") == 3 and v.u == 1
    assert evaluate(g, toto, Params(4)) is None
    assert evaluate(g, s_toto, Params(4)) == Delivery(("a1", "b1"), "early")
    assert evaluate(g, g_toto, Params(4)) == Delivery(("a1", "b1"), "early")


def test_toto_ntail_condition_is_at_least_n_minus_delta() -> None:
    # Decision: 000 (DEL) 2(a) "NTail_p(s) >= n - delta" (the OCR lost the relation).
    g = s_toto_example()
    g.insert(Message("e2", "e", ("e1", "b1")))  # NTail(b1) = 4 = n - delta; h unseen
    assert ConcreteRuleView(g).ntail("b1") == 4
    assert evaluate(g, toto, Params(4)) == Delivery(("a1", "b1"), "early")


def test_crash_makes_the_crashed_processor_seen() -> None:
    # 000 Figure 4: after Crash(c), c is in Tail and votes for nothing
    for rule, params in ((all_ack, Params()), (toto, Params(2))):
        g = build("abc", msgs_of("a1 b1:a1"))
        assert drain(g, rule, params) == []
        g.crash("c")
        assert [a.delivery.messages for a in drain(g, rule, params)] == [("a1",)]


# ----------------------------------------------------- decisions on Win / Future / sources


def test_win_and_future_by_definition_when_delta_is_below_half() -> None:
    # n = 6, delta = 2: a, c, d vote a1 only, b votes b1, e and f unseen
    v = ConcreteRuleView(build("abcdef", msgs_of("a1 b1 c1:a1 d1:a1")))
    assert v.votes("a1", "b1") == 3 and v.votes("b1", "a1") == 1 and v.u == 2
    assert win(v, "a1", "b1", 2) == 1 and win(v, "b1", "a1", 2) == 0
    # the printed "0 in Future(a, b) iff 1 in Future(b, a)" would add 0 here
    assert future_has(v, "b1", "a1", 1, 2)
    assert not future_has(v, "a1", "b1", 0, 2)
    assert future_is_one(v, "a1", "b1", 2)
    assert win(v, "a1", "b1", 3) == WIN_BOTTOM and future_has(v, "a1", "b1", WIN_BOTTOM, 3)


@given(causal_dags(max_procs=6), st.data())
@SETTINGS
def test_future_matches_its_definition_and_the_printed_rule_for_delta_at_least_half(dag, data):
    procs, msgs = dag
    g = build(procs, msgs)
    v = ConcreteRuleView(g)
    n = g.n
    for d in range(1, n):
        for a in v.candidates:
            for b in v.candidates:
                exactly_one = (future_has(v, a, b, 1, d) and not future_has(v, a, b, 0, d)
                               and not future_has(v, a, b, WIN_BOTTOM, d))
                assert future_is_one(v, a, b, d) == exactly_one == (win(v, a, b, d) == 1)
                if 2 * d >= n:
                    assert future_has(v, a, b, 0, d) == future_has(v, b, a, 1, d)


def test_a_source_need_not_beat_itself() -> None:
    # Decision: 000 "for every other candidate"; with u = 3 > delta = 2, 002's literal
    # "for all j in M_G" would find no source at all
    v = ConcreteRuleView(build("abcd", msgs_of("a1")))
    assert v.u == 3 and sources(v, 2) == {"a1"}


def test_delta_ranges_are_checked() -> None:
    g = build("abcd", msgs_of("a1"))
    for rule, bad in ((toto, 1), (s_toto, 4), (g_toto, 0), (gl_toto, 4)):
        with pytest.raises(ValueError, match="delta"):
            evaluate(g, rule, Params(bad))
    with pytest.raises(ValueError, match="delta"):
        evaluate(g, toto, Params())


# ------------------------------------------------------------- running several processes


def run(procs, orders, rule, params, crash=None):
    """Each order is one process's reveal order (any permutation: the DagView buffers);
    the rule is drained after every event. ``crash`` = (q, delays): Crash(q) reaches the
    i'th process ``delays[i]`` events after all of q's messages are visible there.
    Returns per process the DagView and the event index at which each message was
    delivered."""
    out = []
    for i, order in enumerate(orders):
        g = DagView(procs)
        when: dict[str, int] = {}
        q, delays = crash if crash else (None, None)
        q_msgs = {m.id for m in order if m.sender == q}
        countdown, crashed = None, q is None
        for t, m in enumerate(order):
            g.insert(m)
            for a in drain(g, rule, params):
                when.update(dict.fromkeys(a.delivery.messages, t))
            if not crashed and countdown is None and q_msgs <= g.visible:
                countdown = delays[i]
            if not crashed and countdown is not None:
                if countdown == 0:
                    g.crash(q)
                    crashed = True
                    for a in drain(g, rule, params):
                        when.update(dict.fromkeys(a.delivery.messages, t))
                countdown -= 1
        if not crashed:
            g.crash(q)
            for a in drain(g, rule, params):
                when.update(dict.fromkeys(a.delivery.messages, len(order)))
        out.append((g, when))
    return out


def assert_agreement(results, msgs) -> tuple[str, ...]:
    deps = {m.id: m.deps for m in msgs}
    seqs = [g.delivered_sequence for g, _ in results]
    for seq in seqs:
        assert len(set(seq)) == len(seq)
        pos = {m: i for i, m in enumerate(seq)}
        for m in seq:  # causal order: every ACKed message is delivered before
            assert all(pos.get(d, math.inf) < pos[m] for d in deps[m])
    assert all(s == seqs[0] for s in seqs), seqs
    return seqs[0]


@st.composite
def runs(draw, min_delta_half: bool, n_orders: int = 3, max_procs: int = 5):
    procs, msgs = draw(causal_dags(max_procs=max_procs))
    n = len(procs)
    lo = math.ceil(n / 2) if min_delta_half else 1
    delta = draw(st.integers(lo, n - 1)) if lo < n else None
    orders = [draw(st.permutations(msgs)) for _ in range(n_orders)]
    return procs, msgs, orders, delta


RULE_NAMES = sorted(RULES)


@pytest.mark.parametrize("name", RULE_NAMES)
@given(data=st.data())
@SETTINGS
def test_every_process_delivers_the_same_sequence(name, data) -> None:
    half = name in ("toto", "s-toto")
    procs, msgs, orders, delta = data.draw(runs(half))
    if delta is None and name != "all-ack":
        return
    res = run(procs, orders, RULES[name], Params(delta))
    assert_agreement(res, msgs)


@pytest.mark.parametrize("name", RULE_NAMES)
@given(data=st.data())
@SETTINGS
def test_every_process_delivers_the_same_sequence_with_a_crash(name, data) -> None:
    half = name in ("toto", "s-toto")
    procs, msgs, orders, delta = data.draw(runs(half))
    if delta is None and name != "all-ack":
        return
    q = data.draw(st.sampled_from(procs))
    delays = [data.draw(st.integers(0, len(msgs))) for _ in orders]
    res = run(procs, orders, RULES[name], Params(delta), crash=(q, delays))
    assert_agreement(res, msgs)
    assert all(g.defunc == {q} for g, _ in res)


@given(data=st.data())
@SETTINGS
def test_toto_index_of_latency_is_between_delta_plus_one_and_n(data) -> None:
    # 000 section 6: "The index of latency of ToTo_delta ranges between delta+1 to n"
    procs, msgs, orders, delta = data.draw(runs(True, n_orders=1))
    if delta is None:
        return
    g = DagView(procs)
    for m in orders[0]:
        g.insert(m)
        for a in drain(g, toto, Params(delta)):
            assert delta + 1 <= a.index_of_latency <= len(procs)
            if a.delivery.clause == "default":
                assert a.index_of_latency == len(procs)
        for a in drain(DagView(procs), all_ack):
            assert a.index_of_latency == len(procs)


@given(data=st.data())
@SETTINGS
def test_rules_relate_as_the_papers_say(data) -> None:
    """On the same reveal order: ToTo delivers a prefix of what S-ToTo delivers (002:
    S-ToTo only drops a redundant condition); G-ToTo is S-ToTo when delta >= n/2 (002
    section 4: "when delta > n/2, the G-ToTo protocol reduces to the S-ToTo protocol");
    GL-ToTo delivers G-ToTo's sequence, never later (002 section 5), and possibly the
    stable prefix of one more activation."""
    procs, msgs, orders, _ = data.draw(runs(False, n_orders=1, max_procs=6))
    n = len(procs)
    for delta in range(1, n):
        (g_res,) = run(procs, orders, g_toto, Params(delta))
        (gl_res,) = run(procs, orders, gl_toto, Params(delta))
        g_seq, gl_seq = g_res[0].delivered_sequence, gl_res[0].delivered_sequence
        # beyond G-ToTo's sequence, GL-ToTo may have delivered a stable prefix of an
        # activation that G-ToTo never completes
        assert gl_seq[:len(g_seq)] == g_seq
        assert set(gl_seq[len(g_seq):]) <= set(gl_res[0].marked)
        assert all(gl_res[1][m] <= t for m, t in g_res[1].items())
        if 2 * delta >= n:
            (t_res,) = run(procs, orders, toto, Params(delta))
            (s_res,) = run(procs, orders, s_toto, Params(delta))
            t_seq, s_seq = t_res[0].delivered_sequence, s_res[0].delivered_sequence
            assert s_seq[:len(t_seq)] == t_seq
            assert all(s_res[1][m] <= t for m, t in t_res[1].items())
            assert g_res[0].delivered_sequence == s_seq and g_res[1] == s_res[1]


@pytest.mark.parametrize("name", RULE_NAMES)
@given(data=st.data())
@SETTINGS
def test_rules_keep_to_the_vocabulary(name, data) -> None:
    """The opaque interpretation refuses Python branching and candidate comparison, so
    a rule that gives the same answer under it can be evaluated symbolically too. Also:
    an insert that leaves vocab_version alone leaves the rule's answer (None) alone."""
    procs, msgs, orders, delta = data.draw(runs(name in ("toto", "s-toto"), n_orders=1))
    if delta is None and name != "all-ack":
        return
    rule, params = RULES[name], Params(delta)
    g = DagView(procs)
    for m in orders[0]:
        before = g.vocab_version
        g.insert(m)
        if g.vocab_version == before:  # drain's memo relies on this
            assert evaluate(g, rule, params) is None
        while True:
            want = rule(ConcreteRuleView(g), params)
            assert rule(OpaqueRuleView(g), params) == want
            if step(g, rule, params) is None:
                break


def test_opaque_interpretation_refuses_python_branching() -> None:
    def branching(v, params):
        if v.u > 0:  # not allowed: v.u may be a Z3 term
            return None
        return v.first((True, v.deliver(v.candidates, "x")))

    def comparing(v, params):
        return v.first((v.exists(lambda a: v.exists(lambda b: a == b)),
                        v.deliver(v.candidates, "x")))

    g = build("ab", msgs_of("a1"))
    for rule in (branching, comparing):
        with pytest.raises(TypeError):
            rule(OpaqueRuleView(g), Params())


# ------------------------------------------------- every view of a one-activation DAG


@st.composite
def vote_dags(draw, min_procs: int = 5, max_procs: int = 8):
    """One activation's worth of DAG, as in 002 section 6: a few concurrent candidates,
    most other processors' first message voting for a random set of them, some
    processors silent, and a few second messages (which raise NTail and open the next
    activation). Small enough to enumerate every causally closed view."""
    n = draw(st.integers(min_procs, max_procs))
    procs = tuple(f"p{i}" for i in range(n))
    roots = sorted(draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=3)))
    msgs = [Message(f"p{i}.1", f"p{i}") for i in roots]
    root_ids = [m.id for m in msgs]
    for i in range(n):
        if i not in roots and draw(st.integers(0, 4)) > 0:
            deps = draw(st.sets(st.sampled_from(root_ids), min_size=1))
            msgs.append(Message(f"p{i}.1", f"p{i}", tuple(sorted(deps))))
    firsts = [m.id for m in msgs]
    for _ in range(min(len(firsts), draw(st.integers(0, 2)))):
        q = draw(st.sampled_from(firsts))
        acks = draw(st.sets(st.sampled_from(firsts), max_size=3)) - {q}
        msgs.append(Message(f"{q[:-2]}.2", q[:-2], (q, *sorted(acks))))
        firsts.remove(q)
    return procs, msgs


def views(msgs: list[Message]) -> list[list[Message]]:
    """Every causally closed subset of ``msgs`` (given in a causal order)."""
    out: list[list[Message]] = [[]]
    for m in msgs:
        out += [v + [m] for v in out if set(m.deps) <= {x.id for x in v}]
    return out


def assert_every_view_agrees(procs, msgs, rule, params) -> None:
    """A process that evaluates the rule at view V and then receives the rest agrees
    with one that evaluates only once it has everything: for one activation this is
    internal and external stability (002 section 2)."""
    ref = build(procs, msgs)
    drain(ref, rule, params)
    for v in views(msgs):
        g = build(procs, v)
        drain(g, rule, params)
        for m in msgs:
            if m.id not in g:
                g.insert(m)
                drain(g, rule, params)
        assert g.delivered_sequence == ref.delivered_sequence, [m.id for m in v]


@pytest.mark.parametrize("name", RULE_NAMES)
@given(dag=vote_dags(), data=st.data())
@settings(SETTINGS, max_examples=60)
def test_every_view_of_a_vote_dag_agrees_with_the_full_one(name, dag, data) -> None:
    procs, msgs = dag
    n = len(procs)
    delta = data.draw(st.integers(math.ceil(n / 2) if name in ("toto", "s-toto") else 1,
                                  n - 1))
    assert_every_view_agrees(procs, msgs, RULES[name], Params(delta))


# ------------------------------------------------- the harness catches an unsafe rule


def naive_majority(v, params):
    """Unsafe on purpose: deliver the sources once one has more than delta votes,
    without internal stability."""
    s = sources(v, params.delta)
    return v.first((v.exists(lambda x: v.nvt(x) > params.delta, within=s),
                    v.deliver(s, "naive")))


def test_internal_stability_is_needed() -> None:
    # n = 6, delta = 3, b ranked before a. At X (f unseen) b1 may still lose to a1
    # (votes(a1, b1) + u = 3 + 1 > 3), so S = {a1}; at Y f votes b1 and S = {b1, a1}.
    procs = ("b", "a", "c", "d", "e", "f")
    msgs = msgs_of("a1 b1 c1:a1 d1:a1 e1:a1,b1 f1:b1")
    by_id = {m.id: m for m in msgs}
    x = [by_id[i] for i in ("a1", "b1", "c1", "d1", "e1", "f1")]
    y = [by_id[i] for i in ("b1", "f1", "a1", "c1", "d1", "e1")]
    res = run(procs, [x, y], naive_majority, Params(3))
    assert [g.delivered_sequence for g, _ in res] == [("a1",), ("b1", "a1")]
    with pytest.raises(AssertionError):
        assert_every_view_agrees(procs, msgs, naive_majority, Params(3))
    for rule in (toto, s_toto, g_toto, gl_toto):
        res = run(procs, [x, y], rule, Params(3))
        assert assert_agreement(res, msgs) == ("b1", "a1")
