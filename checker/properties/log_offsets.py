"""Log offsets: one log per key, each offset holding one message for every reader.

Definition (Kingsbury's Jepsen queue and Kafka tests, as Maelstrom's kafka workload
documents them, jepsen-io/maelstrom ``doc/workloads.md``, "Workload: Kafka"; the log
itself is a total order in the sense of Défago, Schiper and Urbán 2004, section 2.2,
with positions made explicit): a trace is the log of one key; a ``send`` record with
``x_offset`` is a send acknowledged at that offset, a ``deliver`` record with
``x_offset`` a message a reader polled at that offset, and each process one reader's
run of polls from where it started (a reader that re-assigns starts a new process).
Offsets may be sparse; an offset is *known* once any record gives it a message.

* inconsistent-offsets: one offset gives two messages, or one message two offsets;
* nonmonotonic: a reader's offsets do not strictly increase (4 then 2, or 2 then 2);
* skip: a reader goes from offset a to offset b while an offset between them is known;
* lost-write: a send acknowledged at offset o is polled by no reader, while some reader
  polled an offset greater than o.

Unknown when no record carries ``x_offset``. Witness: the two records that disagree
(inconsistent-offsets), the reader's two polls (nonmonotonic), the two polls and the
record that makes the skipped offset known (skip), the acknowledged send and the poll
past it (lost-write). tomkit writes such traces from ``tomkit run -w kafka`` and from
Jepsen histories (``tomkit import --format jepsen``).
"""

from __future__ import annotations

import bisect

import numpy as np

from .. import witness as W
from ..chunk import Chunk
from ..result import Result, Verdict, WitnessEvent
from ..trace import Trace
from .base import EXACT, Options, Property, verdicts

NAME = "log-offsets"
NO_OFFSETS = "no record carries x_offset: no log to judge"


def _located(trace: Trace) -> list[tuple[str, int, WitnessEvent, str, int]]:
    """Every send or delivery with an offset: (process, position in the process's own
    deliveries or -1 for a send, witness event, msg, offset), processes by name."""
    out = []
    for p in trace.processes:
        d = s = 0
        for e in trace.events[p]:
            if e.kind == "deliver":
                if e.offset is not None:
                    out.append((p, d, W.event(e, d), e.msg, e.offset))
                d += 1
            elif e.kind == "send":
                if e.offset is not None:
                    out.append((p, -1, W.event(e, s), e.msg, e.offset))
                s += 1
    return out


def check(trace: Trace, options: Options = Options()) -> Result:
    located = _located(trace)
    if not located:
        return Result(NAME, trace.id, Verdict.UNKNOWN, explanation=NO_OFFSETS)
    found: list[tuple[str, list[WitnessEvent], str]] = []
    at: dict[int, tuple[str, WitnessEvent]] = {}
    of: dict[str, tuple[int, WitnessEvent]] = {}
    for _, _, w, m, o in located:
        if o in at and at[o][0] != m:
            found.append(("inconsistent-offsets", [at[o][1], w],
                          f"offset {o} holds {at[o][0]} for {at[o][1].process} and {m} "
                          f"for {w.process}."))
        if m in of and of[m][0] != o:
            found.append(("inconsistent-offsets", [of[m][1], w],
                          f"{m} is at offset {of[m][0]} for {of[m][1].process} and at "
                          f"offset {o} for {w.process}."))
        at.setdefault(o, (m, w))
        of.setdefault(m, (o, w))
    known = sorted(at)
    last: dict[str, tuple[int, WitnessEvent]] = {}
    for p, d, w, _, o in located:
        if d < 0:
            continue
        if p in last:
            a, wa = last[p]
            if o <= a:
                found.append(("nonmonotonic", [wa, w],
                              f"{p} polls offset {a} and then offset {o}."))
            else:
                i = bisect.bisect_right(known, a)
                if i < len(known) and known[i] < o:
                    k = known[i]
                    found.append(("skip", [wa, w, at[k][1]],
                                  f"{p} polls offset {a} and then offset {o}, skipping offset "
                                  f"{k} ({at[k][0]}), which exists."))
        last[p] = (o, w)
    polled = {m for _, d, _, m, _ in located if d >= 0}
    top = max(((o, w) for _, d, w, _, o in located if d >= 0), default=None,
              key=lambda x: x[0])
    for _, d, w, m, o in located:
        if d < 0 and m not in polled and top is not None and top[0] > o:
            found.append(("lost-write", [w, top[1]],
                          f"{m}, acknowledged at offset {o}, is never polled, though "
                          f"{top[1].process} polls offset {top[0]}."))
    if found:
        clause, wit, text = found[0]
        counts: dict[str, int] = {}
        for c, _, _ in found:
            counts[c] = counts.get(c, 0) + 1
        return Result(NAME, trace.id, Verdict.VIOLATED, wit, text, clause, counts)
    return Result(NAME, trace.id, Verdict.HOLDS)


def detect(c: Chunk, options: Options) -> np.ndarray:
    # the offsets are few (one trace per key, small logs): the exact check decides
    has = c.trace_has["offset"]
    codes = verdicts(c, np.zeros(c.ntr, bool), unknown=~has)
    codes[has] = EXACT
    return codes


PROPERTY = Property(NAME, "each offset of a per-key log holds one message; polls go forward "
                    "without skips; acknowledged sends are polled", False, check, detect,
                    __doc__, lambda c, ti, o: NO_OFFSETS, scan=False)
