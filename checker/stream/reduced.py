"""The exact checks on what the single pass still holds, with positions put back.

When the canonical picture breaks (canon.py), the trace's buffer holds every record
after its retired prefix: S[0:base) was delivered by every process alike, as its
first ``base`` deliveries, with no repeat, each message sent once, each sender's
retired sends its first ones. No witness of the properties that take the single pass
can lie in that prefix (an order fact between a retired message and a later one is the
same at every process that delivers both; a retired message is sent and delivered
exactly once everywhere), and every first violation the exact checks look for, in
their fixed order of processes and positions, lies after it. So the exact checks run
on the held records, and the witnesses' positions are shifted back: ``base`` more
deliveries at every process, ``soff[p]`` more sends at sender p (the sentences name
delivery positions as ``#k`` and prefix-order's common length as "the same k").

Causal order reads each held send's ``deps``, some of which may name retired messages:
they are left out of the lists (``without_retired``), since every process delivered
them before any held delivery; its witness and sentence name only a dependency that
fails, which never is one of them. When the retired sends carried deps and no held
send does, the relation would read as not logged: such a trace goes whole
(``deps_held``).

Latency and realtime latency (``Property.clock``) measure every first delivery, the
retired ones too: their statistics and slowest delivery were kept as the retired
messages left (canon.py's ``tally``, latencies.py), and are combined with the held
records' (``latency.tally`` of the exact check). The combination is the whole trace's,
exactly: the retired messages' ids never come again in the held records (a record
naming a retired id sends the trace whole), so a first delivery and a first send are
first in the held records exactly when they are in the trace, and each delivery is
measured on one side only (a held delivery whose send is not read yet is among the held
records with its send, or never sent); the sums are exact, so their order does not
matter; the held slowest delivery's indexes are shifted as every witness's before the
two slowest are compared (a process delivers its retired messages first: a tie of
latency and process goes to its later, held, delivery, as ``max`` takes it). A reused id
among the held records is read by the exact check as the whole trace reads it. A trace
whose process lagged behind the retired prefix, or whose positions retired before their
sends came, goes whole when it breaks (canon.py), so the retired tally is its prefix's.

A run broken early holds most of itself: narrow.py keeps only the records around the
breach when the rest keeps the picture.

The end-of-trace properties (agreement, validity, liveness, member liveness) read who
owes what of every message, the retired ones too: a process that crashed or fell behind
the retired prefix delivered less of it than the others. Their retired part is decided
from each process's retired deliveries and the retired sequence on disk, and merged with
the held records' result in each check's scan order (prefixowed.py); a process short of
the retired prefix that delivers after the break goes whole (canon.py), so every process
with held deliveries delivered the whole prefix first, and the shift above is its own.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..chunk import Piece
from ..engine import CheckReport, FileStats, TraceOutcome, _record, decide_chunk
from ..properties import Options, Property
from ..properties.latency import tally
from ..result import Result, Verdict, WitnessEvent
from .canon import TraceState
from .clean import Clean
from .cutowed import Owed, owing
from .hashes import RetiredIds, hash_ids
from .latencies import Tally, shifted
from .narrow import narrowed
from .prefixowed import asked, decide, merge, prefix
from .viewheld import installed

__all__ = ["NeedsWhole", "check_held", "deps_held", "shift", "without_retired"]


class NeedsWhole(Exception):
    """The held records cannot stand for the trace after all (a latency that is not a
    finite double): the whole-trace engine decides it."""


def shift(res: Result, base: int, soff: dict[str, int]) -> Result:
    """``res`` found on the held records, with positions counted from the trace's start."""
    if not base and not any(soff.values()):
        return res

    def event(w: WitnessEvent) -> WitnessEvent:
        if w.index is None:
            return w
        if w.kind == "deliver":
            return replace(w, index=w.index + base)
        if w.kind == "send":
            return replace(w, index=w.index + soff.get(w.process, 0))
        return w

    # the sentences' templates: "as #k" and "(#k)", never a bare "#k" (an id may hold one)
    text = re.sub(r"(as |\()#(\d+)", lambda m: f"{m.group(1)}#{int(m.group(2)) + base}",
                  res.explanation)
    text = re.sub(r"after the same (\d+) deliveries",
                  lambda m: f"after the same {int(m.group(1)) + base} deliveries", text)
    details = dict(res.details)
    if "position" in details:
        details["position"] += base
    return replace(res, witness=[event(w) for w in res.witness], explanation=text,
                   details=details)


def without_retired(piece: Piece, retired: RetiredIds) -> Piece:
    """``piece`` with the retired messages left out of its sends' ``deps``: every process
    delivered them, in the retired prefix, before any held delivery, so causal order's
    exact check, which would find them delivered nowhere, owes them nothing (a list left
    empty stays a list: the send still carries deps)."""
    if "deps" not in piece.table.column_names:
        return piece
    col = piece.table.column("deps").combine_chunks()
    if col.null_count == len(col):
        return piece
    flat = pc.list_flatten(col)
    if not len(flat):
        return piece
    keep = ~retired.contains(hash_ids(flat)[0])
    if keep.all():
        return piece
    lens = np.asarray(pc.list_value_length(col).fill_null(0).to_numpy(zero_copy_only=False),
                      np.int64)
    owner = np.repeat(np.arange(len(col)), lens)
    offsets = np.concatenate(([0], np.cumsum(np.bincount(owner[keep],
                                                         minlength=len(col)))))
    deps = pa.ListArray.from_arrays(pa.array(offsets, pa.int32()),
                                    flat.filter(pa.array(keep)), type=col.type,
                                    mask=col.is_null())
    i = piece.table.column_names.index("deps")
    return Piece(piece.table.set_column(i, "deps", deps), piece.lines, piece.source,
                 piece.fmt)


def deps_held(state: TraceState) -> bool:
    """Whether the held records still carry deps when the trace's retired sends did
    (else causal order's exact check would find the relation not logged)."""
    if not state.deps_from:
        return True
    for piece in state.held_iter():
        t = piece.table
        if "deps" in t.column_names and \
                pc.any(pc.and_(pc.equal(t.column("kind").cast(pa.string()), "send"),
                               pc.is_valid(t.column("deps")))).as_py():
            return True
    return False


def check_held(state: TraceState, props: list[Property], options: Options,
               keep_going: bool) -> tuple[TraceOutcome | None, CheckReport]:
    """The outcome of a trace from its held records (module docstring; None when they
    were rejected), and the scratch report that counted it (its counts, rejections and
    file moves are the caller's to merge)."""
    # a run broken early holds most of itself: the records around the breach stand for
    # them all when the rest keeps the picture (narrow.py; the end-of-trace properties
    # with the tail's clean pass, cutowed.py)
    kept = narrowed(state, props, options) if state.spill is not None else None
    if kept is not None:
        got = _check(state, kept, props, options, keep_going)
        if got is not None:
            return got
        state.cut, state.owed = 0, None  # cutowed.py's condition C: every held record
    got = _check(state, state.held_pieces(), props, options, keep_going)
    assert got is not None  # nothing to merge
    return got


def _check(state: TraceState, pieces: list[Piece], props: list[Property], options: Options,
           keep_going: bool) -> tuple[TraceOutcome | None, CheckReport] | None:
    """check_held on ``pieces``: all held records, or a cut's (then None when its
    end-of-trace properties cannot be merged with its tail's, cutowed.py)."""
    scratch = CheckReport([p.name for p in props], options)
    scratch.counts = {p.name: Counter() for p in props}
    if len(state.retired):
        pieces = [without_retired(p, state.retired) for p in pieces]
    # a trace the exact checks reject (bad seq, with keep_going) moves its records from
    # accepted to rejected in these; the caller carries the moves over
    scratch.files = [FileStats(src, fmt) for src, fmt in
                     dict((p.source, p.fmt) for p in pieces).items()]
    # latency's retired deliveries were tallied as they retired (module docstring), and
    # the tail's past a cut by its canonical pass (latencies.py, "Across the cut")
    tallied = [p for p in props if p.clock and (state.base or state.cut) and
               p.stream is not None]
    exact = [p for p in props if p not in tallied]
    chunk, codes = decide_chunk(pieces, exact, options)
    _record(chunk, codes, exact, options, scratch, keep_going)
    if not scratch.outcomes:  # rejected whole: no verdicts
        return None, scratch
    out = scratch.outcomes[0]
    names = list(state.procs)
    if isinstance(state.owed, Owed):  # the end-of-trace properties across the cut
        last = {names[p]: e for p, e in state.last.items()}
        for prop in owing(exact):
            was = out.verdicts[prop.name]
            res = state.owed.merge(prop.name, was, out.results.get(prop.name), last)
            if res is None:
                return None
            out.verdicts[prop.name] = res.verdict
            out.results.pop(prop.name, None)
            if res.verdict != Verdict.HOLDS:
                out.results[prop.name] = res
            count = scratch.counts[prop.name]
            count[was] -= 1
            if not count[was]:
                del count[was]
            count[res.verdict] += 1
        ordered = {p.name: out.results[p.name] for p in exact if p.name in out.results}
        out.results.clear()
        out.results.update(ordered)
    soff = {names[i]: int(state.soff[i]) for i in range(len(names))}
    if state.vprefix is not None:  # with views, each process's own retired prefix
        views, _ = installed(pieces)
        last = {names[p]: e for p, e in state.last.items()}
        results = {k: state.vprefix.shift(r, views, last) for k, r in out.results.items()}
        delivered, sent = state.vprefix.delivered, state.vprefix.sent
    else:
        results = {k: shift(r, state.base, soff) for k, r in out.results.items()}
        delivered, sent = {p: state.base for p in names}, soff
    verdicts = dict(out.verdicts)
    owed = asked(state, exact)
    if owed:  # the end-of-trace properties' retired part (prefixowed.py)
        _retired_part(state, pieces, owed, options, results, verdicts, scratch)
    if tallied:
        trace = chunk.trace(0)
        held: dict[str, Tally] = {}
        for prop in tallied:
            c = prop.clock
            if c not in held:
                held[c] = state.tally[c].merge(shifted(tally(trace, c), delivered, sent))
                if state.cut and state.cut_latency is not None:
                    held[c] = held[c].merge(shifted(state.cut_latency[c], delivered, sent))
            clean = Clean(state.id, frozenset(trace.processes), latency={c: held[c]},
                          resent=bool(chunk.resent[0]))
            res = prop.stream(clean, options)
            if res is None:
                raise NeedsWhole(f"{prop.name}: a latency that is not a finite number")
            verdicts[prop.name] = res.verdict
            if res.verdict != Verdict.HOLDS:
                results[prop.name] = res
            scratch.counts[prop.name][res.verdict] += 1
        verdicts = {p.name: verdicts[p.name] for p in props}
    return (TraceOutcome(state.id, sorted(state.sources), state.events, verdicts,
                         {p.name: results[p.name] for p in props if p.name in results}),
            scratch)


def _retired_part(state: TraceState, pieces: list[Piece], props: list[Property],
                  options: Options, results: dict[str, Result], verdicts: dict[str, Verdict],
                  scratch: CheckReport) -> None:
    """Merge check(R), the retired part's, into H's ``results`` and ``verdicts`` of the
    end-of-trace ``props`` (prefixowed.py); NeedsWhole when it cannot be."""
    clean = prefix(state, pieces, isinstance(state.owed, Owed))
    if isinstance(clean, str):
        raise NeedsWhole(f"the end-of-trace properties after positions retired: {clean}")
    got = decide(clean, props, options)
    if got is None:
        raise NeedsWhole("a retired witness of an end-of-trace property is not kept")
    names = list(state.procs)
    last = {names[p]: e for p, e in state.last.items()}
    for prop in props:
        was = verdicts[prop.name]
        held = results.get(prop.name) or Result(prop.name, state.id, was)
        res = merge(prop.name, got[prop.name], held, last)
        if res is None:
            raise NeedsWhole(f"{prop.name}: undecided on both sides of the retired prefix")
        verdicts[prop.name] = res.verdict
        results.pop(prop.name, None)
        if res.verdict != Verdict.HOLDS:
            results[prop.name] = res
        count = scratch.counts[prop.name]
        count[was] -= 1
        if not count[was]:
            del count[was]
        count[res.verdict] += 1
