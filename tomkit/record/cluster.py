"""What every recorded cluster of servers shares (NATS, RabbitMQ, ZooKeeper): its
members and their incarnations (a restarted server is a new process of the trace, ``z2``
-> ``z2r1``), the count of messages sent and when sending ends, and the faults of
:class:`tomkit.record.faults.Cluster` that act on a server's process or its network
alone (pause, resume, isolate, heal) with the list of running servers they change.

Each system says what a server is (its ``Server`` in ``server.py``, its network in
``netns.py``) and how it leads, is killed and restarts; a server here is anything with a
``server`` (None before it starts) and a ``net``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from tomkit.record.log import EventLog

__all__ = ["Members", "log_send"]


class Members:
    """The members of one recorded cluster, by name, over ``hosts`` (name -> the
    system's server: ``.server`` and ``.net``). ``run`` gives ``messages`` per member
    and ``send_for`` (None: send until the deadline)."""

    def __init__(self, hosts: Mapping[str, Any], run: Any, deadline: float):
        self.hosts = dict(hosts)
        self.run, self.deadline = run, deadline
        self.members = list(self.hosts)
        self.incarnation = dict.fromkeys(self.members, 0)
        self.dead: set[str] = set()
        self.sent = 0
        self._lock = threading.Lock()
        self.send_until = deadline if run.send_for is None else min(
            deadline, time.monotonic() + run.send_for)
        # a message sent before send_until is retried up to 60 s more, within the run
        self.retry_until = min(deadline, self.send_until + 60)

    # -- the processes of the trace
    def process(self, server: str) -> str:
        k = self.incarnation[server]
        return server if k == 0 else f"{server}r{k}"

    def count(self) -> None:
        with self._lock:
            self.sent += 1

    def progress(self) -> float:
        return self.sent / (self.run.messages * len(self.members))

    # -- the faults of the Cluster protocol that touch one server alone
    def running(self) -> list[str]:
        return [n for n, h in self.hosts.items() if n not in self.dead
                and n not in h.net.cut and h.server is not None and h.server.alive()
                and not h.server.paused]

    def pause(self, server: str) -> None:
        self.hosts[server].server.pause()

    def resume(self, server: str) -> None:
        self.hosts[server].server.resume()

    def isolate(self, server: str) -> None:
        self.hosts[server].net.isolate(server)

    def heal(self, server: str) -> None:
        self.hosts[server].net.heal(server)


def log_send(log: EventLog, process: str, k: int, sent: set[str],
             count: Callable[[], None]) -> tuple[str, dict] | None:
    """Message number ``k`` of ``process`` about to go out: its name (``P.k``) and its
    ``send`` record, logged now, named in ``sent`` and counted; None when the process
    may log no more (crashed, or the run is over). Every system's sender opens a message
    so; how it then goes out and is retried is the system's (one at a time for NATS and
    RabbitMQ, ``clients.Publisher``; a pipelined window resent in order after a lost
    connection for ZooKeeper)."""
    msg = f"{process}.{k}"
    rec = log.add(process, "send", msg=msg)
    if rec is None:
        return None
    sent.add(msg)
    count()
    return msg, rec
