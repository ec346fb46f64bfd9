"""Prefix order: any two processes' delivery sequences are prefixes of one another.

Definition (the strong uniform total order a replicated log or a fixed sequencer gives:
Défago, Schiper and Urbán 2004, section 2.2, "uniform total order" with the *prefix*
reading of their footnote on gap-freedom; Raft's Log Matching and State Machine Safety,
Ongaro and Ousterhout 2014, section 5.3-5.4): for any two processes p and q, the
sequence of p's (first) deliveries and the sequence of q's are prefixes of one another.
Unlike total-order-strong this also rules out two sequences that diverge and never meet
again (p delivers a, q delivers b, as their k'th messages, with no message after).

Membership (Chockler, Keidar and Vitenberg 2001, section 4: a process owes nothing for
views it was not a member of): where the trace has view events, p's sequence is compared
with q's without the deliveries p made in views that q did not install, and the other
way round; so a late joiner is judged from the view it joined. Without view events every
process is judged on its whole sequence (a Raft member that joins late is sent the whole
log). Scope (uniform or correct) as for every order property (``scope.py``).

Witness: the first position k at which the two (restricted) sequences differ: p's and
q's k'th deliveries, two different messages (after the same k - 1 messages).

Reads first deliveries only (repeats are integrity's business).
"""

from __future__ import annotations

import numpy as np

from tomkit.checker import witness as W
from tomkit.checker.chunk import Chunk, differs_in_group
from tomkit.checker.properties.base import Options, Property, verdicts
from tomkit.checker.result import Result, Verdict
from tomkit.checker.trace import Trace

NAME = "prefix-order"


def _installed(trace: Trace) -> dict[str, set[str]]:
    return {p: {e.view for e in trace.events[p] if e.kind == "view"} for p in trace.processes}


def _sequence(trace: Trace, p: str, q_views: set[str] | None) -> list[tuple[int, str]]:
    """p's first deliveries as (index in its deliveries, msg), without those made in a
    view outside ``q_views`` (None: no view events, keep all)."""
    firsts = trace.first_deliveries[p]
    if q_views is None:
        return [(i, e.msg) for i, e in firsts]
    views = trace.delivery_views(p)
    return [(i, e.msg) for i, e in firsts if views[i] is None or views[i] in q_views]


def check(trace: Trace, options: Options = Options()) -> Result:
    installed = _installed(trace) if trace.has_views else None
    procs = trace.processes
    for a, p in enumerate(procs):
        for q in procs[a + 1:]:
            sp = _sequence(trace, p, None if installed is None else installed[q])
            sq = _sequence(trace, q, None if installed is None else installed[p])
            for k, ((i, m), (j, m2)) in enumerate(zip(sp, sq)):
                if m == m2:
                    continue
                wit = [W.delivery(trace, p, i), W.delivery(trace, q, j)]
                common = "" if installed is None else " they both had to"
                text = (f"after the same {k} deliveries{common}, {p} delivers {m} and {q} "
                        f"delivers {m2}: neither sequence is a prefix of the other.")
                return Result(NAME, trace.id, Verdict.VIOLATED, wit, text, "diverge",
                              {"position": k})
    return Result(NAME, trace.id, Verdict.HOLDS)


def detect(c: Chunk, options: Options) -> np.ndarray:
    """Without views: at every position k, all processes of a trace deliver one message
    (the min and max message at (trace, k) agree). A trace with views is restricted per
    pair, which is the exact check's business."""
    key = c.f_t.astype(np.int64) * max(c.max_msgs, 1) + c.f_pos
    violated = np.zeros(c.ntr, bool)
    violated[c.f_t[differs_in_group(key, c.f_tm, max(c.ntr, 1) * max(c.max_msgs, 1))]] = True
    views = c.trace_has["view"]
    return verdicts(c, violated & ~views, exact=views)


PROPERTY = Property(NAME, "any two delivery sequences are prefixes of one another", False,
                    check, detect, __doc__)
