"""The event log a recorder fills while the system runs, and its trace file.

Threads of one process (a member's writers and its watcher) log concurrently;
one lock orders them, so ``seq`` is the order in which the recorder saw the
events at that process. A ``send`` is logged before the client hands the message
to the system, so it precedes any delivery of it.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from pathlib import Path

from tomkit.traces.jsonl import encode_record
from tomkit.traces.writer import TraceWriter

__all__ = ["EventLog", "free_ports", "die_with_parent"]


class EventLog:
    """Records of one trace, each process's in its local order."""

    #: when set (``python -m tomkit.record --watch``), every record is also appended to
    #: this JSON Lines file as it is logged, for ``tomkit watch`` to follow while the run
    #: goes on
    live: str | Path | None = None

    def __init__(self, trace: str):
        self.trace = trace
        self._live = open(EventLog.live, "a", encoding="utf-8") if EventLog.live else None
        self.records: list[dict] = []
        self._lock = threading.Lock()
        self._seq: dict[str, int] = defaultdict(int)
        self._crashed: set[str] = set()
        self._frozen = False

    def add(self, process: str, kind: str, **fields) -> dict | None:
        """Log one event at ``process`` now; None (nothing logged) after its crash or the
        end of the run."""
        with self._lock:
            if self._frozen or process in self._crashed:
                return None
            rec = {"trace": self.trace, "process": process, "kind": kind,
                   "time": time.time(), "seq": self._seq[process], **fields}
            self._seq[process] += 1
            if kind == "crash":
                self._crashed.add(process)
            self.records.append(rec)
            if self._live is not None:
                self._live.write(encode_record(rec) + "\n")
                self._live.flush()
            return rec

    def freeze(self) -> None:
        """The run is over: what the teardown makes the system report is not logged."""
        with self._lock:
            self._frozen = True

    def count(self, kind: str, process: str | None = None) -> int:
        with self._lock:
            return sum(1 for r in self.records if r["kind"] == kind
                       and (process is None or r["process"] == process))

    def write(self, path: str | Path) -> int:
        """Write the trace (format from the suffix); the number of records."""
        with self._lock:
            records = list(self.records)
        with TraceWriter(path) as w:
            for r in records:
                w.write(r)
        return len(records)


def free_ports(n: int) -> list[int]:
    """``n`` distinct free TCP ports on 127.0.0.1 (held open together while chosen)."""
    import socket

    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def die_with_parent() -> None:
    """preexec_fn: the child gets SIGKILL when the recorder dies (Linux prctl)."""
    import ctypes
    import signal

    PR_SET_PDEATHSIG = 1
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
