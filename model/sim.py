"""A discrete-event network simulator for the ToTo family.

Sources: 000 (Dolev, Kramer, Malki) section 6 (the simulations and measurements: n = 8,
delta = 4, periodic and Poisson sources, 4000 messages, index of latency and latency);
001 (Rodrigues, Fonseca, Verissimo) section 3 (per sender-recipient delay distributions,
a shifted gamma for both LAN and WAN, quasi-periodic and Poisson sources, "a process
receives its own messages immediately"); 002 for the rules S-ToTo, G-ToTo, GL-ToTo.

The model
---------
* n processes ``p0 .. p{n-1}``, each a :class:`~tomkit.model.process.Process` with the
  same rule; a fixed configuration (no view changes).
* Links: every ordered pair (i, j), i != j, is a reliable FIFO link whose delay is drawn
  from the link's :class:`Delay` (constant, exponential, or shifted gamma). FIFO: a
  message never arrives before an earlier message of the same link (its arrival time is
  at least the previous one's; ties keep sending order). A process receives its own
  messages at once.
* Sources: each process has its own source of application messages, periodic,
  quasi-periodic (periodic with normally distributed jitter, 001's "very narrow normal
  distribution") or Poisson (exponential gaps), at ``rate`` messages per second *per
  process*. A periodic source starts at a random phase (otherwise all processes would
  send in lockstep). Sources stop when the total budget ``messages`` is spent.
* Idle ACKs (decision). 000's measurements ran on Transis, which acknowledges messages
  even when the application is silent; without that the last messages of a finite run
  would never collect the votes they need. A process that has undelivered application
  messages in its view, something new to acknowledge, and has not sent for
  ``ack_timeout`` seconds multicasts an ACK-only message. ACK-only messages are DAG
  messages like any other (they vote and are ordered), but they belong to the ordering
  layer, not the application. The ``deps`` logged for an application message are, per
  processor, the latest *application* message it follows (what the checkers' causal
  order reads). So that a replay (``tomkit conform``) sees exactly the DAG the processes
  saw, the trace also carries the ordering layer's view in extension fields, which no
  safety property reads: every application send has ``x_dag_deps``, the message's own
  ACKs (possibly ACK-only messages), and every ACK-only message appears only as ``recv``
  records marked ``x_ack_only: true`` with ``x_sender`` and ``x_dag_deps``, one at each
  process where it became visible (its sender included). It is never a ``send``: the
  application did not send it, and validity, FIFO and liveness are about application
  messages. The default timeout, 5 mean source periods, keeps them rare while sources
  run.
* Crashes (000 section 5): at its crash time a process stops (a ``crash`` record). Its
  messages already sent still reach every process (the membership's Agree stage fixes
  one set of q's messages for everybody: virtual synchrony). Every surviving process p
  gets Crash(q) ``detection_delay`` later, but never before q's last message reaches p
  (Crash(q) means no message of q will come "henceforth"); the process defers it while
  messages of q wait in its causal buffer.
* Determinism: every random draw comes from one ``numpy.random.default_rng(seed)``, in
  an order fixed by the event order, and simultaneous events run in scheduling order.

Trace records (format v1, one trace): ``send`` (with ``deps`` and ``time``), ``recv``
when a message reaches the ordering layer (becomes visible in the causally closed view,
so possibly later than its arrival), ``deliver`` (with ``x_index_of_latency``), and
``crash``. Times are in seconds.
"""

from __future__ import annotations

import heapq
import math
import time as _time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from tomkit.model.dag import DagFacts
from tomkit.model.process import Process, Step
from tomkit.model.rules import RULES, Params, Rule

__all__ = ["DELAYS", "SOURCES", "Delay", "DelayDraws", "SimConfig", "SimResult", "first_send",
           "simulate", "source_gap"]

DELAYS = ("constant", "exponential", "gamma")
SOURCES = ("periodic", "quasi-periodic", "poisson")


@dataclass(frozen=True)
class Delay:
    """A link delay distribution, in seconds.

    ``gamma`` is 001's shifted gamma: ``shift`` plus a gamma variable, with overall mean
    ``mean`` and variance ``cv2 * mean**2``. 001 gives a mean and a variance per network
    (LAN: 20 ms and 0.05; WAN: 500 ms and 0.3-0.5); we read the variance as relative to
    the squared mean (a squared coefficient of variation, so 0.05 is a standard deviation
    of 4.5 ms at 20 ms) and, since the shift is not given, default it to half the mean
    (the propagation floor no message beats). ``cv2`` and ``shift`` are ignored by the
    other kinds.
    """

    kind: str = "exponential"
    mean: float = 0.001
    cv2: float = 0.05
    shift: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in DELAYS:
            raise ValueError(f"delay kind must be one of {DELAYS}, not {self.kind!r}")
        if not self.mean > 0:
            raise ValueError(f"mean delay must be positive, got {self.mean}")
        if self.kind == "gamma":
            if not self.cv2 > 0:
                raise ValueError(f"gamma delay needs cv2 > 0, got {self.cv2}")
            if not 0 <= self._shift() < self.mean:
                raise ValueError(f"gamma shift must be in [0, mean), got {self._shift()}")

    def _shift(self) -> float:
        return self.mean / 2 if self.shift is None else self.shift

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """``size`` independent delays."""
        if self.kind == "constant":
            return np.full(size, self.mean)
        if self.kind == "exponential":
            return rng.exponential(self.mean, size)
        shift = self._shift()
        g_mean = self.mean - shift
        var = self.cv2 * self.mean ** 2
        return shift + rng.gamma(g_mean ** 2 / var, var / g_mean, size)


class DelayDraws:
    """The values of successive ``delay.sample(rng, k)`` calls, drawn ``block`` at a time
    (one numpy call per block instead of per message). numpy fills a block element by
    element from the same stream, so the values are exactly those of the calls one by
    one (tested)."""

    __slots__ = ("delay", "rng", "block", "buf", "pos")

    def __init__(self, delay: Delay, rng: np.random.Generator, block: int) -> None:
        self.delay, self.rng, self.block = delay, rng, max(block, 1)
        self.buf: list[float] = []
        self.pos = 0

    def take(self, k: int) -> list[float]:
        """The next ``k`` delays."""
        if self.pos + k > len(self.buf):
            self.buf = (self.buf[self.pos:]
                        + self.delay.sample(self.rng, max(self.block, k)).tolist())
            self.pos = 0
        out = self.buf[self.pos:self.pos + k]
        self.pos += k
        return out


def source_gap(source: str, period: float, jitter: float, rng: np.random.Generator) -> float:
    """The time from one application message of a source to its next (module docstring:
    periodic, quasi-periodic or Poisson, ``period`` = 1 / rate)."""
    if source == "periodic":
        return period
    if source == "poisson":
        return float(rng.exponential(period))
    # quasi-periodic: a narrow normal around the period, kept positive
    return max(period * (1.0 + jitter * float(rng.standard_normal())), 0.01 * period)


def first_send(source: str, period: float, jitter: float, rng: np.random.Generator) -> float:
    """When a source sends first: a periodic one at a random phase (else all processes
    would send in lockstep), the others after one gap."""
    if source == "periodic":
        return float(rng.uniform(0, period))
    return source_gap(source, period, jitter, rng)


@dataclass(frozen=True)
class SimConfig:
    """One simulation (see the module docstring). Processes are named ``p0 .. p{n-1}``;
    links and crashes name processes by index or by name."""

    protocol: str = "toto"
    #: a rule function to run instead of ``RULES[protocol]`` (a user's rule or a mutant);
    #: ``protocol`` then only names it
    rule: Rule | None = None
    n: int = 8
    #: ToTo's delta; default ceil(n / 2), the least ToTo allows (000 section 6: 4 for n = 8)
    delta: int | None = None
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
    #: idle time before an ACK-only message; default 5 mean source periods
    ack_timeout: float | None = None
    seed: int = 1
    trace_id: str = "sim"
    #: stop with :class:`Runaway` after this many events (arrivals, sends, timers); None:
    #: no limit. A run whose rule never delivers again sends idle ACKs forever, so those
    #: who run broken rules (model/mutants.py) set one; it cuts at the same point on
    #: every machine, unlike a clock
    max_events: int | None = None

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
    #: deliveries (application messages, all processes), sends, acks (ACK-only
    #: messages), mean_index_of_latency, mean_latency (s), mean_width (candidates when
    #: a delivery fired), undelivered (application messages some surviving process did
    #: not deliver), sim_time (s), wall_time (s), seed
    stats: dict[str, float | int]


# event kinds, in the order simultaneous events scheduled together should not matter
_SOURCE, _ARRIVE, _CRASH, _CRASH_NOTE, _ACK_TIMER = range(5)


def simulate(config: SimConfig,
             progress: Callable[[int], None] | None = None) -> SimResult:
    """Run one simulation; ``progress(k)`` is told every time k more application
    messages were sent (for a progress bar)."""
    return _Sim(config, progress).run()


class _Sim:
    def __init__(self, cfg: SimConfig, progress: Callable[[int], None] | None) -> None:
        if cfg.rule is None and cfg.protocol not in RULES:
            raise ValueError(f"protocol must be one of {sorted(RULES)}, not {cfg.protocol!r}")
        if cfg.n < 2:
            raise ValueError("a simulation needs at least 2 processes")
        if cfg.source not in SOURCES:
            raise ValueError(f"source must be one of {SOURCES}, not {cfg.source!r}")
        if not cfg.rate > 0:
            raise ValueError(f"rate must be positive, got {cfg.rate}")
        if cfg.messages < 0:
            raise ValueError("messages must be >= 0")
        self.cfg = cfg
        self.n = n = cfg.n
        self.names = cfg.names()
        delta = cfg.delta if cfg.delta is not None else (n + 1) // 2
        self.params = Params(delta=delta)
        rule = cfg.rule if cfg.rule is not None else cfg.protocol
        # one DagFacts: every process receives the same Message objects, whose vcs are
        # then computed once (model/dag.py)
        facts = DagFacts(self.names)
        self.procs = [Process(p, self.names, rule, self.params, facts=facts)
                      for p in self.names]
        # Three independent streams: sources, application-message delays, ACK-only-message
        # delays. How many ACK-only messages a run sends depends on the protocol, so with one
        # stream two protocols given the same seed would not see the same inputs; with three
        # they do (same send times and link delays for every application message), which
        # is what comparing protocols on one seed needs.
        src, app, ack = np.random.SeedSequence(cfg.seed).spawn(3)
        self.src_rng = np.random.default_rng(src)
        self.app_rng = np.random.default_rng(app)
        self.ack_rng = np.random.default_rng(ack)
        self.rng = self.src_rng
        self.progress = progress
        self.period = 1.0 / cfg.rate
        self.ack_timeout = cfg.ack_timeout if cfg.ack_timeout is not None else 5 * self.period
        # per sender, one Delay per recipient (None for itself)
        self.delays: list[list[Delay | None]] = [
            [None if i == j else cfg.delay for j in range(n)] for i in range(n)]
        for (a, b), d in cfg.link_delays.items():
            i, j = cfg.index(a), cfg.index(b)
            if i == j:
                raise ValueError(f"no link from {self.names[i]} to itself")
            self.delays[i][j] = d
        self.uniform = not cfg.link_delays
        #: per sender, the recipients of its messages, in the order their delays are drawn
        self.others = [[j for j in range(n) if j != i] for i in range(n)]
        # With one delay for every link, an application (ACK-only) message's n - 1 delays
        # are the next n - 1 values of its stream, taken from blocks drawn ahead
        self.app_delays = DelayDraws(cfg.delay, self.app_rng, 256 * (n - 1))
        self.ack_delays = DelayDraws(cfg.delay, self.ack_rng, 16 * (n - 1))
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
        self.last_send_time = [-math.inf] * n
        self.timer_set = [False] * n
        self.budget = cfg.messages
        self.app_sent = [0] * n
        self.ack_sent = [0] * n
        # per sender, indexed by the seq of its messages (their position in its chain,
        # from 1): the latest of its application messages up to that one (None before
        # the first), to project an application message's deps onto application messages
        self.app_upto: list[list[str | None]] = [[None] for _ in range(n)]
        self.sent_at: dict[str, float] = {}
        self.is_app: set[str] = set()
        # per process: application messages visible and delivered
        self.app_visible = [0] * n
        self.app_delivered = [0] * n
        self.records: list[dict] = []
        self.sum_iol = 0
        self.sum_latency = 0.0
        self.sum_width = 0
        self.deliveries = 0
        self.reported = 0

    # ---------------------------------------------------------------------- events

    def push(self, t: float, kind: int, proc: int, data: object = None) -> None:
        self.counter += 1
        heapq.heappush(self.heap, (t, self.counter, kind, proc, data))

    def gap(self) -> float:
        return source_gap(self.cfg.source, self.period, self.cfg.jitter, self.rng)

    def run(self) -> SimResult:
        wall = _time.perf_counter()
        for i in range(self.n):
            self.push(first_send(self.cfg.source, self.period, self.cfg.jitter, self.rng),
                      _SOURCE, i)
        for i, t in sorted(self.crash_at.items()):
            self.push(t, _CRASH, i)
        heap, pop, arrive = self.heap, heapq.heappop, _ARRIVE
        alive, procs, handle = self.alive, self.procs, self.handle
        left = -1 if self.cfg.max_events is None else self.cfg.max_events  # -1: no limit
        while heap:
            if left == 0:
                raise Runaway(f"{self.cfg.protocol}: more than {self.cfg.max_events} events "
                              f"(simulated time {self.now:.3f} s)")
            left -= 1
            t, _, kind, i, data = pop(heap)
            self.now = t
            if kind == arrive:
                if alive[i]:
                    handle(i, procs[i].receive(data))  # type: ignore[arg-type]
            elif kind == _SOURCE:
                if self.alive[i] and self.budget > 0:
                    self.budget -= 1
                    self.send(i, app=True)
                    if self.budget > 0:
                        self.push(t + self.gap(), _SOURCE, i)
            elif kind == _ACK_TIMER:
                self.ack_timer(i)
            elif kind == _CRASH:
                self.crash(i)
            elif kind == _CRASH_NOTE:
                if self.alive[i]:
                    self.handle(i, self.procs[i].crash(data))  # type: ignore[arg-type]
        if self.progress is not None and sum(self.app_sent) > self.reported:
            self.progress(sum(self.app_sent) - self.reported)
        return SimResult(self.records, self.summary(_time.perf_counter() - wall))

    def send(self, i: int, app: bool) -> None:
        p = self.procs[i]
        name = self.names[i]
        if app:
            self.app_sent[i] += 1
            mid = f"{name}.{self.app_sent[i]}"
        else:
            self.ack_sent[i] += 1
            mid = f"{name}.ack{self.ack_sent[i]}"
        t = self.now
        msg, st = p.send(mid)
        self.last_send_time[i] = t
        upto = self.app_upto[i]
        if app:
            self.is_app.add(mid)
            self.sent_at[mid] = t
            self.records.append({"trace": self.cfg.trace_id, "process": name, "kind": "send",
                                 "msg": mid, "deps": self.app_deps(i, mid), "time": t,
                                 "x_dag_deps": list(msg.deps)})
            upto.append(mid)
        else:
            upto.append(upto[-1])
            if self.progress is not None and sum(self.app_sent) - self.reported >= 500:
                self.progress(sum(self.app_sent) - self.reported)
                self.reported = sum(self.app_sent)
        self.handle(i, st)
        others = self.others[i]
        if self.uniform:
            ds = (self.app_delays if app else self.ack_delays).take(self.n - 1)
        else:
            rng = self.app_rng if app else self.ack_rng
            ds = [float(self.delays[i][j].sample(rng, 1)[0])  # type: ignore[union-attr]
                  for j in others]
        last = self.last_arrival[i]
        heap, counter, push = self.heap, self.counter, heapq.heappush
        for j, d in zip(others, ds):
            arrive = t + d
            if arrive < last[j]:  # FIFO: not before the link's previous message
                arrive = last[j]
            last[j] = arrive
            counter += 1
            push(heap, (arrive, counter, _ARRIVE, j, msg))
        self.counter = counter

    def app_deps(self, i: int, mid: str) -> list[str]:
        """Per processor, the latest application message that ``mid`` (just sent by
        process i) follows, besides itself: the causal relation among application
        messages, ACK-only ones elided."""
        vc = self.procs[i].dag.vc(mid)
        out = []
        for r, (k, upto) in enumerate(zip(vc, self.app_upto)):
            m = upto[k - 1 if r == i else k]
            if m is not None:
                out.append(m)
        return out

    def handle(self, i: int, st: Step) -> None:
        """Log what a process did and arm its ACK timer if it now needs one."""
        name, t, tid = self.names[i], self.now, self.cfg.trace_id
        recs, is_app = self.records, self.is_app
        for m in st.released:
            if m in is_app:
                self.app_visible[i] += 1
                recs.append({"trace": tid, "process": name, "kind": "recv", "msg": m,
                             "time": t})
            else:
                msg = self.procs[i].dag.message(m)
                recs.append({"trace": tid, "process": name, "kind": "recv", "msg": m,
                             "time": t, "x_ack_only": True, "x_sender": msg.sender,
                             "x_dag_deps": list(msg.deps)})
        for m, iol, width, _ in st.delivered:
            if m not in is_app:
                continue
            self.app_delivered[i] += 1
            recs.append({"trace": tid, "process": name, "kind": "deliver", "msg": m,
                         "time": t, "x_index_of_latency": iol})
            self.deliveries += 1
            self.sum_iol += iol
            self.sum_width += width
            self.sum_latency += t - self.sent_at[m]
        if not self.timer_set[i] and self.needs_ack(i):
            self.timer_set[i] = True
            self.push(max(t, self.last_send_time[i]) + self.ack_timeout, _ACK_TIMER, i)

    def needs_ack(self, i: int) -> bool:
        return (self.app_visible[i] > self.app_delivered[i]
                and not self.procs[i].covered())

    def ack_timer(self, i: int) -> None:
        self.timer_set[i] = False
        if not self.alive[i] or not self.needs_ack(i):
            return
        due = self.last_send_time[i] + self.ack_timeout
        if due > self.now:
            # the process sent since the timer was armed: idle time restarts there
            self.timer_set[i] = True
            self.push(due, _ACK_TIMER, i)
            return
        self.send(i, app=False)

    def crash(self, q: int) -> None:
        if not self.alive[q]:
            return
        self.alive[q] = False
        self.records.append({"trace": self.cfg.trace_id, "process": self.names[q],
                             "kind": "crash", "time": self.now})
        for j in range(self.n):
            if j != q and self.alive[j]:
                t = max(self.now + self.cfg.detection_delay, self.last_arrival[q][j])
                self.push(t, _CRASH_NOTE, j, self.names[q])

    def summary(self, wall: float) -> dict[str, float | int]:
        surv = [i for i in range(self.n) if self.alive[i]]
        app_total = sum(self.app_sent)
        d = self.deliveries
        return {
            "seed": self.cfg.seed,
            "sends": app_total,
            "acks": sum(self.ack_sent),
            "deliveries": d,
            "mean_index_of_latency": self.sum_iol / d if d else math.nan,
            "mean_latency": self.sum_latency / d if d else math.nan,
            "mean_width": self.sum_width / d if d else math.nan,
            "undelivered": sum(app_total - self.app_delivered[i] for i in surv),
            "sim_time": self.now,
            "wall_time": wall,
        }

