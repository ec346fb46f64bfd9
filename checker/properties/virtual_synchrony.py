"""Virtual synchrony: same messages between the same two views, each in its sending view.

Definition (virtual synchrony / view synchrony, Birman and Joseph 1987;
as used for Transis and ToTo in 000, section 2, and by the view-synchronous
layer of 001): (a) processes that install the same two consecutive views V
and V' deliver the same set of messages between them; (b) where views are
present, a message is delivered in the view in which it was sent (the
sender's installed view at its send event).

Unknown when the trace has no view events. Deliveries before a process's
first view count as "no view" (so a send and its deliveries before any
view agree). First deliveries only.
Witness (a): p and q install V then V'; p delivers m between them and q
does not. (b): the sender's view at the send, the delivering process's
view at the delivery, and the two events.

Decision: a view id names one installation. A process that installs the
same view twice breaks the membership service's contract and makes "the
same two consecutive views" ambiguous, so it is a violation of its own
(clause reinstalled-view; witness: the two view events). Likewise two
installations of one view id with different member sets (clause
membership-mismatch).
"""

from __future__ import annotations

import numpy as np

from tomkit.checker import witness as W
from tomkit.checker.chunk import VIEW, Chunk, factorize
from tomkit.checker.properties import Options, Property, verdicts
from tomkit.checker.result import Result, Verdict
from tomkit.checker.trace import Trace

NAME = "virtual-synchrony"
NO_VIEWS = "no view events: nothing to synchronise on"


def _installs(trace: Trace, p: str) -> list[tuple[int, str]]:
    return [(i, e.view) for i, e in enumerate(trace.events[p]) if e.kind == "view"]


def check(trace: Trace, options: Options = Options()) -> Result:
    if not trace.has_views:
        return Result(NAME, trace.id, Verdict.UNKNOWN, explanation=NO_VIEWS)
    for p in trace.processes:
        first: dict[str, int] = {}
        for i, v in _installs(trace, p):
            if v in first:
                evs = trace.events[p]
                text = f"{p} installs view {v} twice."
                return Result(NAME, trace.id, Verdict.VIOLATED,
                              [W.event(evs[first[v]]), W.event(evs[i])], text,
                              "reinstalled-view")
            first[v] = i
    seen: dict[str, tuple[str, int]] = {}
    for p in trace.processes:
        for i, v in _installs(trace, p):
            members = set(trace.events[p][i].members or ())
            if v not in seen:
                seen[v] = (p, i)
                continue
            q, j = seen[v]
            if set(trace.events[q][j].members or ()) != members:
                text = f"{q} and {p} install view {v} with different members."
                return Result(NAME, trace.id, Verdict.VIOLATED,
                              [W.event(trace.events[q][j]), W.event(trace.events[p][i])], text,
                              "membership-mismatch")
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
    # (b) delivered in the sending view
    send_view = {}
    for p in trace.processes:
        for e, v in zip(trace.events[p], trace.views_at[p]):
            if e.kind == "send" and e.msg not in send_view:
                send_view[e.msg] = v
    for p in trace.processes:
        views = trace.delivery_views(p)
        for i, e in trace.first_deliveries[p]:
            if e.msg not in send_view or send_view[e.msg] == views[i]:
                continue
            sv, dv = send_view[e.msg], views[i]
            wit = [W.send(trace, e.msg), W.delivery(trace, p, i)]
            text = (f"{e.msg} is sent in view {sv if sv is not None else '(none)'} "
                    f"but {p} delivers it in view {dv if dv is not None else '(none)'}.")
            return Result(NAME, trace.id, Verdict.VIOLATED, wit, text, "sending-view")
    return Result(NAME, trace.id, Verdict.HOLDS)


def detect(c: Chunk, options: Options) -> np.ndarray:
    if not c.trace_has["view"].any():
        return verdicts(c, np.zeros(c.ntr, bool), np.ones(c.ntr, bool))
    nv = len(c.view_names) + 1
    violated = np.zeros(c.ntr, bool)
    allv = np.flatnonzero(c.kind == VIEW)
    _, nkeys = factorize(c.tp[allv].astype(np.int64) * nv + c.view[allv])
    if nkeys < len(allv):  # some process installs a view twice
        vid, _ = factorize(c.tp[allv].astype(np.int64) * nv + c.view[allv])
        seen_before = vid <= np.concatenate(([-1], np.maximum.accumulate(vid)[:-1]))
        violated[c.t[allv[seen_before]]] = True
    # views installed with different member sets: few rows, checked per row
    members_of: dict[tuple[int, int], frozenset] = {}
    for r in allv:
        key = (int(c.t[r]), int(c.view[r]))
        o, ln = c.mem_off[r], c.mem_len[r]
        mem = frozenset(c.member_codes[o:o + ln].tolist())
        if members_of.setdefault(key, mem) != mem:
            violated[key[0]] = True
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
    # (b): the sender's view at the send against the deliverer's view at the delivery
    sr = c.send_row[c.f_tm]
    has = sr >= 0
    wrong = c.curview[sr[has]] != c.curview[f[has]]
    violated[c.f_t[has][wrong]] = True
    unknown = ~c.trace_has["view"]
    return verdicts(c, violated & ~unknown, unknown)


PROPERTY = Property(NAME, "same messages between the same two views, in the sending view",
                    True, check, detect, __doc__, lambda c, ti, o: NO_VIEWS)
