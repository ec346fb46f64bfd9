"""``total-order-broadcast``: Maelstrom's broadcast, with reads returning sequences.

A workload of tomkit's own, in Maelstrom's style: nodes get a ``topology``; clients
send ``broadcast`` {message} (``broadcast_ok``) and ``read`` (``read_ok``
{messages}), where ``messages`` is the node's delivered sequence, *in delivery order*;
after the cluster healed every node is read until all show the same values (as in
broadcast).

Trace (v1): ``send`` as in broadcast; each read that extends the node's previous read
delivers the new values in the read's order, so the node's deliveries in the trace are
its delivered sequence. Judged as (Défago, Schiper and Urbán 2004, section 2.2, with
the prefix reading of a replicated log):

* ``prefix-order``: the reads of any two nodes are prefixes of one sequence (Maelstrom
  has no name for it; this document calls it an inconsistent order);
* ``integrity``: no value twice (duplicate), nothing never broadcast (unexpected);
* ``validity`` and ``agreement`` at the end, after healing: a value a correct node
  received is delivered by it, a value one node delivered is delivered by every
  correct node (lost);
* beyond the trace: a read that does not extend the node's previous read (the node
  rewrote its delivered sequence: nonmonotonic read), and every acknowledged broadcast
  in every final read (lost), as in broadcast.

A node restarted by the kill nemesis is a new process in the trace (``n1#2``): it
starts with an empty sequence and must catch up with the whole sequence by the end.
"""

from __future__ import annotations

from ..client import Op
from .base import Anomaly
from .broadcast import Broadcast, msg_id

__all__ = ["TotalOrderBroadcast"]


class TotalOrderBroadcast(Broadcast):
    name = "total-order-broadcast"
    properties = ("integrity", "prefix-order", "validity", "agreement")
    vocabulary = {"integrity": "duplicate or unexpected", "prefix-order": "inconsistent order",
                  "validity": "lost", "agreement": "lost"}
    ordered = True

    def _new_in_read(self, op: Op, known: list[str], seen: set[str],
                     out: list[Anomaly]) -> list[str]:
        ids = [msg_id(v) for v in op.result]
        if ids[:len(known)] == known:
            return ids[len(known):]
        k = next(i for i, (a, b) in enumerate(zip(ids, known)) if a != b) \
            if any(a != b for a, b in zip(ids, known)) else min(len(ids), len(known))
        out.append(Anomaly(
            "nonmonotonic read", "prefix-order",
            f"{op.replied_by}'s read #{op.index} does not extend what it showed before: "
            f"position {k} was {known[k] if k < len(known) else '(nothing)'}, now "
            f"{ids[k] if k < len(ids) else '(nothing)'}", [op.index]))
        # what it shows anew is still delivered, so the order properties see it too
        return [m for m in ids if m not in seen]

    def _read_anomalies(self, history):
        return []  # _new_in_read reports every read that goes back
