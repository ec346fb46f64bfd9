"""001's protocols on real clocks (Rodrigues, Fonseca and Verissimo, sections 2 and 4.1;
the rate synchronisation of their reference [19]): what skew and drift do to the
symmetric baseline's D + t, to token-site and to the hybrid, and whether the model's
profile still holds.

    python bench/hybrid_clocks.py [--seed 1] [--quick] [--write-docs]

Two tables (tomkit/runs/clocks.py says what each run is and the theory they are read
against): the symmetric protocol alone on Figure 1's uniform network (the process whose
clock is ahead waits up to min(skew, D) longer, never past 2D + t), and the three
protocols on Figure 3's two LANs, scenarios 9 and 6, under skews 0, 2, 20 and 500 ms and
drifts 0 and 1e-4. ``--write-docs`` rewrites the generated sections ``clocks-alone`` and
``clocks-table`` of docs/hybrid.md with what this run printed (the full configuration
only); tests/bench/test_bench_hybrid_clocks_smoke.py reruns one line of each against the
committed page.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from tomkit.runs.clocks import (
    CLOCK_DRIFTS,
    CLOCK_SCENARIOS,
    CLOCK_SKEWS,
    alone_markdown,
    clock_table,
    markdown_table,
    symmetric_alone,
)
from tomkit.runs.markdown import write_section

DOC = Path(__file__).resolve().parent.parent / "docs" / "hybrid.md"
#: the configuration the page quotes (tests rerun parts of it)
ALONE = {"n": 5, "d": 0.1, "rate": 100.0, "duration": 6.0}
TABLE = {"duration": 8.0}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quick", action="store_true",
                    help="scenario 9 only, skews 0 and 20 ms, drift 0, 4 s runs")
    ap.add_argument("--write-docs", action="store_true",
                    help="rewrite docs/hybrid.md's generated sections (not with --quick)")
    a = ap.parse_args(argv)
    if a.quick and a.write_docs:
        ap.error("--write-docs writes the full configuration only")
    print(f"seed {a.seed}")
    cpu = time.process_time()
    alone = symmetric_alone(seed=a.seed, **ALONE)
    alone_md = alone_markdown(alone, ALONE["n"], ALONE["d"], ALONE["rate"], a.seed,
                              ALONE["duration"])
    print("\nThe symmetric protocol alone (Figure 1's network)\n")
    print(alone_md)
    if a.quick:
        rows = clock_table((9,), (0.0, 0.020), (0.0,), duration=4.0, seed=a.seed,
                           log=print)
        table_md = markdown_table(rows, a.seed, 4.0)
    else:
        rows = clock_table(CLOCK_SCENARIOS, CLOCK_SKEWS, CLOCK_DRIFTS, seed=a.seed,
                           log=print, **TABLE)
        table_md = markdown_table(rows, a.seed, TABLE["duration"])
    print("\nFigure 3's two LANs\n")
    print(table_md)
    print(f"{time.process_time() - cpu:.0f} s CPU")
    if a.write_docs:
        for name, body in (("clocks-alone", alone_md), ("clocks-table", table_md)):
            changed = write_section(DOC, name, body)
            print(f"{DOC.name}: section {name} {'rewritten' if changed else 'unchanged'}")
    return 0 if all(r.holds for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
