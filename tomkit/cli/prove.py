"""``tomkit prove RULE --n N [--delta D]``: prove a delivery rule safe, or refute it.

For each (n, delta) (every delta the rule accepts when ``--delta`` is not given) it
decides the four activation queries of ``fuzz/prove/solve.py`` (agreement, stability,
internal and external stability) on one activation with at most K messages per
processor, and prints one line: proved / counterexample / unknown, the method, the time.

RULE is a built-in rule (``model.rules.RULES``), a mutant (``model.mutants.MUTANTS``) or
``module:function``; the work is :mod:`tomkit.fuzz.prove.rules`'s. Every counterexample
is written to ``--out`` as a trace, DOT, SVG and a text explanation
(``fuzz/counterexample.py``); a rule outside the vocabulary is enumerated and the line
says ``method=enumeration``.

Exit codes: 0 every property proved, 1 a counterexample, 2 bad input, 3 unknown
(timeout, or too large to enumerate) and no counterexample.
"""

from __future__ import annotations

import argparse
import sys

from tomkit.fuzz.counterexample import ReplayMismatch, counterexample_files
from tomkit.fuzz.prove.rules import allowed_deltas, prove_rule, stem
from tomkit.fuzz.prove.solve import QUERIES
from tomkit.model.mutants import resolve_rule

__all__ = ["add_parser", "run"]


def _range(text: str) -> tuple[int, int]:
    lo, sep, hi = text.partition("-")
    try:
        a = int(lo)
        b = int(hi) if sep else a
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected N or A-B, got {text!r}") from None
    if not 1 <= a <= b:
        raise argparse.ArgumentTypeError(f"expected 1 <= A <= B, got {text!r}")
    return a, b


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``prove`` subcommand to ``subparsers``."""
    s = subparsers.add_parser(
        "prove", help="prove a delivery rule's agreement and stability with Z3, or refute it",
        description="Encode one activation of a ToTo-family delivery rule (papers 000, "
        "002) for n processors and ask Z3 whether two views of the same DAG can deliver "
        "differently (docs/prove.md). Prints proved / counterexample per (n, delta).")
    s.add_argument("rule", metavar="RULE",
                   help="all-ack, toto, s-toto, g-toto, gl-toto, a mutant (toto-low-delta, "
                   "s-toto-no-internal, g-toto-no-ntail, majority) or module:function")
    s.add_argument("--n", type=_range, required=True, metavar="N",
                   help="number of processors, or a range A-B")
    s.add_argument("--delta", type=int, default=None,
                   help="the rule's delta (default: every delta the rule accepts)")
    s.add_argument("--k", type=int, default=3,
                   help="messages per processor in the DAG (default 3, which is complete "
                   "for one activation; see docs/prove.md)")
    s.add_argument("--property", action="append", choices=QUERIES, default=None,
                   help="check only this property (repeatable; default all four)")
    s.add_argument("--no-crashes", action="store_true", help="no Crash(q) events")
    s.add_argument("--method", choices=("auto", "z3", "enumeration"), default="auto",
                   help="auto: Z3, or enumeration for rules outside the vocabulary")
    s.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="per Z3 query (default none)")
    s.add_argument("--out", default=None, metavar="DIR",
                   help="write counterexamples here (trace .jsonl, .dot, .svg, .txt)")
    s.set_defaults(func=run)
    return s


def run(args: argparse.Namespace) -> int:
    try:
        rule = resolve_rule(args.rule)
    except ValueError as e:
        print(f"tomkit prove: {e}", file=sys.stderr)
        return 2
    if args.k < 1:
        print(f"tomkit prove: --k must be at least 1, got {args.k}", file=sys.stderr)
        return 2
    lo, hi = args.n
    props = tuple(args.property) if args.property else QUERIES
    worst = 0
    for n in range(lo, hi + 1):
        deltas = allowed_deltas(rule, n)
        if args.delta is not None:
            if args.delta not in deltas and deltas != [None]:
                print(f"tomkit prove: {args.rule} does not accept delta = {args.delta} with "
                      f"n = {n} (it accepts {deltas or 'none'})", file=sys.stderr)
                return 2
            deltas = [args.delta]
        if not deltas:
            print(f"{args.rule} n={n}: no delta in 1..{n - 1} is allowed; skipped")
            continue
        for d in deltas:
            try:
                o = prove_rule(args.rule, rule, n, d, args.k, props, not args.no_crashes,
                               args.method, args.timeout)
            except TypeError as e:
                print(f"tomkit prove: {e}", file=sys.stderr)
                return 2
            except ReplayMismatch as e:
                print(f"tomkit prove: INTERNAL ERROR, a counterexample did not replay "
                      f"concretely: {e}", file=sys.stderr)
                return 2
            print(o.line(args.rule), flush=True)
            if o.counterexample is not None:
                cx = o.counterexample
                print(f"  {cx.property}: V1 sees {len(cx.views[0].messages)} messages and "
                      f"delivers {list(cx.delivered[0])}; V2 sees "
                      f"{len(cx.views[1].messages)} and delivers {list(cx.delivered[1])}")
                if args.out:
                    files = counterexample_files(cx, args.out, stem(args.rule, o), rule)
                    print("  wrote " + ", ".join(files[x] for x in ("trace", "svg", "txt")))
                worst = 1
            elif o.status == "unknown" and worst == 0:
                worst = 3
    return worst
