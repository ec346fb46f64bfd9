"""Virtual synchrony: processes that install the same two consecutive views deliver the
same messages in the first.

Definition (virtual synchrony, Birman and Joseph 1987; Chockler, Keidar and Vitenberg
2001, Property 5.3 "Virtual Synchrony"; as used for Transis and ToTo in 000, section 2,
and by the view-synchronous layer of 001): if processes p and q install the same view V'
right after the same view V, they deliver the same set of messages in V (between the two
installations). Only this: that a message is delivered in its sending view, that all
deliverers deliver it in one view, and that view ids name one member set are the
separate properties ``sending-view-delivery``, ``same-view-delivery`` and
``view-agreement`` (``views.py``), because systems promise them separately (Totem's
extended virtual synchrony keeps this property and breaks the sending-view one).

Unknown when the trace has no view events. Deliveries before a process's first view
count as "no view". First deliveries only. A process that installs one view twice makes
"the same two consecutive views" ambiguous; each of its epochs is read as it comes (the
repeat itself is ``view-agreement``'s violation).
Witness: p and q install V then V'; q delivers m between them and p does not.
"""

from __future__ import annotations

import numpy as np

from tomkit.checker import witness as W
from tomkit.checker.chunk import VIEW, Chunk, factorize
from tomkit.checker.properties.base import Options, Property, verdicts
from tomkit.checker.result import Result, Verdict
from tomkit.checker.stream.clean import Clean
from tomkit.checker.trace import Trace

NAME = "virtual-synchrony"
NO_VIEWS = "no view events: nothing to synchronise on"


def _installs(trace: Trace, p: str) -> list[tuple[int, str]]:
    return [(i, e.view) for i, e in enumerate(trace.events[p]) if e.kind == "view"]


def check(trace: Trace, options: Options = Options()) -> Result:
    if not trace.has_views:
        return Result(NAME, trace.id, Verdict.UNKNOWN, explanation=NO_VIEWS)
    # (a) epochs between consecutive installs
    epochs: dict[tuple[str, str], dict[str, tuple[int, int, set]]] = {}
    for p in trace.processes:
        inst = _installs(trace, p)
        firsts = {id(e) for _, e in trace.first_deliveries[p]}
        evs = trace.events[p]
        for (i, v), (j, v2) in zip(inst, inst[1:]):
            msgs = {e.msg for e in evs[i + 1:j] if e.kind == "deliver" and id(e) in firsts}
            epochs.setdefault((v, v2), {})[p] = (i, j, msgs)
    for (v, v2), per in epochs.items():
        union = set().union(*(m for _, _, m in per.values()))
        for p, (i, j, msgs) in sorted(per.items()):
            if msgs == union:
                continue
            missing = sorted(union - msgs)[0]
            q = next(x for x in sorted(per) if missing in per[x][2])
            qi, qj, _ = per[q]
            idx = trace.delivery_index[q][missing]
            evs_p, evs_q = trace.events[p], trace.events[q]
            wit = [W.event(evs_q[qi]), W.delivery(trace, q, idx), W.event(evs_q[qj]),
                   W.event(evs_p[i]), W.event(evs_p[j])]
            text = (f"{q} and {p} both install view {v} and then {v2}; {q} delivers "
                    f"{missing} in between, {p} does not.")
            return Result(NAME, trace.id, Verdict.VIOLATED, wit, text, "same-set")
    return Result(NAME, trace.id, Verdict.HOLDS)


def detect(c: Chunk, options: Options) -> np.ndarray:
    if not c.trace_has["view"].any():
        return verdicts(c, np.zeros(c.ntr, bool), np.ones(c.ntr, bool))
    nv = len(c.view_names) + 1
    violated = np.zeros(c.ntr, bool)
    # (a): transitions V -> V' per process, and first deliveries inside each
    vr = np.flatnonzero((c.kind == VIEW) & (c.nextview >= 0))
    f = c.f_rows
    inside = (c.curview[f] >= 0) & (c.nextview[f] >= 0)

    def epoch_key(rows, cur):
        return (c.t[rows].astype(np.int64) * nv + cur) * nv + c.nextview[rows]

    keys = np.concatenate((epoch_key(vr, c.view[vr]), epoch_key(f[inside], c.curview[f[inside]])))
    g, ng = factorize(keys)
    n_members = np.bincount(g[: len(vr)], minlength=ng)
    g_f = g[len(vr):]
    pair, npair = factorize(g_f.astype(np.int64) * max(c.ntm, 1) + c.f_tm[inside])
    count = np.bincount(pair, minlength=npair)
    pair_group = np.zeros(npair, np.int64)
    pair_group[pair] = g_f
    short = np.flatnonzero(count < n_members[pair_group])
    if len(short):
        rows_of_pair = np.zeros(npair, np.int64)
        rows_of_pair[pair] = f[inside]
        violated[c.t[rows_of_pair[short]]] = True
    # a view installed twice by one process: its epochs are the exact check's to read
    allv = np.flatnonzero(c.kind == VIEW)
    vid, nkeys = factorize(c.tp[allv].astype(np.int64) * nv + c.view[allv])
    twice = np.zeros(c.ntr, bool)
    if nkeys < len(allv):
        seen_before = vid <= np.concatenate(([-1], np.maximum.accumulate(vid)[:-1]))
        twice[c.t[allv[seen_before]]] = True
    unknown = ~c.trace_has["view"]
    return verdicts(c, violated & ~unknown & ~twice, unknown, twice)


def stream(clean: Clean, options: Options) -> Result:
    """A clean single pass (checker/stream/views.py): processes that move on from a view
    delivered the same prefix of its range, so the same set."""
    if not clean.in_scope(options.scope).viewers:
        return Result(NAME, clean.trace, Verdict.UNKNOWN, explanation=NO_VIEWS)
    return Result(NAME, clean.trace, Verdict.HOLDS)


PROPERTY = Property(NAME, "same messages between the same two consecutive views", False,
                    check, detect, __doc__, lambda c, ti, o: NO_VIEWS, stream=stream)
