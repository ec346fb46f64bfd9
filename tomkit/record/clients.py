"""What the NATS and RabbitMQ recorders' clusters share beyond ``cluster.py``: the
clients run as tasks of one asyncio loop in a thread of its own, while the fault schedule
(``faults.py``) runs in the recorder's thread; a member's publisher sends one message at
a time and tries it again until it is acknowledged."""

from __future__ import annotations

import asyncio
import random
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from tomkit.record.cluster import Members, log_send
from tomkit.record.log import EventLog

__all__ = ["ClientLoop", "Publisher"]


class ClientLoop(Members):
    """The members of one recorded cluster (``cluster.py``) with its clients' loop.
    ``run`` needs ``messages`` and ``send_for`` (None: until the deadline); a subclass
    adds the system's clients."""

    #: a failure while ending the clients' tasks is ignored (the run is over either way)
    QUIET_CLOSE = False

    def __init__(self, hosts: Mapping[str, Any], run: Any, log: EventLog,
                 rng: random.Random, deadline: float, thread_name: str):
        super().__init__(hosts, run, deadline)
        self.log, self.rng = log, rng
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True,
                                       name=thread_name)
        self.thread.start()

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


class Publisher:
    """A member's publisher: one message at a time, each acknowledged or tried again.

    The loop is the same for every system; a subclass says how one message goes out
    (:meth:`put`, which fills the send record's acknowledgement fields or raises), what
    a failed try leaves to clean up (:meth:`failed`) and which failures a retry may
    cure (:meth:`retried`). A message logged as sent is tried again until
    ``retry_until`` even after the sending time is over, and never given up silently:
    its record says ``x_put`` "failed: ..." with the last error, and the publisher
    stops there (a later message would overtake it)."""

    #: what the system calls the member a publisher talks to ("server", "node")
    MEMBER = "server"
    #: seconds between two tries of one message
    PAUSE = 0.1

    def __init__(self, process: str, run: Any, log: EventLog, rng: random.Random,
                 count: Callable[[], None]):
        self.process, self.run_, self.log = process, run, log
        self.rng, self.count = rng, count
        self.stopped = threading.Event()
        self.sent_msgs: set[str] = set()
        self.done = threading.Event()

    def retried(self) -> tuple[type[BaseException], ...]:
        """The failures of :meth:`put` that another try may cure."""
        return (Exception,)

    async def open(self, deadline: float) -> None:
        """Before the first message (a connection made once)."""

    async def put(self, k: int, msg: str, rec: dict) -> None:
        """Send message number ``k`` (``msg``) and wait for its acknowledgement; fill
        ``rec`` (its ``send`` record) with ``x_put`` and the system's own fields."""
        raise NotImplementedError

    async def failed(self) -> None:
        """After a try that raised (a connection to drop)."""

    async def shut(self) -> None:
        """When the publisher ends, whatever the reason."""

    async def run(self, deadline: float, retry_until: float | None = None) -> None:
        """Send until ``deadline``; a message sent is retried until ``retry_until`` (a
        message logged as sent is not given up because the sending time is over)."""
        retry_until = deadline if retry_until is None else retry_until
        try:
            await self.open(deadline)
            errors = self.retried()
            for k in range(self.run_.messages):
                if self.stopped.is_set() or time.monotonic() > deadline:
                    break
                await asyncio.sleep(self.rng.expovariate(1 / self.run_.think))
                opened = log_send(self.log, self.process, k, self.sent_msgs, self.count)
                if opened is None:
                    break
                msg, rec = opened
                last = ""
                while True:
                    if self.stopped.is_set():
                        rec["x_put"] = f"failed: {self.MEMBER} killed ({last})"
                        break
                    if time.monotonic() > retry_until:
                        rec["x_put"] = f"failed: deadline ({last})"
                        break
                    try:
                        await self.put(k, msg, rec)
                    except errors as e:
                        last = f"{type(e).__name__}: {e}"[:200]
                        rec["x_retries"] = rec.get("x_retries", 0) + 1
                        await self.failed()
                        await asyncio.sleep(self.PAUSE)
                        continue
                    break
                if rec["x_put"].startswith("failed"):
                    break
        finally:
            self.done.set()
            await self.shut()
