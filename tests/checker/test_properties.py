"""Hand-written traces per property: where it holds, where it is violated (with the exact
witness), and where it is unknown. ``check`` also asserts the vectorized engine agrees."""

from __future__ import annotations

import pytest
from tracedsl import check, parse

from tomkit.checker.properties import Options
from tomkit.checker.result import Verdict


def wit(res):
    return [w.describe().split("  [")[0] for w in res.witness]


def lines(res):
    return [w.location.line for w in res.witness]


CLEAN = """
p send a time=0
p deliver a time=1
q send b deps=a time=1.5
q deliver a time=1.2
q deliver b time=2
p deliver b time=2.5
"""


@pytest.mark.parametrize("name", ["integrity", "total-order-weak", "total-order-strong",
                                  "global-order", "causal-order", "fifo-order", "liveness"])
def test_clean_trace_holds(name):
    assert check(parse(CLEAN), name).verdict == Verdict.HOLDS


# ---- integrity ------------------------------------------------------------------------------

def test_integrity_duplicate_delivery():
    res = check(parse("""
        p send a
        p deliver a
        q deliver a
        q deliver a
    """), "integrity")
    assert res.verdict == Verdict.VIOLATED and res.clause == "duplicate-delivery"
    assert wit(res) == ["q: deliver a #0", "q: deliver a #1"]
    assert lines(res) == [3, 4]


def test_integrity_unsent_delivery():
    res = check(parse("""
        p send a
        p deliver a
        q deliver z
    """), "integrity")
    assert res.clause == "unsent-delivery"
    assert wit(res) == ["q: deliver z #0"] and lines(res) == [3]


def test_integrity_duplicate_send():
    res = check(parse("""
        p send a
        q send a
        p deliver a
    """), "integrity")
    assert res.clause == "duplicate-send"
    assert wit(res) == ["p: send a #0", "q: send a #0"]


def test_integrity_unknown_without_sends():
    res = check(parse("p deliver a\nq deliver a"), "integrity")
    assert res.verdict == Verdict.UNKNOWN and "no send events" in res.explanation


def test_integrity_unknown_without_sends_still_catches_duplicates():
    res = check(parse("p deliver a\np deliver a"), "integrity")
    assert res.verdict == Verdict.VIOLATED and res.clause == "duplicate-delivery"


# ---- total order, weak -------------------------------------------------------------------------

def test_weak_inversion_exact_witness():
    res = check(parse("""
        p deliver x
        p deliver a
        p deliver b
        q deliver b
        q deliver x
        q deliver a
    """), "total-order-weak")
    assert res.verdict == Verdict.VIOLATED
    # the first message along p's order that q delivered earlier (b), against the latest
    # message before it in both orders (a)
    assert wit(res) == ["p: deliver a #1", "p: deliver b #2", "q: deliver b #0",
                        "q: deliver a #2"]


def test_weak_ignores_gaps_and_different_subsets():
    records = parse("""
        p deliver a
        p deliver b
        p deliver c
        q deliver a
        q deliver c
    """)
    assert check(records, "total-order-weak").verdict == Verdict.HOLDS
    assert check(records, "global-order").verdict == Verdict.HOLDS


def test_weak_reads_first_deliveries_only():
    # the repeated delivery of a is integrity's; it is no order fact
    records = parse("""
        p deliver a
        p deliver b
        p deliver a
        q deliver a
        q deliver b
    """)
    assert check(records, "total-order-weak").verdict == Verdict.HOLDS
    assert check(records, "total-order-strong").verdict == Verdict.HOLDS


# ---- total order, strong -----------------------------------------------------------------------

def test_strong_gap_is_violation_that_weak_misses():
    records = parse("""
        p deliver a
        p deliver b
        q deliver b
    """)
    assert check(records, "total-order-weak").verdict == Verdict.HOLDS
    res = check(records, "total-order-strong")
    assert res.verdict == Verdict.VIOLATED
    assert wit(res) == ["p: deliver a #0", "p: deliver b #1", "q: deliver b #0"]
    assert "never delivers a" in res.explanation


def test_strong_gap_with_later_delivery_cites_it():
    res = check(parse("""
        p deliver a
        p deliver b
        q deliver b
        q deliver a
    """), "total-order-strong")
    # the first divergence along p's order is at a: q delivers b before a, p does not
    assert wit(res) == ["q: deliver b #0", "q: deliver a #1", "p: deliver a #0",
                        "p: deliver b #1"]
    assert "it delivers b only later, as #1" in res.explanation


def test_strong_same_set_other_order():
    res = check(parse("""
        p deliver a
        p deliver b
        p deliver c
        q deliver b
        q deliver a
        q deliver c
    """), "total-order-strong")
    assert res.verdict == Verdict.VIOLATED
    assert wit(res)[:3] == ["p: deliver a #0", "p: deliver b #1", "q: deliver b #0"] or \
        wit(res)[:3] == ["q: deliver b #0", "q: deliver a #1", "p: deliver a #0"]


def test_strong_is_per_view():
    # q joins in v2: it did not see a, but nobody delivers b in v2 after a
    records = parse("""
        p view v1 members=p
        p deliver a
        p view v2 members=p,q
        p deliver b
        q view v2 members=p,q
        q deliver b
    """)
    assert check(records, "total-order-strong").verdict == Verdict.HOLDS
    records2 = parse("""
        p view v2 members=p,q
        p deliver a
        p deliver b
        q view v2 members=p,q
        q deliver b
    """)
    res = check(records2, "total-order-strong")
    assert res.verdict == Verdict.VIOLATED and "in view v2" in res.explanation


# ---- global order ----------------------------------------------------------------------------

def test_global_three_cycle_that_pairwise_misses():
    records = parse("""
        p deliver a
        p deliver b
        q deliver b
        q deliver c
        r deliver c
        r deliver a
    """)
    assert check(records, "total-order-weak").verdict == Verdict.HOLDS
    res = check(records, "global-order")
    assert res.verdict == Verdict.VIOLATED and res.clause == "cycle-of-3"
    assert wit(res) == ["p: deliver a #0", "p: deliver b #1", "q: deliver b #0",
                        "q: deliver c #1", "r: deliver c #0", "r: deliver a #1"]


def test_global_witness_is_a_shortest_cycle():
    # a long cycle through x1..x4 and a short one (a, b) elsewhere: the witness is the short one
    records = parse("""
        p deliver x1
        p deliver x2
        q deliver x2
        q deliver x3
        r deliver x3
        r deliver x4
        s deliver x4
        s deliver x1
        p deliver a
        p deliver b
        q deliver b
        q deliver a
    """)
    res = check(records, "global-order")
    assert res.clause == "cycle-of-2"
    assert res.details["cycle"] in (["a", "b"], ["b", "a"])


def test_global_holds_when_processes_skip():
    records = parse("""
        p deliver a
        p deliver c
        q deliver b
        q deliver c
        r deliver a
        r deliver b
    """)
    assert check(records, "global-order").verdict == Verdict.HOLDS


# ---- causal order ----------------------------------------------------------------------------

def test_causal_violation_with_consistent_total_order():
    records = parse("""
        p send a
        q send b deps=a
        p deliver b
        p deliver a
        q deliver b
        q deliver a
    """)
    assert check(records, "total-order-weak").verdict == Verdict.HOLDS
    res = check(records, "causal-order")
    assert res.verdict == Verdict.VIOLATED
    assert wit(res) == ["q: send b #0", "p: deliver b #0", "p: deliver a #1"]


def test_causal_dependency_never_delivered():
    res = check(parse("""
        p send a
        q send b deps=a
        r deliver b
    """), "causal-order")
    assert res.verdict == Verdict.VIOLATED and "never delivers a" in res.explanation
    assert wit(res) == ["q: send b #0", "r: deliver b #0"]


def test_causal_unknown_without_deps_or_sends():
    res = check(parse("p send a\np deliver a"), "causal-order")
    assert res.verdict == Verdict.UNKNOWN and "deps" in res.explanation
    res = check(parse("p deliver a"), "causal-order")
    assert res.verdict == Verdict.UNKNOWN and "no send" in res.explanation


def test_causal_empty_deps_count_as_logged():
    assert check(parse("p send a deps=\np deliver a"), "causal-order").verdict == Verdict.HOLDS


# ---- FIFO order ------------------------------------------------------------------------------

def test_fifo_reorder():
    res = check(parse("""
        p send a
        p send b
        q deliver b
        q deliver a
    """), "fifo-order")
    assert res.verdict == Verdict.VIOLATED
    assert wit(res) == ["p: send a #0", "p: send b #1", "q: deliver b #0", "q: deliver a #1"]


def test_fifo_gap():
    res = check(parse("""
        p send a
        p send b
        p send c
        q deliver a
        q deliver c
    """), "fifo-order")
    assert res.verdict == Verdict.VIOLATED
    assert wit(res) == ["p: send b #1", "p: send c #2", "q: deliver c #1"]


def test_fifo_other_senders_interleave_freely():
    records = parse("""
        p send a
        q send x
        p send b
        r deliver x
        r deliver a
        r deliver b
    """)
    assert check(records, "fifo-order").verdict == Verdict.HOLDS


# ---- virtual synchrony -----------------------------------------------------------------------

VS = """
p view v1 members=p,q,r
q view v1 members=p,q,r
r view v1 members=p,q,r
p send a
p deliver a
q deliver a
r deliver a
r crash
p view v2 members=p,q
q view v2 members=p,q
"""


def test_vsync_holds():
    assert check(parse(VS), "virtual-synchrony").verdict == Verdict.HOLDS


def test_vsync_missing_message_between_views():
    records = [r for r in parse(VS) if not (r["process"] == "q" and r["kind"] == "deliver")]
    res = check(records, "virtual-synchrony")
    assert res.verdict == Verdict.VIOLATED and res.clause == "same-set"
    assert wit(res) == ["p: view v1", "p: deliver a #0", "p: view v2", "q: view v1", "q: view v2"]


def test_vsync_delivered_in_other_view():
    records = parse("""
        p view v1 members=p,q
        q view v1 members=p,q
        p send a
        p view v2 members=p,q
        q view v2 members=p,q
        p deliver a
        q deliver a
    """)
    # virtual synchrony itself holds: both deliver a between v2 and nothing (no next view)
    assert check(records, "virtual-synchrony").verdict == Verdict.HOLDS
    res = check(records, "sending-view-delivery")
    assert res.verdict == Verdict.VIOLATED and res.clause == "sending-view"
    assert "sent in view v1" in res.explanation and "in view v2" in res.explanation
    assert check(records, "same-view-delivery").verdict == Verdict.HOLDS


def test_vsync_unknown_without_views():
    assert check(parse(CLEAN), "virtual-synchrony").verdict == Verdict.UNKNOWN


# ---- liveness --------------------------------------------------------------------------------

def test_liveness_lost_message():
    res = check(parse("""
        p send a
        p deliver a
        q deliver x
        p send x
        p deliver x
    """), "liveness")
    assert res.verdict == Verdict.VIOLATED and res.clause == "validity"
    assert wit(res) == ["p: send a #0", "q: deliver x"]


def test_liveness_excuses_crashed_and_excluded_processes():
    records = parse(VS)
    assert check(records, "liveness").verdict == Verdict.HOLDS
    # r is excluded from the final view without a crash event: still not correct
    records = [r for r in parse(VS) if r["kind"] != "crash"]
    records.append({"trace": "t", "process": "p", "kind": "send", "msg": "b"})
    records.append({"trace": "t", "process": "p", "kind": "deliver", "msg": "b"})
    records.append({"trace": "t", "process": "q", "kind": "deliver", "msg": "b"})
    assert check(records, "liveness").verdict == Verdict.HOLDS


def test_liveness_agreement_on_messages_of_crashed_senders():
    res = check(parse("""
        r send a
        r crash
        p deliver a
        q deliver x
        q send x
        p deliver x
    """), "liveness")
    assert res.verdict == Verdict.VIOLATED and res.clause == "agreement"


# ---- latency ---------------------------------------------------------------------------------

def test_latency_over_bound():
    records = parse(CLEAN)
    assert check(records, "latency", Options(latency_bound=1.5)).verdict == Verdict.HOLDS
    res = check(records, "latency", Options(latency_bound=0.9))
    assert res.verdict == Verdict.VIOLATED
    assert wit(res) == ["p: send a #0", "q: deliver a #0"]  # 1.2 s, the slowest
    assert res.details["max"] == pytest.approx(1.2)
    assert res.details["per_process"]["p"]["max"] == pytest.approx(1.0)
    assert res.details["per_process"]["q"]["mean"] == pytest.approx((1.2 + 0.5) / 2)


def test_latency_unknown_without_bound_or_times():
    assert check(parse(CLEAN), "latency").verdict == Verdict.UNKNOWN
    res = check(parse("p send a\np deliver a"), "latency", Options(latency_bound=1))
    assert res.verdict == Verdict.UNKNOWN and "timed" in res.explanation


# ---- order given by seq -------------------------------------------------------------------------

def test_seq_orders_events_not_record_order():
    records = parse("""
        p deliver b seq=1
        p deliver a seq=0
        q deliver a
        q deliver b
    """)
    assert check(records, "total-order-weak").verdict == Verdict.HOLDS
    records[0]["seq"], records[1]["seq"] = 0, 1
    assert check(records, "total-order-weak").verdict == Verdict.VIOLATED
