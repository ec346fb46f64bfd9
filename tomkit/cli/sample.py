"""``tomkit sample``: small synthetic traces, clean or with a planted fault
(``traces/generate.py``), to try the checker on.
"""

from __future__ import annotations

import argparse
import os
import sys

__all__ = ["add_parser", "run"]


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    s = subparsers.add_parser(
        "sample", help="write small synthetic traces, clean or with a planted fault, to try "
        "the checker on")
    s.add_argument("--out", required=True, metavar="FILE",
                   help=".jsonl, .jsonl.gz or .parquet")
    s.add_argument("--fault", metavar="NAME", help="plant this fault in every trace")
    s.add_argument("--traces", type=int, default=1)
    s.add_argument("--processes", type=int, default=4)
    s.add_argument("--messages", type=int, default=12)
    s.add_argument("--views", action="store_true", help="log view events")
    s.add_argument("--seed", type=int, default=1)
    s.set_defaults(func=run)
    return s


def run(args: argparse.Namespace) -> int:
    from tomkit.traces.generate import FAULTS, clean_trace, faulty_trace
    from tomkit.traces.writer import output_format, write_records

    if args.fault and args.fault not in FAULTS:
        print(f"tomkit sample: unknown fault {args.fault}; known: {', '.join(FAULTS)}",
              file=sys.stderr)
        return 2
    for flag, value in (("--traces", args.traces), ("--processes", args.processes),
                        ("--messages", args.messages)):
        if value < 1:
            print(f"tomkit sample: {flag} must be at least 1, got {value}", file=sys.stderr)
            return 2
    try:
        output_format(args.out)
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    except (ValueError, OSError) as e:
        print(f"tomkit sample: {e}", file=sys.stderr)
        return 2
    records = []
    truths = []
    kw = dict(n_processes=args.processes, n_messages=args.messages, views=args.views)
    for i in range(args.traces):
        tid = f"t{i}"
        seed = args.seed + i
        try:
            if args.fault:
                recs, truth = faulty_trace(tid, args.fault, seed=seed, **kw)
                truths.append(truth)
            else:
                recs = clean_trace(tid, seed=seed, **kw)
        except ValueError as e:  # a fault that needs more processes or messages
            print(f"tomkit sample: {e}", file=sys.stderr)
            return 2
        records.extend(recs)
    n = write_records(args.out, records, grouped=True)
    what = f"trace(s) with a planted '{args.fault}' fault" if args.fault else "clean trace(s)"
    print(f"wrote {n} events of {args.traces} {what} to {args.out} (seed {args.seed})")
    for t in truths:
        print(f"  planted in {t['trace']}: {t['fault']} -> {t['property']}")
    return 0
