"""Maelstrom's ``echo`` workload: the smoke test of a node and of the harness.

Source: jepsen-io/maelstrom, ``doc/workloads.md``, "Workload: Echo": a client sends
``echo`` {echo: payload}; the node answers ``echo_ok`` with the same payload.

Trace: the node that receives a request logs a ``send`` of the payload (its message id
is the payload, unique per request), and the node that answers logs a ``deliver`` of
the payload it sent back. An answer with another payload is then a delivery of a
message never sent (``integrity``, unsent-delivery: Maelstrom's "wrong echo"); a
request a correct node received and never answered breaks ``validity`` (an answer that
came after the client gave up still counts: the operation is ``info`` in the history,
as in Jepsen, and the node delivered). Both are trace properties, so the workload has
no checks of its own.
"""

from __future__ import annotations

import json
import random
from typing import Any

from ..client import Client, History
from .base import Workload

__all__ = ["Echo"]


class Echo(Workload):
    name = "echo"
    properties = ("integrity", "validity")
    vocabulary = {"integrity": "wrong echo", "validity": "unanswered or wrong echo"}

    async def operation(self, client: Client, rng: random.Random) -> None:
        payload = f"Please echo {client.id}-{client.next_id + 1}-{rng.randrange(1 << 30)}"
        op = await client.call(self.h.history, "echo", {"type": "echo", "echo": payload},
                               payload, self.h.cfg.timeout, "echo_ok")
        if op.type == "ok":
            op.result = op.result.get("echo")

    def records(self, history: History) -> list[dict[str, Any]]:
        out = []
        for op in history.ops:
            if op.received_by is None:
                continue
            out.append({"process": op.received_by, "kind": "send", "msg": op.value,
                        "time": op.received_at, "x_op": op.index, "x_client": op.client})
            late = op.late_reply
            if op.type == "ok":
                got, by, at = op.result, op.replied_by, op.replied_at
            elif late is not None and late.body.get("type") == "echo_ok":
                # answered after the client gave up: slow, not silent (a loaded machine
                # must not turn into a validity violation)
                got, by, at = late.body.get("echo"), late.process, late.time
            else:
                continue
            got = got if isinstance(got, str) and got else json.dumps(got)
            out.append({"process": by, "kind": "deliver", "msg": got, "time": at,
                        "x_op": op.index})
        return out
