"""``tomkit fuzz``: Hypothesis stateful fuzzing of a protocol, or of a delivery rule.

``tomkit fuzz --protocol P`` runs :mod:`tomkit.fuzz.process_machine` over the processes
of any protocol (its options, such as ``--variant``, as ``tomkit simulate`` takes them):
a network that reorders (and, where the protocol tolerates it, loses and duplicates),
crashes and crash notices, the trace checkers as invariants, liveness after draining.
``tomkit fuzz RULE`` (or ``--rule RULE``) fuzzes a ToTo-family delivery rule (a
built-in rule, a mutant of ``model/toto/mutants.py`` or ``module:function``, as for
``tomkit prove``): ``--machine dag``
(default) runs :mod:`tomkit.fuzz.dag_machine` (the rule on DAG views revealed in
adversarial orders, agreement as an invariant, liveness after draining), ``--machine
process`` the process machine of the ToTo family with that rule. The run is
deterministic given ``--seed`` (printed); ``--examples`` bounds the runs Hypothesis
tries. A failure is shrunk by Hypothesis, then written to ``--out``: the run as a v1
trace (``tomkit check`` rejects it), and for an agreement failure of the DAG machine the
activation where the two processors parted as a counterexample of
``fuzz/counterexample.py`` (trace, DOT, SVG, explanation). Exit codes: 0 nothing found,
1 a failure, 2 bad input.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from tomkit.cli.common import add_protocol_arguments, protocol_options
from tomkit.cli.parser import not_a_folder
from tomkit.cli.verdict_json import document, dumps
from tomkit.model.protocols import PROTOCOLS
from tomkit.traces.interrupt import add_note

__all__ = ["add_parser", "run"]

#: the protocol form's defaults: runs, and messages per run (measured: every broken
#: variant of ABCAST and TOMP is found within them, README)
PROTOCOL_EXAMPLES, PROTOCOL_MESSAGES = 1000, 8
#: the most --examples taken without --no-size-limit: a run (an example) took 25 to 45
#: ms of CPU at n = 4 (toto, abcast; docs/cli.md), so 100,000 take about an hour of CPU,
#: more at larger n
LARGEST_EXAMPLES = 100_000
#: CPU seconds an example costs at the least (n = 4), for the refusal's estimate
EXAMPLE_SECONDS = 0.025
#: the largest --n measured (docs/cli.md): a run of toto or abcast at n = 100 took about
#: 3 s of CPU, so the default runs take 10 to 50 minutes there; beyond, --no-size-limit
LARGEST_N = 100


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    f = subparsers.add_parser(
        "fuzz", help="fuzz a protocol or a delivery rule with Hypothesis; shrink and draw "
        "what fails", description=__doc__.split("\n\n")[1].replace("``", "'"))
    f.add_argument("rule_name", nargs="?", metavar="RULE",
                   help="the rule form: all-ack, toto, s-toto, g-toto, gl-toto, a mutant, "
                   "or module:function")
    add_protocol_arguments(f, default=None)
    f.add_argument("--n", type=int, default=4, help="processes (default 4)")
    f.add_argument("--examples", "--runs", type=int, default=None,
                   help=f"runs to try (default 200; {PROTOCOL_EXAMPLES} with --protocol)")
    f.add_argument("--messages", type=int, default=None,
                   help=f"messages per run, at most (default 14; {PROTOCOL_MESSAGES} with "
                   "--protocol)")
    f.add_argument("--crashes", type=int, default=None,
                   help="--protocol: crashes per run, at most (default a minority, for "
                   "protocols that handle crashes)")
    f.add_argument("--machine", choices=("dag", "process"), default="dag",
                   help="the rule form's machine")
    f.add_argument("--spares", type=int, default=0,
                   help="processes outside the first view, which join (a protocol that "
                   "honours join)")
    f.add_argument("--comebacks", type=int, default=0,
                   help="joins and recoveries the fuzzer may play (the hybrid: default 3 "
                   "when --spares is given)")
    f.add_argument("--no-size-limit", action="store_true",
                   help=f"run an --n above {LARGEST_N}, the largest measured (each run's "
                   f"time grows with n), or more than {LARGEST_EXAMPLES:,} --examples")
    f.add_argument("--seed", type=int, default=1)
    f.add_argument("--no-shrink", action="store_true",
                   help="report the first failing run as found (faster, larger)")
    f.add_argument("--out", default="fuzz-out", help="where failures are written")
    f.add_argument("--format", "--output-format", choices=["text", "json"], default="text",
                   help="json: one object on stdout (docs/cli.md, 'One JSON shape'); the "
                   "text lines go to stderr")
    f.set_defaults(func=run)
    return f


def run(args: argparse.Namespace) -> int:
    said = "--rule" if args.protocol is None and args.rule is not None else "RULE"
    if args.protocol is None and args.rule is not None:
        # --rule R alone is the rule form, as 'tomkit simulate --rule R' simulates it
        if args.rule_name is not None:
            print(f"tomkit fuzz: the rule is given twice (RULE {args.rule_name!r} and "
                  f"--rule {args.rule}): give one", file=sys.stderr)
            return 2
        args.rule_name, args.rule = args.rule, None
    if args.rule_name == "":  # an unset shell variable ("unknown rule ''")
        print(f"tomkit fuzz: {said} '': an empty name; give a rule (tomkit fuzz toto) or a "
              "protocol (tomkit fuzz --protocol abcast)", file=sys.stderr)
        return 2
    if args.rule_name is None and args.protocol is None:
        print("tomkit fuzz: nothing to fuzz: give a rule (tomkit fuzz toto, or --rule "
              "toto) or a protocol (tomkit fuzz --protocol abcast)", file=sys.stderr)
        return 2
    if args.rule_name is not None and args.protocol is not None:
        takes_rule = any(o.name == "rule" for o in PROTOCOLS[args.protocol].options)
        hint = (f" (the rule inside the protocol: --protocol {args.protocol} --rule "
                f"{args.rule_name})" if takes_rule else "")
        print(f"tomkit fuzz: a RULE ({args.rule_name!r}) and --protocol {args.protocol} "
              f"were both given: fuzz one{hint}", file=sys.stderr)
        return 2
    for flag, value, least in (("--n", args.n, 2), ("--examples", args.examples, 1),
                               ("--messages", args.messages, 1),
                               ("--crashes", args.crashes, 0), ("--seed", args.seed, 0),
                               ("--spares", args.spares, 0),
                               ("--comebacks", args.comebacks, 0)):
        if value is not None and value < least:
            print(f"tomkit fuzz: {flag} must be at least {least}, got {value}",
                  file=sys.stderr)
            return 2
    if args.n > LARGEST_N and not args.no_size_limit:
        print(f"tomkit fuzz: --n {args.n}: measured up to n = {LARGEST_N} (about 3 s of "
              "CPU a run there, so the default runs take 10 to 50 minutes); give "
              "--no-size-limit to run it anyway (and --examples N to bound the runs)",
              file=sys.stderr)
        return 2
    if args.examples is not None and args.examples > LARGEST_EXAMPLES \
            and not args.no_size_limit:
        print(f"tomkit fuzz: --examples {args.examples:,}: an example took "
              f"{EXAMPLE_SECONDS * 1000:g} to 45 ms of CPU (n = 4, measured), so these "
              f"take at least {_duration(args.examples * EXAMPLE_SECONDS)}; up to "
              f"{LARGEST_EXAMPLES:,} are taken (an hour or so); give --no-size-limit to "
              "run it anyway", file=sys.stderr)
        return 2
    bad = not_a_folder("--out", args.out)
    if bad:  # a FileExistsError traceback after the fuzzing, its finding lost
        print(f"tomkit fuzz: {bad}", file=sys.stderr)
        return 2
    return run_protocol(args) if args.protocol else run_rule(args)


def _duration(seconds: float) -> str:
    """A long time in the unit a person reads it in."""
    for unit, size in (("years", 365 * 86400), ("days", 86400), ("hours", 3600)):
        if seconds >= size:
            return f"{seconds / size:,.0f} {unit}" if seconds / size < 1e6 else \
                f"{seconds / size:.1e} {unit}"
    return f"{seconds / 60:,.0f} minutes"


def _say(args: argparse.Namespace):
    """Where the text lines go: stdout, or stderr when stdout holds the JSON."""
    return sys.stdout if args.format == "text" else sys.stderr


def _stopped(e: KeyboardInterrupt, args: argparse.Namespace) -> None:
    add_note(e, f"nothing written to {args.out}: stopped before the fuzzing ended (seed "
             f"{args.seed}: the same command runs the same examples again)")


def _report(args: argparse.Namespace, target: dict, examples: int, messages: int,
            took: float, failure, files: dict[str, str],
            found_at: int | None = None) -> None:
    """The JSON of --format json."""
    if args.format != "json":
        return
    found = None if failure is None else failure.found
    print(dumps(document("no failure" if failure is None else "failure", {
        **target, "n": args.n, "seed": args.seed, "examples": examples,
        "messages": messages, "seconds": took,
        "failure": None if found is None else {
            "kind": found.kind, "found_at": found_at,
            "shrunk": not args.no_shrink, "description": found.describe(),
            "files": files}})))


def write_run(out_dir: str, stem: str, found, shrunk: bool, file=None) -> str:
    from tomkit.checker.properties import properties
    from tomkit.traces.writer import write_records

    os.makedirs(out_dir, exist_ok=True)
    run_path = os.path.join(out_dir, stem + ".run.jsonl")
    if os.path.exists(run_path):
        os.remove(run_path)
    write_records(run_path, found.records)
    # a failure is a property of the registry: a default one is checked anyway, an
    # end-of-run one with --liveness, any other by name (003's member-liveness)
    prop = properties().get(found.kind)
    flag = ("" if prop is None or prop.default else " --liveness" if prop.liveness
            else f" -p {prop.name}")
    print(f"the {'shrunk ' if shrunk else ''}run, as a trace: {run_path} "
          f"(tomkit check{flag} rejects it)", file=file)
    return run_path


def run_protocol(args: argparse.Namespace) -> int:
    from tomkit.fuzz.stateful import fuzz_protocol
    from tomkit.model.protocols import protocol

    examples = args.examples or PROTOCOL_EXAMPLES
    messages = args.messages or PROTOCOL_MESSAGES
    try:
        options = protocol_options(args, protocol(args.protocol))
        given = "".join(f" {k}={v}" for k, v in options.items())
        say = _say(args)
        print(f"seed {args.seed}", file=say)
        print(f"fuzzing {args.protocol}{given} n={args.n} (process machine, {examples} "
              f"examples, up to {messages} messages)", flush=True, file=say)
        t0 = time.perf_counter()
        failure = fuzz_protocol(args.protocol, args.n, options, examples, args.seed,
                                messages, shrink=not args.no_shrink,
                                max_crashes=args.crashes, spares=args.spares,
                                comebacks=args.comebacks)
    except ValueError as e:
        print(f"tomkit fuzz: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:
        _stopped(e, args)
        raise
    took = time.perf_counter() - t0
    target = {"protocol": args.protocol, "rule": None,
              "options": {k: v if isinstance(v, (int, float, str, bool)) or v is None
                          else str(v) for k, v in options.items()}, "machine": "process"}
    if failure is None:
        print(f"no failure in {examples} examples ({took:.1f} s)", file=say)
        _report(args, target, examples, messages, took, None, {})
        return 0
    found = failure.found
    how = "as found" if args.no_shrink else "after shrinking"
    print(f"FAILED ({found.kind}) in example {found.found_at}, {how}, {took:.1f} s: "
          f"{found.describe()}", file=say)
    parts = [str(v) if isinstance(v, str) else f"{k}{v}" for k, v in options.items()]
    stem = "-".join([args.protocol, *parts, f"n{args.n}", found.kind])
    stem = stem.replace(":", ".").replace("/", ".")
    run_path = write_run(args.out, stem, found, not args.no_shrink, file=say)
    _report(args, target, examples, messages, took, failure, {"trace": run_path},
            found.found_at)
    return 1


def run_rule(args: argparse.Namespace) -> int:
    from tomkit.fuzz.counterexample import counterexample_files
    from tomkit.fuzz.stateful import default_delta, fuzz
    from tomkit.model.toto.mutants import resolve_rule

    if args.variant is not None or args.rule is not None or args.ack_timeout is not None \
            or args.control_records is not None or args.crashes is not None \
            or args.spares or args.comebacks:
        print("tomkit fuzz: the rule form takes --delta only (protocol options go with "
              "--protocol)", file=sys.stderr)
        return 2
    try:
        rule_fn = resolve_rule(args.rule_name)
    except ValueError as e:
        print(f"tomkit fuzz: {e}", file=sys.stderr)
        return 2
    examples = args.examples or 200
    messages = args.messages or 14
    delta = args.delta if args.delta is not None else default_delta(args.rule_name, args.n)
    say = _say(args)
    print(f"seed {args.seed}", file=say)
    print(f"fuzzing {args.rule_name} n={args.n} delta={delta} ({args.machine} machine, "
          f"{examples} examples, up to {messages} messages)", flush=True, file=say)
    t0 = time.perf_counter()
    try:
        failure = fuzz(args.rule_name, args.n, delta, examples, args.seed, args.machine,
                       messages, shrink=not args.no_shrink)
    except ValueError as e:  # e.g. a delta the rule refuses
        print(f"tomkit fuzz: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:
        _stopped(e, args)
        raise
    took = time.perf_counter() - t0
    target = {"protocol": None, "rule": args.rule_name, "options": {"delta": delta},
              "machine": args.machine}
    if failure is None:
        print(f"no failure in {examples} examples ({took:.1f} s)", file=say)
        _report(args, target, examples, messages, took, None, {})
        return 0
    found = failure.found
    how = "as found" if args.no_shrink else "after shrinking"
    print(f"FAILED ({found.kind}) {how}, {took:.1f} s: {found.describe()}", file=say)
    stem = f"{args.rule_name.replace(':', '.')}-n{args.n}-d{delta}-{found.kind}"
    files = {"trace": write_run(args.out, stem, found, not args.no_shrink, file=say)}
    if args.machine == "dag":
        from tomkit.fuzz.dag_machine import activation_counterexample

        cx = activation_counterexample(found, rule_fn)
        if cx is not None:
            drawn = counterexample_files(cx, args.out, stem, rule_fn)
            print("the activation where they part: " + ", ".join(drawn.values()), file=say)
            files.update({f"activation_{k}": v for k, v in drawn.items()})
    _report(args, target, examples, messages, took, failure, files)
    return 1
