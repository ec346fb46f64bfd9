"""Proving ToTo-family delivery rules: every (n, delta), by Z3 or by enumeration.

For each (n, delta) it decides the activation queries of :mod:`~tomkit.fuzz.prove.delivery.solve`
(agreement, stability, internal and external stability) on one activation with at most
K messages per processor. A rule written in the vocabulary (``model/toto/vocab.py``) is proved
symbolically from its own definition (:mod:`~tomkit.fuzz.prove.delivery.symbolic`); a rule that is
not (it raises TypeError on Z3 terms: it branches on a value, compares candidates with
``==`` ...) is checked by exhaustive enumeration for small n
(:mod:`~tomkit.fuzz.prove.delivery.enumerate`). Every counterexample is replayed on the concrete
model and shrunk (``fuzz/counterexample.py``). ``tomkit prove RULE`` prints these
outcomes; see docs/prove.md.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tomkit.fuzz.counterexample import Counterexample, from_found, from_witness, shrink
from tomkit.fuzz.prove.delivery import enumerate as en
from tomkit.fuzz.prove.delivery.minimal import Sizes
from tomkit.fuzz.prove.delivery.solve import QUERIES, fires_somewhere, prove
from tomkit.model.toto.dag import DagView
from tomkit.model.toto.rules import Params, Rule
from tomkit.model.toto.vocab import ConcreteRuleView
from tomkit.traces.schema import report_stamp

__all__ = ["ENUM_LIMITS", "Outcome", "allowed_deltas", "prove_rule", "stem"]

#: enumeration is exhaustive up to these (n, K); beyond, the verdict is unknown
ENUM_LIMITS = {1: 2, 2: 2, 3: 2, 4: 1}

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
    #: Z3's minimisation of the counterexample (``fuzz/prove/delivery/minimal.py``)
    sizes: Sizes | None = None
    #: per query, the CPU seconds of each part of the facts encoding (``solve.facts_parts``)
    parts_cpu: dict[str, list[float]] = field(default_factory=dict)

    @property
    def verdict(self) -> str:
        """proved, counterexample or unknown: the word every report uses (``status`` is
        its old name)."""
        return self.status

    def exit_code(self) -> int:
        """``tomkit prove``'s exit code for this outcome: 0 proved, 1 a counterexample, 3
        unknown (as ``CheckReport.exit_code`` and ``ConformReport.exit_code``)."""
        return {"proved": 0, "counterexample": 1}.get(self.status, 3)

    def to_dict(self) -> dict[str, Any]:
        """The outcome as plain data (the counterexample as its property, views and the
        two deliveries). ``verdict`` is the word every report uses; ``status``, the same,
        stays for one release (docs/api.md)."""
        cx = self.counterexample
        return {
            **report_stamp(), "verdict": self.verdict,
            "n": self.n, "delta": self.delta, "status": self.status, "method": self.method,
            "seconds": self.seconds, "k": self.k,
            "queries": {p: {"verdict": st, "status": st, "seconds": t}
                        for p, (st, t) in self.per_property.items()},
            "note": self.note, "files": dict(self.files),
            "sizes": None if self.sizes is None else self.sizes.to_dict(),
            "parts_cpu": {p: list(t) for p, t in self.parts_cpu.items()},
            "counterexample": None if cx is None else {
                "property": cx.property,
                "views": [list(v.messages) for v in cx.views],
                "delivered": [list(d) for d in cx.delivered]},
        }

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
    from tomkit.fuzz.prove.delivery.encoding import make_dag, make_view
    from tomkit.fuzz.prove.delivery.solve import symbolic_outcome

    g = make_dag(n, 1)
    try:
        symbolic_outcome(lambda v: rule(v, Params(delta)), make_view(g, "T"), n)
    except TypeError as e:
        return str(e)
    return None


def prove_rule(name: str, rule: Rule, n: int, delta: int | None, k: int = 3,
               props: tuple[str, ...] = QUERIES, crashes: bool = True,
               method: str = "auto", timeout: float | None = None,
               minimal: bool = True, encoding: str = "facts",
               rank_symmetry: bool = True, solver: str = "cardinality") -> Outcome:
    """Decide ``props`` for one (n, delta); the first counterexample found is replayed
    concretely, shrunk and attached. With ``minimal``, Z3's counterexample has the
    fewest messages, then the fewest causal edges (``fuzz/prove/delivery/minimal.py``); without,
    it is the solver's first model, shrunk greedily. ``encoding``: see
    ``solve.ENCODINGS`` (both give the same verdicts and counterexamples);
    ``rank_symmetry`` and ``solver``: see ``solve.prove``."""
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
            r = prove(fn, n, k, p, timeout=timeout, crashes=crashes, minimal=minimal,
                      encoding=encoding, rank_symmetry=rank_symmetry, solver=solver)
            out.per_property[p] = (r.status, r.seconds)
            out.parts_cpu[p] = list(r.stats.get("parts_cpu", []))
            if r.status == "counterexample":
                assert r.witness is not None
                cx = from_witness(r.witness, name, delta)
                out.counterexample = shrink(cx, rule)  # validates the Z3 witness concretely
                out.sizes = r.stats.get("sizes")
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


def stem(name: str, o: Outcome) -> str:
    safe = name.replace(":", "_").replace("/", "_")
    return f"{safe}-n{o.n}-d{'-' if o.delta is None else o.delta}"
