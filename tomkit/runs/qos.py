"""003's QoS-preserving totally ordered multicast, shown end to end: one run with a crash,
a join and a leave, its checks against the paper, and latency against n beside a
protocol whose latency grows with n. ``bench/qos_bounds.py`` runs the full sweep with
the same functions; ``tomkit/demo.py`` may call :func:`run_demo`.

Source: 003 (Bar-Joseph, Keidar, Anker and Lynch) sections 3.2-3.3, Figures 3-4.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Sequence
from typing import Any

from tomkit.checker.oracle import promised, violations
from tomkit.checker.properties.latency import latencies
from tomkit.checker.trace import Trace
from tomkit.model.net.links import Delay
from tomkit.model.protocols import protocol
from tomkit.model.sim import SimConfig, simulate

__all__ = ["NET", "OPTIONS", "RATE", "baseline_row", "busiest_window", "plot_latency_vs_n",
           "qos_row", "run_demo"]

SLOT, DELTA, EPS = 0.100, 0.050, 0.010
#: the reading aid's constants, FEC I = 5, L = 2, an adversary losing what its window
#: allows with probability 0.3, half a crashing sender's packets in flight lost
OPTIONS = {"slot": SLOT, "max_delay": DELTA, "epsilon": EPS, "fec_i": 5, "fec_l": 2,
           "loss": 0.3, "crash_loss": 0.5}
#: exponential delays of mean 10 ms (clipped at delta for qos: 0.7 % of the draws)
NET = Delay("exponential", 0.010)
#: messages per second per process (Poisson)
RATE = 10.0


def judge(records: Sequence[dict], reserved: bool = False) -> list:
    """The checker's verdicts on a drained qos run, violated ones only: what the model
    promises (its profile, model-qos) and 003's liveness (member-liveness); with
    ``reserved`` (a run with ``packet`` and ``negotiate`` records) the rate against the
    declared reservations too."""
    names = (*promised(protocol("qos").profile), "member-liveness")
    return violations(records, (*names, "rate") if reserved else names)


def busiest_window(records: Sequence[dict]) -> tuple[int, float] | None:
    """The K consecutive slots of one sender that held the most network messages (join
    announcements excluded, as 003 section 4 and the rate property leave them out),
    with the avg' that sender declared (``negotiate`` records, one reservation per
    process: the bench does not renegotiate); None when nobody declared one. The rate
    property judges every window; this is the margin to print."""
    declared = {r["process"]: r for r in records if r["kind"] == "negotiate"}
    if not declared:
        return None
    per: dict[str, dict[int, int]] = {}
    for r in records:
        if r["kind"] == "packet" and not r.get("x_join"):
            slots = per.setdefault(r["process"], {})
            slots[r["x_slot"]] = slots.get(r["x_slot"], 0) + 1
    best: tuple[int, float] = (0, 0.0)
    for p, slots in per.items():
        d = declared.get(p)
        if d is None:
            continue
        k = d["x_rate_window"]
        for s in slots:
            held = sum(slots.get(t, 0) for t in range(s, s + k))
            if held > best[0]:
                best = (held, d["x_rate_avg"])
    return best


def realtime_latencies(records: Sequence[dict]) -> list[float]:
    """The real-time latency of every first delivery (the checker's realtime-latency
    measures these)."""
    return [x for x, _, _ in latencies(Trace.from_records(records), "real_time")]


def qos_row(n: int, f: int, seed: int, per_process: int, reserve: str | None = None,
            window: int = 10) -> dict[str, Any]:
    """One qos run with f crashes at times drawn in the middle of the run; its figures
    and its checks (integrity, total-order-weak, global-order, 003's liveness). With
    ``reserve`` ("AVG/MAX", 003 section 2.1's r over ``window`` slots) every process
    asks for it at join(r), its shaper holds what exceeds it, and the run is checked
    against the declared reservations too (the rate property, on ``packet`` records);
    the row then says how close the busiest slot and window came to max' and avg', and
    how many messages the shaper held past their slot."""
    import numpy as np

    messages = per_process * n
    span = messages / (RATE * n)  # the sources' span, seconds
    rng = np.random.default_rng([seed, n, f])
    who = rng.choice(n, size=f, replace=False)
    crashes = tuple((f"p{int(i)}", float(rng.uniform(0.3, 0.7) * span)) for i in who)
    options = OPTIONS if reserve is None else {**OPTIONS, "reserve": reserve,
                                               "window": window, "packets": True}
    cfg = SimConfig(protocol="qos", n=n, rate=RATE, messages=messages, delay=NET,
                    seed=seed, crashes=crashes, options=options)
    res = simulate(cfg)
    lat = realtime_latencies(res.records)
    bound = res.stats["bound_failures" if f else "bound"]
    problems = judge(res.records, reserved=reserve is not None)
    crashed = {p for p, _ in crashes}
    up = [f"p{i}" for i in range(n) if f"p{i}" not in crashed]
    delivered = {(r["process"], r["msg"]) for r in res.records if r["kind"] == "deliver"}
    sent_by_crashed = [r["msg"] for r in res.records
                       if r["kind"] == "send" and r["process"] in crashed]
    missing = sum((p, m) not in delivered for m in sent_by_crashed for p in up)
    return {"n": n, "f": f, "messages": res.stats["sends"], "max": max(lat),
            "mean": statistics.fmean(lat), "bound": bound, "timeouts": res.stats["timeouts"],
            "packets": res.stats["max_packets_per_slot"],
            "reserved": res.stats["reserved_max"], "lost": res.stats["lost_packets"],
            "missing": missing,
            "problems": [f"{v.property}: {v.explanation}" for v in problems],
            **({} if reserve is None else _declared(res.stats, res.records))}


def _declared(stats: dict, records: Sequence[dict]) -> dict[str, Any]:
    """The reservation's margins of a run that declared one (``qos_row``)."""
    window = busiest_window(records) or (0, 0.0)
    return {"slot_peak": stats.get("declared_peak_packets", 0),
            "slot_max": stats.get("declared_peak_max", 0.0),
            "window_peak": window[0], "window_avg": window[1], "held": stats["held"]}


def baseline_row(protocol: str, n: int, seed: int, per_process: int) -> dict[str, Any]:
    """The baseline (ABCAST or ToTo) on the same sources and delay distribution."""
    res = simulate(SimConfig(protocol=protocol, n=n, rate=RATE, messages=per_process * n,
                             delay=NET, seed=seed))
    sent = {r["msg"]: r["time"] for r in res.records if r["kind"] == "send"}
    lat = [r["time"] - sent[r["msg"]] for r in res.records if r["kind"] == "deliver"]
    return {"n": n, "max": max(lat), "mean": statistics.fmean(lat)}


def plot_latency_vs_n(rows: Sequence[dict], base: Sequence[dict], baseline: str,
                      path: str) -> None:
    """PNG: qos's max latency (with and without crashes) and mean, the baseline's max
    and mean, and 003's two bounds, against n."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    ms = 1000.0
    for crashes, label, style in ((False, "qos, no crash", "o-"),
                                  (True, "qos, with crashes", "s-")):
        sel = [r for r in rows if bool(r["f"]) == crashes]
        ns = sorted({r["n"] for r in sel})
        if ns:
            ax.plot(ns, [max(r["max"] for r in sel if r["n"] == n) * ms for n in ns],
                    style, label=label + " (max)")
    qn = sorted({r["n"] for r in rows if r["f"] == 0})
    ax.plot(qn, [statistics.fmean(r["mean"] for r in rows if r["n"] == n and r["f"] == 0)
                 * ms for n in qn], "o:", label="qos, no crash (mean)")
    ns = [r["n"] for r in base]
    ax.plot(ns, [r["max"] * ms for r in base], "^-", label=f"{baseline} (max)")
    ax.plot(ns, [r["mean"] * ms for r in base], "^:", label=f"{baseline} (mean)")
    ax.axhline((SLOT + DELTA + EPS) * ms, color="grey", ls="--", lw=1, label="Δ + δ + ε")
    ax.axhline((SLOT + DELTA + 2 * EPS) * ms, color="black", ls="--", lw=1,
               label="Δ + δ + 2ε")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("processes n")
    ax.set_ylabel("latency, send to delivery (ms, real time)")
    ax.set_title("003: latency bounds independent of n (Δ=100, δ=50, ε=10 ms)")
    ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def run_demo(out_dir: str, seed: int = 1) -> dict[str, Any]:
    """A qos run (n = 6) with a crash, a join and a leave, written to
    ``out_dir/qos.jsonl`` and checked against 003 (order, integrity, liveness, the
    real-time bound); and the latency plot against n (qos and ABCAST, n = 2, 4, 8) in
    ``out_dir/qos_latency_vs_n.png``. Returns the figures and ``text``, lines to print;
    ``ok`` says every check held."""
    from tomkit.traces.writer import write_records

    os.makedirs(out_dir, exist_ok=True)
    cfg = SimConfig(protocol="qos", n=6, rate=RATE, messages=120, delay=NET, seed=seed,
                    crashes=(("p1", 0.9),), joins=(("p5", 0.45),), leaves=(("p3", 1.3),),
                    options={**OPTIONS, "packets": True})
    res = simulate(cfg)
    trace = os.path.join(out_dir, "qos.jsonl")
    write_records(trace, res.records)
    problems = judge(res.records)
    lat = max(realtime_latencies(res.records))
    bound = res.stats["bound_failures"]
    rows = [qos_row(n, f, seed, 6) for n in (2, 4, 8) for f in (0, 1)]
    base = [baseline_row("abcast", n, seed, 6) for n in (2, 4, 8)]
    png = os.path.join(out_dir, "qos_latency_vs_n.png")
    plot_latency_vs_n(rows, base, "abcast", png)
    ok = not problems and lat <= bound + 1e-12 and all(
        not r["problems"] and r["max"] <= r["bound"] + 1e-12 for r in rows)
    text = [
        f"qos n=6 seed {seed}: p1 crashes at 0.9 s, p5 joins at 0.45 s, p3 leaves at "
        f"1.3 s; {res.stats['sends']} messages, {res.stats['deliveries']} deliveries, "
        f"{res.stats['timeouts']} timeouts",
        f"  max latency {lat * 1000:.1f} ms real <= {bound * 1000:.0f} ms = Delta + delta"
        " + 2 eps (003 Figure 4)" if lat <= bound + 1e-12 else
        f"  max latency {lat * 1000:.1f} ms OVER the bound {bound * 1000:.0f} ms",
        "  integrity, total-order-weak, global-order, 003 liveness: "
        + ("hold" if not problems else "; ".join(v.explanation for v in problems)),
        f"  wrote {trace}",
        "  latency against n (max, ms): " + ", ".join(
            f"n={b['n']}: qos {max(r['max'] for r in rows if r['n'] == b['n']) * 1000:.0f}"
            f", abcast {b['max'] * 1000:.0f}" for b in base),
        f"  wrote {png}",
    ]
    return {"ok": ok, "trace": trace, "png": png, "max_latency": lat, "bound": bound,
            "stats": res.stats, "rows": rows, "baseline": base, "text": "\n".join(text)}
