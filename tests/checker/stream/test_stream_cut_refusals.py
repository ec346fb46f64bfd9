"""The cut's remaining refusals (issue 27): a silent process with views, a process that
first appears in the tail, and the breaches among the membership records that still
keep the held path. Planted early in runs long enough that the broken trace spills and
the cut is tried, each against the whole-trace checker (stream_oracle.py), both scopes,
both layouts, with and without the end-of-trace properties, deps and a latency bound;
which path decided; the conditions bearing weight; a derandomized Hypothesis sweep; and
the records the exact checks read staying flat as the run grows."""

from __future__ import annotations

import pytest
import test_stream_cut_owed as owed
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from stream_oracle import (
    STREAMED,
    agree,
    by_process,
    outcomes,
    records_read,
    small_windows,
    without_silent_processes,
)

import tomkit.checker.stream.canon as canon
import tomkit.checker.stream.driver as driver
import tomkit.checker.stream.narrow as narrow
import tomkit.checker.stream.spill as spill
from tomkit.checker.properties import Options, properties, with_scope
from tomkit.checker.stream.driver import _Run, check_stream
from tomkit.checker.stream.narrow import narrows
from tomkit.traces.writer import write_records

#: every property the cut serves: the order, view and end-of-trace ones, causal order
#: and both latencies; and their correct-process forms
ALL = [p for p in STREAMED if narrows([p])]
ALL_CORRECT = [with_scope(p, "correct") for p in ALL if p.scoped]
ORDER = [properties()[n] for n in ("integrity", "total-order-weak", "total-order-strong",
                                   "global-order", "prefix-order", "fifo-order")]
PROCS = ["p0", "p1", "p2", "p3"]
BOUND = Options(latency_bound=30.0)


@pytest.fixture
def tiny(monkeypatch):
    """A buffer of 6 held records, 8 records read at a time: every broken trace spills,
    and so is cut if it can be; a window that retires nothing (a test sets 4)."""
    monkeypatch.setattr(canon, "TRIM_AT", 1 << 14)
    monkeypatch.setattr(driver, "READ_ROWS", 8)
    monkeypatch.setattr(spill, "SPILL_ROWS", 6)


def decided(path, props, options: Options = Options()) -> _Run:
    """The single pass's report is the whole-trace checker's; the run (how it decided)."""
    run = _Run(props, options, False)
    agree([path], props, options, run=run)
    return run


def across(run: _Run) -> bool:
    """Decided on the cut, not on every held record, not whole."""
    return run.modes.get("narrowed") == 1 and not run.whole


def violated(run: _Run) -> set[str]:
    return {k.split("@")[0] for k, v in run.report.outcomes[0].verdicts.items()
            if str(v) == "violated"}


def run_of(n: int = 40, at: int = 3, views: int = 0, silent: int | None = None,
           late: int | None = None, late_sends: bool = False, stall: int | None = None,
           timed: bool = False, first_view: int = 0) -> list[dict]:
    """n messages, p0 and p1 sending in turn (each send's deps the message before, with
    ``timed``, and every record a time: its place in the run), p0 to p3 delivering each
    right away, p1 delivering messages ``at`` and ``at`` + 1 swapped (the breach).
    ``views``: p0 to p3 install a view every ``views`` messages from message
    ``first_view`` on (0: no view). ``silent``: p4, which installs no view, delivers
    messages 0 to ``silent`` and nothing after (it stops inside the breach, before the
    first view: a delivery of it in no view where the others deliver in one would be a
    breach of its own). ``late``: p4 first appears at message
    ``late``, delivering from there on (``late_sends``: sending every third message from
    there on instead, delivering nothing). ``stall``: p3 stops after message ``stall``,
    the views after it leaving p3 out (a member stalled in its view)."""
    local: dict[str, list[dict]] = {p: [] for p in [*PROCS, "p4"]}
    members = list(PROCS)
    for i in range(n):
        if views and i >= first_view and (i - first_view) % views == 0:
            if stall is not None and i > stall:
                members = PROCS[:3]
            for p in members:
                local[p].append({"process": p, "kind": "view",
                                 "view": str((i - first_view) // views + 1),
                                 "members": list(members)})
        s = PROCS[i % 2]
        if late_sends and late is not None and i >= late and i % 3 == 0:
            s = "p4"
        send = {"process": s, "kind": "send", "msg": f"m{i}"}
        if timed:
            send["deps"] = [f"m{i - 1}"] if i else []
        local[s].append(send)
        deliverers = [p for p in members if not (p == "p3" and stall is not None and i > stall)]
        if silent is not None and i <= silent:
            deliverers.append("p4")
        if late is not None and i >= late and not late_sends:
            deliverers.append("p4")
        for p in deliverers:
            local[p].append({"process": p, "kind": "deliver", "msg": f"m{i}"})
    d = [r for r in local["p1"] if r["kind"] == "deliver"]
    d[at]["msg"], d[at + 1]["msg"] = d[at + 1]["msg"], d[at]["msg"]
    out = []
    for i in range(max(len(r) for r in local.values())):  # round by round
        for p in local:
            if i < len(local[p]):
                out.append(dict(local[p][i], trace="t"))
    if timed:
        out = [dict(r, time=float(k), real_time=float(k)) for k, r in enumerate(out)]
    return out


def written(tmp_path, recs: list[dict], grouped: bool = False):
    """The records in a file, interleaved as made or grouped by process."""
    path = tmp_path / ("grouped.jsonl" if grouped else "interleaved.jsonl")
    write_records(path, by_process(recs) if grouped else recs)
    return path


#: each test reads both layouts and both scopes between its cases, one check a case, so
#: that the file stays cheap (the oracle's exact checks of a view trace are Python)
CORRECT = Options(scope="correct")


# ---- a silent process with views ---------------------------------------------------------


@pytest.mark.parametrize("timed,silent,grouped", [(False, 2, False), (True, 5, True),
                                                  (False, 5, False)])
def test_a_silent_process_with_views(timed, silent, grouped, tiny, tmp_path):
    """p4 installs no view and stops inside the breach (cutowed.py, "A process silent in
    the tail", with views): it is told to the tail's summary and the cut is taken, every
    property asked (with deps and a bound when timed; in the correct-process scope
    grouped by process; ``--liveness`` alone), the whole-trace checker's report; member
    liveness violated by p4's silence (a member from the start owes every correct
    sender's message; with ``silent`` 5, p4 delivers every message of the cut, and only
    the tail's summary sees it)."""
    path = written(tmp_path, run_of(views=20, silent=silent, timed=timed, first_view=10),
                   grouped)
    options = Options(scope="correct" if grouped else "uniform",
                      latency_bound=BOUND.latency_bound if timed else None)
    if silent == 5 and not grouped:
        assert across(decided(path, owed.LIVENESS))
        return
    run = decided(path, ALL_CORRECT if grouped else ALL, options)
    assert across(run), run.modes
    if not grouped:  # member liveness has no correct-process form
        assert "member-liveness" in violated(run)


def test_a_silent_process_in_no_view_while_the_others_have_views(tiny, tmp_path):
    """The same with the views from the run's start: p4 delivers in "no view" what the
    others deliver in view 1 (same-view delivery breaks at once). p4 installed no view,
    so a continuing process's deliveries past its cut, all made in views, restricted to
    p4's views are none: prefix order's part of condition 5v does not pair them
    (viewcut.py's ``_prefix``), and the cut is taken."""
    run = decided(written(tmp_path, run_of(60, views=20, silent=2, timed=True)), ALL, BOUND)
    assert across(run), run.modes
    assert {"same-view-delivery", "member-liveness"} <= violated(run)


def test_a_silent_process_with_views_after_positions_retired(tiny, monkeypatch, tmp_path):
    """A window of 4 positions: positions retire before the breach (each process's retired
    prefix carried over, viewheld.py), the first view installed before it, p4 silent
    from the tail's start: decided on the cut with deps and a bound, interleaved
    (grouped by process, p4's records come after the others'
    retired: a break after a lag goes whole, as before)."""
    monkeypatch.setattr(canon, "TRIM_AT", 4)
    path = tmp_path / "t.jsonl"
    write_records(path, run_of(views=20, silent=8, at=12, first_view=10, timed=True))
    run = decided(path, ALL, BOUND)
    assert across(run) and run.modes["views carried"] == 1, run.modes
    assert "member-liveness" in violated(run)


def test_a_process_stalled_in_its_view(tiny, tmp_path):
    """A process with no record after its view install but those of the breach (p3 stops
    inside it and the views after leave it out): its membership records are on both
    sides, so the tail judges it (stalled in its view, owing the view's rest): decided on
    the cut, agreement violated, both layouts and scopes."""
    recs = run_of(views=20, stall=2)
    run = decided(written(tmp_path, recs), ALL)
    assert across(run), run.modes
    assert "agreement" in violated(run)
    assert across(decided(written(tmp_path, recs, True), ALL_CORRECT, CORRECT))


def test_without_the_silent_process_the_view_cut_would_differ(tiny, monkeypatch, tmp_path):
    """The silent process bears weight with views: left out of the tail's summary
    (condition A read on the tail's own processes), the cut's report differs."""
    path = tmp_path / "t.jsonl"
    # p4 delivers every message of the cut: only the tail's summary sees what it owes
    write_records(path, run_of(views=20, silent=5, first_view=10))
    with monkeypatch.context() as m:
        m.setattr(narrow, "decide", without_silent_processes(narrow.decide))
        with pytest.raises(AssertionError):
            decided(path, ALL)
    assert across(decided(path, ALL))


# ---- a process that first appears in the tail -------------------------------------------


@pytest.mark.parametrize("sends,timed,grouped,scope", [(False, False, False, "uniform"),
                                                       (False, True, True, "uniform"),
                                                       (True, False, True, "correct"),
                                                       (True, True, False, "correct")])
def test_a_process_first_seen_in_the_tail(sends, timed, grouped, scope, tiny, tmp_path):
    """p4 first appears at message 20, long after the breach, delivering from there on (a
    late joiner without views) or sending (a sender that starts late): the cut is taken
    at the count that holds p4's first message (narrow.py's ``Heads``), so that the exact
    checks judge p4 on M (prefix order: its first delivery against the others'; what it
    owes of M), every property asked (with deps and a bound when timed), both scopes and
    layouts."""
    path = written(tmp_path, run_of(late=20, late_sends=sends, timed=timed), grouped)
    options = Options(scope=scope, latency_bound=BOUND.latency_bound if timed else None)
    run = decided(path, ALL_CORRECT if scope == "correct" else ALL, options)
    assert across(run), run.modes
    if not sends:
        assert {"agreement", "prefix-order", "fifo-order"} <= violated(run)


def test_a_process_first_seen_in_the_tail_after_positions_retired(tiny, monkeypatch,
                                                                  tmp_path):
    """A window of 4 positions, interleaved: the positions before the breach retired (the
    retired part of the end-of-trace properties decided from each process's retired
    deliveries: prefixowed.py), p4 first seen after them: decided on the cut."""
    monkeypatch.setattr(canon, "TRIM_AT", 4)
    path = tmp_path / "t.jsonl"
    write_records(path, run_of(late=30, at=8))
    assert across(decided(path, owed.LIVENESS))


def test_without_the_late_process_s_count_the_cut_holds_the_run(tiny, monkeypatch,
                                                                tmp_path):
    """The candidate bears weight: without it (``Heads`` finding no count) no cut short of
    p4's own deliveries holds a record of p4 (every tighter one is refused: prefix
    order's condition 5, condition A), so the cut taken holds most of the run (the
    messages p4 delivered among its first n, n past the last count where p4 differs from
    the others: its own deliveries' count); with it, the cut holds the messages up to
    p4's first. Both give the whole-trace checker's report."""
    path = tmp_path / "t.jsonl"
    recs = run_of(180, late=45)
    write_records(path, recs)
    read = records_read(monkeypatch)
    props = ORDER + owed.LIVENESS[4:]
    cut = decided(path, props)
    assert across(cut)
    with monkeypatch.context() as m:
        m.setattr(narrow.Heads, "reached", lambda self, tally: 0)
        refused = _Run(props, Options(), False)
        check_stream([path], props, run=refused)  # the same report as the cut's, below
    assert outcomes(refused.report) == outcomes(cut.report)
    assert read[0] < 0.3 * len(recs) and read[1] > 2 * read[0], (read, len(recs))


# ---- breaches among the membership records ------------------------------------------------


def membership_breach(fault: str, view: int = 1, after: int = 0) -> list[dict]:
    """A view run (a view every 20 messages) with p1's view record ``view`` (0: its
    first, around the swap at message 3) broken: installed again after ``after`` more
    records of p1 ("twice"), views out of their order (p1 installs view 3 before view
    2, the others' order), or a fork (p1 installs a view "2b" where the others install
    "2")."""
    recs = run_of(60, views=20)
    vs = [i for i, r in enumerate(recs) if r["kind"] == "view" and r["process"] == "p1"]
    if fault == "twice":
        k = vs[view]
        mine = [j for j in range(k + 1, len(recs)) if recs[j]["process"] == "p1"]
        recs.insert(mine[after] if after else k + 1, dict(recs[k]))
    elif fault == "order":
        recs[vs[1]]["view"], recs[vs[2]]["view"] = recs[vs[2]]["view"], recs[vs[1]]["view"]
    else:  # a fork
        recs[vs[1]] = dict(recs[vs[1]], view="2b")
    return recs


@pytest.mark.parametrize("view,after,grouped", [(0, 0, False), (0, 4, True), (1, 0, True)])
def test_a_view_installed_again_at_once_is_cut(view, after, grouped, tiny, tmp_path):
    """p1 installs the view it is in again, having delivered and sent nothing of the tail
    since (views.py: read as one install when the tail leaves view agreement to the
    cut's records): strong order's runs, same-view and sending-view delivery, the
    membership rules and the end-of-trace properties read installed views and each
    record's view, the same with the second install or without; virtual synchrony reads
    an epoch (V, V) of p1 alone, and p1's epoch after it lacks only what p1 delivered
    between the installs, messages of the cut (``after`` 4: p1's deliveries of the
    breach's messages; virtual synchrony violated on both sides). View agreement and
    view sequence read the breach on the membership records, on both sides. Decided on
    the cut, both layouts and scopes, every property asked."""
    path = written(tmp_path, membership_breach("twice", view, after), grouped)
    run = decided(path, ALL)
    assert across(run), run.modes
    assert {"view-agreement", "view-sequence"} <= violated(run)
    assert ("virtual-synchrony" in violated(run)) == bool(after)
    if view:
        assert across(decided(path, ALL_CORRECT, CORRECT))


@pytest.mark.parametrize("grouped", [False, True])
def test_a_smaller_numeric_id_is_cut(grouped, tiny, tmp_path):
    """Every process names its second view "9" (then "3": a smaller numeric id after a
    greater one). Only view agreement reads numeric ids (its decreasing-view-id clause),
    on view records, which are on both sides; the views keep one order (by first
    appearance) otherwise, so the tail leaves the numeric order unjudged and keeps its
    picture: decided on the cut, every property asked, the end-of-trace ones too."""
    recs = run_of(60, views=20)
    for r in recs:
        if r["kind"] == "view" and r["view"] == "2":
            r["view"] = "9"
    run = decided(written(tmp_path, recs, grouped), ALL)
    assert across(run), run.modes
    res = run.report.outcomes[0].results["view-agreement"]
    assert "a smaller id" in res.explanation


@pytest.mark.parametrize("fault,after,grouped", [("twice", 6, False), ("order", 0, True),
                                                 ("fork", 0, False)])
def test_breaches_among_the_membership_records_keep_the_held_path(fault, after, grouped,
                                                                  tiny, tmp_path):
    """A view installed again after p1 delivered tail messages in it (its epoch after the
    second install lacks them: virtual synchrony's first violation may name a tail
    message, which the cut's records do not hold), views out of their one order, a fork:
    the tail, which replays every membership record, has no one order of views to lay
    its sequence out by (cutdeps.py, "A breach among the membership records"), so no cut
    is taken and the held records decide, with the whole-trace checker's report, both
    layouts."""
    run = decided(written(tmp_path, membership_breach(fault, 1, after), grouped), ALL)
    assert "narrowed" not in run.modes and not run.whole, run.modes
    assert violated(run) & {"view-sequence", "view-agreement", "virtual-synchrony",
                            "same-view-delivery", "sending-view-delivery"}


# ---- Hypothesis, and the records read as the run grows ------------------------------------


@st.composite
def refusal_runs(draw) -> list[dict]:
    """A run of 30 to 50 messages broken early, with or without views (the first one
    after p4's silence), with p4 silent inside the breach, first seen later, or stalled
    p3, at random places."""
    n = draw(st.integers(30, 50))
    at = draw(st.integers(1, 5))
    views = draw(st.sampled_from([0, 10, 20]))
    first = draw(st.integers(at + 2, 12)) if views else 0
    case = draw(st.sampled_from(["silent", "late", "late-sends", "stall"]))
    kw: dict = {}
    if case == "silent":
        kw["silent"] = draw(st.integers(0, at))
    elif case.startswith("late"):
        kw["late"] = draw(st.integers(at + 3, n - 5))
        kw["late_sends"] = case == "late-sends"
    elif views:
        kw["stall"] = draw(st.integers(0, at + 1))
    return run_of(n, at, views, timed=draw(st.booleans()), first_view=first, **kw)


@given(refusal_runs(), st.booleans(), st.sampled_from([4, 1 << 14]))
@settings(max_examples=5, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
def test_hypothesis_runs_agree(tmp_path_factory, records, grouped, trim):
    with small_windows(trim, 8, 6):
        path = tmp_path_factory.mktemp("h") / "t.jsonl"
        write_records(path, by_process(records) if grouped else records)
        decided(path, ALL, BOUND)


@pytest.mark.parametrize("case", ["silent", "late"])
def test_the_records_read_stay_flat(case, monkeypatch, tmp_path):
    """A run broken early and the same run four times as long, with p4 silent (one view,
    installed after p4's silence: the membership records do not grow with the run) or
    first seen at message 60 (no views): both are held (spilled) and cut, and the exact
    checks read as many records for both."""
    monkeypatch.setattr(canon, "TRIM_AT", 1 << 14)
    monkeypatch.setattr(driver, "READ_ROWS", 200)
    monkeypatch.setattr(spill, "SPILL_ROWS", 400)
    read = records_read(monkeypatch)
    sizes = []
    for scale in (1, 4):
        n = 250 * scale
        recs = run_of(n, 20, views=1000, silent=12, first_view=30) if case == "silent" else \
            run_of(n, 20, late=60)
        path = tmp_path / f"t{scale}.jsonl"
        write_records(path, recs)
        if scale == 1:
            run = decided(path, owed.LIVENESS)
        else:  # the single pass alone: the oracle's report on the short run suffices
            run = _Run(owed.LIVENESS, Options(), False)
            check_stream([path], owed.LIVENESS, run=run)
        assert across(run), run.modes
        assert run.peak_held > len(recs) // 2
        sizes.append((len(recs), read[-1]))
    (n0, r0), (n1, r1) = sizes
    assert n1 > 3.5 * n0 and r1 == r0, sizes
