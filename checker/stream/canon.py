"""One trace in one pass: a canonical delivery sequence with a cursor per process.

The properties of a totally ordered multicast agree on one picture of a correct run:
every process delivers a prefix of one sequence S of distinct messages, each sent once,
and each sender's messages appear in S in its send order. This module checks exactly
that picture, batch by batch, with numpy:

- S grows by the first delivery at each position, in the order records arrive; every
  other delivery at position k is compared with S[k] (``feed``). A process's cursor
  is its count of deliveries.
- Each message's sender and send rank are recorded when its send arrives; a second
  pointer ``vpos`` walks S and checks that each sender's messages come in rank order
  0, 1, 2, ... (FIFO on S; it waits at a message whose send has not arrived yet).
- The positions every process has passed, and whose sends are checked, are *retired*
  (``_trim``): their ids leave memory (only a 64-bit hash stays, hashes.py), their
  records leave the buffer. Memory is bounded by the lag between the fastest and the
  slowest process, not by the trace's length.

The records still held (the buffer: everything after the retired prefix) are kept
as read, so that when the picture breaks (a repeat, a gap, an inversion, a reused
id), the trace switches to ``SLOW``: from then on records are only buffered, and at
its end the properties' exact checks run on the buffered records (reduced.py), whose
retired prefix every process delivered alike. What the buffer cannot stand for sends
the trace to ``WHOLE``, the whole-trace engine: a trace with views broken after part of
it retired (the membership rules read retired installations), ``seq`` that orders a
process's records otherwise than they arrive (a recorder's ``seq`` follows arrival),
an id seen again after it retired, a process that lags behind the retired prefix (one
that appears late) and delivers otherwise there. A process that lags
and delivers the retired S[k] at each retired position k reads it back from disk
(retired.py) and does not hold the low watermark, so memory stays the window's (with
views too: its position lies in the range of the view it installed, views.py); nor
does, without views, a process that has delivered nothing yet (a client that only
sends) once S's end is two windows past it: whatever it delivers first lies in S from
position 0 on, as a newcomer's does, so it is one if it comes to deliver
(``SENDERS_PASS``); a
trace where that happened goes whole if it breaks later (the held records stand for
the retired prefix only when every process delivered it before them). Positions every
process passed retire even while their sends are still to come (a file grouped by
process where every process sends): their senders and ranks are filled in as the sends
come and checked in S's order (``_validate_waiting``; with views, each send's view
against its position's range's, and FIFO within each view); a trace where that happened
goes whole if it breaks, and the driver then reads it again with its processes' records
interleaved (``regroupable``, regroup.py) before it leaves it to the whole-trace engine.
A trace that stays ``FAST`` to its end is clean (clean.py), and the properties' stream
deciders give its verdicts.

With a latency bound, each delivery's latency is measured when its message retires (or
as a lagging delivery is read, or when the send of a position retired before it comes)
and tallied per process (latencies.py: count, exact sum, maximum, the slowest with its
witness's locations), so that a clean trace's verdict and details, and a broken one's
retired part, need no record of the retired prefix.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...traces.errors import Location
from ..chunk import (
    CRASH,
    DELIVER,
    JOIN,
    LEAVE,
    SEND,
    VIEW,
    Piece,
    concat_ranges,
    kind_codes,
)
from ..result import WitnessEvent
from . import spill as spill_
from .clean import NEVER, Clean
from .hashes import IdMap, RetiredIds, hash_ids
from .latencies import Slowest, Tally
from .ledger import Join, Ledger, Stay, Window
from .ledger import location as _location
from .ledger import record_clocks as _clocks
from .retired import RetiredSequence, Sends, send_clocks
from .viewheld import ViewPrefix, summarize
from .views import NONE, Views

__all__ = ["FAST", "SLOW", "TRIM_AT", "WHOLE", "TraceState"]

FAST, SLOW, WHOLE = "fast", "slow", "whole"
#: the window's deliveries, with a clock measured: message code, process, delivery
#: index, line and source (and ``t_CLOCK`` per clock)
DL_KEYS = ("code", "proc", "index", "line", "src")
BEHIND = "a process behind the retired prefix delivers after the trace broke"
#: retire positions whose sends are still to come (a file grouped by process where
#: every process sends), checking their senders as the sends come; False: the window
#: waits for them (as before; bench/stream_bench.py compares the two)
AWAIT_SENDS = True
#: with views too, a process not seen yet or lagging behind the retired prefix does not
#: hold the low watermark (it reads the retired prefix from disk), and the sends are
#: awaited (their sending views checked as they come); False: as before, the window
#: holds what such a process has still to deliver and waits for the sends
#: (bench/stream_views_bench.py compares the two)
VIEW_LAG = True
#: without views, a process that has delivered nothing yet (one that only sends) does
#: not hold the low watermark once S's end is two windows past it: it reads the retired
#: prefix from disk if it comes to deliver; False: as before, it holds it at its cursor
#: (bench/stream_bench.py --sender-only compares the two)
SENDERS_PASS = True
#: S positions held before the pass retires what every process has passed; the
#: window then shrinks to the lag between the fastest and the slowest process
TRIM_AT = 1 << 14


def cumcount(keys: np.ndarray, nkeys: int) -> np.ndarray:
    """Per row, how many earlier rows have the same key (keys in ``range(nkeys)``)."""
    if len(keys) == 0:
        return np.zeros(0, np.int64)
    if nkeys <= 32:  # a few processes: one pass per key beats a sort
        out = np.empty(len(keys), np.int64)
        for k in range(nkeys):
            rows = np.flatnonzero(keys == k)
            out[rows] = np.arange(len(rows))
        return out
    order = np.argsort(keys, kind="stable")
    counts = np.bincount(keys, minlength=nkeys)
    starts = np.cumsum(counts) - counts
    out = np.empty(len(keys), np.int64)
    out[order] = np.arange(len(keys), dtype=np.int64) - starts[keys[order]]
    return out


def _grow(a: np.ndarray, n: int, fill: int) -> np.ndarray:
    if len(a) >= n:
        return a
    out = np.full(max(n, 2 * len(a)), fill, a.dtype)
    out[:len(a)] = a
    return out


def _dictionary_array(col: pa.ChunkedArray) -> tuple[np.ndarray, pa.Array]:
    """Indices (null -> -1) and dictionary of a string column."""
    arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    if not pa.types.is_dictionary(arr.type):
        arr = pc.dictionary_encode(arr)
    idx = arr.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    return idx, arr.dictionary


def _rows(piece: Piece, a: int, b: int) -> Piece:
    """Rows ``a`` to ``b`` of a piece."""
    return Piece(piece.table.slice(a, b - a), piece.lines[a:b], piece.source, piece.fmt)


def _own(piece: Piece) -> Piece:
    """A copy of a piece's few rows that keeps none of its batch alive: a slice holds
    the batch's buffers, and a dictionary column's rows its whole dictionary."""
    t = piece.table
    idx = pa.array(np.arange(t.num_rows))
    cols = []
    for col in t.columns:
        arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
        cols.append(arr.dictionary_decode() if pa.types.is_dictionary(arr.type)
                    else arr.take(idx))
    return Piece(pa.table(cols, names=t.column_names), piece.lines.copy(), piece.source,
                 piece.fmt)


def _dictionary(col: pa.ChunkedArray) -> tuple[np.ndarray, list]:
    """Indices (null -> -1) and dictionary values of a string column."""
    idx, values = _dictionary_array(col)
    return idx, values.to_pylist()


class Follower(Protocol):
    """What follows a broken trace's held records as they come (narrow.py's cut)."""

    def feed(self, piece: Piece) -> bool:
        """The next held piece; False once it gives up (it is then dropped)."""

    def close(self) -> None:
        """Remove its files."""


class TraceState:
    """The single pass's state of one trace (module docstring)."""

    #: with views, what each process's retired deliveries were when the trace broke after
    #: positions retired (viewheld.py; None: not such a trace); a class default too, so a
    #: state pickled by tomkit watch before it existed reads as None
    vprefix: ViewPrefix | None = None
    #: the batch being fed (``_note_clocks``): scratch, not pickled (``__getstate__``)
    _batch: Piece | None = None
    _SCRATCH = ("_batch", "_times", "_sindex", "_dindex", "_row_h1", "_row_h2")

    def __getstate__(self) -> dict:
        """The state tomkit watch checkpoints, less the scratch of the batch last fed (its
        records are in the buffer if they are held)."""
        state = self.__dict__.copy()
        for k in self._SCRATCH:
            state.pop(k, None)
        return state

    def __setstate__(self, state: dict) -> None:
        if state.get("clocks") and "tally" not in state:
            # a tomkit watch checkpoint from before latencies.py kept only the largest
            # latency: the statistics a verdict now reports cannot be rebuilt from it
            raise ValueError("a checkpoint written by an older tomkit with a latency "
                             "bound (its latencies are not kept as this one keeps them); "
                             "give a new --state DIR")
        self.__dict__.update(state)
        if "w_view" not in state:  # waited only without views: every position in none
            waiting = np.asarray(state.get("w_sender", ()), np.int64)
            self.w_view = np.full(len(waiting), NONE, np.int64)
            self.w_sview = np.where(waiting >= 0, NONE, -1).astype(np.int64)
        self._batch, self._times = None, {}
        self._sindex = self._dindex = np.zeros(0, np.int64)
        self._row_h1 = self._row_h2 = None

    #: the tail's part of the end-of-trace properties when a cut serves them (narrow.py,
    #: cutowed.py; None: none)
    owed: object | None = None
    #: judge views' member sets (views.py); False for narrow.py's tail
    judge_members: bool = True
    #: a cut SLOW trace's tail tally per clock, its indexes counted from the held records'
    #: start (narrow.py, latencies.py); a class default, so an older checkpoint reads None
    cut_latency: dict[str, Tally] | None = None
    #: keep what the end-of-trace witnesses cite of the retired prefix (retired.py);
    #: False for a pass whose clean verdicts are never asked (narrow.py's tail)
    witnesses: bool = True
    #: code -> its index among its sender's sends (a class default too: a state pickled
    #: by tomkit watch before it existed reads its messages' indexes as not known)
    sidx: np.ndarray = np.zeros(0, np.int64)
    #: per position waiting for its send (from ``vpos`` on, as ``w_sender``): the view
    #: of its range, and its sender's view at the send once read (-1 before); class
    #: defaults too, for a checkpoint from before them (``__setstate__``)
    w_view: np.ndarray = np.zeros(0, np.int64)
    w_sview: np.ndarray = np.zeros(0, np.int64)
    #: retire positions past the FIFO pointer (the awaited sends) only once it is this
    #: many positions behind S's end (None: at once; with views at least two windows);
    #: tomkit watch's, so that a send read a little after its deliveries is checked in
    #: the window and a break after it judged as it comes (a class default: a checkpoint
    #: from before it reads None, and watch sets it again)
    await_after: int | None = None
    #: some process was passed by the retired prefix before its records came (a file
    #: grouped by process, a log that lags): a trace that goes whole for it is read again
    #: with its processes' records interleaved (regroup.py); a class default, so an older
    #: checkpoint reads False
    passed_by: bool = False

    def __init__(self, trace_id: str, trim_at: int | None = None,
                 keep_whole: bool = False, expect: Sequence[str] = (),
                 clocks: Sequence[str] = (), spill_dir: str | None = None) -> None:
        self.id = trace_id
        #: a broken trace's held records past spill.SPILL_ROWS go to a file (spill.py),
        #: made in ``spill_dir`` (None: the system's temporary directory)
        self.spill_dir = spill_dir
        self.spill: spill_.Spill | None = None
        #: the clocks whose send-to-delivery latency is measured ("time", "real_time"):
        #: per message its send's time (code -> ``t_send``; its index is ``sidx``, its
        #: location its held send record's, read when it becomes the slowest, as the
        #: retired sequence reads it, ``_retire_witnesses``), and the window's deliveries
        #: (``dl``: the message's code, the process, its delivery index, location and
        #: times), folded into ``tally`` as their messages retire (latencies.py)
        self.clocks = tuple(clocks)
        self.t_send = {c: np.zeros(0, np.float64) for c in self.clocks}
        self.dl: dict[str, np.ndarray] = {k: np.zeros(0, np.int64) for k in DL_KEYS}
        self.dl.update({f"t_{c}": np.zeros(0, np.float64) for c in self.clocks})
        self.dl_parts: list[dict[str, np.ndarray]] = []
        #: per clock, the retired messages' measured first deliveries
        self.tally = {c: Tally() for c in self.clocks}
        #: deliveries at retired positions whose sends are not read yet (the awaited
        #: sends, below): the position, process, delivery index, location and times,
        #: measured when the send comes; in parts as they came, each sorted by position
        #: (a send finds its deliveries by binary search, not by a pass over all)
        self.pend: list[dict[str, np.ndarray]] = []
        #: the batch being fed: its piece, clocks, and per row its send or delivery index
        self._batch = None
        self._times: dict[str, np.ndarray | None] = {}
        self._sindex = np.zeros(0, np.int64)
        self._dindex = np.zeros(0, np.int64)
        #: the sources and formats the locations above index
        self.src_names: dict[tuple[str, str], int] = {}
        #: hold a WHOLE trace's records too (tomkit watch judges them as they come;
        #: tomkit check reads them again from the files instead)
        self.keep_whole = keep_whole
        #: a view, join or leave record was read; with views, the layout (views.py)
        self.has_views = False
        self.views: Views | None = None
        self.view_records = False  # a view record (not only joins and leaves)
        self.membership = False  # a join or leave record
        #: the window (module docstring; None: TRIM_AT as it is when a trim runs)
        self.trim_at = trim_at
        self.mode = FAST
        self.why = ""  # why the trace left FAST, for docs and tests
        self.broke_at = 0  # S's end when it went SLOW (_slow)
        #: processes behind the retired prefix when it went SLOW (_slow)
        self.behind = np.zeros(0, np.int64)
        self.vprefix = None
        #: a SLOW trace's exact checks ran on the records of ``cut`` messages only, those
        #: before the cut, the rest found clean (narrow.py; 0: on every held record)
        self.cut = 0
        #: a SLOW trace's cut tried as its records are read (narrow.py's ``follow``; set
        #: by the driver when the trace breaks), fed each held piece; None when refuted
        self.follower: Follower | None = None
        self.events = 0
        self.sources: dict[str, None] = {}
        self.procs: dict[str, int] = {}
        self.dcount = np.zeros(0, np.int64)  # deliveries so far
        #: the S position of a process's next delivery (without views: its deliveries so
        #: far; with views: its view's range start plus its deliveries in it; -1: its
        #: view's range has not started)
        self.cursor = np.zeros(0, np.int64)
        self.left = np.zeros(0, bool)  # logged a leave
        self.scount = np.zeros(0, np.int64)  # sends so far
        self.vscount = np.zeros(0, np.int64)  # sends in its current view (or before any)
        self.crashed = np.zeros(0, bool)
        self.fifo_next = np.zeros(0, np.int64)  # per sender: its messages checked in S
        self.fifo_view = np.zeros(0, np.int64)  # per sender: the view fifo_next counts in
        self.soff = np.zeros(0, np.int64)  # per sender: its sends retired
        self.last_send = np.zeros(0, np.int64)  # per sender: the code of its latest send
        self.seq_kind = np.zeros(0, np.int8)  # per process: 1 logs no seq, 2 logs seq
        self.last_seq = np.zeros(0, np.int64)  # per process: its latest seq
        self.ids = IdMap()  # first hash -> code, for the messages in the window
        self.nmsgs = 0  # codes given
        self.h1 = np.zeros(0, np.uint64)  # code -> its id's two hashes (hashes.py)
        self.h2 = np.zeros(0, np.uint64)
        self.sender = np.zeros(0, np.int32)
        self.rank = np.zeros(0, np.int64)
        #: code -> its index among its sender's sends (a witness's; retired.py keeps it)
        self.sidx = np.zeros(0, np.int64)
        self.spos = np.zeros(0, np.int64)
        #: code -> the view it was sent in, the view of its S position (views.py indices)
        self.sview = np.zeros(0, np.int64)
        self.dview = np.zeros(0, np.int64)
        #: code -> when a record naming it was first read (wall clock, seconds: it
        #: survives a restart of tomkit watch), for its --timeout
        self.first_seen = np.zeros(0, np.float64)
        #: causal order: who sends with deps, and the deps of the sends whose
        #: message is not yet validated in S (its code, each dep's two hashes)
        self.deps_from: set[int] = set()  # processes with a send that carries deps
        self.dep_m = np.zeros(0, np.int64)
        self.dep_h1 = np.zeros(0, np.uint64)
        self.dep_h2 = np.zeros(0, np.uint64)
        self.S = np.zeros(0, np.int64)  # codes of S[base:]
        self.base = 0  # S positions below are retired
        self.vpos = 0  # S positions below have their send and FIFO checked
        self.retired = RetiredIds()
        #: the retired prefix in order, on disk, for a process that lags behind it
        #: (retired.py; made at the first trim)
        self.past: RetiredSequence | None = None
        #: a delivery was read at a retired position (from ``past``)
        self.lagged = False
        #: positions retired before their sends came (a file grouped by process where
        #: every process sends: the FIFO pointer waits at the first message whose send
        #: is not read yet): first hash -> position, and per position from ``vpos`` on
        #: its sender and send rank once its send is read (-1 before); ``waited``: some
        #: were (a break after that goes whole)
        self.waiting = IdMap()
        self.w_sender = np.zeros(0, np.int64)
        self.w_rank = np.zeros(0, np.int64)
        self.w_view = np.zeros(0, np.int64)
        self.w_sview = np.zeros(0, np.int64)
        self.waited = False
        self._row_h1: np.ndarray | None = None  # the batch's per-row hashes (_msg_codes)
        self._row_h2: np.ndarray | None = None
        #: per sender, the S prefix holding its retired sends (a lagging process may
        #: not have delivered it)
        self.rowed = np.zeros(0, np.int64)
        self.buffer: list[tuple[Piece, np.ndarray | None]] = []
        #: per process, whether it has a record yet; ``expect``: processes known before
        #: their first record (tomkit watch --mapping: one log per process); they do not
        #: hold the low watermark: a log that lags reads the retired prefix from disk
        #: (with views too, unless ``VIEW_LAG`` is off: then they hold it at 0)
        self.seen = np.zeros(0, bool)
        #: per process (code), its latest record: an end-of-trace witness names it
        self.last: dict[int, WitnessEvent] = {}
        if expect:
            self._proc_codes(pa.chunked_array([pa.array(list(expect), pa.string())]))

    # ---- reading ------------------------------------------------------------------------

    def feed(self, piece: Piece) -> None:
        """The next records of this trace, in arrival order."""
        table = piece.table
        self.events += table.num_rows
        self.sources[piece.source] = None
        if self.mode == WHOLE:
            if self.keep_whole:
                self.buffer.append((piece, None))
                self._spill()
            return
        proc = self._proc_codes(table.column("process"))
        newcomer = not self.seen[proc].all()
        self.seen[proc] = True
        if not self._seq_follows_arrival(table.column("seq"), proc):
            return self._whole("seq orders a process's records otherwise than they arrive",
                               piece)
        kinds = kind_codes(table.column("kind"))
        member = np.isin(kinds, (VIEW, JOIN, LEAVE))
        if member.any():
            self.has_views = True
        if self.mode == SLOW:
            return self._feed_slow(piece, kinds, proc, newcomer)
        self._note_last(piece, proc)
        if not self.has_views:
            return self._feed_rows(piece, kinds, proc)
        if self.views is None:
            self.views = Views(self.judge_members)
            self.views.grow(len(self.procs))
        # a membership record changes what the records after it mean: the rows between
        # two are fed together, each membership record alone (they are few)
        start = 0
        for r in np.flatnonzero(member | (kinds == CRASH)).tolist():
            if r > start:
                self._feed_rows(_rows(piece, start, r), kinds[start:r], proc[start:r])
                if self.mode != FAST:
                    return self._rest(_rows(piece, r, len(kinds)))
            row = _own(_rows(piece, r, r + 1))  # held for the trace's life
            self.buffer.append((row, np.full(1, -1, np.int64)))
            why = self._member_row(row, int(kinds[r]), int(proc[r]))
            if why:
                self._slow(why)
                return self._rest(_rows(piece, r + 1, len(kinds)))
            start = r + 1
        if start < len(kinds):
            self._feed_rows(_rows(piece, start, len(kinds)), kinds[start:], proc[start:])

    def _feed_slow(self, piece: Piece, kinds: np.ndarray, proc: np.ndarray,
                   newcomer: bool) -> None:
        """Records of a trace that left FAST: held, unless they show that the held records
        no longer stand for the retired prefix (then the trace goes whole)."""
        if self.has_views and self.base:
            # the retired views' summary carried over (viewheld.py), while nothing after
            # the break refutes it
            why = "views appeared after the break" if self.vprefix is None else \
                self.vprefix.refutes(piece, kinds, proc)
            if why:
                return self._whole(f"a broken trace with views, after part of it retired: "
                                   f"{why}", piece)
        self._note_last(piece, proc)  # the end-of-trace witnesses' last events
        if newcomer and self.base and not (self.vprefix is not None and
                                           self.vprefix.welcomes()):
            # the held records stand for the retired prefix only when every process
            # delivered it before them (with views: the views it installed)
            self.passed_by = True
            return self._whole("a process that first appears after the trace broke, "
                               "behind the retired prefix", piece)
        if self._behind_delivers(kinds, proc):
            self.passed_by = True
            return self._whole(BEHIND, piece)
        if self._names_retired(piece.table):
            # as in FAST (_msg_codes): the held records would miss the retired send
            # or delivery it repeats (integrity's count, its witness)
            return self._whole("an id seen again after it retired (or two ids "
                               "sharing a hash)", piece)
        self.buffer.append((piece, None))
        self._follow(piece)
        return self._spill()

    def _names_retired(self, table: pa.Table) -> bool:
        """Whether a record of ``table`` names an id of the retired prefix."""
        if not len(self.retired):
            return False
        col = table.column("msg").combine_chunks()
        if not pa.types.is_dictionary(col.type):
            col = pc.dictionary_encode(col)
        used = np.unique(col.indices.drop_null().to_numpy(zero_copy_only=False))
        if not len(used):
            return False
        h1, _ = hash_ids(col.dictionary.take(pa.array(used)))
        return bool(self.retired.contains(h1).any())

    def _note_last(self, piece: Piece, proc: np.ndarray) -> None:
        """Each process's latest record in the piece, as a witness names it."""
        last = np.full(len(self.procs), -1, np.int64)
        last[proc] = np.arange(len(proc))  # fancy assignment: each process's last row wins
        table, names = piece.table, list(self.procs)
        cols = [table.column(c) for c in ("kind", "msg", "view")]
        for p in np.flatnonzero(last >= 0).tolist():
            r = int(last[p])
            kind, msg, view = (c[r].as_py() for c in cols)
            self.last[p] = WitnessEvent(names[p], kind, msg, None, _location(piece, r), view)

    def _rest(self, piece: Piece) -> None:
        """Rows left of a piece when the trace left FAST part way through it."""
        if not piece.table.num_rows:
            return
        if self.mode == SLOW and self.vprefix is not None:
            # read after the break: judged as any later piece is (a newcomer came first
            # in the part read before the break)
            return self._feed_slow(piece, kind_codes(piece.table.column("kind")),
                                   self._proc_codes(piece.table.column("process")), False)
        if self.mode == SLOW or self.keep_whole:
            self.buffer.append((piece, None))
            if self.mode == SLOW:
                self._follow(piece)
            self._spill()

    def _follow(self, piece: Piece) -> None:
        """Feed a held piece to the follower, dropped once it gives up."""
        if self.follower is not None and not self.follower.feed(piece):
            self.follower.close()
            self.follower = None

    def _spill(self) -> None:
        """Move the held records of a trace that left FAST to the spill file once they
        fill the buffer (spill.py)."""
        if self.mode == FAST or sum(p.table.num_rows for p, _ in self.buffer) < \
                spill_.SPILL_ROWS:
            return
        if self.spill is None:
            self.spill = spill_.Spill(self.spill_dir)
        self.spill.write([p for p, _ in self.buffer])
        self.buffer = []

    def _member_row(self, row: Piece, kind: int, p: int) -> str:
        """One view, join, leave or crash record of a trace with views (views.py); why the
        picture breaks, else ""."""
        vs = self.views
        assert vs is not None
        table = row.table
        if self.left[p]:
            return "a record after its process's leave"
        record = WitnessEvent(list(self.procs)[p], table.column("kind")[0].as_py(), None,
                              None, _location(row, 0), table.column("view")[0].as_py())
        if kind != VIEW:
            vs.end_stretch(p, record.kind)
            if kind == JOIN:
                vs.join(p, record, _clocks(table), int(self.scount[p]))
            if kind == CRASH:
                self.crashed[p] = True
            elif kind == LEAVE:
                self.left[p] = True
            if kind != CRASH:
                self.membership = True
            return ""
        self.view_records = True
        members = table.column("members")[0].as_py()
        why, at = vs.install(p, table.column("view")[0].as_py(),
                             None if members is None else frozenset(members),
                             list(self.procs)[p], self._position(p), self.base + len(self.S),
                             int(self.dcount[p]), int(self.scount[p]), record)
        if why:
            return why
        self.cursor[p] = at
        self.vscount[p] = 0
        return ""

    def _position(self, p: int) -> int:
        """Process p's next S position (-1: its view's range has not started)."""
        c = int(self.cursor[p])
        if c < 0 and self.views is not None and self.views.offset[self.views.cur[p]] >= 0:
            c = self.views.offset[self.views.cur[p]]
        return c

    def _feed_rows(self, piece: Piece, kinds: np.ndarray, proc: np.ndarray) -> None:
        """Records with no membership record among them (or without views at all)."""
        table = piece.table
        if self.views is not None and self.left[proc].any():
            self.buffer.append((piece, None))
            return self._slow("a record after its process's leave")
        codes = self._msg_codes(table.column("msg"), kinds)
        if codes is None:
            return self._whole("an id seen again after it retired (or two ids sharing a hash)",
                               piece)
        self.buffer.append((piece, codes))
        crash = kinds == CRASH
        if crash.any():
            self.crashed[proc[crash]] = True
        s = kinds == SEND
        if self.clocks:
            self._note_clocks(piece, kinds, codes, proc)
        if s.any() and (codes[s] == -2).any():
            why = self._late_deps(table.column("deps"), s & (codes == -2), proc)
            if why:
                return self._slow(why)
        if s.any() and not self._sends(codes[s], proc[s], np.flatnonzero(s), piece):
            return self._slow("a message id sent twice")
        if s.any():
            self._deps(table.column("deps"), s & (codes >= 0), codes, proc)
        d = kinds == DELIVER
        if d.any():
            why = self._deliveries(codes[d], proc[d], table, d)
            if why:
                return self._slow(why) if why != WHOLE else None
            if self._row_h1 is not None:
                self._drop_retired()
        why = self._validate()
        if why:
            return self._slow(why)
        if len(self.S) > (self.trim_at or TRIM_AT):
            why = self._trim()
            if why:
                return self._slow(why)

    def _seq_follows_arrival(self, col: pa.ChunkedArray, proc: np.ndarray) -> bool:
        """Whether ``seq``, where given, numbers each process's records in the order they
        arrive (as a recorder writes them): then arrival order is the local order the
        whole-trace engine sorts by, and the single pass may read them as they come."""
        has = ~np.asarray(col.is_null().to_numpy(zero_copy_only=False), bool)
        np_ = len(self.procs)
        state = np.zeros(np_, np.int8)  # 0 unknown, 1 without seq, 2 with seq
        state[:len(self.seq_kind)] = self.seq_kind[:np_]
        with_seq = np.bincount(proc[has], minlength=np_) > 0
        without = np.bincount(proc[~has], minlength=np_) > 0
        if (with_seq & without).any() or (with_seq & (state == 1)).any() or \
                (without & (state == 2)).any():
            return False
        self.seq_kind = np.where(with_seq, 2, np.where(without, 1, state)).astype(np.int8)
        if not has.any():
            return True
        seq = col.fill_null(0).to_numpy().astype(np.int64)
        self.last_seq = _grow(self.last_seq, np_, -(1 << 62))
        for p in np.flatnonzero(with_seq):
            mine = seq[proc == p]
            if mine[0] <= self.last_seq[p] or (np.diff(mine) <= 0).any():
                return False
            self.last_seq[p] = mine[-1]
        return True

    def _whole(self, why: str, piece: Piece | None = None) -> None:
        """Leave the trace to the whole-trace engine; ``piece``: the records that showed
        why (the delivery step has buffered its piece already)."""
        self.mode, self.why = WHOLE, why
        if self.follower is not None:
            self.follower.close()
            self.follower = None
        if not self.keep_whole:
            self.buffer = []
            self.close()
            return
        self.buffer = [(p, None) for p, _ in self.buffer]
        if piece is not None:
            self.buffer.append((piece, None))

    def _slow(self, why: str) -> None:
        if self.waited:
            # the held records stand for a retired prefix whose sends were all checked
            # before it retired (every sender's first ones)
            return self._whole(f"{why}, after positions retired before their sends came")
        if self.lagged:
            # the held records stand for the retired prefix only when every process
            # delivered it alike before them
            return self._whole(f"{why}, after a process read the retired prefix from disk")
        if self.has_views and self.base:
            # the membership rules read retired installations and deliveries: what each
            # process delivered there is carried over (viewheld.py), when it can be
            prefix = summarize(self)
            if isinstance(prefix, str):
                return self._whole(f"{why}, with views, after part of the trace retired "
                                   f"({prefix})")
            last = self.buffer[-1][0] if self.buffer else None
            refuted = "" if last is None else prefix.refutes(
                last, kind_codes(last.table.column("kind")),
                self._proc_codes(last.table.column("process")))
            if refuted:
                return self._whole(f"{why}, with views, after part of the trace retired "
                                   f"({refuted})")
            self.vprefix = prefix
        self.mode, self.why = SLOW, why
        # where S ended when the picture broke: what was read up to there is around the
        # breach (narrow.py's cut lies at or after it)
        self.broke_at = self.base + len(self.S)
        self.buffer = [(p, None) for p, _ in self.buffer]
        np_ = len(self.procs)
        if self.base and self.vprefix is None:
            # a process seen (by its sends) but behind the retired prefix, or one that
            # crashed there: a delivery of it from now on lies there, where the held
            # records cannot stand for it (the breaking batch's rows may not have been
            # read as deliveries yet)
            self.behind = np.flatnonzero(self.seen[:np_] & (self.cursor[:np_] < self.base))
            if len(self.behind) and self.buffer:
                piece = self.buffer[-1][0]
                if self._behind_delivers(kind_codes(piece.table.column("kind")),
                                         self._proc_codes(piece.table.column("process"))):
                    self.passed_by = True
                    self._whole(BEHIND)

    def _behind_delivers(self, kinds: np.ndarray, proc: np.ndarray) -> bool:
        """Whether a process behind the retired prefix when the trace broke delivers
        among these rows (then the trace goes whole)."""
        return bool(len(self.behind)) and \
            bool(((kinds == DELIVER) & np.isin(proc, self.behind)).any())

    def _proc_codes(self, col: pa.ChunkedArray) -> np.ndarray:
        idx, names = _dictionary(col)
        table = np.array([self.procs.setdefault(x, len(self.procs)) for x in names], np.int64)
        n = len(self.procs)
        self.seen = _grow(self.seen, n, False)
        self.dcount = _grow(self.dcount, n, 0)
        self.cursor = _grow(self.cursor, n, 0)
        self.left = _grow(self.left, n, False)
        self.scount = _grow(self.scount, n, 0)
        self.vscount = _grow(self.vscount, n, 0)
        self.crashed = _grow(self.crashed, n, False)
        self.fifo_next = _grow(self.fifo_next, n, 0)
        self.fifo_view = _grow(self.fifo_view, n, 0)
        if self.views is not None:
            self.views.grow(n)
        self.soff = _grow(self.soff, n, 0)
        self.rowed = _grow(self.rowed, n, 0)
        self.last_send = _grow(self.last_send, n, -1)
        return table[idx]

    def _msg_codes(self, col: pa.ChunkedArray, kinds: np.ndarray) -> np.ndarray | None:
        """Codes of the batch's message ids (-1: none; -2: retired, on a record no property
        here reads, dropped at the next trim); None when a send or delivery names an id
        that was retired, or two ids share a first hash (hashes.py)."""
        idx, values = _dictionary_array(col)
        self._row_h1 = self._row_h2 = None
        used = np.zeros(len(values), bool)
        used[idx[idx >= 0]] = True
        at = np.flatnonzero(used)  # the dictionary's entries this batch uses
        h1, h2 = hash_ids(values.take(pa.array(at)))
        code = self.ids.get(h1)
        known = code >= 0
        if (self.h2[code[known]] != h2[known]).any():
            return None
        new = np.flatnonzero(~known)
        if len(new) and len(self.retired):
            hit = self.retired.contains(h1[new])
            if hit.any():
                sent = np.zeros(len(values), bool)
                sent[idx[(kinds == SEND) & (idx >= 0)]] = True
                ours = new[hit][sent[at[new[hit]]]]
                if len(ours) and not self._awaited(h1[ours], h2[ours]):
                    return None
                # a retired id delivered again: by a process lagging behind the retired
                # prefix, at its position there (_deliveries judges, by both hashes)
                code[new[hit]] = -2
                rh1 = np.zeros(len(values), np.uint64)
                rh2 = np.zeros(len(values), np.uint64)
                rh1[at], rh2[at] = h1, h2
                some = idx >= 0
                self._row_h1 = np.zeros(len(idx), np.uint64)
                self._row_h2 = np.zeros(len(idx), np.uint64)
                self._row_h1[some], self._row_h2[some] = rh1[idx[some]], rh2[idx[some]]
                new = new[~hit]
        if len(new):
            if len(np.unique(h1[new])) < len(new):
                return None
            start = self.nmsgs
            self.nmsgs += len(new)
            code[new] = np.arange(start, self.nmsgs)
            self.ids.add(h1[new], code[new])
            n = self.nmsgs
            self.h1 = _grow(self.h1, n, 0)
            self.h2 = _grow(self.h2, n, 0)
            self.h1[start:n], self.h2[start:n] = h1[new], h2[new]
            self.sender = _grow(self.sender, n, -1)
            self.rank = _grow(self.rank, n, -1)
            self.sidx = _grow(self.sidx, n, -1)
            self.spos = _grow(self.spos, n, -1)
            self.sview = _grow(self.sview, n, -1)
            self.dview = _grow(self.dview, n, -1)
            self.first_seen = _grow(self.first_seen, n, 0.0)
            for c in self.clocks:
                self.t_send[c] = _grow(self.t_send[c], n, np.nan)
            self.first_seen[start:n] = time.time()
        table = np.full(len(values), -1, np.int64)
        table[at] = code
        out = np.full(len(idx), -1, np.int64)
        some = idx >= 0
        out[some] = table[idx[some]]
        return out

    def _awaited(self, h1: np.ndarray, h2: np.ndarray) -> bool:
        """Whether retired ids (their hashes) are of positions still waiting for their
        sends (``waiting``; by both hashes)."""
        if self.past is None or not len(self.w_sender):
            return False
        pos = self.waiting.get(h1)
        if (pos < self.vpos).any():  # not waiting (validated): an id sent again
            return False
        return bool((self.past.at(pos)["h2"] == h2).all())

    def _sends(self, cs: np.ndarray, ps: np.ndarray, rows: np.ndarray,
               piece: Piece) -> bool:
        np_ = len(self.procs)
        self.sidx = _grow(self.sidx, self.nmsgs, -1)  # (a state from before it: short)
        nth = cumcount(ps, np_)
        rank = self.vscount[ps] + nth  # its rank in its view
        sidx = self.scount[ps] + nth  # its index among its sender's sends
        wait = cs == -2  # a message retired before its send came (_trim)
        cur = np.full(np_, NONE, np.int64) if self.views is None else \
            np.asarray(self.views.cur[:np_], np.int64)
        if wait.any():
            at = self.waiting.get(self._row_h1[rows[wait]]) - self.vpos
            if (self.w_sender[at] >= 0).any() or len(np.unique(at)) < len(at):
                return False
            self.w_sender[at], self.w_rank[at] = ps[wait], rank[wait]
            self.w_sview[at] = cur[ps[wait]]  # checked against w_view (_validate_waiting)
            if self.past is not None and self.witnesses:  # its witness, where it retired
                r = rows[wait]
                self.past.fill(at + self.vpos, Sends(
                    ps[wait], sidx[wait], piece.lines[r].astype(np.int64),
                    np.full(len(r), self.past.source(piece.source, piece.fmt)),
                    send_clocks(piece.table, r)))
            if self.clocks:
                self._sent_late(self.vpos + at, ps[wait], rows[wait])
        # each sender's latest send (fancy assignment: the last row of each wins); a
        # retired one holds nothing
        latest = np.full(np_, -3, np.int64)
        latest[ps] = np.where(wait, -1, cs)
        per = np.bincount(ps, minlength=np_)
        cs, ps, rank, sidx = cs[~wait], ps[~wait], rank[~wait], sidx[~wait]
        if (self.sender[cs] >= 0).any():
            return False
        seen = np.zeros(self.nmsgs, bool)
        seen[cs] = True
        if int(seen.sum()) < len(cs):  # one id twice in this batch
            return False
        self.rank[cs] = rank
        self.sidx[cs] = sidx
        self.sender[cs] = ps
        self.last_send[:np_] = np.where(latest > -3, latest, self.last_send[:np_])
        self.scount[:np_] += per
        self.vscount[:np_] += per
        self.sview[cs] = cur[ps]
        if self.views is not None:
            for p in np.flatnonzero(per):
                self.views.sends[cur[p]] += int(per[p])
        return True

    def _deliveries(self, cd: np.ndarray, pd: np.ndarray, table: pa.Table,
                    rows: np.ndarray) -> str:
        """The batch's deliveries (``rows`` of ``table``): their positions, S grown or
        compared; why the picture broke, else "" (WHOLE: the trace went whole)."""
        np_ = len(self.procs)
        vs = self.views
        per = np.bincount(pd, minlength=np_)
        if vs is not None:
            for p in np.flatnonzero(per):
                if self.cursor[p] < 0:  # the first delivery in its view: lay its range out
                    v = vs.cur[p]
                    why = vs.start(v, self.base + len(self.S))
                    if why:
                        return why
                    # every process in the view starts there (and holds the low watermark)
                    cur = np.asarray(vs.cur[:np_], np.int64)
                    self.cursor[:np_][(cur == v) & (self.cursor[:np_] < 0)] = vs.offset[v]
        k = self.cursor[pd] + cumcount(pd, np_)
        self.dcount[:np_] += per
        self.cursor[:np_] += per
        if vs is not None:
            for p in np.flatnonzero(per):
                end = vs.end_of(vs.cur[p])
                if 0 <= end < self.cursor[p]:
                    return ("a delivery in a view after a process moved on from it having "
                            "delivered less")
        lag = k < self.base
        if lag.any():
            why = self._lagging(k[lag], cd[lag], pd[lag], np.flatnonzero(rows)[lag])
            if why:
                self._whole(why)
                return WHOLE
            k, cd = k[~lag], cd[~lag]
        if (cd == -2).any():
            self._whole("an id seen again after it retired (or two ids sharing a hash)")
            return WHOLE
        end = self.base + len(self.S)
        new = k >= end
        if new.any():
            kn, cn = k[new] - end, cd[new]
            added = np.empty(int(kn.max()) + 1, np.int64)
            added[kn[::-1]] = cn[::-1]  # reversed: the first row at each position wins
            pos = np.arange(end, end + len(added))
            if (self.spos[added] >= 0).any():
                return "a message at two positions of the sequence (a repeat or a gap)"
            self.spos[added] = pos
            if (self.spos[added] != pos).any():  # one message at two new positions
                return "a message at two positions of the sequence (a repeat or a gap)"
            self.dview[added] = NONE if vs is None else vs.growing
            self.S = np.concatenate((self.S, added))
        if (self.S[k - self.base] != cd).any():
            return "deliveries that are not prefixes of one sequence"
        return ""

    def _drop_retired(self) -> None:
        """Drop the latest piece's records of retired messages (a lagging process's
        deliveries, judged already): a trace that lagged goes whole if it breaks, so
        they are never read again."""
        piece, codes = self.buffer[-1]
        if self.past is not None and self.witnesses:  # the lagging deliveries' lines
            self._retire_deliveries(piece, codes == -2)
        keep = np.flatnonzero(codes != -2)
        if not len(keep):
            # an empty slice would still hold the batch's dictionaries (its ids)
            self.buffer.pop()
            return
        if len(keep) < len(codes):
            self.buffer[-1] = (Piece(piece.table.take(pa.array(keep)), piece.lines[keep],
                                     piece.source, piece.fmt), codes[keep])

    def _lagging(self, k: np.ndarray, cd: np.ndarray, pd: np.ndarray,
                 rows: np.ndarray) -> str:
        """Deliveries at retired positions ``k`` by processes ``pd`` (lagging behind the
        retired prefix), ``rows`` of the batch: each must be the retired S[k], by both
        hashes (retired.py); its latency folds into the retired messages' tally. Why the
        trace goes whole, else ""."""
        # with views too: position k lies in the range of the lagging process's view
        # (its cursor is that view's range start plus its deliveries in it, checked
        # against the view's frozen length), and S[k] was checked to be sent in it
        self.passed_by = True
        if self.past is None or self._row_h1 is None or \
                (cd != -2).any():
            return "a process lags behind the retired prefix"
        past = self.past.at(k)
        if (past["h1"] != self._row_h1[rows]).any() or \
                (past["h2"] != self._row_h2[rows]).any():
            return "a process lagging behind the retired prefix delivers otherwise there"
        self.lagged = True
        if self.clocks:
            self._fold_lagging(past, pd, rows, k)
        return ""

    def _late_deps(self, col: pa.ChunkedArray, rows: np.ndarray, proc: np.ndarray) -> str:
        """The deps of sends (``rows``) of positions that retired before them (the awaited
        sends): each dependency must lie before its message's position P in S. One in
        the window lies after P; one still waiting for its send has its position in
        ``waiting``; any other retired one was validated, so it lies below the FIFO
        pointer, which is at most P. Why the picture broke, else ""."""
        col = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
        if col.null_count == len(col):
            return ""
        has = rows & ~np.asarray(col.is_null().to_numpy(zero_copy_only=False), bool)
        at = np.flatnonzero(has)
        if not len(at):
            return ""
        self.deps_from.update(np.unique(proc[at]).tolist())
        lists = col.take(pa.array(at))
        lens = np.asarray(pc.list_value_length(lists).to_numpy(zero_copy_only=False),
                          np.int64)
        if not lens.sum():
            return ""
        assert self._row_h1 is not None  # a retired id in the batch (_msg_codes)
        where = np.repeat(self.waiting.get(self._row_h1[at]), lens)  # each one's P
        h1, h2 = hash_ids(pc.list_flatten(lists))
        code = self.ids.get(h1)
        if ((code >= 0) & (self.h2[np.maximum(code, 0)] == h2)).any():
            return "a message before one of its dependencies"
        if not self.retired.contains(h1).all():
            return "a message before one of its dependencies"
        pos = self.waiting.get(h1) if len(self.w_sender) else np.full(len(h1), -1)
        waits = pos >= self.vpos
        if waits.any():
            assert self.past is not None
            if (self.past.at(pos[waits])["h2"] != h2[waits]).any() or \
                    (pos[waits] >= where[waits]).any():
                return "a message before one of its dependencies"
        return ""

    def _deps(self, col: pa.ChunkedArray, s: np.ndarray, codes: np.ndarray,
              proc: np.ndarray) -> None:
        """Keep the deps of the batch's sends until their message is validated in S."""
        col = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
        if col.null_count == len(col):
            return
        rows = np.flatnonzero(s & ~np.asarray(col.is_null().to_numpy(zero_copy_only=False),
                                              bool))
        if not len(rows):
            return
        self.deps_from.update(np.unique(proc[rows]).tolist())
        lists = col.take(pa.array(rows))
        lens = np.asarray(pc.list_value_length(lists).to_numpy(zero_copy_only=False),
                          np.int64)
        if not lens.sum():
            return
        h1, h2 = hash_ids(pc.list_flatten(lists))
        self.dep_m = np.concatenate((self.dep_m, np.repeat(codes[rows], lens)))
        self.dep_h1 = np.concatenate((self.dep_h1, h1))
        self.dep_h2 = np.concatenate((self.dep_h2, h2))

    def _validate(self) -> str:
        """Advance ``vpos`` over S while the sends are known: FIFO on S, and causal order
        (each dependency earlier in S, or retired); why the picture broke, else ""."""
        if self.vpos < self.base:
            why = self._validate_waiting()
            if why or self.vpos < self.base:
                return why
        seg = self.S[self.vpos - self.base:]
        snd = self.sender[seg]
        unknown = np.flatnonzero(snd < 0)
        stop = int(unknown[0]) if len(unknown) else len(seg)
        if stop == 0:
            return ""
        seg, snd = seg[:stop], snd[:stop].astype(np.int64)
        np_ = len(self.procs)
        dv = self.dview[seg]
        if (self.sview[seg] != dv).any():
            return "a message delivered in another view than the one it was sent in"
        # FIFO within each view's range: each sender's ranks in that view, from 0
        cuts = np.flatnonzero(dv[1:] != dv[:-1]) + 1
        for a, b in zip(np.concatenate(([0], cuts)).tolist(),
                        np.concatenate((cuts, [stop])).tolist()):
            s = snd[a:b]
            other = self.fifo_view[:np_] != dv[a]
            self.fifo_next[:np_][other] = 0
            self.fifo_view[:np_][other] = dv[a]
            if (self.rank[seg[a:b]] != self.fifo_next[s] + cumcount(s, np_)).any():
                return "a sender's messages out of send order"
            self.fifo_next[:np_] += np.bincount(s, minlength=np_)
        if len(self.dep_m):
            mine = np.isin(self.dep_m, seg)
            if mine.any() and not self._deps_before(self.dep_m[mine], self.dep_h1[mine],
                                                   self.dep_h2[mine]):
                return "a message before one of its dependencies"
            keep = ~mine
            self.dep_m, self.dep_h1, self.dep_h2 = (self.dep_m[keep], self.dep_h1[keep],
                                                    self.dep_h2[keep])
        self.vpos += stop
        return ""

    def _validate_waiting(self) -> str:
        """Advance ``vpos`` over positions retired before their sends came, while their
        senders are known (``w_sender``): FIFO on S, as ``_validate`` checks it."""
        snd = self.w_sender
        unknown = np.flatnonzero(snd < 0)
        stop = int(unknown[0]) if len(unknown) else len(snd)
        if not stop:
            return ""
        np_ = len(self.procs)
        s = snd[:stop]
        dv = self.w_view[:stop]
        if (self.w_sview[:stop] != dv).any():
            return "a message delivered in another view than the one it was sent in"
        # FIFO within each view's range, along the waiting positions as along S
        cuts = np.flatnonzero(dv[1:] != dv[:-1]) + 1
        for a, b in zip(np.concatenate(([0], cuts)).tolist(),
                        np.concatenate((cuts, [stop])).tolist()):
            other = self.fifo_view[:np_] != dv[a]
            self.fifo_next[:np_][other] = 0
            self.fifo_view[:np_][other] = dv[a]
            if (self.w_rank[a:b] != self.fifo_next[s[a:b]] + cumcount(s[a:b], np_)).any():
                return "a sender's messages out of send order"
            self.fifo_next[:np_] += np.bincount(s[a:b], minlength=np_)
        per = np.bincount(s, minlength=np_)
        self.soff[:np_] += per
        np.maximum.at(self.rowed, s, self.vpos + np.arange(1, stop + 1))
        self.w_sender, self.w_rank = snd[stop:], self.w_rank[stop:]
        self.w_view, self.w_sview = self.w_view[stop:], self.w_sview[stop:]
        self.vpos += stop
        if not len(self.w_sender):
            self.waiting = IdMap()  # every one came
        return ""

    def _deps_before(self, m: np.ndarray, h1: np.ndarray, h2: np.ndarray) -> bool:
        """Whether each dependency (hashes) of message code ``m`` lies before it in S: in
        the window (its code's position below m's), or retired."""
        code = self.ids.get(h1)
        known = code >= 0
        ok = np.zeros(len(m), bool)
        c = code[known]
        ok[known] = (self.h2[c] == h2[known]) & (self.spos[c] >= 0) & \
            (self.spos[c] < self.spos[m[known]])
        rest = np.flatnonzero(~known)
        if len(rest) and len(self.retired):
            ok[rest] = self.retired.contains(h1[rest])
        return bool(ok.all())

    def _trim(self) -> str:
        """Retire the positions every process (but a crashed one) has passed; why the
        picture broke (a message retiring before it is validated, before one of its
        dependencies), else ""."""
        np_ = len(self.procs)
        # a process whose view's range has not started will deliver after S's end
        live = ~self.crashed[:np_] & ~self.left[:np_] & (self.cursor[:np_] >= 0)
        if self.views is None or VIEW_LAG:
            # a process lagging behind the retired prefix, or not come yet, reads it from
            # disk when it comes (``past``; with views, its position lies in the range of
            # its view, _lagging); so does one that has delivered nothing yet (a client
            # that only sends) once S's end is two windows past it (not a process whose
            # first delivery is logged a little after the others'; as the awaited sends,
            # below): its first deliveries, if any come, read the retired prefix from
            # disk as a newcomer's do, and what its sends need is held below (its latest
            # send); it held the watermark at its cursor for the whole run. Not with
            # views: a break after it was passed would go whole (a process behind the
            # retired prefix that logs a record after the break: viewheld.py), where the
            # held records decide it (the real systems' fixtures)
            held = self.seen[:np_] & (self.cursor[:np_] >= self.base)
            if SENDERS_PASS and self.views is None:
                ahead = self.base + len(self.S) - self.cursor[:np_]
                grace = max(self.await_after or 0, 2 * (self.trim_at or TRIM_AT))
                held &= (self.dcount[:np_] > 0) | (ahead <= grace)
            passed = live & ~held
            live &= ~passed
            self.passed_by |= bool(passed.any())
        # no process holds it (every one seen crashed, left or lags): S's end, so that
        # the sends are awaited past the FIFO pointer as when one does (``wait``)
        low = int(self.cursor[:np_][live].min()) if live.any() else self.base + len(self.S)
        # past the FIFO pointer too, when nothing else needs the messages' codes there
        # (their sends validated from ``w_sender`` as they come, _validate_waiting)
        wait = AWAIT_SENDS and (VIEW_LAG or not self.has_views)
        end = self.base + len(self.S)
        if wait:
            # only once the pointer is two windows behind S's end (a grouped file, not a
            # send logged a little after its deliveries), or tomkit watch's own distance:
            # a break after positions retired unchecked goes whole (or is read again
            # interleaved, regroup.py), where the window would have decided it on the held
            # records (with views, the retired views carried over, viewheld.py)
            after = max(self.await_after or 0, 2 * (self.trim_at or TRIM_AT))
            end = max(self.vpos, end - after)
        w = min(low, end if wait else self.vpos, self.base + len(self.S) - 1)
        # every sender keeps its latest send held, so that the held records have sends
        # wherever the trace has (integrity's and FIFO's unknown verdicts turn on it);
        # but a crashed one's would hold the window from it on for the rest of the run:
        # a sender that did not crash keeps one held, in both scopes
        senders = self.scount[:np_] > 0
        if (senders & ~self.crashed[:np_]).any():
            senders &= ~self.crashed[:np_]
        last = self.last_send[:np_][senders]
        at = self.spos[last[last >= 0]]
        if (at >= 0).any():
            w = min(w, int(at[at >= 0].min()))
        if w - self.base < (self.trim_at or TRIM_AT) // 2:
            return ""
        gone = self.S[:w - self.base]
        if len(self.dep_m):
            # a message retiring past the FIFO pointer, its send read but not validated:
            # its dependencies are checked now, while its position and theirs are known
            # (each before it in S: in the window below it, or retired)
            mine = np.isin(self.dep_m, gone)
            if mine.any():
                if not self._deps_before(self.dep_m[mine], self.dep_h1[mine],
                                         self.dep_h2[mine]):
                    return "a message before one of its dependencies"
                keep_dep = ~mine
                self.dep_m, self.dep_h1, self.dep_h2 = (self.dep_m[keep_dep],
                                                        self.dep_h1[keep_dep],
                                                        self.dep_h2[keep_dep])
        # from the FIFO pointer on, their sends are still to come
        first = min(max(self.vpos - self.base, 0), len(gone))
        if first < len(gone):
            late = gone[first:]
            self.waited = True
            self.waiting.add(self.h1[late], np.arange(self.base + first, w, dtype=np.int64))
            self.w_sender = np.concatenate((self.w_sender, self.sender[late].astype(np.int64)))
            self.w_rank = np.concatenate((self.w_rank, self.rank[late]))
            # the view of each one's range, and its sending view where its send was read
            self.w_view = np.concatenate((self.w_view, self.dview[late]))
            self.w_sview = np.concatenate((self.w_sview, self.sview[late]))
        self.retired.add(self.h1[gone])
        self.sidx = _grow(self.sidx, self.nmsgs, -1)  # (a state from before it: short)
        if self.past is None:
            self.past = RetiredSequence(self.clocks, self.spill_dir)
        ids, sends = self._retire_witnesses(gone) if self.witnesses else (None, None)
        if self.clocks:
            out = np.zeros(self.nmsgs, bool)
            out[gone] = True
            leaving = out[self._dl()["code"]]
            sent = self.sender[self.dl["code"]] >= 0
            for c in self.clocks:
                self.tally[c] = self._fold(c, np.flatnonzero(leaving & sent), self.tally[c])
            # a position retiring before its send was read: its deliveries wait for it
            wait_rows = np.flatnonzero(leaving & ~sent)
            if len(wait_rows):
                add = {k: self.dl[k][wait_rows] for k in self.dl if k != "code"}
                add["pos"] = self.spos[self.dl["code"][wait_rows]]
                self._pend(add)
            self.dl = {k: v[~leaving] for k, v in self.dl.items()}
        self.past.append(self.h1[gone], self.h2[gone],
                         {c: self.t_send[c][gone] for c in self.clocks}, ids, sends)
        checked = gone[:first]
        self.soff[:np_] += np.bincount(self.sender[checked], minlength=np_)
        np.maximum.at(self.rowed, self.sender[checked].astype(np.int64),
                      self.spos[checked] + 1)
        self.S = self.S[w - self.base:]
        self.base = w
        keep = np.ones(self.nmsgs, bool)
        keep[gone] = False
        remap = np.cumsum(keep) - 1
        self.last_send[:np_] = np.where(self.last_send[:np_] >= 0,
                                        remap[np.maximum(self.last_send[:np_], 0)], -1)
        for attr in ("sender", "rank", "sidx", "spos", "sview", "dview", "h1", "h2",
                     "first_seen"):
            setattr(self, attr, getattr(self, attr)[:self.nmsgs][keep])
        for c in self.clocks:
            self.t_send[c] = self.t_send[c][:self.nmsgs][keep]
        if self.clocks:
            self.dl["code"] = remap[self.dl["code"]]
        self.nmsgs = int(keep.sum())
        self.ids = IdMap()
        self.ids.add(self.h1, np.arange(self.nmsgs, dtype=np.int64))
        self.dep_m = remap[self.dep_m]  # those of retiring messages were checked above
        self.S = remap[self.S]
        buf = []
        for piece, codes in self.buffer:
            mask = (codes == -1) | ((codes >= 0) & keep[np.maximum(codes, 0)])
            if not mask.any():
                continue
            if not mask.all():
                idx = np.flatnonzero(mask)
                piece = Piece(piece.table.take(pa.array(idx)), piece.lines[idx],
                              piece.source, piece.fmt)
                codes = codes[idx]
            buf.append((piece, np.where(codes >= 0, remap[np.maximum(codes, 0)], -1)))
        self.buffer = buf
        return ""

    # ---- latencies (latencies.py) --------------------------------------------------------

    def _src(self, piece: Piece) -> int:
        return self.src_names.setdefault((piece.source, piece.fmt), len(self.src_names))

    def _where(self, src: int, line: int) -> Location:
        source, fmt = list(self.src_names)[src]
        return Location(source, row=line) if fmt == "parquet" else Location(source, line=line)

    def _note_clocks(self, piece: Piece, kinds: np.ndarray, codes: np.ndarray,
                     proc: np.ndarray) -> None:
        """A batch's send times, indexes and locations (by message code), and its window
        deliveries (``dl``), before its sends and deliveries are counted."""
        table, np_ = piece.table, len(self.procs)
        src = self._src(piece)
        times = {c: np.asarray(table.column(c).to_numpy(zero_copy_only=False), np.float64)
                 if c in table.column_names else None for c in self.clocks}
        self._batch, self._times = piece, times
        s = np.flatnonzero(kinds == SEND)
        if len(s):
            index = self.scount[proc[s]] + cumcount(proc[s], np_)
            self._sindex = np.full(len(kinds), -1, np.int64)
            self._sindex[s] = index
            ok = codes[s] >= 0  # -2: a send retired before it came (_sends)
            cs = codes[s][ok]
            for c, t in times.items():
                self.t_send[c][cs] = np.nan if t is None else t[s][ok]
        d = np.flatnonzero(kinds == DELIVER)
        if not len(d):
            return
        index = self.dcount[proc[d]] + cumcount(proc[d], np_)
        # a retired one (-2) is a lagging delivery, folded as it is read (_lagging)
        self._dindex = np.full(len(kinds), -1, np.int64)
        self._dindex[d] = index
        ok = codes[d] >= 0
        if not ok.all():
            d, index = d[ok], index[ok]
        add = {"code": codes[d], "proc": proc[d], "index": index,
               "line": np.asarray(piece.lines[d], np.int64),
               "src": np.full(len(d), src, np.int64)}
        for c, t in times.items():
            add[f"t_{c}"] = np.full(len(d), np.nan) if t is None else t[d]
        self.dl_parts.append(add)  # joined when read (_dl): one copy a trim, not a batch

    def _dl(self) -> dict[str, np.ndarray]:
        """The window's deliveries (``dl``), the batches' parts joined."""
        if self.dl_parts:
            self.dl = {k: np.concatenate([v] + [a[k] for a in self.dl_parts])
                       for k, v in self.dl.items()}
            self.dl_parts = []
        return self.dl

    def _fold(self, clock: str, rows: np.ndarray, into: Tally) -> Tally:
        """``into`` with the window deliveries ``rows`` (of ``dl``) on ``clock``; their
        messages' sends are read (a message retires or a trace ends clean only then)."""
        dl = self.dl
        code = dl["code"][rows]
        x = dl[f"t_{clock}"][rows] - self.t_send[clock][code]
        ok = ~np.isnan(x)
        into.unmeasured += int(len(x) - ok.sum())
        names = list(self.procs)
        sel = rows[ok]

        def resolve(r: int) -> Slowest:
            row = int(sel[r])
            m = int(dl["code"][row])
            # its send was read, and its records are held until it retires: the send
            # record gives the id and the location (the one source, as for the retired
            # sequence's send witnesses)
            piece, i = next(self._held(m, "send"))
            return Slowest(float(x[ok][r]), names[int(dl["proc"][row])], int(dl["index"][row]),
                           piece.table.column("msg")[i].as_py(),
                           self._where(int(dl["src"][row]), int(dl["line"][row])),
                           names[int(self.sender[m])], int(self.sidx[m]), _location(piece, i))

        into.add(x[ok], dl["proc"][sel], names, dl["index"][sel], resolve)
        return into

    def _fold_lagging(self, past: np.ndarray, pd: np.ndarray, rows: np.ndarray,
                      k: np.ndarray) -> None:
        """Lagging deliveries (``rows`` of the batch, processes ``pd``, at retired
        positions ``k``; ``past``: those positions' retired rows) into the retired
        messages' tally, or, where the send is not read yet, waiting for it (``pend``)."""
        piece = self._batch
        assert piece is not None
        table = piece.table
        names = list(self.procs)
        assert self.past is not None
        sent = self.past.witness_at(k)  # the sends (retired.py; -1: not read yet)
        later = sent["sender"] < 0
        if later.any():
            r = rows[later]
            add = {"pos": k[later], "proc": pd[later], "index": self._dindex[r],
                   "line": piece.lines[r].astype(np.int64),
                   "src": np.full(len(r), self._src(piece), np.int64)}
            for c, t in self._times.items():
                add[f"t_{c}"] = np.full(len(r), np.nan) if t is None else t[r]
            self._pend(add)
            past, pd, rows, k, sent = (past[~later], pd[~later], rows[~later], k[~later],
                                       sent[~later])
        filled = self.past.send_clocks(k) if len(k) else {}
        for c, t in self._times.items():
            # a send read after its position retired has its time in the clocks' files
            t0 = np.where(np.isnan(past[f"t_{c}"]), filled.get(c, np.nan), past[f"t_{c}"])
            x = (np.full(len(rows), np.nan) if t is None else t[rows]) - t0
            ok = ~np.isnan(x)
            self.tally[c].unmeasured += int(len(x) - ok.sum())
            at = np.flatnonzero(ok)

            def resolve(r: int, x: np.ndarray = x, at: np.ndarray = at) -> Slowest:
                i = int(at[r])
                row, w = int(rows[i]), sent[i]
                assert self.past is not None and int(w["sloc"]) >= 0
                return Slowest(float(x[i]), names[int(pd[i])], int(self._dindex[row]),
                               table.column("msg")[row].as_py(), _location(piece, row),
                               names[int(w["sender"])], int(w["sidx"]),
                               self.past.location(int(w["sloc"])))

            self.tally[c].add(x[ok], pd[ok], names, self._dindex[rows][ok], resolve)

    def _pend(self, add: dict[str, np.ndarray]) -> None:
        order = np.argsort(add["pos"], kind="stable")
        self.pend.append({k: v[order] for k, v in add.items()})

    def _sent_late(self, pos: np.ndarray, ps: np.ndarray, rows: np.ndarray) -> None:
        """Sends (``rows`` of the batch, by processes ``ps``) of positions ``pos`` that
        retired before they were read (on disk already: ``_sends``): the deliveries that
        waited for them measured."""
        piece = self._batch
        assert piece is not None
        t_send = {c: np.full(len(rows), np.nan) if t is None else t[rows]
                  for c, t in self._times.items()}
        if not self.pend:
            return
        order = np.argsort(pos)
        spos = pos[order]
        found = []  # per part, the rows of it waiting for these sends, and their sends
        for part in self.pend:
            lo = np.searchsorted(part["pos"], spos, "left")
            n = np.searchsorted(part["pos"], spos, "right") - lo
            if n.any():
                found.append((part, concat_ranges(lo, n), np.repeat(order, n)))
        if not found:
            return
        pend = {k: np.concatenate([part[k][at] for part, at, _ in found])
                for k in found[0][0]}
        which = np.concatenate([w for _, _, w in found])  # the send of each
        names = list(self.procs)
        table = piece.table
        for c in self.clocks:
            x = pend[f"t_{c}"] - t_send[c][which]
            ok = ~np.isnan(x)
            self.tally[c].unmeasured += int(len(x) - ok.sum())
            at = np.flatnonzero(ok)

            def resolve(r: int, x: np.ndarray = x, at: np.ndarray = at) -> Slowest:
                i = int(at[r])
                w = int(which[i])
                row = int(rows[w])
                return Slowest(float(x[i]), names[int(pend["proc"][i])],
                               int(pend["index"][i]), table.column("msg")[row].as_py(),
                               self._where(int(pend["src"][i]), int(pend["line"][i])),
                               names[int(ps[w])], int(self._sindex[row]),
                               _location(piece, row))

            self.tally[c].add(x[ok], pend["proc"][ok], names, pend["index"][ok], resolve)
        hit = {id(part): at for part, at, _ in found}
        rest = []
        for part in self.pend:
            at = hit.get(id(part))
            if at is not None:
                keep = np.ones(len(part["pos"]), bool)
                keep[at] = False
                part = {k: v[keep] for k, v in part.items()}
            if len(part["pos"]):
                rest.append(part)
        self.pend = rest

    def latencies(self, clock: str) -> Tally:
        """The measured first deliveries so far on ``clock`` whose sends were read: the
        retired messages' and the window's (a clean trace's at its end: every one)."""
        out = Tally()
        sent = self.sender[self._dl()["code"]] >= 0
        self._fold(clock, np.flatnonzero(sent), out)
        return self.tally[clock].merge(out)
    def _retire_witnesses(self, gone: np.ndarray) -> tuple[pa.Array | None, Sends]:
        """What the end-of-trace witnesses cite of the retiring messages ``gone`` (codes,
        in S's order), read from their held records before these leave (retired.py):
        their ids, their sends, and each process's deliveries of them (appended to the
        retired sequence here, in each process's order)."""
        assert self.past is not None
        n = len(gone)
        where = np.full(self.nmsgs, -1, np.int64)
        where[gone] = np.arange(n)
        found = np.zeros(n, bool)
        chunks: list[tuple[np.ndarray, pa.Array]] = []
        line = np.full(n, -1, np.int64)
        src = np.zeros(n, np.int64)
        clocks = {c: np.full(n, np.nan) for c in ("time", "real_time", "slot")}
        for piece, codes in self.buffer:
            if codes is None:
                continue
            rows = np.flatnonzero(codes >= 0)
            g = where[codes[rows]]
            rows, g = rows[g >= 0], g[g >= 0]
            if not len(rows):
                continue
            first = np.full(n, -1, np.int64)  # per message, its first row here
            first[g[::-1]] = rows[::-1]
            u = np.flatnonzero((first >= 0) & ~found)
            if len(u):
                ids = piece.table.column("msg").take(pa.array(first[u]))
                ids = ids.combine_chunks() if isinstance(ids, pa.ChunkedArray) else ids
                if pa.types.is_dictionary(ids.type):
                    ids = ids.dictionary_decode()
                chunks.append((u, ids.cast(pa.large_string())))
                found[u] = True
            kinds = kind_codes(piece.table.column("kind"))
            s = kinds[rows] == SEND
            if s.any():
                line[g[s]] = piece.lines[rows[s]]
                src[g[s]] = self.past.source(piece.source, piece.fmt)
                for c, v in send_clocks(piece.table, rows[s]).items():
                    clocks[c][g[s]] = v
            mask = np.zeros(len(codes), bool)
            mask[rows] = True
            self._retire_deliveries(piece, mask, kinds)
        ids = None
        if found.all() and chunks:
            order = np.argsort(np.concatenate([u for u, _ in chunks]))
            ids = pa.concat_arrays([a for _, a in chunks]).take(pa.array(order))
        sidx = self.sidx[gone]
        line[sidx < 0] = -1  # an index not known: its send is not kept (whole)
        return ids, Sends(self.sender[gone].astype(np.int64), sidx, line, src, clocks)

    def _retire_deliveries(self, piece: Piece, mask: np.ndarray,
                           kinds: np.ndarray | None = None) -> None:
        """Each process's deliveries among ``piece``'s rows ``mask``, leaving memory: their
        lines go to the retired sequence in its delivery order (retired.py)."""
        assert self.past is not None
        if kinds is None:
            kinds = kind_codes(piece.table.column("kind"))
        rows = np.flatnonzero(mask & (kinds == DELIVER))
        if not len(rows):
            return
        proc = self._proc_codes(piece.table.column("process"))[rows]
        # each process's rows, in its order (a radix sort on 16 bits)
        order = np.argsort(proc.astype(np.int16) if len(self.procs) < 1 << 15 else proc,
                           kind="stable")
        per = np.bincount(proc, minlength=len(self.procs))
        lines = np.asarray(piece.lines, np.int64)[rows[order]]
        names = list(self.procs)
        at = 0
        for p in np.flatnonzero(per).tolist():
            self.past.deliveries(names[p], lines[at:at + per[p]], piece.source, piece.fmt)
            at += int(per[p])

    def latency(self, clock: str) -> tuple[float | None, int]:
        """The largest send-to-delivery latency on ``clock`` so far (None: none measured),
        and the message in the window that has it (-1: a retired one, or none)."""
        top = None if self.tally[clock].slowest is None else self.tally[clock].slowest.latency
        code = -1
        dl = self._dl()
        x = dl[f"t_{clock}"] - self.t_send[clock][dl["code"]]
        ok = np.flatnonzero(~np.isnan(x))
        if len(ok):
            k = int(ok[np.argmax(x[ok])])
            if top is None or x[k] > top:
                top, code = float(x[k]), int(self.dl["code"][k])
        return top, code

    def locate(self, code: int, kind: str, late: str | None = None) -> tuple[str, object] | None:
        """The process and location of a held ``kind`` record of message ``code`` (with
        ``late`` a clock, the one latest on that clock)."""
        best = None
        for piece, i in self._held(code, kind):
            t = piece.table.column(late)[i].as_py() if late else None
            where = (piece.table.column("process")[i].as_py(), _location(piece, i), t)
            if not late:
                return where[:2]
            if t is not None and (best is None or t > best[2]):
                best = where
        return None if best is None else best[:2]

    def _held(self, code: int, kind: str) -> Iterator[tuple[Piece, int]]:
        """The held ``kind`` records of message ``code``, as (piece, row), in order."""
        for piece, codes in self.buffer:
            if codes is None:
                continue
            kinds = piece.table.column("kind")
            for i in np.flatnonzero(codes == code).tolist():
                if kinds[i].as_py() == kind:
                    yield piece, i

    # ---- the end ------------------------------------------------------------------------

    def finish(self) -> None:
        """The trace's records are all read: a FAST trace with a message whose send never
        came is left to the exact checks (unsent delivery, FIFO's skipping)."""
        if self.mode == FAST and not self.settled():
            self._slow("a delivered message with no send")

    def settled(self) -> bool:
        """Whether the trace keeps the picture if its records end here (``finish``)."""
        return self.mode == FAST and self.vpos >= self.base + len(self.S)

    def clean(self) -> Clean:
        names = list(self.procs)
        np_ = len(names)

        def who(mask: np.ndarray) -> frozenset[str]:
            return frozenset(names[i] for i in np.flatnonzero(mask[:np_]))

        # per sender, the S prefix holding its sends still in the window (its retired
        # sends lie in the retired prefix, which every process but a crashed one passed)
        snd = self.sender[:self.nmsgs]
        has = snd >= 0
        pos = self.spos[:self.nmsgs]
        need = np.where(pos >= 0, pos + 1, NEVER)[has]
        owed = self.rowed[:np_].copy()
        np.maximum.at(owed, snd[has].astype(np.int64), need)
        seen = self.seen[:np_]
        vs = self.views
        return Clean(self.id, who(self.seen), who(self.scount > 0), who(self.dcount > 0),
                     who(self.crashed),
                     {names[i]: int(self.dcount[i]) for i in np.flatnonzero(seen)},
                     {names[i]: int(owed[i]) for i in np.flatnonzero(self.scount[:np_] > 0)},
                     frozenset(names[i] for i in self.deps_from),
                     viewers=frozenset(names[i] for i in (vs.viewers if vs else ())),
                     membership=self.membership or bool(self.left[:np_].any()),
                     gaps=bool(vs is not None and vs.gaps()),
                     sent=int(self.scount[:np_].sum()),
                     latency={c: self.latencies(c) for c in self.clocks},
                     ledger=self.ledger())

    def ledger(self) -> Ledger | None:
        """Who delivered and sent what, per process and view (ledger.py)."""
        names = list(self.procs)
        vs = self.views
        stays, cursor, joins, last = {}, {}, {}, {}
        for i in np.flatnonzero(self.seen[:len(names)]).tolist():
            mine = vs.stays[i] if vs is not None else [(NONE, 0, 0, None)]
            ends = [x[1] for x in mine[1:]] + [int(self.dcount[i])]
            stays[names[i]] = [Stay(v, d, s, e - d, r) for (v, d, s, r), e in zip(mine, ends)]
            cursor[names[i]] = int(self.cursor[i]) if vs is not None else int(self.dcount[i])
            if vs is not None and vs.joins[i] is not None:
                joins[names[i]] = Join(*vs.joins[i])
            # a crash read before the first join, leave or view has no Views to note it
            last[names[i]] = vs.last_kind[i] if vs is not None and vs.last_kind[i] else \
                ("crash" if self.crashed[i] else None)
        n = self.nmsgs
        return Ledger(names, stays, list(vs.names) if vs else [None],
                      list(vs.offset) if vs else [0], list(vs.members) if vs else [None],
                      self.view_records, list(vs.length) if vs else [-1],
                      frozenset(names[i] for i in np.flatnonzero(self.left[:len(names)])),
                      cursor, self.base, self.S,
                      Window(self.sender[:n], self.rank[:n], self.spos[:n], self.sview[:n]),
                      {names[p]: e for p, e in self.last.items()}, self.find, self.message_ids,
                      joins, last, self.send_clocks, self.past)

    def find(self, code: int, kind: str, process: str) -> tuple[str, Location, tuple] | None:
        """The id, location and clocks (time, real_time, slot) of ``process``'s held
        ``kind`` record of message ``code``."""
        for piece, i in self._held(code, kind):
            t = piece.table
            if t.column("process")[i].as_py() == process:
                return t.column("msg")[i].as_py(), _location(piece, i), _clocks(t, i)
        return None

    def send_clocks(self) -> dict[int, tuple]:
        """Per held message (code), its held send record's time, real_time and slot."""
        out: dict[int, tuple] = {}
        for piece, codes in self.buffer:
            if codes is None:
                continue
            t = piece.table
            kinds = kind_codes(t.column("kind"))
            for i in np.flatnonzero((kinds == SEND) & (codes >= 0)).tolist():
                out.setdefault(int(codes[i]), _clocks(t, i))
        return out

    def message_ids(self, codes: np.ndarray) -> dict[int, str]:
        """The ids of messages ``codes``, from held records that name them."""
        want = np.zeros(self.nmsgs, bool)
        want[codes] = True
        out: dict[int, str] = {}
        for piece, cs in self.buffer:
            if cs is None:
                continue
            hit = np.flatnonzero((cs >= 0) & want[np.maximum(cs, 0)])
            if not len(hit):
                continue
            ids = piece.table.column("msg").take(pa.array(hit)).to_pylist()
            for c, m in zip(cs[hit].tolist(), ids):
                out.setdefault(c, m)
            want[cs[hit]] = False
        return out

    def pending(self) -> np.ndarray:
        """A FAST trace's messages that some correct process (one that has a record and
        no crash) has not delivered yet: their codes, and the processes' names. A message
        is pending once a record names it as sent or delivered."""
        np_ = len(self.procs)
        live = self.seen[:np_] & ~self.crashed[:np_] & ~self.left[:np_]
        if self.mode != FAST or not live.any():
            return np.zeros(0, np.int64)
        low = int(self._cursors()[live].min())
        n = self.nmsgs
        pos = self.spos[:n]
        return np.flatnonzero((pos >= low) | ((pos < 0) & (self.sender[:n] >= 0)))

    def missing(self, code: int) -> list[str]:
        """The correct processes that have not delivered message ``code`` yet."""
        names = list(self.procs)
        np_ = len(names)
        live = self.seen[:np_] & ~self.crashed[:np_] & ~self.left[:np_]
        pos = int(self.spos[code])
        lacks = live & ((self._cursors() <= pos) if pos >= 0 else True)
        return [names[i] for i in np.flatnonzero(lacks)]

    def positions(self) -> dict[str, int]:
        """Each process's next S position (one whose view's range has not started: S's
        end), by name: where regroup.py steers which process's records come next."""
        return dict(zip(self.procs, self._cursors().tolist()))

    @property
    def regroupable(self) -> bool:
        """Whether the retired prefix passed some process by before its records came, or
        positions retired before their sends (a file grouped by process): a trace that
        then goes whole is read again interleaved (regroup.py)."""
        return self.passed_by or self.waited

    def _cursors(self) -> np.ndarray:
        """Each process's next S position; one whose view's range has not started will
        deliver from S's end on."""
        c = self.cursor[:len(self.procs)]
        return np.where(c >= 0, c, self.base + len(self.S))

    def message_id(self, code: int) -> str | None:
        """The id of message ``code``, from a held record that names it."""
        for piece, codes in self.buffer:
            if codes is None:
                continue
            hit = np.flatnonzero(codes == code)
            if len(hit):
                return piece.table.column("msg")[int(hit[0])].as_py()
        return None

    def held(self) -> int:
        """Records held, in the buffer and spilled."""
        return sum(p.table.num_rows for p, _ in self.buffer) + \
            (self.spill.rows if self.spill else 0)

    def held_pieces(self) -> list[Piece]:
        """The held records in the order they came: those spilled, then the buffer's."""
        return list(self.held_iter())

    def held_iter(self) -> Iterator[Piece]:
        """The held records in the order they came, one spilled segment in memory at a
        time."""
        if self.spill is not None:
            yield from self.spill.pieces()
        for p, _ in self.buffer:
            yield p

    def close(self) -> None:
        """Remove the spill file (the trace is decided)."""
        if self.follower is not None:
            self.follower.close()
            self.follower = None
        if self.spill is not None:
            self.spill.close()
            self.spill = None
        if self.past is not None:
            self.past.close()
            self.past = None
