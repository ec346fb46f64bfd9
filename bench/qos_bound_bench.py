"""Time to prove the latency bound of Bar-Joseph, Keidar, Anker and Lynch's QoS-preserving
multicast (``tomkit prove --protocol qos``, fuzz/prove/qos_bound.py) per n, with and
without a crash. The baseline, measured in the same run, is the same query asked whole
(the disjunction of every receiver, sender and turn in one Z3 check); the split form asks
each disjunct on its own, incrementally. Both must give the same verdict.

    .venv/bin/python bench/qos_bound_bench.py               # n = 4, 8, 12
    .venv/bin/python bench/qos_bound_bench.py --n 16 --budget 600
"""

from __future__ import annotations

import argparse
import sys

from tomkit.fuzz.prove.qos_bound import prove_bound


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", default="4,8,12", help="comma-separated process counts")
    ap.add_argument("--budget", type=float, default=None,
                    help="Z3 timeout per query, seconds (the whole form may not finish)")
    args = ap.parse_args(argv)
    ok = True
    print(f"{'n':>3} {'crashes':>7} {'split':>9} {'whole':>9} {'whole/split':>11}  verdicts")
    for n in (int(x) for x in args.n.split(",")):
        for crashes in (0, 1):
            sv, st = prove_bound(n, crashes, args.budget, method="split")
            wv, wt = prove_bound(n, crashes, args.budget, method="whole")
            ok &= sv == "proved" and wv in ("proved", "unknown")
            print(f"{n:>3} {crashes:>7} {st:>8.2f}s {wt:>8.2f}s {wt / max(st, 1e-9):>10.1f}x"
                  f"  {sv}, {wv}", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
