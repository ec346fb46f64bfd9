"""The delivery-rule prover as ``tomkit prove`` runs it: ``tomkit prove RULE --n N
[--delta D]``, or ``--protocol`` with a ToTo-family protocol (its rule).

For each (n, delta) (every delta the rule accepts when ``--delta`` is not given) it
decides the four activation queries of ``solve.py`` (agreement, stability, internal and
external stability) on one activation with at most K messages per processor, and prints
one line: proved / counterexample / unknown, the method, the time. RULE is a built-in
rule (``model.toto.rules.RULES``), a mutant (``model.toto.mutants.MUTANTS``) or
``module:function``; every counterexample is written to ``--out`` as a trace, DOT, SVG
and a text explanation (``fuzz/counterexample.py``); a rule outside the vocabulary is
enumerated and the line says ``method=enumeration``. Papers: Dolev, Kramer and Malki
(000), Johnson and Maugis (002); docs/prove.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from tomkit.fuzz.counterexample import counterexample_files
from tomkit.fuzz.prove.base import Prover, ProveUsageError, n_range
from tomkit.fuzz.prove.delivery import QUERIES
from tomkit.fuzz.prove.delivery.prove import allowed_deltas, prove_rule, stem
from tomkit.fuzz.prove.delivery.solve import ENCODINGS
from tomkit.model.process import Option
from tomkit.model.toto.mutants import resolve_rule
from tomkit.model.toto.rules import RULES

__all__ = ["PROVER"]

OPTIONS = (
    Option("n", n_range, None, "number of processes, or a range A-B (required with a "
           "RULE)"),
    Option("delta", int, None, "the rule's delta (default: every delta the rule accepts)"),
    Option("k", int, 3, "messages per processor in the DAG (default 3, which is complete "
           "for one activation; see docs/prove.md)"),
    Option("property", str, (), "check only this property (repeatable; default all four)",
           QUERIES),
    Option("crashes", bool, True, "include Crash(q) events"),
    Option("first_model", bool, False, "keep Z3's first counterexample (shrunk greedily) "
           "instead of the smallest one (fewest messages, then fewest causal edges)"),
    Option("method", str, "auto", "auto: Z3, or enumeration for rules outside the "
           "vocabulary", ("auto", "z3", "enumeration")),
    Option("encoding", str, "facts", "Z3 encoding of a delivery rule (docs/prove.md); "
           "classic: issue 4's", ENCODINGS),
    Option("timeout", float, None, "seconds per Z3 query (default none; with --protocol "
           "abcast or tomp the search too)"),
    Option("out", str, None, "write counterexamples here (rules: trace .jsonl, .dot, .svg, "
           ".txt; protocols: trace .jsonl and .txt)"),
)


def run(protocol: str | None, rule_name: str | None, opts: Mapping[str, Any],
        say: Callable[[str], None], report: Callable[[Any], None]) -> int:
    name = rule_name or protocol
    if name is None:
        raise ProveUsageError("give a RULE or --protocol")
    try:  # a misspelt rule is said first, not that --n is missing
        rule = resolve_rule(name)
    except ValueError as e:
        raise ProveUsageError(str(e)) from None
    if opts["n"] is None:
        raise ProveUsageError("--n is required with a RULE")
    if opts["k"] < 1:
        raise ProveUsageError(f"--k must be at least 1, got {opts['k']}")
    lo, hi = opts["n"]
    if hi < 2:  # one process delivers alone: nothing to agree on, nothing proved
        raise ProveUsageError(f"--n must reach at least 2 processes, got {lo}-{hi}"
                              if lo != hi else f"--n must be at least 2, got {lo}")
    props = tuple(opts["property"]) or QUERIES
    worst = 0
    for n in range(lo, hi + 1):
        deltas = allowed_deltas(rule, n)
        if opts["delta"] is not None:
            if opts["delta"] not in deltas and deltas != [None]:
                raise ProveUsageError(f"{name} does not accept delta = {opts['delta']} with "
                                      f"n = {n} (it accepts "
                                      f"{', '.join(map(str, deltas)) or 'none'})")
            deltas = [opts["delta"]]
        if not deltas:
            say(f"{name} n={n}: no delta in 1..{n - 1} is allowed; skipped")
            continue
        for d in deltas:
            try:
                o = prove_rule(name, rule, n, d, opts["k"], props, opts["crashes"],
                               opts["method"], opts["timeout"],
                               minimal=not opts["first_model"], encoding=opts["encoding"])
            except TypeError as e:
                raise ProveUsageError(str(e)) from None
            say(o.line(name))
            if o.counterexample is not None:
                cx = o.counterexample
                say(f"  {cx.property}: V1 sees {len(cx.views[0].messages)} messages and "
                    f"delivers {list(cx.delivered[0])}; V2 sees "
                    f"{len(cx.views[1].messages)} and delivers {list(cx.delivered[1])}")
                msgs, edges = cx.size()
                sz = o.sizes
                if sz is not None:
                    say(f"  smallest DAG: {msgs} messages, {edges} causal edges between "
                        f"processors ({'proved minimal' if sz.proved else 'minimum not proved'}"
                        f" for K = {o.k}; Z3's first model had {sz.messages_first} and "
                        f"{sz.edges_first})")
                else:
                    say(f"  DAG: {msgs} messages, {edges} causal edges between processors")
                if opts["out"]:
                    files = counterexample_files(cx, opts["out"], stem(name, o), rule)
                    o.files.update(files)
                    say("  wrote " + ", ".join(files[x] for x in ("trace", "svg", "txt")))
                worst = 1
            elif o.status == "unknown" and worst == 0:
                worst = 3
            report(o)  # with the files written
    return worst


PROVER = Prover("delivery", "a ToTo-family delivery rule, every (n, delta), by Z3 on the "
                "rule body (000, 002)", tuple(RULES), OPTIONS, run, takes_rule=True,
                # every built-in rule and delta at n = 10 in at most 250 s of CPU; S-ToTo
                # at n = 10 had not finished in 900 s before issue 30's cuts
                largest_n=(10, "docs/prove.md, issue 30's sweep"))
