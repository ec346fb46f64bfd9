"""``tomkit prove RULE --n N [--delta D]``: prove a delivery rule safe, or refute it.

For each (n, delta) (every delta the rule accepts when ``--delta`` is not given) it
decides the four properties of ``checker/prove/solve.py`` (agreement, stability,
internal and external stability) on one activation with at most K messages per
processor, and prints one line: proved / counterexample / unknown, the method, the time.

RULE is a built-in rule (``model.rules.RULES``), a mutant (``fuzz.mutants.MUTANTS``) or
``module:function``. A rule written in the vocabulary (``model/vocab.py``) is proved
symbolically from its own definition (``checker/prove/symbolic.py``); a rule that is not
(it raises TypeError on Z3 terms: it branches on a value, compares candidates with
``==`` ...) is checked by exhaustive enumeration for small n (``fuzz/enumerate.py``), and
the line says ``method=enumeration``. Every counterexample is replayed on the concrete
model, shrunk, and written to ``--out`` as a trace, DOT, SVG and a text explanation
(``fuzz/counterexample.py``).

Exit codes: 0 every property proved, 1 a counterexample, 2 bad input, 3 unknown
(timeout, or too large to enumerate) and no counterexample.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tomkit.checker.prove.solve import PROPERTIES, fires_somewhere, prove
from tomkit.fuzz import enumerate as en
from tomkit.fuzz.counterexample import (
    Counterexample,
    ReplayMismatch,
    counterexample_files,
    from_found,
    from_witness,
    resolve_rule,
    shrink,
)
from tomkit.model.dag import DagView
from tomkit.model.rules import Params, Rule
from tomkit.model.vocab import ConcreteRuleView

__all__ = ["Outcome", "add_parser", "allowed_deltas", "demo", "prove_rule", "run"]

#: enumeration is exhaustive up to these (n, K); beyond, the verdict is unknown
ENUM_LIMITS = {1: 2, 2: 2, 3: 2, 4: 1}


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
    s.add_argument("--property", action="append", choices=PROPERTIES, default=None,
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


@dataclass
class Outcome:
    """The verdict for one (n, delta)."""

    n: int
    delta: int | None
    status: str  # proved | counterexample | unknown
    method: str  # z3 | enumeration
    seconds: float
    k: int
    per_property: dict[str, tuple[str, float]] = field(default_factory=dict)
    counterexample: Counterexample | None = None
    note: str = ""
    files: dict[str, str] = field(default_factory=dict)

    def line(self, rule: str) -> str:
        d = "-" if self.delta is None else str(self.delta)
        props = ", ".join(f"{p} {s} {t:.1f}s" for p, (s, t) in self.per_property.items())
        note = f"  [{self.note}]" if self.note else ""
        return (f"{rule} n={self.n} delta={d}: {self.status}  method={self.method} "
                f"K={self.k}  {self.seconds:.1f}s  ({props}){note}")


def _accepts(rule: Rule, n: int, delta: int | None) -> bool:
    try:
        rule(ConcreteRuleView(DagView([f"p{q}" for q in range(n)])), Params(delta))
    except ValueError:
        return False
    return True


def allowed_deltas(rule: Rule, n: int) -> list[int | None]:
    """[None] for a rule that needs no delta; else the deltas in 1..n-1 it accepts (it
    raises ValueError for the others, as ``model.rules`` does)."""
    if _accepts(rule, n, None):
        return [None]
    return [d for d in range(1, n) if _accepts(rule, n, d)]


def _interpretable(rule: Rule, n: int, delta: int | None) -> str | None:
    """None when the rule runs on Z3 terms, else the TypeError's message."""
    from tomkit.checker.prove.encoding import make_dag, make_view
    from tomkit.checker.prove.solve import symbolic_outcome

    g = make_dag(n, 1)
    try:
        symbolic_outcome(lambda v: rule(v, Params(delta)), make_view(g, "T"), n)
    except TypeError as e:
        return str(e)
    return None


def prove_rule(name: str, rule: Rule, n: int, delta: int | None, k: int = 3,
               props: tuple[str, ...] = PROPERTIES, crashes: bool = True,
               method: str = "auto", timeout: float | None = None) -> Outcome:
    """Decide ``props`` for one (n, delta); the first counterexample found is replayed
    concretely, shrunk and attached."""
    t0 = time.perf_counter()
    note = ""
    if method in ("auto", "z3"):
        why = _interpretable(rule, n, delta)
        if why is not None:
            if method == "z3":
                raise TypeError(f"{name} is outside the rule vocabulary: {why}")
            method, note = "enumeration", f"outside the vocabulary: {why}"
        else:
            method = "z3"
    out = Outcome(n, delta, "proved", method, 0.0, k, note=note)
    params = Params(delta)
    if method == "z3":
        fn: Callable[[Any], Any] = lambda v: rule(v, params)  # noqa: E731
        for p in props:
            if p == "stability" and out.per_property.get("agreement", ("",))[0] == "proved":
                out.per_property[p] = ("implied", 0.0)  # a special case of agreement
                continue
            r = prove(fn, n, k, p, timeout=timeout, crashes=crashes)
            out.per_property[p] = (r.status, r.seconds)
            if r.status == "counterexample":
                assert r.witness is not None
                cx = from_witness(r.witness, name, delta)
                out.counterexample = shrink(cx, rule)  # validates the Z3 witness concretely
                out.status = "counterexample"
                break
            if r.status == "unknown":
                out.status = "unknown"
        if out.status == "proved" and fires_somewhere(fn, n, k, timeout) is False:
            out.note = (out.note + "; " if out.note else "") + "vacuous: the rule never fires"
    else:
        ek = min(k, ENUM_LIMITS.get(n, 0))
        out.k = ek
        if ek == 0:
            out.status = "unknown"
            out.note = (note + "; " if note else "") + f"n = {n} is too large to enumerate"
        else:
            shapes = list(en.dag_shapes(n, ek))
            for p in props:
                t1 = time.perf_counter()
                res = en.search(lambda v: rule(v, params), n, ek, p, crashes=crashes,
                                shapes=shapes)
                out.per_property[p] = ("counterexample" if res.found else "proved",
                                       time.perf_counter() - t1)
                if res.found:
                    out.counterexample = shrink(from_found(res.found, name, delta), rule)
                    out.status = "counterexample"
                    break
    out.seconds = time.perf_counter() - t0
    return out


def _stem(name: str, o: Outcome) -> str:
    safe = name.replace(":", "_").replace("/", "_")
    return f"{safe}-n{o.n}-d{'-' if o.delta is None else o.delta}"


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
    props = tuple(args.property) if args.property else PROPERTIES
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
                    files = counterexample_files(cx, args.out, _stem(args.rule, o), rule)
                    print("  wrote " + ", ".join(files[x] for x in ("trace", "svg", "txt")))
                worst = 1
            elif o.status == "unknown" and worst == 0:
                worst = 3
    return worst


def demo(out_dir: str | os.PathLike) -> str:
    """For ``make demo``: prove ToTo for n = 4 (every delta), refute S-ToTo without
    internal stability at n = 6, delta = 3, and draw its counterexample. Returns a short
    report naming the files."""
    from tomkit.fuzz.counterexample import explain

    lines = ["tomkit prove (Z3, one activation, K = 3 messages per processor):"]
    rule = resolve_rule("toto")
    for d in allowed_deltas(rule, 4):
        lines.append("  " + prove_rule("toto", rule, 4, d).line("toto"))
    bad = resolve_rule("s-toto-no-internal")
    o = prove_rule("s-toto-no-internal", bad, 6, 3, props=("agreement",))
    lines.append("  " + o.line("s-toto-no-internal"))
    if o.counterexample is not None:
        files = counterexample_files(o.counterexample, out_dir,
                                     _stem("s-toto-no-internal", o), bad)
        lines.append(f"  counterexample picture: {files['svg']}")
        lines.append(f"  trace on which 'tomkit check' fails: {files['trace']}")
        lines += ["    " + x for x in explain(o.counterexample, bad).splitlines()]
    return "\n".join(lines)
