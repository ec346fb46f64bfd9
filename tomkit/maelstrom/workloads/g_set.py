"""Maelstrom's ``g-set`` workload: a grow-only set, read whole.

Source: jepsen-io/maelstrom, ``doc/workloads.md``, "Workload: G-set", and its CRDT
tutorial (``doc/04-crdts/01-g-set.md``): clients send ``add`` {element} (answered
``add_ok``) and ``read`` (answered ``read_ok`` {value: every element}); at the end,
after the cluster healed, every node is read (Jepsen's set-full checker judges the
reads: an acknowledged element missing from the final reads is ``lost``).

This is broadcast's judgement under other names, with no topology: the same trace
(an acknowledged or possible ``add`` is a send, an element first shown by a node's
read its delivery there) judged by ``integrity``, ``validity`` and ``agreement``, and
the same checks beyond the trace (every acknowledged element in every final read, a
node's reads only grow). See :mod:`.broadcast`.
"""

from __future__ import annotations

import random

from ..client import Client
from .broadcast import Broadcast

__all__ = ["GSet"]


class GSet(Broadcast):
    name = "g-set"
    vocabulary = {"integrity": "unexpected or duplicate", "validity": "lost",
                  "agreement": "lost"}
    # broadcast's history under g-set's names: an add is a broadcast of its element
    write_f, read_field = "add", "value"

    async def setup(self) -> None:
        """No topology: g-set nodes are told only the node ids (in init)."""

    async def operation(self, client: Client, rng: random.Random) -> None:
        if rng.random() < 0.5:
            v = self.next_value
            self.next_value += 1
            await client.call(self.h.history, "add", {"type": "add", "element": v}, v,
                              self.h.cfg.timeout, "add_ok")
        else:
            await self.read(client)
