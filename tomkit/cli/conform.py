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
    f.add_argument("files", nargs="+", metavar="TRACE")
    add_protocol_arguments(f, required=True)
    f.add_argument("--format", choices=["text", "json"], default="text")
    f.set_defaults(func=run)
    return f


def run(args: argparse.Namespace) -> int:
    import json

    from tomkit.model.conform import ReplayError, replay
    from tomkit.model.protocols import protocol
    from tomkit.traces.errors import TraceFormatError
    from tomkit.traces.reader import read_records

    try:
        options = protocol_options(args, protocol(args.protocol))
    except ValueError as e:
        print(f"tomkit conform: {e}", file=sys.stderr)
        return 2
    traces: dict[str, list[dict]] = {}
    try:
        for path in args.files:
            for r in read_records(path):
                traces.setdefault(r["trace"], []).append(r)
    except TraceFormatError as e:
        print(f"tomkit conform: bad input: {e}", file=sys.stderr)
        return 2
    out: dict[str, dict] = {}
    differs = False
    for tid, recs in traces.items():
        try:
            reports = replay(recs, args.protocol, options)
        except ReplayError as e:
            print(f"tomkit conform: trace {tid}: {e}", file=sys.stderr)
            return 2
        out[tid] = reports
        differs |= any(r.differences for r in reports.values())
    if args.format == "json":
        doc = {tid: {p: {"implementation": r.implementation, "model": r.model,
                         "later_than_model": r.later_than_model,
                         "differences": [{"kind": d.kind, "msg": d.msg, "index": d.index,
                                          "event": d.event, "explanation": d.explanation}
                                         for d in r.differences]}
                     for p, r in reps.items()} for tid, reps in out.items()}
        print(json.dumps({"protocol": args.protocol, "options": options,
                          "conforms": not differs, "traces": doc}, indent=1))
    else:
        given = "".join(f", {k} {v}" for k, v in options.items())
        print(f"tomkit conform: protocol {args.protocol}{given}; {len(out)} trace(s)")
        for tid, reps in out.items():
            for p, r in reps.items():
                state = "conforms" if not r.differences else \
                    f"{len(r.differences)} difference(s)"
                print(f"trace {tid} {p}: {len(r.implementation)} deliveries, model "
                      f"{len(r.model)}; {state}; {r.later_than_model} later than the model")
                if r.differences:
                    print(f"    first: {r.differences[0].kind}: {r.differences[0].explanation}")
        print("verdict: " + ("differs from the model" if differs else "conforms"))
    return 1 if differs else 0
