"""``tomkit import --mapping MAP.toml LOG... --out TRACE``: third-party logs into a v1
trace, by a mapping and no code (``traces/importer.py``, docs/import.md).

Exit codes: 0 every line read or skipped by the mapping, 2 a bad line (the first one,
or with --keep-going any: each is printed with its file, line and field, and counted) or
a bad mapping.
"""

from __future__ import annotations

import argparse
import sys

__all__ = ["add_parser", "run"]

SHOWN = 20


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    s = subparsers.add_parser(
        "import", help="turn JSON Lines, CSV or regex-matched line logs into a trace",
        description="Read LOG... (one file per process, or interleaved) with the mapping "
        "MAP.toml and write one v1 trace (JSON Lines, .gz, or Parquet by the suffix of "
        "--out). Example mappings: tomkit/traces/mappings/. See docs/import.md.")
    s.add_argument("logs", nargs="+", metavar="LOG")
    s.add_argument("--mapping", required=True, metavar="MAP.toml")
    s.add_argument("--out", required=True, metavar="TRACE")
    s.add_argument("--keep-going", action="store_true",
                   help="report every bad line and import the rest")
    s.set_defaults(func=run)
    return s


def run(args: argparse.Namespace) -> int:
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
        print(f"tomkit import: {e}", file=sys.stderr)
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
