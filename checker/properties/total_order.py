"""Total order, in its weak (pairwise) and strong (gap-free, ToTo "agreed") forms.

See WEAK_DOC and STRONG_DOC below for the two definitions.
"""

from __future__ import annotations

import numpy as np

from tomkit.checker import witness as W
from tomkit.checker.chunk import Chunk, dense_ids
from tomkit.checker.properties.base import EXACT, Options, Property, verdicts
from tomkit.checker.properties.order_filter import consistent_traces
from tomkit.checker.result import Result, Verdict
from tomkit.checker.trace import Trace

WEAK_DOC = """Total order, weak (pairwise).

Definition (uniform total order, Défago, Schiper and
Urbán 2004, section 2.2, restricted to processes that deliver both): for
any two processes p, q and messages m, m' delivered by both, p delivers m
before m' if and only if q delivers m before m'. Witness: p delivers m
before m', q delivers m' before m (four deliveries).

Check: a trace that passes the order-consistency filter (order_filter.py:
one sequence fits all processes) holds; any other trace gets the exact
pairwise scan, which walks each pair's common messages once.

Reads first deliveries only (repeats are integrity's business).
"""

STRONG_DOC = """Total order, strong (gap-free).

Definition (the "agreed multicast" order of ToTo:
Dolev, Kramer, Malki, "Early delivery totally ordered multicast in
asynchronous environments", FTCS-23, 1993, section 2; file 000 of
shared/papers): if p delivers m before m', then every process connected to
p that delivers m' delivers m before it. Decision (the paper leaves
"connected" to the membership service): p and q are connected for m' when
both deliver m' in the same installed view; "before it" counts deliveries
in that view. In a trace without view events every process is connected to
every other and the whole sequence counts. Unlike the weak form this
forbids gaps: q may not skip m and deliver m' anyway.

Equivalently, and this is how it is checked in linear time, every process
that delivers m' in view V has the same immediate predecessor of m' among
its deliveries in V (by induction the whole prefix is then equal).
Witness: p delivers m then m'; q delivers m' without m before it (and, if q
delivers m later, that delivery too).

Reads first deliveries only (repeats are integrity's business).
"""

WEAK_NAME = "total-order-weak"
STRONG_NAME = "total-order-strong"


def check_weak(trace: Trace, options: Options = Options()) -> Result:
    idx = trace.delivery_index
    procs = trace.processes
    for a, p in enumerate(procs):
        for q in procs[a + 1:]:
            best_q, best_m = -1, None
            for _, e in trace.first_deliveries[p]:
                j = idx[q].get(e.msg)
                if j is None:
                    continue
                if j < best_q:
                    m, m2 = best_m, e.msg
                    wit = [W.delivery(trace, p, idx[p][m]), W.delivery(trace, p, idx[p][m2]),
                           W.delivery(trace, q, idx[q][m2]), W.delivery(trace, q, idx[q][m])]
                    text = (f"{p} delivers {m} before {m2}, but {q} delivers {m2} "
                            f"before {m}.")
                    return Result(WEAK_NAME, trace.id, Verdict.VIOLATED, wit, text,
                                  "pairwise-inversion")
                best_q, best_m = j, e.msg
    return Result(WEAK_NAME, trace.id, Verdict.HOLDS)


def detect_weak(c: Chunk, options: Options) -> np.ndarray:
    return verdicts(c, np.zeros(c.ntr, bool), exact=~consistent_traces(c))


def _epochs(trace: Trace) -> dict[str, list[tuple[str | None, int, str]]]:
    """Per process, its first deliveries as (view, index in deliveries, msg)."""
    out = {}
    for p in trace.processes:
        views = trace.delivery_views(p)
        out[p] = [(views[i], i, e.msg) for i, e in trace.first_deliveries[p]]
    return out


def check_strong(trace: Trace, options: Options = Options()) -> Result:
    epochs = _epochs(trace)
    # per (view, msg): each process's predecessor of msg in that view
    pred: dict[tuple, dict[str, str | None]] = {}
    for p, lst in epochs.items():
        prev_view, prev_msg = object(), None
        for v, _, m in lst:
            if v != prev_view:
                prev_msg = None
            pred.setdefault((v, m), {})[p] = prev_msg
            prev_view, prev_msg = v, m
    for p in trace.processes:
        for v, _, m2 in epochs[p]:
            mine = pred[(v, m2)][p]
            for q, theirs in pred[(v, m2)].items():
                if q == p or theirs == mine:
                    continue
                return _strong_witness(trace, epochs, p, q, v, m2)
    return Result(STRONG_NAME, trace.id, Verdict.HOLDS)


def _strong_witness(trace, epochs, p, q, v, m2) -> Result:
    def before(x):
        out = []
        for vv, i, m in epochs[x]:
            if m == m2 and vv == v:
                return out
            if vv == v:
                out.append((i, m))
        return out

    pre_p, pre_q = before(p), before(q)
    set_q = {m for _, m in pre_q}
    missing = [(i, m) for i, m in pre_p if m not in set_q]
    if not missing:  # q has everything p has before m2: orient the other way
        p, q, pre_p, pre_q = q, p, pre_q, pre_p
        set_q = {m for _, m in pre_q}
        missing = [(i, m) for i, m in pre_p if m not in set_q]
    idx = trace.delivery_index
    if missing:
        m = missing[-1][1]
        target = m2
    else:
        # same sets, other order: the first place the two orders part
        m, mq = next((a, b) for (_, a), (_, b) in zip(pre_p, pre_q) if a != b)
        # p delivers m before mq; q delivers mq without m before it
        target = mq
    wit = [W.delivery(trace, p, idx[p][m]), W.delivery(trace, p, idx[p][target]),
           W.delivery(trace, q, idx[q][target])]
    later = idx[q].get(m)
    tail = f" and never delivers {m}"
    if later is not None:
        wit.append(W.delivery(trace, q, later))
        tail = f" (it delivers {m} only later, as #{later})"
    where = f" in view {v}" if v is not None else ""
    text = (f"{p} delivers {m} before {target}{where}, but {q} delivers {target}{where} "
            f"without delivering {m} before it{tail}.")
    return Result(STRONG_NAME, trace.id, Verdict.VIOLATED, wit, text, "gap-or-inversion")


def detect_strong(c: Chunk, options: Options) -> np.ndarray:
    f = c.f_rows
    view = c.curview[f].astype(np.int64) + 1
    same = np.zeros(len(f), bool)
    same[1:] = (c.f_tp[1:] == c.f_tp[:-1]) & (view[1:] == view[:-1])
    pred = np.full(len(f), -1, np.int64)
    pred[1:] = np.where(same[1:], c.f_tm[:-1], -1)
    nv = len(c.view_names) + 1
    g, distinct = dense_ids(c.f_tm.astype(np.int64) * nv + view, max(c.ntm, 1) * nv)
    ng = len(distinct)
    lo = np.full(ng, np.iinfo(np.int64).max)
    hi = np.full(ng, -2, np.int64)
    np.minimum.at(lo, g, pred)
    np.maximum.at(hi, g, pred)
    bad_groups = np.flatnonzero(lo != hi)
    violated = np.zeros(c.ntr, bool)
    violated[c.tm_t[distinct[bad_groups] // nv]] = True
    return verdicts(c, violated)


WEAK = Property(WEAK_NAME, "any two processes deliver common messages in one order", True,
                check_weak, detect_weak, WEAK_DOC)
STRONG = Property(STRONG_NAME, "gap-free agreed order among connected processes", True,
                  check_strong, detect_strong, STRONG_DOC)

__all__ = ["WEAK", "STRONG", "EXACT"]
