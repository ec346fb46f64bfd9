"""The membership vocabulary: the events a run's schedule may hold (six of membership, and
003's renegotiation), each with one
meaning and one spelling, for every protocol and every entry point (``tomkit simulate``,
``tomkit.simulate``, the simulator, the fuzzers, the replayer; docs/membership.md).

* ``crash`` P@T: process P stops for good at T: this incarnation ends (a ``crash``
  record). 000 (Dolev, Kramer and Malki) section 5's crash; the others learn it through
  Crash(q) or through the membership service.
* ``recover`` P@T: P, crashed before, restarts at T with no state and becomes a member
  again, a new incarnation (003, Bar-Joseph, Keidar, Anker and Lynch, section 2:
  "recovery requires a rejoin"; 000 footnote 3: "until q rejoins").
* ``join`` P@T: P, outside the group and not crashed (outside from time 0, or gone after
  its leave), becomes a member at T. A process whose first event is a join is outside
  the group from time 0.
* ``leave`` P@T: P, a member, leaves the group on purpose at T (003 section 3.3).
* ``partition`` T:P,P/P,P: at T the network splits into these groups (the processes not
  listed form one more); packets between groups wait for the heal (000 section 5.1).
* ``heal`` T: at T every partition heals.
* ``renegotiate`` P@T=AVG/MAX: P, a member, asks for a new reservation at T: at most MAX
  messages a slot and AVG in any K slots (003 section 2.1's RN(r); the QoS contract,
  ``model/qos/reserve.py``). Not a change of membership, but an event of the same
  schedule, spelled and refused the same way.

A protocol declares which of them its runs may have (``Protocol.events`` of
``model/process.py``); the drivers refuse the others with one line naming the protocol
and the event (``Protocol.refuse``). Old spellings still read, with a FutureWarning:
a ``join`` of a process that crashed before (toto-dynamic's "rejoin") is its ``recover``;
a partition into no groups is a ``heal``; ``SimConfig.membership`` (kind, process, time)
triples and the options ``joins``, ``leaves``, ``recovers`` (``P@T,P@T``) are the
schedule's.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

__all__ = ["EVENTS", "PLURAL", "PROCESS_EVENTS", "Event", "at_pairs", "deprecated", "parse_at",
           "parse_renegotiation", "schedule"]

#: event -> its one meaning (module docstring), in the order help texts list them
EVENTS: dict[str, str] = {
    "crash": "P stops for good at TIME (its incarnation ends)",
    "recover": "P, crashed before, restarts at TIME with no state and rejoins (a new "
               "incarnation)",
    "join": "P, outside the group (from time 0, or after its leave), becomes a member at "
            "TIME",
    "leave": "P, a member, leaves the group on purpose at TIME",
    "partition": "at TIME the network splits into these groups (those not listed form "
                 "one more)",
    "heal": "at TIME every partition heals",
    "renegotiate": "P, a member, asks for the reservation AVG/MAX at TIME (at most MAX "
                   "messages a slot, AVG in any K slots; 003's RN(r))",
}

#: the events of one process (P@TIME); partition and heal are the network's
PROCESS_EVENTS = ("crash", "recover", "join", "leave")

#: each event's plural: the name of its list (``SimConfig.crashes``, ...)
PLURAL = {"crash": "crashes", "recover": "recovers", "join": "joins", "leave": "leaves",
          "partition": "partitions", "heal": "heals", "renegotiate": "renegotiations"}


class Event(NamedTuple):
    """One event of a schedule: its time (seconds; real time on a timed network), kind
    (a key of :data:`EVENTS`), process (index; -1 for partition and heal), for a
    partition its groups (indices), for a renegotiation the reservation asked for
    (avg, max)."""

    time: float
    kind: str
    process: int = -1
    groups: tuple[tuple[int, ...], ...] = ()
    reservation: tuple[int, int] | None = None


def deprecated(old: str, new: str) -> None:
    """Say once per call site that ``old`` is spelled ``new`` now (a FutureWarning: the
    people who run the command see it)."""
    warnings.warn(f"{old} is deprecated: {new} (docs/membership.md)", FutureWarning,
                  stacklevel=3)


def parse_at(flag: str, text: str) -> list[tuple[str, float]]:
    """``"p3@0.5,p1@1.2"`` -> [("p3", 0.5), ("p1", 1.2)]; ValueError naming ``flag`` and
    the bad entry."""
    out = []
    for part in text.split(","):
        proc, sep, when = part.strip().partition("@")
        try:
            t = float(when)
        except ValueError:
            t = math.nan
        if not sep or not proc or not (t >= 0 and math.isfinite(t)):
            raise ValueError(f"{flag}: expected PROCESS@TIME[,PROCESS@TIME...] (e.g. "
                             f"p3@0.5), got {part.strip()!r}")
        out.append((proc, t))
    return out


def parse_renegotiation(flag: str, text: str) -> tuple[str, float, tuple[int, int]]:
    """``"p1@0.5=20/6"`` -> ("p1", 0.5, (20, 6)); ValueError naming ``flag`` and the bad
    text."""
    at, sep, r = text.strip().partition("=")
    parts = r.split("/")
    try:
        (p, t), = parse_at(flag, at)
        avg, most = (int(x) for x in parts)
        if not sep or avg < 0 or most < 0:
            raise ValueError
    except ValueError:
        raise ValueError(f"{flag}: expected PROCESS@TIME=AVG/MAX (e.g. p1@0.5=20/6: at most "
                         f"6 messages a slot, 20 in any K slots), got {text.strip()!r}"
                         ) from None
    return p, t, (avg, most)


def at_pairs(name: str, value: str | Iterable[tuple[int | str, float]]
             ) -> list[tuple[int | str, float]]:
    """A process event's list as (process, time) pairs: given so, or as the command
    line's text ``P@T,P@T``."""
    if isinstance(value, str):
        return list(parse_at(name, value)) if value else []
    out = []
    for x in value:
        try:
            p, t = x
        except (TypeError, ValueError):
            raise ValueError(f"{name}: expected (process, time) pairs, got {x!r}") from None
        out.append((p, t))
    return out


def _time(name: str, what: str, t: float) -> float:
    try:
        t = float(t)
    except (TypeError, ValueError):
        t = math.nan
    if not (t >= 0 and math.isfinite(t)):
        raise ValueError(f"{name}: the time of {what} must be finite and >= 0, got {t}")
    return t


def schedule(index: Callable[[int | str], int], *,
             crashes: Iterable[tuple[int | str, float]] = (),
             recovers: Iterable[tuple[int | str, float]] = (),
             joins: Iterable[tuple[int | str, float]] = (),
             leaves: Iterable[tuple[int | str, float]] = (),
             partitions: Iterable[tuple[float, Sequence[Sequence[int | str]]]] = (),
             heals: Iterable[float] = (),
             renegotiations: Iterable[tuple[int | str, float, tuple[int, int]]] = ()
             ) -> list[Event]:
    """The events of a run, each checked (a known process, ``index`` raising ValueError
    otherwise; a finite time >= 0; a recover after a crash of its process), in the order
    given within each kind, kinds in :data:`EVENTS`' order. A join of a process that
    crashed before, with no recover between, is the old spelling of its recover."""
    out: list[Event] = []
    for kind, pairs in (("crash", crashes), ("recover", recovers), ("join", joins),
                        ("leave", leaves)):
        for p, t in pairs:
            out.append(Event(_time(PLURAL[kind], f"{kind} {p}", t), kind, index(p)))
    for t, groups in partitions:
        t = _time("partitions", "a partition", t)
        if not groups:
            deprecated("a partition into no groups", "spell it heal")
            out.append(Event(t, "heal"))
            continue
        out.append(Event(t, "partition", -1,
                         tuple(tuple(index(p) for p in g) for g in groups)))
    for t in heals:
        out.append(Event(_time("heals", "a heal", t), "heal"))
    for item in renegotiations:
        if isinstance(item, str):
            item = parse_renegotiation("renegotiations", item)
        try:
            p, t, (avg, most) = item
        except (TypeError, ValueError):
            raise ValueError(f"renegotiations: expected (process, time, (avg, max)) or "
                             f"'P@TIME=AVG/MAX', got {item!r}") from None
        if not (isinstance(avg, int) and isinstance(most, int) and avg >= 0 and most >= 0):
            raise ValueError(f"renegotiations: a reservation is two integers >= 0, got "
                             f"{(avg, most)!r}")
        out.append(Event(_time("renegotiations", f"renegotiate {p}", t), "renegotiate",
                         index(p), reservation=(avg, most)))
    # per process, in time order: a join while crashed (no recover since its crash) is
    # the old spelling of recover; a recover needs a crash before it
    crashed: dict[int, bool] = {}
    for k in sorted(range(len(out)), key=lambda k: out[k].time):
        e = out[k]
        if e.kind == "crash":
            crashed[e.process] = True
        elif e.kind == "join" and crashed.get(e.process):
            deprecated(f"a join of a crashed process (p{e.process} at {e.time})",
                       "spell it recover")
            out[k] = e._replace(kind="recover")
            crashed[e.process] = False
        elif e.kind == "recover":
            if not crashed.get(e.process):
                raise ValueError(f"recovers: p{e.process} recovers at {e.time} without a "
                                 "crash before")
            crashed[e.process] = False
    order = list(EVENTS)
    return sorted(out, key=lambda e: order.index(e.kind))  # stable: given order kept
