"""The network between nodes, clients and services, with latency and partitions.

Maelstrom's network (jepsen-io/maelstrom, ``doc/protocol.md`` and the ``--latency``,
``--latency-dist`` options): every message is delivered after a delay drawn from the
configured distribution (constant, uniform on [0, 2 x mean] or exponential with that
mean, in milliseconds), in any order that the delays give; nothing is lost unless a
fault says so. Partitions (the nemesis) cut node-to-node links in both directions; a
message crossing a cut is dropped and journaled with the reason. Clients and services
are never cut off, as in Maelstrom. A message to a node that is down (killed, not yet
restarted) is dropped and journaled too. A message to an id that names no node,
client or service is a recorded fault, answered with Maelstrom's ``node-not-found``
error when it is a request.

The journal keeps every message with its send time and fate; the trace's ``packet``
records are written from it.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .protocol import NODE_NOT_FOUND, Message, error_body

__all__ = ["DISTRIBUTIONS", "Latency", "Network", "Sent"]

DISTRIBUTIONS = ("constant", "uniform", "exponential")
OK, PARTITION, DOWN, UNKNOWN = "ok", "partition", "down", "unknown-destination"


@dataclass(frozen=True)
class Latency:
    """Maelstrom's latency: a mean in milliseconds and a distribution."""

    mean_ms: float = 0.0
    dist: str = "constant"

    def __post_init__(self) -> None:
        if self.dist not in DISTRIBUTIONS:
            raise ValueError(f"unknown latency distribution {self.dist!r}; known: "
                             f"{', '.join(DISTRIBUTIONS)}")
        if self.mean_ms < 0:
            raise ValueError("latency must not be negative")

    def sample(self, rng: random.Random) -> float:
        """One delay, in seconds."""
        m = self.mean_ms / 1000.0
        if m == 0:
            return 0.0
        if self.dist == "constant":
            return m
        if self.dist == "uniform":
            return rng.uniform(0, 2 * m)
        return rng.expovariate(1 / m)


@dataclass(slots=True)
class Sent:
    """One journaled message: when it was sent, by which incarnation, and its fate."""

    time: float
    src: str  # the sender's process name in the trace (n1, n1#2 after a restart, c0, lin-kv)
    msg: Message
    fate: str = OK


@dataclass
class Network:
    """Routes messages. ``node_sink(node)`` gives the live node process (None when
    down); ``client_sink(client)`` and ``service_sink(service)`` the handlers of
    clients and services; ``on_fault`` gets a line for each recorded fault."""

    latency: Latency
    rng: random.Random
    now: Callable[[], float]
    node_sink: Callable[[str], Any]
    node_name: Callable[[str], str]
    client_sink: Callable[[str], Callable[[Message, str, float], None] | None]
    service_sink: Callable[[str], Callable[[Message], list[Message]] | None]
    on_fault: Callable[[str], None]
    journal: list[Sent] = field(default_factory=list)
    #: (a, b) node pairs that cannot talk (both orders are stored)
    cut: set[tuple[str, str]] = field(default_factory=set)
    #: called when a client's request reaches a live node: (msg, process name, time)
    on_node_receives: Callable[[Message, str, float], None] | None = None

    def route(self, msg: Message, src_name: str | None = None) -> None:
        """Send ``msg`` on its way, from ``src_name`` (the sender's process name)."""
        now = self.now()
        sent = Sent(now, src_name or msg.src, msg)
        self.journal.append(sent)
        src, dest = msg.src, msg.dest
        if self.cut and (src, dest) in self.cut:
            sent.fate = PARTITION
            return
        node, client, service = self._sinks(dest)
        if node is False and client is None and service is None:
            sent.fate = UNKNOWN
            self.on_fault(f"{src} sent a {msg.body.get('type')!r} message to {dest!r}, "
                          "which names no node, client or service")
            if msg.body.get("msg_id") is not None and dest != src:
                self.route(Message(dest, src, error_body(
                    NODE_NOT_FOUND, f"no node {dest}", msg.body["msg_id"])))
            return
        delay = self.latency.sample(self.rng) if self.latency.mean_ms else 0.0
        if delay == 0:  # the destination just looked up is still the one to deliver to
            self._arrive(sent, node, client, service, now)
        else:
            asyncio.get_running_loop().call_later(delay, self._deliver, sent)

    def _sinks(self, dest: str) -> tuple[Any, Any, Any]:
        """(the node process, False when ``dest`` is no node; the client's handler; the
        service's), each None when absent."""
        node = self.node_sink(dest)
        if node is not False:
            return node, None, None
        client = self.client_sink(dest)
        if client is not None:
            return False, client, None
        return False, None, self.service_sink(dest)

    def _deliver(self, sent: Sent) -> None:
        """Deliver after a delay: the destination is looked up again (a node may have
        been killed or restarted meanwhile)."""
        self._arrive(sent, *self._sinks(sent.msg.dest), self.now())

    def _arrive(self, sent: Sent, node: Any, client: Any, service: Any, now: float) -> None:
        msg = sent.msg
        if node is not False:  # a node id: deliver if it is up
            if node is None or not node.alive:
                sent.fate = DOWN
                return
            if self.cut and (msg.src, msg.dest) in self.cut:  # cut while in flight
                sent.fate = PARTITION
                return
            if self.on_node_receives is not None and msg.src[:1] == "c":
                self.on_node_receives(msg, self.node_name(msg.dest), now)
            node.send(msg)
        elif client is not None:
            client(msg, sent.src, sent.time)
        elif service is not None:
            for reply in service(msg):
                self.route(reply)

    # ---- partitions -----------------------------------------------------------------

    def partition(self, groups: list[list[str]]) -> None:
        """Cut every link between nodes of different groups."""
        self.cut = {(a, b) for g in groups for h in groups if g is not h
                    for a in g for b in h}

    def heal(self) -> None:
        self.cut = set()
