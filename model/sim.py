"""The one discrete-event network simulator: any protocol, through the process interface.

Sources: 000 (Dolev, Kramer, Malki) section 6 (the simulations and measurements: n = 8,
delta = 4, periodic and Poisson sources, 4000 messages, index of latency and latency);
001 (Rodrigues, Fonseca, Verissimo) section 3 (per sender-recipient delay distributions,
a shifted gamma for both LAN and WAN, quasi-periodic and Poisson sources, "a process
receives its own messages immediately"); 004 (Dasser) section 2.3 for ABCAST's and
TOMP's latency split.

The simulator knows no protocol: it makes the processes of ``config.protocol`` (a
:class:`~tomkit.model.process.Protocol` of ``model/protocols.py``, with its options) and
drives them through the interface of ``model/process.py``; what a process logs and which
figures a protocol reports are the protocol's.

The model
---------
* n processes ``p0 .. p{n-1}`` (process ``pi`` has index i); a fixed group.
* Links: every ordered pair (i, j), i != j, is a reliable FIFO link whose delay is drawn
  from the link's :class:`~tomkit.model.net.links.Delay` (constant, exponential, or shifted
  gamma). FIFO: a packet never arrives before an earlier packet of the same link (its
  arrival time is at least the previous one's; ties keep sending order). One link carries
  every kind of packet from i to j, like one TCP connection. A process receives what it
  sends to itself at once.
* Sources: each process has its own source of application messages, periodic,
  quasi-periodic or Poisson (``model/net/links.py``), at ``rate`` messages per second *per
  process*, named ``<process>.<k>``. Sources stop when the total budget ``messages`` is
  spent.
* 001's set-up (optional; ``SimConfig.topology`` and ``SimConfig.load``): a delay
  distribution per sender-recipient pair (``model/net/topology.py``), and per-process rates
  that change at given times (``model/net/load.py``; each new rate starts at a random phase,
  sources stop at the schedule's end).
* Timers: a process asks for a timer (``Output.timer``); the simulator calls its
  ``on_timer`` then.
* Crashes (000 section 5), for protocols that handle them: at its crash time a process
  stops (a ``crash`` record). Its packets already sent still reach every process (the
  membership's Agree stage fixes one set of q's messages for everybody: virtual
  synchrony). Every surviving process p gets Crash(q) ``detection_delay`` later, but never
  before q's last packet reaches p (Crash(q) means nothing of q will come "henceforth").
* Membership (000 section 5, ``model/toto/membership.py``), for protocols whose processes
  carry a membership service (``toto-dynamic``): crashes, ``joins`` and ``partitions``
  go through it instead. Each is noticed ``detection_delay`` later (Initiate), when the
  service agrees on the next configuration and its members flush and install it (``view``
  records; ``join`` records for joiners; ``crash`` records for crashes and for members
  cut off from the primary component). A process listed in ``joins`` with no crash
  before is outside the first view; a packet whose link a partition cuts waits for the
  heal (links are reliable), and is dropped if its view has been closed by then.
* Determinism and paired comparisons: three independent streams from
  ``numpy.random.SeedSequence(seed).spawn(3)``: sources, application-message delays,
  control-packet delays (``Transmit.control``: acknowledgements, timestamps, ACK-only
  messages). How many control packets a run sends depends on the protocol, so with one
  stream two protocols given the same seed would not see the same inputs; with three
  they do (the same send times and the same delay for every application message), which
  is what comparing protocols on one seed needs. Simultaneous events run in scheduling
  order.

Trace records (format v1, one trace): the processes' sends, receptions and deliveries as
``model/recorder.py`` writes them, and ``crash`` records. Times are in seconds.
"""

from __future__ import annotations

import heapq
import math
import time as _time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tomkit.model.net.links import SOURCES, Delay, DelayDraws, first_send, source_gap
from tomkit.model.net.load import LoadSchedule, phase_start
from tomkit.model.net.timed import RealTimeRecorder, TimedNet
from tomkit.model.net.topology import Topology
from tomkit.model.process import Output, Protocol, Transmit
from tomkit.model.protocols import protocol
from tomkit.model.recorder import Recorder

__all__ = ["Runaway", "SimConfig", "SimResult", "simulate"]


@dataclass(frozen=True)
class SimConfig:
    """One simulation (see the module docstring). Processes are named ``p0 .. p{n-1}``;
    links and crashes name processes by index or by name. ``options`` are the
    protocol's own (``tomkit simulate --help`` lists them; e.g. ``delta`` and ``rule`` for
    the ToTo family, ``variant`` for ABCAST and TOMP)."""

    protocol: str = "toto"
    n: int = 8
    options: Mapping[str, Any] = field(default_factory=dict)
    source: str = "poisson"
    #: application messages per second, per process
    rate: float = 100.0
    #: quasi-periodic jitter: standard deviation as a fraction of the period
    jitter: float = 0.05
    #: total application messages, over all processes
    messages: int = 4000
    delay: Delay = Delay()
    #: per-link overrides, keyed (sender, recipient)
    link_delays: Mapping[tuple[int | str, int | str], Delay] = field(default_factory=dict)
    #: (process, time) pairs
    crashes: Sequence[tuple[int | str, float]] = ()
    detection_delay: float = 0.05
    seed: int = 1
    trace_id: str = "sim"
    #: stop with :class:`Runaway` after this many events (arrivals, sends, timers); None:
    #: no limit. A run whose rule never delivers again sends idle ACKs forever, so those
    #: who run broken rules (model/toto/mutants.py) set one; it cuts at the same point on
    #: every machine, unlike a clock
    max_events: int | None = None
    # 001 (Rodrigues, Fonseca, Verissimo) sections 3, 4.4 and 6.2; model/net/topology.py and
    # model/net/load.py. None: today's behaviour (every link ``delay``/``link_delays``, every
    # source at ``rate``)
    #: a delay distribution per pair (``link_delays`` still override it); n must match
    topology: Topology | None = None
    #: per-process source rates changing over time; sources stop at its ``end`` (and when
    #: ``messages`` is spent) and start each rate at a random phase; ``rate`` is then only
    #: what the protocol is told
    load: LoadSchedule | None = None
    # ---- membership (module docstring; only protocols with a membership service)
    #: (process, time): a new process joins, or a crashed one restarts and rejoins
    joins: Sequence[tuple[int | str, float]] = ()
    #: (time, components): the network splits into these groups of processes (the ones
    #: not listed form one more); ``(time, ())`` heals it
    partitions: Sequence[tuple[float, Sequence[Sequence[int | str]]]] = ()
    # ---- timed networks (003; model/net/timed.py), for protocols that declare a timing
    #: per-process clock offsets, each within eps/2 (None: drawn from the seed)
    clock_offsets: Sequence[float] | None = None
    #: (kind, process, real time) with kind join, leave or recover
    membership: Sequence[tuple[str, int | str, float]] = ()
    #: application sends at given real times (process, time), besides the sources
    scripted: Sequence[tuple[int | str, float]] = ()
    #: one ``packet`` record per network message a process sends
    packet_records: bool = False

    def names(self) -> list[str]:
        return [f"p{i}" for i in range(self.n)]

    def index(self, p: int | str) -> int:
        i = p if isinstance(p, int) else (int(p[1:]) if p[:1] == "p" and p[1:].isdigit()
                                          else -1)
        if not 0 <= i < self.n:
            raise ValueError(f"unknown process {p!r} (processes are p0 .. p{self.n - 1})")
        return i


class Runaway(RuntimeError):
    """A simulation exceeded ``SimConfig.max_events`` (a stalled run never ends)."""


@dataclass
class SimResult:
    """The trace records of one run and its summary."""

    records: list[dict]
    #: seed, sends (application messages), deliveries (application messages, all
    #: processes), mean_latency (send to delivery, s), undelivered (application messages
    #: some surviving process did not deliver), sim_time (s), wall_time (s), and the
    #: protocol's own figures (its ``summary``)
    stats: dict[str, Any]
    #: the protocol's options as the run used them (defaults filled in)
    options: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The run as plain data: its options (a rule function by name), statistics and
        trace records."""
        return {"options": {k: getattr(v, "__name__", v) if callable(v) else v
                            for k, v in self.options.items()},
                "stats": dict(self.stats), "records": list(self.records)}


def simulate(config: SimConfig,
             progress: Callable[[int], None] | None = None) -> SimResult:
    """Run one simulation; ``progress(k)`` is told every time k more application
    messages were sent (for a progress bar)."""
    return _Sim(config, progress).run()


# event kinds (the counter breaks ties, so their values never order events)
_SOURCE, _ARRIVE, _CRASH, _CRASH_NOTE, _TIMER, _LOAD, _CALL, _HOOK = range(8)


class _Sim:
    HOOK, TIMER = _HOOK, _TIMER

    def __init__(self, cfg: SimConfig, progress: Callable[[int], None] | None) -> None:
        self.protocol: Protocol = protocol(cfg.protocol)
        if cfg.n < 2:
            raise ValueError("a simulation needs at least 2 processes")
        if cfg.source not in SOURCES:
            raise ValueError(f"source must be one of {SOURCES}, not {cfg.source!r}")
        if not cfg.rate > 0:
            raise ValueError(f"rate must be positive, got {cfg.rate}")
        if cfg.messages < 0:
            raise ValueError("messages must be >= 0")
        # a negative spread or notice delay would run the clock backwards
        if not (cfg.jitter >= 0 and math.isfinite(cfg.jitter)):
            raise ValueError(f"jitter must be finite and >= 0, got {cfg.jitter}")
        if not (cfg.detection_delay >= 0 and math.isfinite(cfg.detection_delay)):
            raise ValueError(f"detection delay must be finite and >= 0, got "
                             f"{cfg.detection_delay}")
        if cfg.crashes and not self.protocol.crashes:
            raise ValueError(f"{cfg.protocol} has no failure handling, so its runs have no "
                             "crashes")
        self.cfg = cfg
        self.n = n = cfg.n
        self.names = cfg.names()
        self.options = self.protocol.resolve(cfg.options)
        self.procs = self.protocol.make(self.names, self.options, cfg.rate)
        src, app, ctl = np.random.SeedSequence(cfg.seed).spawn(3)
        self.rng = np.random.default_rng(src)
        self.app_rng = np.random.default_rng(app)
        self.ctl_rng = np.random.default_rng(ctl)
        self.progress = progress
        self.period = 1.0 / cfg.rate
        # per sender, one Delay per recipient (None for itself)
        self.delays: list[list[Delay | None]] = [
            [None if i == j else cfg.delay for j in range(n)] for i in range(n)]
        if cfg.topology is not None:
            if cfg.topology.n != n:
                raise ValueError(f"the topology has {cfg.topology.n} processes, the run {n}")
            self.delays = [list(row) for row in cfg.topology.delays]
        for (a, b), d in cfg.link_delays.items():
            i, j = cfg.index(a), cfg.index(b)
            if i == j:
                raise ValueError(f"no link from {self.names[i]} to itself")
            self.delays[i][j] = d
        self.uniform = not cfg.link_delays and cfg.topology is None
        if cfg.load is not None and cfg.load.n != n:
            raise ValueError(f"the load schedule is for {cfg.load.n} processes, the run {n}")
        #: with a load schedule: each process's period, and its source's generation (a
        #: rate change starts a new one; events of older ones are dropped)
        self.periods = [math.inf] * n
        self.generation = [0] * n
        #: per process, every other process
        self.others = [tuple(j for j in range(n) if j != i) for i in range(n)]
        # With one delay for every link, a packet's k delays are the next k values of its
        # stream, taken from blocks drawn ahead (the same values: model/net/links.py)
        self.app_delays = DelayDraws(cfg.delay, self.app_rng, 256 * (n - 1))
        self.ctl_delays = DelayDraws(cfg.delay, self.ctl_rng, 16 * (n - 1))
        self.crash_at: dict[int, float] = {}
        for p, t in cfg.crashes:
            i = cfg.index(p)
            if not (t >= 0 and math.isfinite(t)):
                raise ValueError(f"crash time of {p} must be finite and >= 0, got {t}")
            self.crash_at[i] = min(t, self.crash_at.get(i, math.inf))
        self.heap: list[tuple[float, int, int, int, object]] = []
        self.counter = 0
        self.now = 0.0
        self.alive = [True] * n
        self.last_arrival = [[0.0] * n for _ in range(n)]
        self.budget = cfg.messages
        self.app_sent = [0] * n
        self.delivered = [0] * n
        self.sent_at: dict[str, float] = {}
        self.rec = Recorder(cfg.trace_id, self.names)
        self.sum_latency = 0.0
        self.reported = 0
        # the membership service, when the protocol's processes carry one
        self.members = getattr(self.procs[0], "membership", None)
        self.source_gen: list[int | None] = [None] * n
        self.admits = None
        if (cfg.joins or cfg.partitions) and self.members is None:
            raise ValueError(f"{cfg.protocol} has no membership service, so its runs have no "
                             "joins or partitions")
        if self.members is not None and cfg.partitions:
            self.admits = self.members.admits
        if self.members is not None and cfg.load is not None:
            raise ValueError("a load schedule (001) and a membership service (000 section 5) "
                             "do not run together: the service starts and stops sources")
        #: local clock offsets; a timed protocol's network (model/net/timed.py)
        self.off = [0.0] * n
        self.timed: TimedNet | None = None
        timing = getattr(self.protocol, "timing", None)
        if timing is not None:
            self.rec = RealTimeRecorder(cfg.trace_id, self.names, lambda: self.now)
            self.timed = TimedNet(self, timing(self.options), cfg.clock_offsets,
                                  cfg.membership, cfg.scripted, cfg.packet_records,
                                  cfg.seed)
            self.off = list(self.timed.clocks.offsets)
        elif cfg.clock_offsets or cfg.membership or cfg.scripted or cfg.packet_records:
            raise ValueError(f"{cfg.protocol} runs on no timed network: no clocks, "
                             "membership schedule, scripted sends or packet records")
        if self.timed is not None and (self.members is not None or cfg.load is not None):
            raise ValueError("a timed network (003) runs neither a load schedule (001) nor "
                             "a membership service (000 section 5)")

    # ---------------------------------------------------------------------- events

    def push(self, t: float, kind: int, proc: int, data: object = None) -> None:
        self.counter += 1
        heapq.heappush(self.heap, (t, self.counter, kind, proc, data))

    def run(self) -> SimResult:
        wall = _time.perf_counter()
        cfg = self.cfg
        if self.members is not None:
            self.start_membership()
        elif cfg.load is None:
            for i in range(self.n):
                self.push(first_send(cfg.source, self.period, cfg.jitter, self.rng),
                          _SOURCE, i)
        else:
            self.load_change(list(enumerate(cfg.load.steps[0][1])))
            for t, moved in cfg.load.changes():
                self.push(t, _LOAD, 0, moved)
        for i, t in sorted(self.crash_at.items()):
            self.push(t, _CRASH, i)
        timed = self.timed
        if timed is not None:
            timed.start()
        dropped = set() if timed is None else timed.dropped
        heap, pop, arrive = self.heap, heapq.heappop, _ARRIVE
        alive, procs, handle, admits = self.alive, self.procs, self.handle, self.admits
        off = self.off
        load = cfg.load is not None
        left = -1 if cfg.max_events is None else cfg.max_events  # -1: no limit
        while heap:
            if left == 0:
                raise Runaway(f"{cfg.protocol}: more than {cfg.max_events} events "
                              f"(simulated time {self.now:.3f} s)")
            left -= 1
            t, c, kind, i, data = pop(heap)
            if timed is not None and timed.over(t):
                break
            self.now = t
            if kind == arrive:
                if alive[i] and (admits is None or admits(i, data)) and c not in dropped:
                    handle(i, procs[i].on_receive(data, t + off[i]))
            elif kind == _SOURCE:
                if load:  # a source of the load schedule
                    if data == self.generation[i] and alive[i] and self.budget > 0:
                        self.budget -= 1
                        self.send(i)
                        self.load_next(i, t + source_gap(cfg.source, self.periods[i],
                                                         cfg.jitter, self.rng))
                elif timed is not None:
                    # a timed network's process may be down or not accept sends for a while
                    if self.budget > 0:
                        if alive[i] and timed.accepts(i):
                            self.budget -= 1
                            self.send(i)
                        if self.budget > 0:
                            self.push(t + source_gap(cfg.source, self.period, cfg.jitter,
                                                     self.rng), _SOURCE, i)
                elif alive[i] and self.budget > 0 and data == self.source_gen[i]:
                    self.budget -= 1
                    self.send(i)
                    if self.budget > 0:
                        self.push(t + source_gap(cfg.source, self.period, cfg.jitter,
                                                 self.rng), _SOURCE, i, data)
            elif kind == _LOAD:
                self.load_change(data)  # type: ignore[arg-type]
            elif kind == _TIMER:
                if alive[i]:  # a timed run's timer carries its exact local time
                    handle(i, procs[i].on_timer(t + off[i] if data is None else data))
            elif kind == _CRASH:
                self.crash(i)
            elif kind == _CRASH_NOTE:
                if alive[i]:
                    handle(i, procs[i].on_crash(data, t + off[i]))  # type: ignore[arg-type]
            elif kind == _CALL:
                data()  # type: ignore[operator]
            elif kind == _HOOK:
                fn, arg = data  # type: ignore[misc]
                fn(i, arg)
        total = sum(self.app_sent)
        if self.progress is not None and total > self.reported:
            self.progress(total - self.reported)
        return SimResult(self.rec.records, self.summary(_time.perf_counter() - wall),
                         self.options)

    def load_change(self, moved: list[tuple[int, float]]) -> None:
        """The load schedule sets each process of ``moved`` to its new rate: its source
        restarts at a random phase of the new period (model/net/load.py)."""
        for i, r in moved:
            self.generation[i] += 1
            self.periods[i] = 1.0 / r if r > 0 else math.inf
            if r > 0:
                self.load_next(i, self.now + phase_start(self.cfg.source, self.periods[i],
                                                         self.rng))

    def load_next(self, i: int, t: float) -> None:
        if self.budget > 0 and t < self.cfg.load.end:  # type: ignore[union-attr]
            self.push(t, _SOURCE, i, self.generation[i])

    def send(self, i: int) -> None:
        """Process i's source: the application multicasts its next message."""
        self.app_sent[i] += 1
        mid = f"{self.names[i]}.{self.app_sent[i]}"
        t = self.now
        self.sent_at[mid] = t
        local = t + self.off[i]
        if self.timed is not None:
            self.timed.app_sent()
        out = self.procs[i].on_send(mid, local)
        self.rec.sent(i, mid, out, local)
        if self.progress is not None:
            total = sum(self.app_sent)
            if total - self.reported >= 500:
                self.progress(total - self.reported)
                self.reported = total
        self.handle(i, out)

    def handle(self, i: int, out: Output) -> None:
        """Log what process i did, arm its timer, then send its packets (a packet to
        itself is received at once, before the next one is sent)."""
        t = self.now
        if out.received or out.delivered:
            if self.rec.logged(i, out, t + self.off[i]):
                sent_at = self.sent_at
                for m, _ in out.delivered:
                    self.sum_latency += t - sent_at[m]
                self.delivered[i] += len(out.delivered)
        if out.timer is not None:
            if self.timed is None:
                self.push(out.timer, _TIMER, i)
            else:  # local to real; after the arrivals of its instant (model/net/timed.py)
                self.counter += 1
                heapq.heappush(self.heap, (out.timer - self.off[i],
                                           self.timed.timer_counter(self.counter), _TIMER,
                                           i, out.timer))
        for tr in out.sends:
            self.transmit(i, tr)

    def transmit(self, i: int, tr: Transmit) -> None:
        to, packet = tr.to, tr.packet
        to_self = i in to
        if not to_self:
            others = to
        elif len(to) == self.n:  # the whole group, itself included
            others = self.others[i]
        else:
            others = [j for j in to if j != i]
        timed = self.timed
        if others:
            t = self.now
            if self.uniform:
                ds = (self.ctl_delays if tr.control else self.app_delays).take(len(others))
            else:
                rng = self.ctl_rng if tr.control else self.app_rng
                ds = [float(self.delays[i][j].sample(rng, 1)[0])  # type: ignore[union-attr]
                      for j in others]
            if timed is not None:
                timed.packet(i, t + self.off[i], packet)
                ds = timed.delays(ds)
            last = self.last_arrival[i]
            heap, counter, push = self.heap, self.counter, heapq.heappush
            for j, d in zip(others, ds):
                if timed is not None and timed.lose(i, j):
                    continue
                arrive = t + d
                if arrive < last[j]:  # FIFO: not before the link's previous packet
                    arrive = last[j]
                last[j] = arrive
                counter += 1
                push(heap, (arrive, counter, _ARRIVE, j, packet))
                if timed is not None:
                    timed.sent(i, arrive, counter)
            self.counter = counter
        if to_self:
            self.handle(i, self.procs[i].on_receive(packet, self.now + self.off[i]))

    def crash(self, q: int) -> None:
        if not self.alive[q]:
            return
        self.alive[q] = False
        self.rec.crash(q, self.now + self.off[q])
        if self.members is not None:
            self.members.crash(q)
            return
        if self.timed is not None:
            self.timed.crashed(q)
        for j in range(self.n):
            if j != q and self.alive[j]:
                t = max(self.now + self.cfg.detection_delay, self.last_arrival[q][j])
                self.push(t, _CRASH_NOTE, j, q)

    # ------------------------------------------- the membership service's driver

    def start_membership(self) -> None:
        """View 1 for every process not joining later for the first time; the joins and
        partitions as events (model/toto/membership.py's Driver is this simulator)."""
        cfg, first_join = self.cfg, {}
        for p, t in sorted(cfg.joins, key=lambda x: x[1]):
            i = cfg.index(p)
            if not (t >= 0 and math.isfinite(t)):
                raise ValueError(f"joins: the join time of {p} must be finite and >= 0, got {t}")
            if i in first_join:
                raise ValueError(f"joins: {p} joins twice (a process crashes at most once)")
            first_join[i] = t
        for t, _ in cfg.partitions:
            if not (t >= 0 and math.isfinite(t)):
                raise ValueError(f"partitions: times must be finite and >= 0, got {t}")
        initial = [i for i in range(self.n)
                   if not (i in first_join and first_join[i] <= self.crash_at.get(i, math.inf))]
        if len(initial) < 2:
            raise ValueError("the first view needs at least 2 processes (joins name the rest)")
        self.alive = [False] * self.n
        self.members.start(self, self.procs, initial)
        for p, t in cfg.joins:
            self.push(t, _CALL, 0, lambda j=cfg.index(p): self.members.join(j))
        for t, comps in cfg.partitions:
            groups = [[cfg.index(p) for p in c] for c in comps]
            self.push(t, _CALL, 0, lambda g=groups: self.members.partition(g))

    def record(self, i: int, kind: str, view: Any = None) -> None:
        """A ``view``, ``crash`` or ``join`` record; a process that installs a view with
        no source running starts one."""
        if kind == "crash":
            self.rec.crash(i, self.now)
            return
        r: dict[str, Any] = {"trace": self.cfg.trace_id, "process": self.names[i], "kind": kind}
        if kind == "view":
            r["view"], r["members"] = view.id, [self.names[j] for j in view.members]
        r["time"] = self.now
        self.rec.records.append(r)
        if kind == "view" and self.source_gen[i] is None:
            # a new generation: a stopped source's events still in the heap are void
            gen = self.source_gen[i] = self.counter
            self.push(self.now + first_send(self.cfg.source, self.period, self.cfg.jitter,
                                            self.rng), _SOURCE, i, gen)

    def set_up(self, i: int, up: bool) -> None:
        self.alive[i] = up
        if up and self.members.names[i] != self.names[i]:  # a new incarnation's name
            self.names[i] = self.members.names[i]
            self.rec.names = tuple(self.names)
        if not up and self.source_gen[i] is not None:  # its source stops
            self.source_gen[i] = None

    def in_flight_until(self, q: int) -> float:
        return max(self.last_arrival[q])

    def changed(self, at: float) -> None:
        self.push(max(at, self.now + self.cfg.detection_delay), _CALL, 0, self.members.agree)

    def summary(self, wall: float) -> dict[str, Any]:
        surv = [i for i in range(self.n) if self.alive[i]]
        total = sum(self.app_sent)
        d = sum(self.delivered)
        stats: dict[str, Any] = {
            "seed": self.cfg.seed,
            "sends": total,
            "deliveries": d,
            "mean_latency": self.sum_latency / d if d else math.nan,
            "undelivered": sum(total - self.delivered[i] for i in surv),
            "sim_time": self.now,
            "wall_time": wall,
        }
        if self.timed is not None:  # packets the adversary and crashes lost (qos_net.py)
            stats["lost_packets"] = self.timed.lost
        if self.protocol.summary is not None:
            stats = self.protocol.summary(self.procs, self.rec.records, stats)
        return stats
