"""Liveness at the end of a trace: validity and agreement among correct processes.

Definition (validity and agreement of total order broadcast, Défago,
Schiper and Urbán 2004, section 2.2, read at the end of a finite trace):
(validity) every message sent by a correct process is delivered by every
correct process; (agreement) a message delivered by some correct process is
delivered by every correct process.

Correct (decision, as the issue states it): a process is correct unless it
logged a crash, or the trace has views and the process is missing from the
final view. The final view is the one most non-crashed processes installed
last; ties go to the view with more members, then the greater view id.
Only processes that log at least one event are judged. Membership (Chockler, Keidar
and Vitenberg 2001, section 4): a correct process owes a message only if it installed
the view in which the message was sent (validity) or delivered (agreement), and a
process that leaves owes nothing of the view it leaves from (``agreement.owes``); so a
member that joins late is not asked for what was delivered before it joined. The
clauses are also the properties ``validity`` and ``agreement`` on their own.

Off by default (``--liveness``): a trace cut before the system drained
shows messages "not yet" delivered, which is no safety violation.
Witness: the send of m (or a correct process's delivery of it) and the last
event of the correct process that never delivers m.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from tomkit.checker import witness as W
from tomkit.checker.chunk import LEAVE, Chunk
from tomkit.checker.properties.base import Options, Property, verdicts
from tomkit.checker.properties.scope import correct_counts
from tomkit.checker.result import Result, Verdict
from tomkit.checker.stream.clean import Clean
from tomkit.checker.trace import Trace

NAME = "liveness"


def final_view(last_views: dict[str, tuple[str, tuple[str, ...]]]) -> tuple[str, set[str]] | None:
    """The final view among (process -> (its last view, members)), by the rule above."""
    if not last_views:
        return None
    counts = Counter(v for v, _ in last_views.values())
    members: dict[str, tuple[str, ...]] = {}
    for p in sorted(last_views):  # a view id's members as its first process by name saw them
        v, m = last_views[p]
        members.setdefault(v, m)
    v = max(counts, key=lambda x: (counts[x], len(members[x]), x))
    return v, set(members[v])


def correct_processes(trace: Trace) -> set[str]:
    crashed = {p for p in trace.processes if any(e.kind == "crash" for e in trace.events[p])}
    last = {}
    for p in trace.processes:
        if p in crashed:
            continue
        vs = [e for e in trace.events[p] if e.kind == "view"]
        if vs:
            last[p] = (vs[-1].view, vs[-1].members)
    fv = final_view(last)
    ok = set(trace.processes) - crashed
    if fv is not None:
        ok &= fv[1]
    return ok


def check(trace: Trace, options: Options = Options()) -> Result:
    from tomkit.checker.properties.agreement import owes

    correct = sorted(correct_processes(trace))
    delivered = {p: set(trace.delivery_index[p]) for p in trace.processes}
    for m in sorted(trace.messages):
        sent = trace.sends.get(m)
        by_correct = [p for p in correct if m in delivered[p]]
        if not ((sent and sent[1].process in correct) or by_correct):
            continue
        if sent and sent[1].process in correct:
            s = sent[1].process
            k = next(i for i, e in enumerate(trace.events[s]) if e is sent[1])
            cause, view = W.send(trace, m), trace.views_at[s][k]
        else:
            d = by_correct[0]
            i = trace.delivery_index[d][m]
            cause, view = W.delivery(trace, d, i), trace.delivery_views(d)[i]
        for p in correct:
            if m in delivered[p] or not owes(trace, p, view):
                continue
            last = trace.events[p][-1]
            wit = [cause, W.event(last)]
            why = (f"correct process {cause.process} sent it" if cause.kind == "send"
                   else f"correct process {cause.process} delivered it")
            text = f"{m} is never delivered by correct process {p}, although {why}."
            return Result(NAME, trace.id, Verdict.VIOLATED, wit, text,
                          "validity" if cause.kind == "send" else "agreement",
                          {"correct": correct})
    return Result(NAME, trace.id, Verdict.HOLDS, details={"correct": correct})


def detect(c: Chunk, options: Options) -> np.ndarray:
    correct_tp, n_correct, got = correct_counts(c)
    sr = c.send_row[np.arange(c.ntm)]
    sent_by_correct = np.zeros(c.ntm, bool)
    sent_by_correct[sr >= 0] = correct_tp[c.tp[sr[sr >= 0]]]
    need = sent_by_correct | (got > 0)
    short = need & (got < n_correct[c.tm_t])
    violated = np.zeros(c.ntr, bool)
    violated[c.tm_t[short]] = True
    # with views, who owes a message depends on the views it installed (membership)
    views = c.trace_has["view"].copy()
    views[c.t[c.kind == LEAVE]] = True
    return verdicts(c, violated & ~views, exact=views)


def stream(clean: Clean, options: Options) -> Result | None:
    """A clean single pass (checker/stream/): the correct processes are read from each
    one's last view, and a message a correct process owes but did not deliver is held
    (at or past its position in S, or delivered by none), so check's first violation,
    by message id, is found among the held messages. None: the whole trace decides (a
    correct process that lags behind the retired prefix, or a witness no longer held)."""
    led = clean.ledger
    if led is None:
        return None
    live = sorted(clean.correct())
    fv = final_view({p: (v, tuple(sorted(m or ()))) for p in live
                     for v, m in [led.final_members(p)] if v is not None})
    correct = [p for p in live if fv is None or p in fv[1]]
    done = {"correct": correct}
    w = led.window
    if any(led.behind(p) for p in correct):
        # messages it owes may be retired: decided by counts when it holds, else whole
        if led.view_records or not _counts_hold(clean, correct):
            return None
        return Result(NAME, clean.trace, Verdict.HOLDS, details=done)
    n = len(w.sender)
    sent_by = np.zeros(n, bool)
    has = w.sender >= 0
    ok = np.array([led.names[i] in correct for i in range(len(led.names))] + [False])
    sent_by[has] = ok[w.sender[has]]
    got = np.zeros((len(correct), n), bool)
    owing = np.zeros((len(correct), n), bool)
    for i, p in enumerate(correct):
        got[i] = (w.pos >= 0) & (w.pos < led.ends(p)[w.view])
        owes = np.array([led.owes(p, v) for v in range(len(led.view_names))])
        owing[i] = owes[w.view]
    cause = sent_by | got.any(axis=0)
    bad = np.flatnonzero(cause & (owing & ~got).any(axis=0))
    if not len(bad):
        return Result(NAME, clean.trace, Verdict.HOLDS, details=done)
    ids = led.ids(bad)
    if len(ids) < len(bad):
        return None
    m, code = min((x, c) for c, x in ids.items())
    if sent_by[code]:
        wit = led.send(code)
    else:
        d = next(correct[i] for i in range(len(correct)) if got[i, code])
        wit = led.delivery_of(d, code)
    if wit is None:
        return None
    p = next(correct[i] for i in range(len(correct)) if owing[i, code] and not got[i, code])
    why = (f"correct process {wit.process} sent it" if wit.kind == "send"
           else f"correct process {wit.process} delivered it")
    text = f"{m} is never delivered by correct process {p}, although {why}."
    return Result(NAME, clean.trace, Verdict.VIOLATED, [wit, led.last_event(p)], text,
                  "validity" if wit.kind == "send" else "agreement", done)


def _counts_hold(clean: Clean, correct: list[str]) -> bool:
    """Without views: whether every correct process that did not leave delivered as much
    as the furthest of them and as the prefix holding every correct sender's sends."""
    judged = [p for p in correct if p not in clean.ledger.left]
    need = max([clean.delivered.get(p, 0) for p in correct] +
               [clean.owed[p] for p in correct if p in clean.owed], default=0)
    return all(clean.delivered.get(q, 0) >= need for q in judged)


# not in tomkit scan: a data set's traces are judged for agreement and validity there
PROPERTY = Property(NAME, "sent or delivered by a correct process => delivered by all correct",
                    False, check, detect, __doc__, liveness=True, scan=False, stream=stream)
