"""The facts encoding (fuzz/prove/delivery/facts.py) and the symmetry reductions
(fuzz/prove/delivery/symmetry.py) against the classic encoding and against concrete DAGs.

* every constraint of the facts encoding holds on the facts of real DAGs and views
  (the completeness claim that makes its "proved" sound), for every shape at n = 3 with
  K = 1 and a sample of 30 shapes with K = 2 (with facts_bounded);
* the two encodings give the same verdict for every built-in rule and mutant, every
  delta and property but stability (the cross-check covers it), at n = 3 with K = 3;
* the mutants are refuted at the sizes of tests/fuzz/prove/test_prove.py with the pin and the
  processor order in place (a sat answer there shows the reductions keep them).
"""

from __future__ import annotations

import random

import pytest
import z3

from tomkit.fuzz.counterexample import from_witness, validate
from tomkit.fuzz.prove.delivery import QUERIES
from tomkit.fuzz.prove.delivery import enumerate as en
from tomkit.fuzz.prove.delivery.facts import (
    facts_bounded,
    facts_nested,
    facts_pair,
    make_facts,
    make_facts_view,
)
from tomkit.fuzz.prove.delivery.prove import allowed_deltas
from tomkit.fuzz.prove.delivery.solve import prove
from tomkit.fuzz.prove.delivery.symmetry import facts_keys, lex_geq, rank_free, sorted_by
from tomkit.model.toto.mutants import MUTANTS
from tomkit.model.toto.rules import RULES, Params

ALL = {**RULES, **MUTANTS}


def _facts_of(shape: en.Shape, n: int) -> dict[str, bool]:
    """The facts encoding's voter order, read off a concrete DAG."""
    _, below = shape
    vals: dict[str, bool] = {}
    for q in range(n):
        for i in range(n):
            if q != i:
                vals[f"a_{q}_{i}"] = (q, 0) in below and (i, 0) in below[q, 0]
    return vals


def _view_facts(shape: en.Shape, n: int, view: en.View, name: str) -> dict[str, bool]:
    """A view's visible voters, Crash events and Tail facts."""
    msgs, below = shape
    vis = {a for a in msgs if f"p{a[0]}.{a[1] + 1}" in view.messages}
    vals = {}
    for q in range(n):
        vals[f"{name}_vis_{q}"] = (q, 0) in vis
        vals[f"{name}_crash_{q}"] = f"p{q}" in view.crashed
        for i in range(n):
            if q != i:
                vals[f"{name}_t_{q}_{i}"] = any((i, 0) in below[a] for a in vis if a[0] == q)
    return vals


def _holds(constraints: list | z3.Solver, vals: dict[str, bool]) -> bool:
    """The constraints hold on these values (every variable they read is given)."""
    s = constraints if isinstance(constraints, z3.Solver) else _solver(constraints)
    return s.check([z3.Bool(k) if v else z3.Not(z3.Bool(k)) for k, v in vals.items()]) == z3.sat


def _solver(constraints: list) -> z3.Solver:
    s = z3.Solver()
    s.add(constraints)
    return s


@pytest.mark.parametrize("k", [1, 2])
def test_facts_constraints_hold_on_real_dags(k):
    n = 3
    g = make_facts(n)
    v1, v2 = make_facts_view(g, "V1"), make_facts_view(g, "V2")
    both = _solver(g.constraints + v1.constraints + v2.constraints + facts_pair(g, v1, v2)
                   + facts_bounded(g, v1, v2, k))
    within = _solver(facts_nested(v1, v2))
    rng = random.Random(5)
    checked = nested_checked = 0
    shapes = list(en.dag_shapes(n, k))
    if k > 1:
        shapes = rng.sample(shapes, 30)
    for shape in shapes:
        views = en.views_of(shape, n)
        pairs = [(rng.choice(views), rng.choice(views)) for _ in range(3)]
        pairs += [(a, b) for a in views[:6] for b in views if en.nested(a, b)][:6]
        for a, b in pairs:
            vals = {**_facts_of(shape, n), **_view_facts(shape, n, a, "V1"),
                    **_view_facts(shape, n, b, "V2")}
            assert _holds(both, vals), (shape, a, b)
            checked += 1
            if en.nested(a, b):
                assert _holds(within, vals), (shape, a, b)
                nested_checked += 1
    assert checked >= 9 * len(shapes) // 2 and nested_checked >= len(shapes)


def test_a_constraint_that_is_false_on_a_real_dag_would_be_caught():
    # a planted wrong constraint: "no voter follows another" fails on some DAG
    n = 3
    g = make_facts(n)
    wrong = [z3.Not(g.a[0][1])]
    shape = next(s for s in en.dag_shapes(n, 1)
                 if (0, 0) in s[1] and (1, 0) in s[1][0, 0])
    assert not _holds(wrong, _facts_of(shape, n))


def test_rank_free_tells_the_rules_apart():
    g = make_facts(4)
    v = make_facts_view(g, "V")
    for name, d, free in (("toto", 2, True), ("s-toto", 2, True), ("g-toto", 1, True),
                          ("all-ack", None, True), ("gl-toto", 1, False)):
        rv = v.rule_view(g)
        ALL[name](rv, Params(d))
        assert rank_free([rv]) is free, name


def test_lex_geq_orders_boolean_vectors():
    for a in range(8):
        for b in range(8):
            bits = [[z3.BoolVal(bool(x >> s & 1)) for s in (2, 1, 0)] for x in (a, b)]
            assert z3.is_true(z3.simplify(lex_geq(*bits))) == (a >= b)
    g = make_facts(3)
    v = make_facts_view(g, "V")
    assert len(sorted_by(facts_keys(g, [v]))) == 2


@pytest.mark.parametrize("name", sorted(ALL))
def test_both_encodings_give_the_same_verdicts(name):
    rule = ALL[name]
    for n, k in ((3, 3),):  # K = 1 up to n = 4: test_prove_crosscheck (facts by default)
        for d in allowed_deltas(rule, n):
            for prop in QUERIES:
                if prop == "stability":
                    continue  # agreement with nested views: covered by the cross-check
                rs = [prove(lambda v: rule(v, Params(d)), n, k, prop,  # noqa: B023
                            encoding=e, minimal=False) for e in ("facts", "classic")]
                assert rs[0].status == rs[1].status, (name, n, k, d, prop)


@pytest.mark.parametrize("name,n,delta", [
    ("g-toto-no-ntail", 5, 1),
    ("majority", 5, None),
    ("s-toto-low-delta", 4, 1),
])
def test_mutants_are_refuted_through_the_reductions(name, n, delta):
    r = prove(lambda v: MUTANTS[name](v, Params(delta)), n, 3, "agreement", minimal=False)
    assert r.status == "counterexample"
    # the facts encoding, pinned and sorted, found it too (else "proved" would be wrong)
    assert r.stats["facts"] == "sat" and r.stats.get("symmetry")
    validate(from_witness(r.witness, name, delta), MUTANTS[name])  # replays concretely


def lowest_first(v, params):
    """Broken, and reads the rank: deliver the lowest-ranked candidate at once."""
    low = v.subset(lambda m: v.not_(v.exists(lambda o: v.precedes(o, m))))
    return v.first((v.nonempty(low), v.deliver(low, "lowest")))


def lowest_prefix(v, params):
    """Broken, reads the rank and leaves the activation open (like GL-ToTo's prefix)."""
    low = v.subset(lambda m: v.not_(v.exists(lambda o: v.precedes(o, m))))
    return v.first((v.nonempty(low), v.deliver(low, "lowest", ends_activation=False)))


@pytest.mark.parametrize("rule", [lowest_first, lowest_prefix])
def test_a_rank_reading_rule_is_refuted_through_the_split(rule):
    for prop in ("agreement", "external-stability"):
        r = prove(lambda v: rule(v, Params()), 4, 3, prop, minimal=False)  # noqa: B023
        if prop == "external-stability" and rule is lowest_prefix:
            # it never ends the activation: nothing to violate
            assert r.status == "proved"
            continue
        assert r.status == "counterexample", prop
        assert r.stats["facts"] == "sat" and not r.stats.get("symmetry")


def test_cli_keeps_the_classic_encoding(capsys):
    import argparse

    from tomkit.cli import prove as prove_cli
    p = argparse.ArgumentParser()
    prove_cli.add_parser(p.add_subparsers())
    for enc in ("classic", "facts"):
        args = p.parse_args(["prove", "toto", "--n", "3", "--encoding", enc])
        assert args.func(args) == 0
    assert capsys.readouterr().out.count("proved  method=z3") == 2


def test_a_rule_cannot_read_the_rank_behind_the_views_back():
    def by_index(v, params):
        return v.first((v.exists(lambda m: m.i == 0), v.deliver(v.candidates, "x")))

    g = make_facts(3)
    with pytest.raises(TypeError):
        by_index(make_facts_view(g, "V").rule_view(g), Params())
