"""A correct process behind the retired prefix (issue 27's case 1: one that stops short
in a file grouped by process, a leaver, a member stalled in an early view) and member
liveness's pairs in the retired prefix (case 2: a member from the start that skipped a
view, a late member without a ``join`` record, a rejoin behind the prefix): decided in
the single pass, their witnesses read back from the retired sequence on disk
(checker/stream/retired.py), against the whole-trace checker (stream_oracle.py): the
same verdicts, witnesses and sentences, agreement in both scopes, member liveness in
both readings, both layouts, windows of 2 to 4 positions; and which path decided."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from stream_oracle import agree, by_process, merge, small_windows
from test_stream_views import REAL

import tomkit.checker.stream.canon as canon
import tomkit.checker.stream.driver as driver
import tomkit.checker.stream.spill as spill
from tomkit.checker.properties import Options, properties, with_scope
from tomkit.checker.stream.driver import _Run, check_stream
from tomkit.checker.stream.retired import RetiredSequence
from tomkit.traces.writer import write_records

END = [properties()[n] for n in ("agreement", "validity", "liveness", "member-liveness")]
END_CORRECT = [with_scope(properties()["agreement"], "correct")]
SLOT = Options(liveness_reading="slot")


def rec(p: str, kind: str, t: float | None = None, **kw) -> dict:
    r = {"trace": "t", "process": p, "kind": kind, **kw}
    if t is not None:
        r |= {"time": t, "real_time": t + 0.25, "x_slot": t // 4}
    return r


def rounds(n: int, procs: list[str], senders: list[str], stop: dict[str, int] | None = None,
           start: float = 0.0) -> list[dict]:
    """n messages, each sent by the next of ``senders`` and delivered by every process
    of ``procs`` in turn (``stop``: a process delivers only its first k)."""
    stop = stop or {}
    out = []
    for i in range(n):
        s = senders[i % len(senders)]
        out.append(rec(s, "send", start + i, msg=f"m{i}"))
        out += [rec(p, "deliver", start + i + 0.5, msg=f"m{i}") for p in procs
                if i < stop.get(p, n)]
    return out


def views_run(n_views: int, per_view: int, procs: list[str],
              installs: dict[str, set[int]] | None = None,
              stop: dict[str, int] | None = None) -> list[dict]:
    """A clean view run: view v+1 of every process (``installs``: only those views),
    each message sent by the next member and delivered by every member that installed
    the view (``stop``: a process delivers only its first k)."""
    installs = installs or {}
    stop = stop or {}
    got = {p: 0 for p in procs}
    out, k = [], 0
    for v in range(n_views):
        here = [p for p in procs if v in installs.get(p, range(n_views))]
        out += [rec(p, "view", None, view=str(v + 1), members=here) for p in here]
        for _ in range(per_view):
            s = here[k % len(here)]
            out.append(rec(s, "send", None, msg=f"m{k}"))
            for p in here:
                if got[p] < stop.get(p, 1 << 30):
                    out.append(rec(p, "deliver", None, msg=f"m{k}"))
                    got[p] += 1
            k += 1
    return out


def sent_by_p0(recs: list[dict], who: str) -> list[dict]:
    """``recs`` with ``who``'s sends made by p0 (so that, grouped by process, no position
    waits for a send of the process that comes last)."""
    return [dict(r, process="p0") if r["kind"] == "send" and r["process"] == who else r
            for r in recs]


def case(name: str) -> tuple[list[dict], set[str], bool]:
    """A planted run: its records (interleaved), the properties it violates, and whether
    a violation's witness (or an unknown verdict's message) lies in the retired prefix
    when the run is read grouped by process."""
    p4 = ["p0", "p1", "p2", "p3"]
    if name == "grouped, one process stops short":
        return rounds(24, p4, ["p0"], {"p3": 7}), \
            {"agreement", "liveness", "member-liveness"}, True
    if name == "grouped, every process sends, a sender stops short":
        return rounds(24, p4, p4, {"p2": 9}), \
            {"agreement", "validity", "liveness", "member-liveness"}, True
    if name == "grouped, the first deliverer crashed, one process stops short":
        # the correct scope's witness and liveness's cite p1, whose deliveries lagged
        return rounds(24, p4, ["p0"], {"p3": 7}) + [rec("p0", "crash", 25.0)], \
            {"agreement", "liveness"}, True
    if name == "grouped, every process delivers everything":
        return rounds(24, p4, p4), set(), False
    if name == "a leaver, without views":
        recs = rounds(24, p4, ["p0", "p3"], {"p3": 6})
        i = max(i for i, r in enumerate(recs) if r["process"] == "p3")
        return recs[:i + 1] + [rec("p3", "leave", 25.0)] + recs[i + 1:], set(), False
    if name == "a member stalled in an early view":
        # p3 stops 4 deliveries into view 3 and installs nothing after it
        return sent_by_p0(views_run(6, 8, p4, {"p3": {0, 1, 2}}, {"p3": 20}), "p3"), \
            {"agreement", "member-liveness"}, True
    if name == "a leaver stalled in an early view":
        recs = sent_by_p0(views_run(4, 8, p4, {"p3": {0, 1}}, {"p3": 10}), "p3")
        i = max(i for i, r in enumerate(recs) if r["process"] == "p3")
        return recs[:i + 1] + [rec("p3", "leave")] + recs[i + 1:], \
            set(), False  # it owes nothing of the view it left from: counts decide
    if name == "a member from the start skips a view":
        # JGroups' late joiner: no join record, its first view the second one
        return sent_by_p0(views_run(3, 8, p4, {"p3": {1, 2}}), "p3"), \
            {"member-liveness"}, True
    if name == "a late member without a join record":
        recs = rounds(24, p4[:3], p4[:3])
        return recs + [rec("p3", "send", 30.0, msg="late")] + \
            [rec(p, "deliver", 30.5, msg="late") for p in p4[:3]], \
            {"agreement", "validity", "liveness", "member-liveness"}, True
    if name == "a late member that joins, judged by its clocks":
        recs = rounds(24, p4[:3], p4[:3])
        i = next(i for i, r in enumerate(recs) if r.get("time", 0) > 12.6)
        return recs[:i] + [rec("p3", "join", 12.6)] + recs[i:], \
            {"agreement", "liveness", "member-liveness"}, True
    if name == "a late member that joins without clocks":
        recs = [{k: v for k, v in r.items() if k not in ("time", "real_time", "x_slot")}
                for r in rounds(24, p4[:3], p4[:3])]
        return recs[:40] + [rec("p3", "join")] + recs[40:], \
            {"agreement", "liveness"}, True
    if name == "a rejoin behind the retired prefix":
        recs = rounds(24, p4, p4[:3], {"p3": 5})
        i = max(i for i, r in enumerate(recs) if r["process"] == "p3")
        j = next(i for i, r in enumerate(recs) if r.get("time", 0) > 14.6)
        return recs[:i + 1] + [rec("p3", "crash", 5.6)] + recs[i + 1:j] + \
            [rec("p3", "join", 14.6)] + recs[j:], {"member-liveness"}, True
    raise KeyError(name)


CASES = ["grouped, one process stops short",
         "grouped, every process sends, a sender stops short",
         "grouped, the first deliverer crashed, one process stops short",
         "grouped, every process delivers everything",
         "a leaver, without views",
         "a member stalled in an early view",
         "a leaver stalled in an early view",
         "a member from the start skips a view",
         "a late member without a join record",
         "a late member that joins, judged by its clocks",
         "a late member that joins without clocks",
         "a rejoin behind the retired prefix"]


@pytest.fixture
def reads(monkeypatch):
    """Counts the reads of retired ids (a witness read back from disk)."""
    seen = {"ids": 0}
    ids = RetiredSequence.ids

    def counted(self, lo, hi):
        seen["ids"] += 1
        return ids(self, lo, hi)

    monkeypatch.setattr(RetiredSequence, "ids", counted)
    return seen


def agree_end(path, reads=None) -> _Run:
    """The end-of-trace properties' report is the whole-trace checker's, in both scopes
    and both readings; the run of the uniform scope (how it was decided)."""
    run = _Run(END, Options(), False)
    agree([path], END, run=run)
    agree([path], END_CORRECT, Options(scope="correct"))
    agree([path], END[-1:], SLOT)
    return run


@pytest.mark.parametrize("name", CASES)
def test_a_process_behind_the_retired_prefix_is_decided_in_the_pass(name, reads,
                                                                    monkeypatch, tmp_path):
    # a window of 2 positions, 3 for every other case: the positions retire in turn
    monkeypatch.setattr(canon, "TRIM_AT", 2 + CASES.index(name) % 2)
    monkeypatch.setattr(driver, "READ_ROWS", 12)
    recs, violated, on_disk = case(name)
    for layout, rs in (("interleaved", recs), ("grouped", by_process(recs))):
        path = tmp_path / f"{layout}.jsonl"
        write_records(path, rs)
        before = reads["ids"]
        run = agree_end(path)
        assert run.modes == {"fast": 1} and not run.whole, (layout, run.modes)
        got = {k for k, v in run.report.outcomes[0].verdicts.items() if str(v) == "violated"}
        assert got == violated, layout
        if layout == "grouped":
            assert (reads["ids"] > before) == on_disk


def test_the_witness_names_the_retired_records(tmp_path, monkeypatch):
    """The grouped run whose p3 stops short: agreement's witness is p0's delivery of m7,
    read back from disk with its index and line, and p3's last event."""
    monkeypatch.setattr(canon, "TRIM_AT", 2)
    monkeypatch.setattr(driver, "READ_ROWS", 8)
    recs, _, _ = case("grouped, one process stops short")
    path = tmp_path / "t.jsonl"
    rs = by_process(recs)
    write_records(path, rs)
    report = check_stream([path], END)
    res = report.outcomes[0].results["agreement"]
    d, last = res.witness
    line = 1 + next(i for i, x in enumerate(path.read_text().splitlines())
                    if '"p0"' in x and '"deliver"' in x and '"m7"' in x)
    assert (d.process, d.kind, d.msg, d.index, d.location.line) == \
        ("p0", "deliver", "m7", 7, line)
    assert last.process == "p3" and last.msg == "m6"
    assert res.explanation == "process p0 delivers m7; correct process p3 never delivers it."


@pytest.mark.parametrize("name", ["grouped, one process stops short",
                                  "a member stalled in an early view"])
def test_a_break_after_the_lag_still_goes_whole(name, monkeypatch, tmp_path):
    """A run behind the retired prefix that then breaks the picture (a swap at its end)
    is not stood for by the held records: the whole-trace engine decides, with the same
    report, a small spill buffer so that the held records spill first."""
    monkeypatch.setattr(canon, "TRIM_AT", 2)
    monkeypatch.setattr(driver, "READ_ROWS", 8)
    monkeypatch.setattr(spill, "SPILL_ROWS", 6)
    recs, _, _ = case(name)
    d = [i for i, r in enumerate(recs) if r["process"] == "p1" and r["kind"] == "deliver"]
    recs[d[-1]], recs[d[-2]] = recs[d[-2]], recs[d[-1]]
    for layout, rs in (("interleaved", recs), ("grouped", by_process(recs))):
        path = tmp_path / f"{layout}.jsonl"
        write_records(path, rs)
        agree_end(path)


def test_jgroups_late_joiner_is_decided_in_the_pass(monkeypatch, reads):
    """JGroups' late joiner logs no join and skipped the first views, so member liveness
    owes it what was sent before it came: decided in the pass, its witness read back
    from disk (before, whole; test_stream_end_of_trace.py compares every real fixture)."""
    monkeypatch.setattr(canon, "TRIM_AT", 4)
    monkeypatch.setattr(driver, "READ_ROWS", 8)
    path = next(p for p in REAL if p.name == "jgroups-sequencer-flush-late-join-s1.jsonl.gz")
    run = _Run(END, Options(), False)
    agree([path], END, run=run)
    assert run.modes == {"fast": 1} and not run.whole
    assert reads["ids"] > 0


@st.composite
def behind_runs(draw):
    """Sends in one order, each process delivering a prefix of it (some stop short),
    some processes joining late (with or without a join record, a clock or none), one
    crashing and joining again, one leaving; without views."""
    procs = [f"p{i}" for i in range(draw(st.integers(2, 4)))]
    clock = draw(st.sampled_from(["time", "real_time", "x_slot", "none"]))
    n = draw(st.integers(4, 24))
    senders = draw(st.lists(st.sampled_from(procs), min_size=1, max_size=3, unique=True))
    local: dict[str, list[dict]] = {p: [] for p in procs}
    stop = {p: draw(st.integers(0, n)) if draw(st.booleans()) else n for p in procs}
    late = {p: draw(st.integers(0, n)) for p in procs if draw(st.integers(0, 3)) == 0}
    for i in range(n):
        stamp = {} if clock == "none" else {clock: i}
        s = senders[i % len(senders)]
        local[s].append({"process": s, "kind": "send", "msg": f"m{i}", **stamp})
        for p in procs:
            if p in late and late[p] == i:
                local[p].append({"process": p, "kind": "join", **stamp})
            if i < stop[p] and p not in late:
                local[p].append({"process": p, "kind": "deliver", "msg": f"m{i}", **stamp})
    for p in procs:
        if p in late and not local[p]:
            local[p].append({"process": p, "kind": "join"})
    if len(procs) > 2 and draw(st.booleans()):
        p = procs[-1]
        local[p].append({"process": p, "kind": draw(st.sampled_from(["leave", "crash"]))})
        if local[p][-1]["kind"] == "crash" and draw(st.booleans()):
            local[p].append({"process": p, "kind": "join"})
    local = {p: rs for p, rs in local.items() if rs}
    return merge(draw, local)


@given(behind_runs(), st.sampled_from([2, 4]), st.booleans(), st.sampled_from([4, 16]))
@settings(max_examples=20, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
def test_hypothesis_runs_behind_the_retired_prefix(tmp_path_factory, records, trim, grouped,
                                                   rows):
    with small_windows(trim, rows):
        path = tmp_path_factory.mktemp("b") / "t.jsonl"
        write_records(path, by_process(records) if grouped else records)
        agree_end(path)


def test_the_retired_witnesses_read_back_and_cut_back_at_a_restart(tmp_path):
    """Ids, sends (filled later too), clocks and each process's delivery lines read back
    by position and delivery number; a checkpoint (pickle) cuts every file back, and
    what is written after it is written again."""
    import pickle

    import numpy as np
    import pyarrow as pa

    from tomkit.checker.stream.retired import Sends

    seq = RetiredSequence([], str(tmp_path))
    h = np.arange(4, dtype=np.uint64)

    def sends(first: int, n: int, t: float | None) -> Sends:
        return Sends(np.full(n, 1), np.arange(first, first + n), np.arange(10, 10 + n),
                     np.full(n, seq.source("a.jsonl", "jsonl")),
                     {"time": np.full(n, np.nan if t is None else t),
                      "real_time": np.full(n, np.nan), "slot": np.full(n, np.nan)})

    seq.append(h, h, {}, pa.array(["m0", "m1", "longer-id", ""]), sends(0, 4, None))
    seq.deliveries("p", np.array([3, 4, 5]), "a.jsonl", "jsonl")
    saved = pickle.dumps(seq)  # tomkit watch's checkpoint
    seq.append(h + 4, h + 4, {}, pa.array(["x4", "x5", "x6", "x7"]), sends(4, 4, 7.5))
    seq.deliveries("p", np.array([6, 7]), "b.parquet", "parquet")
    assert seq.ids(2, 6).to_pylist() == ["longer-id", "", "x4", "x5"]
    assert seq.send_at(5)[:2] == (1, 5) and seq.send_at(5)[2].line == 11
    assert seq.send_clocks(np.array([1, 6]))["time"].tolist()[1] == 7.5
    assert str(seq.delivery("p", 4)) == "b.parquet: row 7"
    assert seq.delivery("p", 5) is None and seq.delivery("q", 0) is None
    back = pickle.loads(saved)
    assert back.rows == 4 and back.ids(0, 4).to_pylist() == ["m0", "m1", "longer-id", ""]
    assert back.delivery("p", 3) is None and str(back.delivery("p", 2)) == "a.jsonl:5"
    back.append(h + 8, h + 8, {}, pa.array(["y4", "y5", "y6", "y7"]), sends(4, 4, None))
    assert back.ids(3, 8).to_pylist() == ["", "y4", "y5", "y6", "y7"]
    back.fill(np.array([6]), sends(9, 1, 2.0))  # a send that came after it retired
    assert back.send_at(6)[1] == 9 and back.send_clocks(np.array([6]))["time"][0] == 2.0
    back.append(h, h, {})  # not kept: its ids read as not kept, not as ""
    assert back.ids(8, 12) is None and back.id_at(7) == "y7"
    back.close()
    seq.close()
    assert not list(tmp_path.iterdir())


def test_a_checkpoint_from_before_the_witnesses_goes_whole_where_they_are_missing(
        monkeypatch, tmp_path):
    """A tomkit watch state pickled before the retired witnesses existed (no send
    indexes, no witness files) reads on: the positions retired before it keep no
    witness, so a violation there goes whole, with the whole-trace checker's report."""
    import os
    import pickle

    monkeypatch.setattr(canon, "TRIM_AT", 2)
    monkeypatch.setattr(driver, "READ_ROWS", 8)
    recs, _, _ = case("grouped, one process stops short")
    path = tmp_path / "t.jsonl"
    write_records(path, by_process(recs))
    feed = _Run.feed
    done = []

    def old_state(self, tid, part):
        feed(self, tid, part)
        st = self.states[tid]
        if done or st.past is None or st.past.rows < 20:
            return
        done.append(tid)
        del st.__dict__["sidx"]
        past = st.past
        for p in [past.wpath, past.ipath, *(x.path for x in past.lines.values()),
                  *past.cpaths.values()]:
            os.unlink(p)
        for k in ("wpath", "ipath", "id_bytes", "cpaths", "lines", "sources", "lost",
                  "directory"):
            del past.__dict__[k]
        self.states[tid] = pickle.loads(pickle.dumps(st))

    monkeypatch.setattr(_Run, "feed", old_state)
    run = _Run(END[:1], Options(), False)
    agree([path], END[:1], run=run)
    assert done and set(run.whole) == {"t"}
