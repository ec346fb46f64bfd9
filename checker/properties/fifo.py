"""FIFO order per sender.

Definition (FIFO order, Hadzilacos and Toueg 1994; Défago, Schiper and
Urbán 2004, section 2.2): if a process sends m before m', no process
delivers m' unless it has delivered m before. The send order is the
sender's local order of its send events. Gap-free: skipping m and
delivering m' is a violation, not only reordering them.

Unknown when the trace logs no send events. Deliveries of unsent messages
are skipped (integrity reports them).
Check: at each process, the messages of each sender must arrive with send
ranks 0, 1, 2, ... in that order; one stable sort by (process, sender).
Witness: the sender's sends of m and m', p's delivery of m', and p's later
delivery of m if there is one.
"""

from __future__ import annotations

import numpy as np
from tomkit.checker import witness as W
from tomkit.checker.chunk import Chunk, factorize, group_starts
from tomkit.checker.properties import Options, Property, verdicts
from tomkit.checker.result import Result, Verdict
from tomkit.checker.trace import Trace

NAME = "fifo-order"
NO_SENDS = "no send events logged, so no send order"


def check(trace: Trace, options: Options = Options()) -> Result:
    if not trace.has_sends:
        return Result(NAME, trace.id, Verdict.UNKNOWN, explanation=NO_SENDS)
    idx = trace.delivery_index
    for p in trace.processes:
        count: dict[str, int] = {}
        for i, e in trace.first_deliveries[p]:
            sent = trace.sends.get(e.msg)
            if sent is None:
                continue
            k, s = sent
            have = count.get(s.process, 0)
            if k != have:
                m = trace.send_lists[s.process][have].msg
                wit = [W.send(trace, m), W.send(trace, e.msg), W.delivery(trace, p, i)]
                j = idx[p].get(m)
                tail = f"never delivers {m}"
                if j is not None:
                    wit.append(W.delivery(trace, p, j))
                    tail = f"delivers {m} only later, as #{j}"
                text = (f"{s.process} sends {m} before {e.msg}, but {p} delivers {e.msg} "
                        f"as #{i} and {tail}.")
                return Result(NAME, trace.id, Verdict.VIOLATED, wit, text, "sender-order")
            count[s.process] = have + 1
    return Result(NAME, trace.id, Verdict.HOLDS)


def detect(c: Chunk, options: Options) -> np.ndarray:
    send_row = c.send_row[c.f_tm]
    has = send_row >= 0
    rows = np.flatnonzero(has)
    sender = c.tp[send_row[rows]].astype(np.int64)
    key = c.f_tp[rows].astype(np.int64) * max(c.ntp, 1) + sender
    g, _ = factorize(key)
    order = np.argsort(g, kind="stable")  # keeps each process's local order per sender
    gs = g[order]
    starts = group_starts(gs)
    grp = np.repeat(np.arange(len(starts) - 1), np.diff(starts))
    expected = np.arange(len(gs)) - starts[grp]
    got = c.send_rank[c.f_tm[rows[order]]]
    bad = rows[order][got != expected]
    violated = np.zeros(c.ntr, bool)
    violated[c.f_t[bad]] = True
    unknown = ~c.trace_has["send"]
    return verdicts(c, violated & ~unknown, unknown)


PROPERTY = Property(NAME, "each sender's messages delivered in send order, no gaps", True,
                    check, detect, __doc__, lambda c, ti, o: NO_SENDS)
