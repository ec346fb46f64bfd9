"""A trace with views broken after positions retired (checker/stream/viewheld.py): decided
in the pass on its held records, each process's retired prefix carried over, with the
whole-trace checker's verdicts, witnesses and sentences; and the cases that still go
whole. Planted faults of every kind early, in the middle and late in a run with a join,
a crash and a leave; the generators' view faults, the real systems' fixtures and
Hypothesis-made view runs, both layouts, windows of 2 to 8 positions."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from stream_oracle import STREAMED, agree, by_process, small_windows
from test_stream_views import REAL, long_view_run, view_runs

import tomkit.checker.stream.canon as canon
import tomkit.checker.stream.driver as driver
from tomkit.checker.properties import Options, properties, with_scope
from tomkit.checker.stream.driver import _Run
from tomkit.traces.generate import FAULTS, faulty_trace
from tomkit.traces.writer import write_records

#: the properties a broken trace with views is decided on in the pass (member liveness
#: and latency still read it whole), and their correct-process forms
SAFE = [p for p in STREAMED if not p.final() and p.held]
SAFE_CORRECT = [with_scope(p, "correct") for p in SAFE if p.scoped]
END = [properties()[n] for n in ("agreement", "validity", "liveness")]
END_CORRECT = [with_scope(properties()["agreement"], "correct")]
MEMBER = [properties()["member-liveness"]]


@pytest.fixture
def small_window(monkeypatch):
    monkeypatch.setattr(canon, "TRIM_AT", 4)
    monkeypatch.setattr(driver, "READ_ROWS", 16)


def decided(path, props=SAFE, options=Options()) -> _Run:
    """The single pass's report is the whole-trace checker's; the run (how it decided)."""
    run = _Run(props, options, False)
    agree([path], props, options, run=run)
    return run


def membership_run(n_views: int = 9, per_view: int = 6) -> list[dict]:
    """A clean view-synchronous run, records interleaved round by round: p0-p3 from the
    start, p4 joins at the fourth view, p3 crashes half way through the sixth, p2 leaves
    after the eighth; each message sent by one member and delivered by every member
    right away."""
    members = ["p0", "p1", "p2", "p3"]
    out: list[dict] = []

    def rec(p: str, kind: str, **kw) -> None:
        out.append({"trace": "t", "process": p, "kind": kind, **kw})

    k = 0
    for v in range(n_views):
        if v == 3:
            rec("p4", "join")
            members = members + ["p4"]
        if v == 8:
            rec("p2", "leave")
            members = [p for p in members if p != "p2"]
        for p in members:
            rec(p, "view", view=str(v + 1), members=list(members))
        for j in range(per_view):
            if v == 5 and j == per_view // 2:
                rec("p3", "crash")
                members = [p for p in members if p != "p3"]
            s = members[k % len(members)]
            rec(s, "send", msg=f"m{k}")
            for p in members:
                rec(p, "deliver", msg=f"m{k}")
            k += 1
    return out


def _deliveries(recs: list[dict], p: str) -> list[int]:
    return [i for i, r in enumerate(recs) if r["kind"] == "deliver" and r["process"] == p]


def _view_of(recs: list[dict], i: int) -> str:
    return next(r["view"] for r in reversed(recs[:i]) if r["kind"] == "view")


def plant(fault: str, at: float) -> list[dict]:
    """The membership run with ``fault`` planted at fraction ``at`` of p1's deliveries."""
    recs = membership_run()
    d = _deliveries(recs, "p1")
    i = int(at * (len(d) - 2))
    while _view_of(recs, d[i]) != _view_of(recs, d[i + 1]):  # two in one view
        i -= 1
    a, b = d[i], d[i + 1]
    if fault == "swap":
        recs[a]["msg"], recs[b]["msg"] = recs[b]["msg"], recs[a]["msg"]
    elif fault == "gap":
        del recs[a]
    elif fault == "repeat":
        recs.insert(b, dict(recs[a]))
    elif fault == "unsent":
        recs.insert(b, dict(recs[a], msg="ghost"))
    elif fault == "fifo":  # the sender of p1's message swaps it with its next send
        m = recs[a]["msg"]
        s = next(j for j, r in enumerate(recs) if r["kind"] == "send" and r["msg"] == m)
        mine = [j for j, r in enumerate(recs) if r["kind"] == "send" and
                r["process"] == recs[s]["process"]]
        k = mine.index(s)
        o = mine[k + 1] if k + 1 < len(mine) else mine[k - 1]
        recs[s]["msg"], recs[o]["msg"] = recs[o]["msg"], recs[s]["msg"]
    elif fault == "double-send":
        m = recs[a]["msg"]
        recs.insert(b, {"trace": "t", "process": "p0", "kind": "send", "msg": m})
    elif fault in ("next-view", "moves-on-short"):
        # p1's last delivery of a view: made after it installs the next (a delivery in
        # the wrong view), or not at all (it moves on having delivered less)
        nv = next(j for j in range(b, len(recs)) if recs[j]["kind"] == "view" and
                  recs[j]["process"] == "p1")
        last = max(j for j in d if j < nv)
        moved = recs.pop(last)
        if fault == "next-view":
            recs.insert(nv, moved)
    elif fault in ("members", "twice"):
        nv = next(j for j in range(b, len(recs)) if recs[j]["kind"] == "view" and
                  recs[j]["process"] == "p1")
        if fault == "members":  # one view id, two member sets
            recs[nv] = dict(recs[nv], members=["p1"])
        else:  # p1 installs its view again
            recs.insert(nv + 1, dict(recs[nv]))
    return recs


PLANTED = ["swap", "gap", "repeat", "unsent", "fifo", "double-send", "next-view",
           "moves-on-short", "members", "twice"]


def test_the_clean_membership_run_stays_fast(small_window, tmp_path):
    path = tmp_path / "clean.jsonl"
    write_records(path, membership_run())
    assert decided(path).modes == {"fast": 1}


@pytest.mark.parametrize("at", [0.15, 0.5, 0.9])
@pytest.mark.parametrize("fault", PLANTED)
def test_planted_view_faults_after_retirement(fault, at, small_window, tmp_path):
    """Interleaved: every fault breaks the picture after positions retired, and the trace
    is decided in the pass (not whole), with the whole-trace checker's report (in the
    middle: in both scopes, and grouped by process, whatever decides it)."""
    recs = plant(fault, at)
    path = tmp_path / "i.jsonl"
    write_records(path, recs)
    run = decided(path)
    assert run.modes["views carried"] == 1 and not run.whole, run.modes
    if at == 0.5:
        decided(path, SAFE_CORRECT, Options(scope="correct"))
        grouped = tmp_path / "g.jsonl"
        write_records(grouped, by_process(recs))
        decided(grouped)


def stalled(recs: list[dict], process: str, n: int) -> list[dict]:
    """``recs`` without ``process``'s last ``n`` deliveries (it stops short)."""
    drop = set(_deliveries(recs, process)[-n:])
    return [r for i, r in enumerate(recs) if i not in drop]


@pytest.mark.parametrize("at", [0.15, 0.9])
@pytest.mark.parametrize("stall", ["p4", "p0"])
def test_agreement_validity_and_liveness_on_a_broken_view_trace(at, stall, small_window,
                                                                  tmp_path):
    """Broken after positions retired, and a member (the late joiner p4, or p0) stops
    short in the last view: agreement, validity and liveness are decided in the pass too,
    their witnesses' last events each process's latest record."""
    recs = stalled(plant("swap", at), stall, 3)
    path = tmp_path / "t.jsonl"
    write_records(path, recs)
    run = decided(path, SAFE + END)
    assert run.modes["views carried"] == 1 and not run.whole, run.modes
    decided(path, END_CORRECT, Options(scope="correct"))


def test_member_liveness_when_a_member_missed_retired_messages(small_window, tmp_path):
    """p4 joined late: it did not deliver the first views, so it may owe retired messages
    by member liveness's rules; each process's retired deliveries per view decide them
    (prefixowed.py), in the pass, with every streamed property too (it went whole
    before)."""
    path = tmp_path / "t.jsonl"
    write_records(path, plant("swap", 0.5))
    run = decided(path, SAFE + END + MEMBER)
    assert run.modes["views carried"] == 1 and not run.whole, run.modes
    run = _Run(STREAMED, Options(), False)
    agree([path], run=run)
    assert run.modes["views carried"] == 1 and not run.whole, run.modes


@pytest.mark.parametrize("stall", [None, "p2"])
def test_member_liveness_when_every_member_delivered_the_retired_prefix(stall, small_window,
                                                                        tmp_path):
    """Every process a member from the start, one stalled in the last view or none:
    member liveness is decided in the pass too (no pair names a retired message)."""
    recs = long_view_run(5, 10)
    d = _deliveries(recs, "p1")
    recs[d[-6]]["msg"], recs[d[-5]]["msg"] = recs[d[-5]]["msg"], recs[d[-6]]["msg"]
    if stall:
        recs = stalled(recs, stall, 3)
    path = tmp_path / "t.jsonl"
    write_records(path, recs)
    run = decided(path, SAFE + END + MEMBER)
    assert run.modes["views carried"] == 1 and not run.whole, run.modes
    bad = {k for k, r in run.report.outcomes[0].results.items() if str(r.verdict) == "violated"}
    assert ("member-liveness" in bad) == bool(stall)


def test_a_process_behind_the_prefix_that_logs_after_the_break_goes_whole(small_window,
                                                                          tmp_path):
    """p3 crashed long before: its delivery after the break would lie in the retired
    prefix, which the held records cannot stand for."""
    recs = plant("swap", 0.9)
    recs.append({"trace": "t", "process": "p3", "kind": "deliver", "msg": "m0"})
    path = tmp_path / "t.jsonl"
    write_records(path, recs)
    run = decided(path)
    assert run.whole


def test_a_retired_view_installed_after_the_break_goes_whole(small_window, tmp_path):
    recs = plant("swap", 0.9)
    recs.append({"trace": "t", "process": "p4", "kind": "view", "view": "4",
                 "members": ["p0", "p1", "p2", "p3", "p4"]})
    path = tmp_path / "t.jsonl"
    write_records(path, recs)
    assert decided(path).whole


def test_a_send_left_behind_by_a_retired_one_goes_whole(small_window, tmp_path):
    """p0 sends a message no one delivers at the end of the first view, then messages
    that retire: its retired sends are not its first ones, so the held records cannot
    number its sends (FIFO's membership rule excuses the one lost)."""
    recs = membership_run()
    s = next(i for i, r in enumerate(recs) if r["kind"] == "view" and r["view"] == "2")
    recs.insert(s, {"trace": "t", "process": "p0", "kind": "send", "msg": "lost"})
    d = _deliveries(recs, "p1")
    a, b = d[-3], d[-2]
    recs[a]["msg"], recs[b]["msg"] = recs[b]["msg"], recs[a]["msg"]
    path = tmp_path / "t.jsonl"
    write_records(path, recs)
    assert decided(path).whole


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_the_generators_faults_with_views(fault, monkeypatch, tmp_path):
    monkeypatch.setattr(canon, "TRIM_AT", 2)
    monkeypatch.setattr(driver, "READ_ROWS", 8)
    try:
        recs, _ = faulty_trace(f"t-{fault}", fault, seed=1, n_messages=16, views=True)
    except ValueError:  # the fault does not fit views
        return
    for layout, rs in (("i", recs), ("g", by_process(recs))):
        path = tmp_path / f"{layout}.jsonl"
        write_records(path, rs)
        decided(path)


#: the real runs broken after positions retired (a window of 2) and decided in the pass
IN_THE_PASS = {"etcd-kill-leader-s1", "jgroups-sequencer-flush-kill-s1",
               "jgroups-sequencer-flush-partition-follower-s1",
               "jgroups-sequencer-flush-partition-leader-s1", "jgroups-sequencer-kill-s1"}


@pytest.mark.parametrize("path", REAL, ids=[p.name.split(".")[0] for p in REAL])
def test_the_real_systems_fixtures(path, monkeypatch):
    monkeypatch.setattr(canon, "TRIM_AT", 2)
    monkeypatch.setattr(driver, "READ_ROWS", 8)
    run = decided(path, SAFE + END)
    name = path.name.split(".")[0]
    assert not run.whole
    assert run.modes["views carried"] == (name in IN_THE_PASS), run.modes


@given(view_runs(), st.sampled_from([2, 4]), st.sampled_from([4, 16]), st.booleans())
@settings(max_examples=8, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
def test_hypothesis_view_runs(tmp_path_factory, records, trim, rows, grouped):
    if not records:
        return
    with small_windows(trim, rows):
        path = tmp_path_factory.mktemp("v") / "t.jsonl"
        write_records(path, by_process(records) if grouped else records)
        decided(path, SAFE + END + MEMBER)
        decided(path, SAFE_CORRECT + END_CORRECT, Options(scope="correct"))


def test_a_last_event_that_retired_is_cited(monkeypatch, tmp_path):
    """p3 never sends, and stops after two deliveries of the last view: it holds the low
    watermark there, so its last record retires; agreement's witness still ends with it
    (each process's latest record, kept as the records come)."""
    monkeypatch.setattr(canon, "TRIM_AT", 2)  # retire each position every process passed
    monkeypatch.setattr(driver, "READ_ROWS", 16)
    recs = [dict(r, process="p0") if r["kind"] == "send" and r["process"] == "p3" else r
            for r in long_view_run(6, 20)]
    first = next(i for i, r in enumerate(recs) if r["kind"] == "view" and r["view"] == "6")
    d3 = [i for i in _deliveries(recs, "p3") if i > first]
    recs = [r for i, r in enumerate(recs) if i not in set(d3[2:])]
    d = _deliveries(recs, "p1")
    recs[d[-2]]["msg"], recs[d[-1]]["msg"] = recs[d[-1]]["msg"], recs[d[-2]]["msg"]
    path = tmp_path / "t.jsonl"
    write_records(path, recs)
    run = decided(path, END)
    assert run.modes["views carried"] == 1 and not run.whole, run.modes
    last = run.report.outcomes[0].results["agreement"].witness[-1]
    p3_last = max(i for i, r in enumerate(recs) if r["process"] == "p3")
    # line 1 is the file's header
    assert (last.process, last.kind, last.location.line) == ("p3", "deliver", p3_last + 2)
