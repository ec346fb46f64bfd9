"""The fault schedule every recorder runs: kill -9 of the leader or of a follower, a pause
(SIGSTOP, then SIGCONT), a partition of one member, and a restart of a killed one.

A schedule is a tuple of :class:`Fault`; each strikes when a fraction ``at`` of the
run's messages has been sent (short runs), or, in a repeating schedule
(:func:`repeating`, the long runs), every ``period`` seconds in turn. The recorder hands
the schedule a :class:`Cluster`, its own system seen through the few operations a fault
needs; the roles are the system's own (Raft's and ZAB's leader, JGroups' sequencer,
a stream's leader replica), asked from the system when the fault strikes. A system
without a leader (Corosync's ring) names none, and ``leader`` faults pick its first
member.

Every fault is written into the trace: the struck process's next record carries it in
``x_fault`` (:meth:`tomkit.record.log.EventLog.fault`); a kill is followed by the
process's ``crash``, and a restarted server comes back as a new process of the trace
(``z2`` restarted is ``z2r1``), whose first record is its ``join``: a restarted server
recovers its state from its disk and its peers, and the trace format has no recovery of
a crashed process.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

__all__ = ["Fault", "Cluster", "Unsupported", "SCHEDULES", "repeating", "FaultRunner"]


class Unsupported(Exception):
    """The recorder cannot inflict this fault (e.g. a restart of a system whose restarted
    member would be a new member, JGroups)."""


@dataclass(frozen=True)
class Fault:
    """One fault: ``action`` (kill, pause, partition, restart) of ``target`` (leader,
    follower; a restart takes the server killed longest ago), at a fraction ``at`` of
    the run's messages sent, held ``hold`` seconds (pause, partition)."""

    action: str
    target: str = "leader"
    at: float = 0.5
    hold: float = 3.0

    def __str__(self) -> str:
        what = f"{self.action} {self.target}" if self.action != "restart" else "restart"
        if self.action in ("pause", "partition"):
            what += f" {self.hold:g} s"
        return what


#: the standard fault runs, by name; every recorder offers those it supports
SCHEDULES: dict[str, tuple[Fault, ...]] = {
    "kill-leader": (Fault("kill", "leader"),),
    "kill-follower": (Fault("kill", "follower"),),
    "pause-leader": (Fault("pause", "leader"),),
    "pause-follower": (Fault("pause", "follower"),),
    # longer than a pause: Corosync's knet took more than 3 s to notice a cut link
    "partition-leader": (Fault("partition", "leader", hold=8.0),),
    "partition-follower": (Fault("partition", "follower", hold=8.0),),
    "kill-restart": (Fault("kill", "leader", at=0.3), Fault("restart", at=0.6)),
}

#: one cycle of the repeating schedule of the long runs
CYCLE: tuple[Fault, ...] = (
    Fault("kill", "leader"), Fault("restart"), Fault("pause", "leader"),
    Fault("kill", "follower"), Fault("restart"), Fault("partition", "follower", hold=8.0),
    Fault("pause", "follower"), Fault("partition", "leader", hold=8.0),
)


def repeating(actions: tuple[str, ...]) -> tuple[Fault, ...]:
    """The long runs' cycle, less the faults whose action the recorder cannot inflict
    (and a restart that follows one)."""
    return tuple(f for f in CYCLE if f.action in actions)


class Cluster(Protocol):
    """What a fault needs of a recorded system; servers are named as in the trace's
    first incarnation (``z1``...)."""

    def leader(self) -> str | None:
        """The server that leads now (asked from the system), None if none does."""

    def running(self) -> list[str]:
        """The servers up and not paused or partitioned, in order."""

    def process(self, server: str) -> str:
        """The trace's process of the server's current incarnation."""

    def kill(self, server: str) -> None:
        """SIGKILL the server; log its process's ``crash`` after its last record."""

    def pause(self, server: str) -> None: ...

    def resume(self, server: str) -> None: ...

    def isolate(self, server: str) -> None:
        """Cut the server off from the others (raise Unsupported where impossible)."""

    def heal(self, server: str) -> None: ...

    def restart(self, server: str) -> None:
        """Start a killed server again as a new process of the trace, whose first
        record is its ``join``."""


class FaultRunner(threading.Thread):
    """Strikes a schedule's faults in turn (a thread of the recorder).

    ``progress()`` is the fraction of the run's messages sent; with ``period`` set the
    schedule repeats, one fault every ``period`` seconds, and ``at`` is ignored."""

    def __init__(self, faults: tuple[Fault, ...], cluster: Cluster, log, *,
                 progress: Callable[[], float], deadline: float, say=print,
                 period: float | None = None, stop: threading.Event | None = None):
        super().__init__(daemon=True, name="faults")
        self.faults, self.cluster, self.log = faults, cluster, log
        self.progress, self.deadline, self.say, self.period = progress, deadline, say, period
        # halt: strike no more (a long run's sending is over); stop_event: the recorder
        # ends the run, and the thread may end (servers it restarted die with it)
        self.halt = threading.Event()
        self.stop_event = stop or threading.Event()
        self.killed: list[str] = []
        self.struck: list[dict] = []
        self.error: BaseException | None = None
        self.done = threading.Event()
        self.started = time.monotonic()

    def run(self) -> None:
        try:
            self._strike_all()
        except BaseException as e:  # reported by the recorder, which ends the run
            self.error = e
        finally:
            self.done.set()
        # a server restarted from this thread dies with it (PR_SET_PDEATHSIG names the
        # thread that started it): the thread lasts until the recorder ends the run
        self.stop_event.wait()

    def _strike_all(self) -> None:
        if self.period is None:
            for f in self.faults:
                while self.progress() < f.at and not self._wait(0.05):
                    pass
                if self._over():
                    return
                self.strike(f)
        else:
            k = 0
            while not self._wait(self.period) and self.faults:
                self.strike(self.faults[k % len(self.faults)])
                k += 1

    def _over(self) -> bool:
        return self.halt.is_set() or self.stop_event.is_set() \
            or time.monotonic() > self.deadline

    def _wait(self, seconds: float) -> bool:
        """Sleep; True when the run is over."""
        self.halt.wait(max(0.0, min(seconds, self.deadline - time.monotonic())))
        return self._over()

    def _choose(self, f: Fault) -> str | None:
        running = self.cluster.running()
        if f.action == "restart":
            return self.killed[0] if self.killed else None
        leader = self.cluster.leader()
        if f.target == "leader":
            return leader if leader in running else None
        followers = [s for s in running if s != leader]
        return followers[-1] if followers else None

    def strike(self, f: Fault) -> None:
        """Inflict one fault now (and end it after ``hold`` for a pause or partition)."""
        server = self._choose(f)
        if server is None:
            self.say(f"  fault {f}: no such server now, skipped")
            self.struck.append({"fault": str(f), "server": None})
            return
        process = self.cluster.process(server)
        note = {"fault": f.action, "role": f.target if f.action != "restart" else "killed",
                "server": server}
        when = (f"{time.monotonic() - self.started:.0f} s into the run" if self.period
                else f"at {self.progress():.0%} of the messages")
        self.say(f"  fault {f}: {server} ({process}) {when}")
        if f.action == "kill":
            self.log.fault(process, note, kind="crash")
            self.cluster.kill(server)
            self.killed.append(server)
        elif f.action == "restart":
            self.killed.remove(server)
            self.cluster.restart(server)
            if not self.log.annotate(self.cluster.process(server), "join", note):
                self.log.fault(self.cluster.process(server), note)
        elif f.action in ("pause", "partition"):
            start, end = ((self.cluster.pause, self.cluster.resume) if f.action == "pause"
                          else (self.cluster.isolate, self.cluster.heal))
            self.log.fault(process, {**note, "hold": f.hold})
            start(server)
            try:
                self._wait(f.hold)
            finally:
                end(server)
                self.log.fault(process, {"fault": "end " + f.action, "server": server})
        else:
            raise ValueError(f"unknown fault action {f.action!r}")
        self.struck.append({"fault": str(f), "server": server, "process": process})
