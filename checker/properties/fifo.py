"""FIFO order per sender.

Definition (FIFO order, Hadzilacos and Toueg 1994; Défago, Schiper and
Urbán 2004, section 2.2): if a process sends m before m', no process
delivers m' unless it has delivered m before. The send order is the
sender's local order of its send events. Gap-free: skipping m and
delivering m' is a violation, not only reordering them.

Unknown when the trace logs no send events. Deliveries of unsent messages
are skipped (integrity reports them).

Membership (Chockler, Keidar and Vitenberg 2001, section 4: a process owes nothing for
views it was not a member of): in a trace with view events, process p owes a message of
sender s only if s sent it in a view p installed; so a member that joins late starts
each sender's sequence at the first message sent in a view it installed (a message it
delivers anyway still counts, in its place).
An id sent by several processes (or twice by one): the trace format names a message by
its id, so such an id is one message with several send events, and the definition above
quantifies over send events: m is in the order of *each* process that sends it, at the
place of that process's first send of it, and p's one (first) delivery of m counts in
each of those orders. A sender's later send of an id it already sent adds no place (p
can deliver m once; a second place could never be met). Attributing the id to one
sender only (the first by name, as before) made a false alarm: the other sender's order
still held m, so its next message was reported as skipping m though p had delivered m
before it. The reuse itself is integrity's duplicate-send; here a violation is only a
breach of some sender's order. The vectorized engine and the SQL engine hand a trace
with a reused id to this exact check, and the single pass does (its picture breaks).
Check: at each process, the messages of each sender must arrive with send
ranks 0, 1, 2, ... in that order; one stable sort by (process, sender).
Witness: the sender's sends of m and m', p's delivery of m', and p's later
delivery of m if there is one.
"""

from __future__ import annotations

import numpy as np

from tomkit.checker import witness as W
from tomkit.checker.chunk import Chunk, dense_ids
from tomkit.checker.properties.base import Options, Property, verdicts
from tomkit.checker.result import Result, Verdict
from tomkit.checker.stream.clean import Clean
from tomkit.checker.trace import Trace

NAME = "fifo-order"
NO_SENDS = "no send events logged, so no send order"


def _owed(trace: Trace, p: str) -> dict[str, list[str]]:
    """Per sender, the messages p owes in the sender's order of first sends (module
    docstring)."""
    if not trace.has_views:
        return {s: list(trace.own_sends[s]) for s in trace.processes}
    installed = {e.view for e in trace.events[p] if e.kind == "view"}
    delivered = trace.delivery_index[p]
    out: dict[str, list[str]] = {}
    for s in trace.processes:
        msgs = []
        seen = set()
        for e, v in zip(trace.events[s], trace.views_at[s]):
            if e.kind != "send" or e.msg in seen:
                continue
            seen.add(e.msg)
            if v in installed or e.msg in delivered:
                msgs.append(e.msg)
        out[s] = msgs
    return out


def check(trace: Trace, options: Options = Options()) -> Result:
    if not trace.has_sends:
        return Result(NAME, trace.id, Verdict.UNKNOWN, explanation=NO_SENDS)
    idx = trace.delivery_index
    senders = trace.senders
    for p in trace.processes:
        count: dict[str, int] = {}
        owed = _owed(trace, p)
        for i, e in trace.first_deliveries[p]:
            for s in senders.get(e.msg, ()):  # each sender's order (module docstring)
                have = count.get(s, 0)
                seq = owed[s]
                if have < len(seq) and seq[have] == e.msg:
                    count[s] = have + 1
                    continue
                # seq's first `have` messages are p's earlier deliveries, so e.msg, which
                # seq holds (owed or delivered), lies further on: seq[have] is skipped
                m = seq[have]
                wit = [W.send(trace, m, s), W.send(trace, e.msg, s), W.delivery(trace, p, i)]
                j = idx[p].get(m)
                tail = f"never delivers {m}"
                if j is not None:
                    wit.append(W.delivery(trace, p, j))
                    tail = f"delivers {m} only later, as #{j}"
                text = (f"{s} sends {m} before {e.msg}, but {p} delivers {e.msg} "
                        f"as #{i} and {tail}.")
                return Result(NAME, trace.id, Verdict.VIOLATED, wit, text, "sender-order")
    return Result(NAME, trace.id, Verdict.HOLDS)


def detect(c: Chunk, options: Options) -> np.ndarray:
    # Per (delivering process, sender) group, the send ranks must be 0, 1, 2, ... in local
    # order. Without sorting: first the ranks must be exactly {0..count-1} (they are
    # distinct, so max == count - 1 says so), then scattering each delivery's position to
    # slot (group offset + rank) must give an ascending run per group.
    send_row = c.send_row[c.f_tm]
    rows = np.flatnonzero(send_row >= 0)
    sender = c.p[send_row[rows]].astype(np.int64)
    np_ = max(len(c.proc_names), 1)
    g, distinct = dense_ids(c.f_tp[rows].astype(np.int64) * np_ + sender, max(c.ntp, 1) * np_)
    ng = len(distinct)  # groups (process, sender), numbered in key order
    rank = c.send_rank[c.f_tm[rows]]
    count = np.bincount(g, minlength=ng)
    top = np.full(ng, -1, np.int64)
    np.maximum.at(top, g, rank)
    bad_group = top != count - 1
    ok = ~bad_group[g]
    offset = np.cumsum(count) - count
    slots = np.full(len(rows), -1, np.int64)
    slots[offset[g[ok]] + rank[ok]] = c.f_pos[rows[ok]]
    slot_group = np.repeat(np.arange(ng), count)
    descending = (slot_group[1:] == slot_group[:-1]) & (slots[1:] < slots[:-1])
    bad_group[slot_group[1:][descending]] = True
    violated = np.zeros(c.ntr, bool)
    violated[c.f_t[rows[bad_group[g]]]] = True
    unknown = ~c.trace_has["send"]
    # with views, membership may excuse a gap (module docstring); holding without the
    # excuse implies holding with it. A reused id is in each of its senders' orders, which
    # the ranks of its first send do not tell: the exact check
    views = c.trace_has["view"]
    resent = c.resent
    return verdicts(c, violated & ~unknown & ~views & ~resent, unknown,
                    ((violated & views) | resent) & ~unknown)


def stream(clean: Clean, options: Options) -> Result:
    """A clean single pass (checker/stream/) checked every sender's order on the one
    sequence all processes deliver prefixes of; only the scope's senders are left."""
    if not clean.in_scope(options.scope).senders:
        return Result(NAME, clean.trace, Verdict.UNKNOWN, explanation=NO_SENDS)
    if clean.gaps:  # a view's send its deliverers lack: the membership rule decides
        return None
    return Result(NAME, clean.trace, Verdict.HOLDS)


PROPERTY = Property(NAME, "each sender's messages delivered in send order, no gaps", False,
                    check, detect, __doc__, lambda c, ti, o: NO_SENDS, stream=stream)
