"""Issue 4, point 5: the Z3 verdicts agree with exhaustive enumeration.

For each built-in rule and mutant, every allowed delta and all four properties, Z3's
answer (``checker.prove.solve.prove`` with the same K) is compared with
``fuzz.enumerate.search_all``, which runs the concrete rule on every view of every DAG
shape. The space (see fuzz/prove/delivery/enumerate.py): n processors, at most K messages
each, every partial order with per-processor chains, every down-set as a view with every Crash set
the membership assumption allows.

* n = 2, 3, 4 with K = 1: truly exhaustive (318 shapes and 12,939 views at n = 4);
* n = 3 with K = 2: a sample of 800 of the 4,221 shapes (seed 5), for toto;
* n = 5 with K = 1: a sample of 150 of the 5,552 shapes (seed 5), for toto and the
  majority mutant. For a sample, a violation it finds must be found by Z3, and a property Z3
  proves must hold on it. (All shapes take minutes: too long for the suite.)
"""

from __future__ import annotations

import pytest

from tomkit.fuzz.counterexample import from_found, validate
from tomkit.fuzz.prove.delivery import QUERIES
from tomkit.fuzz.prove.delivery import enumerate as en
from tomkit.fuzz.prove.delivery.prove import allowed_deltas
from tomkit.fuzz.prove.delivery.solve import prove
from tomkit.model.toto.mutants import MUTANTS
from tomkit.model.toto.rules import RULES, Params

ALL = {**RULES, **MUTANTS}
SHAPES: dict[tuple[int, int], list] = {}


def shapes(n: int, k: int) -> list:
    if (n, k) not in SHAPES:
        SHAPES[n, k] = list(en.dag_shapes(n, k))
    return SHAPES[n, k]


def compare(name: str, n: int, k: int, sample: int | None = None) -> int:
    rule = ALL[name]
    checked = 0
    for d in allowed_deltas(rule, n):
        enum = en.search_all(lambda v: rule(v, Params(d)), n, k,  # noqa: B023
                             shapes=shapes(n, k), sample=sample, seed=5)
        for prop in QUERIES:
            z = prove(lambda v: rule(v, Params(d)), n, k, prop)  # noqa: B023
            found = enum[prop].found
            if found is not None:
                validate(from_found(found, name, d), rule)
            if sample is None:
                assert (z.status == "counterexample") == (found is not None), (name, n, d, prop)
            else:
                assert z.status == "counterexample" or found is None, (name, n, d, prop)
            checked += 1
    return checked


@pytest.mark.parametrize("name", sorted(ALL))
def test_z3_matches_exhaustive_enumeration_up_to_n4(name):
    assert sum(compare(name, n, 1) for n in (2, 3, 4)) > 0 or name == "toto-low-delta"


def test_z3_matches_sampled_enumeration_n3_two_messages():
    assert compare("toto", 3, 2, sample=800) > 0


@pytest.mark.parametrize("name", ["toto", "majority"])
def test_z3_matches_sampled_enumeration_n5(name):
    assert compare(name, 5, 1, sample=150) > 0


def test_enumeration_counts_labelled_posets():
    # labelled posets on 0..n elements (OEIS A001035: 1, 1, 3, 19, 219), summed over
    # the subsets of processors that sent a message
    assert [len(shapes(n, 1)) for n in (2, 3, 4)] == [6, 32, 318]
