"""Time to prove each rule per n (``tomkit prove``'s Z3 path, all four properties, every
allowed delta, K = 3): issue 4's benchmark. Target: ToTo and S-ToTo at n = 7 in under
60 s each. The baseline, measured in the same run, is the time to prove all-ack at the
same n (the simplest rule, the same DAG encoding), so the ratios say what a rule's own
formulas cost over the encoding itself.

    .venv/bin/python bench/prove_bench.py --rules toto,s-toto --max-n 7
    .venv/bin/python bench/prove_bench.py --rules toto --max-n 12 --budget 600

``--budget``: per rule, stop at the first n whose proof takes longer than this many
seconds (the n is then reported as not proved within the budget); each query gets the
budget as its Z3 timeout. Prints one line per (rule, n) and, per rule, the largest n
proved within the budget.
"""

from __future__ import annotations

import argparse
import sys
import time

from tqdm import tqdm

from tomkit.fuzz.prove.rules import allowed_deltas, prove_rule
from tomkit.model.mutants import resolve_rule


def prove_all(name: str, n: int, k: int, budget: float | None) -> tuple[str, float]:
    rule = resolve_rule(name)
    t0 = time.perf_counter()
    status = "proved"
    for d in allowed_deltas(rule, n):
        left = None if budget is None else max(1.0, budget - (time.perf_counter() - t0))
        o = prove_rule(name, rule, n, d, k, timeout=left)
        if o.status != "proved":
            status = o.status
            break
        if budget is not None and time.perf_counter() - t0 > budget:
            status = "unknown"
            break
    return status, time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", default="toto,s-toto,g-toto,gl-toto")
    ap.add_argument("--min-n", type=int, default=3)
    ap.add_argument("--max-n", type=int, default=7)
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--budget", type=float, default=None, metavar="SECONDS")
    args = ap.parse_args(argv)
    rules = args.rules.split(",")
    largest: dict[str, int] = {}
    done: set[str] = set()
    print(f"# K = {args.k}; budget = {args.budget}; all four properties, every delta")
    print(f"{'rule':10} {'n':>3} {'status':>14} {'seconds':>9} {'all-ack s':>9} {'ratio':>7}")
    for n in tqdm(range(args.min_n, args.max_n + 1), desc="n", file=sys.stderr):
        _, base = prove_all("all-ack", n, args.k, None)
        for name in rules:
            if name in done:
                continue
            status, secs = prove_all(name, n, args.k, args.budget)
            print(f"{name:10} {n:>3} {status:>14} {secs:>9.1f} {base:>9.1f} "
                  f"{secs / base:>7.1f}", flush=True)
            if status == "proved" and (args.budget is None or secs <= args.budget):
                largest[name] = n
            else:
                done.add(name)
    for name in rules:
        print(f"# {name}: largest n proved"
              + (f" within {args.budget:.0f} s" if args.budget else "")
              + f": {largest.get(name, 'none')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
