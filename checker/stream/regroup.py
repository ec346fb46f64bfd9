"""A broken trace whose file is grouped by process, read again with its processes'
records interleaved.

**Why it went whole.** In a file grouped by process (all of p0's records, then all of
p1's, ...), or with one process's log late, every process but the first lags: the
positions it has to deliver retire before its records come, and it reads them back
from disk (retired.py); the sends of the later processes come after the positions
they fill retired (canon.py's awaited sends). Both are exact on a trace that keeps
the picture. When such a trace breaks, the single pass's two ways of deciding a broken
trace in bounded memory do not serve it:

- *the held records* (reduced.py, with views viewheld.py) stand for the whole trace
  because every process delivered the retired prefix alike, before any held record,
  and each sender's retired sends are its first ones, checked before they retired. A
  process that lagged did not deliver the retired prefix before the held records: it
  comes after them, and delivers it from disk; a send read after its position retired
  is not among the held records, nor are the deliveries the first process made of the
  positions a later process breaks at. A lagging delivery that is not S[k] (a swap, a
  gap, a repeat at a retired position) names records no longer held: the first
  violation the exact checks look for (in their fixed order of processes, then
  positions) may lie in the first process's retired deliveries, which left memory.
- *the cut* (narrow.py, viewcut.py) needs the records naming the messages around the
  breach on one side and a fresh canonical pass for the rest; in a grouped file those
  records are spread over every process's part of the file, most of them retired
  before the breach is seen (a breach in p0's part shows only when p1's deliveries
  disagree with it).

What the retired sequence keeps on disk (per position its id, its send and each
process's delivery lines, retired.py) names the retired records but not their other
fields (a delivery's time, a send's deps, a view record's members), which the exact
checks read; so before this module such a trace went to the whole-trace engine, about
540 bytes an event.

**What this module does instead.** The records' order *across* processes is not part
of the trace: the whole-trace checker reads each process's records in their local
order (the order they come in, or ``seq``), and the single pass's report is the
whole-trace checker's whatever the arrival order (the differential tests feed both
layouts and Hypothesis-made merges: tests/checker/stream/). So a trace that went
whole because the retired prefix passed a process by (``TraceState.regroupable``) is
read again (the driver reads whole traces again anyway), each process's records
written to its own stream (``Streams``: a buffer, then segments of a spill file,
spill.py), and fed to a fresh single pass in an order that keeps the processes
together (``interleave``): a process's sends (and crash, join and leave records) as
soon as they are next in its stream, so that a send comes before the others deliver
its message, as in a run; a view record of a view another process installed already
(catching up); else the next ``step`` deliveries (a quarter of the window) and the
records between them of the process whose next delivery lies furthest back in S
(``TraceState.positions``; once the picture broke, its position then plus the
deliveries fed since). A process about to install a view nobody installed yet waits
while another process installs that view too (a late joiner, a rejoin: it would lay
the view out ahead of the views the others are still in), and its deliveries wait
while its view's range has not started (its position is S's end), so it delivers when
the others have laid the range out, as it did in the run; a view only it installs (a
singleton view at a start) does not wait. Each process's records keep their order
(and ``seq`` still follows arrival), so the fresh pass reports what the whole-trace
checker reports, and it reads the trace as an interleaved file: a breach is decided on
the held records, or on the records around it (the cut, with the end-of-trace
properties merged across it: cutowed.py), in the window's memory, exactly as the same
trace interleaved would be.

**What it costs.** One more read of the trace's records, written once to the
processes' streams (Arrow IPC, zstd) and read back once, beside the second pass. In
memory: a segment of each process's stream (``SEGMENT_ROWS`` records), the fresh pass's
window and, once it breaks, its buffer (spill.py), what an interleaved trace costs.
Traces of fewer than ``REGROUP_ROWS`` records go to the whole-trace engine as before
(their columns are small; it decides many short traces at once).

**What still goes whole.** Whatever the fresh pass sends whole (the reasons canon.py
and docs/stream.md name for an interleaved trace: ``seq`` out of arrival order, an id
seen again after it retired, a retired views' summary refuted, ...) goes to the
whole-trace engine after it, as before this module. The interleaving is steered by
the processes' positions in S, so a process that logs sends and no deliveries has its
records fed first (nothing steers it), and the window holds its messages until they
are delivered, as it would in a file that logs them first; a process that falls back
far (one that stops, a crashed one) no longer holds the low watermark, as in any
trace. ``tomkit watch`` keeps a whole trace's records as before (it judges them as
they come); reading again is ``tomkit check --stream``'s (driver.py).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from typing import Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..chunk import DELIVER, VIEW, Piece, kind_codes
from . import canon
from .canon import FAST, WHOLE, TraceState
from .spill import Spill

__all__ = ["REGROUP_ROWS", "SEGMENT_ROWS", "Streams", "interleave", "regroup"]

#: traces with fewer records go to the whole-trace engine as before (module docstring)
REGROUP_ROWS = 1 << 16
#: a process's records buffered before they go to its stream's spill file as a segment
SEGMENT_ROWS = 1 << 15


def split_by(piece: Piece, column: str) -> Iterator[tuple[str, Piece]]:
    """A piece's rows per value of a string column, values in order of first appearance,
    rows in order."""
    idx, names = canon._dictionary(piece.table.column(column))
    if len(names) == 1 or (len(idx) and (idx == idx[0]).all()):
        yield names[int(idx[0])], piece
        return
    order = np.argsort(idx, kind="stable")
    uniq, first = np.unique(idx, return_index=True)
    bounds = np.searchsorted(idx[order], uniq)
    ends = np.append(bounds[1:], len(idx))
    for k in np.argsort(first):
        rows = order[bounds[k]:ends[k]]
        yield names[int(uniq[k])], Piece(piece.table.take(pa.array(rows)), piece.lines[rows],
                                         piece.source, piece.fmt)


class _Stream:
    """One process's records, in its order: a buffer, then segments of a spill file."""

    def __init__(self, directory: str | None) -> None:
        self.directory = directory
        self.spill: Spill | None = None
        self.buffer: list[Piece] = []
        self.rows = 0  # in the buffer

    def add(self, piece: Piece) -> None:
        self.buffer.append(piece)
        self.rows += piece.table.num_rows
        if self.rows >= SEGMENT_ROWS:
            if self.spill is None:
                self.spill = Spill(self.directory)
            self.spill.write(self.buffer)
            self.buffer, self.rows = [], 0

    def pieces(self) -> Iterator[Piece]:
        if self.spill is not None:
            yield from self.spill.pieces()
        yield from self.buffer

    def close(self) -> None:
        if self.spill is not None:
            self.spill.close()
            self.spill = None
        self.buffer = []


class Streams:
    """Each process's records of one trace, in the order the processes first appear."""

    def __init__(self, directory: str | None = None) -> None:
        self.directory = directory
        self.procs: dict[str, _Stream] = {}
        #: per view, the processes that install it (views are few)
        self.installers: dict[object, set[str]] = {}

    def add(self, piece: Piece) -> None:
        """More of the trace's records, in their order."""
        rows = np.flatnonzero(kind_codes(piece.table.column("kind")) == VIEW)
        if len(rows):
            t = piece.table.take(pa.array(rows))
            for v, p in zip(t.column("view").to_pylist(), t.column("process").to_pylist()):
                self.installers.setdefault(v, set()).add(p)
        for name, part in split_by(piece, "process"):
            stream = self.procs.get(name)
            if stream is None:
                stream = self.procs[name] = _Stream(self.directory)
            stream.add(part)

    def close(self) -> None:
        for s in self.procs.values():
            s.close()


class _Head:
    """Where one process's stream is read: its current piece and row."""

    def __init__(self, pieces: Iterator[Piece]) -> None:
        self.pieces = pieces
        self.piece: Piece | None = None
        self.row = 0
        self.next()

    def next(self) -> None:
        self.piece = next(self.pieces, None)
        self.row = 0
        if self.piece is not None:
            kinds = self.kinds = kind_codes(self.piece.table.column("kind"))
            self.ends = np.flatnonzero(kinds == DELIVER) + 1  # the rows just past each
            self.views = np.flatnonzero(kinds == VIEW)  # each slice starts at one
            col = self.piece.table.column("view")
            self.view_ids = col.take(pa.array(self.views)).to_pylist() \
                if len(self.views) else []

    def view(self) -> object:
        """The view its next record installs (None: it is no view record)."""
        at = int(np.searchsorted(self.views, self.row))
        return self.view_ids[at] if at < len(self.views) and \
            self.views[at] == self.row else None

    def sends(self) -> bool:
        """Whether its next record is neither a delivery nor a view record (a send, a
        crash, a join or a leave: fed before any process's next delivery)."""
        return int(self.kinds[self.row]) not in (DELIVER, VIEW)

    def take(self, step: int, seen: set) -> tuple[Piece, int]:
        """The records up to and including the next ``step`` deliveries, the piece's end
        or the next view record (not taken), or the view record it is at alone, and how
        many deliveries they hold; ``seen`` gets the view it installs."""
        piece = self.piece
        assert piece is not None
        at = int(np.searchsorted(self.ends, self.row, "right"))
        stop = int(self.ends[at + step - 1]) if at + step - 1 < len(self.ends) else \
            piece.table.num_rows
        if self.sends():  # up to its next delivery
            stop = int(self.ends[at]) - 1 if at < len(self.ends) else piece.table.num_rows
        v = int(np.searchsorted(self.views, self.row))
        if v < len(self.views):
            stop = min(stop, int(self.views[v]))
        if self.view() is not None:  # a view record alone: its deliveries wait for the
            seen.add(self.view())  # view before it to close (the others moving on)
            stop = self.row + 1
        a = self.row
        n = int(np.searchsorted(self.ends, stop, "right")) - at
        self.row = stop
        out = Piece(piece.table.slice(a, stop - a), piece.lines[a:stop], piece.source,
                    piece.fmt)
        if self.row >= piece.table.num_rows:
            self.next()
        return out, n


def interleave(streams: Streams, where: Callable[[], dict[str, int] | None],
               step: int) -> Iterator[Piece]:
    """The processes' records in one order (module docstring): a process's sends (and
    crash, join and leave records) as soon as they are next in its stream, up to its next
    delivery, and a view record of a view some process installed already; else the next
    ``step`` deliveries (and the records between them) of the process whose next
    delivery lies furthest back in S, among those not waiting to install a view no
    process installed yet that another process installs too (a late joiner, a rejoin:
    they come in when another process has moved on to that view, or when every process
    waits). ``where``: the pass's positions by process, or None once they no longer move
    (its picture broke); each process's own deliveries fed since carry it on from
    there."""
    heads = {p: _Head(s.pieces()) for p, s in streams.procs.items()}
    heads = {p: h for p, h in heads.items() if h.piece is not None}
    fed = dict.fromkeys(heads, 0)
    off = dict.fromkeys(heads, 0)
    order = {p: i for i, p in enumerate(heads)}
    seen: set = set()  # the views some fed record installed
    while heads:
        pos = where()
        if pos is not None:
            for p in heads:
                if p in pos:
                    off[p] = pos[p] - fed[p]
        # a view another process installed already: catching up, its position set by it
        eager = [q for q, h in heads.items() if h.sends() or h.view() in seen]
        # a view no process installed yet waits for another that installs it too
        ready = [q for q, h in heads.items() if h.view() is None or h.view() in seen or
                 not streams.installers.get(h.view(), set()) - {q}]
        p = eager[0] if eager else min(ready or heads, key=lambda q: (off[q] + fed[q], order[q]))
        head = heads[p]
        piece, n = head.take(step, seen)
        fed[p] += n
        if head.piece is None:
            del heads[p]
        yield piece


class Run(Protocol):
    """What ``regroup`` reads and drives of the driver's run (driver.py's ``_Run``)."""

    whole: dict[str, None]
    regroup: dict[str, int]
    states: dict[str, TraceState]
    followed: set[str]
    modes: dict
    keep_going: bool
    trim_at: int | None
    spill_dir: str | None

    def feed(self, tid: str, part: Piece) -> None: ...

    def finish(self, tid: str) -> None: ...


def regroup(paths: Iterable[str | os.PathLike], run: Run,
            read: Callable[[str | os.PathLike, bool], Iterator[Piece]]) -> None:
    """Decide again, read interleaved, the traces the single pass sent whole because the
    retired prefix passed a process by (module docstring); those the fresh pass sends
    whole too stay in ``run.whole``."""
    todo = [t for t in run.whole if run.regroup.get(t, -1) >= REGROUP_ROWS]
    if not todo:
        return
    streams = {t: Streams(run.spill_dir) for t in todo}
    wanted = pa.array(todo, pa.string())
    try:
        for path in paths:
            for piece in read(path, run.keep_going):
                col = piece.table.column("trace").cast(pa.string())
                rows = np.flatnonzero(np.asarray(pc.is_in(col, value_set=wanted)))
                if not len(rows):
                    continue
                if len(rows) < piece.table.num_rows:
                    piece = Piece(piece.table.take(pa.array(rows)), piece.lines[rows],
                                  piece.source, piece.fmt)
                for tid, part in split_by(piece, "trace"):
                    streams[tid].add(part)
        step = max(1, (run.trim_at or canon.TRIM_AT) // 4)  # (read now: tests set it)
        for tid in todo:
            del run.whole[tid]
            run.modes[WHOLE] -= 1
            run.followed.discard(tid)

            def where(tid: str = tid) -> dict[str, int] | None:
                st = run.states.get(tid)
                return st.positions() if st is not None and st.mode == FAST else None

            for piece in interleave(streams[tid], where, step):
                run.feed(tid, piece)
            streams[tid].close()
            run.finish(tid)
            run.modes["regrouped"] += 1
    finally:
        for s in streams.values():
            s.close()
        for k in [k for k, v in run.modes.items() if not v]:
            del run.modes[k]
