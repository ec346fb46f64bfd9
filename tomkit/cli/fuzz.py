"""``tomkit fuzz RULE``: Hypothesis stateful fuzzing of a delivery rule.

``--machine dag`` (default) runs :mod:`tomkit.fuzz.dag_machine` (the rule on DAG views
revealed in adversarial orders, agreement as an invariant, liveness after draining);
``--machine process`` runs :mod:`tomkit.fuzz.process_machine` (the full process models
on a lossy, reordering network with crashes, the trace checkers as invariants). RULE is
a built-in rule, a mutant of ``model/mutants.py`` or ``module:function``, as for
``tomkit prove``. The run is deterministic given ``--seed`` (printed); ``--examples``
bounds the runs Hypothesis tries. A failure is shrunk by Hypothesis, then written to
``--out``: the run as a v1 trace (``tomkit check`` rejects it), and for an agreement
failure the activation where the two processors parted as a counterexample of
``fuzz/counterexample.py`` (trace, DOT, SVG, explanation). Exit codes: 0 nothing found,
1 a failure, 2 bad input.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

__all__ = ["add_parser", "run"]


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    f = subparsers.add_parser(
        "fuzz", help="fuzz a delivery rule with Hypothesis; shrink and draw what fails",
        description=__doc__.split("\n\n")[1].replace("``", "'"))
    f.add_argument("rule", help="all-ack, toto, s-toto, g-toto, gl-toto, a mutant, or "
                   "module:function")
    f.add_argument("--n", type=int, default=4, help="processors (default 4)")
    f.add_argument("--delta", type=int, default=None,
                   help="the rule's delta (default ceil(n/2); none for all-ack, majority)")
    f.add_argument("--examples", type=int, default=200,
                   help="runs to try (default 200)")
    f.add_argument("--messages", type=int, default=14,
                   help="messages per run, at most (default 14)")
    f.add_argument("--machine", choices=("dag", "process"), default="dag")
    f.add_argument("--seed", type=int, default=1)
    f.add_argument("--no-shrink", action="store_true",
                   help="report the first failing run as found (faster, larger)")
    f.add_argument("--out", default="fuzz-out", help="where failures are written")
    f.set_defaults(func=run)
    return f


def run(args: argparse.Namespace) -> int:
    from tomkit.fuzz.counterexample import counterexample_files, resolve_rule
    from tomkit.fuzz.stateful import default_delta, fuzz
    from tomkit.traces.writer import write_records

    try:
        rule_fn = resolve_rule(args.rule)
    except ValueError as e:
        print(f"tomkit fuzz: {e}", file=sys.stderr)
        return 2
    if args.n < 2 or args.examples < 1:
        print("tomkit fuzz: --n must be >= 2 and --examples >= 1", file=sys.stderr)
        return 2
    delta = args.delta if args.delta is not None else default_delta(args.rule, args.n)
    print(f"seed {args.seed}")
    print(f"fuzzing {args.rule} n={args.n} delta={delta} ({args.machine} machine, "
          f"{args.examples} examples, up to {args.messages} messages)", flush=True)
    t0 = time.perf_counter()
    try:
        failure = fuzz(args.rule, args.n, delta, args.examples, args.seed, args.machine,
                       args.messages, shrink=not args.no_shrink)
    except ValueError as e:  # e.g. a delta the rule refuses
        print(f"tomkit fuzz: {e}", file=sys.stderr)
        return 2
    took = time.perf_counter() - t0
    if failure is None:
        print(f"no failure in {args.examples} examples ({took:.1f} s)")
        return 0
    found = failure.found
    how = "as found" if args.no_shrink else "after shrinking"
    print(f"FAILED ({found.kind}) {how}, {took:.1f} s: {found.describe()}")
    os.makedirs(args.out, exist_ok=True)
    stem = f"{args.rule.replace(':', '.')}-n{args.n}-d{delta}-{found.kind}"
    run_path = os.path.join(args.out, stem + ".run.jsonl")
    if os.path.exists(run_path):
        os.remove(run_path)
    write_records(run_path, found.records)
    flag = " --liveness" if found.kind == "liveness" else ""
    print(f"the {'' if args.no_shrink else 'shrunk '}run, as a trace: {run_path} "
          f"(tomkit check{flag} rejects it)")
    if args.machine == "dag":
        from tomkit.fuzz.dag_machine import activation_counterexample

        cx = activation_counterexample(found, rule_fn)
        if cx is not None:
            files = counterexample_files(cx, args.out, stem, rule_fn)
            print("the activation where they part: " + ", ".join(files.values()))
    return 1
