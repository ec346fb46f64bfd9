"""``tomkit check``: decide the properties of ``checker/`` on trace files.

Exit codes: 0 every checked property holds (unknowns are reported, not failures), 1
some property is violated, 2 bad input or usage.
"""

from __future__ import annotations

import argparse
import sys

__all__ = ["add_parser", "run"]


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    c = subparsers.add_parser(
        "check", help="check delivery traces against the safety properties",
        description="Check the traces in FILE... (JSON Lines, plain or gzip, or Parquet). "
        "Exit 0: all checked properties hold; 1: a property is violated; 2: bad input or "
        "usage.")
    c.add_argument("files", nargs="+", metavar="FILE")
    c.add_argument("--property", "-p", action="append", metavar="NAME",
                   help="check only this property (repeat or comma-separate); default: all "
                   "safety properties")
    c.add_argument("--format", choices=["text", "json"], default="text")
    c.add_argument("--latency-bound", type=float, metavar="SECONDS",
                   help="check every send-to-delivery latency against this bound")
    c.add_argument("--plot-latency", metavar="PNG",
                   help="draw the latency distribution (checks latency too) into this PNG")
    c.add_argument("--liveness", action="store_true",
                   help="also check liveness at the end of each trace (off by default: traces "
                   "may be cut before the system drained)")
    c.add_argument("--keep-going", action="store_true",
                   help="report bad records and check the rest, instead of stopping at the "
                   "first")
    c.add_argument("--merge", action="store_true",
                   help="treat all files as one input: records of one trace may be spread "
                   "over several files (e.g. one log per process)")
    c.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    c.set_defaults(func=run)
    return c


def run(args: argparse.Namespace) -> int:
    from tomkit.checker.engine import check_paths, select
    from tomkit.checker.properties import Options
    from tomkit.checker.report import to_json, to_text
    from tomkit.traces.errors import TraceFormatError

    options = Options(latency_bound=args.latency_bound)
    names = [n for item in args.property or [] for n in item.split(",") if n]
    try:
        props = select(names, options, liveness=args.liveness,
                       latency=args.plot_latency is not None)
    except KeyError as e:
        print(f"tomkit check: {e.args[0]}", file=sys.stderr)
        return 2
    try:
        report = check_paths(args.files, props, options, keep_going=args.keep_going,
                             merge=args.merge, progress=not args.quiet)
    except TraceFormatError as e:
        print(f"tomkit check: bad input: {e}", file=sys.stderr)
        return 2
    text = to_json(report) if args.format == "json" else to_text(report)
    sys.stdout.write(text)
    if args.plot_latency:
        from tomkit.checker.report import plot_latency

        if plot_latency(report, args.plot_latency):
            print(f"latency distribution drawn in {args.plot_latency}", file=sys.stderr)
        else:
            print("no latency to draw (needs timed sends and deliveries)", file=sys.stderr)
    return report.exit_code()
