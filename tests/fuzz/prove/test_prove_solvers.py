"""The facts parts solved with native cardinality constraints (``solve.SOLVERS``,
"cardinality", issue 30's default) against bit-blasting them (the default before): the
same verdict on every part, for the built-in rules and refuted mutants at n = 4..6;
where a mutant is refuted, the witness replays on the concrete rule and the classic
encoding (issue 4's, no reduction) refutes it too."""

from __future__ import annotations

import pytest
import z3

from tomkit.fuzz.counterexample import from_witness, validate
from tomkit.fuzz.prove.delivery.solve import _check, facts_parts, prove
from tomkit.model.toto.mutants import MUTANTS
from tomkit.model.toto.rules import RULES, Params

PROPS = ("agreement", "internal-stability", "external-stability")


def _rule(name):
    return RULES.get(name) or MUTANTS[name]


@pytest.mark.parametrize("name,n,d", [
    ("s-toto", 6, 3), ("toto", 5, 3), ("g-toto", 5, 2), ("gl-toto", 5, 2),
    ("all-ack", 6, None),
    ("s-toto-low-delta", 4, 1), ("g-toto-no-ntail", 5, 1), ("majority", 5, None),
])
def test_every_part_has_the_same_verdict(name, n, d):
    rule = _rule(name)
    fn = lambda v: rule(v, Params(d))  # noqa: E731
    sat = 0
    for prop in PROPS:
        for part in facts_parts(fn, n, 3, prop):
            a = _check(part, None, "cardinality")[0]
            b = _check(part, None, "bit-blast")[0]
            assert a == b and a != z3.unknown, (prop, a, b)
            sat += a == z3.sat
    # the safe rules are proved part by part; the mutants have a sat part
    assert (sat > 0) == (name not in RULES), sat


@pytest.mark.parametrize("name,n,d,prop", [
    ("s-toto-low-delta", 4, 1, "agreement"),
    ("g-toto-no-ntail", 5, 1, "agreement"),
    ("majority", 5, None, "agreement"),
    ("s-toto-no-internal", 6, 3, "internal-stability"),
])
def test_refutations_replay_and_match_the_classic_encoding(name, n, d, prop):
    rule = _rule(name)
    fn = lambda v: rule(v, Params(d))  # noqa: E731
    r = prove(fn, n, 3, prop, minimal=False)
    assert r.status == "counterexample" and r.stats["facts"] == "sat"
    validate(from_witness(r.witness, name, d), rule)
    assert prove(fn, n, 3, prop, minimal=False, encoding="classic").status == "counterexample"


def test_an_unknown_solver_is_refused():
    with pytest.raises(ValueError, match="unknown solver 'cdcl'.*cardinality, bit-blast"):
        prove(lambda v: RULES["all-ack"](v, Params()), 3, 1, solver="cdcl")
