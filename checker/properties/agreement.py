"""Agreement and validity, read at the end of a finite trace, with membership.

Definitions (Défago, Schiper and Urbán 2004, section 2.2):

``agreement``: if a process delivers m, every correct process delivers m. In the uniform
scope (the default) the first process may be any process, a crashed one included
(*uniform agreement*: what a sequencer that delivers and then crashes must not break);
with ``--scope correct`` only a correct process's delivery obliges the others
(*agreement*, the non-uniform form).

``validity``: if a correct process sends m, it delivers m.

Correct: a process that logs no ``crash`` record. Membership (Chockler, Keidar and
Vitenberg 2001, section 4: a process owes nothing for views it was not a member of):
in a trace with view events, process q owes a message delivered by p in view V (for
validity: sent in view V) only if q installed V; and a process that logs ``leave`` owes
nothing of the view it leaves from (it may have left before the message was sent), so it
is judged up to its leave. A late joiner therefore owes only what was delivered in the
views it joined. Without view events every correct process owes every message (a member
that joins late is expected to receive the whole history, as in a replicated log).

A process's first delivery of a message is the one read (a repeat is integrity's
business), as for the order properties. A message id sent more than once (by two
processes, or twice by one) is one message with several send events, as for fifo-order
and causal-order (integrity reports the reuse as duplicate-send). Agreement reads
deliveries only, so a reused id changes nothing in it. Validity binds each sender to its
own send: a correct process that sends m, first or not, delivers m; its witness is that
process's own (first) send of m, not another sender's. In a trace with a reused id the
vectorized engine keys sends by (process, message), as this check does, so it decides
the same; the SQL engine hands such a trace to this check.

Both are off by default (``--liveness`` turns them on with ``liveness``): a trace cut
before the system drained shows messages "not yet" delivered, which is no violation of
safety. Witness (agreement): p's delivery of m and the last event of correct process q,
which never delivers m; (validity): the send of m and the sender's last event.
"""

from __future__ import annotations

import numpy as np

from tomkit.checker import witness as W
from tomkit.checker.chunk import CRASH, LEAVE, Chunk, dense_ids
from tomkit.checker.properties.base import Options, Property, verdicts
from tomkit.checker.properties.scope import CORRECT, correct_counts, crashed
from tomkit.checker.result import Result, Verdict
from tomkit.checker.stream.clean import Clean
from tomkit.checker.stream.ledger import Ledger
from tomkit.checker.stream.views import NONE
from tomkit.checker.trace import Trace

__all__ = ["AGREEMENT", "NO_SENDS", "VALIDITY", "owes"]

AGREEMENT_NAME, VALIDITY_NAME = "agreement", "validity"
NO_SENDS = "no send events: nothing to judge"


def _membership(trace: Trace) -> dict[str, tuple[set[str], str | None]]:
    """Per process: the views it installed, and the view it left from (None: no leave)."""
    out = {}
    for p in trace.processes:
        views, cur, left = set(), None, None
        for e in trace.events[p]:
            if e.kind == "view":
                views.add(e.view)
                cur = e.view
            elif e.kind == "leave" and left is None:
                left = cur if cur is not None else ""
        out[p] = (views, left)
    return out


def owes(trace: Trace, q: str, view: str | None,
         membership: dict[str, tuple[set[str], str | None]] | None = None) -> bool:
    """Whether process q owes a message delivered (or sent) in ``view`` (module
    docstring); q's being correct is the caller's question."""
    views, left = (membership or _membership(trace))[q]
    if not trace.has_views:
        return left is None  # a leaver without views: no view tells what it owed
    if view is None or view not in views:
        return False
    return left != view


def _last(trace: Trace, p: str) -> W.WitnessEvent:
    return W.event(trace.events[p][-1])


def check_agreement(trace: Trace, options: Options = Options()) -> Result:
    bad = crashed(trace)
    correct = [p for p in trace.processes if p not in bad]
    deliverers = correct if options.scope == CORRECT else trace.processes
    mem = _membership(trace)
    have = {p: set(trace.delivery_index[p]) for p in trace.processes}
    for p in deliverers:
        views = trace.delivery_views(p)
        for i, e in trace.first_deliveries[p]:
            for q in correct:
                if q == p or e.msg in have[q] or not owes(trace, q, views[i], mem):
                    continue
                where = f" in view {views[i]}, which {q} installed" if trace.has_views else ""
                who = "crashed process" if p in bad else "process"
                text = (f"{who} {p} delivers {e.msg}{where}; correct process {q} never "
                        "delivers it.")
                return Result(AGREEMENT_NAME, trace.id, Verdict.VIOLATED,
                              [W.delivery(trace, p, i), _last(trace, q)], text,
                              "uniform" if p in bad else "agreement")
    return Result(AGREEMENT_NAME, trace.id, Verdict.HOLDS)


def check_validity(trace: Trace, options: Options = Options()) -> Result:
    if not trace.has_sends:
        return Result(VALIDITY_NAME, trace.id, Verdict.UNKNOWN, explanation=NO_SENDS)
    bad = crashed(trace)
    mem = _membership(trace)
    for p in trace.processes:
        if p in bad:
            continue
        views = trace.views_at[p]
        for e, v in zip(trace.events[p], views):
            if e.kind != "send" or e.msg in trace.delivery_index[p]:
                continue
            if mem[p][1] is not None and (not trace.has_views or mem[p][1] == v):
                continue  # it left (in the sending view): judged up to its leave
            text = f"correct process {p} sends {e.msg} and never delivers it."
            return Result(VALIDITY_NAME, trace.id, Verdict.VIOLATED,
                          [W.send(trace, e.msg, p), _last(trace, p)], text, "validity")
    return Result(VALIDITY_NAME, trace.id, Verdict.HOLDS)


def _simple(c: Chunk) -> np.ndarray:
    """Traces without view or leave events: their obligations need no membership."""
    has = c.trace_has["view"].copy()
    has[c.t[c.kind == LEAVE]] = True
    return ~has


def detect_agreement(c: Chunk, options: Options) -> np.ndarray:
    correct_tp, n_correct, got = correct_counts(c)
    by = correct_tp[c.f_tp] if options.scope == CORRECT else np.ones(len(c.f_tm), bool)
    need = np.bincount(c.f_tm[by], minlength=c.ntm) > 0
    short = need & (got < n_correct[c.tm_t])
    violated = np.zeros(c.ntr, bool)
    violated[c.tm_t[short]] = True
    simple = _simple(c)
    return verdicts(c, violated & simple, exact=~simple)


def detect_validity(c: Chunk, options: Options) -> np.ndarray:
    crashed_tp = np.zeros(c.ntp, bool)
    crashed_tp[c.tp[c.kind == CRASH]] = True
    # a send whose sender has no first delivery of it: per (process, message) key
    s = c.s_rows
    key_f = c.f_tp.astype(np.int64) * max(c.max_msgs, 1) + c.ml[c.f_rows]
    key_s = c.tp[s].astype(np.int64) * max(c.max_msgs, 1) + c.ml[s]
    own = _member(key_s, key_f, max(c.pm_space(), 1))
    missing = ~own & ~crashed_tp[c.tp[s]]
    violated = np.zeros(c.ntr, bool)
    violated[c.t[s[missing]]] = True
    unknown = ~c.trace_has["send"]
    simple = _simple(c)
    return verdicts(c, violated & simple & ~unknown, unknown, ~simple & ~unknown)


def _member(keys: np.ndarray, within: np.ndarray, space: int) -> np.ndarray:
    """Per key, whether it is among ``within`` (keys in 0..space-1): a direct-addressed
    table when the space is small, else one factorisation of both."""
    if space <= 4 * (len(keys) + len(within)) + 65536:
        have = np.zeros(space, bool)
        have[within] = True
        return have[keys]
    ids, _ = dense_ids(np.concatenate((within, keys)), space)
    have = np.zeros(int(ids.max(initial=-1)) + 1, bool)
    have[ids[:len(within)]] = True
    return have[ids[len(within):]]


def _no_sends(c: Chunk, ti: int, o: Options) -> str:
    return NO_SENDS


def stream_agreement(clean: Clean, options: Options) -> Result | None:
    """A clean single pass (checker/stream/): each process delivered, view by view, a
    prefix of each view's range of one sequence, so p's deliveries in view v reach a
    correct q that owes v exactly when q delivered as many in v; the first violation in
    check_agreement's order (p, then p's deliveries, then q) is p's delivery at q's count
    in the first such view; that delivery is held, or retired and read back from disk
    (checker/stream/retired.py: its id, p's line by its delivery number). None: its
    witness is not kept (the whole trace)."""
    led = clean.ledger
    if led is None:
        return None
    correct = sorted(clean.correct())
    deliverers = correct if options.scope == CORRECT else sorted(clean.processes)
    for p in deliverers:
        for stay in led.stays[p]:
            short = [(led.count(q, stay.view), q) for q in correct
                     if q != p and led.owes(q, stay.view)]
            short = [(n, q) for n, q in short if n < stay.count]
            if not short:
                continue
            j = min(short)[0]
            q = next(q for n, q in short if n == j)
            d = led.delivery(p, stay.view, j)
            if d is None:
                return None
            name = led.view_names[stay.view]
            where = f" in view {name}, which {q} installed" if led.view_records else ""
            who = "crashed process" if p in clean.crashed else "process"
            text = f"{who} {p} delivers {d.msg}{where}; correct process {q} never delivers it."
            return Result(AGREEMENT_NAME, clean.trace, Verdict.VIOLATED,
                          [d, led.last_event(q)], text,
                          "uniform" if p in clean.crashed else "agreement")
    return Result(AGREEMENT_NAME, clean.trace, Verdict.HOLDS)


def stream_validity(clean: Clean, options: Options) -> Result | None:
    """A clean single pass: a correct sender's sends it did not deliver are held (in S at
    or past its position, or delivered by none) or, when it is behind the retired prefix,
    retired past its count in their view (checker/stream/ledger.py: ``missed``), so the
    first in its send order is the held one or the first retired one, whichever has the
    smaller index among its sends. None: the whole trace decides (a witness not kept)."""
    if not clean.senders:
        return Result(VALIDITY_NAME, clean.trace, Verdict.UNKNOWN, explanation=NO_SENDS)
    led = clean.ledger
    if led is None:
        return None
    w = led.window
    for p in sorted(clean.senders - clean.crashed):
        leave = led.left_from(p)
        if leave is not None and not led.view_records:
            continue  # it left, and no view tells when: judged up to its leave
        best: tuple[int, int, bool] | None = None  # (send index, code or position, retired)
        if led.behind(p):
            if led.past is None:
                return None
            best = _retired_send(led, p, leave)
        mine = np.flatnonzero(w.sender == led.names.index(p))
        ends = led.ends(p)
        v = w.view[mine]
        pos = w.pos[mine]
        missed = (pos < 0) | (pos >= ends[v])
        if leave is not None and leave != NONE:
            missed &= v != leave  # it left from the sending view
        if missed.any():
            code = mine[missed]
            sends = np.array([led.stay(p, int(x)).sends for x in v[missed]]) + w.rank[code]
            i = int(np.argmin(sends))
            if best is None or int(sends[i]) < best[0]:
                best = (int(sends[i]), int(code[i]), False)
        if best is None:
            continue
        s = led.retired_send(best[1]) if best[2] else led.send(best[1])
        if s is None:
            return None
        text = f"correct process {p} sends {s.msg} and never delivers it."
        return Result(VALIDITY_NAME, clean.trace, Verdict.VIOLATED,
                      [s, led.last_event(p)], text, "validity")
    return Result(VALIDITY_NAME, clean.trace, Verdict.HOLDS)


def _retired_send(led: Ledger, p: str, leave: int | None) -> tuple[int, int, bool] | None:
    """p's first retired send that p did not deliver (its send index, its position):
    the first of its sends in the retired positions past p's count in their view (a
    sender's messages lie in S in its send order), less the view it left from."""
    me = led.names.index(p)
    spans = [(v, lo, hi) for v, lo, hi in led.missed(p) if led.stay(p, v) is not None and
             not (leave is not None and leave != NONE and v == leave)]
    for _, pos, rows in led.scan(spans):
        hit = np.flatnonzero(rows["sender"] == me)
        if len(hit):
            return int(rows["sidx"][hit[0]]), int(pos[hit[0]]), True
    return None


AGREEMENT = Property(AGREEMENT_NAME, "delivered by one process => delivered by every "
                     "correct process that owes it", False, check_agreement,
                     detect_agreement, __doc__, scoped=True, liveness=True,
                     stream=stream_agreement)
VALIDITY = Property(VALIDITY_NAME, "a correct process delivers what it sends", False,
                    check_validity, detect_validity, __doc__, _no_sends, liveness=True,
                    stream=stream_validity)
