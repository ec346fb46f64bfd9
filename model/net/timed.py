"""The timed network of 003 (Bar-Joseph, Keidar, Anker and Lynch) in the one simulator:
per-process clocks within eps, delays never above delta, the burst-loss adversary on
links, a crashing sender's packets lost past the bound, join/leave/recover schedules,
scripted sends, and the trace's ``real_time`` and ``packet`` records.

A protocol asks for it by being a :class:`TimedProtocol` (a ``Protocol`` with a
``timing`` function of its options); ``model/sim.py`` then builds a :class:`TimedNet`
and calls it at a few hooks. Protocols without a timing run exactly as before (the
golden trace test pins that).

Decisions:

* Real and local time: the simulator's event time is real time; a process gets and
  logs its local clock ``real + offset`` (``slots.Clocks``), asks for timers in local
  time, and every record of a timed run carries ``real_time`` beside ``time``.
* Delays above delta are clipped to delta (003 section 2.1's guarantee: "at most delta"). The
  tail of a distribution then lands on delta, which also drives runs to the bound.
  FIFO (a packet not before the link's previous one) never pushes an arrival past
  delta, since the previous one was sent earlier and arrived within delta.
* Losses: ``fec.BurstLoss`` per link, at most L of any I consecutive packets (join
  copies included), never on a process's packets to itself. A crashing sender escapes
  the bound (003 section 3.3: the network may deliver a faulty process's message to one process
  and not another): at the crash, each of its packets still in flight is lost with
  probability ``crash_loss``.
* A process whose first scheduled membership event is ``join`` is down from time 0
  (no crash record); ``join`` and ``recover`` bring it up with ``on_join`` /
  ``on_recover``; ``leave`` calls ``on_leave``. Sources skip a process that does not
  accept sends (before join_OK, after leave), without spending the message budget.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tomkit.model.process import Output, Protocol
from tomkit.model.qos.fec import BurstLoss
from tomkit.model.qos.slots import Clocks
from tomkit.model.recorder import Recorder

__all__ = ["MEMBERSHIP", "REAL_TIME", "RealTimeRecorder", "TimedNet",
           "TimedProtocol", "Timing", "parse_schedule"]

MEMBERSHIP = ("join", "leave", "recover")

#: the real-time field of every record of a timed run (trace schema v1, issue 14)
REAL_TIME = "real_time"


@dataclass(frozen=True)
class Timing:
    """What a timed protocol asks of the network (module docstring)."""

    max_delay: float
    epsilon: float
    slot: float = 0.0
    fec_i: int = 5
    fec_l: int = 0
    #: probability that the adversary loses a packet when the link's window allows it
    loss: float = 0.0
    #: probability that each in-flight packet of a crashing process is lost
    crash_loss: float = 0.0
    #: (kind, process, real time), kind in MEMBERSHIP
    schedule: tuple[tuple[str, int | str, float], ...] = ()
    packet_records: bool = False
    #: the extension fields of a ``packet`` record for one network message
    packet_fields: Callable[[Any], dict] = field(default=lambda pk: {})


@dataclass(frozen=True)
class TimedProtocol(Protocol):
    """A protocol that runs on 003's timed network: ``timing(options)``."""

    timing: Callable[[Mapping[str, Any]], Timing] | None = None


def parse_schedule(kind: str, text: str | None) -> tuple[tuple[str, str, float], ...]:
    """``"p3@0.5,p1@1.2"`` -> ((kind, "p3", 0.5), (kind, "p1", 1.2)); ValueError naming
    the bad entry."""
    if not text:
        return ()
    out = []
    for part in text.split(","):
        proc, sep, when = part.strip().partition("@")
        try:
            t = float(when)
        except ValueError:
            t = math.nan
        if not sep or not proc or not (t >= 0 and math.isfinite(t)):
            raise ValueError(f"--{kind}s: expected PROCESS@TIME[,PROCESS@TIME...] (e.g. "
                             f"p3@0.5), got {part!r}")
        out.append((kind, proc, t))
    return tuple(out)


class RealTimeRecorder(Recorder):
    """The recorder of a timed run: every record gets ``real_time`` (the simulator's
    clock) after its local ``time``; join/leave and ``packet`` records besides."""

    __slots__ = ("clock",)

    def __init__(self, trace_id: str, names: Sequence[str], clock: Callable[[], float]):
        super().__init__(trace_id, names)
        self.clock = clock

    def _stamp(self, start: int) -> None:
        real = self.clock()
        for r in self.records[start:]:
            r[REAL_TIME] = real

    def sent(self, i: int, mid: str, out: Output, t: float) -> None:
        k = len(self.records)
        super().sent(i, mid, out, t)
        self._stamp(k)

    def logged(self, i: int, out: Output, t: float) -> int:
        k = len(self.records)
        d = super().logged(i, out, t)
        self._stamp(k)
        return d

    def crash(self, i: int, t: float) -> None:
        k = len(self.records)
        super().crash(i, t)
        self._stamp(k)

    def event(self, i: int, kind: str, t: float, fields: Mapping | None = None) -> None:
        """A ``join``, ``leave`` or ``packet`` record."""
        rec = {"trace": self.trace_id, "process": self.names[i], "kind": kind, "time": t,
               REAL_TIME: self.clock()}
        if fields:
            rec.update(fields)
        self.records.append(rec)


class TimedNet:
    """The timed network of one simulation (module docstring)."""

    # sim: the simulator driving this network (model/sim.py's private _Sim: its heap,
    # clock and links are what a timed network hooks into)
    def __init__(self, sim: Any, timing: Timing, offsets: Sequence[float] | None,
                 membership: Sequence[tuple[str, int | str, float]],
                 scripted: Sequence[tuple[int | str, float]], packet_records: bool,
                 seed: int) -> None:
        self.sim = sim
        self.timing = timing
        n = sim.n
        clock_seq, loss_seq = np.random.SeedSequence(seed).spawn(5)[3:]
        if offsets is None:
            clocks = Clocks.draw(n, timing.epsilon, np.random.default_rng(clock_seq))
        else:
            if len(offsets) != n:
                raise ValueError(f"clock_offsets gives {len(offsets)} offsets for {n} "
                                 "processes")
            clocks = Clocks(tuple(offsets), timing.epsilon)
        self.clocks = clocks
        self.loss_rng = np.random.default_rng(loss_seq)
        self.adversary = (BurstLoss(timing.fec_i, timing.fec_l, timing.loss, self.loss_rng)
                          if timing.loss > 0 and timing.fec_l > 0 else None)
        self.packet_records = packet_records or timing.packet_records
        self.events: list[tuple[float, str, int]] = []
        for kind, p, t in (*timing.schedule, *membership):
            if kind not in MEMBERSHIP:
                raise ValueError(f"membership event {kind!r}: must be one of {MEMBERSHIP}")
            if not (t >= 0 and math.isfinite(t)):
                raise ValueError(f"{kind} time of {p} must be finite and >= 0, got {t}")
            self.events.append((t, kind, sim.cfg.index(p)))
        self.events.sort()
        for t, kind, i in self.events:
            if kind == "recover" and not sim.crash_at.get(i, math.inf) < t:
                raise ValueError(f"{sim.names[i]} recovers at {t} without a crash before")
        self.scripted = sorted((t, sim.cfg.index(p)) for p, t in scripted)
        #: per sender: (arrival, heap counter) of packets in flight
        self.inflight: list[list[tuple[float, int]]] = [[] for _ in range(n)]
        self.dropped: set[int] = set()
        self.lost = 0
        self.pending = 0  # scheduled hooks not yet run
        self.last_input = 0.0  # real time of the last send or membership event
        #: after the last input, run this long (real time) so that every slot is
        #: delivered: the join window, a slot, the deadline, and slack
        self.drain = ((math.ceil(timing.epsilon / max(timing.slot, 1e-300)) + 4)
                      * timing.slot + 2 * (timing.max_delay + timing.epsilon))

    # ---------------------------------------------------------------- set-up

    def start(self) -> None:
        sim = self.sim
        first: dict[int, str] = {}
        for _, kind, i in self.events:
            first.setdefault(i, kind)
        for i, kind in first.items():
            if kind == "join":
                sim.alive[i] = False
                sim.procs[i]._reset(None)  # down from time 0: joins later
        for i in range(sim.n):  # processes up at time 0 start their slots (a wake-up)
            if sim.alive[i]:
                sim.push(0.0, sim.TIMER, i, self.clocks.offsets[i])
        for t, kind, i in self.events:
            sim.push(t, sim.HOOK, i, (self.membership, kind))
        for t, i in self.scripted:
            sim.push(t, sim.HOOK, i, (self.scripted_send, None))
        self.pending = len(self.events) + len(self.scripted)

    def over(self, t: float) -> bool:
        """Whether the run is over at real time ``t``: no input can come any more (the
        sources' budget spent, or nobody up to spend it; no scheduled event left), and
        the drain time after the last input has passed. A timed protocol's processes
        end slots for ever, so the run is cut there."""
        sim = self.sim
        if self.pending or (sim.budget > 0 and any(
                sim.alive[i] and getattr(sim.procs[i], "status", None) != "out"
                for i in range(sim.n))):
            return False  # a member (or joiner) may still send
        return t > self.last_input + self.drain

    # ---------------------------------------------------------------- hooks

    def membership(self, i: int, kind: str) -> None:
        sim = self.sim
        self.pending -= 1
        self.last_input = sim.now
        proc = sim.procs[i]
        local = sim.now + self.clocks.offsets[i]
        if kind == "leave":
            if not sim.alive[i]:
                return
            out = proc.on_leave(local)
        else:
            if kind == "recover" and sim.alive[i]:
                raise ValueError(f"{sim.names[i]} recovers at {sim.now} without a crash")
            if kind == "join" and sim.alive[i] and proc.status != "out":
                raise ValueError(f"{sim.names[i]} joins at {sim.now} while a member")
            sim.alive[i] = True
            out = proc.on_recover(local) if kind == "recover" else proc.on_join(local)
        self.sim.rec.event(i, "leave" if kind == "leave" else "join", local, out.fields)
        out.fields = None
        sim.handle(i, out)

    def scripted_send(self, i: int, _: None) -> None:
        sim = self.sim
        self.pending -= 1
        if sim.alive[i] and self.accepts(i):
            sim.send(i)

    def accepts(self, i: int) -> bool:
        return getattr(self.sim.procs[i], "accepting", True)

    def delays(self, ds: list[float]) -> list[float]:
        dmax = self.timing.max_delay
        return [d if d <= dmax else dmax for d in ds]

    def lose(self, i: int, j: int) -> bool:
        if self.adversary is None:
            return False
        if self.adversary.lose((i, j)):
            self.lost += 1
            return True
        return False

    def app_sent(self) -> None:
        self.last_input = self.sim.now

    def sent(self, i: int, arrive: float, counter: int) -> None:
        self.inflight[i].append((arrive, counter))

    def packet(self, i: int, local: float, packet: Any) -> None:
        if self.packet_records:
            self.sim.rec.event(i, "packet", local, self.timing.packet_fields(packet))

    def crashed(self, q: int) -> None:
        """A crashing sender's packets in flight are each lost with ``crash_loss``."""
        now, p = self.sim.now, self.timing.crash_loss
        for arrive, c in self.inflight[q]:
            if arrive > now and p > 0 and self.loss_rng.random() < p:
                self.dropped.add(c)
                self.lost += 1
        self.inflight[q].clear()

    def timer_counter(self, counter: int) -> int:
        """Heap tie-break of a timer: after every arrival of the same instant (a packet
        due exactly at a deadline is taken before the timeout)."""
        return counter + (1 << 40)

    def prune(self) -> None:
        """Forget delivered packets (keeps ``inflight`` short)."""
        now = self.sim.now
        for lst in self.inflight:
            if len(lst) > 256:
                lst[:] = [x for x in lst if x[0] > now]


