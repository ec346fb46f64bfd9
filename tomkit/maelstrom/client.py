"""Maelstrom's clients ``c0``, ``c1``, ...: RPCs to nodes, and the history they write.

Each client is bound to one node (client k to node k mod n, as Jepsen binds its
processes) and performs one operation at a time. An operation is written to the history
as an ``invoke`` and its completion: ``ok``, ``fail`` (a definite error: it did not
happen) or ``info`` (a timeout or an indefinite error: it may have happened), Jepsen's
types. The history is what ``history.jsonl`` holds, one JSON object per line, the same
shape that ``tomkit import --format jepsen`` reads.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .protocol import Message, error_name, is_definite

__all__ = ["Client", "History", "Op", "Reply"]


@dataclass(slots=True)
class Reply:
    """A node's answer: its body, the process name (incarnation) that sent it and when."""

    body: dict[str, Any]
    process: str
    time: float


@dataclass
class Op:
    """One client operation, from invocation to completion."""

    index: int
    client: int
    node: str
    f: str
    value: Any
    time: float
    type: str = "invoke"
    done_time: float | None = None
    result: Any = None
    error: str | None = None
    #: the process name of the node incarnation that received the request, and when
    received_by: str | None = None
    received_at: float | None = None
    #: the process name of the incarnation that replied, and when it wrote the reply
    replied_by: str | None = None
    replied_at: float | None = None
    #: the workload's name for the client's state when it invoked (kafka: its reader run)
    session: str | None = None
    #: the reply that came after the client gave up (the op stays info, as in Jepsen;
    #: the node did answer, which the trace may show)
    late_reply: Reply | None = None

    def to_events(self) -> list[dict[str, Any]]:
        """The invoke and completion, as Jepsen history entries."""
        inv = {"index": 2 * self.index, "process": self.client, "type": "invoke",
               "f": self.f, "value": self.value, "time": _ns(self.time), "node": self.node}
        out = [inv]
        if self.type != "invoke":
            done = {"index": 2 * self.index + 1, "process": self.client, "type": self.type,
                    "f": self.f, "value": self.result, "time": _ns(self.done_time),
                    "node": self.node}
            if self.error:
                done["error"] = self.error
            out.append(done)
        return out


def _ns(t: float | None) -> int | None:
    return None if t is None else int(round(t * 1e9))


@dataclass
class History:
    ops: list[Op] = field(default_factory=list)

    def start(self, client: int, node: str, f: str, value: Any, time: float) -> Op:
        op = Op(len(self.ops), client, node, f, value, time)
        self.ops.append(op)
        return op


class Client:
    """One client: ``rpc`` sends a request to its node and waits for the answer.

    Timeouts: each waiting request keeps its deadline, and one timer per client fires
    at the earliest of them, where a timer per request would be made and cancelled at
    every operation (the harness's speed; the deadlines are the same)."""

    def __init__(self, index: int, node: str, route: Callable[[Message], None],
                 now: Callable[[], float], faults: list[str]):
        self.index, self.id, self.node = index, f"c{index}", node
        self.route, self.now, self.faults = route, now, faults
        self.next_id = 0
        #: msg_id -> (the future of its reply, its deadline on the loop's clock, its op)
        self.pending: dict[int, tuple[asyncio.Future, float, Op | None]] = {}
        #: msg_id -> the op of each request given up (None: an rpc outside any op)
        self.given_up: dict[int, Op | None] = {}
        self.late = 0
        self._timer: asyncio.TimerHandle | None = None

    def receive(self, msg: Message, sender: str, time: float) -> None:
        irt = msg.body.get("in_reply_to")
        entry = self.pending.pop(irt, None) if type(irt) is int else None
        if entry is None:
            if irt in self.given_up:
                self.late += 1
                op = self.given_up[irt]
                if op is not None and op.late_reply is None:
                    op.late_reply = Reply(msg.body, sender, time)
                return
            self.faults.append(f"{msg.src} sent {self.id} a {msg.body.get('type')!r} "
                              f"message with in_reply_to {irt!r}, which answers no request "
                              f"of {self.id}")
            return
        if not entry[0].done():
            entry[0].set_result(Reply(msg.body, sender, time))

    async def rpc(self, body: dict[str, Any], timeout: float,
                  node: str | None = None, op: Op | None = None) -> Reply | None:
        """The reply, or None after ``timeout`` seconds (a reply after that is kept as
        ``op.late_reply``)."""
        self.next_id += 1
        msg_id = self.next_id
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        deadline = loop.time() + timeout
        self.pending[msg_id] = (fut, deadline, op)
        if self._timer is None or deadline < self._timer.when():
            self._arm(loop, deadline)
        self.route(Message(self.id, node or self.node, {**body, "msg_id": msg_id}))
        return await fut

    def _arm(self, loop: asyncio.AbstractEventLoop, when: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = loop.call_at(when, self._expire)

    def _expire(self) -> None:
        """Give up every request past its deadline; wait for the next deadline."""
        self._timer = None
        loop = asyncio.get_running_loop()
        now = loop.time() + 1e-3  # the loop runs a timer up to its clock's resolution early
        late = [m for m, (_, deadline, _) in self.pending.items() if deadline <= now]
        for msg_id in late:
            fut, _, op = self.pending.pop(msg_id)
            self.given_up[msg_id] = op
            if not fut.done():
                fut.set_result(None)
        if self.pending:
            self._arm(loop, min(deadline for _, deadline, _ in self.pending.values()))

    async def call(self, history: History, f: str, body: dict[str, Any], value: Any,
                   timeout: float, expect: str, node: str | None = None) -> Op:
        """Invoke ``f`` and complete its op: ok with the reply body when its type is
        ``expect``, fail on a definite error, info otherwise."""
        op = history.start(self.index, node or self.node, f, value, self.now())
        self.current = op
        reply = await self.rpc(body, timeout, node, op)
        op.done_time = self.now()
        if reply is None:
            op.type, op.error = "info", "timeout"
            return op
        op.replied_by, op.replied_at = reply.process, reply.time
        t = reply.body.get("type")
        if t == expect:
            op.type, op.result = "ok", reply.body
        elif t == "error":
            code = reply.body.get("code")
            op.type = "fail" if is_definite(code) else "info"
            op.error = f"{error_name(code)}: {reply.body.get('text', '')}".rstrip(": ")
        else:
            op.type = "info"
            op.error = f"unexpected reply type {t!r} (wanted {expect!r})"
            self.faults.append(f"{reply.process} answered {self.id}'s {f} with a {t!r} "
                               f"message, not {expect!r}")
        return op
