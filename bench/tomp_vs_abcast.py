"""TOMP against ABCAST on the same simulated inputs (004's latency claim).

    python bench/tomp_vs_abcast.py [--messages 2000] [--seed 1] [--source poisson] [--quick]

Source: 004 (Dasser) sections 1 and 4: "The simulation shows approximately 30-40%
reduction of the latency time by the new solution in relation to the ABCAST protocol",
with the latency time of section 2.3 / Figure 2: from the moment a host receives a
message to the moment it delivers it, split into t1 (until the final timestamp arrives)
and t2 (from there to the delivery). 004 gives no parameters of its simulation (group
size, load, delays), so this bench sweeps them.

Setup
-----
* Simulator: model/sim.py, both protocols on one seed per row: the same send times,
  the same delay for every data message, acknowledgement and validation message. t1 is
  therefore the same for both (TOMP changes what messages carry, not when they travel)
  and every difference is in t2. The bench checks, per row, that both deliver the same
  sequence at every process, that t1 is equal and that TOMP never delivers later; it
  fails otherwise.
* Group sizes 3, 5, 8 (004's example has 3 hosts).
* Delay models (001 section 3's shifted gamma, model/sim.py's :class:`Delay`): LAN
  (mean 20 ms, variance 0.05 mean^2), WAN (mean 500 ms, variance 0.4 mean^2, within
  001's 0.3-0.5), and 2-LAN (001's topology: the first ceil(n/2) processes on one LAN,
  the others on another, LAN links inside, WAN links between).
* Load: kappa, the messages the whole group multicasts per mean one-way delay (the WAN
  mean for 2-LAN), 0.5, 2 and 8; each process sends at kappa / (mean delay * n) per
  second, from a Poisson source by default. t2 exists because other messages are
  pending when a message is decided, so kappa is what matters, not the time scale.

Output
------
One row per (delay model, n, kappa): the per-process rate, ABCAST's mean t1, t2 and
latency (t1 + t2), TOMP's t2 and latency, in ms, and the ratios TOMP/ABCAST of the
latency time, of t2, and of the send-to-delivery time; "earlier" is the share of
(process, message) deliveries TOMP makes strictly earlier, "raised" the pending
timestamps TOMP raised per message. A summary compares the ranges with 004's claim.

``--quick`` runs LAN and WAN, n = 3 and 5, kappa = 2, 300 messages.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

from tomkit.model.net.links import SOURCES, Delay
from tomkit.model.sim import SimConfig, simulate

LAN = Delay("gamma", 0.020, cv2=0.05)
WAN = Delay("gamma", 0.500, cv2=0.4)
MODELS = ("LAN", "WAN", "2-LAN")
SIZES = (3, 5, 8)
LOADS = (0.5, 2.0, 8.0)
#: 004's claim: 30-40 % lower latency, i.e. a TOMP/ABCAST ratio of 0.60-0.70
PAPER = (0.60, 0.70)


def network(model: str, n: int) -> tuple[Delay, dict, float]:
    """(default delay, per-link overrides, reference mean delay) of a delay model."""
    if model == "LAN":
        return LAN, {}, LAN.mean
    if model == "WAN":
        return WAN, {}, WAN.mean
    if model == "2-LAN":
        half = (n + 1) // 2
        links = {(i, j): WAN for i in range(n) for j in range(n)
                 if i != j and (i < half) != (j < half)}
        return LAN, links, WAN.mean
    raise ValueError(f"delay model must be one of {MODELS}, not {model!r}")


def compare(model: str, n: int, kappa: float, messages: int, seed: int,
            source: str = "poisson") -> dict:
    """One row: ABCAST and TOMP on the same inputs, with the paired checks."""
    delay, links, mean = network(model, n)
    rate = kappa / (mean * n)
    base = SimConfig(protocol="abcast", n=n, source=source, rate=rate,
                        messages=messages, delay=delay, link_delays=links, seed=seed)
    ab = simulate(base)
    tp = simulate(replace(base, protocol="tomp"))
    da = {(r["process"], r["msg"]): r for r in ab.records if r["kind"] == "deliver"}
    dt = {(r["process"], r["msg"]): r for r in tp.records if r["kind"] == "deliver"}
    seq_a = [(r["process"], r["msg"]) for r in ab.records if r["kind"] == "deliver"]
    if da.keys() != dt.keys() or len(da) != n * messages:
        raise AssertionError(f"{model} n={n} kappa={kappa}: deliveries differ")
    order_a = {p: [m for q, m in seq_a if q == p] for p in base.names()}
    order_t = {p: [r["msg"] for r in tp.records if r["kind"] == "deliver"
                   and r["process"] == p] for p in base.names()}
    if order_a != order_t:
        raise AssertionError(f"{model} n={n} kappa={kappa}: delivery orders differ")
    earlier = 0
    for k, a in da.items():
        t = dt[k]
        if t["x_t1"] != a["x_t1"] or t["time"] > a["time"]:
            raise AssertionError(f"{model} n={n} kappa={kappa}: {k} t1 differs or TOMP "
                                 "delivers later")
        earlier += t["time"] < a["time"]
    sa, st = ab.stats, tp.stats
    return {
        "model": model, "n": n, "kappa": kappa, "rate": rate,
        "t1": sa["mean_t1"], "t2_abcast": sa["mean_t2"], "lat_abcast": sa["mean_latency"],
        "t2_tomp": st["mean_t2"], "lat_tomp": st["mean_latency"],
        "ratio": st["mean_latency"] / sa["mean_latency"],
        "t2_ratio": st["mean_t2"] / sa["mean_t2"] if sa["mean_t2"] > 0 else math.nan,
        "e2e_ratio": st["mean_end_to_end"] / sa["mean_end_to_end"],
        "earlier": earlier / len(da),
        "raised": st["raised"] / messages,
        "wall": sa["wall_time"] + st["wall_time"],
    }


def table_rows(models: Sequence[str] = MODELS, sizes: Sequence[int] = SIZES,
               loads: Sequence[float] = LOADS, messages: int = 2000, seed: int = 1,
               source: str = "poisson",
               log: Callable[[str], None] = lambda s: None) -> list[dict]:
    """Every row of the table, in order; ``log`` gets one line per row (progress)."""
    rows = []
    from tqdm import tqdm

    combos = [(m, n, k) for m in models for n in sizes for k in loads]
    for model, n, kappa in tqdm(combos, desc="rows", file=sys.stderr,
                                disable=not sys.stderr.isatty()):
        r = compare(model, n, kappa, messages, seed, source)
        log(f"{model} n={n} kappa={kappa:g}: ratio {r['ratio']:.3f}")
        rows.append(r)
    return rows


def format_table(rows: list[dict]) -> str:
    head = (f"{'delay':6} {'n':>2} {'kappa':>5} {'rate/s':>8} | {'t1':>8} {'t2':>8} "
            f"{'latency':>8} | {'t2':>8} {'latency':>8} | {'lat':>5} {'t2':>5} {'e2e':>5} "
            f"| {'earlier':>7} {'raised':>6}")
    top = (f"{'':25} | {'ABCAST (ms)':^26} | {'TOMP (ms)':^17} | {'TOMP/ABCAST':^17} |")
    lines = [top, head, "-" * len(head)]
    for r in rows:
        lines.append(
            f"{r['model']:6} {r['n']:>2} {r['kappa']:>5g} {r['rate']:>8.2f} | "
            f"{r['t1'] * 1e3:>8.2f} {r['t2_abcast'] * 1e3:>8.2f} {r['lat_abcast'] * 1e3:>8.2f}"
            f" | {r['t2_tomp'] * 1e3:>8.2f} {r['lat_tomp'] * 1e3:>8.2f} | "
            f"{r['ratio']:>5.3f} {r['t2_ratio']:>5.3f} {r['e2e_ratio']:>5.3f} | "
            f"{r['earlier']:>7.1%} {r['raised']:>6.2f}")
    return "\n".join(lines)


def summary(rows: list[dict]) -> str:
    lat = [r["ratio"] for r in rows]
    t2 = [r["t2_ratio"] for r in rows if not math.isnan(r["t2_ratio"])]
    best = min(rows, key=lambda r: r["ratio"])
    share = [r["t2_abcast"] / r["lat_abcast"] for r in rows]
    lo, hi = PAPER
    return "\n".join([
        f"latency time, TOMP/ABCAST: {min(lat):.3f} .. {max(lat):.3f} "
        f"(004 claims {lo:.2f} .. {hi:.2f}, i.e. 30-40 % lower); best row "
        f"{best['model']} n={best['n']} kappa={best['kappa']:g}",
        f"medians: latency time {statistics.median(lat):.3f}, t2 "
        f"{statistics.median(t2):.3f}",
        f"t2 alone, TOMP/ABCAST: {min(t2):.3f} .. {max(t2):.3f}",
        f"t2's share of ABCAST's latency time: {min(share):.1%} .. {max(share):.1%} "
        "(TOMP cannot shorten t1, so the gain on the whole latency is at most this share)",
        f"rows inside 004's range on the whole latency: "
        f"{sum(lo <= x <= hi for x in lat)}/{len(lat)}; on t2: "
        f"{sum(lo <= x <= hi for x in t2)}/{len(t2)}",
    ])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--messages", type=int, default=2000, help="per run (default 2000)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--source", choices=SOURCES, default="poisson")
    ap.add_argument("--quick", action="store_true", help="a smoke run (a few seconds)")
    args = ap.parse_args(argv)
    print(f"seed {args.seed}")
    if args.quick:
        models, sizes, loads = ("LAN", "WAN"), (3, 5), (2.0,)
        messages = min(args.messages, 300)
    else:
        models, sizes, loads, messages = MODELS, SIZES, LOADS, args.messages
    print(f"{messages} messages per run, {args.source} sources; kappa = messages "
          "multicast by the group per mean one-way delay")
    t0 = time.perf_counter()
    rows = table_rows(models, sizes, loads, messages, args.seed, args.source)
    print(format_table(rows))
    print(summary(rows))
    print(f"{len(rows) * 2} runs in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
