"""Who is judged: the uniform and the non-uniform (correct-process) forms, and membership.

Sources: Défago, Schiper and Urbán, "Total order broadcast and multicast algorithms:
taxonomy and survey" (ACM Computing Surveys 2004), section 2.2: a *uniform* property
constrains every process, faulty ones included (uniform agreement, uniform total order);
the non-uniform form constrains correct processes only. Chockler, Keidar and Vitenberg,
"Group communication specifications: a comprehensive study" (ACM Computing Surveys
2001), section 4: a process owes nothing for views it was not a member of.

Decisions, for every order and agreement property:

* ``uniform`` (the default) judges every process that logs an event; ``correct``
  (``--scope correct``) judges the processes that log no ``crash`` record.
* A process that logs ``leave`` is judged up to its leave: its events after the leave
  record (there should be none) are not read, in both scopes.
* Order properties are universal over processes (every pair, every process), so
  dropping processes can only remove violations; but it can also remove every view
  event, which turns a verdict into unknown. The vectorized engines therefore hand to
  the exact check every trace that the scope changes: under ``correct`` a trace with a
  crash, in both scopes a trace where a process logs events after its leave
  (``rescope``).
"""

from __future__ import annotations

import numpy as np

from tomkit.checker.chunk import CRASH, LEAVE, Chunk
from tomkit.checker.trace import Trace

__all__ = ["CORRECT", "SCOPES", "UNIFORM", "correct_counts", "crashed", "in_scope", "rescope"]

UNIFORM, CORRECT = "uniform", "correct"
SCOPES = (UNIFORM, CORRECT)


def crashed(trace: Trace) -> set[str]:
    """The processes that log a ``crash`` record."""
    return {p for p in trace.processes if any(e.kind == "crash" for e in trace.events[p])}


def in_scope(trace: Trace, scope: str) -> Trace:
    """The trace restricted to the processes ``scope`` judges, each up to its leave."""
    if scope not in SCOPES:
        raise ValueError(f"scope must be one of {', '.join(SCOPES)}, not {scope!r}")
    drop = crashed(trace) if scope == CORRECT else set()
    cut = {p for p in trace.processes if any(e.kind == "leave" for e in trace.events[p])}
    if not drop and not cut:
        return trace
    events = {}
    for p in trace.processes:
        if p in drop:
            continue
        evs = trace.events[p]
        if p in cut:
            k = next(i for i, e in enumerate(evs) if e.kind == "leave")
            evs = evs[:k + 1]
        events[p] = evs
    return Trace(trace.id, events)


def rescope(c: Chunk, codes: np.ndarray, scope: str, exact: int) -> np.ndarray:
    """Detect codes of an order property for ``scope``: a trace the scope changes (module
    docstring) is left to the exact check."""
    out = codes.copy()
    has = np.zeros(c.ntr, bool)
    if scope == CORRECT:
        has[c.t[c.kind == CRASH]] = True
    leave = np.flatnonzero(c.kind == LEAVE)
    if len(leave):
        # a leave record that is not its process's last event
        end = c.tp_start[c.tp[leave] + 1] - 1
        has[c.t[leave[leave < end]]] = True
    out[has] = exact
    return out


def correct_counts(c: Chunk) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per (trace, process) whether it is correct (logs no crash); per trace how many
    correct processes it has; per (trace, message) how many correct processes deliver
    it (first deliveries)."""
    correct_tp = np.ones(c.ntp, bool)
    correct_tp[c.tp[c.kind == CRASH]] = False
    n_correct = np.bincount(c.tp_trace[correct_tp], minlength=c.ntr)
    got = np.bincount(c.f_tm[correct_tp[c.f_tp]], minlength=c.ntm)
    return correct_tp, n_correct, got
