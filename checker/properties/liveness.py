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
import pyarrow as pa
import pyarrow.compute as pc

from tomkit.checker import witness as W
from tomkit.checker.chunk import LEAVE, Chunk
from tomkit.checker.properties.base import Options, Property, verdicts
from tomkit.checker.properties.scope import correct_counts
from tomkit.checker.result import Result, Verdict
from tomkit.checker.stream.clean import Clean
from tomkit.checker.stream.ledger import Ledger
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
    # each sender's events by identity -> their index, made once per sender, and each
    # deliverer's delivery views, once per deliverer: a scan of its events per message
    # made this check quadratic on long traces
    at: dict[str, dict[int, int]] = {}
    dviews: dict[str, list[str | None]] = {}
    for m in sorted(trace.messages):
        sent = trace.sends.get(m)
        by_correct = [p for p in correct if m in delivered[p]]
        if not ((sent and sent[1].process in correct) or by_correct):
            continue
        if sent and sent[1].process in correct:
            s = sent[1].process
            if s not in at:
                at[s] = {id(e): i for i, e in enumerate(trace.events[s])}
            k = at[s][id(sent[1])]
            cause, view = W.send(trace, m), trace.views_at[s][k]
        else:
            d = by_correct[0]
            i = trace.delivery_index[d][m]
            if d not in dviews:
                dviews[d] = trace.delivery_views(d)
            cause, view = W.delivery(trace, d, i), dviews[d][i]
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
    by message id, is found among the held messages; when a correct process is behind
    the retired prefix, also among the retired positions it missed (ledger.py:
    ``missed``), whose ids are on disk: the smaller id of the two is check's first.
    None: the whole trace decides (a witness not kept)."""
    led = clean.ledger
    if led is None:
        return None
    live = sorted(clean.correct())
    fv = final_view({p: (v, tuple(sorted(m or ()))) for p in live
                     for v, m in [led.final_members(p)] if v is not None})
    correct = [p for p in live if fv is None or p in fv[1]]
    done = {"correct": correct}
    w = led.window
    retired = None
    if any(led.behind(p) for p in correct):
        # messages it owes may be retired: the first of them by id, from disk
        if led.past is None:
            return None
        retired = _retired_first(led, correct)
        if retired is False:
            return None
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
    if not len(bad) and not retired:
        return Result(NAME, clean.trace, Verdict.HOLDS, details=done)
    ids = led.ids(bad)
    if len(ids) < len(bad):
        return None
    if ids:
        m, code = min((x, c) for c, x in ids.items())
    if retired and (not ids or retired[0] < m):
        return _retired_violation(clean, led, correct, retired, done)
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


def _retired_first(led: Ledger, correct: list[str]) -> tuple[str, int, int] | None | bool:
    """The retired message check would judge first (its id, position and view): the
    smallest id among the retired positions that a correct process owes and missed,
    sent by a correct process or delivered by one. None: there is none; False: an id
    is not kept."""
    ok = np.array([x in correct for x in led.names] + [False])  # a sender -1: none
    owing = {q: [led.owes(q, v) for v in range(len(led.view_names))] for q in correct}
    spans: dict[int, tuple[int, int, int]] = {}
    for q in correct:  # per view, from the least count of a correct process owing it
        for v, lo, hi in led.missed(q):
            if owing[q][v] and (v not in spans or lo < spans[v][1]):
                spans[v] = (v, lo, hi)
    best: tuple[str, int, int] | None = None
    for v, pos, rows in led.scan(sorted(spans.values(), key=lambda s: s[1])):
        top = [led.offsets[v] + led.count(q, v) for q in correct]
        got = np.array([pos < t for t in top])
        owe = np.array([owing[q][v] for q in correct])[:, None]
        bad = (ok[rows["sender"]] | got.any(axis=0)) & (owe & ~got).any(axis=0)
        if not bad.any():
            continue
        ids = led.past.ids(int(pos[0]), int(pos[-1]) + 1)
        if ids is None:
            return False
        m = pc.min(ids.filter(pa.array(bad))).as_py()
        if best is None or m < best[0]:
            k = int(pos[np.flatnonzero(bad)[ids.filter(pa.array(bad)).to_pylist().index(m)]])
            best = (m, k, v)
    return best


def _retired_violation(clean: Clean, led: Ledger, correct: list[str],
                       retired: tuple[str, int, int], done: dict) -> Result | None:
    """check's violation at a retired message: the send of it when its sender is
    correct, else the first correct process's delivery of it; the first correct process
    that owes it and did not deliver it."""
    m, k, v = retired
    top = {q: led.offsets[v] + led.count(q, v) for q in correct}
    sender = int(led.past.witness(k, k + 1)["sender"][0]) if led.past else -1
    if sender >= 0 and led.names[sender] in correct:
        wit = led.retired_send(k)
    else:
        d = next(q for q in correct if k < top[q])
        wit = led.delivery(d, v, k - led.offsets[v])
    if wit is None:
        return None
    p = next(q for q in correct if led.owes(q, v) and k >= top[q])
    why = (f"correct process {wit.process} sent it" if wit.kind == "send"
           else f"correct process {wit.process} delivered it")
    text = f"{m} is never delivered by correct process {p}, although {why}."
    return Result(NAME, clean.trace, Verdict.VIOLATED, [wit, led.last_event(p)], text,
                  "validity" if wit.kind == "send" else "agreement", done)


# not in tomkit scan: a data set's traces are judged for agreement and validity there
PROPERTY = Property(NAME, "sent or delivered by a correct process => delivered by all correct",
                    False, check, detect, __doc__, liveness=True, scan=False, stream=stream)
