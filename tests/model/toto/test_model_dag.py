"""Tests of model/toto/dag.py: causal closure and buffering, follows against brute-force
reachability, candidates and votes against their definitions, and 000 Table 1."""

from __future__ import annotations

import doctest
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tomkit.model.toto.dag as dag_module
import tomkit.model.toto.rules as rules_module
import tomkit.model.toto.vocab as vocab_module
from tomkit.model.toto.dag import BOTTOM, INFINITY, UNSEEN, DagView, Message
from tomkit.model.toto.vocab import ConcreteRuleView

SETTINGS = settings(max_examples=120, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


# ------------------------------------------------------------------- random causal DAGs


@st.composite
def causal_dags(draw, min_procs: int = 2, max_procs: int = 5, max_msgs: int = 18,
                learn: int = 3) -> tuple[tuple[str, ...], list[Message]]:
    """A run's DAG: processors learn messages (with their causal past) and send
    messages that ACK the latest message of each processor they know, as Transis does.
    Returns the configuration and the messages in sending order."""
    n = draw(st.integers(min_procs, max_procs))
    procs = tuple(f"p{i}" for i in range(n))
    known: list[set[str]] = [set() for _ in procs]
    past: dict[str, set[str]] = {}
    sent: list[Message] = []
    count = [0] * n
    for _ in range(draw(st.integers(0, max_msgs))):
        q = draw(st.integers(0, n - 1))
        if sent:
            for i in draw(st.lists(st.integers(0, len(sent) - 1), max_size=learn)):
                known[q] |= past[sent[i].id]
        latest: dict[str, Message] = {}
        for m in sent:  # sending order: the last seen per sender is its latest
            if m.id in known[q]:
                latest[m.sender] = m
        count[q] += 1
        m = Message(f"{procs[q]}.{count[q]}", procs[q], tuple(x.id for x in latest.values()))
        past[m.id] = {m.id}.union(*(past[d] for d in m.deps))
        known[q].add(m.id)
        sent.append(m)
    return procs, sent


def reachable(msgs: list[Message]) -> dict[str, set[str]]:
    """Brute force: for each message, the messages it follows (itself included)."""
    deps = {m.id: m.deps for m in msgs}
    out: dict[str, set[str]] = {}
    for m in msgs:
        seen, todo = {m.id}, [m.id]
        while todo:
            for d in deps[todo.pop()]:
                if d not in seen:
                    seen.add(d)
                    todo.append(d)
        out[m.id] = seen
    return out


def build(procs, msgs) -> DagView:
    g = DagView(procs)
    for m in msgs:
        g.insert(m)
    return g


# ------------------------------------------------------------------------------ examples


def test_doctests() -> None:
    for mod in (dag_module, vocab_module, rules_module):
        assert doctest.testmod(mod).failed == 0


def test_buffering_releases_in_causal_order() -> None:
    g = DagView(["a", "b", "c"])
    c1 = Message("c1", "c", ("a1", "b1"))
    b1 = Message("b1", "b", ("a1",))
    a1 = Message("a1", "a")
    assert g.insert(c1) == [] and g.insert(b1) == []
    assert g.buffered == {"c1", "b1"} and len(g) == 0
    assert g.insert(a1) == [a1, b1, c1]
    assert g.buffered == frozenset() and g.visible == {"a1", "b1", "c1"}
    assert g.heard_from == {"a", "b", "c"}
    assert g.insert(a1) == []  # a duplicate is ignored


def test_sequence_numbers_come_from_the_chain() -> None:
    g = build(["a", "b"], [Message("a1", "a"), Message("b1", "b", ("a1",)),
                           Message("a2", "a", ("b1",)), Message("a3", "a", ("a2",))])
    assert [g.seq(m) for m in ("a1", "a2", "a3", "b1")] == [1, 2, 3, 1]
    assert g.messages_of("a") == ("a1", "a2", "a3")
    assert g.vc("a3") == (3, 1)


@pytest.mark.parametrize("bad, why", [
    (Message("x", "z"), "not in the configuration"),
    (Message("x", "a", ("x",)), "ACK itself"),
    (Message("a1", "a", ("b1",)), "conflicts"),
    (Message("a2", "a", ("b1",)), "does not follow"),  # b1 does not follow a1: a fork
])
def test_bad_messages_are_rejected(bad: Message, why: str) -> None:
    g = build(["a", "b"], [Message("a1", "a"), Message("b1", "b")])
    with pytest.raises(ValueError, match=why):
        g.insert(bad)


def test_crash_declares_defunc_and_refuses_later_messages() -> None:
    g = build(["a", "b", "c"], [Message("a1", "a")])
    g.insert(Message("b2", "b", ("b1",)))
    with pytest.raises(ValueError, match="still buffered"):
        g.crash("b")
    g.crash("c")
    assert g.defunc == {"c"} and g.tail_g() == {"a", "c"}
    assert g.vv("a1") == (1, UNSEEN, 0) and g.vt("a1") == (1, BOTTOM, INFINITY)
    with pytest.raises(ValueError, match="defunct"):
        g.insert(Message("c1", "c"))


def test_deliver_accepts_candidates_only() -> None:
    g = build(["a", "b"], [Message("a1", "a"), Message("b1", "b", ("a1",))])
    with pytest.raises(ValueError, match="not a candidate"):
        g.deliver(["b1"])
    g.deliver(["a1"], end_activation=False)
    assert g.marked == ("a1",) and g.candidates() == ("a1",) and g.activation == 0
    with pytest.raises(ValueError, match="already delivered"):
        g.deliver(["a1"])
    g.deliver([])  # ends the activation with the marked a1
    assert g.candidates() == ("b1",) and g.delivered_sequence == ("a1",)
    assert g.activation == 1 and not g.in_activation("a1") and g.in_activation("b1")


# ---------------------------------------------------------- 000 Figure 1 and Table 1


def figure1() -> DagView:
    """000 Figure 1, reconstructed (the figure itself is not in the OCR) from the text
    ("m_d,2 explicitly acknowledges m_c,1, m_e,2 and implicitly m_a,1, m_d,1 and m_e,1";
    "m_c,2 ... follows m_c,1"), from the node labels (five first, five second, one third
    message) and from Table 1 itself: a2 follows all three candidates, d2 follows c1 and
    e2, d3 follows d2 and b1. The ids are the paper's m_{q,k}."""
    g = DagView(["a", "b", "c", "d", "e"])
    for m in [Message("a1", "a"), Message("d1", "d", ("a1",)), Message("e1", "e", ("a1",)),
              Message("b1", "b", ("a1",)), Message("c1", "c", ("d1",)),
              Message("e2", "e", ("e1",)), Message("d2", "d", ("c1", "e2")),
              Message("a2", "a", ("b1", "c1", "e2")), Message("c2", "c", ("c1",)),
              Message("b2", "b", ("b1",)), Message("d3", "d", ("d2", "b1"))]:
        assert g.insert(m) == [m]
    g.deliver(["a1"])
    g.deliver(["d1", "e1"])
    return g


def test_figure1_implicit_acks() -> None:
    g = figure1()
    assert {m for m in g.visible if g.follows("d2", m)} == {"a1", "c1", "d1", "d2", "e1", "e2"}


def test_table1_of_000() -> None:
    """000 Table 1 (OCR around line 1200; infinity is printed as "1" by the OCR):

        m_b,1  {a, b, d}  3  (2, 1, inf, inf, inf)  2
        m_c,1  {a, c, d}  3  (2, inf, 1, 2, inf)    3
        m_e,2  {a, d, e}  3  (2, inf, inf, 2, 2)    3
    """
    g = figure1()
    assert g.delivered == {"a1", "d1", "e1"}
    assert g.candidates() == ("b1", "c1", "e2")  # 000: "the candidate set is {m_b1, ...}"
    assert not g.in_activation("a1") and g.in_activation("c2")
    inf = math.inf
    table = {
        "b1": ({"a", "b", "d"}, 3, (2, 1, inf, inf, inf), 2),
        "c1": ({"a", "c", "d"}, 3, (2, inf, 1, 2, inf), 3),
        "e2": ({"a", "d", "e"}, 3, (2, inf, inf, 2, 2), 3),
    }
    v = ConcreteRuleView(g)
    for m, (tail, ntail, vt, nvt) in table.items():
        assert g.tail(m) == tail
        assert g.ntail(m) == v.ntail(m) == ntail
        assert g.vt(m) == vt
        assert g.nvt(m) == v.nvt(m) == nvt
    assert g.tail_g() == {"a", "b", "c", "d", "e"} and v.ntail_g == 5 and v.u == 0
    assert g.vv("b1") == (1, 1, 0, 0, 0)


# ------------------------------------------------------------------------ properties


@given(causal_dags(), st.randoms(use_true_random=False))
@SETTINGS
def test_reveal_orders_give_the_same_view(dag, rnd) -> None:
    procs, msgs = dag
    ref = build(procs, msgs)
    shuffled = list(msgs)
    rnd.shuffle(shuffled)
    g = DagView(procs)
    order: list[str] = []
    for m in shuffled:
        for r in g.insert(m):
            assert all(d in g for d in r.deps)
            assert all(d in order for d in r.deps)  # released in causal order
            order.append(r.id)
    assert g.buffered == frozenset() and g.visible == ref.visible == {m.id for m in msgs}
    for p in procs:
        assert g.messages_of(p) == ref.messages_of(p)
    for m in msgs:
        assert g.vc(m.id) == ref.vc(m.id) and g.seq(m.id) == ref.seq(m.id)


@given(causal_dags())
@SETTINGS
def test_follows_is_reachability(dag) -> None:
    procs, msgs = dag
    g = build(procs, msgs)
    reach = reachable(msgs)
    for a in msgs:
        for b in msgs:
            assert g.follows(a.id, b.id) == (b.id in reach[a.id])
        assert g.tail(a.id) == {g.message(x).sender for x in g.visible if a.id in reach[x]}


@given(causal_dags(), st.randoms(use_true_random=False))
@SETTINGS
def test_candidates_and_votes_match_their_definitions(dag, rnd) -> None:
    procs, msgs = dag
    g = build(procs, msgs)
    reach = reachable(msgs)
    while True:
        undelivered = [m.id for m in msgs if m.id not in g.delivered]
        cands = [m for m in undelivered
                 if all(x == m or x in g.delivered for x in reach[m])]
        assert set(g.candidates()) == set(cands)
        assert list(g.candidates()) == sorted(cands, key=lambda m: g.rank(g.message(m).sender))
        for q in procs:
            mine = [m for m in undelivered if g.message(m).sender == q]
            first = min(mine, key=g.seq) if mine else None
            assert g.voter(q) == first
            for c in cands:
                # 002 section 3: the first message of q in G votes for what it follows
                want = UNSEEN if first is None else int(c in reach[first])
                assert g.vv(c)[procs.index(q)] == want
        assert g.tail_g() == {g.message(m).sender for m in undelivered}
        if not cands:
            break
        pick = [c for c in cands if rnd.random() < 0.5] or cands[:1]
        g.deliver(pick)


def assert_state_matches_definitions(g: DagView, reach: dict[str, set[str]]) -> None:
    """The incrementally kept activation state against 002 section 3's definitions."""
    st_ = g.activation_state()
    assert st_.candidates == g.candidates()
    undelivered = [m for m in g.visible if g.in_activation(m)]
    assert set(st_.candidates) == {
        m for m in undelivered if all(x == m or not g.in_activation(x) for x in reach[m])}
    voters = {q: g.voter(q) for q in g.processors}
    for c in st_.candidates:
        yes = {q for q, v in voters.items() if v is not None and c in reach[v]}
        tail = {g.message(x).sender for x in g.visible if c in reach[x]}
        assert st_.yes[c] == sum(1 << g.rank(q) for q in yes)
        assert st_.tail[c] == sum(1 << g.rank(q) for q in tail)
        assert st_.ranks[c] == g.rank(g.message(c).sender)
    seen = {g.message(m).sender for m in undelivered} | g.defunc
    assert st_.seen == sum(1 << g.rank(q) for q in seen)
    # 000 section 6: the index of latency counts the processors heard from in G
    assert g.index_of_latency() == len({g.message(m).sender for m in undelivered})
    assert g.ntail_g() == len(seen) and g.tail_g() == seen


@given(causal_dags(), st.randoms(use_true_random=False))
@SETTINGS
def test_incremental_state_under_interleaved_inserts_deliveries_and_crashes(dag, rnd) -> None:
    procs, msgs = dag
    reach = reachable(msgs)
    order = list(msgs)
    rnd.shuffle(order)
    g = DagView(procs)
    for m in order:
        g.insert(m)
        if not g.buffered and rnd.random() < 0.1:
            q = rnd.choice(procs)
            if all(x.id in g for x in msgs if x.sender == q):  # no later message of q
                g.crash(q)
        cands = [c for c in g.candidates() if c not in g.marked]
        if rnd.random() < 0.5 and (cands or g.marked):
            pick = [c for c in cands if rnd.random() < 0.5]
            g.deliver(pick, end_activation=not pick or rnd.random() < 0.7)
        assert_state_matches_definitions(g, reach)
