"""The timestamp-protocol prover as ``tomkit prove --protocol abcast|tomp [--n N]
[--variant NAME]`` runs it (Dasser, 004: ABCAST and TOMP; docs/prove.md).

For each n it decides the queries of ``solve.py`` (base case, the inductive step per
transition, safety) on the invariant of ``invariant.py`` and prints one line; a broken
variant fails the step and is refuted by a shortest run found by bounded model checking,
replayed on the model and written to ``--out`` as a trace and a text (``replay.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from tomkit.fuzz.prove.base import Prover, ProveUsageError, n_range
from tomkit.fuzz.prove.timestamps.replay import write_run
from tomkit.fuzz.prove.timestamps.solve import prove_protocol
from tomkit.fuzz.prove.timestamps.state import PROTOCOLS, VARIANTS
from tomkit.model.process import Option

__all__ = ["PROVER"]

OPTIONS = (
    Option("n", n_range, (3, 3), "number of hosts, or a range A-B (default 3)"),
    Option("variant", str, None, "a broken variant to refute: " + "; ".join(
        f"{p}: {', '.join(v)}" for p, v in VARIANTS.items()),
        tuple(sorted({v for vs in VARIANTS.values() for v in vs}))),
    Option("max_steps", int, None, "the longest run the counterexample search tries "
           "(default: 6 steps over the shortest possible)"),
    Option("timeout", float, None, "seconds per Z3 query and for the search (default none)"),
    Option("out", str, None, "write counterexamples here (trace .jsonl and .txt)"),
)


def run(protocol: str | None, rule: str | None, opts: Mapping[str, Any],
        say: Callable[[str], None], report: Callable[[Any], None]) -> int:
    assert protocol is not None  # the registry hands it a protocol of PROTOCOLS
    variant = opts["variant"]
    if variant is not None and variant not in VARIANTS[protocol]:
        raise ProveUsageError(f"{protocol} has no variant {variant!r}; it has "
                              f"{', '.join(VARIANTS[protocol])}")
    lo, hi = opts["n"]
    if lo < 2:
        raise ProveUsageError(f"--protocol {protocol} needs n >= 2 hosts, got {lo}")
    if opts["max_steps"] is not None and opts["max_steps"] < 1:
        raise ProveUsageError(f"--max-steps must be at least 1, got {opts['max_steps']}")
    worst = 0
    for n in range(lo, hi + 1):
        o = prove_protocol(protocol, n, variant, opts["timeout"], max_steps=opts["max_steps"])
        say(o.line())
        found = o.search.run if o.search is not None else None
        if found is not None:
            a, b, x, y = found.violation
            say(f"  total order: p{a} delivers {x} before {y}; p{b} delivers {y} without "
                f"{x} before it ({len(found.steps)} steps, {len(found.messages)} messages)")
            if opts["out"]:
                files = write_run(found, opts["out"],
                                  f"{protocol}-{variant or 'as-specified'}-n{n}")
                o.files.update(files)
                say("  wrote " + ", ".join(files[k] for k in ("trace", "txt")))
            worst = 1
        elif o.status == "unknown" and worst == 0:
            worst = 3
        report(o)  # with the files written
    return worst


PROVER = Prover("timestamps", "ABCAST and TOMP safe by induction over n hosts, broken "
                "variants refuted by bounded model checking (004)", PROTOCOLS, OPTIONS, run,
                largest_n=(8, "docs/prove.md, Findings"))
