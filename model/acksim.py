"""A discrete-event network simulator for ABCAST and TOMP (004).

Sources: 004 (Dasser) sections 2 and 3 for the protocols (model/abcast.py,
model/tomp.py) and section 2.3 / Figure 2 for the latency split; the network and the
sources are model/sim.py's (after 000 section 6 and 001 section 3), whose
:class:`~tomkit.model.sim.Delay`, ``DELAYS``, ``SOURCES`` and
:class:`~tomkit.model.sim.SimResult` are reused.

The model
---------
* n processes ``p0 .. p{n-1}``; process ``pi`` is host ``i`` of a static group (its
  timestamps read ``counter.i``), every counter starting at 0.
* Links, as in model/sim.py: every ordered pair (i, j), i != j, is a reliable FIFO link
  with its own :class:`Delay` (``delay``, or an override in ``link_delays``). One link
  carries every kind of message from i to j (data, acknowledgements, validation
  messages) in sending order, like one TCP connection; TOMP needs at least the data of
  one source in sequence (004 section 3.2.1). A message a process sends to itself
  (its own data, its acknowledgement of it, its own validation message) is received at
  once (001 section 3: "A process receives its own messages immediately").
* Sources, as in model/sim.py: per process, periodic (random phase), quasi-periodic or
  Poisson at ``rate`` messages per second, until ``messages`` are sent in all.
* Acknowledgements go to the emitter only; validation messages are multicast to the
  group. Both are protocol messages: they are not in the trace.
* No crashes. 004 leaves failures out of both protocols ("We shall not discuss what
  happens if a failure occurs here", section 2.1.2; TOMP assumes "a known and static
  group" and that "each multicast message is received by the set of hosts", 3.2.1), so
  the model has none: an ABCAST emitter waiting for a dead host's acknowledgement would
  block every host for ever.
* Determinism and paired comparisons: three independent streams from
  ``numpy.random.SeedSequence(seed).spawn(3)``: sources, data-message delays, protocol-
  message delays. ABCAST and TOMP exchange the same messages at the same moments (TOMP
  differs in what its messages carry and in when it delivers, never in when it sends),
  so on one seed the two protocols see the same send times and the same delay of every
  message: every difference in a delivery time is the protocol's.

Trace records (format v1, one trace), data messages only:

* ``send`` with ``deps``: the sender's previous message and the last message it
  delivered before sending (those it has). Decision: both protocols do deliver in
  causal order. An emitter's later message gets higher proposals than its earlier one
  at every host (FIFO links), so a higher final timestamp; and a host that delivered m
  has its counter past m's final timestamp (the counter raise, model/abcast.py), so its
  own proposal for a message it sends later already exceeds it. Because the order is
  total and gap-free, the last delivery stands for all earlier ones; the checker's
  causal-order property then decides a real claim rather than "unknown".
* ``recv`` when a data message reaches a process (its own: at the send).
* ``deliver`` with 004's latency split (section 2.3, Figure 2): ``x_t1`` from the
  reception of the message to the reception of its final timestamp, ``x_t2`` from there
  to the delivery (``x_t1 + x_t2`` is 004's *latency time*), and ``x_final_ts`` (the
  final timestamp, ``"counter.host"``).

Times are in seconds.
"""

from __future__ import annotations

import heapq
import math
import time as _time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from tomkit.model.abcast import AbcastProcess, Data, Final, Send, Step
from tomkit.model.sim import SOURCES, Delay, SimResult, first_send, source_gap
from tomkit.model.tomp import TompProcess

__all__ = ["PROTOCOLS", "AckSimConfig", "simulate_ack"]

#: the protocols of 004 by name
PROTOCOLS: dict[str, type[AbcastProcess]] = {"abcast": AbcastProcess, "tomp": TompProcess}


@dataclass(frozen=True)
class AckSimConfig:
    """One simulation (module docstring); fields as in
    :class:`~tomkit.model.sim.SimConfig`, without crashes."""

    protocol: str = "tomp"
    n: int = 8
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
    #: move the counter past every final timestamp (the decision of model/abcast.py);
    #: False is 004's literal text, which is not a total order
    raise_counter: bool = True
    #: a planted fault of model/abcast.py or model/tomp.py, for checker tests only
    broken: str | None = None
    seed: int = 1
    trace_id: str = "sim"

    def names(self) -> list[str]:
        return [f"p{i}" for i in range(self.n)]

    def index(self, p: int | str) -> int:
        i = p if isinstance(p, int) else (int(p[1:]) if p[:1] == "p" and p[1:].isdigit()
                                          else -1)
        if not 0 <= i < self.n:
            raise ValueError(f"unknown process {p!r} (processes are p0 .. p{self.n - 1})")
        return i


def simulate_ack(config: AckSimConfig,
                 progress: Callable[[int], None] | None = None) -> SimResult:
    """Run one simulation; ``progress(k)`` is told every time k more application messages
    were sent (for a progress bar).

    ``stats``: seed, sends, acks (acknowledgements sent between processes),
    finals (validation messages sent between processes), deliveries, mean_t1,
    mean_t2, mean_latency (t1 + t2, 004's latency time), mean_end_to_end (send to
    delivery), raised (pending timestamps TOMP raised), undelivered, sim_time,
    wall_time.
    """
    return _AckSim(config, progress).run()


_SOURCE, _ARRIVE = 0, 1


class _AckSim:
    def __init__(self, cfg: AckSimConfig, progress: Callable[[int], None] | None) -> None:
        if cfg.protocol not in PROTOCOLS:
            raise ValueError(f"protocol must be one of {sorted(PROTOCOLS)}, "
                             f"not {cfg.protocol!r}")
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
        cls = PROTOCOLS[cfg.protocol]
        group = tuple(range(n))
        self.procs = [cls(i, group, raise_counter=cfg.raise_counter, broken=cfg.broken)
                      for i in range(n)]
        # Three streams (see the module docstring): sources, data delays, protocol delays.
        src, app, ack = np.random.SeedSequence(cfg.seed).spawn(3)
        self.rng = np.random.default_rng(src)
        self.app_rng = np.random.default_rng(app)
        self.ack_rng = np.random.default_rng(ack)
        self.progress = progress
        self.period = 1.0 / cfg.rate
        self.delays: list[list[Delay | None]] = [
            [None if i == j else cfg.delay for j in range(n)] for i in range(n)]
        for (a, b), d in cfg.link_delays.items():
            i, j = cfg.index(a), cfg.index(b)
            if i == j:
                raise ValueError(f"no link from {self.names[i]} to itself")
            self.delays[i][j] = d
        self.uniform = not cfg.link_delays
        self.heap: list[tuple[float, int, int, int, object]] = []
        self.counter = 0
        self.now = 0.0
        self.last_arrival = [[0.0] * n for _ in range(n)]
        self.budget = cfg.messages
        self.app_sent = [0] * n
        self.acks = 0
        self.finals = 0
        self.records: list[dict] = []
        self.sent_at: dict[str, float] = {}
        self.recv_at: dict[tuple[int, str], float] = {}
        self.final_at: dict[tuple[int, str], float] = {}
        self.last_sent: list[str | None] = [None] * n
        self.last_delivered: list[str | None] = [None] * n
        self.delivered = [0] * n
        self.sum_t1 = self.sum_t2 = self.sum_e2e = 0.0
        self.raised = 0
        self.reported = 0

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
        heap = self.heap
        while heap:
            t, _, kind, i, data = heapq.heappop(heap)
            self.now = t
            if kind == _ARRIVE:
                self.receive(i, data)  # type: ignore[arg-type]
            elif self.budget > 0:
                self.budget -= 1
                self.multicast(i)
                if self.budget > 0:
                    self.push(t + self.gap(), _SOURCE, i)
        if self.progress is not None and sum(self.app_sent) > self.reported:
            self.progress(sum(self.app_sent) - self.reported)
        return SimResult(self.records, self.summary(_time.perf_counter() - wall))

    def multicast(self, i: int) -> None:
        name = self.names[i]
        self.app_sent[i] += 1
        mid = f"{name}.{self.app_sent[i]}"
        t = self.now
        deps = [m for m in (self.last_sent[i], self.last_delivered[i]) if m is not None]
        self.records.append({"trace": self.cfg.trace_id, "process": name, "kind": "send",
                             "msg": mid, "deps": list(dict.fromkeys(deps)), "time": t})
        self.last_sent[i] = mid
        self.sent_at[mid] = t
        total = sum(self.app_sent)
        if self.progress is not None and total - self.reported >= 500:
            self.progress(total - self.reported)
            self.reported = total
        self.handle(i, self.procs[i].multicast(mid))

    def receive(self, i: int, msg: object) -> None:
        """Process ``i`` takes ``msg`` from a link (or from itself)."""
        t = self.now
        if isinstance(msg, Data):
            self.recv_at[(i, msg.mid)] = t
            self.records.append({"trace": self.cfg.trace_id, "process": self.names[i],
                                 "kind": "recv", "msg": msg.mid, "time": t})
        elif isinstance(msg, Final):
            self.final_at[(i, msg.mid)] = t
        self.handle(i, self.procs[i].receive(msg))  # type: ignore[arg-type]

    def handle(self, i: int, st: Step) -> None:
        """Log the deliveries of one step, then send its messages."""
        t, name, tid = self.now, self.names[i], self.cfg.trace_id
        self.raised += len(st.raised)
        for d in st.delivered:
            key = (i, d.mid)
            r = self.recv_at.pop(key)
            # a planted fault may deliver before the final timestamp (t1 is then open)
            f = self.final_at.pop(key, t)
            self.records.append({"trace": tid, "process": name, "kind": "deliver",
                                 "msg": d.mid, "time": t, "x_t1": f - r, "x_t2": t - f,
                                 "x_final_ts": str(d.ts)})
            self.sum_t1 += f - r
            self.sum_t2 += t - f
            self.sum_e2e += t - self.sent_at[d.mid]
            self.delivered[i] += 1
            self.last_delivered[i] = d.mid
        for s in st.sends:
            self.transmit(i, s)

    def transmit(self, i: int, s: Send) -> None:
        is_data = isinstance(s.msg, Data)
        if not is_data:
            if isinstance(s.msg, Final):
                self.finals += len(s.to) - (i in s.to)
            else:
                self.acks += len(s.to) - (i in s.to)
        others = [j for j in s.to if j != i]
        if others:
            rng = self.app_rng if is_data else self.ack_rng
            if self.uniform:
                ds = self.cfg.delay.sample(rng, len(others))
            else:
                ds = [float(self.delays[i][j].sample(rng, 1)[0])  # type: ignore[union-attr]
                      for j in others]
            last = self.last_arrival[i]
            for j, d in zip(others, ds):
                arrive = max(self.now + float(d), last[j])
                last[j] = arrive
                self.push(arrive, _ARRIVE, j, s.msg)
        if i in s.to:
            self.receive(i, s.msg)

    def summary(self, wall: float) -> dict[str, float | int]:
        d = sum(self.delivered)
        total = sum(self.app_sent)
        return {
            "seed": self.cfg.seed,
            "sends": total,
            "acks": self.acks,
            "finals": self.finals,
            "deliveries": d,
            "mean_t1": self.sum_t1 / d if d else math.nan,
            "mean_t2": self.sum_t2 / d if d else math.nan,
            "mean_latency": (self.sum_t1 + self.sum_t2) / d if d else math.nan,
            "mean_end_to_end": self.sum_e2e / d if d else math.nan,
            "raised": self.raised,
            "undelivered": sum(total - k for k in self.delivered),
            "sim_time": self.now,
            "wall_time": wall,
        }
