"""``tomkit conform``: replay a recorded trace through a reference model and report where the
implementation's deliveries differ (``model/conform.py``).

Exit codes: 0 every process delivers as the model would (or later), 1 some delivery
differs, 2 bad input.
"""

from __future__ import annotations

import argparse
import sys

__all__ = ["add_parser", "run"]


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    f = subparsers.add_parser(
        "conform", help="replay a trace's DAG through a reference delivery rule and report "
        "where the implementation's deliveries differ",
        description="Exit 0: every process delivers as the rule would (or later); 1: some "
        "delivery differs (order, set, or earlier than the rule allows); 2: bad input.")
    f.add_argument("files", nargs="+", metavar="TRACE")
    f.add_argument("--rule", required=True, help="all-ack, toto, s-toto, g-toto, gl-toto")
    f.add_argument("--delta", type=int, help="the rule's threshold delta")
    f.add_argument("--format", choices=["text", "json"], default="text")
    f.set_defaults(func=run)
    return f


def run(args: argparse.Namespace) -> int:
    import json

    from tomkit.model.conform import ReplayError, replay
    from tomkit.traces.errors import TraceFormatError
    from tomkit.traces.reader import read_records

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
            reports = replay(recs, args.rule, args.delta)
        except ReplayError as e:
            print(f"tomkit conform: trace {tid}: {e}", file=sys.stderr)
            return 2
        out[tid] = reports
        differs |= any(r.differences for r in reports.values())
    if args.format == "json":
        doc = {tid: {p: {"implementation": r.implementation, "model": r.model,
                         "later_than_rule": r.later_than_rule,
                         "differences": [{"kind": d.kind, "msg": d.msg, "index": d.index,
                                          "event": d.event, "explanation": d.explanation}
                                         for d in r.differences]}
                     for p, r in reps.items()} for tid, reps in out.items()}
        print(json.dumps({"rule": args.rule, "delta": args.delta, "conforms": not differs,
                          "traces": doc}, indent=1))
    else:
        print(f"tomkit conform: rule {args.rule}" + (f", delta {args.delta}" if args.delta
                                                     else "") + f"; {len(out)} trace(s)")
        for tid, reps in out.items():
            for p, r in reps.items():
                state = "conforms" if not r.differences else \
                    f"{len(r.differences)} difference(s)"
                print(f"trace {tid} {p}: {len(r.implementation)} deliveries, rule "
                      f"{len(r.model)}; {state}; {r.later_than_rule} later than the rule")
                if r.differences:
                    print(f"    first: {r.differences[0].kind}: {r.differences[0].explanation}")
        print("verdict: " + ("differs from the rule" if differs else "conforms"))
    return 1 if differs else 0
