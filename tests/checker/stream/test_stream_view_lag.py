"""A trace with views whose records come grouped by process, or with a process that lags
(checker/stream/canon.py, views.py, retired.py): a process not seen yet or behind the
retired prefix does not hold the low watermark, its deliveries there read back from disk
and judged in the range of its view; the positions waiting for their sends retire too,
their sending views and FIFO within views checked as the sends come. Bounded memory on
clean traces, and the whole-trace checker's report (tests/checker/stream/stream_oracle.py)
on faults planted in the part that lagged or waited, the generators' view faults, the
real systems' fixtures regrouped by process, and Hypothesis-made view runs."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from stream_oracle import CORRECT, STREAMED, agree, by_process, small_windows
from test_stream_views import REAL, read_gz, view_runs

import tomkit.checker.stream.canon as canon
import tomkit.checker.stream.driver as driver
from tomkit.checker.check_run import plan
from tomkit.checker.properties import Options
from tomkit.checker.stream.driver import _Run
from tomkit.traces.generate import FAULTS, faulty_trace
from tomkit.traces.writer import write_records

DEFAULT = plan(Options()).properties
FAULT_KINDS = ["swap", "gap", "repeat", "next-view", "fifo", "twice", "unsent"]


def view_run(n_views: int = 6, per_view: int = 6, fault: str | None = None,
             at: int = 0, one_sender: bool = False) -> list[tuple[int, dict]]:
    """A view-synchronous run as (time, record), every member sending in turn and every
    member delivering each message right after its send: p0 to p3 from the start, p4
    joins at the second view (a late joiner), p3 crashes half way through the fourth,
    p2 leaves after the fifth. ``fault`` planted at message ``at``: p1 swaps its
    deliveries of it and the next (``swap``), skips it (``gap``) or delivers it twice
    (``repeat``); every member delivers it after installing the next view (``next-view``:
    the last message of its view); the first sender of its view sends its first two
    messages of the view in the other order (``fifo``); p4 sends it again at the end
    (``twice``); nobody sends it (``unsent``). ``one_sender``: p0 sends every message."""
    members = ["p0", "p1", "p2", "p3"]
    out: list[tuple[int, dict]] = []
    clock = [0]

    def rec(p: str, kind: str, **kw) -> dict:
        r = {"trace": "t", "process": p, "kind": kind, **kw}
        out.append((clock[0], r))
        clock[0] += 1
        return r

    k = 0
    moved: list[str] = []  # next-view: the message delivered after the next view record
    for v in range(n_views):
        if v == 1:
            rec("p4", "join")
            members = members + ["p4"]
        if v == 5:
            rec("p2", "leave")
            members = [p for p in members if p != "p2"]
        for p in members:
            rec(p, "view", view=str(v + 1), members=list(members))
        for m in moved:
            for p in members:
                rec(p, "deliver", msg=m)
        moved = []
        sends: list[dict] = []
        for j in range(per_view):
            if v == 3 and j == per_view // 2:
                rec("p3", "crash")
                members = [p for p in members if p != "p3"]
            s = "p0" if one_sender else members[k % len(members)]
            m = f"m{k}"
            k += 1
            if not (fault == "unsent" and k - 1 == at):
                sends.append(rec(s, "send", msg=m))
            if fault == "next-view" and k - 1 == at:
                moved.append(m)
                continue
            for p in members:
                rec(p, "deliver", msg=m)
                if p == "p1" and fault == "repeat" and k - 1 == at:
                    rec(p, "deliver", msg=m)
        if fault == "fifo":  # a sender's two sends of this view in the other order
            mine = [r for r in sends if r["process"] == sends[0]["process"]]
            if len(mine) >= 2 and v == at // per_view:
                mine[0]["msg"], mine[1]["msg"] = mine[1]["msg"], mine[0]["msg"]
    if fault == "twice":
        rec("p4", "send", msg=f"m{at}")
    if fault in ("swap", "gap"):
        mine = [r for _, r in out if r["process"] == "p1" and r["kind"] == "deliver"]
        i = next(i for i, r in enumerate(mine) if r["msg"] == f"m{at}")
        if fault == "swap":
            mine[i]["msg"], mine[i + 1]["msg"] = mine[i + 1]["msg"], mine[i]["msg"]
        else:
            out[:] = [(t, r) for t, r in out if r is not mine[i]]
    return out


def layout(timed: list[tuple[int, dict]], how: str) -> list[dict]:
    """The records interleaved as made, grouped by process, or with p1's records all
    later by half the run (``p1-late``: it comes when the others are views ahead)."""
    recs = [r for _, r in timed]
    if how == "grouped":
        return by_process(recs)
    if how == "p1-late":
        shift = len(timed) // 2
        order = sorted(range(len(timed)), key=lambda i: timed[i][0] +
                       (shift if timed[i][1]["process"] == "p1" else 0))
        return [recs[i] for i in order]
    return recs


@pytest.fixture
def small_window(monkeypatch):
    monkeypatch.setattr(canon, "TRIM_AT", 4)
    monkeypatch.setattr(driver, "READ_ROWS", 16)


def decided(path, props=STREAMED, options=Options()) -> _Run:
    run = _Run(props, options, False)
    agree([path], props, options, run=run)
    return run


@pytest.mark.parametrize("how", ["grouped", "p1-late", "interleaved"])
def test_a_clean_view_run_stays_in_the_pass(how, small_window, tmp_path):
    """Clean, with a late joiner, a crash, a leave and every member sending: in every
    layout decided in the pass, the lag read from disk and the sends awaited."""
    path = tmp_path / "t.jsonl"
    write_records(path, layout(view_run(), how))
    run = decided(path, DEFAULT)
    assert run.modes == {"fast": 1}, run.modes
    assert run.peak_window < 30, run.peak_window  # of 36 positions, 4 a window
    agree([path], CORRECT, Options(scope="correct"))


@pytest.mark.parametrize("fault", FAULT_KINDS)
@pytest.mark.parametrize("at", [3, 30])
def test_faults_where_a_process_lagged_or_sends_were_awaited(fault, at, small_window,
                                                             tmp_path):
    """Each fault early (message 3, its positions retired before p1, p2, ... come),
    grouped by process and with p1 late by half the run, and late grouped: the
    whole-trace checker's report, whatever decides it (a break after a lag or an awaited
    send goes whole)."""
    for how in ("grouped", "p1-late") if at == 3 else ("grouped",):
        path = tmp_path / f"{how}.jsonl"
        write_records(path, layout(view_run(fault=fault, at=at), how))
        decided(path)


@pytest.mark.parametrize("fault", ["swap", "repeat", "next-view", "fifo"])
def test_faults_interleaved(fault, small_window, tmp_path):
    path = tmp_path / "i.jsonl"
    write_records(path, layout(view_run(fault=fault, at=16), "interleaved"))
    # the properties a broken view trace is decided on from its held records (the
    # end-of-trace ones and latency may read it whole, test_stream_views_broken.py)
    run = decided(path, [p for p in STREAMED if not p.final() and p.held])
    # a send logged right after its deliveries is checked in the window, not awaited:
    # a break there is decided on the held records, not sent whole
    assert run.modes["slow"] == 1 and not run.whole, run.modes


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_the_generators_view_faults_grouped(fault, small_window, tmp_path):
    try:
        recs, _ = faulty_trace(f"t-{fault}", fault, seed=1, n_messages=24, views=True)
    except ValueError:  # the fault does not fit views
        return
    path = tmp_path / "g.jsonl"
    write_records(path, by_process(recs))
    decided(path, DEFAULT)


#: the real systems' fixtures that keep the picture (test_stream_views.py): every one of
#: them, regrouped by process, keeps it too
REAL_CLEAN = [p for p in REAL if p.name.rsplit("-s", 1)[0] in (
    "jgroups-sequencer-flush-kill-member", "jgroups-sequencer-flush-late-join",
    "jgroups-sequencer-flush", "jgroups-sequencer", "nats-kill-leader",
    "rabbitmq-kill-follower", "rabbitmq-kill-leader")]


def test_the_real_systems_fixtures_regrouped(monkeypatch, tmp_path):
    """The real systems' clean fixtures regrouped by process, with a window of 2
    positions: decided in the pass, in a window of a few positions, every member's lag
    read from disk and every sender's sends awaited (test_stream_views.py compares every
    fixture's report in both layouts with a window of 4)."""
    monkeypatch.setattr(canon, "TRIM_AT", 2)
    monkeypatch.setattr(driver, "READ_ROWS", 32)
    assert len(REAL_CLEAN) == 7
    for real in REAL_CLEAN:
        path = tmp_path / f"{real.name}.jsonl"
        write_records(path, by_process(read_gz(real)))
        run = decided(path, DEFAULT)
        assert run.modes == {"fast": 1}, real.name
        # before, 75 to 119 positions: what the first process delivered before the
        # others' records came
        assert run.peak_window < 40, (real.name, run.peak_window)


@given(view_runs(), st.sampled_from([2, 4]), st.data())
@settings(max_examples=10, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
def test_hypothesis_view_runs_lagging(tmp_path_factory, records, trim, data):
    """test_stream_views.py's view runs (swaps, gaps, deliveries in the next view, movers
    with less, crashes, joins, leaves, two member sets for one view, ...), grouped by
    process or with one process's records all last."""
    if not records:
        return
    procs = sorted({r["process"] for r in records})
    late = data.draw(st.sampled_from([None] + procs))
    recs = by_process(records) if late is None else \
        [r for r in records if r["process"] != late] + \
        [r for r in records if r["process"] == late]
    with small_windows(trim, 4):
        path = tmp_path_factory.mktemp("v") / "t.jsonl"
        write_records(path, recs)
        agree([path])


def test_a_grouped_view_run_is_held_in_bounded_memory(monkeypatch, tmp_path):
    """A clean view run grouped by process, every member sending, four times as long:
    the records and positions held at most stay flat (the view, join, leave and crash
    records are held for the trace's life, and their count is the same); as before (the
    lag and the awaited sends off with views) they grow with the run."""
    monkeypatch.setattr(canon, "TRIM_AT", 32)
    monkeypatch.setattr(driver, "READ_ROWS", 256)
    peaks = {}
    for lag in (True, False):
        monkeypatch.setattr(canon, "VIEW_LAG", lag)
        for per_view in (60, 240):
            path = tmp_path / f"g{per_view}.jsonl"
            write_records(path, by_process([r for _, r in view_run(6, per_view)]))
            run = _Run(DEFAULT, Options(), False)
            report = driver.check_stream([path], DEFAULT, run=run)
            assert report.exit_code() == 0 and run.modes == {"fast": 1}
            peaks[lag, per_view] = run.peak_held, run.peak_window
    # 360 and 1,440 messages (1,919 and 7,589 records): a batch and a few windows,
    # whatever the length; before, every position and most records
    for n in (60, 240):
        assert peaks[True, n][0] < 600 and peaks[True, n][1] < 4 * 32, peaks
    assert peaks[False, 60][1] == 360 and peaks[False, 240][1] == 1_440, peaks
    assert peaks[False, 240][0] > 4_000, peaks


@pytest.mark.parametrize("lag", [True, False])
def test_watch_with_known_processes_reads_a_late_log_from_disk(lag, monkeypatch, tmp_path):
    """As tomkit watch --mapping runs it (every process known before its log has a line,
    its records held whole should the trace go whole): a view run whose logs come one
    after the other is judged with the lag read from disk, in a few windows; as before
    (the lag off with views), the processes not come yet held every position. p0 sends
    every message, so no send comes late (a slow sender: test_watch_late_sends.py)."""
    monkeypatch.setattr(canon, "TRIM_AT", 8)
    monkeypatch.setattr(driver, "READ_ROWS", 32)
    monkeypatch.setattr(canon, "VIEW_LAG", lag)
    path = tmp_path / "g.jsonl"
    write_records(path, by_process([r for _, r in view_run(6, 20, one_sender=True)]))
    run = _Run(DEFAULT, Options(), False, keep_whole=True,
               expect=("p0", "p1", "p2", "p3", "p4"))
    agree([path], DEFAULT, run=run)
    assert run.modes == {"fast": 1}, run.modes
    if lag:
        assert run.peak_window < 40, run.peak_window
    else:
        assert run.peak_window == 120, run.peak_window
