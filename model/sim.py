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
* The membership schedule (``model/events.py``: crash, recover, join, leave, partition,
  heal, one meaning each): a protocol declares the events it honours
  (``Protocol.events``) and the simulator refuses the others before running.
* Crashes (000 section 5), for protocols that handle them: at its crash time a process
  stops (a ``crash`` record). Its packets already sent still reach every process (the
  membership's Agree stage fixes one set of q's messages for everybody: virtual
  synchrony). Every surviving process p gets Crash(q) ``detection_delay`` later, but never
  before q's last packet reaches p (Crash(q) means nothing of q will come "henceforth"),
  unless q recovers first: a notice still on its way then is dropped, q's next packets
  (after its last ones on every link) telling of its restart.
* A membership service (000 section 5, ``model/toto/membership.py``), for protocols that
  declare one (``Protocol.service``; ``toto-dynamic``): crashes, recoveries, joins,
  partitions and heals go through it instead. Each is noticed ``detection_delay`` later
  (Initiate), when the service agrees on the next configuration and its members flush
  and install it (``view`` records; ``join`` records for joiners; ``crash`` records for
  crashes and for members cut off from the primary component). A process that joins is
  outside the first view; a packet whose link a partition cuts waits for the heal (links
  are reliable), and is dropped if its view has been closed by then.
* Joins, leaves and recoveries without a service (003: the processes are ``Member`` s of
  ``model/process.py``): at its time the process's ``on_join``, ``on_leave`` or
  ``on_recover`` runs and a ``join`` or ``leave`` record is written with the output's
  fields. A process whose first event is a join is down from time 0 (no record);
  sources skip a process that does not accept sends (before join_OK, after leave),
  without spending the message budget.
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

import gc
import heapq
import math
import time as _time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .events import PLURAL, PROCESS_EVENTS, Event, at_pairs, deprecated, schedule
from .net.clocks import Clocks, clock_rng
from .net.links import SOURCES, Delay, DelayDraws, first_send, source_gap
from .net.load import LoadSchedule, phase_start
from .net.timed import RealTimeRecorder, TimedNet
from .net.topology import Topology
from .process import Member, MembershipService, Output, Protocol, Reserving, Transmit
from .protocols import protocol
from .recorder import Recorder

__all__ = ["Runaway", "SimConfig", "SimResult", "check_config", "simulate"]


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
    # ---- the membership schedule (model/events.py: one meaning per event; a protocol
    # refuses the events it does not honour). Processes by index or name, times in
    # seconds (real time on a timed network); a process list may also be given as the
    # command line's text, "P@T,P@T"
    #: (process, time): the process stops for good
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
    #: (process, time): a crashed process restarts with no state and rejoins
    recovers: Sequence[tuple[int | str, float]] = ()
    #: (process, time): a process outside the group (from time 0 if this is its first
    #: event, or after its leave) joins; a join of a crashed process is the deprecated
    #: spelling of its recover
    joins: Sequence[tuple[int | str, float]] = ()
    #: (process, time): a member leaves the group on purpose
    leaves: Sequence[tuple[int | str, float]] = ()
    #: (time, components): the network splits into these groups of processes (the ones
    #: not listed form one more); ``(time, ())`` is the deprecated spelling of a heal
    partitions: Sequence[tuple[float, Sequence[Sequence[int | str]]]] = ()
    #: times at which every partition heals
    heals: Sequence[float] = ()
    #: (process, time, (avg, max)) or "P@TIME=AVG/MAX": a member asks for a new
    #: reservation (003's RN(r); model/events.py)
    renegotiations: Sequence[Any] = ()
    #: deprecated: (kind, process, time) with kind join, leave or recover (the lists above)
    membership: Sequence[tuple[str, int | str, float]] = ()
    # ---- timed networks (003; model/net/timed.py), for protocols that declare a timing
    #: per-process clock offsets, each within eps/2 (None: drawn from the seed); also for
    #: a protocol that declares clocks of its own (``Protocol.clocks``, eps its skew)
    clock_offsets: Sequence[float] | None = None
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

    def events(self, options: Mapping[str, Any] | None = None) -> list[Event]:
        """The membership schedule (``model/events.py``), checked; ``options``: the
        protocol's options, whose ``joins``, ``leaves`` and ``recovers`` (text, the old
        qos spelling) are read into it when the protocol takes no such option."""
        lists: dict[str, list[tuple[int | str, float]]] = {
            kind: at_pairs(PLURAL[kind], getattr(self, PLURAL[kind])) for kind in PROCESS_EVENTS}
        for kind, p, t in self.membership:
            if kind not in ("join", "leave", "recover"):
                raise ValueError(f"membership event {kind!r}: must be join, leave or "
                                 "recover")
            lists[kind].append((p, t))
        if self.membership:
            deprecated("SimConfig.membership", "use joins, leaves and recovers")
        for kind in ("join", "leave", "recover"):
            text = (options or {}).get(kind + "s")
            if text:
                deprecated(f"the option {kind}s", f"use the schedule's {kind}s")
                lists[kind] += at_pairs(f"--{kind}s", text)
        return schedule(self.index, crashes=lists["crash"], recovers=lists["recover"],
                        joins=lists["join"], leaves=lists["leave"],
                        partitions=self.partitions, heals=self.heals,
                        renegotiations=self.renegotiations)


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


#: the cyclic collector's first threshold during a run (see simulate): a million net
#: allocations of tracked objects: a ToTo run of the issue's size (20,000 messages at n = 8)
#: makes no pass at all, where 100,000 made six young ones (docs/sim-speed.md)
GC_THRESHOLD = 1_000_000


def simulate(config: SimConfig,
             progress: Callable[[int], None] | None = None) -> SimResult:
    """Run one simulation; ``progress(k)`` is told every time k more application
    messages were sent (for a progress bar).

    A run allocates a dict per record and keeps every one, so Python's cyclic collector,
    run every 700 allocations by default, passes over a growing heap again and again
    (docs/sim-speed.md: a sixth of a ToTo run). During the run its first threshold is
    :data:`GC_THRESHOLD` (it still collects the cycles some protocols make, a million
    allocations apart), and it is set back afterwards."""
    thresholds = gc.get_threshold()
    gc.set_threshold(max(thresholds[0], GC_THRESHOLD), *thresholds[1:])
    try:
        return _Sim(config, progress).run()
    finally:
        gc.set_threshold(*thresholds)


def check_config(config: SimConfig) -> None:
    """ValueError naming what in ``config`` cannot run (a protocol's option, the
    membership schedule, the network), as :func:`simulate` would raise it, without
    simulating: ``tomkit simulate`` says a bad option before it prints the run's seed."""
    _Sim(config, None)


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
        if not 0 < cfg.rate < math.inf:  # infinite: every message sent at time 0
            raise ValueError(f"rate must be a positive, finite number of messages per "
                             f"second, got {cfg.rate}")
        if cfg.messages < 0:
            raise ValueError("messages must be >= 0")
        # a negative spread or notice delay would run the clock backwards
        if not (cfg.jitter >= 0 and math.isfinite(cfg.jitter)):
            raise ValueError(f"jitter must be finite and >= 0, got {cfg.jitter}")
        if not (cfg.detection_delay >= 0 and math.isfinite(cfg.detection_delay)):
            raise ValueError(f"detection delay must be finite and >= 0, got "
                             f"{cfg.detection_delay}")
        self.cfg = cfg
        self.n = n = cfg.n
        self.names = cfg.names()
        # the old spelling of the schedule as options (module docstring of model/events.py)
        given = {k: v for k, v in cfg.options.items()
                 if not (k in ("joins", "leaves", "recovers") and
                         self.protocol.option(k) is None)}
        self.events = cfg.events({k: v for k, v in cfg.options.items() if k not in given})
        self.protocol.refuse(e.kind for e in self.events)
        self.options = self.protocol.resolve(given)
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
        #: each process's restarts: a Crash(q) notice still on its way when q recovers
        #: is dropped (q's own packets, after its last ones on every link, announce it)
        self.lives = [0] * n
        self.crash_at: dict[int, float] = {}
        for e in self.events:
            if e.kind == "crash":
                self.crash_at[e.process] = min(e.time, self.crash_at.get(e.process, math.inf))
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
        # the membership service, when the protocol declares one
        self.members: MembershipService | None = (
            None if self.protocol.service is None else self.protocol.service(self.procs))
        self.source_gen: list[int | None] = [None] * n
        self.admits = None
        if self.members is not None and any(e.kind == "partition" for e in self.events):
            self.admits = self.members.admits
        if self.members is not None and cfg.load is not None:
            raise ValueError("a load schedule (001) and a membership service (000 section 5) "
                             "do not run together: the service starts and stops sources")
        #: joins, leaves and recoveries go to the processes themselves (Member s; module
        #: docstring), whose sources wait while they do not accept sends
        self.by_itself = self.members is None and any(
            self.protocol.honours(k) for k in ("join", "leave", "recover"))
        #: the processes hold reservations and may hold messages back (Reserving)
        self.reserving = self.protocol.honours("renegotiate")
        #: scheduled hooks not yet run, and the time of the last input (send or event)
        self.pending = 0
        self.last_input = 0.0
        #: local clocks (model/net/clocks.py): process i reads t + off[i] + drift[i] * t
        #: at real time t; a timed protocol's network (model/net/timed.py)
        self.off = [0.0] * n
        self.drift = [0.0] * n
        self.clocks: Clocks | None = None
        self.timed: TimedNet | None = None
        bounds = None if self.protocol.clocks is None else self.protocol.clocks(self.options)
        if self.protocol.timing is not None:
            self.rec = RealTimeRecorder(cfg.trace_id, self.names, lambda: self.now)
            self.timed = TimedNet(n, self.protocol.timing(self.options), cfg.clock_offsets,
                                  cfg.packet_records, cfg.seed, self.rec)
            self.clocks = self.timed.clocks
            self.off = list(self.timed.clocks.offsets)
        elif bounds is not None and (bounds.skew or bounds.drift or cfg.clock_offsets):
            if cfg.clock_offsets is None:
                self.clocks = Clocks.draw(n, bounds.skew, clock_rng(cfg.seed), bounds.drift)
            elif len(cfg.clock_offsets) != n:
                raise ValueError(f"clock_offsets gives {len(cfg.clock_offsets)} offsets "
                                 f"for {n} processes")
            else:
                self.clocks = Clocks.given(cfg.clock_offsets, bounds, clock_rng(cfg.seed))
            self.rec = RealTimeRecorder(cfg.trace_id, self.names, lambda: self.now)
            self.off = list(self.clocks.offsets)
            self.drift = self.clocks.drift_list()
        if self.timed is None and (cfg.scripted or cfg.packet_records or
                                   cfg.clock_offsets and self.clocks is None):
            raise ValueError(f"{cfg.protocol} runs on no timed network: no clock offsets, "
                             "scripted sends or packet records")
        self.scripted = sorted((t, cfg.index(p)) for p, t in cfg.scripted)
        if self.timed is not None and (self.members is not None or cfg.load is not None):
            raise ValueError("a timed network (003) runs neither a load schedule (001) nor "
                             "a membership service (000 section 5)")

    # ---------------------------------------------------------------------- events

    def local(self, i: int, t: float) -> float:
        """Process i's clock at real time t (model/net/clocks.py)."""
        return t + self.off[i] + self.drift[i] * t

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
        if self.by_itself or self.timed is not None:
            self.start_members()
        timed = self.timed
        dropped = set() if timed is None else timed.dropped
        heap, pop, arrive = self.heap, heapq.heappop, _ARRIVE
        alive, procs, handle, admits = self.alive, self.procs, self.handle, self.admits
        off, drift = self.off, self.drift
        load = cfg.load is not None
        left = -1 if cfg.max_events is None else cfg.max_events  # -1: no limit
        while heap:
            if left == 0:
                raise Runaway(f"{cfg.protocol}: more than {cfg.max_events} events "
                              f"(simulated time {self.now:.3f} s)")
            left -= 1
            t, c, kind, i, data = pop(heap)
            if timed is not None and timed.over(t, self.last_input, self.more_input()):
                break
            self.now = t
            if kind == arrive:
                if alive[i] and (admits is None or admits(i, data)) and c not in dropped:
                    handle(i, procs[i].on_receive(data, t + off[i] + drift[i] * t))
            elif kind == _SOURCE:
                if load:  # a source of the load schedule
                    if data == self.generation[i] and alive[i] and self.budget > 0:
                        self.budget -= 1
                        self.send(i)
                        self.load_next(i, t + source_gap(cfg.source, self.periods[i],
                                                         cfg.jitter, self.rng))
                elif timed is not None or self.by_itself:
                    # a process may be down or not accept sends for a while
                    if self.budget > 0:
                        if alive[i] and (not self.by_itself or procs[i].accepting):
                            self.budget -= 1
                            self.send(i)
                        # (without a timed network's end, sources stop once no process
                        # is in the group and none may come back: the run is over)
                        if self.budget > 0 and (timed is not None or self.more_input()):
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
                # a timer with clocks carries the exact local time asked for, never one
                # read back from real time: through a drift that can come out a hair early,
                # and a process that finds its timer not yet due does not ask again
                # (tests/model/test_sim_timer_drift.py)
                if alive[i]:
                    handle(i, procs[i].on_timer(t + off[i] + drift[i] * t if data is None
                                                 else data))
            elif kind == _CRASH:
                self.crash(i)
            elif kind == _CRASH_NOTE:
                q, life = data  # type: ignore[misc]
                if alive[i] and life == self.lives[q]:
                    handle(i, procs[i].on_crash(q, self.local(i, t)))
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
        local = self.local(i, t)
        self.last_input = t
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
        if (out.received or out.delivered or out.joined is not None or out.installed
                or out.negotiated is not None):
            if self.rec.logged(i, out, self.local(i, t)):
                sent_at = self.sent_at
                for m, _ in out.delivered:
                    self.sum_latency += t - sent_at[m]
                self.delivered[i] += len(out.delivered)
        if out.timer is not None:
            if self.clocks is None:
                self.push(out.timer, _TIMER, i)
            elif self.timed is None:  # local to real, carrying its exact local time
                self.push(max(self.now, self.clocks.real(i, out.timer)), _TIMER, i,
                          out.timer)
            else:  # local to real; after the arrivals of its instant (model/net/timed.py)
                self.counter += 1
                heapq.heappush(self.heap, (self.clocks.real(i, out.timer),
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
                timed.packet(i, self.local(i, t), packet)
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
            self.handle(i, self.procs[i].on_receive(packet, self.local(i, self.now)))

    def crash(self, q: int) -> None:
        if not self.alive[q]:
            return
        self.alive[q] = False
        self.rec.crash(q, self.local(q, self.now))
        if self.members is not None:
            self.members.crash(q)
            return
        if self.timed is not None:
            self.timed.crashed(q, self.now)
        for j in range(self.n):
            if j != q and self.alive[j]:
                t = max(self.now + self.cfg.detection_delay, self.last_arrival[q][j])
                self.push(t, _CRASH_NOTE, j, (q, self.lives[q]))

    # ------------------------------------------- the membership service's driver

    def start_membership(self) -> None:
        """View 1 for every process that does not join later; the joins, recoveries,
        partitions and heals as events (the membership service's Driver is this
        simulator)."""
        members = self.members
        assert members is not None
        moves = [e for e in self.events if e.kind in ("join", "recover")]
        seen: set[int] = set()
        for e in moves:
            if e.process in seen:  # (one crash per process, so one comeback)
                raise ValueError(f"{e.kind}s: {self.names[e.process]} {e.kind}s twice (a "
                                 "process crashes at most once)")
            seen.add(e.process)
        outside = {e.process for e in moves if e.kind == "join"}
        initial = [i for i in range(self.n) if i not in outside]
        if len(initial) < 2:
            raise ValueError("the first view needs at least 2 processes (joins name the rest)")
        self.alive = [False] * self.n
        members.start(self, self.procs, initial)
        for e in sorted(moves, key=lambda e: e.time):
            go = members.join if e.kind == "join" else members.recover
            self.push(e.time, _CALL, 0, lambda go=go, j=e.process: go(j))
        for e in sorted((e for e in self.events if e.kind in ("partition", "heal")),
                        key=lambda e: e.time):
            if e.kind == "heal":
                self.push(e.time, _CALL, 0, members.heal)
            else:
                groups = [list(g) for g in e.groups]
                self.push(e.time, _CALL, 0, lambda g=groups: members.partition(g))

    # ------------------------------------------- processes that join by themselves

    def start_members(self) -> None:
        """A process whose first event is a join is down from time 0; on a timed network
        the others start their slots (a wake-up); the joins, leaves and recoveries, and the
        scripted sends, as events."""
        moves = sorted((e.time, e.kind, e.process) for e in self.events
                       if e.kind in ("join", "leave", "recover"))
        first: dict[int, str] = {}
        for _, kind, i in moves:
            first.setdefault(i, kind)
        for e in self.events:
            if e.kind == "renegotiate":  # the process's own hook (model/qos/reserve.py)
                self.push(e.time, _HOOK, e.process, (self.renegotiate, e.reservation))
                self.pending += 1
        for i, kind in first.items():
            if kind == "join":
                self.alive[i] = False
                member: Member = self.procs[i]  # type: ignore[assignment]
                member.start_outside()
        if self.timed is not None:
            for i in range(self.n):
                if self.alive[i]:
                    self.push(0.0, _TIMER, i, self.timed.clocks.offsets[i])
        for t, kind, i in moves:
            self.push(t, _HOOK, i, (self.member_event, kind))
        for t, i in self.scripted:
            self.push(t, _HOOK, i, (self.scripted_send, None))
        self.pending += len(moves) + len(self.scripted)

    def member_event(self, i: int, kind: str) -> None:
        """Process i joins, leaves or recovers now (module docstring)."""
        self.pending -= 1
        self.last_input = self.now
        proc: Member = self.procs[i]  # type: ignore[assignment]
        local = self.local(i, self.now)
        if kind == "leave":
            if not self.alive[i]:
                return
            out = proc.on_leave(local)
        else:
            if kind == "recover" and self.alive[i]:
                raise ValueError(f"{self.names[i]} recovers at {self.now} without a crash")
            if kind == "join" and self.alive[i] and not proc.outside:
                raise ValueError(f"{self.names[i]} joins at {self.now} while a member")
            self.alive[i] = True
            if kind == "recover":
                self.lives[i] += 1
            out = proc.on_recover(local) if kind == "recover" else proc.on_join(local)
            if proc.name != self.names[i]:  # a new incarnation may be named anew
                self.names[i] = proc.name
                self.rec.names = tuple(self.names)
        if kind == "leave":  # a join's record is the process's own, at join_OK
            self.rec.event(i, "leave", local, out.fields)
        out.fields = None
        self.handle(i, out)

    def renegotiate(self, i: int, r: tuple[int, int]) -> None:
        """Process i asks for reservation ``r`` now (003's RN(r)); a process that is down
        or outside the group then asks nothing."""
        self.pending -= 1
        self.last_input = self.now
        proc: Reserving = self.procs[i]  # type: ignore[assignment]
        if not self.alive[i] or (self.by_itself and self.procs[i].outside):  # type: ignore[attr-defined]
            return
        self.handle(i, proc.on_renegotiate(r, self.now + self.off[i]))

    def scripted_send(self, i: int, _: None) -> None:
        self.pending -= 1
        if self.alive[i] and (not self.by_itself or self.procs[i].accepting):
            self.send(i)

    def more_input(self) -> bool:
        """Whether an input may still come: a scheduled hook, or a source with budget
        and a process up (and in the group) to spend it."""
        if self.pending:
            return True
        if self.reserving and any(self.alive[i] and self.procs[i].holding  # type: ignore[attr-defined]
                                  for i in range(self.n)):
            self.last_input = self.now  # a held message goes out at a later slot's start
            return True
        if self.budget <= 0:
            return False
        if self.by_itself:
            return any(self.alive[i] and not self.procs[i].outside for i in range(self.n))
        return any(self.alive)

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
        if self.timed is not None:  # packets the adversary and crashes lost (net/timed.py)
            stats["lost_packets"] = self.timed.lost
        if self.protocol.summary is not None:
            stats = self.protocol.summary(self.procs, self.rec.records, stats)
        return stats
