"""symmetry.by_clause: the cases a rank-free query is split into are disjoint and
together are exactly "both views fire" (so unsat of every case proves the query), and
the split keeps the verdicts of the classic encoding, counterexamples included."""

from __future__ import annotations

import itertools

import pytest
import z3

from tomkit.fuzz.prove.delivery.facts import make_facts, make_facts_view
from tomkit.fuzz.prove.delivery.solve import prove
from tomkit.fuzz.prove.delivery.symmetry import by_clause
from tomkit.model.toto.mutants import MUTANTS
from tomkit.model.toto.rules import RULES, Params


def _valid(f: object) -> bool:
    s = z3.Solver()
    s.add(z3.Not(f))
    return s.check() == z3.unsat


@pytest.mark.parametrize("name", ["s-toto", "toto", "g-toto"])
def test_cases_partition_both_fired(name):
    n = 4
    g = make_facts(n)
    v1, v2 = make_facts_view(g, "V1"), make_facts_view(g, "V2")
    rule = RULES[name]
    o1, o2 = (rule(v.rule_view(g), Params(2)) for v in (v1, v2))
    cases = [z3.And(c) for c in by_clause(o1, o2)]
    assert len(cases) == len(o1.guards) * len(o2.guards) >= 4
    assert _valid(z3.Or(cases) == z3.And(o1.fired, o2.fired))
    for a, b in itertools.combinations(cases, 2):
        assert _valid(z3.Not(z3.And(a, b)))


@pytest.mark.parametrize("name,n,d,expect", [
    ("s-toto", 4, 2, "proved"),
    ("toto", 4, 3, "proved"),
    ("g-toto", 4, 1, "proved"),
    ("s-toto-low-delta", 4, 1, "counterexample"),
])
def test_split_keeps_verdicts(name, n, d, expect):
    rule = RULES.get(name) or MUTANTS[name]
    for prop in ("agreement", "internal-stability", "external-stability"):
        fn = lambda v: rule(v, Params(d))  # noqa: E731
        facts = prove(fn, n, 3, prop, minimal=False)
        classic = prove(fn, n, 3, prop, minimal=False, encoding="classic")
        assert facts.status == classic.status, (prop, facts.status, classic.status)
        if facts.status == "counterexample":
            assert facts.stats.get("symmetry") is True  # went through the split
    assert any(prove(lambda v: rule(v, Params(d)), n, 3, p, minimal=False).status == expect
               for p in ("agreement", "internal-stability", "external-stability"))
