"""The simulations of 001's Figures 1, 3 and 5 (Rodrigues, Fonseca, Verissimo), on the one
simulator, for ``bench/hybrid_figures.py``, the smoke tests and the demo.

Sources: 001 section 2 (token-site latency "close to 2D", symmetric "close to D + t", t the
largest inter-message time), section 3 (the network and sources, the latency metric:
model/net/topology.py, model/net/load.py, model/hybrid/latency.py), section 4.2 / Figure 1 (30
processes at 10 msg/s each, latency against D: token-site on the 2D line, symmetric on
D + t, token-site better iff D < t), section 4.4 / Figure 3 (five processes on two LANs,
nine H/L scenarios, token-site with A as the sequencer, the hybrid with H active and L
passive) and section 6.2 / Figure 5 (the nine scenarios in sequence, quasi-periodic and
Poisson sources, the hybrid switching online).

The protocols are the hybrid model's three configurations (``model/hybrid/protocol.py``):
``token-site`` (p0 = A the one sequencer, tickets sent at once), ``symmetric`` (every
process active) and ``hybrid`` (Figure 2's roles from the mean delays and rates; in
Figure 5 ``dynamic``, starting all active as section 5.1 says).

Choices of ours (the paper does not give them)
----------------------------------------------
* Figure 1's D axis: 10 .. 400 ms; every link the same shifted chi^2 of mean D with 001's
  LAN variance read in ms^2 (0.05 ms^2; model/net/topology.py says why this reading).
  Quasi-periodic sources (jitter 5 %).
* Latencies leave out the messages of the first ``warmup`` seconds (start-up: the
  ticket counters and, in Figure 5, the first estimates); every run drains (sources stop,
  the simulation runs until the last delivery).
* Null messages: every configuration's active processes send a null after their mean
  inter-message time of silence (the model's default heartbeat; 0 for token-site). In
  Figure 5 the heartbeat of every process is set from the low rate (1 s): a process's rate
  changes during the run, the heartbeat is fixed, and an idle active process then shows
  its number at most every t_L = 1 s, as a low-load process would.
* Figure 5's mean-shift k (lost, 001 footnote 6): ``fig5`` runs the model's default
  (k = 5) unless ``hybrid_options`` say otherwise; the bench passes k = 10, with which the
  Poisson run does not mis-fire (docs/hybrid-figures.md); the demo uses k = 3 and probes
  every 0.5 s to fit its switches in a few seconds.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tomkit.model.hybrid.latency import (
    latency_001,
    latency_series,
    message_latencies,
    real_time,
)
from tomkit.model.net.links import Delay
from tomkit.model.net.load import (
    FIG3_SCENARIOS,
    FIG5_DWELL,
    HIGH_RATE,
    LOW_RATE,
    LoadSchedule,
    fig3_schedule,
    fig5_schedule,
)
from tomkit.model.net.topology import LAN_VAR_MS2, Topology, absolute, fig3_topology
from tomkit.model.sim import SimConfig, SimResult, simulate

__all__ = ["FIG1_DELAYS", "Fig1Row", "Fig3Row", "Fig5Result", "PROTOCOLS", "fig1",
           "fig1_crossover", "fig3", "fig3_paper_lines", "fig5", "plot_fig1", "plot_fig5",
           "demo_markdown", "roles_from_trace", "run", "run_demo", "static_options"]

PROTOCOLS = ("token-site", "symmetric", "hybrid")
#: Figure 1's network delays (ours: the figure's axis is lost), seconds
FIG1_DELAYS = (0.010, 0.025, 0.050, 0.100, 0.200, 0.400)

Log = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


def run(protocol: str, load: LoadSchedule, *, topology: Topology | None = None,
        delay: Delay | None = None, source: str = "quasi-periodic", seed: int = 1,
        options: Mapping[str, Any] | None = None) -> SimResult:
    """One run of ``protocol`` under ``load`` (sources stop at its end; the run drains)."""
    n = load.n
    cfg = SimConfig(protocol=protocol, n=n, source=source, rate=max(load.rates_at(0)),
                    messages=10 ** 9, delay=delay or absolute(0.02, LAN_VAR_MS2),
                    topology=topology, load=load, seed=seed,
                    options={"control_records": False, **(options or {})})
    return simulate(cfg)


# ---------------------------------------------------------------------------- Figure 1


@dataclass
class Fig1Row:
    """One D of Figure 1: measured latencies (s) and the paper's lines 2D and D + t."""

    d: float
    token: float
    symmetric: float
    t: float

    @property
    def two_d(self) -> float:
        return 2 * self.d

    @property
    def d_plus_t(self) -> float:
        return self.d + self.t


def fig1(delays: Sequence[float] = FIG1_DELAYS, n: int = 30, rate: float = 10.0,
         duration: float = 20.0, warmup: float = 2.0, seed: int = 1,
         source: str = "quasi-periodic", log: Log = _quiet) -> list[Fig1Row]:
    """001 Figure 1: token-site and symmetric alone, n processes at ``rate`` each, every
    link a shifted chi^2 of mean D."""
    rows = []
    load = LoadSchedule.constant([rate] * n, end=duration)
    for d in delays:
        delay = absolute(d, LAN_VAR_MS2)
        means = [[0.0 if i == j else d for j in range(n)] for i in range(n)]
        lat = {}
        for proto in ("token-site", "symmetric"):
            res = run(proto, load, delay=delay, source=source, seed=seed,
                      options={"delays": means})
            lat[proto] = latency_001(res, since=warmup).mean
        rows.append(Fig1Row(d, lat["token-site"], lat["symmetric"], 1.0 / rate))
        log(f"  D = {d * 1e3:5.0f} ms: token-site {lat['token-site'] * 1e3:7.1f} ms, "
            f"symmetric {lat['symmetric'] * 1e3:7.1f} ms")
    return rows


def fig1_crossover(rows: Sequence[Fig1Row]) -> float:
    """The D where token-site stops being the faster (linear interpolation of the
    difference between consecutive Ds); nan if the curves do not cross."""
    for a, b in zip(rows, rows[1:]):
        fa, fb = a.token - a.symmetric, b.token - b.symmetric
        if fa <= 0 < fb:
            return a.d + (b.d - a.d) * (-fa) / (fb - fa)
    return math.nan


# ---------------------------------------------------------------------------- Figure 3


def roles_from_trace(res: SimResult | Sequence[Mapping[str, Any]], since: float = 0.0,
                     until: float = math.inf) -> dict[str, str]:
    """Per sender, the process that ticketed most of its messages sent in [since, until)
    (from the ``x_ticket`` of the deliveries): itself when it was active, its sequencer
    when passive."""
    recs = res.records if isinstance(res, SimResult) else res
    sent = {r["msg"]: (r["process"], real_time(r)) for r in recs if r.get("kind") == "send"}
    issuers: dict[str, Counter] = {}
    seen: set[str] = set()
    for r in recs:
        if r.get("kind") == "deliver" and "x_ticket" in r and r["msg"] not in seen:
            seen.add(r["msg"])
            p, t = sent.get(r["msg"], (None, -1.0))
            if p is not None and since <= t < until:
                issuers.setdefault(p, Counter())[r["x_ticket"][0]] += 1
    return {p: c.most_common(1)[0][0] for p, c in sorted(issuers.items())}


def _label_roles(roles: Mapping[str, str], labels: Sequence[str]) -> str:
    """"A* B>A ..." : * active, >X passive with sequencer X."""
    name = {f"p{i}": lab for i, lab in enumerate(labels)}
    out = []
    for p, s in roles.items():
        out.append(f"{name.get(p, p)}*" if p == s else f"{name.get(p, p)}>{name.get(s, s)}")
    return " ".join(out)


def fig3_paper_lines(loads: str, topology: Topology | None = None, high: float = HIGH_RATE,
                     low: float = LOW_RATE, sequencer: int = 0) -> dict[str, float]:
    """The paper's lines for one scenario, each sender weighted by its rate (the metric
    counts messages): token-site 2D (the sender's delay to the sequencer, then the
    sequencer's to the farthest process; D for the sequencer's own messages) and
    symmetric D + t (the farthest delay plus the largest inter-message time)."""
    topo = topology or fig3_topology()
    rates = [high if c == "H" else low for c in loads]
    n = len(rates)
    D = topo.means()  # noqa: N806
    t = 1.0 / min(rates)
    token = sym = 0.0
    for s in range(n):
        far_from_seq = max(D[sequencer][r] for r in range(n))
        token += rates[s] * (far_from_seq + (D[s][sequencer] if s != sequencer else 0.0))
        sym += rates[s] * (max(D[j][r] for j in range(n) for r in range(n)) + t)
    return {"token-site": token / sum(rates), "symmetric": sym / sum(rates)}


@dataclass
class Fig3Row:
    """One scenario of Figure 3: measured latency per protocol (s), the hybrid's roles
    (expected by Figure 2 and observed in the trace), the paper's lines."""

    scenario: int
    loads: str
    latency: dict[str, float]
    expected_roles: str
    observed_roles: str
    paper: dict[str, float] = field(default_factory=dict)

    @property
    def best_baseline(self) -> float:
        return min(self.latency["token-site"], self.latency["symmetric"])


def static_options(topo: Topology, rates: Sequence[float]) -> dict[str, Any]:
    """The options of a static run: Figure 2's inputs (the mean delays, the rates)."""
    return {"delays": topo.means(), "rates": list(rates)}


def fig3(scenarios: Sequence[int] = tuple(range(1, 10)), duration: float = 20.0,
         warmup: float = 2.0, seed: int = 1, source: str = "quasi-periodic",
         topology: Topology | None = None, low: float = LOW_RATE,
         log: Log = _quiet) -> list[Fig3Row]:
    """001 Figure 3: each scenario held ``duration`` seconds, the three protocols
    (``low``: the L rate, msg/s; the paper's is lost)."""
    from tomkit.model.hybrid.switch import assign_modes

    topo = topology or fig3_topology()
    rows = []
    for k in scenarios:
        load = fig3_schedule(k, end=duration, low=low)
        rates = load.rates_at(0)
        lat, observed = {}, ""
        for proto in PROTOCOLS:
            res = run(proto, load, topology=topo, source=source, seed=seed,
                      options=static_options(topo, rates))
            lat[proto] = latency_001(res, since=warmup).mean
            if proto == "hybrid":
                observed = _label_roles(roles_from_trace(res, since=warmup), topo.labels)
        modes, seqs = assign_modes(topo.means(), [1.0 / r for r in rates])
        expected = _label_roles({f"p{i}": f"p{s}" for i, s in enumerate(seqs)}, topo.labels)
        row = Fig3Row(k, FIG3_SCENARIOS[k - 1], lat, expected, observed,
                      fig3_paper_lines(FIG3_SCENARIOS[k - 1], topo, low=low))
        rows.append(row)
        log(f"  scenario {k} {row.loads}: " + ", ".join(
            f"{p} {v * 1e3:.0f} ms" for p, v in lat.items()) + f"; roles {observed}")
    return rows


# ---------------------------------------------------------------------------- Figure 5


@dataclass
class Fig5Result:
    """Figure 5 for one source: per protocol, the latency per window of send time
    (window start s, mean s, messages) and per scenario (mean s over the scenario, and
    over its second half: after the transient); the hybrid's roles per scenario (observed
    over the second half of each)."""

    source: str
    dwell: float
    window: float
    series: dict[str, list[tuple[float, float, int]]]
    per_scenario: dict[str, list[float]]
    settled: dict[str, list[float]]
    roles: list[str]
    overall: dict[str, float]
    stats: dict[str, dict[str, Any]] = field(default_factory=dict)
    scenarios: tuple[int, ...] = tuple(range(1, 10))


def fig5(dwell: float = FIG5_DWELL, source: str = "quasi-periodic", seed: int = 1,
         window: float = 1.0, warmup: float = 2.0, probe_interval: float = 2.0,
         topology: Topology | None = None, scenarios: Sequence[int] = tuple(range(1, 10)),
         hybrid_options: Mapping[str, Any] | None = None, low: float = LOW_RATE,
         protocols: Sequence[str] | None = None, log: Log = _quiet) -> Fig5Result:
    """001 Figure 5: the scenarios (all nine by default) in sequence, ``dwell`` seconds
    each; the hybrid dynamic (section 6), starting all active (section 5.1), with
    ``hybrid_options`` on top (e.g. ``mean_shift_k``); ``low`` the L rate (msg/s), which
    also sets every process's heartbeat (1 / low); ``protocols``: run only these (default
    all three)."""
    topo = topology or fig3_topology()
    load = (fig5_schedule(dwell, low=low) if list(scenarios) == list(range(1, 10)) else
            LoadSchedule.scenarios([FIG3_SCENARIOS[k - 1] for k in scenarios], dwell=dwell,
                                   low=low, names=[f"scenario {k}" for k in scenarios]))
    ns = len(scenarios)
    base = {"delays": topo.means(), "rates": [low] * load.n}
    opts = {"token-site": base, "symmetric": base,
            "hybrid": {**base, "roles": "all", "dynamic": True,
                       "probe_interval": probe_interval, **(hybrid_options or {})}}
    series, per, settled, overall, stats = {}, {}, {}, {}, {}
    roles: list[str] = []
    for proto in protocols or PROTOCOLS:
        res = run(proto, load, topology=topo, source=source, seed=seed,
                  options=opts[proto])
        series[proto] = latency_series(res, window, 0.0, load.end)
        per[proto] = [latency_001(res, since=max(k * dwell, warmup),
                                  until=(k + 1) * dwell).mean for k in range(ns)]
        settled[proto] = [latency_001(res, since=(k + 0.5) * dwell,
                                      until=(k + 1) * dwell).mean for k in range(ns)]
        overall[proto] = latency_001(res, since=warmup).mean
        stats[proto] = {k: v for k, v in res.stats.items() if isinstance(v, (int, float))}
        _, missing = message_latencies(res)
        stats[proto]["incomplete"] = len(missing)
        if proto == "hybrid":
            roles = [_label_roles(roles_from_trace(res, (k + 0.5) * dwell, (k + 1) * dwell),
                                  topo.labels) for k in range(ns)]
        log(f"  {source} {proto}: mean {overall[proto] * 1e3:.0f} ms")
    return Fig5Result(source, dwell, window, series, per, settled, roles, overall, stats,
                      tuple(scenarios))


def _save(fig, path: str | Path) -> Path:
    """Lay out, write (creating the folder) and close a figure: its path."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def plot_fig5(results: Sequence[Fig5Result], path: str | Path) -> Path:
    """Figure 5 as a PNG: latency against time, one panel per source, a line per protocol,
    the scenario changes marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(results), 1, figsize=(10, 3.6 * len(results)),
                             squeeze=False)
    style = {"token-site": ("tab:blue", "--"), "symmetric": ("tab:orange", ":"),
             "hybrid": ("tab:green", "-")}
    for ax, res in zip(axes[:, 0], results):
        top = 0.0
        for proto, pts in res.series.items():
            xs = [t + res.window / 2 for t, m, _ in pts if not math.isnan(m)]
            ys = [m * 1e3 for _, m, _ in pts if not math.isnan(m)]
            top = max([top, *ys])
            c, ls = style.get(proto, ("k", "-"))
            ax.plot(xs, ys, color=c, linestyle=ls, label=proto, linewidth=1.4)
        for k, sc in enumerate(res.scenarios):
            ax.axvline(k * res.dwell, color="grey", linewidth=0.6)
            ax.text((k + 0.5) * res.dwell, top * 1.02, f"{sc}\n{FIG3_SCENARIOS[sc - 1]}",
                    ha="center", va="bottom", fontsize=7)
        ax.set_ylim(0, top * 1.18)
        ax.set_xlim(0, len(res.scenarios) * res.dwell)
        ax.set_ylabel("latency (ms)")
        ax.set_title(f"{res.source} sources", fontsize=9, loc="left")
        ax.legend(loc="upper left", bbox_to_anchor=(1.005, 1.0), fontsize=8)
    axes[-1, 0].set_xlabel("time (s); scenario and loads of A B C D E above")
    fig.suptitle("001 Figure 5: dynamic hybrid against token-site (A) and symmetric",
                 fontsize=10)
    return _save(fig, path)


def plot_fig1(rows: Sequence[Fig1Row], path: str | Path, n: int = 30) -> Path:
    """Figure 1 as a PNG: measured latency against D with the 2D and D + t lines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    ds = [r.d * 1e3 for r in rows]
    ax.plot(ds, [r.token * 1e3 for r in rows], "o-", color="tab:blue", label="token-site")
    ax.plot(ds, [r.symmetric * 1e3 for r in rows], "s-", color="tab:orange",
            label="symmetric")
    ax.plot(ds, [r.two_d * 1e3 for r in rows], "--", color="tab:blue", linewidth=0.8,
            label="2D")
    ax.plot(ds, [r.d_plus_t * 1e3 for r in rows], "--", color="tab:orange", linewidth=0.8,
            label="D + t")
    ax.set_xlabel("network delay D (ms)")
    ax.set_ylabel("latency (ms)")
    ax.set_title(f"001 Figure 1: {n} processes, {1 / rows[0].t:g} msg/s each", fontsize=10)
    ax.legend(fontsize=8)
    return _save(fig, path)


# ---------------------------------------------------------------------------- demo


def run_demo(out_dir: str | Path, seed: int = 1, dwell: float = 8.0,
             scenarios: Sequence[int] = (1, 4, 6, 2), log: Log = _quiet) -> dict[str, Any]:
    """The hybrid switching roles as the load changes (001 Figure 5 in short: the
    scenarios ``scenarios`` of Figure 3 in sequence, ``dwell`` seconds each,
    quasi-periodic sources; probes every 0.5 s and a mean-shift detector of k = 3 so that
    the switches fit in a few seconds). Writes ``fig5.png`` into ``out_dir``; returns the
    plot's path, the seed, the mean latency (ms) per protocol over the run, the hybrid's
    latency (ms) per window of send time (window start s, mean ms), and per
    scenario its loads, the roles the hybrid settled on (``A*`` active, ``B>A`` passive
    with sequencer A) and each protocol's latency (ms) over the scenario's second half.
    About 10 s of CPU with the defaults (no scenario 9: its 500 msg/s cost most)."""
    res = fig5(dwell=dwell, source="quasi-periodic", seed=seed, window=dwell / 8,
               probe_interval=0.5, scenarios=scenarios, hybrid_options={"mean_shift_k": 3},
               log=log)
    png = plot_fig5([res], Path(out_dir) / "fig5.png")
    return {"png": str(png), "seed": seed, "dwell": dwell,
            "mean_latency_ms": {p: v * 1e3 for p, v in res.overall.items()},
            "hybrid_series_ms": [(t, m * 1e3) for t, m, _ in res.series["hybrid"]],
            "scenarios": [{"scenario": sc, "loads": FIG3_SCENARIOS[sc - 1],
                           "hybrid_roles": res.roles[k],
                           "latency_ms": {p: res.settled[p][k] * 1e3 for p in PROTOCOLS}}
                          for k, sc in enumerate(scenarios)]}


def demo_markdown(res: Mapping[str, Any]) -> str:
    """The table docs/hybrid-figures.md quotes of :func:`run_demo`'s result (the same
    figures ``tomkit demo`` prints)."""
    lines = [f"Seed {res['seed']}, {res['dwell']:g} s per scenario, latency in ms over each "
             "scenario's second half; whole run: " + ", ".join(
                 f"{p} {v:.0f}" for p, v in res["mean_latency_ms"].items()) + ".", "",
             "| scenario | loads | hybrid roles, settled | token-site | symmetric | hybrid |",
             "|---|---|---|---|---|---|"]
    for sc in res["scenarios"]:
        lat = sc["latency_ms"]
        lines.append(f"| {sc['scenario']} | {sc['loads']} | {sc['hybrid_roles']} | "
                     f"{lat['token-site']:.0f} | {lat['symmetric']:.0f} | "
                     f"{lat['hybrid']:.0f} |")
    return "\n".join(lines) + "\n"
