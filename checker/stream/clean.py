"""What the single-pass checker knows of a trace it found clean, for the properties'
stream deciders (``Property.stream``).

The canonical-sequence pass (canon.py) finds a trace clean when every process's
deliveries are a prefix of one sequence of distinct messages, each sent exactly once
and in each sender's send order, with no view, join or leave record and no ``seq``.
Every order property then holds; what is left to decide needs only who sent,
who delivered and who crashed, which this summary holds.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

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

    def correct(self) -> frozenset[str]:
        """The processes that log no crash record (no views reach a clean trace)."""
        return self.processes - self.crashed

    def in_scope(self, scope: str) -> Clean:
        """The summary of the processes ``scope`` judges (properties/scope.py: ``correct``
        drops the crashed ones; leave records never reach a clean trace)."""
        if scope != "correct" or not self.crashed:
            return self
        keep = self.processes - self.crashed
        return replace(self, processes=keep, senders=self.senders & keep,
                       deliverers=self.deliverers & keep, crashed=frozenset(),
                       delivered={p: k for p, k in self.delivered.items() if p in keep},
                       owed={p: k for p, k in self.owed.items() if p in keep})
