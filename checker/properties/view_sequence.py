"""View sequence: every process installs views as consecutive stretches of one sequence.

Definition (Rodrigues, Fonseca and Verissimo, 001 section 5: "To guarantee correct
operation, all active processes in the system must see the same sequence of
configurations"; the views of a primary-component membership service form one sequence,
Chockler, Keidar and Vitenberg 2001, section 4). Read each process's view events in its
local order, a stretch at a time (a ``crash``, ``join`` or ``leave`` record ends one:
what a process installs after it rejoins follows from the state it is given, not from
its last view). Where some process installs V' right after V:

* (clause ``fork``) every process that installs V and then another view in the same
  stretch installs V' next: V has one successor;
* (clause ``merge``) every process that installs V' right after another view installs
  it right after V: V' has one predecessor;
* (clause ``cycle``) following successors never comes back to a view: the relation is
  a sequence, not a loop.

So two processes that install the same views agree on what came just before and just
after each, a process that joins late starts inside the one sequence, and one that
crashes stops in it. With ``view-agreement`` (one view id, one member set) this is
"the same sequence of views"; it is the same sequence of *configurations* when a view id
names the whole configuration, as the hybrid model's do (001's C^n = {V^i, D_j}: the
view and every member's descriptor, docs/hybrid.md). Only "all active processes" in the
paper; every process here (a passive process applies the same configurations).
Virtual synchrony and the order properties judge what is delivered between views; this
property judges the views alone.

Unknown when the trace has no view events. Witness: the two pairs of consecutive view
events that disagree (for a cycle, the pairs along it).
"""

from __future__ import annotations

import numpy as np

from tomkit.checker import witness as W
from tomkit.checker.chunk import Chunk
from tomkit.checker.properties.base import Options, Property, verdicts
from tomkit.checker.result import Result, Verdict
from tomkit.checker.stream.clean import Clean
from tomkit.checker.trace import Ev, Trace

NAME = "view-sequence"
NO_VIEWS = "no view events: no sequence of views to judge"
#: records that end a process's stretch of views
BREAKS = ("crash", "join", "leave")


def _steps(trace: Trace) -> list[tuple[Ev, Ev]]:
    """Every (view event, next view event of the same stretch), processes in name order."""
    out = []
    for p in trace.processes:
        prev: Ev | None = None
        for e in trace.events[p]:
            if e.kind in BREAKS:
                prev = None
            elif e.kind == "view":
                if prev is not None:
                    out.append((prev, e))
                prev = e
    return out


def check(trace: Trace, options: Options = Options()) -> Result:
    if not trace.has_views:
        return Result(NAME, trace.id, Verdict.UNKNOWN, explanation=NO_VIEWS)
    succ: dict[str, tuple[Ev, Ev]] = {}
    pred: dict[str, tuple[Ev, Ev]] = {}
    for a, b in _steps(trace):
        first = succ.setdefault(a.view, (a, b))
        if first[1].view != b.view:
            x, y = first
            return Result(NAME, trace.id, Verdict.VIOLATED,
                          [W.event(x), W.event(y), W.event(a), W.event(b)],
                          f"{x.process} installs view {y.view} right after {x.view}, "
                          f"{a.process} installs {b.view} right after it: two sequences.",
                          "fork")
        first = pred.setdefault(b.view, (a, b))
        if first[0].view != a.view:
            x, y = first
            return Result(NAME, trace.id, Verdict.VIOLATED,
                          [W.event(x), W.event(y), W.event(a), W.event(b)],
                          f"{y.process} installs view {y.view} right after {x.view}, "
                          f"{b.process} right after {a.view}: two sequences.", "merge")
    cycle = _cycle(succ)
    if cycle:
        wit = [W.event(e) for v in cycle for e in succ[v]]
        return Result(NAME, trace.id, Verdict.VIOLATED, wit,
                      f"views follow one another in a loop: {' -> '.join(cycle)} -> "
                      f"{cycle[0]}.", "cycle")
    return Result(NAME, trace.id, Verdict.HOLDS)


def _cycle(succ: dict[str, tuple[Ev, Ev]]) -> list[str]:
    """A loop of the successor relation (one successor per view), or []."""
    done: set[str] = set()
    for start in sorted(succ):
        path: list[str] = []
        on_path: set[str] = set()
        v = start
        while v in succ and v not in done:
            if v in on_path:
                return path[path.index(v):]
            path.append(v)
            on_path.add(v)
            v = succ[v][1].view
        done |= on_path
    return []


def detect(c: Chunk, options: Options) -> np.ndarray:
    # view events are few: a trace with them goes to the exact check
    has = c.trace_has["view"]
    return verdicts(c, np.zeros(c.ntr, bool), ~has, has)


def stream(clean: Clean, options: Options) -> Result:
    """A clean single pass (checker/stream/views.py) found every process installing views
    in one order, each view with one successor and one predecessor in its stretches."""
    if not clean.viewers:
        return Result(NAME, clean.trace, Verdict.UNKNOWN, explanation=NO_VIEWS)
    return Result(NAME, clean.trace, Verdict.HOLDS)


PROPERTY = Property(NAME, "every process installs views as stretches of one sequence "
                    "(same successor, same predecessor, no loop)", False, check, detect,
                    __doc__, lambda c, ti, o: NO_VIEWS, stream=stream)
