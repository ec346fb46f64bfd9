"""The timed network of 003 (Bar-Joseph, Keidar, Anker and Lynch) in the one simulator:
per-process clocks within eps, delays never above delta, the burst-loss adversary on
links, a crashing sender's packets lost past the bound, and the trace's ``real_time`` and
``packet`` records.

A protocol asks for it by declaring a ``timing`` (``Protocol.timing`` of
``model/process.py``: a :class:`Timing` from its options); ``model/sim.py`` then builds
a :class:`TimedNet` and calls it at a few hooks, handing it plain values (the time, the
process), never itself. Protocols without a timing run exactly as before (the golden
trace test pins that). The schedule's joins, leaves and recoveries are the simulator's
(``model/events.py``), as for every protocol.

Decisions:

* Real and local time: the simulator's event time is real time; a process gets and
  logs its local clock ``real + offset`` (``model/net/clocks.py``), asks for timers in local
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
* The run ends once no input can come any more and every slot has been delivered
  (:meth:`TimedNet.over`): a timed protocol's processes end slots for ever.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..process import Output
from ..qos.fec import BurstLoss
from ..recorder import Recorder
from .clocks import Clocks

__all__ = ["REAL_TIME", "RealTimeRecorder", "TimedNet", "Timing"]

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
    packet_records: bool = False
    #: the extension fields of a ``packet`` record for one network message
    packet_fields: Callable[[Any], dict] = field(default=lambda pk: {})


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
        rec = {"trace": self.trace_id, "process": self.names[i], "kind": kind, "time": t,
               REAL_TIME: self.clock()}
        if fields:
            rec.update(fields)
        self.records.append(rec)


class TimedNet:
    """The timed network of one simulation of ``n`` processes (module docstring); the
    ``packet`` records go to ``rec``."""

    def __init__(self, n: int, timing: Timing, offsets: Sequence[float] | None,
                 packet_records: bool, seed: int, rec: Recorder) -> None:
        self.timing = timing
        self.rec = rec
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
        #: per sender: (arrival, heap counter) of packets in flight
        self.inflight: list[list[tuple[float, int]]] = [[] for _ in range(n)]
        self.dropped: set[int] = set()
        self.lost = 0
        #: after the last input, run this long (real time) so that every slot is
        #: delivered: the join window, a slot, the deadline, and slack
        self.drain = ((math.ceil(timing.epsilon / max(timing.slot, 1e-300)) + 4)
                      * timing.slot + 2 * (timing.max_delay + timing.epsilon))

    def over(self, t: float, last_input: float, more: bool) -> bool:
        """Whether the run is over at real time ``t``: no input can come any more
        (``more`` False: the sources' budget spent or nobody to spend it, no scheduled
        event left) and the drain time after the last input (real time ``last_input``)
        has passed."""
        return not more and t > last_input + self.drain

    # ---------------------------------------------------------------- hooks

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

    def sent(self, i: int, arrive: float, counter: int) -> None:
        self.inflight[i].append((arrive, counter))

    def packet(self, i: int, local: float, packet: Any) -> None:
        if self.packet_records:
            self.rec.event(i, "packet", local, self.timing.packet_fields(packet))

    def crashed(self, q: int, now: float) -> None:
        """A crashing sender's packets in flight (at real time ``now``) are each lost
        with ``crash_loss``."""
        p = self.timing.crash_loss
        for arrive, c in self.inflight[q]:
            if arrive > now and p > 0 and self.loss_rng.random() < p:
                self.dropped.add(c)
                self.lost += 1
        self.inflight[q].clear()

    def timer_counter(self, counter: int) -> int:
        """Heap tie-break of a timer: after every arrival of the same instant (a packet
        due exactly at a deadline is taken before the timeout)."""
        return counter + (1 << 40)
