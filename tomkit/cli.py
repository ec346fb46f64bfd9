"""The ``tomkit`` command line.

Exit codes follow the checkers: 0 every checked property holds (unknowns
are reported, not failures), 1 some property is violated, 2 bad input or
usage.
"""

from __future__ import annotations

import argparse
import sys

from tomkit import __version__


def _check(args: argparse.Namespace) -> int:
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


def _sample(args: argparse.Namespace) -> int:
    from tomkit.traces.generate import FAULTS, clean_trace, faulty_trace
    from tomkit.traces.writer import write_records

    if args.fault and args.fault not in FAULTS:
        print(f"tomkit sample: unknown fault {args.fault}; known: {', '.join(FAULTS)}",
              file=sys.stderr)
        return 2
    records = []
    truths = []
    kw = dict(n_processes=args.processes, n_messages=args.messages, views=args.views)
    for i in range(args.traces):
        tid = f"t{i}"
        seed = args.seed + i
        if args.fault:
            recs, truth = faulty_trace(tid, args.fault, seed=seed, **kw)
            truths.append(truth)
        else:
            recs = clean_trace(tid, seed=seed, **kw)
        records.extend(recs)
    n = write_records(args.out, records, grouped=True)
    what = f"trace(s) with a planted '{args.fault}' fault" if args.fault else "clean trace(s)"
    print(f"wrote {n} events of {args.traces} {what} to {args.out} (seed {args.seed})")
    for t in truths:
        print(f"  planted in {t['trace']}: {t['fault']} -> {t['property']}")
    return 0


def _conform(args: argparse.Namespace) -> int:
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tomkit",
        description="Formal models and conformance checking for totally ordered multicast.")
    parser.add_argument("--version", action="version", version=f"tomkit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    c = sub.add_parser("check", help="check delivery traces against the safety properties",
                       description="Check the traces in FILE... (JSON Lines, plain or gzip, or "
                       "Parquet). Exit 0: all checked properties hold; 1: a property is "
                       "violated; 2: bad input or usage.")
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
    c.set_defaults(func=_check)

    f = sub.add_parser("conform", help="replay a trace's DAG through a reference delivery "
                       "rule and report where the implementation's deliveries differ",
                       description="Exit 0: every process delivers as the rule would (or "
                       "later); 1: some delivery differs (order, set, or earlier than the rule "
                       "allows); 2: bad input.")
    f.add_argument("files", nargs="+", metavar="TRACE")
    f.add_argument("--rule", required=True, help="all-ack, toto, s-toto, g-toto, gl-toto")
    f.add_argument("--delta", type=int, help="the rule's threshold delta")
    f.add_argument("--format", choices=["text", "json"], default="text")
    f.set_defaults(func=_conform)

    from tomkit.model.simulate_cli import add_parser as add_simulate

    add_simulate(sub)

    from tomkit.model.acksim_cli import add_parser as add_simulate_ack

    add_simulate_ack(sub)

    from tomkit.checker.spark.scan_cli import add_parser as add_scan
    from tomkit.model.generate_cli import add_parser as add_generate

    add_generate(sub)
    add_scan(sub)

    from tomkit.checker.tlc_cli import add_parser as add_tlc
    from tomkit.fuzz.fuzz_cli import add_parser as add_fuzz
    from tomkit.fuzz.prove_cli import add_parser as add_prove

    add_tlc(sub)
    add_prove(sub)
    add_fuzz(sub)

    s = sub.add_parser("sample", help="write small synthetic traces, clean or with a planted "
                       "fault, to try the checker on")
    s.add_argument("--out", required=True, metavar="FILE",
                   help=".jsonl, .jsonl.gz or .parquet")
    s.add_argument("--fault", metavar="NAME", help="plant this fault in every trace")
    s.add_argument("--traces", type=int, default=1)
    s.add_argument("--processes", type=int, default=4)
    s.add_argument("--messages", type=int, default=12)
    s.add_argument("--views", action="store_true", help="log view events")
    s.add_argument("--seed", type=int, default=1)
    s.set_defaults(func=_sample)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
