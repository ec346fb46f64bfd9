"""001's protocols on real clocks: the symmetric baseline, token-site and the hybrid when
every process has its own clock, skewed and drifting (``model/net/clocks.py``), for
``bench/hybrid_clocks.py``, its smoke test and docs/hybrid.md's table.

Source: Rodrigues, Fonseca and Verissimo (001) section 2 (a rate-synchronised symmetric
protocol's latency is "close to D + t", reference [19]) and section 4.1 (the active
processes' ticket numbers follow that protocol). [19] is not available; the model's rate
synchronisation (``model/hybrid/process.py``) issues t := max(t + 1, floor(C * R)) from
the local clock C and raises t to every number it receives (Lamport's rule), and a
ticket is stable once every active process has shown a number at least as high.

What the clocks should do (the theory the table is read against)
----------------------------------------------------------------
A message p sends at real time s gets number R * C_p(s). An active process b covers it
once its own clock reaches C_p(s) (after the lag C_p - C_b) or once it has received a
number that high (after D(p,b), or sooner through a third process whose clock is ahead),
and q delivers it once b's next packet after that reaches q. So:

* on perfect clocks the wait is D + (b's residual inter-message time), D + t at worst
  (section 2's line);
* a process whose clock is ahead of the others by e waits about e longer, up to the
  delay through which the others learn its numbers: D + t + min(e, D), and never more
  than Lamport's bound 2D + t, whatever the skew;
* a process whose clock is behind waits less (down to D: the others' numbers already
  cover it), so the mean moves less than the extremes, and total order never depends on
  the clocks (only on numbers rising per issuer and FIFO links);
* token-site (one active process) has nobody to wait for and does not notice clocks;
  the hybrid waits only on its active processes.
* Drift parts the clocks by up to 2 rho per second: 1e-4 adds 2 ms over a 10 s run.

Choices of ours
---------------
* Figure 3's two LANs (D1 = 20 ms, D2 = 500 ms), scenario 9 (all high: the symmetric
  protocol's own case, D + t = 530 ms) and scenario 6 (HLLHL: the hybrid has two active
  processes, A and D, one per LAN); skews 0, 2 ms (small), 20 ms (~D1) and 500 ms
  (~D2), drifts 0 and 1e-4; the offsets and drifts drawn from the seed.
* Latencies (001 section 3's metric, in real time) over the messages sent from
  ``warmup`` to ``end - tail``: the last messages of a run wait for null messages after
  the sources stop, which says nothing about the clocks.
* "holds": every property of the model's profile (``checker/profiles/model-hybrid.toml``)
  on the run's trace, and every message delivered by every process (liveness after
  draining).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..checker.oracle import promised, violations
from ..model.hybrid.latency import latency_001, message_latencies
from ..model.hybrid.protocol import PROFILE
from ..model.net.load import FIG3_SCENARIOS, LoadSchedule, fig3_schedule
from ..model.net.topology import LAN_VAR_MS2, absolute, fig3_topology
from ..model.sim import SimResult
from .hybrid import PROTOCOLS, run, static_options

__all__ = ["CLOCK_DRIFTS", "CLOCK_SCENARIOS", "CLOCK_SKEWS", "AloneRow", "ClockRun",
           "alone_markdown", "clock_error", "clock_run", "clock_table", "markdown_table",
           "symmetric_alone"]

#: skews: none, small, about D1, about D2 (seconds)
CLOCK_SKEWS = (0.0, 0.002, 0.020, 0.500)
CLOCK_DRIFTS = (0.0, 1e-4)
CLOCK_SCENARIOS = (9, 6)

Log = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


def clock_error(res: SimResult | Sequence[dict]) -> float:
    """The largest |local time - real time| over a run's records (0 without clocks)."""
    recs = res.records if isinstance(res, SimResult) else res
    return max((abs(r["time"] - r["real_time"]) for r in recs if "real_time" in r),
               default=0.0)


@dataclass
class ClockRun:
    """One protocol on one scenario under one (skew, drift): 001's latency (s, real time)
    mean and max over the measured messages, the spread of the senders' means, the
    largest clock error seen, the violated properties and the undelivered messages."""

    scenario: int
    protocol: str
    skew: float
    drift: float
    mean: float
    max: float
    spread: float
    clock_error: float
    violated: list[str] = field(default_factory=list)
    incomplete: int = 0

    @property
    def holds(self) -> bool:
        return not self.violated and self.incomplete == 0


def clock_run(protocol: str, scenario: int, skew: float, drift: float, *,
              duration: float = 8.0, warmup: float = 1.0, tail: float = 1.5,
              seed: int = 1, check: bool = True) -> ClockRun:
    """One run (module docstring)."""
    topo = fig3_topology()
    load = fig3_schedule(scenario, end=duration)
    res = run(protocol, load, topology=topo, seed=seed,
              options={**static_options(topo, load.rates_at(0)), "clock_skew": skew,
                       "clock_drift": drift})
    until = duration - tail
    lat = latency_001(res, since=warmup, until=until)
    done, missing = message_latencies(res)
    worst = max((d for _, t, d in done.values() if warmup <= t < until), default=math.nan)
    means = [m for m, _ in lat.per_sender.values()]
    bad = ([r.property for r in violations(res.records, promised(PROFILE))] if check else [])
    return ClockRun(scenario, protocol, skew, drift, lat.mean, worst,
                    max(means) - min(means) if means else math.nan, clock_error(res),
                    bad, len(missing))


def clock_table(scenarios: Sequence[int] = CLOCK_SCENARIOS,
                skews: Sequence[float] = CLOCK_SKEWS, drifts: Sequence[float] = CLOCK_DRIFTS,
                protocols: Sequence[str] = PROTOCOLS, *, duration: float = 8.0,
                warmup: float = 1.0, tail: float = 1.5, seed: int = 1,
                log: Log = _quiet) -> list[ClockRun]:
    """Every protocol on every scenario under every (skew, drift)."""
    out = []
    for sc in scenarios:
        for drift in drifts:
            for skew in skews:
                for proto in protocols:
                    r = clock_run(proto, sc, skew, drift, duration=duration, warmup=warmup,
                                  tail=tail, seed=seed)
                    out.append(r)
                    log(f"  scenario {sc} skew {skew * 1e3:g} ms drift {drift:g} {proto}: "
                        f"mean {r.mean * 1e3:.0f} ms, max {r.max * 1e3:.0f} ms, "
                        f"{'holds' if r.holds else 'VIOLATED ' + ','.join(r.violated)}")
    return out


def _ms(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x * 1e3:.0f}"


def markdown_table(rows: Sequence[ClockRun], seed: int, duration: float) -> str:
    """The table docs/hybrid.md quotes: one line per (scenario, drift, skew), each
    protocol's mean / max latency (ms), whether everything held."""
    protos = list(dict.fromkeys(r.protocol for r in rows))
    head = ("| sc | loads | drift | skew (ms) | " + " | ".join(
        f"{p} mean / max" for p in protos) + " | spread of senders' means (symmetric) | "
        "largest clock error (ms) | profile + liveness |")
    lines = [f"Seed {seed}, {duration:g} s per run, latency in ms (001 section 3's "
             "metric, real time).", "", head, "|" + "---|" * (head.count("|") - 1)]
    keys = list(dict.fromkeys((r.scenario, r.drift, r.skew) for r in rows))
    for sc, drift, skew in keys:
        group = {r.protocol: r for r in rows if (r.scenario, r.drift, r.skew) ==
                 (sc, drift, skew)}
        sym = group.get("symmetric")
        ok = all(r.holds for r in group.values())
        bad = sorted({v for r in group.values() for v in r.violated})
        verdict = "hold" if ok else "VIOLATED: " + ", ".join(
            bad or [f"{sum(r.incomplete for r in group.values())} undelivered"])
        lines.append(
            f"| {sc} | {FIG3_SCENARIOS[sc - 1]} | {drift:g} | {skew * 1e3:g} | " + " | ".join(
                f"{_ms(group[p].mean)} / {_ms(group[p].max)}" if p in group else ""
                for p in protos)
            + f" | {_ms(sym.spread) if sym else ''} | "
            f"{max(r.clock_error for r in group.values()) * 1e3:.1f} | {verdict} |")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------ the symmetric protocol alone


@dataclass
class AloneRow:
    """The symmetric protocol alone on a uniform network under one skew: 001's latency
    (s) mean and max, and the mean of the messages of the process whose clock is
    furthest ahead and of the one furthest behind."""

    skew: float
    mean: float
    max: float
    ahead: float
    behind: float


def symmetric_alone(skews: Sequence[float] = (0.0, 0.002, 0.020, 0.100, 0.500), *,
                    n: int = 5, d: float = 0.1, rate: float = 100.0,
                    duration: float = 6.0, warmup: float = 1.0, tail: float = 1.0,
                    seed: int = 1) -> list[AloneRow]:
    """Figure 1's symmetric protocol (every link a shifted chi^2 of mean ``d``, LAN
    variance), ``n`` processes at ``rate``, under each skew (module docstring: the
    process ahead waits up to min(e, D) longer, never past 2D + t)."""
    load = LoadSchedule.constant([rate] * n, end=duration)
    means = [[0.0 if i == j else d for j in range(n)] for i in range(n)]
    rows = []
    for skew in skews:
        res = run("symmetric", load, delay=absolute(d, LAN_VAR_MS2), seed=seed,
                  options={"delays": means, "clock_skew": skew})
        until = duration - tail
        lat = latency_001(res, since=warmup, until=until)
        done, _ = message_latencies(res)
        offset: dict[str, float] = {}
        for r in res.records:
            offset.setdefault(r["process"], r["time"] - r.get("real_time", r["time"]))
        first, last = max(offset, key=offset.get), min(offset, key=offset.get)
        rows.append(AloneRow(
            skew, lat.mean,
            max((x for _, t, x in done.values() if warmup <= t < until), default=math.nan),
            lat.per_sender[first][0], lat.per_sender[last][0]))
    return rows


def alone_markdown(rows: Sequence[AloneRow], n: int, d: float, rate: float, seed: int,
                   duration: float) -> str:
    """The table of :func:`symmetric_alone` as docs/hybrid.md quotes it."""
    t = 1.0 / rate
    lines = [f"Seed {seed}, {n} processes at {rate:g} msg/s (t = {t * 1e3:g} ms), every "
             f"link D = {d * 1e3:g} ms, {duration:g} s per run; latency in ms; D + t = "
             f"{(d + t) * 1e3:g}, Lamport's bound 2D + t = {(2 * d + t) * 1e3:g}.", "",
             "| skew (ms) | mean | max | clock furthest ahead | clock furthest behind |",
             "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r.skew * 1e3:g} | {_ms(r.mean)} | {_ms(r.max)} | {_ms(r.ahead)} | "
                     f"{_ms(r.behind)} |")
    return "\n".join(lines) + "\n"
