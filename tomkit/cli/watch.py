"""``tomkit watch``: follow growing JSON Lines logs and report each verdict as soon as it
is certain (checker/stream/watch.py, docs/stream.md).

Exit codes, once the logs have stopped growing for ``--idle-exit`` seconds: those of
``tomkit check`` on the whole input (0 holds, 1 violated, 2 bad input or usage).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from tomkit.traces.interrupt import exit_code, stopped

from .parser import empty_name, not_a_file_out, overwrites_input

__all__ = ["add_parser", "run"]


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    c = subparsers.add_parser(
        "watch", help="follow growing trace logs and report violations as they happen",
        description="Follow FILE... (v1 JSON Lines, or logs read through an import mapping, "
        "still being written) with the single-"
        "pass checker; print each violation as soon as it is certain, and tomkit check's "
        "report once the logs stop growing (--idle-exit).")
    c.add_argument("files", nargs="+", metavar="FILE")
    c.add_argument("--mapping", metavar="MAP.toml",
                   help="read FILE... as tomkit import --mapping reads them (per-process "
                   "or interleaved logs; docs/import.md) instead of v1 JSON Lines")
    c.add_argument("--property", "-p", action="append", metavar="NAME",
                   help="check only this property (repeat or comma-separate); default: "
                   "the default safety properties")
    c.add_argument("--liveness", action="store_true",
                   help="also agreement, validity and liveness, pending until each trace "
                   "ends (the summary line counts them) and decided then")
    c.add_argument("--scope", choices=("uniform", "correct"), default=None)
    c.add_argument("--format", "--output-format", choices=["text", "json"], default="text",
                   help="verdict and summary lines as text or JSON objects")
    c.add_argument("--idle-exit", type=float, metavar="SECONDS", default=None,
                   help="end once no file has grown for this long, with tomkit check's "
                   "exit code (default: follow until interrupted)")
    c.add_argument("--stop-file", metavar="PATH",
                   help="with --idle-exit: count idle time only once PATH exists (a "
                   "recorder creates it when its run is over)")
    c.add_argument("--state", metavar="DIR",
                   help="keep positions and checker state here; a restart goes on from "
                   "them (after kill -9 too)")
    c.add_argument("--out", metavar="FILE",
                   help="append verdict lines to FILE instead of stdout (with --state: "
                   "each written exactly once across restarts)")
    c.add_argument("--poll", type=float, default=0.1, metavar="SECONDS",
                   help="how often the files are looked at (default 0.1)")
    c.add_argument("--summary-every", type=float, default=5.0, metavar="SECONDS",
                   help="a live summary line on stderr this often (0: none)")
    c.add_argument("--timeout", type=float, metavar="SECONDS", default=None,
                   help="print a message that some correct process has not delivered "
                   "SECONDS after a record first named it, as overdue (a notice while "
                   "the run goes on; the verdicts at the end are tomkit check's)")
    c.add_argument("--keep-going", action="store_true",
                   help="report bad records and check the rest")
    c.set_defaults(func=run)
    return c


def run(args: argparse.Namespace) -> int:
    from tomkit.checker.check_run import UsageError, plan, property_options
    from tomkit.checker.report import to_json, to_text
    from tomkit.checker.stream.driver import not_streamed
    from tomkit.checker.stream.follow import FollowError
    from tomkit.checker.stream.watch import Watch
    from tomkit.traces.errors import TraceFormatError

    bad = _bad_arguments(args)
    if bad:
        print(f"tomkit watch: {bad}", file=sys.stderr)
        return 2
    args.files = once(args.files)
    try:
        options = property_options(cli=True)
        todo = plan(options, properties=args.property, liveness=args.liveness,
                    scope=args.scope, cli=True)
    except (KeyError, UsageError) as e:
        print(f"tomkit watch: {e.args[0] if isinstance(e, KeyError) else e}",
              file=sys.stderr)
        return 2
    missing = not_streamed(todo.properties)
    if missing:
        print(f"tomkit watch: the single-pass checker does not decide {', '.join(missing)} "
              "(they need the whole trace)", file=sys.stderr)
        return 2
    mapping = None
    if args.mapping is not None:
        from tomkit.traces.importer import MappingError, load_mapping

        try:
            mapping = load_mapping(args.mapping)
        except MappingError as e:
            print(f"tomkit watch: bad mapping: {e}", file=sys.stderr)
            return 2
    try:
        w = Watch(args.files, todo.properties, todo.options, fmt=args.format,
                  out_path=args.out, state_dir=args.state, keep_going=args.keep_going,
                  mapping=mapping, timeout=args.timeout)
    except ValueError as e:
        print(f"tomkit watch: {e}", file=sys.stderr)
        return 2
    idle_since = time.monotonic()
    said = time.monotonic()
    try:
        while True:
            start = time.monotonic()
            if w.cycle():
                idle_since = time.monotonic()
                # one cycle a poll while the logs grow: each then reads what a poll's
                # worth of writing added (a numpy step per batch costs little per record
                # at thousands of records, much at tens); a cycle slower than the poll
                # (a backlog) goes straight on
                time.sleep(max(0.0, start + args.poll - time.monotonic()))
            elif args.idle_exit is not None and \
                    time.monotonic() - idle_since >= args.idle_exit and \
                    (args.stop_file is None or os.path.exists(args.stop_file)):
                break
            else:
                time.sleep(args.poll)
            if args.summary_every and time.monotonic() - said >= args.summary_every:
                print(w.summary(), file=sys.stderr, flush=True)
                said = time.monotonic()
        report = w.finish()
        w.checkpoint()
    except (FollowError, TraceFormatError) as e:
        print(f"tomkit watch: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:
        w.checkpoint()
        print(f"tomkit watch: {stopped(e)}; state kept" if args.state else
              f"tomkit watch: {stopped(e)}", file=sys.stderr)
        return exit_code(e)
    finally:
        w.close()
    sys.stdout.write(to_json(report) if args.format == "json" else to_text(report))
    never = [f for f in args.files if not os.path.exists(f)]
    if never:  # judged on nothing: not a verdict of holds
        print(f"tomkit watch: {', '.join(never)}: never appeared (no such file)",
              file=sys.stderr)
        return 2
    return report.exit_code()


def once(files: list[str]) -> list[str]:
    """Each file once, as tomkit check reads them (``a.jsonl ./a.jsonl``: every record
    was read twice, each delivery a duplicate, and integrity said violated)."""
    seen: set[str] = set()
    out = []
    for f in files:
        key = os.path.realpath(f)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def _bad_arguments(args: argparse.Namespace) -> str | None:
    """What is wrong with the arguments, in one line, before anything is followed; or
    None. A log that does not exist yet is not wrong: it may appear later."""
    from tomkit.checker.stream.follow import unfollowable

    for flag, value, least in (("--idle-exit", args.idle_exit, 0.0),
                               ("--summary-every", args.summary_every, 0.0)):
        if value is not None and not (value >= least and value < float("inf")):
            return f"{flag} must be a number of seconds >= 0, got {value}"
    for flag, value in (("--poll", args.poll), ("--timeout", args.timeout)):
        if value is not None and not (0 < value < float("inf")):
            return f"{flag} must be a positive number of seconds, got {value}"
    empty = empty_name(*[("FILE", f, "log file") for f in args.files],
                       ("--out", args.out, "file"), ("--state", args.state, "folder"),
                       ("--stop-file", args.stop_file, "file"))
    if empty:  # --out: a traceback; --state: no state kept; --stop-file: never stopped
        return empty
    for f in args.files:
        if os.path.isdir(f):
            return (f"{f}: a folder; name the log files in it (tomkit watch {f}/*.jsonl), "
                    "or check a finished data set with tomkit check")
        if f.lower().endswith((".parquet", ".pq")):
            return (f"{f}: a Parquet file is written whole, not followed; tomkit check "
                    f"{f} reads it")
        if f.lower().endswith(".gz"):  # (read as JSON Lines: "invalid UTF-8 at column 2")
            return (f"{f}: a gzip file is compressed in blocks, not followed line by line "
                    f"as it grows; tomkit check {f} reads it whole (a recorder's live file "
                    "is plain JSON Lines)")
        why = unfollowable(f)
        if why:  # a named pipe was opened, which waits for a writer
            return why
    if args.state is not None and os.path.exists(args.state) and \
            not os.path.isdir(args.state):
        return f"--state {args.state}: a file; --state takes a folder"
    if args.out is not None and os.path.isdir(args.out):
        return f"--out {args.out}: a folder; give a file name"
    if not_a_file_out("--out", args.out):  # appended to a pipe: waited for a reader
        return not_a_file_out("--out", args.out)
    over = overwrites_input(args.files, ("--out", args.out))
    if over:  # its verdict lines appended to a log it reads, then read as records
        return over.replace("which it would overwrite", "which it would write into")
    return None
