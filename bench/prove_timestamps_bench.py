"""Time to prove ABCAST and TOMP (``tomkit prove --protocol``) and to refute their broken
variants, per n: issue 12's figures (README, docs/prove.md).

    .venv/bin/python bench/prove_timestamps_bench.py                  # n = 2..8, all
    .venv/bin/python bench/prove_timestamps_bench.py --max-n 4 --variants none

Per (protocol, n): the time of each query (base, the step of each transition, safety,
order) and the total. Per (protocol, variant, n): the time of the queries (the step that
fails, and which conjunct), and of the bounded model checking that finds the shortest
violating run (its length in steps), replay on the model included. The baseline, measured in the
same run, is ABCAST's proof at the same n (the smallest encoding): the ratio column is a
row's total over it, so it says what TOMP's vectors, or a refutation, cost over ABCAST.
``--timeout`` bounds each query and each search; a row that hits it says unknown.
"""

from __future__ import annotations

import argparse
import sys

from tqdm import tqdm

from tomkit.fuzz.prove.timestamps.solve import TsOutcome, prove_protocol
from tomkit.fuzz.prove.timestamps.state import KINDS, PROTOCOLS, VARIANTS


def row(o: TsOutcome, base: float) -> str:
    q = {x.name: x for x in o.queries}
    cells = " ".join(f"{q[k].seconds:>9.1f}" for k in ("base", *KINDS, "safety", "order"))
    if o.search is not None:
        b = o.search
        found = f"{b.depth} steps" if b.run is not None else f"{b.status} <= {b.depth}"
        failed = ",".join(f"{x.name}:{'+'.join(x.broken)}" for x in o.queries
                          if x.status == "failed")
        extra = f"  bmc {b.seconds:>6.1f}s  {found}  [{failed}]"
    else:
        extra = ""
    return (f"{o.name:23} {o.n:>2} {o.status:>14} {cells} {o.seconds:>7.1f} "
            f"{o.seconds / base:>6.2f}{extra}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--protocols", default=",".join(PROTOCOLS))
    ap.add_argument("--variants", default="all",
                    help="all, none, or a comma-separated list (e.g. raise-all)")
    ap.add_argument("--min-n", type=int, default=2)
    ap.add_argument("--max-n", type=int, default=8)
    ap.add_argument("--timeout", type=float, default=None, metavar="SECONDS")
    args = ap.parse_args(argv)
    protocols = args.protocols.split(",")
    print(f"# timeout = {args.timeout}; baseline: abcast proved at the same n")
    heads = " ".join(f"{k:>9}" for k in ("base", *KINDS, "safety", "order"))
    print(f"{'protocol':23} {'n':>2} {'status':>14} {heads} {'total':>7} {'ratio':>6}")
    for n in tqdm(range(args.min_n, args.max_n + 1), desc="n", file=sys.stderr):
        base = prove_protocol("abcast", n, timeout=args.timeout)
        print(row(base, base.seconds), flush=True)
        for p in protocols:
            if p != "abcast":
                print(row(prove_protocol(p, n, timeout=args.timeout), base.seconds),
                      flush=True)
            variants = (VARIANTS[p] if args.variants == "all" else () if
                        args.variants == "none" else
                        [v for v in args.variants.split(",") if v in VARIANTS[p]])
            for v in variants:
                o = prove_protocol(p, n, v, timeout=args.timeout)
                print(row(o, base.seconds), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
