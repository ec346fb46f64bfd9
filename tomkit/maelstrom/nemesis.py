"""The nemesis: partitions, kills and pauses of nodes on a seeded schedule.

As Maelstrom's ``--nemesis`` and ``--nemesis-interval``: about every interval seconds
(uniform on [0.5, 1.5] x interval) the nemesis either starts a fault, drawn from the
enabled kinds, or ends the one in force; at the end of the run every fault is ended
(the cluster heals) before the final reads.

* ``partition``: the nodes are split at random into two halves (Jepsen's
  random-halves), every link between them cut both ways; ended by healing.
* ``kill``: a random minority of nodes is sent SIGKILL (the whole process group);
  ended by restarting each (a new incarnation, ``n1#2``, with empty state, sent
  ``init`` again: Maelstrom's nodes have no durable storage).
* ``pause``: a random minority is sent SIGSTOP; ended by SIGCONT.

The schedule (which fault, which nodes, when) depends on the seed only; each event is
logged with its time in ``nemesis.jsonl`` and the run's report.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

__all__ = ["FAULTS", "NemesisEvent", "Schedule", "plan"]

FAULTS = ("partition", "kill", "pause")


@dataclass(frozen=True)
class NemesisEvent:
    time: float
    action: str  # start or stop
    fault: str
    nodes: tuple[str, ...] = ()
    groups: tuple[tuple[str, ...], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"time": round(self.time, 6), "action": self.action,
                             "fault": self.fault}
        if self.nodes:
            d["nodes"] = list(self.nodes)
        if self.groups:
            d["groups"] = [list(g) for g in self.groups]
        return d


@dataclass
class Schedule:
    events: list[NemesisEvent] = field(default_factory=list)


def _minority(rng: random.Random, nodes: list[str]) -> tuple[str, ...]:
    k = rng.randint(1, max(1, (len(nodes) - 1) // 2))
    return tuple(sorted(rng.sample(nodes, k)))


def plan(faults: set[str], nodes: list[str], interval: float, time_limit: float,
         rng: random.Random) -> Schedule:
    """The seeded schedule of fault starts and stops within ``time_limit`` seconds; the
    last fault started is stopped by the harness's final heal, not here."""
    unknown = set(faults) - set(FAULTS)
    if unknown:
        raise ValueError(f"unknown nemesis {', '.join(sorted(unknown))}; known: "
                         f"{', '.join(FAULTS)}")
    out = Schedule()
    if not faults or not nodes:
        return out
    kinds = sorted(faults)
    t, active = 0.0, None
    while True:
        t += rng.uniform(0.5, 1.5) * interval
        if t >= time_limit:
            break
        if active is None:
            kind = rng.choice(kinds)
            if kind == "partition":
                shuffled = rng.sample(nodes, len(nodes))
                half = len(nodes) // 2 or 1
                groups = (tuple(sorted(shuffled[:half])), tuple(sorted(shuffled[half:])))
                active = NemesisEvent(t, "start", kind, groups=groups)
            else:
                active = NemesisEvent(t, "start", kind, nodes=_minority(rng, nodes))
            out.events.append(active)
        else:
            out.events.append(NemesisEvent(t, "stop", active.fault, active.nodes,
                                           active.groups))
            active = None
    return out
