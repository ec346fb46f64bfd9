"""Issue 4, point 5, at n = 5: Z3 against exhaustive enumeration on *every* DAG shape.

The test suite (tests/fuzz/prove/test_prove_crosscheck.py) is exhaustive for n <= 4 and samples
n = 5, since every shape at n = 5 (5,552 shapes with K = 1, every pair of views, every
allowed delta, all four properties) takes minutes per rule. This script runs the full
n = 5 comparison for every built-in rule and mutant, with the test's own ``compare``,
prints the time per rule, and exits 1 on any disagreement.

    python bench/prove_crosscheck.py [--n 5] [--rules toto,s-toto]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import test_prove_crosscheck as xc  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=5)
    ap.add_argument("--rules", default=",".join(sorted(xc.ALL)))
    args = ap.parse_args(argv)
    bad = 0
    for name in args.rules.split(","):
        t0 = time.perf_counter()
        try:
            checks = xc.compare(name, args.n, 1)
            print(f"{name:20s} n={args.n}: Z3 and enumeration agree on {checks} "
                  f"(delta, property) pairs, {time.perf_counter() - t0:.0f} s", flush=True)
        except AssertionError as e:
            bad += 1
            print(f"{name:20s} n={args.n}: DISAGREE {e}", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
