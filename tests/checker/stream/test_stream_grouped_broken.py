"""A broken trace whose file is grouped by process (checker/stream/regroup.py): the
single pass sent it whole when it broke after a process lagged behind the retired
prefix or after positions retired before their sends came; now it is read again with
its processes' records interleaved and decided by a fresh single pass, on its held
records or across the cut, with the whole-trace checker's report
(tests/checker/stream/stream_oracle.py). Planted faults early, in the middle and late,
with and without views, both scopes; the real systems' fixtures regrouped by process;
bounded memory on a long grouped run broken early."""

from __future__ import annotations

import pytest
from locations import DATA
from stream_oracle import CORRECT, STREAMED, agree, by_process, records_read, small_windows
from test_stream_view_lag import DEFAULT, layout, view_run
from test_stream_views import read_gz

import tomkit.checker.stream.regroup as regroup
import tomkit.checker.stream.spill as spill
from tomkit.checker.properties import Options
from tomkit.checker.stream.driver import _Run
from tomkit.traces.writer import write_records

#: the properties a broken trace is decided on from its held records or across the cut
#: (with views and a late joiner the end-of-trace ones read it whole, interleaved too:
#: test_stream_views_broken.py)
HELD = [p for p in STREAMED if not p.final() and p.held]
HELD_CORRECT = [p for p in CORRECT if not p.final() and p.held]


@pytest.fixture(autouse=True)
def regroup_small(monkeypatch):
    """Read every trace again, however short (the default leaves short ones whole)."""
    monkeypatch.setattr(regroup, "REGROUP_ROWS", 0)


def run_of(n: int, fault: str | None = None, at: int = 0) -> list[dict]:
    """p0 to p3 each send every fourth message and each delivers every message right
    after its send, interleaved as made; ``fault`` at message ``at``: p2 delivers it and
    the next in the other order (``swap``), p3 delivers it twice (``repeat``) or skips it
    (``gap``), its sender sends it and its next message in the other order (``fifo``),
    p3 sends it again right after (``twice``), nobody sends it (``unsent``)."""
    procs = ["p0", "p1", "p2", "p3"]
    out: list[dict] = []
    for i in range(n):
        s = procs[i % 4]
        if not (fault == "unsent" and i == at):
            out.append({"process": s, "kind": "send", "msg": f"m{i}"})
        if fault == "twice" and i == at:
            out.append({"process": "p3", "kind": "send", "msg": f"m{i}"})
        for p in procs:
            if not (fault == "gap" and p == "p3" and i == at):
                out.append({"process": p, "kind": "deliver", "msg": f"m{i}"})
            if fault == "repeat" and p == "p3" and i == at:
                out.append({"process": p, "kind": "deliver", "msg": f"m{i}"})
    if fault == "swap":
        d = [r for r in out if r["process"] == "p2" and r["kind"] == "deliver"]
        d[at]["msg"], d[at + 1]["msg"] = d[at + 1]["msg"], d[at]["msg"]
    if fault == "fifo":  # the sender of m_at sends it after its next message
        s = [r for r in out if r["process"] == procs[at % 4] and r["kind"] == "send"]
        j = at // 4
        s[j]["msg"], s[j + 1]["msg"] = s[j + 1]["msg"], s[j]["msg"]
    return [dict(r, trace="t") for r in out]


def decided(path, props, options=Options()) -> _Run:
    run = _Run(props, options, False)
    agree([path], props, options, run=run)
    return run


FAULTS = [(f, at) for f in ("swap", "repeat", "gap", "fifo", "twice", "unsent")
          for at in (4, 34)] + [("swap", 20), ("gap", 20), ("twice", 20)]


@pytest.mark.parametrize(("fault", "at"), FAULTS)
def test_faults_in_a_grouped_file_without_views(fault, at, tmp_path):
    """Each fault early and late (three of them in the middle too) in a grouped run
    (40 messages, a window of 16 positions read 64 records at a time: every process but
    p0 lags, every sender's sends but p0's are awaited), both scopes: read again
    interleaved and decided on the held records (not whole), as the same run
    interleaved is. A send that never comes, once two windows of positions lie after
    it, retired them unchecked: it goes whole, interleaved too."""
    path = tmp_path / "g.jsonl"
    write_records(path, by_process(run_of(40, fault, at)))
    with small_windows(16, 64):
        run = decided(path, HELD + HELD_CORRECT)
    if fault == "unsent" and at == 4:
        assert run.modes == {"whole": 1, "regrouped": 1} and run.whole, run.modes
    else:
        assert run.modes == {"slow": 1, "regrouped": 1} and not run.whole, run.modes


VIEW_FAULTS = [(f, at) for f in ("swap", "gap", "repeat", "next-view", "fifo", "twice",
                                  "unsent", "members") for at in (10, 30)] + \
    [("swap", 16), ("members", 16)]


@pytest.mark.parametrize(("fault", "at"), VIEW_FAULTS)
def test_faults_in_a_grouped_file_with_views(fault, at, tmp_path):
    """The same with views (test_stream_view_lag.py's run: a late joiner, a crash, a
    leave, every member sending; 6 views of 6 messages), a delivery in the next view and
    two member sets for one view besides, each early and late (the middle for two of
    them): decided on the held records with the retired views carried over
    (viewheld.py), not whole. Early (message 10 of 36), an id sent
    again long after it retired, and a send that never comes with two windows of
    positions after it, go whole (interleaved too: canon.py)."""
    path = tmp_path / "g.jsonl"
    recs = layout(view_run(fault=None if fault == "members" else fault, at=at), "grouped")
    if fault == "members":  # p0 installs the view of message ``at`` with p1 left out
        view = str(at // 6 + 1)
        row = next(r for r in recs if r["process"] == "p0" and r.get("view") == view)
        row["members"] = [m for m in row["members"] if m != "p1"]
    write_records(path, recs)
    with small_windows(8, 64):
        run = decided(path, HELD + HELD_CORRECT)
    if fault in ("twice", "unsent") and at == 10:
        assert run.whole and run.modes["regrouped"] == 1, run.modes
    else:
        assert not run.whole and run.modes["regrouped"] == 1, run.modes


#: real systems' fixtures that broke after a lag or an awaited send, regrouped by process
#: (before: whole); every one of the 23 is decided in the pass so regrouped with a window
#: of 2 (docs/stream.md, "A broken trace grouped by process"), these two here: one whose
#: members first install views of their own (Corosync), one with its leader partitioned
#: (NATS: strong and prefix order violated, the retired views carried over)
REAL_BROKEN = ["corosync-kill-member-s1", "nats-partition-leader-s3"]


def test_the_real_systems_fixtures_regrouped(tmp_path):
    for name in REAL_BROKEN:
        path = tmp_path / f"{name}.jsonl"
        write_records(path, by_process(read_gz(DATA / "real" / f"{name}.jsonl.gz")))
        with small_windows(2, 8):
            run = decided(path, DEFAULT)
        assert not run.whole and run.modes["regrouped"] == 1, (name, run.modes)


def test_a_long_grouped_run_broken_early_is_cut(monkeypatch, tmp_path):
    """Bounded memory: 1,000 messages grouped (5,250 records), p2's swap at message 20,
    a window of 64 positions and a buffer of 500 records: read again interleaved (each
    process's records through its stream's file), the records after the break spilled
    and cut (narrow.py), the exact checks on a few hundred records, the window a few
    windows wide; every file removed at the end."""
    monkeypatch.setattr(spill, "SPILL_ROWS", 500)
    monkeypatch.setattr(regroup, "SEGMENT_ROWS", 300)  # each process's stream on disk
    path = tmp_path / "g.jsonl"
    write_records(path, by_process(run_of(1000, "swap", 20)))
    read = records_read(monkeypatch)
    files = tmp_path / "spill"
    files.mkdir()
    with small_windows(64, 250):
        run = _Run(HELD, Options(), False, spill_dir=str(files))
        agree([path], HELD, run=run)
    assert run.modes == {"slow": 1, "narrowed": 1, "regrouped": 1}, run.modes
    assert max(read) < 1000 and run.peak_window < 400, (read, run.peak_window)
    assert not list(files.iterdir())  # the streams, spill and retired files removed
