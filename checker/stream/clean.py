"""What the single-pass checker knows of a trace it found clean, for the properties'
stream deciders (``Property.stream``).

The canonical-sequence pass (canon.py) finds a trace clean when every process's
deliveries are a prefix of one sequence of distinct messages, each sent exactly once
and in each sender's send order; with views, view by view (views.py). Every order and
view property then holds; what is left to decide needs only who sent, who delivered,
who crashed and who installed views, which this summary holds.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .latencies import Tally
    from .ledger import Ledger

__all__ = ["Clean", "NEVER"]

#: ``Clean.owed`` of a sender with a send no process delivered
NEVER = 1 << 62


@dataclass(frozen=True)
class Clean:
    trace: str
    processes: frozenset[str]
    senders: frozenset[str] = field(default_factory=frozenset)  # log at least one send
    deliverers: frozenset[str] = field(default_factory=frozenset)  # at least one deliver
    crashed: frozenset[str] = field(default_factory=frozenset)  # log a crash record
    #: per process, its deliveries: a clean trace's processes deliver prefixes of one
    #: sequence S, so this says which messages each has delivered
    delivered: dict[str, int] = field(default_factory=dict)
    #: per sender, the length of S's prefix that holds all its sends (NEVER: a send that
    #: no process delivered); a sender that delivers that much delivered all it sent
    owed: dict[str, int] = field(default_factory=dict)
    #: the processes with a send that carries deps (the causal relation is logged);
    #: each dependency was checked to lie before its message in the sequence
    deps_by: frozenset[str] = field(default_factory=frozenset)
    #: the processes that install a view (none: a trace without views); the views were
    #: laid out on the one sequence (stream/views.py), so each view property holds
    viewers: frozenset[str] = field(default_factory=frozenset)
    #: a join or leave record: the membership rules of the end-of-trace properties
    #: read them (their deciders leave such a trace to the whole-trace engine)
    membership: bool = False
    #: a view some process moved on from holds a send its deliveries lack: FIFO's
    #: membership rule decides whether that excuses a gap (stream/views.py)
    gaps: bool = False
    #: the sends of the trace (each message sent once)
    sent: int = 0
    #: per clock measured ("time", "real_time"), the measured first deliveries'
    #: latencies: per process count, exact sum and maximum, and the slowest delivery
    #: (latencies.py)
    latency: dict[str, Tally] = field(default_factory=dict)
    #: a message id sent more than once (a broken trace's held records, reduced.py: the
    #: whole-trace engine then reads the latency properties by their exact checks)
    resent: bool = False
    #: who delivered and sent what, per process and view, and the witness events of the
    #: end-of-trace properties (ledger.py; None: the whole-trace engine reads them)
    ledger: Ledger | None = None

    def correct(self) -> frozenset[str]:
        """The processes that log no crash record."""
        return self.processes - self.crashed

    def in_scope(self, scope: str) -> Clean:
        """The summary of the processes ``scope`` judges (properties/scope.py: ``correct``
        drops the crashed ones; a record after a leave never reaches a clean trace)."""
        if scope != "correct" or not self.crashed:
            return self
        keep = self.processes - self.crashed
        return replace(self, processes=keep, senders=self.senders & keep,
                       viewers=self.viewers & keep,
                       deliverers=self.deliverers & keep, crashed=frozenset(),
                       delivered={p: k for p, k in self.delivered.items() if p in keep},
                       owed={p: k for p, k in self.owed.items() if p in keep},
                       deps_by=self.deps_by & keep)
