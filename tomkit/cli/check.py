"""``tomkit check``: decide the properties of ``checker/`` on trace files.

Exit codes: 0 every checked property holds (unknowns are reported, not failures), 1
some property is violated, 2 bad input or usage.
"""

from __future__ import annotations

import argparse
import os
import sys

from tomkit.checker.check_run import add_option_arguments

from .check_process import fresh_memory_settings
from .parser import empty_name, overwrites_input

__all__ = ["add_parser", "fresh_memory_settings", "run"]


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    c = subparsers.add_parser(
        "check", help="check delivery traces against the safety properties",
        description="Check the traces in FILE... (JSON Lines, plain or gzip, or Parquet). "
        "Exit 0: all checked properties hold; 1: a property is violated; 2: bad input or "
        "usage.")
    c.add_argument("files", nargs="*", metavar="FILE")
    c.add_argument("--property", "-p", action="append", metavar="NAME",
                   help="check only this property (repeat or comma-separate); default: all "
                   "safety properties")
    c.add_argument("--format", "--output-format", choices=["text", "json"], default="text")
    # latency, and the QoS-preserving multicast's realtime-latency and rate
    # (docs/qos-checking.md): one definition with tomkit scan and tomkit.check()
    add_option_arguments(c)
    c.add_argument("--plot-latency", metavar="PNG",
                   help="draw the latency distribution (checks latency too) into this PNG")
    c.add_argument("--liveness", action="store_true",
                   help="also check agreement, validity and liveness at the end of each trace "
                   "(off by default: traces may be cut before the system drained)")
    c.add_argument("--scope", choices=("uniform", "correct"), default=None,
                   help="judge the order and agreement properties for every process "
                   "(uniform, the default) or for the correct ones only (no crash record); "
                   "a single property takes NAME@correct")
    c.add_argument("--guarantee", metavar="NAME",
                   help="check what a named profile promises (see --list-guarantees); the "
                   "report ends with every built-in profile the traces satisfy or violate")
    c.add_argument("--guarantee-file", metavar="TOML",
                   help="a profile of your own (docs/profiles.md)")
    c.add_argument("--list-guarantees", action="store_true",
                   help="list the built-in profiles and exit")
    c.add_argument("--draw", metavar="DIR",
                   help="draw each violated property's witness as a space-time diagram, "
                   "DIR/TRACE--PROPERTY.svg (the first 100)")
    c.add_argument("--html", metavar="FILE",
                   help="write the report as one HTML page: verdicts, guarantees, the "
                   "witnesses drawn, the latency distribution")
    c.add_argument("--keep-going", action="store_true",
                   help="report bad records and check the rest, instead of stopping at the "
                   "first")
    c.add_argument("--merge", action="store_true",
                   help="treat all files as one input: records of one trace may be spread "
                   "over several files (e.g. one log per process)")
    c.add_argument("--stream", action="store_true",
                   help="check in one pass, in memory bounded by the processes' lag "
                   "(docs/stream.md); chosen by itself for a long Parquet trace when every "
                   "property asked for has a single-pass decider")
    c.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    c.set_defaults(func=run)
    return c


def run(args: argparse.Namespace) -> int:
    # the process's settings (fresh_memory_settings, pandas refused) are made by main()
    # for the command's own process only: a program calling main() keeps its own
    from tomkit.checker.check_run import (
        UsageError,
        no_real_time,
        options_from_args,
        plan,
        prepare_outputs,
        write_outputs,
    )
    from tomkit.checker.check_run import run as check
    from tomkit.checker.profiles import ProfileError, builtin
    from tomkit.checker.report import to_json, to_text
    from tomkit.traces.errors import TraceFormatError

    from .sniff import explained

    if args.list_guarantees:
        try:
            profiles = builtin()
        except ProfileError as e:  # a broken installation
            print(f"tomkit check: {e}", file=sys.stderr)
            return 2
        for p in profiles.values():
            print(f"{p.name:<26} {p.title}\n{'':<26} {', '.join(p.properties)}")
        return 0
    if not args.files:
        print("tomkit check: give at least one FILE", file=sys.stderr)
        return 2
    if "" in args.files:  # an unset shell variable, say; not ": file not found"
        print("tomkit check: an empty file name (''); give a file or folder",
              file=sys.stderr)
        return 2
    empty = empty_name(("--html", args.html, "file"), ("--draw", args.draw, "folder"),
                       ("--plot-latency", args.plot_latency, "file"),
                       ("--guarantee-file", args.guarantee_file, "file"))
    if empty:  # an unset shell variable: nothing was written, and nothing said
        print(f"tomkit check: {empty}", file=sys.stderr)
        return 2
    over = overwrites_input(args.files, ("--html", args.html),
                            ("--plot-latency", args.plot_latency))
    if over:  # the trace was replaced by the HTML report, with no word
        print(f"tomkit check: {over}", file=sys.stderr)
        return 2
    if "-" in args.files and not os.path.exists("-"):  # not "-: file not found"
        print("tomkit check: '-': standard input is not read; give a file, or follow a "
              "growing one with tomkit watch", file=sys.stderr)
        return 2
    try:
        todo = plan(options_from_args(args), properties=args.property,
                    liveness=args.liveness, latency=args.plot_latency is not None,
                    scope=args.scope, guarantee=args.guarantee,
                    guarantee_file=args.guarantee_file, cli=True)
        prepare_outputs(draw=args.draw, html=args.html, plot_latency=args.plot_latency,
                        cli=True)
    except KeyError as e:
        print(f"tomkit check: {e.args[0]}", file=sys.stderr)
        return 2
    except (UsageError, ProfileError) as e:
        print(f"tomkit check: {e}", file=sys.stderr)
        return 2
    pictures: list[tuple[str, str, str]] = []
    try:
        report = check(args.files, todo, keep_going=args.keep_going, merge=args.merge,
                       progress=not args.quiet,
                       pictures=pictures if args.draw or args.html else None,
                       stream=True if args.stream else None)
    except TraceFormatError as e:
        print(f"tomkit check: bad input: {explained(e)}", file=sys.stderr)
        return 2
    except UsageError as e:
        print(f"tomkit check: {e}", file=sys.stderr)
        return 2
    said = write_outputs(report, pictures, draw=args.draw, html=args.html)
    for line in said:
        print(line, file=sys.stderr)
    text = to_json(report) if args.format == "json" else to_text(report)
    sys.stdout.write(text)
    for line in write_outputs(report, pictures, plot_latency=args.plot_latency):
        print(line, file=sys.stderr)
    problem = no_real_time(report, todo, args.files, cli=True)
    if problem is not None:
        print(f"tomkit check: {problem}", file=sys.stderr)
        return 2
    return report.exit_code()
