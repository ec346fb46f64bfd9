"""``tomkit import --mapping MAP.toml LOG... --out TRACE``: third-party logs into a v1
trace, by a mapping and no code (``traces/importer.py``, docs/import.md); ``tomkit import
--format jepsen HISTORY --out TRACE``: a Jepsen or Maelstrom history (kafka, list-append)
into one trace per key (``traces/jepsen.py``, docs/maelstrom.md).

Exit codes: 0 every line read or skipped by the mapping, 2 a bad line (the first one,
or with --keep-going any: each is printed with its file, line and field, and counted) or
a bad mapping.
"""

from __future__ import annotations

import argparse
import os
import stat
import sys

from .parser import empty_name, not_a_file_out

__all__ = ["add_parser", "run"]

SHOWN = 20


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    s = subparsers.add_parser(
        "import", help="turn JSON Lines, CSV or regex-matched line logs into a trace",
        description="Read LOG... (one file per process, or interleaved) with the mapping "
        "MAP.toml and write one v1 trace (JSON Lines, .gz, or Parquet by the suffix of "
        "--out). Example mappings: tomkit/traces/mappings/. See docs/import.md.")
    s.add_argument("logs", nargs="+", metavar="LOG")
    s.add_argument("--format", choices=["mapping", "jepsen"], default="mapping",
                   help="mapping (the default): logs read by --mapping; jepsen: a Jepsen or "
                   "Maelstrom history (history.edn, .json or .jsonl)")
    s.add_argument("--mapping", metavar="MAP.toml")
    s.add_argument("--workload", choices=["kafka", "list-append"],
                   help="--format jepsen: the history's workload (default: guessed)")
    s.add_argument("--out", required=True, metavar="TRACE")
    s.add_argument("--keep-going", action="store_true",
                   help="report every bad line and import the rest")
    s.set_defaults(func=run)
    return s


def run(args: argparse.Namespace) -> int:
    from tomkit.traces.writer import output_format

    empty = empty_name(*[("LOG", log, "log file") for log in args.logs],
                       ("--out", args.out, "file"), ("--mapping", args.mapping, "file"))
    if empty:  # not "--out : cannot tell the format", "[Errno 2] ...: ''"
        print(f"tomkit import: {empty}", file=sys.stderr)
        return 2
    try:  # before the logs are read, not after
        output_format(args.out)
    except ValueError as e:
        print(f"tomkit import: --out {e}", file=sys.stderr)
        return 2
    if not_a_file_out("--out", args.out):
        print(f"tomkit import: {not_a_file_out('--out', args.out)}", file=sys.stderr)
        return 2
    for log in args.logs:  # a named pipe waited for a writer, /dev/zero filled memory
        what = _not_a_file(log)
        if what:
            print(f"tomkit import: {log}: {what}, not a file; save the stream to a file "
                  "and import that", file=sys.stderr)
            return 2
    if args.format == "jepsen":
        return run_jepsen(args)
    if args.mapping is None:
        print("tomkit import: give --mapping MAP.toml (or --format jepsen)", file=sys.stderr)
        return 2
    from tomkit.traces.errors import TraceFormatError
    from tomkit.traces.importer import MappingError, import_logs, load_mapping
    from tomkit.traces.writer import write_records

    try:
        mapping = load_mapping(args.mapping)
    except MappingError as e:
        print(f"tomkit import: bad mapping: {e}", file=sys.stderr)
        return 2
    try:
        records, stats = import_logs(mapping, args.logs, keep_going=args.keep_going)
    except TraceFormatError as e:
        print(f"tomkit import: bad input: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"tomkit import: {_os_error(e)}", file=sys.stderr)
        return 2
    for err in stats.rejected[:SHOWN]:
        print(f"  rejected: {err}", file=sys.stderr)
    if len(stats.rejected) > SHOWN:
        print(f"  ... and {len(stats.rejected) - SHOWN} more", file=sys.stderr)
    if records:
        write_records(args.out, records)
    print(f"tomkit import: {stats.read} lines read from {len(args.logs)} file(s): "
          f"{stats.records} records, {len(stats.rejected)} rejected, {stats.skipped} "
          f"skipped by the mapping, {stats.blank} blank"
          + (f"; wrote {args.out}" if records else "; nothing written"))
    return 2 if stats.rejected or not records else 0


def _not_a_file(path: str) -> str | None:
    """``a named pipe``, ``a socket`` or ``a device`` for such a ``path``; else None (a
    file, a folder or nothing there: said as ever)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    return ("a named pipe" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a device")


def run_jepsen(args: argparse.Namespace) -> int:
    from tomkit.traces.errors import TraceFormatError
    from tomkit.traces.jepsen import import_history
    from tomkit.traces.writer import write_records

    if len(args.logs) != 1:
        print("tomkit import: --format jepsen reads one history", file=sys.stderr)
        return 2
    try:
        records, stats = import_history(args.logs[0], args.workload)
    except TraceFormatError as e:
        if _is_trace(args.logs[0]):
            print(f"tomkit import: {args.logs[0]} is a tomkit trace already (its first "
                  "record has trace, process and kind), not a Jepsen history: check it "
                  f"with tomkit check {args.logs[0]}", file=sys.stderr)
        else:
            print(f"tomkit import: bad input: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"tomkit import: {_os_error(e)}", file=sys.stderr)
        return 2
    if records:
        write_records(args.out, records, grouped=True)
    other = ", ".join(f"{n} {f}" for f, n in sorted(stats.other.items()))
    props = "integrity,log-offsets" + (",prefix-order" if stats.workload == "list-append"
                                       else "")
    print(f"tomkit import: {stats.workload} history, {stats.ops} client operations"
          + (f" ({other} not read)" if other else "")
          + f", {stats.nemesis} nemesis entries counted: {stats.records} records, "
          f"{stats.keys} keys (one trace each)"
          + (f"; wrote {args.out}\n  next: tomkit check {args.out} -p {props}" if records
             else "; nothing written"))
    return 0 if records else 2


def _is_trace(path: str) -> bool:
    """Whether ``path`` reads as a v1 trace: its first record has trace, process and kind
    (the header line, if any, skipped). Read in full only by the trace readers."""
    from tomkit.traces.reader import TraceReader

    try:
        for batch in TraceReader(path):
            return batch.table.num_rows > 0
    except Exception:  # noqa: BLE001 (anything unreadable is no trace: the caller's
        # own message stands)
        return False
    return False


def _os_error(e: OSError) -> str:
    """``FILE: reason`` (``missing.edn: No such file or directory``), not Python's
    ``[Errno 2] ...`` form."""
    return f"{e.filename}: {e.strerror}" if e.filename and e.strerror else str(e)
