"""003's latency bounds in simulation: the QoS-preserving totally ordered multicast
against a protocol whose latency grows with n.

    python bench/qos_bounds.py [--seed 1] [--out out/qos] [--quick] [--baseline abcast]
                               [--reserve AVG/MAX [--window K]]

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
* ``--reserve AVG/MAX`` (003 section 2.1's contract, model/qos/reserve.py): every
  process asks for r = AVG/MAX over ``--window`` K slots at join(r) (``negotiate``
  records), its shaper holds a message over r for a later slot, and each run is also
  checked against the declared reservations (the rate property, on ``packet``
  records). Held messages count their latency from their multicast, so the bound may
  not hold for them (003's proviso: "as long as the application sends at the reserved
  rate"): pick an r above the sources' load to keep the bound.
* Baseline: ABCAST (004 section 2; default) or ToTo (000) on the same sources and the
  same delay distribution, crash-free (neither tolerates 003's failures).

Output
------
A table per run: n, f, messages, max and mean real-time latency, the bound that
applies, max / bound, timeouts, the busiest slot's network messages against the
inflated reservation max', packets lost by the adversary, and the deliveries missing
for messages of crashed senders (the loss past the bound a crash may cause). With
``--reserve``: the busiest slot of a sender against the max' it declared, its busiest
K-slot window against the declared avg', and the messages the shaper held. Then the
baseline's max and mean latency per n, and a PNG of latency against n for both.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from tomkit.model.qos.reserve import net_reserve, parse_reservation
from tomkit.runs.qos import (
    NET,
    OPTIONS,
    RATE,
    baseline_row,
    plot_latency_vs_n,
    qos_row,
)

SIZES = (2, 4, 8, 16, 32, 64)
QUICK_SIZES = (2, 4, 8)


def crash_counts(n: int) -> list[int]:
    return sorted({0, 1, min(n // 2, n - 1)})


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
    ap.add_argument("--reserve", default=None, metavar="AVG/MAX",
                    help="the reservation every process asks for at join(r): at most MAX "
                    "messages a slot, AVG in any --window slots (003 section 2.1)")
    ap.add_argument("--window", type=int, default=10, metavar="K",
                    help="K, the slots of the reservation's AVG (default 10)")
    args = ap.parse_args(argv)
    if args.reserve is not None:
        try:
            r = parse_reservation(args.reserve, "--reserve")
        except ValueError as e:
            ap.error(str(e))
        if args.window < 1:
            ap.error(f"--window: K must be >= 1 slot, got {args.window}")
        avg_n, max_n = net_reserve(r, args.window, OPTIONS["fec_i"], OPTIONS["fec_l"])
    sizes = QUICK_SIZES if args.quick else SIZES
    if args.sizes:
        sizes = tuple(int(x) for x in args.sizes.split(","))
    per_process = 6 if args.quick else 12
    print(f"seed {args.seed}")
    print(f"Delta={OPTIONS['slot'] * 1000:g} ms delta={OPTIONS['max_delay'] * 1000:g} ms "
          f"eps={OPTIONS['epsilon'] * 1000:g} ms, "
          f"I=5 L=2, adversary p=0.3, exponential delays mean {NET.mean * 1000:g} ms, "
          f"{RATE:g} msg/s per process")
    if args.reserve is not None:
        print(f"reservation r = {r.avg}/{r.max} over K = {args.window} slots: max' = "
              f"{float(max_n):.2f}, avg' = {float(avg_n):.2f} network messages "
              "(003 section 2.2)")
    print(f"{'n':>3} {'f':>3} {'msgs':>5} {'max ms':>8} {'mean ms':>8} {'bound':>6} "
          f"{'max/bound':>9} {'timeouts':>8} {'pkts/slot':>9} {'max_':>6} {'lost':>6} "
          f"{'missing':>7}" + ("" if args.reserve is None else
                               f" {'slot/max_':>12} {'window/avg_':>13} {'held':>5}"))
    rows, bad = [], 0
    t0 = time.perf_counter()
    for n in sizes:
        for f in crash_counts(n):
            row = qos_row(n, f, args.seed, per_process, args.reserve, args.window)
            rows.append(row)
            over = row["max"] > row["bound"] + 1e-12
            bad += over or bool(row["problems"])
            print(f"{n:>3} {f:>3} {row['messages']:>5} {row['max'] * 1000:>8.3f} "
                  f"{row['mean'] * 1000:>8.3f} {row['bound'] * 1000:>6.0f} "
                  f"{row['max'] / row['bound']:>9.3f} {row['timeouts']:>8} "
                  f"{row['packets']:>9} {row['reserved']:>6.2f} {row['lost']:>6} "
                  f"{row['missing']:>7}" + ("" if args.reserve is None else
                  f" {row['slot_peak']:>5} <= {row['slot_max']:<5.2f}"
                  f" {row['window_peak']:>5} <= {row['window_avg']:<6.2f}"
                  f" {row['held']:>5}")
                  + ("  OVER THE BOUND" if over else "")
                  + "".join(f"  {p}" for p in row["problems"]), flush=True)
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
    plot_latency_vs_n(rows, base, args.baseline, png)
    worst = max(r["max"] / r["bound"] for r in rows)
    print(f"\nhighest max/bound {worst:.3f} over {len(rows)} runs; {bad} runs over the "
          f"bound or failing a check; baseline max grows "
          f"{base[-1]['max'] / base[0]['max']:.2f}x from n={sizes[0]} to n={sizes[-1]}")
    print(f"wrote {png} ({time.perf_counter() - t0:.1f} s)")
    return 1 if (args.strict and bad) else 0


if __name__ == "__main__":
    sys.exit(main())
