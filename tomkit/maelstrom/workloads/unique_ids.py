"""Maelstrom's ``unique-ids`` workload: every generated id unique, across nodes.

Source: jepsen-io/maelstrom, ``doc/workloads.md``, "Workload: Unique-ids": a client
sends ``generate``; the node answers ``generate_ok`` {id}, where the id may be any
JSON value. Maelstrom judges it with Jepsen's unique-ids checker: no id is handed out
twice (its ``duplicated`` count). Under partitions a node must still answer (Gossip
Glomers' challenge #2 runs with ``--nemesis partition --availability total``).

Trace (v1): each acknowledged id is a ``send`` of that id (a v1 message id: integers as
their digits, any other value as its JSON text) by the node incarnation that answered,
at the time it answered. An id handed out twice is then a message id sent twice, which
``integrity`` reports (its duplicate-send clause), naming both answers.
"""

from __future__ import annotations

import random
from typing import Any

from ..client import Client, History
from .base import Workload
from .broadcast import msg_id

__all__ = ["UniqueIds"]


class UniqueIds(Workload):
    name = "unique-ids"
    properties = ("integrity",)
    vocabulary = {"integrity": "duplicated"}

    async def operation(self, client: Client, rng: random.Random) -> None:
        op = await client.call(self.h.history, "generate", {"type": "generate"}, None,
                               self.h.cfg.timeout, "generate_ok")
        if op.type == "ok":
            if "id" not in op.result:
                op.type, op.error, op.result = "info", "generate_ok without an 'id'", None
                self.h.faults.append(f"{op.replied_by} answered a generate without an 'id'")
            else:
                op.result = op.result["id"]

    def records(self, history: History) -> list[dict[str, Any]]:
        return [{"process": op.replied_by, "kind": "send", "msg": msg_id(op.result),
                 "time": op.replied_at, "x_op": op.index, "x_client": f"c{op.client}"}
                for op in history.ops if op.f == "generate" and op.type == "ok"]
