"""000 section 6 in full on the simulator: Figures 5-6, equations (1)-(2), omega, the
speedup's growth with n, and the cost of a reception against n_p and n_c.

    python bench/toto_section6.py [--messages 4000] [--seed 1] [--out out/toto-section6]
                                  [--quick]

Sources: 000 (Dolev, Kramer, Malki) section 6 (Figures 5 and 6, Tables 2-5, equations
(1) and (2), "up to O(log(n)) speedup" of the abstract and section 1) and section 4.3
(the cost of a reception, O(n_p + n_c^2)). The set-up is bench/toto_tables.py's: n = 8,
delta = 4, "load" = total msgs/s (load/n per machine), links a shifted gamma of mean 1 ms;
4000 messages per run, as in 000. Every run is measured by tomkit/runs/toto.py.

Output
------
1. Figures 5 (periodic) and 6 (Poisson): per load, the sample distribution of ToTo's index
   of latency tau and its average beside 000's (Figure 5's panels; Figure 6's panels are
   lost in the OCR, so its averages are Table 3's). PNG: figure5_periodic.png,
   figure6_poisson.png.
2. Model and reality (000 Tables 4 and 5): per source, load and protocol, omega's average
   (000's definition: machines with a message concurrent to a newly received one, the
   receiver's own machine included; Tables 2-3's omega column) beside the candidate-set
   size at firing (what toto_tables.py reports), equation (1) or (2) from the simulated
   joint distribution of (tau, omega), the simulated latency, and the deviation
   eps = |l_model - l_observed| / l_observed, each beside 000's.
3. Speedup against n (n = 4 .. 64, delta = n/2, total load 100 msgs/s, both sources):
   ToTo's and all-ack's latency, the measured speedup, the model's (equations (1)-(2) on
   each run's joint distribution) and the ideal model's (omega = 1, tau = delta + 1).
   PNG: speedup_vs_n.png.
4. Cost of a reception (000 section 4.3: O(n_p + n_c^2) operations per reception, with
   n_p pending messages and n_c candidates): every reception timed (thread CPU time around
   the process's on_receive, the rule's drain included), binned by n_p and by n_c, as
   median microseconds and as a ratio to the first bin of the same run holding 2 % of its
   receptions; receptions that deliver are apart. Then, across n, the receptions that meet
   one candidate and deliver nothing, by n_p: where the processors' number enters at equal
   n_p and n_c.
"""

from __future__ import annotations

import argparse
import gc
import math
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from toto_tables import LAN, wide_links  # noqa: E402  (bench/ is not a package)

from tomkit.model.sim import SimConfig  # noqa: E402
from tomkit.runs.toto import (  # noqa: E402
    Measured,
    bin_receptions,
    distribution,
    joint_distribution,
    mean,
    model_latency,
    model_speedup_ideal,
    simulate_measured,
)

__all__ = ["FIG_AVG", "PAPER_MODEL", "PAPER_OMEGA", "complexity_rows", "figure_rows", "main",
           "speedup_rows"]

LOADS = (50, 100, 150, 200)
SOURCES = ("periodic", "poisson")
#: 000 Figure 5's averages (periodic) and Table 3's (Poisson; Figure 6's panels are lost)
FIG_AVG = {("periodic", 50): 5.10, ("periodic", 100): 5.42, ("periodic", 150): 5.36,
           ("periodic", 200): 5.90, ("poisson", 50): 5.11, ("poisson", 100): 5.31,
           ("poisson", 150): 5.54, ("poisson", 200): 5.89}
#: 000 Tables 2-3's omega average: (source, load, protocol) -> omega
PAPER_OMEGA = {("periodic", 50, "toto"): 1.12, ("periodic", 50, "all-ack"): 1.69,
               ("periodic", 100, "toto"): 1.39, ("periodic", 100, "all-ack"): 1.31,
               ("periodic", 150, "toto"): 1.44, ("periodic", 150, "all-ack"): 1.81,
               ("periodic", 200, "toto"): 1.72, ("periodic", 200, "all-ack"): 1.48,
               ("poisson", 50, "toto"): 1.15, ("poisson", 50, "all-ack"): 1.13,
               ("poisson", 100, "toto"): 1.29, ("poisson", 100, "all-ack"): 1.27,
               ("poisson", 150, "toto"): 1.42, ("poisson", 150, "all-ack"): 1.42,
               ("poisson", 200, "toto"): 1.63, ("poisson", 200, "all-ack"): 1.58}
#: 000 Tables 4-5: (source, load, protocol) -> (l_model ms, l_observed ms, eps)
PAPER_MODEL = {
    ("periodic", 50, "toto"): (75.67, 76.68, 0.013),
    ("periodic", 50, "all-ack"): (137.51, 135.02, 0.018),
    ("periodic", 100, "toto"): (44.87, 42.31, 0.060),
    ("periodic", 100, "all-ack"): (69.35, 68.78, 0.008),
    ("periodic", 150, "toto"): (29.29, 29.17, 0.004),
    ("periodic", 150, "all-ack"): (47.34, 45.59, 0.038),
    ("periodic", 200, "toto"): (24.78, 23.80, 0.041),
    ("periodic", 200, "all-ack"): (35.96, 43.71, 0.177),
    ("poisson", 50, "toto"): (122.34, 114.10, 0.072),
    ("poisson", 50, "all-ack"): (396.17, 385.25, 0.028),
    ("poisson", 100, "toto"): (66.64, 60.98, 0.093),
    ("poisson", 100, "all-ack"): (194.58, 188.06, 0.035),
    ("poisson", 150, "toto"): (52.34, 44.10, 0.187),
    ("poisson", 150, "all-ack"): (137.79, 133.09, 0.035),
    ("poisson", 200, "toto"): (46.12, 39.37, 0.171),
    ("poisson", 200, "all-ack"): (111.45, 102.33, 0.089),
}
NS = (4, 8, 16, 32, 64)
#: bins with fewer receptions are not shown (a median of a handful is noise)
MIN_BIN = 20
PENDING_EDGES = (0, 4, 8, 12, 16, 24, 32, 48)
CAND_EDGES = (0, 1, 2, 3, 4, 5, 6, 8)


def _say(text: str) -> None:
    print(text, flush=True)


def run(protocol: str, n: int, source: str, load: float, messages: int, seed: int,
        delta: int | None = None, timing: bool = False, links: dict | None = None,
        log: Callable[[str], None] = _say) -> Measured:
    """One measured run at total ``load`` msgs/s; logs one line."""
    cfg = SimConfig(protocol=protocol, n=n, options={"delta": delta}, source=source,
                    rate=load / n, messages=messages, delay=LAN, link_delays=links or {},
                    seed=seed,
                    trace_id=f"{protocol}-{source}-{load}-{n}")
    t0 = time.perf_counter()
    m = simulate_measured(cfg, timing=timing)
    s = m.stats
    log(f"  run {source:8s} load {load:>4} n {n:2d} {protocol:8s}: {s['deliveries']} "
        f"deliveries, iol {s['mean_index_of_latency']:.2f}, latency "
        f"{1000 * s['mean_latency']:.2f} ms, undelivered {s['undelivered']}, "
        f"{time.perf_counter() - t0:.1f} s")
    if s["undelivered"]:
        raise RuntimeError(f"{protocol} {source} {load} n {n}: {s['undelivered']} undelivered")
    return m


def _summary(m: Measured, source: str, load: float) -> dict:
    n = m.n
    interval = n / load  # one machine's mean time between sends (1/lambda, c)
    pred, dropped = model_latency(joint_distribution(m.rows), n, interval, source)
    obs = mean(r.latency for r in m.rows)
    return {"iol": mean(r.iol for r in m.rows), "omega": mean(r.omega for r in m.rows),
            "width_at_firing": m.stats["mean_width"], "lat_ms": 1000 * obs,
            "model_ms": 1000 * pred, "eps": abs(pred - obs) / obs, "dropped": dropped,
            "iol_dist": distribution(r.iol for r in m.rows),
            "omega_dist": distribution(r.omega for r in m.rows)}


def figure_rows(messages: int = 4000, seed: int = 1, loads: Sequence[int] = LOADS,
                sources: Sequence[str] = SOURCES,
                log: Callable[[str], None] = _say) -> list[dict]:
    """Sections 1 and 2: one dict per (source, load, protocol), n = 8, delta = 4."""
    rows = []
    for source in sources:
        for load in loads:
            for proto in ("toto", "all-ack"):
                m = run(proto, 8, source, load, messages, seed, delta=4, log=log)
                rows.append({"source": source, "load": load, "protocol": proto,
                             **_summary(m, source, load)})
    return rows


def speedup_rows(messages: int = 4000, seed: int = 1, ns: Sequence[int] = NS,
                 load: float = 100, sources: Sequence[str] = SOURCES,
                 log: Callable[[str], None] = _say) -> list[dict]:
    """Section 3: per (source, n), ToTo (delta = n/2) against all-ack."""
    rows = []
    for source in sources:
        for n in ns:
            d = n // 2
            t = _summary(run("toto", n, source, load, messages, seed, delta=d, log=log),
                         source, load)
            a = _summary(run("all-ack", n, source, load, messages, seed, log=log),
                         source, load)
            rows.append({"source": source, "n": n, "delta": d, "lat_toto_ms": t["lat_ms"],
                         "lat_ack_ms": a["lat_ms"], "speedup": a["lat_ms"] / t["lat_ms"],
                         "speedup_model": a["model_ms"] / t["model_ms"],
                         "model_toto_ms": t["model_ms"], "model_ack_ms": a["model_ms"],
                         "speedup_ideal": model_speedup_ideal(n, d, source),
                         "iol_toto": t["iol"], "omega_toto": t["omega"]})
    return rows


#: the runs of section 4: (label, n, links); "wide" is toto_tables.py's 3 LANs of 3
COMPLEXITY_RUNS = (("lan", 8), ("lan", 16), ("lan", 32), ("wide", 9))


def complexity_rows(messages: int = 4000, seed: int = 1,
                    runs: Sequence[tuple[str, int]] = COMPLEXITY_RUNS, load: float = 400,
                    log: Callable[[str], None] = _say) -> list[dict]:
    """Section 4: ToTo (delta = ceil(n/2)), Poisson, total ``load``; every reception timed.
    A high load makes the DAG wide enough that n_p and n_c vary within one run, and the
    wide topology (20 ms between LANs) widens it further."""
    rows = []
    for label, n in runs:
        links = wide_links() if label == "wide" else None
        gc.collect()
        gc.disable()  # a collection inside one timed reception would be charged to it
        try:
            m = run("toto", n, "poisson", load, messages, seed, delta=(n + 1) // 2,
                    timing=True, links=links, log=log)
        finally:
            gc.enable()
        recs = m.receptions
        rows.append({"label": label, "n": n, "receptions": len(recs),
                     "pending_mean": mean(x.pending for x in recs),
                     "cand_mean": mean(x.candidates for x in recs),
                     "by_pending": bin_receptions(recs, "pending", PENDING_EDGES),
                     "by_candidates": bin_receptions(recs, "candidates", CAND_EDGES),
                     "one_candidate_by_pending": bin_receptions(
                         [x for x in recs if x.candidates == 1], "pending", PENDING_EDGES)})
    return rows


# --------------------------------------------------------------------------------- output


def _f(x: float | None, fmt: str = ".2f") -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)


def plot_figures(rows: Sequence[dict], out: Path) -> list[Path]:
    """Figures 5 and 6 as PNG: one panel per load, ToTo's index of latency."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    for source, num in (("periodic", 5), ("poisson", 6)):
        sel = [r for r in rows if r["source"] == source and r["protocol"] == "toto"]
        if not sel:
            continue
        fig, axes = plt.subplots(1, len(sel), figsize=(3.2 * len(sel), 3.0), sharey=True,
                                 squeeze=False)
        for ax, r in zip(axes[0], sel):
            xs = list(range(4, 10))
            ax.bar(xs, [r["iol_dist"].get(x, 0.0) for x in xs], color="0.4", width=0.7)
            ax.set_xticks(xs)
            ax.set_ylim(0, 1)
            ax.set_xlabel("index of latency")
            paper = FIG_AVG.get((source, r["load"]))
            ax.set_title(f"load {r['load']} msgs/s\naverage {r['iol']:.2f} "
                         f"(000: {_f(paper)})", fontsize=9)
        axes[0][0].set_ylabel("probability")
        fig.suptitle(f"000 Figure {num}: ToTo's index of latency, {source} source "
                     "(n = 8, delta = 4, simulated)", fontsize=10)
        fig.tight_layout()
        p = out / f"figure{num}_{source}.png"
        fig.savefig(p, dpi=100)
        plt.close(fig)
        paths.append(p)
    return paths


def plot_speedup(rows: Sequence[dict], out: Path) -> Path | None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    for source, color in (("poisson", "C0"), ("periodic", "C1")):
        sel = [r for r in rows if r["source"] == source]
        if not sel:
            continue
        ns = [r["n"] for r in sel]
        ax.plot(ns, [r["speedup"] for r in sel], "o-", color=color,
                label=f"{source}: simulated")
        ax.plot(ns, [r["speedup_model"] for r in sel], "s--", color=color, alpha=0.7,
                label=f"{source}: eq. ({1 if source == 'poisson' else 2}) on the run")
        ax.plot(ns, [r["speedup_ideal"] for r in sel], ":", color=color,
                label=f"{source}: model, omega = 1, tau = n/2 + 1")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("n (delta = n/2)")
    ax.set_ylabel("all-ack latency / ToTo latency")
    ax.set_title("ToTo's speedup against n (total load 100 msgs/s)", fontsize=10)
    ax.legend(fontsize=7)
    fig.tight_layout()
    p = out / "speedup_vs_n.png"
    fig.savefig(p, dpi=100)
    plt.close(fig)
    return p


def print_figures(rows: Sequence[dict]) -> None:
    print("\n1. 000 Figures 5-6: ToTo's index of latency (n 8, delta 4), distribution and "
          "average")
    hdr = (f"{'source':8s} {'load':>4s} | " + " ".join(f"{'P(' + str(i) + ')':>6s}"
                                                       for i in range(5, 9))
           + f" | {'avg':>5s} {'000':>5s}")
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        if r["protocol"] != "toto":
            continue
        d = r["iol_dist"]
        print(f"{r['source']:8s} {r['load']:>4d} | "
              + " ".join(f"{d.get(i, 0.0):6.3f}" for i in range(5, 9))
              + f" | {r['iol']:5.2f} {_f(FIG_AVG.get((r['source'], r['load']))):>5s}")
    print("(000: Figure 5's panels for periodic; Table 3 for Poisson, Figure 6's panels "
          "are lost in the OCR)")


def print_model(rows: Sequence[dict]) -> None:
    print("\n2. Model and reality, 000 Tables 2-5: omega, equations (1)-(2) on the "
          "simulated joint (tau, omega), latency")
    hdr = (f"{'source':8s} {'load':>4s} {'proto':7s} | {'omega':>5s} {'000':>5s} "
           f"{'w@fire':>6s} | {'l_model':>7s} {'000':>6s} | {'l_obs':>7s} {'000':>6s} | "
           f"{'eps':>5s} {'000':>5s}")
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        key = (r["source"], r["load"], r["protocol"])
        pm = PAPER_MODEL.get(key, (math.nan,) * 3)
        print(f"{r['source']:8s} {r['load']:>4d} {r['protocol']:7s} | {r['omega']:5.2f} "
              f"{_f(PAPER_OMEGA.get(key)):>5s} {r['width_at_firing']:6.2f} | "
              f"{r['model_ms']:7.1f} {_f(pm[0], '.1f'):>6s} | {r['lat_ms']:7.1f} "
              f"{_f(pm[1], '.1f'):>6s} | {r['eps']:5.3f} {_f(pm[2], '.3f'):>5s}")
    print("(ms; omega: machines with a message concurrent to a newly received one, its own "
          "included; w@fire: candidates when the rule fired)")
    worst = max((r["dropped"] for r in rows), default=0.0)
    print(f"(probability mass outside the equations' sums, at most: {worst:.4f})")


def print_speedup(rows: Sequence[dict]) -> None:
    print("\n3. Speedup against n: ToTo (delta = n/2) vs all-ack, total load 100 msgs/s")
    hdr = (f"{'source':8s} {'n':>3s} | {'latToTo':>8s} {'latAck':>8s} | {'speedup':>7s} "
           f"{'eq.':>5s} {'ideal':>5s} | {'iol':>5s} {'omega':>5s} | {'mToTo':>7s} "
           f"{'mAck':>7s}")
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        print(f"{r['source']:8s} {r['n']:>3d} | {r['lat_toto_ms']:8.1f} {r['lat_ack_ms']:8.1f} "
              f"| {r['speedup']:7.2f} {r['speedup_model']:5.2f} {r['speedup_ideal']:5.2f} | "
              f"{r['iol_toto']:5.2f} {r['omega_toto']:5.2f} | {r['model_toto_ms']:7.1f} "
              f"{r['model_ack_ms']:7.1f}")
    print("(eq.: the model on each run's joint distribution; ideal: omega = 1, tau = n/2 + 1; "
          "mToTo, mAck: the model's latencies, ms; 000: 'up to O(log(n)) speedup', 1.56-1.84 "
          "periodic and 2.60-3.38 Poisson at n = 8)")


def print_complexity(rows: Sequence[dict]) -> None:
    print("\n4. Cost of a reception (ToTo, Poisson, load 400 msgs/s): median us per "
          "reception, binned by n_p and by n_c; ratio to the first bin of the same run that "
          "holds 2 % of its receptions")
    for r in rows:
        where = ("3 LANs x 3, 20 ms between" if r["label"] == "wide" else "one LAN")
        print(f"\n n {r['n']} ({where}): {r['receptions']} receptions, mean n_p "
              f"{r['pending_mean']:.2f}, mean n_c {r['cand_mean']:.2f}")
        for key, title in (("by_pending", "n_p"), ("by_candidates", "n_c")):
            bins = r[key]
            # the base: the first bin holding 2 % of the receptions (the first receptions
            # of a run, n_p 0-3, also compile the rule for each number of candidates)
            least = max(MIN_BIN, 0.02 * r["receptions"])
            full = [b for b in bins if b["quiet_n"] >= least]
            base = full[0]["quiet_median"] if full else math.nan
            fulld = [b for b in bins if b["deliv_n"] >= least]
            based = fulld[0]["per_delivered_median"] if fulld else math.nan
            print(f"  {title:4s} bin  | {'count':>6s} | {'quiet':>6s} {'ratio':>5s} | "
                  f"{'deliv':>6s} {'msgs':>4s} {'/msg':>6s} {'ratio':>5s}")
            for b in bins:
                if not b["count"]:
                    continue
                hi = "" if math.isinf(b["hi"]) else str(b["hi"] - 1)
                rng = f"{b['lo']}-{hi}" if hi != str(b["lo"]) else str(b["lo"])
                q = b["quiet_median"] if b["quiet_n"] >= MIN_BIN else math.nan
                ok = b["deliv_n"] >= MIN_BIN
                d = b["deliv_median"] if ok else math.nan
                pm = b["per_delivered_median"] if ok else math.nan
                print(f"  {rng:>9s} | {b['count']:6d} | {_f(q, '.1f'):>6s} "
                      f"{_f(q / base):>5s} | {_f(d, '.1f'):>6s} "
                      f"{_f(b['delivered_mean'] if ok else math.nan, '.1f'):>4s} "
                      f"{_f(pm, '.1f'):>6s} {_f(pm / based):>5s}")
    print("\n Across n at the same n_p and n_c: receptions meeting one candidate, not "
          "delivering, median us by n_p")
    edges = PENDING_EDGES
    print("  n (run)    | " + " ".join(f"{str(a) + '-' + (str(b - 1) if b else ''):>6s}"
                                        for a, b in zip(edges, [*edges[1:], 0])))
    for r in rows:
        cells = [b["quiet_median"] if b["quiet_n"] >= MIN_BIN else math.nan
                 for b in r["one_candidate_by_pending"]]
        print(f"  {r['n']:3d} ({r['label']:4s}) | " + " ".join(f"{_f(c, '.1f'):>6s}"
                                                             for c in cells))
    print(f" (quiet: receptions that delivered nothing; deliv: those that delivered, with "
          f"the DAG messages they delivered and the cost per message; bins with fewer than "
          f"{MIN_BIN} receptions are '-'; 000 section 4.3: O(n_p + n_c^2) per reception, "
          "O(n n_c^2) per delivery)")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=None,
                    help="application messages per run (default 4000; 400 with --quick)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, default=Path("out/toto-section6"),
                    help="folder for the PNG files")
    ap.add_argument("--quick", action="store_true",
                    help="400 messages, loads 50 and 200, n up to 16, complexity at n 8")
    ap.add_argument("--sections", default="figures,speedup,complexity",
                    help="comma-separated subset of figures (1-2), speedup (3), complexity (4)")
    args = ap.parse_args(argv)
    which = set(args.sections.split(","))
    if not which <= {"figures", "speedup", "complexity"}:
        ap.error(f"--sections: unknown {sorted(which - {'figures', 'speedup', 'complexity'})}")
    messages = args.messages if args.messages is not None else (400 if args.quick else 4000)
    loads = (50, 200) if args.quick else LOADS
    t0 = time.perf_counter()
    print(f"toto_section6: seed {args.seed}, {messages} messages per run, quick={args.quick}",
          flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    fig = figure_rows(messages, args.seed, loads) if "figures" in which else []
    sp = (speedup_rows(messages, args.seed, (4, 8, 16) if args.quick else NS)
          if "speedup" in which else [])
    cx = (complexity_rows(messages, args.seed,
                          (("lan", 8), ("wide", 9)) if args.quick else COMPLEXITY_RUNS)
          if "complexity" in which else [])
    if fig:
        print_figures(fig)
        print_model(fig)
    if sp:
        print_speedup(sp)
    if cx:
        print_complexity(cx)
    pngs = [*plot_figures(fig, args.out), plot_speedup(sp, args.out)]
    if any(pngs):
        print("\nwrote " + ", ".join(str(p) for p in pngs if p is not None))
    print(f"total wall time {time.perf_counter() - t0:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
