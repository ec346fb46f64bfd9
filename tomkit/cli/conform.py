"""``tomkit conform --protocol P``: replay a recorded trace through the reference model of
any protocol and report where the implementation's deliveries differ
(``model/conform.py``).

Exit codes: 0 every process delivers as the model would (or later), 1 some delivery
differs, 2 bad input.
"""

from __future__ import annotations

import argparse
import sys

from tomkit.cli.common import add_protocol_arguments, protocol_options

__all__ = ["add_parser", "run"]


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    f = subparsers.add_parser(
        "conform", help="replay a recorded trace through a protocol's reference model and "
        "report where the implementation's deliveries differ",
        description="Replays each process's inputs (as the protocol reads them from the "
        "trace) through the reference model of --protocol. Exit 0: every process delivers "
        "as the model would (or later); 1: some delivery differs (order, set, or earlier "
        "than the model allows); 2: bad input, or a trace the model cannot replay.")
    f.add_argument("files", nargs="+", metavar="TRACE",
                   help="trace files, or folders of them (as tomkit check reads them)")
    add_protocol_arguments(f, required=True)
    f.add_argument("--format", "--output-format", choices=["text", "json"], default="text")
    f.set_defaults(func=run)
    return f


def run(args: argparse.Namespace) -> int:
    from tomkit.model.conform import ReplayError, conform_traces
    from tomkit.model.protocols import protocol
    from tomkit.traces.errors import TraceFormatError
    from tomkit.traces.reader import read_records, trace_files

    from .sniff import explained
    from .verdict_json import document, dumps

    try:
        p = protocol(args.protocol)
        options = protocol_options(args, p)
        p.resolve(options)  # a value the protocol refuses, said before reading a trace
    except ValueError as e:
        print(f"tomkit conform: {e}", file=sys.stderr)
        return 2
    if "" in args.files:  # an unset shell variable, say; not ": file not found"
        print("tomkit conform: an empty file name (''); give a file or folder",
              file=sys.stderr)
        return 2
    records: list[dict] = []
    try:
        for path in trace_files(args.files):  # a folder: the trace files below it
            records.extend(read_records(path))
    except TraceFormatError as e:
        print(f"tomkit conform: bad input: {explained(e)}", file=sys.stderr)
        return 2
    try:
        report = conform_traces(records, args.protocol, options)
    except ReplayError as e:
        print(f"tomkit conform: {e}", file=sys.stderr)
        return 2
    if args.format == "json":
        doc = report.to_dict()
        print(dumps(document(doc["verdict"], doc)))
    else:
        given = "".join(f", {k} {v}" for k, v in options.items())
        print(f"tomkit conform: protocol {args.protocol}{given}; {len(report.traces)} "
              "trace(s)")
        for tid, reps in report.traces.items():
            for p, r in reps.items():
                state = "conforms" if not r.differences else \
                    f"{len(r.differences)} difference(s)"
                print(f"trace {tid} {p}: {len(r.implementation)} deliveries, model "
                      f"{len(r.model)}; {state}; {r.later_than_model} later than the model")
                if r.differences:
                    print(f"    first: {r.differences[0].kind}: {r.differences[0].explanation}")
        print("verdict: " + ("conforms" if report.conforms else "differs from the model"))
    return report.exit_code()
