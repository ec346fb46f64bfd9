"""What the NATS and RabbitMQ recorders' clusters share: the clients run as tasks of one
asyncio loop in a thread of its own, while the fault schedule (``faults.py``) runs in the
recorder's thread; a restarted server is a new process (``z2`` -> ``z2r1``)."""

from __future__ import annotations

import asyncio
import random
import threading
import time
from typing import Any

from tomkit.record.log import EventLog

__all__ = ["ClientLoop"]


class ClientLoop:
    """The members, their incarnations, the send count and the clients' loop of one
    recorded cluster. ``run`` needs ``messages`` and ``send_for`` (None: until the
    deadline); a subclass adds the system's clients."""

    #: a failure while ending the clients' tasks is ignored (the run is over either way)
    QUIET_CLOSE = False

    def __init__(self, members: list[str], run: Any, log: EventLog, rng: random.Random,
                 deadline: float, thread_name: str):
        self.run, self.log, self.rng, self.deadline = run, log, rng, deadline
        self.members = list(members)
        self.incarnation = dict.fromkeys(self.members, 0)
        self.dead: set[str] = set()
        self.sent = 0
        self._lock = threading.Lock()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True,
                                       name=thread_name)
        self.thread.start()
        self.send_until = deadline if run.send_for is None else min(
            deadline, time.monotonic() + run.send_for)
        # a message sent before send_until is retried up to 60 s more, within the run
        self.retry_until = min(deadline, self.send_until + 60)

    def call(self, coro, timeout: float = 30):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def spawn(self, coro) -> None:
        asyncio.run_coroutine_threadsafe(coro, self.loop)

    def close(self) -> None:
        """End the clients' tasks (they close their connections), then the loop."""
        async def shutdown() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            if not tasks:
                return
            await asyncio.wait(tasks, timeout=5)
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        try:
            self.call(shutdown(), timeout=15)
        except Exception:
            if not self.QUIET_CLOSE:
                raise
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)
            if not self.thread.is_alive():
                self.loop.close()

    def process(self, server: str) -> str:
        k = self.incarnation[server]
        return server if k == 0 else f"{server}r{k}"

    def count(self) -> None:
        with self._lock:
            self.sent += 1

    def progress(self) -> float:
        return self.sent / (self.run.messages * len(self.members))
