"""``tomkit generate``: write a partitioned Parquet data set of simulated traces, a chosen
fraction of them from faulty variants (``model/dataset.py``).

Exit codes: 0 written,
2 bad arguments.
"""

from __future__ import annotations

import argparse
import sys

from tomkit.model.dataset import CONFIGS, generate, write_bulk

__all__ = ["add_parser", "run"]


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    g = subparsers.add_parser(
        "generate", help="write a data set of simulated traces (Parquet, partitioned)",
        description="Simulate many small traces of ToTo-family protocols in parallel and "
        "write DIR/protocol=P/config=C/part-*.parquet, with a fraction from faulty variants "
        "(a broken delivery rule, a reordering sequencer, planted faults) and their ground "
        "truth in DIR/_ground_truth.jsonl. 'tomkit scan DIR' checks it.")
    g.add_argument("--protocol", action="append", metavar="NAME",
                   help=f"{', '.join(CONFIGS)} or synthetic (the fast bulk generator); "
                   "repeat or comma-separate (default: all simulated protocols)")
    g.add_argument("--traces", type=int, required=True)
    g.add_argument("--out", required=True, metavar="DIR", help="replaced atomically")
    g.add_argument("--faulty", type=float, default=0.0,
                   help="fraction of traces from faulty variants (default 0)")
    g.add_argument("--seed", type=int, default=1)
    g.add_argument("--workers", type=int, default=None, help="processes (default: cores)")
    g.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    g.set_defaults(func=run)
    return g


def run(args: argparse.Namespace) -> int:
    names = [p for x in (args.protocol or []) for p in x.split(",") if p]
    if args.traces < 1:
        print("tomkit generate: --traces must be >= 1", file=sys.stderr)
        return 2
    try:
        if names == ["synthetic"]:
            s = write_bulk(args.out, args.traces, faulty=args.faulty, seed=args.seed,
                           progress=not args.quiet)
        else:
            s = generate(args.out, names or list(CONFIGS), args.traces, faulty=args.faulty,
                         seed=args.seed, workers=args.workers, progress=not args.quiet)
    except ValueError as e:
        print(f"tomkit generate: {e}", file=sys.stderr)
        return 2
    print(f"wrote {s['traces']:,} traces ({s['records']:,} records, {s['faulty_traces']:,} "
          f"faulty) to {args.out}; seed {args.seed}")
    return 0
