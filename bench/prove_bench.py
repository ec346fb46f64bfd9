"""Time to prove each rule per n (``tomkit prove``'s Z3 path, all four properties, every
allowed delta, K = 3): issues 4 and 19's benchmark. Issue 19's target: every built-in
rule, every delta, at n = 8 within 10 minutes (stretch: n = 10).

Baselines, measured in the same run: the classic encoding (issue 4's, ``--encoding
classic``) of the same rule at the same n, up to ``--classic-max-n`` (it takes about 12
minutes per delta of ToTo at n = 8); for the rules that read the rank (GL-ToTo), the
facts encoding with only the split by slot (``rank_symmetry=False``, issue 19's first
version), up to ``--split-max-n``; and all-ack with the facts encoding at the same n
(the simplest rule), so the ratios say what the new encoding and reductions gain and
what a rule's own formulas cost. The last column is the figure docs/prove.md recorded
for issue 19's first version on this machine (not a same-run baseline: the cores are
shared, so compare it with care).

    .venv/bin/python bench/prove_bench.py --rules toto,s-toto,g-toto,gl-toto --max-n 8
    .venv/bin/python bench/prove_bench.py --rules toto --min-n 8 --max-n 12 --budget 600
    .venv/bin/python bench/prove_bench.py --rules gl-toto --min-n 8 --max-n 8 --classic-max-n 0

``--budget``: per rule, stop at the first n whose proof takes longer than this many
seconds (the n is then reported as not proved within the budget); each query gets the
budget as its Z3 timeout. Prints one line per (rule, n) and, per rule, the largest n
proved within the budget.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from tqdm import tqdm

from tomkit.fuzz.prove.delivery.prove import allowed_deltas, prove_rule
from tomkit.model.toto.mutants import resolve_rule

#: seconds for every delta, as docs/prove.md recorded them for issue 19's first version
#: (facts encoding; symmetry for the rank-free rules, the split alone for GL-ToTo)
RECORDED = {
    "toto": {6: 12.6, 7: 7.9, 8: 57.1, 10: 428.7},
    "s-toto": {6: 4.9, 7: 2.4, 8: 53.9},
    "g-toto": {6: 12.6, 7: 12.1, 8: 233.3},
    "gl-toto": {6: 43.1, 7: 308.0},
}

#: the rules whose own baseline is the split alone
RANKED = ("gl-toto",)


def prove_all(name: str, n: int, k: int, budget: float | None,
              encoding: str = "facts", rank_symmetry: bool = True) -> tuple[str, float, float]:
    """Status, wall seconds and CPU seconds (Z3 solves in this process; on shared cores
    the wall time mostly measures the load: at load 18, 600 s of wall were 56 s of CPU)."""
    rule = resolve_rule(name)
    t0, c0 = time.perf_counter(), time.process_time()
    status = "proved"
    for d in allowed_deltas(rule, n):
        left = None if budget is None else max(1.0, budget - (time.perf_counter() - t0))
        o = prove_rule(name, rule, n, d, k, timeout=left, encoding=encoding,
                       rank_symmetry=rank_symmetry)
        if o.status != "proved":
            status = o.status
            break
        if budget is not None and time.perf_counter() - t0 > budget:
            status = "unknown"
            break
    return status, time.perf_counter() - t0, time.process_time() - c0


def _load() -> str:
    """The machine's load average (the cores are shared: say how busy they were)."""
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:
        return "load average unknown"
    return f"load average {one:.1f} {five:.1f} {fifteen:.1f} on {os.cpu_count()} cores"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", default="toto,s-toto,g-toto,gl-toto")
    ap.add_argument("--min-n", type=int, default=3)
    ap.add_argument("--max-n", type=int, default=7)
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--budget", type=float, default=None, metavar="SECONDS")
    ap.add_argument("--classic-max-n", type=int, default=7, metavar="N",
                    help="measure the classic encoding up to this n (0: never)")
    ap.add_argument("--split-max-n", type=int, default=7, metavar="N",
                    help="measure GL-ToTo's split-only baseline up to this n (0: never)")
    args = ap.parse_args(argv)
    rules = args.rules.split(",")
    largest: dict[str, int] = {}
    done: set[str] = set()
    print(f"# K = {args.k}; budget = {args.budget}; all four properties, every delta; "
          f"classic encoding up to n = {args.classic_max_n}, split alone up to n = "
          f"{args.split_max_n}; {_load()}")
    print(f"{'rule':10} {'n':>3} {'status':>14} {'facts s':>9} {'classic s':>9} "
          f"{'speedup':>7} {'split s':>9} {'gain':>7} {'all-ack s':>9} {'ratio':>7} "
          f"{'recorded':>9} {'facts cpu':>9}")
    for n in tqdm(range(args.min_n, args.max_n + 1), desc="n", file=sys.stderr):
        _, base, _ = prove_all("all-ack", n, args.k, None)
        for name in rules:
            if name in done:
                continue
            status, secs, cpu = prove_all(name, n, args.k, args.budget)
            old = "-"
            speed = "-"
            if n <= args.classic_max_n:
                cstatus, csecs, _ = prove_all(name, n, args.k, args.budget, "classic")
                if cstatus != status and cstatus != "unknown":
                    print(f"# DISAGREE {name} n={n}: facts {status}, classic {cstatus}")
                    return 1
                old, speed = f"{csecs:.1f}", f"{csecs / secs:.1f}"
            split, gain = "-", "-"
            if name in RANKED and n <= args.split_max_n:
                sstatus, ssecs, _ = prove_all(name, n, args.k, args.budget, rank_symmetry=False)
                if sstatus != status and sstatus != "unknown":
                    print(f"# DISAGREE {name} n={n}: reduced {status}, split {sstatus}")
                    return 1
                split, gain = f"{ssecs:.1f}", f"{ssecs / secs:.1f}"
            rec = RECORDED.get(name, {}).get(n)
            print(f"{name:10} {n:>3} {status:>14} {secs:>9.1f} {old:>9} {speed:>7} "
                  f"{split:>9} {gain:>7} {base:>9.1f} {secs / base:>7.1f} "
                  f"{'-' if rec is None else f'{rec:.1f}':>9} {cpu:>9.1f}", flush=True)
            if status == "proved" and (args.budget is None or secs <= args.budget):
                largest[name] = n
            else:
                done.add(name)
    print(f"# {_load()}")
    for name in rules:
        print(f"# {name}: largest n proved"
              + (f" within {args.budget:.0f} s" if args.budget else "")
              + f": {largest.get(name, 'none')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
