"""Maelstrom's ``broadcast`` workload: sets of values spread to every node.

Source: jepsen-io/maelstrom, ``doc/workloads.md``, "Workload: Broadcast": nodes get a
``topology`` first; clients send ``broadcast`` {message} (answered ``broadcast_ok``)
and ``read`` (answered ``read_ok`` {messages}, the set of every value the node has);
after the cluster healed, every node is read until all show the same set or a deadline
passes (the last round is the final reads).

Trace (v1): a ``send`` of value v at the node that received the broadcast request (not
logged when the node answered with a definite error: then it never happened); a
``deliver`` of v at a node the first time one of its reads shows v (values new in one
read in increasing order: a set has no order, so only integrity, agreement and
validity judge this trace, never an order property). Judged as:

* ``integrity``: a value read that no client broadcast (Maelstrom: unexpected), a
  value twice in one read (duplicate);
* ``validity`` and ``agreement`` at the end of the run: a value a correct node
  received and no node-final read shows, one node's value another never gets
  (Maelstrom: lost);
* and, beyond the trace: every *acknowledged* broadcast must be in every node's final
  read, even when the node that acknowledged it was killed since (Maelstrom's lost
  count), and a value a node once showed must stay in its reads (a node's set only
  grows).
"""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter
from typing import Any

from ..client import Client, History, Op
from .base import Anomaly, Workload
from .topology import topology

__all__ = ["Broadcast", "msg_id"]


def msg_id(value: Any) -> str:
    """A broadcast value as a v1 message id (ints as their digits, anything else as
    JSON, so a value changed in transit is another message)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return "json:" + json.dumps(value, sort_keys=True)


class Broadcast(Workload):
    name = "broadcast"
    properties = ("integrity", "validity", "agreement")
    vocabulary = {"integrity": "unexpected or duplicate", "validity": "lost",
                  "agreement": "lost"}
    ordered = False  # reads are sets
    #: the history's name of a write, and the field of read_ok holding the values
    write_f, read_field = "broadcast", "messages"

    def __init__(self, harness):
        super().__init__(harness)
        self.next_value = 0
        self.finals: list[Op] = []
        self.read_anomalies: list[Anomaly] = []

    async def setup(self) -> None:
        topo = topology(self.h.cfg.topology, self.h.nodes)
        client = next(iter(self.h.clients_by_id.values()))
        for n in self.h.nodes:
            op = await client.call(self.h.history, "topology",
                                   {"type": "topology", "topology": topo}, topo[n],
                                   self.h.cfg.timeout, "topology_ok", node=n)
            if op.type != "ok":
                self.h.faults.append(f"{n} did not acknowledge its topology: "
                                     f"{op.error or op.type}")

    async def operation(self, client: Client, rng: random.Random) -> None:
        if rng.random() < 0.5:
            v = self.next_value
            self.next_value += 1
            await client.call(self.h.history, "broadcast", {"type": "broadcast",
                                                            "message": v},
                              v, self.h.cfg.timeout, "broadcast_ok")
        else:
            await self.read(client)

    async def read(self, client: Client, node: str | None = None) -> Op:
        op = await client.call(self.h.history, "read", {"type": "read"}, None,
                               self.h.cfg.timeout, "read_ok", node=node)
        if op.type == "ok":
            msgs = op.result.get(self.read_field)
            if not isinstance(msgs, list):
                op.type, op.error = "info", f"read_ok without a {self.read_field!r} list"
                self.h.faults.append(f"{op.replied_by} answered a read without a "
                                     f"{self.read_field!r} list")
                op.result = None
            else:
                op.result = msgs
        return op

    async def final(self) -> None:
        """Read every node until all show the same set of values (or a deadline of
        max(5 s, 3 timeouts) passes): on a loaded machine the cluster may need longer
        than the recovery time, and a node read before it caught up would be judged as
        losing what it only had not yet received. The last round is the final reads."""
        clients = list(self.h.clients_by_id.values())
        deadline = self.h.now() + max(5.0, 3 * self.h.cfg.timeout)
        while True:
            ops = [await self.read(clients[i % len(clients)], n)
                   for i, n in enumerate(self.h.nodes)]
            done = all(op.type == "ok" for op in ops) and len(
                {frozenset(msg_id(v) for v in op.result) for op in ops}) == 1
            if done or self.h.now() >= deadline:
                break
            await asyncio.sleep(0.25)
        for op in ops:
            if op.type == "ok":
                op.f = "final-read"
                self.finals.append(op)
            else:
                self.h.faults.append(f"the final read of {op.node} failed: {op.error}")

    # ---- trace and checks -----------------------------------------------------------

    def _new_in_read(self, op: Op, known: list[str], seen: set[str],
                     out: list[Anomaly]) -> list[str]:
        """The message ids a read adds to what its node showed before, in delivery order;
        a value twice in one read comes twice (a duplicate)."""
        ids = [msg_id(v) for v in op.result]
        counts = Counter(ids)
        new = []
        for m in sorted(counts, key=_order_key):
            if m not in seen:
                new.append(m)
            new.extend([m] * (counts[m] - 1))
        return new

    def records(self, history: History) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        known: dict[str, list[str]] = {}
        seen: dict[str, set[str]] = {}
        for op in history.ops:
            if op.f == self.write_f and op.received_by is not None and op.type != "fail":
                out.append({"process": op.received_by, "kind": "send",
                            "msg": msg_id(op.value), "time": op.received_at,
                            "x_op": op.index, "x_client": f"c{op.client}",
                            "x_acked": op.type == "ok"})
        for op in history.ops:
            if op.f not in ("read", "final-read") or op.type != "ok":
                continue
            p = op.replied_by
            k, s = known.setdefault(p, []), seen.setdefault(p, set())
            for m in self._new_in_read(op, k, s, self.read_anomalies):
                out.append({"process": p, "kind": "deliver", "msg": m,
                            "time": op.replied_at, "x_op": op.index})
                k.append(m)
                s.add(m)
        return out

    def anomalies(self, history: History) -> list[Anomaly]:
        out: list[Anomaly] = []
        acked = [op for op in history.ops if op.f == self.write_f and op.type == "ok"]
        for fin in self.finals:
            have = {msg_id(v) for v in fin.result}
            lost = [op for op in acked if msg_id(op.value) not in have]
            if lost:
                shown = ", ".join(str(op.value) for op in lost[:8])
                more = f" and {len(lost) - 8} more" if len(lost) > 8 else ""
                out.append(Anomaly(
                    "lost", "agreement",
                    f"{len(lost)} acknowledged {self.write_f}(s) missing from the final read of "
                    f"{fin.replied_by}: {shown}{more}", [fin.index] + [op.index for op in lost]))
        out.extend(self._read_anomalies(history))
        out.extend(self.read_anomalies)
        return out

    def _read_anomalies(self, history: History) -> list[Anomaly]:
        """A node's reads only grow: a value it showed and no longer shows is lost."""
        out = []
        last: dict[str, tuple[Op, set[str]]] = {}
        for op in history.ops:
            if op.f not in ("read", "final-read") or op.type != "ok":
                continue
            now = {msg_id(v) for v in op.result}
            prev = last.get(op.replied_by)
            if prev is not None and not prev[1] <= now:
                gone = sorted(prev[1] - now, key=_order_key)
                out.append(Anomaly(
                    "lost", "agreement",
                    f"{op.replied_by} showed {', '.join(gone[:5])} in a read and not in a "
                    "later one", [prev[0].index, op.index]))
            last[op.replied_by] = (op, now)
        return out


def _order_key(m: str) -> tuple[int, int, str]:
    return (0, int(m), "") if m.lstrip("-").isdigit() else (1, 0, m)
