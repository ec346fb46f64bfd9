"""The bookkeeping DagView keeps for speed, against its definitions: the heads a new
message ACKs, the per-voter count of processors holding it back (``_blocked``), the
per-processor latest and voter vcs, and the candidate lists handed to compiled rules;
and Process.covered against its definition."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_model_dag import SETTINGS, causal_dags

from tomkit.model.toto.dag import DagView, Message
from tomkit.model.toto.process import TotoProcess as Process


def heads_by_definition(g: DagView) -> tuple[str, ...]:
    """The latest visible message of each processor that no other processor's latest
    message follows, in configuration order."""
    latest = [g.messages_of(p)[-1] for p in g.processors if g.messages_of(p)]
    return tuple(m for m in latest if not any(o != m and g.follows(o, m) for o in latest))


def assert_bookkeeping(g: DagView) -> None:
    assert g.heads() == heads_by_definition(g)
    zero = (0,) * g.n
    for r, p in enumerate(g.processors):
        chain = g.messages_of(p)
        assert g._latest_vc[r] == (g.vc(chain[-1]) if chain else zero)
        v = g.voter(p)
        assert g._voter_vc[r] == (g.vc(v) if v is not None else zero)
        # held back: the other processors of which the voter follows an undelivered message
        if v is None or v in g.candidates():
            assert r not in g._blocked
        else:
            held = sum(1 for q, x in enumerate(g.processors)
                       if q != r and any(g.in_activation(m) and g.follows(v, m)
                                         for m in g.messages_of(x)))
            assert g._blocked[r] == held > 0
    st_ = g.activation_state()
    cands, yes, tail, mk, rk, seen = g.rule_inputs()
    assert tuple(cands) == st_.candidates and seen == st_.seen
    assert yes == [st_.yes[c] for c in cands] and tail == [st_.tail[c] for c in cands]
    assert rk == [st_.ranks[c] for c in cands]
    assert mk == [c in st_.marked for c in cands]


@given(causal_dags(max_procs=6, max_msgs=24), st.randoms(use_true_random=False))
@SETTINGS
def test_bookkeeping_under_inserts_deliveries_marks_and_crashes(dag, rnd) -> None:
    run_bookkeeping(dag, rnd)


@given(causal_dags(min_procs=9, max_procs=19, max_msgs=40, learn=6),
       st.randoms(use_true_random=False))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_bookkeeping_with_masks_of_several_bytes(dag, rnd) -> None:
    """DagView._advance walks vote and tail masks a byte at a time: more than 8 and 16
    processors."""
    run_bookkeeping(dag, rnd)


def run_bookkeeping(dag, rnd) -> None:
    procs, msgs = dag
    order = list(msgs)
    rnd.shuffle(order)  # out of causal order: the view buffers and releases
    g = DagView(procs)
    assert_bookkeeping(g)
    for m in order:
        g.insert(m)
        if not g.buffered and rnd.random() < 0.1:
            q = rnd.choice(procs)
            if all(x.id in g for x in msgs if x.sender == q):
                g.crash(q)
        open_ = [c for c in g.candidates() if c not in g.marked]
        if rnd.random() < 0.6 and (open_ or g.marked):
            pick = [c for c in open_ if rnd.random() < 0.5]
            g.deliver(pick, end_activation=not pick or rnd.random() < 0.7)
        assert_bookkeeping(g)


def test_heads_follow_figure1_and_a_single_processor() -> None:
    g = DagView(["a", "b", "c"])
    assert g.heads() == ()
    g.insert(Message("a1", "a"))
    g.insert(Message("b1", "b"))
    assert g.heads() == ("a1", "b1")
    g.insert(Message("c1", "c", ("a1",)))  # follows a1, not b1
    assert g.heads() == ("b1", "c1")
    g.insert(Message("a2", "a", ("b1", "c1")))  # follows everything
    assert g.heads() == ("a2",)
    solo = DagView(["a"])
    solo.insert(Message("a1", "a"))
    assert solo.heads() == ("a1",)


@given(st.lists(st.tuples(st.integers(0, 3), st.booleans()), max_size=40),
       st.randoms(use_true_random=False))
@SETTINGS
def test_covered_is_following_every_visible_message(ops, rnd) -> None:
    names = ["p0", "p1", "p2", "p3"]
    procs = [Process(p, names, "toto") for p in names]
    in_flight: list[tuple[int, Message]] = []
    for i, send in ops:
        if send or not in_flight:
            m, _ = procs[i].send()
            in_flight += [(j, m) for j in range(4) if j != i]
        else:
            j, m = in_flight.pop(rnd.randrange(len(in_flight)))
            procs[j].receive(m)
        for p in procs:
            want = (len(p.dag) == 0 if p.last_sent is None else
                    all(p.dag.follows(p.last_sent, x) for x in p.dag.visible))
            assert p.covered() == want
