"""``tomkit check``: decide the properties of ``checker/`` on trace files.

Exit codes: 0 every checked property holds (unknowns are reported, not failures), 1
some property is violated, 2 bad input or usage.
"""

from __future__ import annotations

import argparse
import os
import re
import sys

__all__ = ["add_parser", "run"]

#: witness pictures drawn per run at most (a data set with thousands of violations would
#: otherwise write thousands of files)
MAX_PICTURES = 100


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
    c.add_argument("--format", choices=["text", "json"], default="text")
    c.add_argument("--latency-bound", type=float, metavar="SECONDS",
                   help="check every send-to-delivery latency against this bound")
    # the QoS-preserving multicast of Bar-Joseph, Keidar, Anker and Lynch (docs/qos-checking.md)
    c.add_argument("--realtime-bound", type=float, metavar="SECONDS",
                   help="check every send-to-delivery time in real time (the real_time "
                   "field) against this bound (realtime-latency)")
    c.add_argument("--slot", type=float, metavar="SECONDS",
                   help="slot length, to place packet records without x_slot (rate)")
    c.add_argument("--rate-max", type=int, metavar="N",
                   help="check at most N packet records per process and slot (rate)")
    c.add_argument("--rate-avg", type=int, metavar="N",
                   help="check at most N packet records per process in any --rate-window "
                   "consecutive slots (rate)")
    c.add_argument("--rate-window", type=int, metavar="K", help="window of --rate-avg, slots")
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
    c.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    c.set_defaults(func=run)
    return c


def run(args: argparse.Namespace) -> int:
    from tomkit.checker.engine import check_paths, select
    from tomkit.checker.profiles import ProfileError, builtin, judge, load, to_check
    from tomkit.checker.properties import Options
    from tomkit.checker.report import to_json, to_text
    from tomkit.traces.errors import TraceFormatError

    try:
        profiles = builtin()
    except ProfileError as e:  # a broken installation
        print(f"tomkit check: {e}", file=sys.stderr)
        return 2
    if args.list_guarantees:
        for p in profiles.values():
            print(f"{p.name:<26} {p.title}\n{'':<26} {', '.join(p.properties)}")
        return 0
    if not args.files:
        print("tomkit check: give at least one FILE", file=sys.stderr)
        return 2
    if args.rate_avg is not None and args.rate_window is None:
        print("tomkit check: --rate-avg needs --rate-window K (slots)", file=sys.stderr)
        return 2
    for flag, value in (("--slot", args.slot), ("--rate-window", args.rate_window),
                        ("--realtime-bound", args.realtime_bound)):
        if value is not None and not value > 0:
            print(f"tomkit check: {flag} must be positive", file=sys.stderr)
            return 2
    options = Options(latency_bound=args.latency_bound, realtime_bound=args.realtime_bound,
                      slot=args.slot, rate_max=args.rate_max, rate_avg=args.rate_avg,
                      rate_window=args.rate_window)
    names = [n for item in args.property or [] for n in item.split(",") if n]
    chosen = None
    if args.guarantee and args.guarantee_file:
        print("tomkit check: give --guarantee or --guarantee-file, not both", file=sys.stderr)
        return 2
    if args.guarantee:
        chosen = profiles.get(args.guarantee)
        if chosen is None:
            print(f"tomkit check: unknown guarantee {args.guarantee!r}; known: "
                  f"{', '.join(profiles)}", file=sys.stderr)
            return 2
    elif args.guarantee_file:
        try:
            chosen = load(args.guarantee_file)
        except ProfileError as e:
            print(f"tomkit check: {e}", file=sys.stderr)
            return 2
        profiles = {**profiles, chosen.name: chosen}
    if chosen is not None:
        if names or args.scope:
            print("tomkit check: --property and --scope do not mix with a guarantee: the "
                  "profile names the properties and their scopes", file=sys.stderr)
            return 2
        # the chosen profile is judged; every profile's properties are checked for the table
        names = to_check(chosen, profiles.values())
    try:
        props = select(names, options, liveness=args.liveness,
                       latency=args.plot_latency is not None, scope=args.scope)
    except KeyError as e:
        print(f"tomkit check: {e.args[0]}", file=sys.stderr)
        return 2
    pictures: list[tuple[str, str, str]] = []
    draw = None
    if args.draw or args.html:
        from tomkit.checker.pictures import witness_svg

        def draw(trace, result) -> None:
            if len(pictures) < MAX_PICTURES:
                pictures.append((trace.id, result.property, witness_svg(trace, result)))
    try:
        report = check_paths(args.files, props, options, keep_going=args.keep_going,
                             merge=args.merge, progress=not args.quiet, on_violation=draw)
    except TraceFormatError as e:
        print(f"tomkit check: bad input: {e}", file=sys.stderr)
        return 2
    judge(report, chosen, profiles.values())
    if args.draw:
        os.makedirs(args.draw, exist_ok=True)
        for trace_id, prop, svg in pictures:
            name = re.sub(r"[^A-Za-z0-9_.@-]", "_", f"{trace_id}--{prop}") + ".svg"
            with open(os.path.join(args.draw, name), "w") as f:
                f.write(svg)
        print(f"{len(pictures)} witness picture(s) drawn in {args.draw}", file=sys.stderr)
    if args.html:
        from tomkit.checker.html_report import render

        with open(args.html, "w") as f:
            f.write(render(report, pictures))
        print(f"report written to {args.html}", file=sys.stderr)
    text = to_json(report) if args.format == "json" else to_text(report)
    sys.stdout.write(text)
    if args.plot_latency:
        from tomkit.checker.report import plot_latency

        if plot_latency(report, args.plot_latency):
            print(f"latency distribution drawn in {args.plot_latency}", file=sys.stderr)
        else:
            print("no latency to draw (needs timed sends and deliveries)", file=sys.stderr)
    if args.realtime_bound is not None and _no_real_time(report):
        print("tomkit check: --realtime-bound: no trace in "
              f"{', '.join(map(str, args.files))} logs real_time on a send and its delivery, "
              "so real-time latency cannot be checked (--latency-bound checks the local "
              "clocks, field time)", file=sys.stderr)
        return 2
    return report.exit_code()


def _no_real_time(report) -> bool:
    """Whether realtime-latency was checked and no trace could measure it."""
    from tomkit.checker.properties.realtime_latency import NAME, NO_REAL_TIME
    from tomkit.checker.result import Verdict

    counts = report.counts.get(NAME)
    if not counts or counts[Verdict.HOLDS] or counts[Verdict.VIOLATED]:
        return False
    return all(o.results[NAME].explanation == NO_REAL_TIME
               for o in report.outcomes if NAME in o.results)
