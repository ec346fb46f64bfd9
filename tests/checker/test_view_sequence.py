"""checker/properties/view_sequence.py: one sequence of views (001 section 5's "the same
sequence of configurations"): clean traces with crashes and late joiners hold; a fork, a
merge and a loop are each found, with their witness; no views, unknown."""

from __future__ import annotations

from tracedsl import check, parse

from tomkit.checker.result import Verdict

NAME = "view-sequence"


def wit(res) -> list[str]:
    return [w.describe().split("  [")[0] for w in res.witness]


def test_one_sequence_with_a_crash_and_a_late_joiner_holds():
    res = check(parse("""
        p view v1 members=p,q
        q view v1 members=p,q
        p view v2 members=p,q,r
        q view v2 members=p,q,r
        r join
        r view v2 members=p,q,r
        q crash
        p view v3 members=p,r
        r view v3 members=p,r
    """), NAME)
    assert res.verdict == Verdict.HOLDS


def test_a_restart_begins_a_new_stretch():
    # q crashes in v1 and rejoins at v3: v1 -> v3 at q is no step of the sequence
    res = check(parse("""
        p view v1 members=p,q
        q view v1 members=p,q
        q crash
        p view v2 members=p
        p view v3 members=p,q
        q join
        q view v3 members=p,q
    """), NAME)
    assert res.verdict == Verdict.HOLDS


def test_fork_two_successors():
    res = check(parse("""
        p view v1 members=p,q
        q view v1 members=p,q
        p view v2 members=p,q
        q view v3 members=p,q
    """), NAME)
    assert res.verdict == Verdict.VIOLATED and res.clause == "fork"
    assert wit(res) == [
        "p: view v1", "p: view v2", "q: view v1", "q: view v3"]
    assert "two sequences" in res.explanation


def test_merge_two_predecessors_a_skipped_view():
    # q skips v2 (a configuration it never applied) and lands in v3 with p
    res = check(parse("""
        p view v1 members=p,q
        p view v2 members=p,q
        p view v3 members=p,q
        q view v0 members=p,q
        q view v3 members=p,q
    """), NAME)
    assert res.verdict == Verdict.VIOLATED and res.clause == "merge"
    assert wit(res) == [
        "p: view v2", "p: view v3", "q: view v0", "q: view v3"]


def test_loop():
    res = check(parse("""
        p view a members=p,q
        p view b members=p,q
        q view b members=p,q
        q view a members=p,q
    """), NAME)
    assert res.verdict == Verdict.VIOLATED and res.clause == "cycle"
    assert "a -> b -> a" in res.explanation


def test_unknown_without_views():
    res = check(parse("""
        p send a
        p deliver a
    """), NAME)
    assert res.verdict == Verdict.UNKNOWN
