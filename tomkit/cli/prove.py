"""``tomkit prove RULE --n N [--delta D]``: prove a delivery rule safe, or refute it;
``tomkit prove --protocol abcast|tomp [--n N] [--variant NAME]``: prove ABCAST or TOMP;
``tomkit prove --protocol qos [--n N]``: prove 003's latency bound (``qos_bound.py``).

For each (n, delta) (every delta the rule accepts when ``--delta`` is not given) it
decides the four activation queries of ``fuzz/prove/delivery/solve.py`` (agreement, stability,
internal and external stability) on one activation with at most K messages per
processor, and prints one line: proved / counterexample / unknown, the method, the time.

RULE is a built-in rule (``model.rules.RULES``), a mutant (``model.mutants.MUTANTS``) or
``module:function``; the work is :mod:`tomkit.fuzz.prove.delivery.prove`'s. Every counterexample
is written to ``--out`` as a trace, DOT, SVG and a text explanation
(``fuzz/counterexample.py``); a rule outside the vocabulary is enumerated and the line
says ``method=enumeration``.

With ``--protocol`` (004, Dasser: ABCAST and TOMP) it decides, for each n, the queries
of ``fuzz/prove/timestamps/solve.py`` (base case, the inductive step per transition, safety) on
the invariant of ``fuzz/prove/timestamps/invariant.py`` and prints one line; a broken variant
fails the step and is refuted by a shortest run found by bounded model checking, replayed
on the model and written to ``--out`` as a trace and a text (``fuzz/prove/timestamps/replay.py``).

Exit codes: 0 every property proved, 1 a counterexample, 2 bad input, 3 unknown
(timeout, or too large to enumerate) and no counterexample.
"""

from __future__ import annotations

import argparse
import sys

from tomkit.fuzz.counterexample import ReplayMismatch, counterexample_files
from tomkit.fuzz.prove.delivery.prove import allowed_deltas, prove_rule, stem
from tomkit.fuzz.prove.delivery.solve import ENCODINGS, QUERIES
from tomkit.fuzz.prove.timestamps.replay import write_run
from tomkit.fuzz.prove.timestamps.solve import prove_protocol
from tomkit.fuzz.prove.timestamps.state import PROTOCOLS, VARIANTS
from tomkit.model.toto.mutants import MUTANTS, resolve_rule

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
    variants = sorted({v for vs in VARIANTS.values() for v in vs})
    s = subparsers.add_parser(
        "prove", help="prove a delivery rule, or ABCAST / TOMP, safe with Z3, or refute it",
        description="Encode one activation of a ToTo-family delivery rule (papers 000, "
        "002) for n processors and ask Z3 whether two views of the same DAG can deliver "
        "differently; or, with --protocol, prove the delivery conditions of ABCAST or "
        "TOMP (004) safe by induction (docs/prove.md). Prints proved / counterexample / "
        "unknown per (n, delta), or per n.")
    s.add_argument("rule", metavar="RULE", nargs="?", default=None,
                   help="all-ack, toto, s-toto, g-toto, gl-toto, a mutant "
                   f"({', '.join(MUTANTS)}) or module:function; leave it out with "
                   "--protocol")
    s.add_argument("--protocol", choices=(*PROTOCOLS, "qos"), default=None,
                   help="prove ABCAST or TOMP (004) instead of a delivery rule")
    s.add_argument("--variant", choices=variants, default=None,
                   help="with --protocol: a broken variant to refute (abcast: "
                   f"{', '.join(VARIANTS['abcast'])}; tomp also raise-all)")
    s.add_argument("--n", type=_range, default=None, metavar="N",
                   help="number of processors, or a range A-B (required with RULE; "
                   "default 3 with --protocol)")
    s.add_argument("--delta", type=int, default=None,
                   help="the rule's delta (default: every delta the rule accepts)")
    s.add_argument("--k", type=int, default=None,
                   help="messages per processor in the DAG (default 3, which is complete "
                   "for one activation; see docs/prove.md)")
    s.add_argument("--property", action="append", choices=QUERIES, default=None,
                   help="check only this property (repeatable; default all four)")
    s.add_argument("--no-crashes", action="store_true", help="no Crash(q) events")
    s.add_argument("--first-model", action="store_true",
                   help="keep Z3's first counterexample (shrunk greedily) instead of the "
                   "smallest one (fewest messages, then fewest causal edges)")
    s.add_argument("--method", choices=("auto", "z3", "enumeration"), default="auto",
                   help="auto: Z3, or enumeration for rules outside the vocabulary")
    s.add_argument("--encoding", choices=ENCODINGS, default="facts",
                   help="Z3 encoding of a delivery rule (docs/prove.md); classic: issue 4's")
    s.add_argument("--max-steps", type=int, default=None, metavar="K",
                   help="with --protocol: the longest run the counterexample search tries "
                   "(default: 6 steps over the shortest possible)")
    s.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="per Z3 query (default none); with --protocol the search too")
    s.add_argument("--out", default=None, metavar="DIR",
                   help="write counterexamples here (rules: trace .jsonl, .dot, .svg, .txt; "
                   "protocols: trace .jsonl and .txt)")
    s.set_defaults(func=run)
    return s


def _fail(msg: str) -> int:
    print(f"tomkit prove: {msg}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    if args.timeout is not None and not args.timeout > 0:  # NaN too
        return _fail(f"--timeout must be a positive number of seconds, got {args.timeout}")
    if args.protocol == "qos":
        return run_qos(args)
    if args.protocol is not None:
        return run_protocol(args)
    if args.rule is None:
        return _fail("give a RULE or --protocol abcast|tomp")
    if args.variant is not None or args.max_steps is not None:
        return _fail("--variant and --max-steps go with --protocol, not with a RULE")
    if args.n is None:
        return _fail("--n is required with a RULE")
    if args.k is None:
        args.k = 3
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
                               args.method, args.timeout, minimal=not args.first_model,
                               encoding=args.encoding)
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
                msgs, edges = cx.size()
                sz = o.sizes
                if sz is not None:
                    print(f"  smallest DAG: {msgs} messages, {edges} causal edges between "
                          f"processors ({'proved minimal' if sz.proved else 'minimum not proved'}"
                          f" for K = {o.k}; Z3's first model had {sz.messages_first} and "
                          f"{sz.edges_first})")
                else:
                    print(f"  DAG: {msgs} messages, {edges} causal edges between processors")
                if args.out:
                    files = counterexample_files(cx, args.out, stem(args.rule, o), rule)
                    print("  wrote " + ", ".join(files[x] for x in ("trace", "svg", "txt")))
                worst = 1
            elif o.status == "unknown" and worst == 0:
                worst = 3
    return worst


def run_protocol(args: argparse.Namespace) -> int:
    """``--protocol``: one line per n (docs/prove.md, "ABCAST and TOMP")."""
    if args.rule is not None:
        return _fail(f"give a RULE or --protocol, not both (got {args.rule!r})")
    rule_only = [name for name, given in (
        ("--delta", args.delta is not None), ("--k", args.k is not None),
        ("--property", bool(args.property)), ("--no-crashes", args.no_crashes),
        ("--first-model", args.first_model),
        ("--method", args.method != "auto")) if given]
    if rule_only:
        return _fail(f"{', '.join(rule_only)} go with a RULE, not with --protocol")
    if args.variant is not None and args.variant not in VARIANTS[args.protocol]:
        return _fail(f"{args.protocol} has no variant {args.variant!r}; it has "
                     f"{', '.join(VARIANTS[args.protocol])}")
    lo, hi = args.n if args.n is not None else (3, 3)
    if lo < 2:
        return _fail(f"--protocol needs n >= 2 hosts, got {lo}")
    if args.max_steps is not None and args.max_steps < 1:
        return _fail(f"--max-steps must be at least 1, got {args.max_steps}")
    worst = 0
    for n in range(lo, hi + 1):
        try:
            o = prove_protocol(args.protocol, n, args.variant, args.timeout,
                               max_steps=args.max_steps)
        except ReplayMismatch as e:
            print(f"tomkit prove: INTERNAL ERROR, a counterexample did not replay "
                  f"concretely: {e}", file=sys.stderr)
            return 2
        print(o.line(), flush=True)
        run_ = o.search.run if o.search is not None else None
        if run_ is not None:
            a, b, x, y = run_.violation
            print(f"  total order: p{a} delivers {x} before {y}; p{b} delivers {y} without "
                  f"{x} before it ({len(run_.steps)} steps, {len(run_.messages)} messages)")
            if args.out:
                variant = args.variant or "as-specified"
                files = write_run(run_, args.out, f"{args.protocol}-{variant}-n{n}")
                print("  wrote " + ", ".join(files[k] for k in ("trace", "txt")))
            worst = 1
        elif o.status == "unknown" and worst == 0:
            worst = 3
    return worst


def run_qos(args: argparse.Namespace) -> int:
    """``--protocol qos``: the latency bound of Bar-Joseph, Keidar, Anker and Lynch, per n,
    without and with a crash (``fuzz/prove/qos_bound.py``); the bound one epsilon smaller
    is refuted and its run written to ``--out``."""
    from tomkit.fuzz.prove.qos_bound import prove_qos

    if args.rule is not None or args.variant is not None:
        return _fail("--protocol qos takes no RULE and no --variant")
    rule_only = [name for name, given in (
        ("--delta", args.delta is not None), ("--k", args.k is not None),
        ("--property", bool(args.property)), ("--no-crashes", args.no_crashes),
        ("--first-model", args.first_model), ("--method", args.method != "auto"),
        ("--max-steps", args.max_steps is not None)) if given]
    if rule_only:
        return _fail(f"{', '.join(rule_only)} do not go with --protocol qos")
    lo, hi = args.n if args.n is not None else (2, 16)
    if lo < 2:
        return _fail(f"--protocol qos needs n >= 2 processes, got {lo}")
    worst = 0
    for n in range(lo, hi + 1):
        for crashes in (0, 1):
            o = prove_qos(n, crashes, args.timeout, args.out)
            print(o.line(), flush=True)
            if o.files:
                print("  wrote " + ", ".join(o.files[k] for k in ("trace", "txt")))
            if o.status == "counterexample":
                worst = 1
            elif o.status == "unknown" and worst == 0:
                worst = 3
    return worst
