"""The single-pass check of files: the report ``tomkit check`` prints, in memory bounded
by each trace's lag rather than its length (docs/stream.md).

Records stream from the readers in batches; each batch is split by trace and fed to
that trace's state (canon.py) in arrival order. A trace is finished when its file
declares its traces grouped and another trace starts, else at the end of the input.
A finished trace's verdicts come from the properties' stream deciders when it stayed
clean (``Property.stream``), from their exact checks on the held records when it broke
(reduced.py), and from the whole-trace engine, after a second read of the files, when
the single pass cannot stand for it (canon.py's ``WHOLE``: views, ``seq``, an id
reused after it retired). Verdicts, witnesses and sentences are the whole-trace
checker's; tests/stream/ compares them.

A process first seen in a batch is fed from its first record on, not from the batch's
start (``first_seen_cut``): a batch (262,144 records) hands a process's records to the
state before the trace has seen them, and a process seen with its cursor at a position
nothing retired yet holds the low watermark there. So the rows before its first record
are fed first, the positions the processes seen so far passed retire at their trim, and
the newcomer then reads them back from disk (retired.py), as a process first seen in a
later batch does: which records a batch ends at changes no verdict, only what is held.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...traces.errors import TraceFormatError
from ...traces.reader import TraceReader
from ..chunk import DELIVER, Piece, kind_codes
from ..engine import (
    READ_ROWS,
    CheckReport,
    FileStats,
    TraceOutcome,
    _loc,
    _progress,
    _record,
    decide_chunk,
    read_pieces,
    split_by_trace,
)
from ..properties import Options, Property
from ..result import Result, Verdict
from ..trace import Trace
from . import canon
from .canon import FAST, SLOW, WHOLE, TraceState, _dictionary
from .cutowed import owing
from .narrow import follow, narrows
from .reduced import NeedsWhole, check_held, deps_held
from .regroup import regroup, split_by
from .viewheld import carries, stands

__all__ = ["check_stream", "first_seen_cut", "not_streamed"]

#: feed a batch in two where a process not seen before first appears (module
#: docstring); False: as before, such a process holds the low watermark from the
#: batch's start (bench/stream_views_bench.py compares the two)
FIRST_SEEN = True


def not_streamed(props: list[Property]) -> list[str]:
    """The properties the single pass cannot decide (they need the whole trace)."""
    return [p.name for p in props if p.stream is None]


def first_seen_cut(st: TraceState, piece: Piece) -> int:
    """The first row of ``piece`` where a process not seen before by ``st`` appears, when
    the rows before it could retire positions (S would outgrow the window); 0: none."""
    window = st.trim_at or canon.TRIM_AT
    if not FIRST_SEEN or st.mode != FAST or len(st.S) + piece.table.num_rows <= window:
        return 0  # (a short trace: its rows cannot outgrow the window)
    idx, names = _dictionary(piece.table.column("process"))
    new = np.array([st.procs.get(x, -1) < 0 or not st.seen[st.procs[x]] for x in names],
                   bool)
    if not new.any():
        return 0
    firsts = np.full(len(names), len(idx), np.int64)
    some = idx >= 0
    firsts[idx[some][::-1]] = np.flatnonzero(some)[::-1]  # the first row of each wins
    later = firsts[new & (firsts > 0) & (firsts < len(idx))]
    if not len(later):  # a newcomer at row 0 is fed with its batch
        return 0
    first = int(later.min())
    # S grows by at most the deliveries before it: no trim, no need to cut
    grown = int(np.count_nonzero(kind_codes(piece.table.column("kind").slice(0, first))
                                 == DELIVER))
    return first if len(st.S) + grown > window else 0


def split(piece: Piece) -> Iterator[tuple[str, Piece]]:
    """A piece's rows per trace, traces in order of first appearance, rows in order."""
    return split_by(piece, "trace")


class _Run:
    """One check: the report, the open traces, the traces left to the whole engine."""

    def __init__(self, props: list[Property], options: Options, keep_going: bool,
                 trim_at: int | None = None, keep_whole: bool = False,
                 expect: tuple[str, ...] = (), spill_dir: str | None = None,
                 await_after: int | None = None) -> None:
        self.props, self.options, self.keep_going = props, options, keep_going
        self.trim_at = trim_at  # each trace's window (canon.py), None: canon.TRIM_AT
        self.keep_whole = keep_whole  # TraceState's
        self.expect = expect  # TraceState's: processes known before their records
        self.spill_dir = spill_dir  # TraceState's: where held records spill
        self.await_after = await_after  # TraceState's
        #: the clocks whose latencies the properties' deciders read (Property.clock)
        self.clocks = tuple(dict.fromkeys(p.clock for p in props if p.clock))
        self.report = CheckReport([p.name for p in props], options)
        self.report.counts = {p.name: Counter() for p in props}
        self.states: dict[str, TraceState] = {}
        self.done: set[str] = set()
        self.whole: dict[str, None] = {}
        #: of those, the ones the retired prefix passed a process by, and their records:
        #: read again interleaved before they go whole (regroup.py)
        self.regroup: dict[str, int] = {}
        self.followed: set[str] = set()  # traces whose cut was tried while read
        #: per finished trace, how it was decided (fast, slow or whole), for the bench
        self.modes: Counter = Counter()
        self.peak_held = 0
        self.peak_window = 0  # S positions in memory (retired ones are on disk)

    def feed(self, tid: str, part: Piece) -> None:
        st = self.states.get(tid)
        if st is None:
            st = self.states[tid] = TraceState(tid, self.trim_at, self.keep_whole,
                                               self.expect, self.clocks, self.spill_dir)
            st.await_after = self.await_after
        while True:
            cut = first_seen_cut(st, part)
            if not cut:
                break
            st.feed(Piece(part.table.slice(0, cut), part.lines[:cut], part.source,
                          part.fmt))
            self._peaks(st)
            part = Piece(part.table.slice(cut), part.lines[cut:], part.source, part.fmt)
        st.feed(part)
        if st.mode == SLOW and st.spill is not None and tid not in self.followed:
            # a long broken trace: its cut is tried as the rest is read (narrow.py)
            self.followed.add(tid)
            if narrows(self.props):
                st.follower = follow(st, self.props)
        self._peaks(st)

    def _peaks(self, st: TraceState) -> None:
        if st.mode != WHOLE:
            self.peak_held = max(self.peak_held, st.held())
            self.peak_window = max(self.peak_window, len(st.S))

    def finish(self, tid: str) -> None:
        st = self.states.pop(tid)
        self.done.add(tid)
        st.finish()
        try:
            self._decide(tid, st)
        finally:
            st.close()
        if st.mode == WHOLE and tid in self.whole and st.regroupable:
            self.regroup[tid] = st.events

    def _decide(self, tid: str, st: TraceState) -> None:
        self.modes[st.mode] += 1
        if st.mode == WHOLE and not (st.keep_whole and st.base == 0):
            self.whole[tid] = None
            return
        if st.vprefix is not None:  # with views, broken after positions retired
            held = all(carries(p) for p in self.props) and \
                (not any(p.final() for p in self.props) or stands(st))
        else:  # the end-of-trace properties with the retired part's counts (prefixowed.py)
            held = all(p.held or owing([p]) for p in self.props)
        if st.mode == SLOW and st.base and (not held or not deps_held(st)):
            # the end-of-trace properties read what each process did last, which may lie
            # in the retired prefix (with views, carried over for agreement, validity and
            # liveness: viewheld.py), and causal order needs deps logged on held sends:
            # the held records cannot stand for them
            self.whole[tid] = None
            return
        if st.mode in (SLOW, WHOLE):  # a WHOLE trace here is held whole (tomkit watch)
            try:
                outcome, scratch = check_held(st, self.props, self.options, self.keep_going)
            except NeedsWhole:
                self.whole[tid] = None
                return
            for name, c in scratch.counts.items():
                self.report.counts[name].update(c)
            self.report.rejected.extend(scratch.rejected)
            for moved in scratch.files:
                for f in self.report.files:
                    if f.source == moved.source:
                        f.accepted += moved.accepted
                        f.rejected += moved.rejected
            if outcome is not None:
                self.report.outcomes.append(outcome)
            if st.cut:
                self.modes["narrowed"] += 1  # its exact checks ran around the breach
            if st.vprefix is not None:
                # with views, broken after positions retired: each process's retired
                # prefix carried over (viewheld.py)
                self.modes["views carried"] += 1
            return
        clean = st.clean()
        decided = [prop.stream(clean, self.options) for prop in self.props]
        if any(res is None for res in decided):  # a verdict that needs the whole trace
            self.whole[tid] = None
            return
        verdicts: dict[str, Verdict] = {}
        results: dict[str, Result] = {}
        for prop, res in zip(self.props, decided):
            verdicts[prop.name] = res.verdict
            if res.verdict != Verdict.HOLDS:
                results[prop.name] = res
            self.report.counts[prop.name][res.verdict] += 1
        self.report.outcomes.append(TraceOutcome(tid, sorted(st.sources), st.events,
                                                 verdicts, results))


def check_stream(paths: list[str | os.PathLike], props: list[Property],
                 options: Options = Options(), *, keep_going: bool = False,
                 merge: bool = False, progress: bool = False,
                 on_violation: Callable[[Trace, Result], None] | None = None,
                 run: _Run | None = None) -> CheckReport:
    """Check every trace of the given files in one pass (module docstring); the same
    arguments and report as :func:`~tomkit.checker.engine.check_paths`. ValueError when
    a property has no stream decider (:func:`not_streamed`). ``on_violation`` sees the
    traces the whole-trace engine decides (a witness found on held records is not drawn)."""
    missing = not_streamed(props)
    if missing:
        raise ValueError(f"the single-pass checker does not decide {', '.join(missing)} "
                         "(they need the whole trace): check without --stream")
    r = run or _Run(props, options, keep_going)
    report = r.report
    bar = _progress(progress)
    for path in paths:
        reader = TraceReader(path, keep_going=keep_going, batch_rows=READ_ROWS,
                             dictionary=True)
        stats = FileStats(str(path), reader.info.fmt, grouped=reader.info.grouped)
        report.files.append(stats)
        grouped = bool(reader.info.grouped) and not merge
        again = 0
        last = None
        for piece in read_pieces(reader, bar):
            for tid, part in split(piece):
                if grouped and tid in r.done:
                    text = (f"trace {tid!r} appears again after other traces, but the "
                            "file declares its traces grouped")
                    if not keep_going:
                        raise TraceFormatError(_loc(part, 0), text, "trace")
                    report.rejected.extend(TraceFormatError(_loc(part, i), text, "trace")
                                           for i in range(part.table.num_rows))
                    again += part.table.num_rows
                    continue
                if grouped and last is not None and tid != last and last in r.states:
                    r.finish(last)
                r.feed(tid, part)
                last = tid
        if grouped and last in r.states:
            r.finish(last)
        stats.accepted += reader.accepted - again
        stats.rejected += len(reader.rejected) + again
        report.rejected.extend(reader.rejected)
    for tid in list(r.states):
        r.finish(tid)
    if bar is not None:
        bar.close()
    if r.whole:
        regroup(paths, r, _read_v1)
    if r.whole:
        _whole(paths, r, merge, on_violation)
    return report


def _read_v1(path: str | os.PathLike, keep_going: bool) -> Iterator[Piece]:
    reader = TraceReader(path, keep_going=keep_going, batch_rows=READ_ROWS, dictionary=True)
    yield from read_pieces(reader)


def _whole(paths: list[str | os.PathLike], r: _Run, merge: bool,
           on_violation: Callable[[Trace, Result], None] | None,
           read: Callable[[str | os.PathLike, bool], Iterator[Piece]] = _read_v1) -> None:
    """The traces the single pass cannot stand for, read again (by ``read``: v1 files,
    or logs through a mapping) and checked whole."""
    wanted = pa.array(list(r.whole), pa.string())
    pieces: list[Piece] = []
    for path in paths:
        for piece in read(path, r.keep_going):
            col = piece.table.column("trace").cast(pa.string())
            mask = np.asarray(pc.is_in(col, value_set=wanted))
            if mask.any():
                rows = np.flatnonzero(mask)
                pieces.append(Piece(piece.table.take(pa.array(rows)), piece.lines[rows],
                                    piece.source, piece.fmt))
    for part in split_by_trace(pieces):
        chunk, codes = decide_chunk(part, r.props, r.options)
        _record(chunk, codes, r.props, r.options, r.report, r.keep_going, on_violation)

