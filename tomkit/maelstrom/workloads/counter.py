"""Maelstrom's counters: ``pn-counter``, and ``g-counter`` (adds never negative).

Source: jepsen-io/maelstrom, ``doc/workloads.md``, "Workload: Pn-counter" and
"Workload: G-counter", its CRDT tutorial (``doc/04-crdts/02-counters.md``) and
Gossip Glomers' challenge #4 (a grow-only counter over ``seq-kv``): clients send
``add`` {delta} (answered ``add_ok``) and ``read`` (answered ``read_ok`` {value});
deltas are drawn as Maelstrom draws them, -5..4 for pn-counter and 0..4 for g-counter.
After the cluster healed every node is read; Maelstrom's checker accepts a final read
when it is the sum of the acknowledged adds plus the deltas of any subset of the adds
whose outcome is unknown (timed out, or an indefinite error); definite failures never
happened.

The history is judged here, not in the trace: a counter's read is one number, with no
message in it to deliver, so the v1 trace of a counter run holds the network's packets,
the joins and the crashes, for ``tomkit check --draw``, and no property:

* ``final read outside the acceptable set`` (Maelstrom's ``:errors``, beside its
  ``:acceptable`` ranges): a final read not in {acknowledged sum + any subset sum of
  the unknown adds} (a lost add, or one applied twice);
* ``impossible read`` (beyond Maelstrom, which judges only the final reads): a read,
  any time, above the sum of the positive deltas of the adds invoked before it
  completed and not definitely failed, or below the sum of their negative deltas: no
  counter could show it.

Final reads: every node is read, again while they disagree, until all show one value
or a deadline of max(5 s, 3 timeouts) passes (a gossiping node may need longer than
the recovery time on a loaded machine); the last round is judged.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

from ..client import Client, History, Op
from .base import Anomaly, Workload

__all__ = ["GCounter", "PNCounter", "acceptable_sums"]

#: past this many sums, the acceptable set is kept as its bounds (a superset: never a
#: false alarm, possibly a missed one)
MAX_SUMS = 1 << 20


def acceptable_sums(definite: int, unknown: list[int]) -> set[int] | tuple[int, int]:
    """Every sum ``definite`` + a subset of ``unknown``; past MAX_SUMS sums, the bounds
    (lowest, highest) instead."""
    sums = {definite}
    for i, d in enumerate(unknown):
        if d:
            sums |= {s + d for s in sums}
        if len(sums) > MAX_SUMS:
            rest = unknown[i + 1:]
            return (min(sums) + sum(x for x in rest if x < 0),
                    max(sums) + sum(x for x in rest if x > 0))
    return sums


def _ranges(sums: set[int] | tuple[int, int]) -> str:
    """The acceptable set as Maelstrom prints it: closed ranges [lo hi]."""
    if isinstance(sums, tuple):
        return f"[{sums[0]} {sums[1]}] (bounds)"
    out, xs = [], sorted(sums)
    lo = prev = xs[0]
    for x in xs[1:]:
        if x != prev + 1:
            out.append((lo, prev))
            lo = x
        prev = x
    out.append((lo, prev))
    shown = " ".join(f"[{a} {b}]" for a, b in out[:6])
    return shown + (f" and {len(out) - 6} more ranges" if len(out) > 6 else "")


class PNCounter(Workload):
    name = "pn-counter"
    properties = ()  # judged on the history (module docstring)
    vocabulary: dict[str, str] = {}
    lowest_delta = -5

    def __init__(self, harness):
        super().__init__(harness)
        self.finals: list[Op] = []

    async def operation(self, client: Client, rng: random.Random) -> None:
        if rng.random() < 0.5:
            delta = rng.randint(self.lowest_delta, 4)
            await client.call(self.h.history, "add", {"type": "add", "delta": delta},
                              delta, self.h.cfg.timeout, "add_ok")
        else:
            await self.read(client)

    async def read(self, client: Client, node: str | None = None) -> Op:
        op = await client.call(self.h.history, "read", {"type": "read"}, None,
                               self.h.cfg.timeout, "read_ok", node=node)
        if op.type == "ok":
            v = op.result.get("value")
            if type(v) is not int:
                op.type, op.error, op.result = "info", "read_ok without an integer value", None
                self.h.faults.append(f"{op.replied_by} answered a read with {v!r}, "
                                     "not an integer 'value'")
            else:
                op.result = v
        return op

    async def final(self) -> None:
        clients = list(self.h.clients_by_id.values())
        deadline = self.h.now() + max(5.0, 3 * self.h.cfg.timeout)
        while True:
            ops = [await self.read(clients[i % len(clients)], n)
                   for i, n in enumerate(self.h.nodes)]
            agreed = all(op.type == "ok" for op in ops) and len({op.result for op in ops}) == 1
            if agreed or self.h.now() >= deadline:
                break
            await asyncio.sleep(0.25)
        for op in ops:
            if op.type == "ok":
                op.f = "final-read"
                self.finals.append(op)
            else:
                self.h.faults.append(f"the final read of {op.node} failed: {op.error}")

    def anomalies(self, history: History) -> list[Anomaly]:
        adds = [op for op in history.ops if op.f == "add"]
        definite = sum(op.value for op in adds if op.type == "ok")
        unknown = [op.value for op in adds if op.type not in ("ok", "fail")]
        sums = acceptable_sums(definite, unknown)
        out = []
        for op in self.finals:
            ok = (sums[0] <= op.result <= sums[1]) if isinstance(sums, tuple) \
                else op.result in sums
            if not ok:
                out.append(Anomaly(
                    "final read outside the acceptable set", "-",
                    f"{op.replied_by}'s final read is {op.result}; acceptable: "
                    f"{_ranges(sums)} (acknowledged adds sum to {definite}, "
                    f"{len(unknown)} add(s) of unknown outcome)", [op.index]))
        out.extend(self._impossible_reads(history))
        return out

    def _impossible_reads(self, history: History) -> list[Anomaly]:
        """Reads outside [negative deltas, positive deltas] of the adds invoked before
        the read completed, and not definitely failed."""
        events: list[tuple[float, int, Op]] = []
        for op in history.ops:
            if op.f == "add" and op.type != "fail":
                events.append((op.time, 0, op))
            elif op.f in ("read", "final-read") and op.type == "ok":
                events.append((op.done_time, 1, op))
        events.sort(key=lambda e: (e[0], e[1]))
        low = high = 0
        out = []
        for _, kind, op in events:
            if kind == 0:
                low += min(op.value, 0)
                high += max(op.value, 0)
            elif not low <= op.result <= high:
                out.append(Anomaly(
                    "impossible read", "-",
                    f"{op.replied_by} read {op.result} at {op.done_time:.3f} s, but the adds "
                    f"invoked by then can only make [{low} {high}]", [op.index]))
        return out

    def records(self, history: History) -> list[dict[str, Any]]:
        return []


class GCounter(PNCounter):
    name = "g-counter"
    lowest_delta = 0
