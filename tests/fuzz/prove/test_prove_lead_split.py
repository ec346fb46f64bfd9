"""GL-ToTo's pinned lead part split by the lead clause that fires at each view
(``solve._prove_facts``, docs/prove.md "Issue 30"), checked against the old encodings:

* the cases are disjoint and together are exactly "both views fire the lead", so unsat
  of every case proves what the whole lead part proved;
* the verdicts are those of the classic encoding (issue 4's, no reduction) and of the
  split by slot alone (``rank_symmetry=False``, issue 19's first version) for GL-ToTo
  and for a GL-ToTo whose lead is broken (G-ToTo without "NTail(G) > n - delta", 002
  section 4), for every delta at n <= 4; the broken lead's counterexample is found in
  a lead case and replays on the concrete rule.
"""

from __future__ import annotations

import itertools

import pytest
import z3

from tomkit.fuzz.counterexample import from_witness, validate
from tomkit.fuzz.prove.delivery.facts import make_facts, make_facts_view
from tomkit.fuzz.prove.delivery.solve import prove
from tomkit.fuzz.prove.delivery.symmetry import by_clause, rank_free_lead
from tomkit.model.toto.rules import Params, gl_prefix, gl_toto, unmarked
from tomkit.model.toto.vocab import future_is_one, generalized_sources

PROPS = ("agreement", "internal-stability", "external-stability")


def gl_lead_no_ntail(v, params):
    """GL-ToTo with the lead of the mutant g-toto-no-ntail: rule 1b without
    "NTail(G) > n - delta" (unsafe for delta < n/2, 002 section 4)."""
    d = params.delta
    s = generalized_sources(v, d)
    internal = v.forall(lambda i: v.or_(
        v.member(i, s),
        v.and_(v.nvt(i) + v.u <= d,
               v.exists(lambda j: future_is_one(v, j, i, d), within=s))))
    external = v.exists(lambda x: v.nvt(x) > d, within=s)
    early = v.subset(lambda m: v.and_(v.member(m, s), v.not_(v.marked(m))),
                     within=gl_prefix(v, s, d))
    return v.first(
        (v.and_(internal, external), v.deliver(unmarked(v, s), "early")),
        (v.and_(v.ntail_g == v.n, v.nonempty(v.candidates)),
         v.deliver(unmarked(v, v.candidates), "default")),
        (v.nonempty(early), v.deliver(early, "prefix", ends_activation=False)))


def _valid(f: object) -> bool:
    s = z3.Solver()
    s.add(z3.Not(f))
    return s.check() == z3.unsat


@pytest.mark.parametrize("rule", [gl_toto, gl_lead_no_ntail])
def test_lead_cases_partition_both_lead_fired(rule):
    g = make_facts(4)
    v1, v2 = make_facts_view(g, "V1"), make_facts_view(g, "V2")
    o1, o2 = (rule(v.rule_view(g), Params(2)) for v in (v1, v2))
    l1, l2 = rank_free_lead(o1), rank_free_lead(o2)
    assert l1 is not None and l2 is not None and l1.clauses == ("early", "default")
    cases = [z3.And(c) for c in by_clause(l1, l2)]
    assert len(cases) == 4
    assert _valid(z3.Or(cases) == z3.And(l1.fired, l2.fired))
    for a, b in itertools.combinations(cases, 2):
        assert _valid(z3.Not(z3.And(a, b)))


@pytest.mark.parametrize("n", [3, 4])
def test_gl_toto_verdicts_match_the_old_encodings(n):
    for d in range(1, n):
        fn = lambda v: gl_toto(v, Params(d))  # noqa: B023, E731
        for prop in PROPS:
            new = prove(fn, n, 3, prop, minimal=False)
            assert new.status == "proved" and new.stats["symmetry"] == "lead", (d, prop)
            # four lead cases, then the rest split by slot
            assert len(new.stats["parts"]) == 4 + n
            for old in (prove(fn, n, 3, prop, minimal=False, encoding="classic"),
                        prove(fn, n, 3, prop, minimal=False, rank_symmetry=False)):
                assert old.status == "proved", (d, prop)


@pytest.mark.parametrize("n", [3, 4])
def test_broken_lead_is_refuted_in_a_lead_case(n):
    found = 0
    for d in range(1, n):
        fn = lambda v: gl_lead_no_ntail(v, Params(d))  # noqa: B023, E731
        for prop in PROPS:
            new = prove(fn, n, 3, prop, minimal=False)
            classic = prove(fn, n, 3, prop, minimal=False, encoding="classic")
            split = prove(fn, n, 3, prop, minimal=False, rank_symmetry=False)
            assert new.status == classic.status == split.status, (d, prop)
            if new.status == "counterexample":
                found += 1
                # the facts encoding answered sat in one of the four lead cases
                assert new.stats["facts"] == "sat" and len(new.stats["parts"]) <= 4
                validate(from_witness(new.witness, "gl-lead-no-ntail", d), gl_lead_no_ntail)
    assert found > 0 if n == 4 else True
