"""The view guarantees of group membership and view-synchronous delivery, one each.

Source: Chockler, Keidar and Vitenberg, "Group communication specifications: a
comprehensive study" (ACM Computing Surveys 2001), sections 4 (membership) and 5
(multicast within views). Each property is unknown on a trace without view events.

``view-agreement`` (section 4.1, and the uniqueness of view identifiers every membership
service of that survey gives): (a) one view id names one member set: two installations
of view V list the same members (clause membership-mismatch); (b) self inclusion: a
process that installs V is among V's members (clause self-inclusion, Property 4.1);
(c) local monotonicity: a process installs each view once, and when all view ids of the
trace are numbers, in increasing order (clauses reinstalled-view, decreasing-view-id,
Property 4.2). Witness: the two view events, or the one.

``same-view-delivery`` (Property 5.1): if processes p and q both deliver m, they deliver
it in the same view. Witness: the two deliveries and their views.

``sending-view-delivery`` (Property 5.2, the stronger form): a message is delivered in
the view in which it was sent (the sender's installed view at its send event); Isis and
ToTo's membership layer give it, Totem's extended virtual synchrony does not (it delivers
old messages in a transitional configuration). Witness: the send and the delivery.
A message id sent more than once (by two processes, or twice by one) is one message with
several send events, as for fifo-order and causal-order (integrity reports the reuse as
duplicate-send): it is sent in each view one of its sends was made in, and a delivery in
any of them keeps the property (each send is the message's, so "the view in which it was
sent" is each such view); a delivery in none of them breaks it, and the sentence names
them all. The vectorized engines hand a trace with a reused id to this exact check.

Deliveries and sends before a process's first view event count as made in "no view".
First deliveries only.
"""

from __future__ import annotations

import numpy as np

from tomkit.checker import witness as W
from tomkit.checker.chunk import VIEW, Chunk, differs_in_group, factorize
from tomkit.checker.properties.base import Options, Property, verdicts
from tomkit.checker.result import Result, Verdict, WitnessEvent
from tomkit.checker.stream.clean import Clean
from tomkit.checker.trace import Ev, Trace

__all__ = ["NO_VIEWS", "SAME_VIEW", "SENDING_VIEW", "VIEW_AGREEMENT"]

NO_VIEWS = "no view events: nothing to judge"
AGREEMENT_NAME, SAME_NAME, SENDING_NAME = ("view-agreement", "same-view-delivery",
                                           "sending-view-delivery")


def _unknown(c: Chunk, ti: int, o: Options) -> str:
    return NO_VIEWS


def _installs(trace: Trace, p: str) -> list[tuple[int, str]]:
    return [(i, e.view) for i, e in enumerate(trace.events[p]) if e.kind == "view"]


def _numeric(trace: Trace) -> dict[str, float] | None:
    """Every view id of the trace as a number, or None when some id is not one."""
    out = {}
    for p in trace.processes:
        for _, v in _installs(trace, p):
            try:
                out[v] = float(v)
            except ValueError:
                return None
    return out


def check_agreement(trace: Trace, options: Options = Options()) -> Result:
    if not trace.has_views:
        return Result(AGREEMENT_NAME, trace.id, Verdict.UNKNOWN, explanation=NO_VIEWS)
    num = _numeric(trace)
    seen: dict[str, tuple[str, int]] = {}
    for p in trace.processes:
        evs = trace.events[p]
        first: dict[str, int] = {}
        prev: int | None = None
        for i, v in _installs(trace, p):
            e = evs[i]
            if v in first:
                return Result(AGREEMENT_NAME, trace.id, Verdict.VIOLATED,
                              [W.event(evs[first[v]]), W.event(e)],
                              f"{p} installs view {v} twice.", "reinstalled-view")
            first[v] = i
            if num is not None and prev is not None and num[v] < num[evs[prev].view]:
                return Result(AGREEMENT_NAME, trace.id, Verdict.VIOLATED,
                              [W.event(evs[prev]), W.event(e)],
                              f"{p} installs view {evs[prev].view} and then view {v}, a "
                              "smaller id.", "decreasing-view-id")
            prev = i
            if e.members is not None and p not in e.members:
                return Result(AGREEMENT_NAME, trace.id, Verdict.VIOLATED, [W.event(e)],
                              f"{p} installs view {v}, whose members "
                              f"{sorted(e.members)} do not include it.", "self-inclusion")
            if v not in seen:
                seen[v] = (p, i)
                continue
            q, j = seen[v]
            if set(trace.events[q][j].members or ()) != set(e.members or ()):
                return Result(AGREEMENT_NAME, trace.id, Verdict.VIOLATED,
                              [W.event(trace.events[q][j]), W.event(e)],
                              f"{q} and {p} install view {v} with different members.",
                              "membership-mismatch")
    return Result(AGREEMENT_NAME, trace.id, Verdict.HOLDS)


def detect_agreement(c: Chunk, options: Options) -> np.ndarray:
    unknown = ~c.trace_has["view"]
    violated = np.zeros(c.ntr, bool)
    if unknown.all():
        return verdicts(c, violated, unknown)
    allv = np.flatnonzero(c.kind == VIEW)
    if len(allv):
        nv = len(c.view_names) + 1
        vid, nkeys = factorize(c.tp[allv].astype(np.int64) * nv + c.view[allv])
        if nkeys < len(allv):  # some process installs a view twice
            seen_before = vid <= np.concatenate(([-1], np.maximum.accumulate(vid)[:-1]))
            violated[c.t[allv[seen_before]]] = True
        # view events are few: members and self inclusion per row
        members_of: dict[tuple[int, int], frozenset] = {}
        for r in allv:
            key = (int(c.t[r]), int(c.view[r]))
            o, ln = c.mem_off[r], c.mem_len[r]
            mem = frozenset(c.member_codes[o:o + ln].tolist())
            if members_of.setdefault(key, mem) != mem:
                violated[key[0]] = True
            if int(c.p[r]) not in mem:  # members are coded as processes are
                violated[key[0]] = True
        # decreasing numeric ids: consecutive installs of one process
        try:
            ids = np.array([float(v) for v in c.view_names])
        except ValueError:
            ids = None
        if ids is not None and len(ids):
            same = c.tp[allv[1:]] == c.tp[allv[:-1]]
            down = same & (ids[c.view[allv[1:]]] < ids[c.view[allv[:-1]]])
            violated[c.t[allv[1:][down]]] = True
        else:  # some id is not a number: whether a trace's ids all are is the exact check's
            return verdicts(c, violated & ~unknown, unknown, c.trace_has["view"] & ~violated)
    return verdicts(c, violated & ~unknown, unknown)


def check_same(trace: Trace, options: Options = Options()) -> Result:
    if not trace.has_views:
        return Result(SAME_NAME, trace.id, Verdict.UNKNOWN, explanation=NO_VIEWS)
    first: dict[str, tuple[str, int, str | None]] = {}
    for p in trace.processes:
        views = trace.delivery_views(p)
        for i, e in trace.first_deliveries[p]:
            if e.msg not in first:
                first[e.msg] = (p, i, views[i])
                continue
            q, j, v = first[e.msg]
            if v != views[i]:
                wit = [W.delivery(trace, q, j), W.delivery(trace, p, i)]
                text = (f"{q} delivers {e.msg} in view {v if v is not None else '(none)'}, "
                        f"{p} in view {views[i] if views[i] is not None else '(none)'}.")
                return Result(SAME_NAME, trace.id, Verdict.VIOLATED, wit, text, "two-views")
    return Result(SAME_NAME, trace.id, Verdict.HOLDS)


def detect_same(c: Chunk, options: Options) -> np.ndarray:
    unknown = ~c.trace_has["view"]
    violated = np.zeros(c.ntr, bool)
    if unknown.all():
        return verdicts(c, violated, unknown)
    bad = differs_in_group(c.f_tm.astype(np.int64), c.curview[c.f_rows], max(c.ntm, 1))
    violated[c.f_t[bad]] = True
    return verdicts(c, violated & ~unknown, unknown)


def check_sending(trace: Trace, options: Options = Options()) -> Result:
    if not trace.has_views:
        return Result(SENDING_NAME, trace.id, Verdict.UNKNOWN, explanation=NO_VIEWS)
    # msg -> the views its sends were made in -> the first such send (index, event)
    send_views: dict[str, dict[str | None, tuple[int, Ev]]] = {}
    for p in trace.processes:
        k = 0
        for e, v in zip(trace.events[p], trace.views_at[p]):
            if e.kind == "send":
                send_views.setdefault(e.msg, {}).setdefault(v, (k, e))
                k += 1
    for p in trace.processes:
        views = trace.delivery_views(p)
        for i, e in trace.first_deliveries[p]:
            if e.msg not in send_views or views[i] in send_views[e.msg]:
                continue
            sent, dv = send_views[e.msg], views[i]
            k, first = next(iter(sent.values()))
            wit = [WitnessEvent(first.process, "send", e.msg, k, first.location),
                   W.delivery(trace, p, i)]
            names = " and ".join(_name(v) for v in sent)
            text = (f"{e.msg} is sent in view{'s' if len(sent) > 1 else ''} {names} "
                    f"but {p} delivers it in view {_name(dv)}.")
            return Result(SENDING_NAME, trace.id, Verdict.VIOLATED, wit, text, "sending-view")
    return Result(SENDING_NAME, trace.id, Verdict.HOLDS)


def _name(view: str | None) -> str:
    return view if view is not None else "(none)"


def detect_sending(c: Chunk, options: Options) -> np.ndarray:
    unknown = ~c.trace_has["view"]
    if unknown.all():
        return verdicts(c, np.zeros(c.ntr, bool), unknown)
    f = c.f_rows
    sr = c.send_row[c.f_tm]
    has = sr >= 0
    wrong = c.curview[sr[has]] != c.curview[f[has]]
    violated = np.zeros(c.ntr, bool)
    violated[c.f_t[has][wrong]] = True
    # send_row holds the first send (by name) of a reused id: its other sends' views count
    exact = c.resent & ~unknown
    return verdicts(c, violated & ~unknown & ~exact, unknown, exact)


def _stream(name: str, scoped: bool):
    """The decider of a view property on a trace the single pass found clean: its views
    were laid out on one sequence (checker/stream/views.py), which each of these three
    guarantees needs; unknown when no process in scope installs a view."""
    def decide(clean: Clean, options: Options) -> Result:
        viewers = clean.in_scope(options.scope).viewers if scoped else clean.viewers
        if not viewers:
            return Result(name, clean.trace, Verdict.UNKNOWN, explanation=NO_VIEWS)
        return Result(name, clean.trace, Verdict.HOLDS)
    return decide


VIEW_AGREEMENT = Property(AGREEMENT_NAME, "one view id, one member set; self inclusion; "
                          "views installed once, in increasing order", False,
                          check_agreement, detect_agreement, __doc__, _unknown,
                          stream=_stream(AGREEMENT_NAME, False))
SAME_VIEW = Property(SAME_NAME, "a message is delivered in one view by all who deliver it",
                     False, check_same, detect_same, __doc__, _unknown,
                     stream=_stream(SAME_NAME, True))
SENDING_VIEW = Property(SENDING_NAME, "a message is delivered in the view it was sent in",
                        False, check_sending, detect_sending, __doc__, _unknown,
                        stream=_stream(SENDING_NAME, True))
