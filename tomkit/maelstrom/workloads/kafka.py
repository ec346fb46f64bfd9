"""Maelstrom's ``kafka`` workload: append-only logs per key, polled by offset.

Source: jepsen-io/maelstrom, ``doc/workloads.md``, "Workload: Kafka": ``send`` {key,
msg} -> ``send_ok`` {offset}; ``poll`` {offsets: {key: from}} -> ``poll_ok`` {msgs:
{key: [[offset, msg], ...]}}; ``commit_offsets`` {offsets} -> ``commit_offsets_ok``;
``list_committed_offsets`` {keys} -> ``list_committed_offsets_ok`` {offsets}.

Each client sends (40 % of its operations), polls (30 %) from, per key, the offset
after the last it polled, commits what it has polled (15 %), and assigns anew (15 %), as
Jepsen's client does: it lists the committed offsets and polls on from there. A
reader's run between two assigns is one process of the trace (``c1``, then ``c1~2``).

Trace: one v1 trace per key (``<run>/<key>``): a ``send`` per send that reached a
node (with ``x_offset`` when acknowledged; none when it definitely failed), a
``deliver`` with ``x_offset`` per polled message. Judged by ``log-offsets``
(inconsistent offsets, nonmonotonic poll, skip, lost write: checker/properties/
log_offsets.py) and ``integrity`` (a message polled that nobody sent; a reader polling a
message twice). Beyond the trace, committed offsets must never go back: a
``list_committed_offsets`` must return, per key, at least every offset whose commit
was acknowledged, and every offset listed, before it was invoked.
"""

from __future__ import annotations

import random
from typing import Any

from ..client import Client, History, Op
from .base import Anomaly, Workload
from .broadcast import msg_id

__all__ = ["Kafka"]


class Kafka(Workload):
    name = "kafka"
    properties = ("integrity", "log-offsets")
    vocabulary = {"integrity": "duplicate or unexpected message",
                  "log-offsets": "inconsistent offsets, nonmonotonic poll, skip or lost write"}

    def __init__(self, harness):
        super().__init__(harness)
        self.keys = [str(i) for i in range(max(1, harness.cfg.key_count))]
        self.next_value = 0
        self.pos: dict[int, dict[str, int]] = {}
        self.epoch: dict[int, int] = {}

    def session(self, client: Client) -> str:
        e = self.epoch.get(client.index, 0)
        return client.id if e == 0 else f"{client.id}~{e + 1}"

    async def operation(self, client: Client, rng: random.Random) -> None:
        pos = self.pos.setdefault(client.index, {k: 0 for k in self.keys})
        r = rng.random()
        if r < 0.4:
            k, v = rng.choice(self.keys), self.next_value
            self.next_value += 1
            op = await self._call(client, "send", {"type": "send", "key": k, "msg": v},
                                  [k, v], "send_ok")
            if op.type == "ok":
                off = op.result.get("offset")
                if isinstance(off, bool) or not isinstance(off, int):
                    self._malformed(op, "send_ok without an integer offset")
                else:
                    op.result = [k, off]
        elif r < 0.7:
            op = await self._call(client, "poll", {"type": "poll", "offsets": dict(pos)},
                                  dict(pos), "poll_ok")
            if op.type == "ok":
                msgs = op.result.get("msgs")
                if not _well_formed(msgs):
                    self._malformed(op, "poll_ok whose msgs is not {key: [[offset, msg]...]}")
                    return
                op.result = msgs
                for k, pairs in msgs.items():
                    if pairs and k in pos:
                        pos[k] = max(pos[k], pairs[-1][0] + 1)
        elif r < 0.85:
            done = {k: o - 1 for k, o in pos.items() if o > 0}
            if not done:
                return
            op = await self._call(client, "commit_offsets",
                                  {"type": "commit_offsets", "offsets": done}, done,
                                  "commit_offsets_ok")
            if op.type == "ok":
                op.result = done
        else:
            op = await self._call(client, "list_committed_offsets",
                                  {"type": "list_committed_offsets", "keys": self.keys},
                                  list(self.keys), "list_committed_offsets_ok")
            if op.type == "ok":
                got = op.result.get("offsets")
                if not isinstance(got, dict) or not all(
                        isinstance(o, int) and not isinstance(o, bool) for o in got.values()):
                    self._malformed(op, "list_committed_offsets_ok without {key: offset}")
                    return
                op.result = got
                # assign: a new reader run from the committed offsets
                self.epoch[client.index] = self.epoch.get(client.index, 0) + 1
                self.pos[client.index] = {k: got[k] + 1 if k in got else 0
                                          for k in self.keys}

    async def _call(self, client: Client, f: str, body: dict, value: Any,
                    expect: str) -> Op:
        session = self.session(client)
        op = await client.call(self.h.history, f, body, value, self.h.cfg.timeout, expect)
        op.session = session
        return op

    def _malformed(self, op: Op, what: str) -> None:
        self.h.faults.append(f"{op.replied_by} answered {op.f} #{op.index} with a {what}")
        op.type, op.error, op.result = "info", what, None

    # ---- trace and checks -----------------------------------------------------------

    def records(self, history: History) -> list[dict[str, Any]]:
        run = f"{self.h.cfg.workload}-seed{self.h.cfg.seed}"
        out: list[dict[str, Any]] = []
        for op in history.ops:
            if op.f == "send" and op.received_by is not None and op.type != "fail":
                k, v = op.value
                r = {"trace": f"{run}/{k}", "process": op.session, "kind": "send",
                     "msg": msg_id(v), "time": op.received_at, "x_op": op.index,
                     "x_node": op.received_by}
                if op.type == "ok":
                    r["x_offset"] = op.result[1]
                out.append(r)
            elif op.f == "poll" and op.type == "ok":
                for k, pairs in sorted(op.result.items()):
                    for o, m in pairs:
                        out.append({"trace": f"{run}/{k}", "process": op.session,
                                    "kind": "deliver", "msg": msg_id(m), "x_offset": o,
                                    "time": op.replied_at, "x_op": op.index,
                                    "x_node": op.replied_by})
        return out

    def anomalies(self, history: History) -> list[Anomaly]:
        return committed_going_back(history.ops)


def _well_formed(msgs: Any) -> bool:
    return isinstance(msgs, dict) and all(
        isinstance(pairs, list) and all(
            isinstance(p, list) and len(p) == 2 and isinstance(p[0], int)
            and not isinstance(p[0], bool) for p in pairs)
        for pairs in msgs.values())


def committed_going_back(ops: list[Op]) -> list[Anomaly]:
    """Per key: every listed committed offset is at least every committed offset
    acknowledged, and every offset listed, before the list was invoked (real time)."""
    floor_events: list[tuple[float, str, int, int]] = []  # completion time, key, offset, op
    lists = []
    for op in ops:
        if op.type != "ok" or op.done_time is None:
            continue
        if op.f == "commit_offsets":
            floor_events += [(op.done_time, k, o, op.index) for k, o in op.result.items()]
        elif op.f == "list_committed_offsets":
            floor_events += [(op.done_time, k, o, op.index) for k, o in op.result.items()]
            lists.append(op)
    floor_events.sort()
    out = []
    for op in lists:
        best: dict[str, tuple[int, int]] = {}
        for t, k, o, idx in floor_events:
            if t >= op.time:
                break
            if o > best.get(k, (-1, -1))[0]:
                best[k] = (o, idx)
        for k, (o, idx) in sorted(best.items()):
            got = op.result.get(k)
            if got is None or got < o:
                shown = "nothing" if got is None else f"offset {got}"
                out.append(Anomaly(
                    "committed offsets going back", "committed-offsets",
                    f"c{op.client}'s list_committed_offsets (op {op.index}, to "
                    f"{op.replied_by}) gives key {k} {shown}, but offset {o} was committed "
                    f"or listed before it began (op {idx})", [idx, op.index]))
    return out
