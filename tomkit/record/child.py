"""A client of ours running as a child process that prints its events, one JSON object a
line, in its own order: ``send``, ``deliver``, ``view`` and ``leave`` lines become trace
records of one process (with the client's clock), anything else is kept in the raw file
only.

The Corosync and JGroups clients both speak this; each recorder may name views its own
way (:meth:`EventReader.view`).
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path

from tomkit.record.log import EventLog

__all__ = ["EventReader", "until", "drain", "audience"]


class EventReader(threading.Thread):
    """Reads one client's lines and logs its events in its order."""

    def __init__(self, name: str, proc: subprocess.Popen, log: EventLog, raw: Path):
        super().__init__(daemon=True, name=f"read-{name}")
        self.process, self.proc, self.log, self.raw = name, proc, log, raw
        self.members: list[str] = []
        self.sent_msgs: set[str] = set()
        self.delivered_msgs: set[str] = set()
        self.events: dict[str, int] = {}

    def run(self) -> None:
        assert self.proc.stdout is not None
        with open(self.raw, "w") as raw:
            for line in self.proc.stdout:
                raw.write(line)
                try:
                    ev = json.loads(line)
                except ValueError:
                    continue  # the client's runtime wrote something else: raw file only
                self.events[ev["ev"]] = self.events.get(ev["ev"], 0) + 1
                self.event(ev)

    def event(self, ev: dict) -> None:
        kind, t = ev["ev"], ev["time"]
        if kind == "send":
            self.log.add(self.process, "send", msg=ev["msg"], time=t)
            self.sent_msgs.add(ev["msg"])
        elif kind == "deliver":
            self.log.add(self.process, "deliver", msg=ev["msg"], time=t)
            self.delivered_msgs.add(ev["msg"])
        elif kind == "view":
            self.members = sorted(ev["members"])
            self.view(ev)
        elif kind == "leave":  # the client leaves the group: its last record
            self.log.add(self.process, "leave", time=t)

    def view(self, ev: dict) -> dict | None:
        """Log a view line (the client names the view); the record."""
        return self.log.add(self.process, "view", view=ev["view"], members=self.members,
                            time=ev["time"])

    def command(self, text: str) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(text + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass


def until(cond, deadline: float, what: str, tmp: Path) -> None:
    """Wait for ``cond()``; RuntimeError naming ``what`` at the deadline."""
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.05)
    raise RuntimeError(f"{what} before the deadline (logs in {tmp}; set "
                       "TOMKIT_KEEP_RECORD=1 to keep them)")


def drain(alive: list[EventReader], deadline: float, say, settle: float = 1.0,
          owed=None) -> bool:
    """Wait until every survivor delivered every survivor's messages (what a reliable
    group owes its correct members; ``owed(reader, sent)`` narrows it, e.g. for a late
    joiner) and deliveries have not changed for ``settle`` seconds; False (with a
    warning) when the deadline came first."""
    owed = owed or (lambda reader, sent: sent)
    last, since = None, time.monotonic()
    while time.monotonic() < deadline:
        now = tuple(len(c.delivered_msgs) for c in alive)
        sent = set().union(*(c.sent_msgs for c in alive))
        if now != last or not all(owed(c, sent) <= c.delivered_msgs for c in alive):
            last, since = now, time.monotonic()
        elif time.monotonic() - since > settle:
            return True
        time.sleep(0.05)
    say("  warning: not drained by the deadline: some survivor misses a survivor's message, "
        "or deliveries were still changing")
    return False


def audience(log: EventLog, process: str) -> set[str]:
    """The messages some process delivered in a view that includes ``process``: what
    extended virtual synchrony owes it (a message sent before a partition and delivered
    in the smaller configuration is not owed to the node cut off)."""
    members: dict[str, list[str]] = {}
    owed = set()
    for r in list(log.records):
        if r["kind"] == "view":
            members[r["process"]] = r["members"]
        elif r["kind"] == "deliver" and process in members.get(r["process"], ()):
            owed.add(r["msg"])
    return owed
