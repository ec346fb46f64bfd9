"""The event log a recorder fills while the system runs, and its trace file.

Threads of one process (a member's writers and its watcher) log concurrently;
one lock orders them, so ``seq`` is the order in which the recorder saw the
events at that process. A ``send`` is logged before the client hands the message
to the system, so it precedes any delivery of it.
"""

from __future__ import annotations

import ctypes
import os
import signal
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
    #: the log made last in this process: ``python -m tomkit.record`` writes what it
    #: holds when a run is stopped before its end (Ctrl-C, SIGTERM, an error, a timeout),
    #: where the recorder's own write is never reached
    latest: EventLog | None = None

    def __init__(self, trace: str):
        EventLog.latest = self
        self.trace = trace
        self._live = open(EventLog.live, "a", encoding="utf-8") if EventLog.live else None
        self.records: list[dict] = []
        self._lock = threading.Lock()
        self._seq: dict[str, int] = defaultdict(int)
        self._crashed: set[str] = set()
        self._frozen = False
        self._faults: dict[str, list[tuple[str | None, dict]]] = defaultdict(list)
        self._last: dict[str, dict] = {}

    def add(self, process: str, kind: str, **fields) -> dict | None:
        """Log one event at ``process`` now; None (nothing logged) after its crash or the
        end of the run."""
        with self._lock:
            if self._frozen or process in self._crashed:
                return None
            rec = {"trace": self.trace, "process": process, "kind": kind,
                   "time": time.time(), "seq": self._seq[process], **fields}
            notes = self._faults.get(process)
            if notes and any(k in (None, kind) for k, _ in notes):
                rec["x_fault"] = [n for k, n in notes if k in (None, kind)]
                self._faults[process] = [(k, n) for k, n in notes if k not in (None, kind)]
            self._seq[process] += 1
            self._last[process] = rec
            if kind == "crash":
                self._crashed.add(process)
            self.records.append(rec)
            if self._live is not None:
                self._live.write(encode_record(rec) + "\n")
                self._live.flush()
            return rec

    def fault(self, process: str, note: dict, kind: str | None = None) -> None:
        """A fault of the schedule struck ``process`` now: the note (with its time) goes
        into the ``x_fault`` list of the process's next record (of ``kind``, if given:
        a kill's note goes to the ``crash``), so that the trace holds the schedule in
        each process's order (the format has no kind for faults)."""
        with self._lock:
            if not self._frozen:
                self._faults[process].append((kind, {**note, "time": time.time()}))

    def annotate(self, process: str, kind: str, note: dict) -> bool:
        """Add a fault's note to the process's latest record of ``kind`` (a restart's to
        the ``join`` the restarted server logged); False if it has none."""
        with self._lock:
            for rec in reversed(self.records):
                if rec["process"] == process and rec["kind"] == kind:
                    rec.setdefault("x_fault", []).append({**note, "time": rec["time"]})
                    return True
        return False

    def freeze(self) -> None:
        """The run is over: what the teardown makes the system report is not logged.
        Notes of faults that no later record carries go to the process's last record."""
        with self._lock:
            self._frozen = True
            for process, notes in self._faults.items():
                if notes and process in self._last:
                    self._last[process].setdefault("x_fault", []).extend(n for _, n in notes)
            self._faults.clear()

    def count(self, kind: str, process: str | None = None) -> int:
        with self._lock:
            return sum(1 for r in self.records if r["kind"] == kind
                       and (process is None or r["process"] == process))

    def write(self, path: str | Path, cut_short: str | None = None) -> int:
        """Write the trace (format from the suffix); the number of records. A run stopped
        before its end (``cut_short``, why) is frozen, and its last record says why in
        ``x_cut_short``: the file holds whole records, but not a run that ended."""
        if cut_short is not None:
            self.freeze()
        with self._lock:
            records = list(self.records)
        if cut_short is not None and records:
            records[-1] = {**records[-1], "x_cut_short": cut_short}
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


# The process that forks, noted just before each fork (os.fork and subprocess with a
# preexec_fn run these hooks): the child compares it with its parent after prctl.
_forker = os.getpid()


def _note_forker() -> None:
    global _forker
    _forker = os.getpid()


os.register_at_fork(before=_note_forker)
_prctl = ctypes.CDLL(None, use_errno=True).prctl


def die_with_parent() -> None:
    """preexec_fn: the child gets SIGKILL when the recorder dies (Linux prctl).

    prctl arms the signal for a parent that is alive when it is called: a recorder
    killed between the fork and the prctl never sends it, and its child would run on,
    orphaned (a loaded run saw a Corosync client outlive its killed recorder this way).
    So the child checks, after arming, that its parent is still the one that forked it,
    and kills itself if not."""
    PR_SET_PDEATHSIG = 1
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != _forker:
        os.kill(os.getpid(), signal.SIGKILL)
