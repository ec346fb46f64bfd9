"""003's latency bounds in simulation: the QoS-preserving totally ordered multicast
against a protocol whose latency grows with n.

    python bench/qos_bounds.py [--seed 1] [--out out/qos] [--quick] [--baseline abcast]

Source: 003 (Bar-Joseph, Keidar, Anker and Lynch) section 3.2 (Figure 3: latency at most
Delta + delta + eps without failures) and 3.3 (Figure 4: Delta + delta + 2 eps with
failures), "bounds [that] do not depend on the number of failures or on the number of
participating processes"; docs/qos.md derives the bounds for the model's parameters.

Setup
-----
* Delta = 100 ms, delta = 50 ms, eps = 10 ms (the reading aid's numbers), FEC I = 5,
  L = 2, the burst-loss adversary losing each packet its window allows with probability
  0.3, clocks drawn within eps/2 of real time from the seed.
* Network: exponential delays of mean 10 ms, clipped at delta for qos (the timed network
  never exceeds delta; 0.7 % of the draws are above it); the baseline sees the same
  distribution unclipped (it assumes no bound).
* Load: Poisson sources, 10 messages per second per process, 12 n messages per run
  (6 n with ``--quick``).
* n = 2, 4, 8, 16, 32, 64 (``--quick``: 2, 4, 8); crashes f = 0, 1 and n/2 (rounded
  down, at most n - 1), each at a time drawn from the seed in the middle of the run.
  Every qos run is checked: integrity, total-order-weak and global-order, 003's
  liveness, the bound (``--strict``: exit 1 if any fails).
* Baseline: ABCAST (004 section 2; default) or ToTo (000) on the same sources and the
  same delay distribution, crash-free (neither tolerates 003's failures).

Output
------
A table per run: n, f, messages, max and mean real-time latency, the bound that
applies, max / bound, timeouts, the busiest slot's network messages against the
inflated reservation max', packets lost by the adversary, and the deliveries missing
for messages of crashed senders (the loss past the bound a crash may cause). Then the
baseline's max and mean latency per n, and a PNG of latency against n for both.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

from tomkit.model import qos_check
from tomkit.model.network import Delay
from tomkit.model.sim import SimConfig, _Sim, simulate

SLOT, DELTA, EPS = 0.100, 0.050, 0.010
OPTIONS = {"slot": SLOT, "max_delay": DELTA, "epsilon": EPS, "fec_i": 5, "fec_l": 2,
           "loss": 0.3, "crash_loss": 0.5}
NET = Delay("exponential", 0.010)
RATE = 10.0
SIZES = (2, 4, 8, 16, 32, 64)
QUICK_SIZES = (2, 4, 8)


def crash_counts(n: int) -> list[int]:
    return sorted({0, 1, min(n // 2, n - 1)})


def qos_row(n: int, f: int, seed: int, per_process: int) -> dict:
    """One qos run with f crashes; its figures and its checks."""
    import numpy as np

    messages = per_process * n
    span = messages / (RATE * n)  # the sources' span, seconds
    rng = np.random.default_rng([seed, n, f])
    who = rng.choice(n, size=f, replace=False)
    crashes = tuple((f"p{int(i)}", float(rng.uniform(0.3, 0.7) * span)) for i in who)
    cfg = SimConfig(protocol="qos", n=n, rate=RATE, messages=messages, delay=NET,
                    seed=seed, crashes=crashes, options=OPTIONS)
    sim = _Sim(cfg, None)
    res = sim.run()
    lat = qos_check.latencies(res.records)
    bound = res.stats["bound_failures" if f else "bound"]
    problems = qos_check.safety(res.records) + qos_check.liveness(res.records)
    crashed = {p for p, _ in crashes}
    up = [f"p{i}" for i in range(n) if f"p{i}" not in crashed]
    delivered = {(r["process"], r["msg"]) for r in res.records if r["kind"] == "deliver"}
    sent_by_crashed = [r["msg"] for r in res.records
                       if r["kind"] == "send" and r["process"] in crashed]
    missing = sum((p, m) not in delivered for m in sent_by_crashed for p in up)
    return {"n": n, "f": f, "messages": res.stats["sends"], "max": max(lat),
            "mean": statistics.fmean(lat), "bound": bound, "timeouts": res.stats["timeouts"],
            "packets": res.stats["max_packets_per_slot"],
            "reserved": res.stats["reserved_max"], "lost": sim.timed.lost,
            "missing": missing, "problems": [f"{v.kind}: {v.explanation}" for v in problems]}


def baseline_row(protocol: str, n: int, seed: int, per_process: int) -> dict:
    res = simulate(SimConfig(protocol=protocol, n=n, rate=RATE, messages=per_process * n,
                             delay=NET, seed=seed))
    sent = {r["msg"]: r["time"] for r in res.records if r["kind"] == "send"}
    lat = [r["time"] - sent[r["msg"]] for r in res.records if r["kind"] == "deliver"]
    return {"n": n, "max": max(lat), "mean": statistics.fmean(lat)}


def plot(rows: list[dict], base: list[dict], baseline: str, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    ms = 1000.0
    for f_kind, label, style in (("none", "qos, no crash", "o-"),
                                 ("some", "qos, with crashes", "s-")):
        sel = [r for r in rows if (r["f"] == 0) == (f_kind == "none")]
        ns = sorted({r["n"] for r in sel})
        ax.plot(ns, [max(r["max"] for r in sel if r["n"] == n) * ms for n in ns], style,
                label=label + " (max)")
    ns = [r["n"] for r in base]
    ax.plot(ns, [r["max"] * ms for r in base], "^-", label=f"{baseline} (max)")
    ax.plot(ns, [r["mean"] * ms for r in base], "^:", label=f"{baseline} (mean)")
    qn = sorted({r["n"] for r in rows if r["f"] == 0})
    ax.plot(qn, [statistics.fmean(r["mean"] for r in rows if r["n"] == n and r["f"] == 0)
                 * ms for n in qn], "o:", label="qos, no crash (mean)")
    ax.axhline((SLOT + DELTA + EPS) * ms, color="grey", ls="--", lw=1,
               label="Δ + δ + ε")
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="out/qos")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--baseline", choices=("abcast", "toto"), default="abcast")
    ap.add_argument("--sizes", default=None, help="n values, comma-separated (default "
                    "2..64, --quick 2,4,8)")
    ap.add_argument("--strict", action="store_true",
                    help="exit 1 if a run exceeds its bound or fails a check")
    args = ap.parse_args(argv)
    sizes = QUICK_SIZES if args.quick else SIZES
    if args.sizes:
        sizes = tuple(int(x) for x in args.sizes.split(","))
    per_process = 6 if args.quick else 12
    print(f"seed {args.seed}")
    print(f"Delta={SLOT * 1000:g} ms delta={DELTA * 1000:g} ms eps={EPS * 1000:g} ms, "
          f"I=5 L=2, adversary p=0.3, exponential delays mean {NET.mean * 1000:g} ms, "
          f"{RATE:g} msg/s per process")
    print(f"{'n':>3} {'f':>3} {'msgs':>5} {'max ms':>8} {'mean ms':>8} {'bound':>6} "
          f"{'max/bound':>9} {'timeouts':>8} {'pkts/slot':>9} {'max_':>6} {'lost':>6} "
          f"{'missing':>7}")
    rows, bad = [], 0
    t0 = time.perf_counter()
    for n in sizes:
        for f in crash_counts(n):
            r = qos_row(n, f, args.seed, per_process)
            rows.append(r)
            over = r["max"] > r["bound"] + 1e-12
            bad += over or bool(r["problems"])
            print(f"{n:>3} {f:>3} {r['messages']:>5} {r['max'] * 1000:>8.3f} "
                  f"{r['mean'] * 1000:>8.3f} {r['bound'] * 1000:>6.0f} "
                  f"{r['max'] / r['bound']:>9.3f} {r['timeouts']:>8} {r['packets']:>9} "
                  f"{r['reserved']:>6.2f} {r['lost']:>6} {r['missing']:>7}"
                  + ("  OVER THE BOUND" if over else "")
                  + "".join(f"  {p}" for p in r["problems"]), flush=True)
    base = []
    print(f"\n{args.baseline}, same sources and delays, no crash:")
    print(f"{'n':>3} {'max ms':>8} {'mean ms':>8}   qos max ms (f=0)")
    for n in sizes:
        b = baseline_row(args.baseline, n, args.seed, per_process)
        base.append(b)
        q = max(r["max"] for r in rows if r["n"] == n and r["f"] == 0)
        print(f"{n:>3} {b['max'] * 1000:>8.3f} {b['mean'] * 1000:>8.3f}   {q * 1000:.3f}",
              flush=True)
    os.makedirs(args.out, exist_ok=True)
    png = os.path.join(args.out, "qos_latency_vs_n.png")
    plot(rows, base, args.baseline, png)
    worst = max(r["max"] / r["bound"] for r in rows)
    print(f"\nhighest max/bound {worst:.3f} over {len(rows)} runs; {bad} runs over the "
          f"bound or failing a check; baseline max grows "
          f"{base[-1]['max'] / base[0]['max']:.2f}x from n={sizes[0]} to n={sizes[-1]}")
    print(f"wrote {png} ({time.perf_counter() - t0:.1f} s)")
    return 1 if (args.strict and bad) else 0


if __name__ == "__main__":
    sys.exit(main())
