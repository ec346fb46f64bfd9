"""Counterexample sizes before and after minimisation, for every refuted mutant.

Issue 19 part 6: a counterexample DAG should be the smallest one. For each mutant of
``model/toto/mutants.py`` (the built-in rules are proved safe, so they have none), each n in
``--n`` and each delta the mutant accepts, ``tomkit prove``'s pipeline runs twice in the
same process: with Z3's first model, shrunk greedily (what ``tomkit prove`` did before,
``--first-model``), and with the minimal one (``fuzz/prove/delivery/minimal.py``: fewest messages,
then fewest causal edges between processors). It prints both sizes as
messages/edges, and both times.

    python bench/prove_minimal.py [--n 4-6]
"""

from __future__ import annotations

import argparse
import sys

from tomkit.fuzz.prove.delivery.prove import allowed_deltas, prove_rule
from tomkit.model.toto.mutants import MUTANTS


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", default="4-6", help="A-B (default 4-6)")
    ap.add_argument("--mutants", default=",".join(MUTANTS))
    args = ap.parse_args(argv)
    lo, _, hi = args.n.partition("-")
    ns = range(int(lo), int(hi or lo) + 1)
    print(f"{'mutant':<20} {'n':>2} {'delta':>5} {'property':<19} {'first model':>12} "
          f"{'minimal':>8} {'proved':>6} {'s first':>8} {'s minimal':>9}")
    for name in args.mutants.split(","):
        rule = MUTANTS[name]
        for n in ns:
            for d in allowed_deltas(rule, n):
                first = prove_rule(name, rule, n, d, minimal=False)
                if first.counterexample is None:
                    print(f"{name:<20} {n:>2} {d!s:>5} {first.status}", flush=True)
                    continue
                best = prove_rule(name, rule, n, d, minimal=True)
                a, b = first.counterexample.size(), best.counterexample.size()  # type: ignore[union-attr]
                proved = "yes" if best.sizes is not None and best.sizes.proved else "no"
                print(f"{name:<20} {n:>2} {d!s:>5} {first.counterexample.property:<19} "
                      f"{a[0]:>6}/{a[1]:<5} {b[0]:>4}/{b[1]:<3} {proved:>6} "
                      f"{first.seconds:>8.1f} {best.seconds:>9.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
