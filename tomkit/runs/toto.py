"""Measures of 000 section 6 and 002 section 7 that a simulation's summary does not keep.

Sources: 000 (Dolev, Kramer, Malki) section 6 ("Index of Latency", "Model and Reality",
equations (1) and (2), Figures 5 and 6, Tables 2-5) and section 4.3 (the cost of a
reception, O(n_p + n_c^2)); 002 (Johnson, Maugis) section 7 (the share of early
deliveries, the lexicographic order, the average NTail(G)).

:func:`simulate_measured` runs one simulation of a ToTo-family protocol exactly as
``model/sim.py`` does (same processes, same inputs, same trace) with each process
instrumented, and returns per application delivery (process, message):

* ``iol``: 000's index of latency tau, as the trace carries it (``x_index_of_latency``);
* ``omega``: 000's omega, "the number of machines having a concurrent message in DAG_p
  to a newly received message", taken when the message becomes visible at the process
  (see :meth:`MeasuredToto._omega` for the reading);
* ``clause``: the clause of the rule that delivered it ("early", "default", GL-ToTo's
  "prefix"; 002 section 7 counts early deliveries by rule);
* ``latency``: send to delivery, seconds.

With ``timing=True`` it also times every reception (``on_receive``, which includes the
drain of the rule it triggers, in thread CPU time), with the number of pending messages n_p and of
candidates n_c the reception met: 000 section 4.3's complexity claim is about these.

How (decision): the simulator builds a protocol's processes through the protocol's own
factory (``model/protocols.py``). To measure without touching ``model/sim.py`` or
``model/toto/process.py``, a temporary protocol (the same one, under another name, whose factory
is the real factory making each process as the subclass :class:`MeasuredToto`: the
TotoProcess class may be compiled, model/kernel.py, and a compiled object's class cannot be
switched) is registered for the one run and removed after it. The subclass
only reads the view and overrides two methods around the real ones, so the run, its
deliveries and its trace are those of the plain protocol (tested).

The performance model (000 section 6, from Dolev, Kramer and Malki's [18]): with
P(tau = i, omega = j) the joint distribution, and 1/lambda = c the mean time between two
sends of one machine,

    (1)  Pois = 1/lambda * sum_{i=n/2+1}^{n} sum_{j=1}^{i} P(i, j) sum_{k=j}^{i-1} 1/(n-k)
    (2)  Per  = c        * sum_{i=n/2+1}^{n} sum_{j=1}^{i} P(i, j) (i-j)/(n-j+1)

i.e. after m arrives with j machines already heard from, the process waits for i - j of
the n - j others: exponential waiting times (1), or order statistics of uniform phases
(2). :func:`model_latency` evaluates them; pairs outside the sums' range (i <= n/2, or
j > i) are left out as the paper's sums leave them out, and their probability mass is
returned so that a reader sees what was dropped.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import partial
from time import thread_time
from typing import Any, NamedTuple

from tomkit.model import protocols as _protocols
from tomkit.model.sim import SimConfig, SimResult, simulate
from tomkit.model.toto.process import TotoProcess
from tomkit.model.toto.process import make as make_toto
from tomkit.model.toto.rules import RULES

__all__ = ["DeliveryRow", "Measured", "MeasuredToto", "Reception", "bin_receptions",
           "distribution", "joint_distribution", "mean", "model_latency",
           "model_speedup_ideal", "simulate_measured"]


class DeliveryRow(NamedTuple):
    """One application delivery of a measured run (module docstring)."""

    process: str
    msg: str
    time: float
    latency: float
    iol: int
    omega: int
    clause: str


class Reception(NamedTuple):
    """One reception (``on_receive``): the pending messages (application messages visible,
    not delivered: ACK-only messages are not agreed messages) and candidates it met, the
    DAG messages it delivered, and its CPU cost in seconds (the thread's CPU time, not wall
    time: the machine is shared, and a process switched out mid-reception would be
    charged for the others' work; the timer's own median cost subtracted)."""

    pending: int
    candidates: int
    delivered: int
    seconds: float


class MeasuredToto(TotoProcess):
    """A TotoProcess that also records omega, the delivering clause and, optionally, the
    cost of each reception (``timing``). The real factory makes it (model/toto/process.py's
    ``make``); its decisions are the TotoProcess's own."""

    omega: dict[str, int]
    clause: dict[str, str]
    receptions: list[Reception]
    timing: bool
    timer_overhead: float
    dag_delivered: int

    def __init__(self, *args: Any, timing: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.omega, self.clause, self.receptions = {}, {}, []
        self.timing, self.dag_delivered = timing, 0
        self.timer_overhead = _timer_overhead() if timing else 0.0

    def on_receive(self, msg, now):  # type: ignore[override]
        if self.timing:
            dag = self.dag
            # 000 section 4.3: pending = agreed messages received, not yet ordered; the
            # ACK-only messages are not agreed messages (model/toto/process.py)
            pending = self.app_visible - self.app_delivered
            cands = len(dag.rule_inputs()[0])
            before = self.dag_delivered
            t0 = thread_time()
            out = TotoProcess.on_receive(self, msg, now)
            dt = thread_time() - t0 - self.timer_overhead
            self.receptions.append(Reception(pending, cands, self.dag_delivered - before, dt))
        else:
            out = TotoProcess.on_receive(self, msg, now)
        for mid, fields in out.received:
            if fields is None:  # an application message (ACK-only ones carry fields)
                self.omega[mid] = self._omega(mid)
        return out

    def _log_delivered(self, delivered, into):  # type: ignore[override]
        self.dag_delivered += len(delivered)
        clause = self.clause
        for m, _, _, c in delivered:
            clause[m] = c
        super()._log_delivered(delivered, into)

    def _omega(self, mid: str) -> int:
        """000 section 6's omega for ``mid``, just visible here: its own machine plus every
        other machine q with a message in this view concurrent to it (neither follows the
        other).

        Reading (decision): omega counts m's own machine, so that omega >= 1. 000's
        averages (1.12 - 1.81 at loads where two sends rarely overlap a 1 ms LAN) and
        equations (1) and (2), whose j starts at 1 (for all-ack, j = 1 gives H_{n-1}/lambda
        and (n-1)/n c, the wait for every other machine), both need it. "DAG_p" is the whole
        view (delivered messages too): the relation is the DAG's, not the delivery
        state's. q's messages are a chain, and a message following ``mid`` is followed by
        q's later ones, so q has a concurrent message iff its first message that ``mid``
        does not follow exists and does not follow ``mid``. Messages released with ``mid``
        by the causal buffer in the same input are seen too (rare; none follows it)."""
        dag = self.dag
        vc = dag.vc(mid)
        own = dag.rank(dag.message(mid).sender)
        count = 1
        for r, k in enumerate(vc):
            if r == own:
                continue
            chain = dag.chain(r)
            if len(chain) > k and not dag.follows(chain[k], mid):
                count += 1
        return count


_OVERHEAD: list[float] = []


def _timer_overhead() -> float:
    """The median of an empty thread_time interval (about 1-2 us here), subtracted from
    every timed reception; measured once per Python process."""
    if not _OVERHEAD:
        xs = []
        for _ in range(20001):
            t0 = thread_time()
            xs.append(thread_time() - t0)
        xs.sort()
        _OVERHEAD.append(xs[len(xs) // 2])
    return _OVERHEAD[0]


@dataclasses.dataclass
class Measured:
    """A measured run: the simulator's result, one :class:`DeliveryRow` per application
    delivery (in trace order) and, with timing, every reception's :class:`Reception`."""

    result: SimResult
    n: int
    rows: list[DeliveryRow]
    receptions: list[Reception]

    @property
    def stats(self) -> dict:
        return self.result.stats


def simulate_measured(config: SimConfig, timing: bool = False) -> Measured:
    """Run ``config`` (a ToTo-family protocol) with measuring processes (module
    docstring). The simulation itself is ``model.sim.simulate``'s, unchanged."""
    base = _protocols.protocol(config.protocol)
    if base.name not in RULES:
        raise TypeError(f"only ToTo-family processes can be measured, not {base.name}'s")
    made: list[MeasuredToto] = []
    real = make_toto(base.name, partial(MeasuredToto, timing=timing))

    def make(names, options, rate):
        procs = real(names, options, rate)
        made.extend(procs)  # type: ignore[arg-type]
        return procs

    name = f"{config.protocol}~measured"
    registry = _protocols.PROTOCOLS
    if name in registry:
        raise RuntimeError(f"{name} is already registered (a measured run in progress?)")
    registry[name] = dataclasses.replace(base, name=name, make=make)
    try:
        res = simulate(dataclasses.replace(config, protocol=name))
    finally:
        del registry[name]
    by_name = {p.name: p for p in made}
    sent = {r["msg"]: r["time"] for r in res.records if r["kind"] == "send"}
    rows = []
    for r in res.records:
        if r["kind"] != "deliver":
            continue
        p = by_name[r["process"]]
        m = r["msg"]
        rows.append(DeliveryRow(r["process"], m, r["time"], r["time"] - sent[m],
                                r["x_index_of_latency"], p.omega[m], p.clause[m]))
    receptions = [x for p in made for x in p.receptions]
    return Measured(res, config.n, rows, receptions)


# ------------------------------------------------------------------------------- analysis


def mean(xs: Iterable[float]) -> float:
    """The mean (nan for none)."""
    s = k = 0
    for x in xs:
        s += x
        k += 1
    return s / k if k else math.nan


def distribution(values: Iterable[int]) -> dict[int, float]:
    """The sample distribution of ``values``: value -> probability, by value."""
    c = Counter(values)
    total = sum(c.values())
    return {v: c[v] / total for v in sorted(c)} if total else {}


def joint_distribution(rows: Sequence[DeliveryRow]) -> dict[tuple[int, int], float]:
    """P(tau = i, omega = j) over the application deliveries ``rows``."""
    c = Counter((r.iol, r.omega) for r in rows)
    total = len(rows)
    return {k: c[k] / total for k in sorted(c)} if total else {}


def model_latency(joint: dict[tuple[int, int], float], n: int, interval: float,
                  source: str) -> tuple[float, float]:
    """000's equation (1) (``source`` "poisson") or (2) ("periodic"): the predicted mean
    latency, ``interval`` being the mean time between two sends of one machine (1/lambda,
    c). Returns (prediction, probability mass outside the sums' range)."""
    if source not in ("poisson", "periodic"):
        raise ValueError(f"the model has equations for poisson and periodic, not {source!r}")
    total = dropped = 0.0
    lo = n // 2 + 1
    for (i, j), p in joint.items():
        if not (lo <= i <= n and 1 <= j <= i):
            dropped += p
            continue
        if source == "poisson":
            total += p * sum(1.0 / (n - k) for k in range(j, i))
        else:
            total += p * (i - j) / (n - j + 1)
    return interval * total, dropped


def model_speedup_ideal(n: int, delta: int, source: str) -> float:
    """The model's all-ack / ToTo latency for a narrow DAG (omega = 1 always) and ToTo at
    its least index of latency (tau = delta + 1): H_{n-1} / (H_{n-1} - H_{n-delta-1}) for
    Poisson sources (the O(log n) of 000's abstract, at delta = n/2), (n-1)/delta for
    periodic ones (at most 2)."""
    ack, _ = model_latency({(n, 1): 1.0}, n, 1.0, source)
    toto, _ = model_latency({(delta + 1, 1): 1.0}, n, 1.0, source)
    return ack / toto


def bin_receptions(receptions: Sequence[Reception], key: str,
                   edges: Sequence[int]) -> list[dict]:
    """Receptions binned by ``key`` ("pending" or "candidates") at the lower ``edges``
    (a bin holds [edge, next edge)): per bin its range, count, and the mean and median
    cost in microseconds; receptions that delivered something and those that did not
    are kept apart (``deliv`` and ``quiet``), since a delivery's cost (000: O(n n_c^2))
    is not a reception's; ``per_delivered_median`` is the median cost of a delivering
    reception per DAG message it delivered, ``delivered_mean`` how many it delivered."""
    out = []
    for a, b in zip(edges, [*edges[1:], math.inf]):
        sel = [x for x in receptions if a <= getattr(x, key) < b]
        row: dict = {"lo": a, "hi": b, "count": len(sel)}
        for part, xs in (("all", sel), ("quiet", [x for x in sel if not x.delivered]),
                         ("deliv", [x for x in sel if x.delivered])):
            us = sorted(1e6 * x.seconds for x in xs)
            row[f"{part}_n"] = len(us)
            row[f"{part}_mean"] = mean(us)
            row[f"{part}_median"] = us[len(us) // 2] if us else math.nan
        per = sorted(1e6 * x.seconds / x.delivered for x in sel if x.delivered)
        row["per_delivered_median"] = per[len(per) // 2] if per else math.nan
        row["delivered_mean"] = mean(x.delivered for x in sel if x.delivered)
        out.append(row)
    return out
