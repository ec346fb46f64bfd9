"""The cut after a breach (checker/stream/narrow.py): a broken trace whose held records
spilled is checked on the records around its breach only, with the whole-trace
checker's verdicts, witnesses and sentences: planted faults of every kind at the start,
middle and end of a run, in both layouts, the generators' faults, Hypothesis-made runs;
the cut is taken where the rest keeps the picture (and not where it does not), and the
exact checks then read a small part of the trace."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from budget import SEEDS, examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from stream_oracle import STREAMED, agree, by_process, merge, records_read, small_windows

import tomkit.checker.stream.canon as canon
import tomkit.checker.stream.driver as driver
import tomkit.checker.stream.narrow as narrow
import tomkit.checker.stream.reduced as reduced
import tomkit.checker.stream.spill as spill
from tomkit.checker.properties import Options, with_scope
from tomkit.checker.stream.driver import _Run
from tomkit.checker.stream.narrow import Deliveries, narrows, shifts_agree
from tomkit.traces.generate import FAULTS, faulty_trace
from tomkit.traces.long_trace import long_trace_tables
from tomkit.traces.writer import TraceWriter, write_records

#: the properties the cut keeps on its own records (the end-of-trace ones with the
#: tail's clean pass: test_stream_cut_owed.py), and their correct-process forms
NARROW = [p for p in STREAMED if narrows([p]) and not p.final()]
NARROW_CORRECT = [with_scope(p, "correct") for p in NARROW if p.scoped]


@pytest.fixture
def tiny(monkeypatch):
    """A window of 4 positions, 8 records read at a time, a buffer of 6 held records:
    every broken trace spills, and so is cut if it can be."""
    monkeypatch.setattr(canon, "TRIM_AT", 4)
    monkeypatch.setattr(driver, "READ_ROWS", 8)
    monkeypatch.setattr(spill, "SPILL_ROWS", 6)


def run_records(n: int, fault: str | None, at: int, seed: int = 0) -> list[dict]:
    """A run of n messages (p0 and p1 send in turn, p0 to p3 deliver all in order) with
    one planted fault at message ``at``, its processes' records merged at random."""
    procs = ["p0", "p1", "p2", "p3"]
    senders = ["p0", "p1"]
    local: dict[str, list[dict]] = {p: [] for p in procs}
    for i in range(n):
        s = senders[i % 2]
        if not (fault == "unsent" and i == at):
            local[s].append({"process": s, "kind": "send", "msg": f"m{i}"})
        if fault == "double-send" and i == at:
            local["p2"].append({"process": "p2", "kind": "send", "msg": f"m{i}"})
        for p in procs:
            if fault == "gap" and p == "p3" and i == at:
                continue
            if fault == "crash" and p == "p3" and i >= at:
                continue
            local[p].append({"process": p, "kind": "deliver", "msg": f"m{i}"})
            if fault == "repeat" and p == "p2" and i == at + 1:
                local[p].append({"process": p, "kind": "deliver", "msg": f"m{at}"})
    if fault == "crash":
        local["p3"].append({"process": "p3", "kind": "crash"})
    if fault == "swap":  # p1's deliveries of m_at and m_at+1
        d = [r for r in local["p1"] if r["kind"] == "deliver"]
        d[at]["msg"], d[at + 1]["msg"] = d[at + 1]["msg"], d[at]["msg"]
    if fault == "fifo":  # p0 sends m_at+2 before m_at: everyone delivers out of send order
        s = [r for r in local["p0"] if r["kind"] == "send"]
        s[at // 2]["msg"], s[at // 2 + 1]["msg"] = s[at // 2 + 1]["msg"], s[at // 2]["msg"]
    rng = random.Random(seed)
    heads = {p: 0 for p in procs}
    out = []
    while any(heads[p] < len(local[p]) for p in procs):
        p = rng.choice([p for p in procs if heads[p] < len(local[p])])
        out.append(dict(local[p][heads[p]], trace="t"))
        heads[p] += 1
    return out


#: faults the rest of the run recovers from (every process delivers the same messages
#: again some time after, or all but one, shifted by a repeat or a gap, deliver them in
#: one order after their cuts), or an id sent twice by a process that sends nothing
#: else: the cut is taken when they come early
LOCAL = ["swap", "fifo"]
SHIFTED = ["repeat", "gap"]
TWICE = ["double-send"]
#: a message never sent (no canonical pass stays clean after it: each process waits for
#: its send) or a crash (the cut reads sends and deliveries only): all held records
OTHER = ["unsent", "crash"]


@pytest.mark.parametrize("fault", LOCAL + SHIFTED + TWICE + OTHER)
@pytest.mark.parametrize("where", ["start", "middle", "end"])
def test_planted_fault_at_start_middle_and_end(fault, where, tiny, tmp_path):
    n = 120
    at = {"start": 2, "middle": 60, "end": n - 4}[where]
    for seed in SEEDS:
        recs = run_records(n, fault, at, seed)
        for layout, rs in (("interleaved", recs), ("grouped", by_process(recs))):
            path = tmp_path / f"{fault}-{where}-{seed}-{layout}.jsonl"
            write_records(path, rs)
            run = _Run(NARROW, Options(), False)
            agree([path], NARROW, run=run)
            agree([path], NARROW_CORRECT, Options(scope="correct"))
            agree([path])  # every property: the cut does not apply, all held records
            if layout == "interleaved" and fault not in OTHER and where != "end" and \
                    seed == 0:
                assert run.modes == {"slow": 1, "narrowed": 1}, (seed, run.modes)
            if fault in OTHER:
                assert "narrowed" not in run.modes


def test_a_cut_is_not_taken_before_a_later_breach(tiny, monkeypatch, tmp_path):
    recs = run_records(120, "swap", 5)
    # a second breach late in the run: p2 delivers m100 twice
    i = next(k for k, r in enumerate(recs) if r["process"] == "p2" and r["msg"] == "m100"
             and r["kind"] == "deliver")
    recs.insert(i + 1, dict(recs[i]))
    path = tmp_path / "two.jsonl"
    write_records(path, recs)
    read = _reads(monkeypatch)
    run = _Run(NARROW, Options(), False)
    agree([path], NARROW, run=run)
    # the exact checks read the second breach (a cut, if any, lies after it)
    assert any(ids.count("m100") == 6 for ids in read)  # its send, five deliveries


def _reads(monkeypatch) -> list:
    """The ids the exact checks on held records read, a list per trace."""
    return records_read(monkeypatch, lambda pieces: [
        m for p in pieces for m in p.table.column("msg").to_pylist()])


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_every_generator_fault_both_layouts(fault, tiny, tmp_path):
    for seed in SEEDS:
        recs, _ = faulty_trace(f"t-{fault}-{seed}", fault, seed=seed, n_messages=40)
        for layout, rs in (("interleaved", recs), ("grouped", by_process(recs))):
            path = tmp_path / f"{seed}-{layout}.jsonl"
            write_records(path, rs)
            agree([path], NARROW)
            agree([path], NARROW_CORRECT, Options(scope="correct"))


@st.composite
def mostly_ordered(draw):
    """A run of one sequence, delivered whole by every process, with a few faults at
    random places: swaps, FIFO inversions, repeats (next to the first delivery or
    later), gaps, unsent and twice-sent ids."""
    procs = [f"p{i}" for i in range(draw(st.integers(2, 4)))]
    n = draw(st.integers(4, 40))
    order = [f"m{i}" for i in range(n)]
    senders = [draw(st.sampled_from(procs)) for _ in order]
    sends = {p: [m for m, s in zip(order, senders) if s == p] for p in procs}
    seqs = {p: list(order) for p in procs}
    for _ in range(draw(st.integers(0, 2))):
        f = draw(st.sampled_from(["swap", "fifo", "repeat", "gap", "unsent", "twice",
                                  "late-repeat"]))
        p = draw(st.sampled_from(procs))
        i = draw(st.integers(0, n - 2))
        if f == "swap":
            seqs[p][i], seqs[p][i + 1] = seqs[p][i + 1], seqs[p][i]
        elif f == "fifo" and len(sends[p]) >= 2:
            j = draw(st.integers(0, len(sends[p]) - 2))
            sends[p][j], sends[p][j + 1] = sends[p][j + 1], sends[p][j]
        elif f == "repeat":
            seqs[p].insert(i + 1, seqs[p][i])
        elif f == "late-repeat":  # a message delivered again some deliveries later
            seqs[p].insert(draw(st.integers(i + 1, len(seqs[p]))), seqs[p][i])
        elif f == "gap":
            del seqs[p][i]
        elif f == "unsent":
            for s in procs:
                sends[s] = [m for m in sends[s] if m != order[i]]
        elif f == "twice":
            sends[p].append(order[i])
    local: dict[str, list[dict]] = {}
    for p in procs:
        # a process sends each of its messages before it delivers it (or at once)
        mine, recs = list(sends[p]), []
        for m in seqs[p]:
            while mine and mine[0] != m and draw(st.booleans()):
                recs.append({"process": p, "kind": "send", "msg": mine.pop(0)})
            if m in mine[:1]:
                recs.append({"process": p, "kind": "send", "msg": mine.pop(0)})
            recs.append({"process": p, "kind": "deliver", "msg": m})
        recs += [{"process": p, "kind": "send", "msg": m} for m in mine]
        local[p] = recs
    return merge(draw, local)


@given(mostly_ordered(), st.sampled_from([2, 4]), st.booleans(), st.sampled_from([3, 8]))
@settings(max_examples=examples(50), deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
def test_hypothesis_runs_agree_when_cut(tmp_path_factory, records, trim, grouped, rows):
    with small_windows(trim, rows, 4):
        path = tmp_path_factory.mktemp("n") / "t.jsonl"
        write_records(path, by_process(records) if grouped else records)
        agree([path], NARROW)
        agree([path], NARROW_CORRECT, Options(scope="correct"))


@pytest.mark.parametrize("breach", ["swap", "repeat"])
def test_an_early_breach_is_checked_on_the_records_around_it(breach, monkeypatch, tmp_path):
    """A long run broken at its start (two deliveries swapped, or one repeated: p0 is
    then shifted by one for the rest of the run): the exact checks read a few windows'
    records, not the run's, and the cut was found while the run was read (the rest
    checked by a second canonical pass as it came, never read back from the spill)."""
    monkeypatch.setattr(canon, "TRIM_AT", 256)
    monkeypatch.setattr(driver, "READ_ROWS", 2000)
    monkeypatch.setattr(spill, "SPILL_ROWS", 5000)
    path = tmp_path / "early.parquet"
    tables = long_trace_tables(20_000, n_processes=4, seed=3, block=500,
                               swap_at=100 if breach == "swap" else None)
    with TraceWriter(path) as w:
        for i, t in enumerate(tables):
            if breach == "repeat" and i == 0:  # p0's 100th delivery, twice
                mine = np.flatnonzero(np.asarray(pc.and_(
                    pc.equal(t.column("process"), "p0"), pc.equal(t.column("kind"), "deliver"))))
                r = int(mine[100])
                t = t.take(pa.array(np.insert(np.arange(t.num_rows), r + 1, r)))
            w.write_table(t)
    tried, followed = [], []
    cuts, narrowed = narrow._cuts, reduced.narrowed
    monkeypatch.setattr(narrow, "_cuts", lambda st, *a: tried.append(1) or cuts(st, *a))
    monkeypatch.setattr(reduced, "narrowed",
                        lambda st, *a: followed.append(st.follower is not None) or
                        narrowed(st, *a))
    read = records_read(monkeypatch)
    run = _Run(NARROW, Options(), False)
    agree([path], NARROW, run=run)
    assert run.modes == {"slow": 1, "narrowed": 1}
    assert run.peak_held > 90_000  # the whole run was held (spilled) ...
    assert read and max(read) < 5_000  # ... and its exact checks read a few windows
    # ... of a cut chosen when it first spilled, not read back from the spill
    assert followed == [True] and len(tried) == 1


def test_a_process_behind_the_retired_prefix_that_delivers_after_the_break(monkeypatch,
                                                                          tmp_path):
    """p1 is seen by its sends only while p0's deliveries retire the prefix; the trace
    then breaks, and p1 delivers the retired positions: the held records cannot stand
    for them, so the trace goes whole (it was once judged on them: p1's deliveries of
    retired messages read as unsent)."""
    monkeypatch.setattr(canon, "TRIM_AT", 2)
    monkeypatch.setattr(driver, "READ_ROWS", 4)
    recs = [{"process": "p0", "kind": "send", "msg": f"m{i}", "deps": ["m0"] if i else []}
            for i in range(11)]
    recs.append({"process": "p0", "kind": "send", "msg": "m12", "deps": []})
    recs += [{"process": "p0", "kind": "deliver", "msg": f"m{i}"} for i in range(14)]
    recs += [{"process": "p1", "kind": "send", "msg": "m11", "deps": ["m11"]},
             {"process": "p1", "kind": "send", "msg": "m13", "deps": []}]
    recs += [{"process": "p1", "kind": "deliver", "msg": f"m{i}"} for i in range(14)]
    path = tmp_path / "t.jsonl"
    write_records(path, [dict(r, trace="t") for r in recs])
    run = _Run(STREAMED, Options(), False)
    agree([path], run=run)
    assert run.modes == {"whole": 1}


def _tiny(monkeypatch, trim: int, rows: int) -> None:
    monkeypatch.setattr(canon, "TRIM_AT", trim)
    monkeypatch.setattr(driver, "READ_ROWS", rows)
    monkeypatch.setattr(spill, "SPILL_ROWS", 4)


def _write(path, recs) -> None:
    write_records(path, [{"trace": "t", "process": p, "kind": k, "msg": m}
                         for p, k, m in recs])


def test_an_id_sent_twice_by_two_processes_is_cut_after_fifo_breaks(monkeypatch, tmp_path):
    """Found by the Hypothesis test above: p0 and p1 both send m0, which the first
    process delivers before p1's sends are read. FIFO's exact check takes p0's send as
    m0's and ranks p1's later messages against p1's own send of m0: p0's delivery of m1
    breaks it. A cut is exact when that delivery lies before it (narrow.py, condition
    5): the cut was refused for any id sent twice, and is now taken here."""
    _tiny(monkeypatch, 2, 3)
    recs = [("p0", "send", "m0")] + [("p0", "deliver", f"m{i}") for i in range(40)]
    for i in range(40):
        recs += [("p1", "send", f"m{i}"), ("p1", "deliver", f"m{i}")]
    _write(tmp_path / "t.jsonl", recs)
    run = _Run(NARROW, Options(), False)
    agree([tmp_path / "t.jsonl"], NARROW, run=run)
    assert run.modes == {"slow": 1, "narrowed": 1}, run.modes


def _p1_resends_m0(monkeypatch, tmp_path, first: list[str], later: int) -> list:
    """p0 sends m0 to m5, p1 sends ``first`` (m0 among them: p0's m0 again), then m{later}
    to m39; both processes deliver m0 to m39 in order. The ids the cut's exact checks
    read, after checking the verdicts against the whole trace's."""
    _tiny(monkeypatch, 2, 3)
    recs = [("p0", "send", f"m{i}") for i in range(6)] + [("p1", "send", m) for m in first]
    for i in range(40):
        if i >= later:
            recs.append(("p1", "send", f"m{i}"))
        recs += [("p0", "deliver", f"m{i}"), ("p1", "deliver", f"m{i}")]
    _write(tmp_path / "t.jsonl", recs)
    read = _reads(monkeypatch)
    agree([tmp_path / "t.jsonl"], NARROW, run=_Run(NARROW, Options(), False))
    return read


def test_an_id_sent_twice_is_not_cut_before_the_fifo_breach_it_makes(monkeypatch, tmp_path):
    """p1 sends m6, then p0's m0 again: the reused m0 is in p1's order too, after m6
    (fifo.py), so FIFO breaks at each process's delivery of m0, with m6 delivered only
    later: a cut holding m0 but not m6 would find FIFO holding; the cut, if any, lies
    after m6."""
    read = _p1_resends_m0(monkeypatch, tmp_path, ["m6", "m0"], 7)
    assert read and all("m6" in ids for ids in read)


def test_an_id_sent_again_by_another_process_is_in_its_order_too(monkeypatch, tmp_path):
    """p1 sends p0's m0 again, then m6 on, all delivered in that order: m0 holds its place
    in p1's order as in p0's (fifo.py), so FIFO holds and the cut may hold m0 alone."""
    read = _p1_resends_m0(monkeypatch, tmp_path, ["m0"], 6)
    assert read == [["m0"] * 4]  # m0's four records: its two sends, its two deliveries


def test_a_retired_id_named_after_the_break_sends_the_trace_whole(monkeypatch, tmp_path):
    """Found by the Hypothesis test above: m0 retired, the picture broken by a repeat,
    then p1 sends m0 again. The held records lack m0's first send (integrity's count of
    violations would be one short), so the trace goes whole, as in FAST."""
    _tiny(monkeypatch, 2, 8)
    recs = [("p0", "send", f"m{i}") for i in range(8)]
    for i in range(4):
        recs += [("p0", "deliver", f"m{i}"), ("p1", "deliver", f"m{i}")]
    recs += [("p0", "deliver", "m3")]  # the break: a repeat
    for i in range(4, 8):
        recs += [("p0", "deliver", f"m{i}"), ("p1", "deliver", f"m{i}")]
    recs += [("p1", "send", "m0")]  # a retired id again, after the break
    _write(tmp_path / "t.jsonl", recs)
    run = _Run(NARROW, Options(), False)
    agree([tmp_path / "t.jsonl"], NARROW, run=run)
    assert run.modes == {"whole": 1}, run.modes


def _deliveries(seqs: list[list[int]], closed: list[bool], k: int) -> Deliveries:
    """The second pass's record of each process's deliveries of M (codes below k)."""
    d = Deliveries(k)
    d.grow(len(seqs))
    for q, (seq, c) in enumerate(zip(seqs, closed)):
        d.feed(q, np.array(seq + ([-1] if c else []), np.int64))
    return d


def test_shifted_cuts_where_strong_or_prefix_order_would_differ_after_them():
    """Condition 5's order parts, on what the second pass records: processes reaching
    the messages after their cuts from different last messages (strong order), or one
    cut on a prefix of another process's messages (prefix order), refuse the cut."""
    none = np.zeros(0, np.int64)
    names, sends = ["p0", "p1", "p2"], np.zeros(3, bool)

    def agree_(seqs, closed):
        return shifts_agree(_deliveries(seqs, closed, 4), 3, names, sends, none, none)

    assert agree_([[0, 1, 2, 3], [0, 1, 1, 2, 3], [0, 2, 3]], [True, True, True])
    assert not agree_([[0, 1, 2, 3], [0, 1, 3, 2], [0, 1, 2, 3]], [True, True, True])
    assert agree_([[0, 1, 3, 2], [0, 1, 2, 3], [0, 1]], [False, False, False])
    # p2 stops where p0's cut lies, then delivers what follows it: p0 and p1 deliver 3
    assert not agree_([[0, 1, 2], [0, 1, 2, 3], [0, 1]], [True, False, False])
    assert agree_([[0, 1, 2], [0, 1, 2], [0, 1]], [True, False, False])
    assert not agree_([[], [], []], [True, True, True])  # no delivery of M


def test_shifted_cuts_where_fifo_would_differ_after_them():
    """Condition 5's FIFO part: p1 lacks p0's message 1; its scan breaks before its cut
    only if it delivers a later message of p0 there, else p0's later messages (sent
    after the cut) would break it after."""
    names = ["p0", "p1"]
    sp = np.array([0, 0, 0], np.int64)  # p0 sends messages 0, 1, 2 of M
    sm = np.array([0, 1, 2], np.int64)

    def agree_(p1, later):
        d = _deliveries([[0, 1, 2, 3], p1], [True, True], 4)
        return shifts_agree(d, 2, names, np.array([later, False]), sp, sm)

    assert agree_([0, 2, 3], True)  # p1 delivers 2 without 1: its scan breaks there
    assert not agree_([0, 3], True)  # ... it does not: it would break after its cut
    assert agree_([0, 3], False)  # p0 sends nothing after the cut
    assert agree_([0, 1, 2, 3], True)
    # p0's message 1 sent again by p1, who sends nothing else: counted for p0 as well
    d = _deliveries([[0, 1, 2, 3], [0, 1, 2, 3]], [True, True], 4)
    assert shifts_agree(d, 2, names, np.array([True, False]), np.array([0, 0, 0, 1]),
                        np.array([0, 1, 2, 1]))
    # sent again by p0 itself: the repeat adds no place to its order (fifo.py), so p1,
    # which delivered 0, 1 and 2, has counted every place of p0's in M
    assert shifts_agree(d, 2, names, np.array([True, False]), np.array([0, 0, 0, 0]),
                        np.array([0, 1, 2, 1]))
    # ... and a place p1 lacks, with no later place of p0's delivered in M: not cut
    d = _deliveries([[0, 1, 2, 3], [0, 1, 3]], [True, True], 4)
    assert not shifts_agree(d, 2, names, np.array([True, False]), np.array([0, 0, 0, 0]),
                            np.array([0, 1, 2, 1]))
    # p1 sends p0's message 0 again, then 1 and 2, and later messages: 0 is a place of
    # p1's order too (not only of p0's, the first sender by name), so p1 lacking 2 with
    # no later place of p1's delivered in M would break FIFO after its cut: not cut
    d = _deliveries([[0, 1, 2, 3], [0, 1, 3]], [True, True], 4)
    assert not shifts_agree(d, 2, names, np.array([False, True]), np.array([0, 1, 1, 1]),
                            np.array([0, 0, 1, 2]))
