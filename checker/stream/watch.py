"""``tomkit watch``: the single pass over logs that are still being written.

Each cycle reads what the followed files gained (follow.py: v1 JSON Lines, or logs
through an import mapping), feeds it piece by piece to the traces' states (canon.py),
and prints every verdict as soon as it is certain: when a piece breaks a trace's
canonical picture, the exact checks run on its held records before the next piece is
read (and again, at most every ``RECHECK`` seconds, each time its held records have
doubled, for the properties not printed yet), and each property they find violated is
printed, unless a later record could undo it (integrity's unsent delivery: the send may
still come; with views, prefix order and FIFO, whose membership rules a later view can
excuse) or the held records cannot stand for it (causal order once a dependency may be
retired; the end-of-trace properties, pending until the end). A trace with views
takes the same path. Memory is bounded as in ``tomkit check --stream``: a log that
comes late reads the retired prefix from disk, and the sends of a slow log are awaited
(canon.py) once the FIFO pointer is ``WATCH_AWAIT_AFTER`` positions behind, so that a
send read a little after its deliveries is still checked in the window (a break after
an awaited send is judged at the end, by the whole-trace engine). The witness printed
then is the first one in the records so far, in words true so far
(:func:`so_far`); the final report, when the logs stop growing, is ``tomkit check``'s
on the whole input, with its exit code. ``timeout``: a message some correct process
has not delivered that long after it was first read is printed as overdue, a notice
and not a verdict.

``--state DIR`` keeps a checkpoint: the files' positions, the traces' states, the
verdicts judged and the length of the verdict output (``--out``). It is written
atomically (a temporary file, fsync, rename) every ``checkpoint_every`` seconds, so
kill -9 at any moment leaves the last checkpoint whole; a restart truncates the output
to the checkpoint's length and reads again from its positions, so every verdict line
is written exactly once. (On a terminal or a pipe, lines written after the last
checkpoint may be written again after a restart.)
"""

from __future__ import annotations

import json
import os
import pickle
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import TextIO

import numpy as np

from ...traces.importer import Mapping
from ...traces.interrupt import uninterrupted
from ..chunk import Piece
from ..engine import CheckReport, FileStats
from ..properties import Options, Property
from ..result import Result, Verdict, WitnessEvent
from .canon import FAST, SLOW, WHOLE, TraceState
from .driver import _read_v1, _Run, _whole, split
from .follow import Follower, MappedFollower, Position
from .reduced import NeedsWhole, check_held

__all__ = ["Watch"]

STATE_FILE = "watch-state.pickle"
#: checkpoint format: a restart refuses a state written by another one
#: 4: a trace's state holds its retired sequence (retired.py); 5: it may hold positions
#: retired before their sends came (the awaited sends, canon.py)
STATE_VERSION = 5
#: older checkpoints a restart takes up: a version 4 state's window waited for late
#: sends, and from the restart on they are awaited as in a version 5 one
TAKEN_UP = (4,)
#: the window of a watched trace (canon.py's TRIM_AT): small, so that the exact checks
#: that run when a trace breaks read few held records (a few thousand: tens of
#: milliseconds), and report within the second on a loaded machine too
WATCH_TRIM_AT = 1 << 8
#: positions past the FIFO pointer (a send not read yet) retire, the send awaited on
#: disk as ``tomkit check --stream`` awaits it, once the pointer is this far behind S's
#: end (canon.py's ``await_after``): per-process logs are read one after the other, so a
#: send read a little after its deliveries is checked in the window, and a break after
#: it judged as it comes (after an awaited send a break is judged at the end, whole)
WATCH_AWAIT_AFTER = 1 << 15
#: a broken trace's exact checks run again at most this often (seconds) as it grows
RECHECK = 1.0
#: with views, a later view installation can excuse what these found on a prefix
#: (prefix-order's and FIFO's membership restrictions), so they wait for the end
UNDONE_BY_VIEWS = ("prefix-order", "fifo-order")


def so_far(res: Result) -> Result:
    """A violation found while the run goes on, in words true of the records so far: the
    sentences' "never delivers m" (the end of a complete trace) reads "has not (yet)
    delivered m" (the verdict is certain either way: a later delivery cannot undo it)."""
    text = res.explanation.replace("never delivers", "has not (yet) delivered")
    return res if text == res.explanation else replace(res, explanation=text)


def behind(st: TraceState) -> int:
    """The retired positions a correct process lagging behind them has not delivered yet
    (it reads them from disk as it comes: they left the window, ``TraceState.pending``)."""
    np_ = len(st.procs)
    c = st.cursor[:np_]
    lag = st.seen[:np_] & ~st.crashed[:np_] & ~st.left[:np_] & (c >= 0) & (c < st.base)
    return int(st.base - c[lag].min()) if st.mode == FAST and lag.any() else 0


class Watch:
    """One ``tomkit watch`` run over ``paths`` (module docstring)."""

    def __init__(self, paths: Sequence[str], props: list[Property], options: Options, *,
                 fmt: str = "text", out: TextIO | None = None, out_path: str | None = None,
                 state_dir: str | None = None, keep_going: bool = False,
                 checkpoint_every: float = 2.0, mapping: Mapping | None = None,
                 timeout: float | None = None) -> None:
        self.paths = [str(p) for p in paths]
        self.props, self.options, self.fmt = props, options, fmt
        self.state_dir, self.checkpoint_every = state_dir, checkpoint_every
        self.keep_going = keep_going
        self.mapping = mapping
        #: --timeout: a message some correct process has not delivered this long after it
        #: was first read is printed as overdue (a notice, not a verdict)
        self.timeout = timeout
        #: per trace, the overdue message printed last (its id and first hash), until it
        #: is delivered by every correct process
        self.overdue: dict[str, tuple[str, int]] = {}
        self.last_overdue_look = 0.0
        #: the import's seq counters, per (trace, process), shared by the mapped logs
        self.seq: dict[tuple[str, str], int] = {}
        if mapping is None:
            self.followers = [Follower(Position(p), keep_going=keep_going)
                              for p in self.paths]
        else:
            self.followers = [MappedFollower(Position(p), mapping, self.seq,
                                             keep_going=keep_going) for p in self.paths]
        # one log per process (the mapping's [file] process): every process is known
        # before its log has a line, and a log that lags holds nothing meanwhile: it reads
        # the retired prefix from disk when it comes (its sends awaited past the margin)
        expect = tuple(dict.fromkeys(
            f.live.process for f in self.followers
            if isinstance(f, MappedFollower) and f.live.process is not None))
        self.run = _Run(props, options, keep_going, WATCH_TRIM_AT, keep_whole=True,
                        expect=expect, spill_dir=state_dir, await_after=WATCH_AWAIT_AFTER)
        self.dirty: set[str] = set()  # broken traces with records not yet judged
        self.checked: dict[str, tuple[float, int]] = {}  # when judged last, records then
        self.judged: set[tuple[str, str]] = set()
        self.out_path = out_path
        self.last_checkpoint = time.monotonic()
        restored = False
        if state_dir:
            os.makedirs(state_dir, exist_ok=True)
            restored = self._restore()
        if out_path is not None:
            self.out = open(out_path, "a", encoding="utf-8")
        else:
            self.out = out or sys.stdout
        if state_dir and not restored:
            # a first checkpoint before anything is judged: a kill before the next one
            # then cuts the output back to what it held at the start, so a verdict
            # written in between is not written twice after the restart
            self.checkpoint()

    # ---- checkpoints --------------------------------------------------------------------

    def _state_path(self) -> str:
        assert self.state_dir
        return os.path.join(self.state_dir, STATE_FILE)

    def _restore(self) -> bool:
        """Take up the last checkpoint, if there is one (whether there was)."""
        path = self._state_path()
        if not os.path.exists(path):
            return False
        with open(path, "rb") as f:
            try:
                data = pickle.load(f)
            except ValueError as e:  # a trace's state that cannot be taken up (canon.py)
                raise ValueError(f"{path}: {e}") from None
        version = data.get("version")
        if version != STATE_VERSION and version not in TAKEN_UP:
            raise ValueError(f"{path}: a checkpoint of format {version}, which this tomkit "
                             f"does not take up (it writes {STATE_VERSION}, and reads "
                             f"{', '.join(map(str, TAKEN_UP))} too); give a new --state DIR")
        if data["paths"] != self.paths or \
                data["properties"] != [p.name for p in self.props] or \
                data["mapping"] != self._mapping_key():
            raise ValueError(f"{path}: a checkpoint of another watch (other files, "
                             "properties or mapping); give a new --state DIR")
        r = self.run
        r.states, r.done, r.whole, r.modes = (data["states"], data["done"], data["whole"],
                                              data["modes"])
        for st in r.states.values():  # an older state's traces await their sends too
            st.await_after = r.await_after
        r.report.counts, r.report.outcomes = data["counts"], data["outcomes"]
        r.report.rejected = data["rejected"]
        self.judged = data["judged"]
        self.seq.update(data["seq"])
        self.overdue = data["overdue"]
        for fol, stats in zip(self.followers, data["import_stats"]):
            if isinstance(fol, MappedFollower):
                fol.stats = stats
                fol.rejected = stats.rejected
        for fol, pos in zip(self.followers, data["positions"]):
            fol.pos = pos
        if self.out_path is not None:
            with open(self.out_path, "a+b") as f:
                f.truncate(data["out_len"])
        return True

    def _mapping_key(self) -> str | None:
        """The mapping a checkpoint was read with: its path and its text."""
        if self.mapping is None:
            return None
        with open(self.mapping.path, encoding="utf-8") as f:
            return self.mapping.path + "\n" + f.read()

    def checkpoint(self) -> None:
        """Write the state atomically (module docstring)."""
        if not self.state_dir:
            return
        self.out.flush()
        out_len = os.fstat(self.out.fileno()).st_size if self.out_path else 0
        r = self.run
        data = {"version": STATE_VERSION, "paths": self.paths,
                "properties": [p.name for p in self.props],
                "states": r.states, "done": r.done, "whole": r.whole, "modes": r.modes,
                "counts": r.report.counts, "outcomes": r.report.outcomes,
                "rejected": r.report.rejected, "judged": self.judged,
                "positions": [fol.pos for fol in self.followers], "out_len": out_len,
                "mapping": self._mapping_key(), "seq": self.seq, "overdue": self.overdue,
                "import_stats": [fol.stats if isinstance(fol, MappedFollower) else None
                                 for fol in self.followers]}
        path = self._state_path()
        tmp = path + ".tmp"
        with open(tmp, "wb") as f:
            pickle.dump(data, f, protocol=pickle.HIGHEST_PROTOCOL)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        fd = os.open(self.state_dir, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        self.last_checkpoint = time.monotonic()

    # ---- one cycle ----------------------------------------------------------------------

    def cycle(self) -> int:
        """Read what the files gained, print what became certain; the records read.

        Each piece read (at most follow.py's READ_BYTES) is checked, and a trace it broke
        judged, before the next piece is parsed: a breach in a backlog is printed without
        waiting for the rest of the backlog."""
        n = 0
        for fol in self.followers:
            for piece in fol.read():
                n += self._take(piece)
        self._judge()
        if self.timeout is not None and time.monotonic() - self.last_overdue_look >= \
                min(1.0, self.timeout / 4):
            self._overdue()
            self.last_overdue_look = time.monotonic()
        if self.state_dir and time.monotonic() - self.last_checkpoint >= self.checkpoint_every:
            self.checkpoint()
        return n

    def _take(self, piece: Piece) -> int:
        """Feed one piece read, judge the traces it broke; its records."""
        for tid, part in split(piece):
            self.run.feed(tid, part)
            st = self.run.states[tid]
            if st.mode == FAST:
                self._latency(st)
            if st.mode == SLOW or (st.mode == WHOLE and st.base == 0):
                self.dirty.add(tid)
        self._judge()
        return piece.table.num_rows

    def _judge(self) -> None:
        """The exact checks of the broken traces whose records have grown enough since
        their last check (a newly broken trace: at once)."""
        now = time.monotonic()
        for tid in sorted(self.dirty):
            st = self.run.states.get(tid)
            if st is None:
                self.dirty.discard(tid)
                continue
            when, size = self.checked.get(tid, (-RECHECK, 0))
            held = st.held()
            # again only once the held records have doubled: a trace broken early and
            # then run for hours costs twice its records in checks, not its square
            if now - when >= RECHECK and held >= 2 * size:
                self._early(st)
                self.checked[tid] = (time.monotonic(), held)
                self.dirty.discard(tid)

    def _early(self, st: TraceState) -> None:
        """The verdicts the records so far have already earned: the exact checks on what the
        trace holds, each violation that no later record can undo (module docstring)."""
        # only what is still undecided: a property printed already is not checked again
        # end-of-trace properties (liveness) wait for the end: they are pending until then
        # and causal order only while nothing is retired (a dependency may be)
        props = [p for p in self.props
                 if (st.id, p.name) not in self.judged and not p.final() and
                 (p.held or st.base == 0)]
        if not props:
            return
        try:
            outcome, _ = check_held(st, props, self.options, self.keep_going)
        except NeedsWhole:  # the final report reads it whole
            return
        if outcome is None:  # rejected (keep going): the final report says so
            return
        for name, res in outcome.results.items():
            if res.verdict != Verdict.VIOLATED or res.clause == "unsent-delivery":
                continue
            if st.has_views and name.split("@")[0] in UNDONE_BY_VIEWS:
                continue
            self._emit(st.id, name, so_far(res))

    def _latency(self, st: TraceState) -> None:
        """A latency over its bound, printed as soon as a delivery (or the send that
        comes after its delivery) shows it: the largest latency only grows, so no later
        record undoes it. The witness is the slowest message so far, while the window
        holds it; the final report names the slowest of the whole trace."""
        for prop in self.props:
            if prop.clock is None or (st.id, prop.name) in self.judged:
                continue
            bound = prop.bound(self.options) if prop.bound else None
            top, code = st.latency(prop.clock)
            if bound is None or top is None or top <= bound:
                continue
            of = "" if prop.clock == "time" else "of real time "
            wit, text = [], f"a message is delivered {top:.6g} s {of}after its send, over " \
                f"the bound of {bound:g} s."
            send = st.locate(code, "send") if code >= 0 else None
            late = st.locate(code, "deliver", late=prop.clock) if code >= 0 else None
            msg = st.message_id(code) if code >= 0 else None
            slow = st.tally[prop.clock].slowest if code < 0 else None
            if slow is not None and slow.latency == top:
                # a retired message's (a send read after its position retired, a lagging
                # process's delivery): the tally keeps its witness
                wit = [WitnessEvent(slow.sender, "send", slow.msg, slow.send_index,
                                    slow.send_location),
                       WitnessEvent(slow.process, "deliver", slow.msg, slow.index,
                                    slow.location)]
                text = (f"{slow.process} delivers {slow.msg} {top:.6g} s {of}after its "
                        f"send, over the bound of {bound:g} s.")
            elif send and late and msg is not None:
                wit = [WitnessEvent(send[0], "send", msg, None, send[1]),
                       WitnessEvent(late[0], "deliver", msg, None, late[1])]
                text = (f"{late[0]} delivers {msg} {top:.6g} s {of}after its send, over "
                        f"the bound of {bound:g} s.")
            self._emit(st.id, prop.name, Result(prop.name, st.id, Verdict.VIOLATED, wit, text,
                                                "over-bound"))

    def _overdue(self) -> None:
        """Print, per trace, its oldest message that a correct process has not delivered
        ``timeout`` seconds after a record first named it; one at a time per trace, the
        next once that one is delivered everywhere (a stalled run prints one line a
        trace, not one a message)."""
        now = time.time()
        for tid, st in self.run.states.items():
            codes = st.pending()
            was = self.overdue.get(tid)
            if was is not None:
                if (st.h1[codes] == np.uint64(was[1])).any():
                    continue  # still pending: printed already
                del self.overdue[tid]
            if not len(codes):
                continue
            age = now - st.first_seen[codes]
            k = int(np.argmax(age))
            if age[k] < self.timeout:
                continue
            code = int(codes[k])
            msg = st.message_id(code)
            if msg is None:
                continue
            self.overdue[tid] = (msg, int(st.h1[code]))
            missing = st.missing(code)
            if self.fmt == "json":
                line = json.dumps({"type": "overdue", "trace": tid, "msg": msg,
                                   "seconds": round(float(age[k]), 3),
                                   "timeout": self.timeout, "missing": missing})
            else:
                line = (f"{tid}: {msg} overdue: not delivered by {', '.join(missing)} "
                        f"{age[k]:.1f} s after a record first named it (--timeout "
                        f"{self.timeout:g} s; pending, not a verdict)")
            self._print(line)

    def _print(self, line: str) -> None:
        """One verdict or notice line, written whole and flushed: Ctrl-C or SIGTERM
        (tomkit watch --out) waits for it (traces/interrupt.py), so the output never ends
        in half a line that the next one would be glued to."""
        with uninterrupted():
            print(line, file=self.out, flush=True)

    def _emit(self, tid: str, name: str, res) -> None:
        if (tid, name) in self.judged:
            return
        self.judged.add((tid, name))
        if self.fmt == "json":
            line = json.dumps({"type": "verdict", "trace": tid, **res.to_dict()})
        else:
            line = f"{tid}: {name} {res.verdict}: {res.explanation}"
            line += "".join(f"\n    {w.describe()}" for w in res.witness)
        self._print(line)

    def summary(self) -> str:
        r = self.run
        events = sum(s.events for s in r.states.values()) + sum(
            o.events for o in r.report.outcomes)
        held = sum(s.held() for s in r.states.values())
        pend = self.pending()
        text = (f"{events} events, {len(r.states)} open traces, {len(self.judged)} "
                f"violations, {held} records held")
        if pend is not None:
            text += (f"; pending: {pend['verdicts']} end-of-trace verdicts, "
                     f"{pend['messages']} messages not yet delivered by every correct "
                     f"process, {pend['overdue']} overdue")
        if self.fmt == "json":
            return json.dumps({"type": "summary", "events": events,
                               "open_traces": len(r.states), "violations": len(self.judged),
                               "held": held, **({"pending": pend} if pend else {})})
        return "watch: " + text

    def pending(self) -> dict[str, int] | None:
        """What is still undecided (None when no end-of-trace property is checked and no
        --timeout given): the end-of-trace verdicts of the open traces, their messages
        some correct process has not delivered (traces whose order broke are judged at
        their end and not counted), the overdue ones."""
        live = [p for p in self.props if p.final()]
        bounds = [p for p in self.props if p.clock]
        if not live and not bounds and self.timeout is None:
            return None
        n = sum(len(s.pending()) + behind(s) for s in self.run.states.values())
        # a latency bound is pending until the trace ends or a latency exceeds it
        verdicts = len(live) * len(self.run.states) + sum(
            (tid, p.name) not in self.judged for tid in self.run.states for p in bounds)
        return {"verdicts": verdicts, "messages": n, "overdue": len(self.overdue)}

    # ---- the end ------------------------------------------------------------------------

    def finish(self) -> CheckReport:
        """Every trace is complete: ``tomkit check``'s report of the whole input."""
        r = self.run
        for fol in self.followers:
            for piece in fol.read_rest():  # a last line without its newline
                self._take(piece)
            fol.close()
            r.report.rejected.extend(fol.rejected)
            stats = FileStats(fol.pos.path, "jsonl", grouped=fol.grouped)
            stats.accepted, stats.rejected = fol.pos.records, len(fol.rejected)
            r.report.files.append(stats)
        for tid in list(r.states):
            r.finish(tid)
        if r.whole:
            self._again_seq: dict[tuple[str, str], int] = {}
            _whole(self.paths, r, False, None, self._read_again)
        for o in r.report.outcomes:
            for name, res in o.results.items():
                if res.verdict == Verdict.VIOLATED:
                    self._emit(o.trace, name, res)
        return r.report

    def _read_again(self, path: str, keep_going: bool) -> Iterator[Piece]:
        """A followed file read again from its start, as it was followed (a trace the
        single pass could not decide goes to the whole-trace engine)."""
        if self.mapping is None:
            yield from _read_v1(path, keep_going)
            return
        # its own seq counters: each process's records numbered as they were the first
        # time when each process's records come from one log (docs/stream.md)
        fol = MappedFollower(Position(path), self.mapping, self._again_seq,
                             keep_going=keep_going)
        try:
            yield from fol.read()
        finally:
            fol.close()

    def close(self) -> None:
        if self.out_path is not None:
            self.out.close()
