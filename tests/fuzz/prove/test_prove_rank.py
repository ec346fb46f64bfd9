"""The reductions for rules that read the rank (fuzz/prove/delivery/symmetry.py, docs/prove.md
"Symmetry for rules that read the rank"), checked three ways:

* the lemma they rest on, on concrete DAGs: renaming processors keeps GL-ToTo's
  decision (renamed) whenever the renaming keeps the order of the candidates and of
  the lowest-ranked unseen processor, and a renaming that does not can change it;
* broken readings of GL-ToTo's prefix (002 section 5, Johnson and Maugis) are refuted
  through the reductions (the facts encoding, reduced, answers sat, and the witness is
  rebuilt on the classic encoding and replayed on the concrete rule), with the verdict
  of the classic encoding alone, and where they are safe both encodings prove them;
* GL-ToTo itself is still proved, as by the classic encoding.
"""

from __future__ import annotations

import itertools
import random

import pytest
import z3

from tomkit.fuzz.counterexample import from_witness, validate
from tomkit.fuzz.prove.delivery import enumerate as en
from tomkit.fuzz.prove.delivery.facts import make_facts, make_facts_view
from tomkit.fuzz.prove.delivery.solve import prove
from tomkit.fuzz.prove.delivery.symbolic import Sym
from tomkit.fuzz.prove.delivery.symmetry import rank_free_lead
from tomkit.model.toto.dag import Message
from tomkit.model.toto.rules import (
    Params,
    g_toto,
    g_toto_clauses,
    gl_prefix_stable,
    gl_toto,
    toto,
)
from tomkit.model.toto.vocab import future_is_one, generalized_sources

# ------------------------------------------------ broken readings of GL-ToTo's prefix


def _gl(v, d, s, w):
    early = v.subset(lambda m: v.and_(v.member(m, s), v.not_(v.marked(m))), within=w)
    return v.first(*g_toto_clauses(v, d, s),
                   (v.nonempty(early), v.deliver(early, "prefix", ends_activation=False)))


def gl_unseen(v, params):
    """The prefix without "i < min(P minus ntail(G))": candidates past an unseen
    processor."""
    d = params.delta
    s = generalized_sources(v, d)
    stable = v.subset(lambda m: gl_prefix_stable(v, m, s, d))
    w = v.subset(lambda m: v.forall(
        lambda m2: v.implies(v.not_(v.precedes(m, m2)), v.member(m2, stable))))
    return _gl(v, d, s, w)


def gl_unstable(v, params):
    """The prefix without the stability test: every seen-through candidate."""
    d = params.delta
    s = generalized_sources(v, d)
    return _gl(v, d, s, v.subset(lambda m: v.seen_through(m)))


def gl_gaps(v, params):
    """Stable candidates past an unstable one (the loop does not stop)."""
    d = params.delta
    s = generalized_sources(v, d)
    return _gl(v, d, s, v.subset(lambda m: v.and_(v.seen_through(m),
                                                  gl_prefix_stable(v, m, s, d))))


def gl_no_u(v, params):
    """"never becomes a source" without the unseen processors: nvt(m) <= delta."""
    d = params.delta
    s = generalized_sources(v, d)

    def stable(m):
        stays = v.and_(v.member(m, s), v.or_(v.nvt(m) > d, v.ntail_g > v.n - d))
        never = v.and_(v.not_(v.member(m, s)), v.nvt(m) <= d,
                       v.exists(lambda j: future_is_one(v, j, m, d)))
        return v.or_(v.marked(m), stays, never)
    st = v.subset(stable)
    w = v.subset(lambda m: v.and_(v.seen_through(m), v.forall(
        lambda m2: v.implies(v.not_(v.precedes(m, m2)), v.member(m2, st)))))
    return _gl(v, d, s, w)


BROKEN = {"gl-unseen": gl_unseen, "gl-unstable": gl_unstable, "gl-gaps": gl_gaps,
          "gl-no-u": gl_no_u}

# ------------------------------------------------------------- the taint and the lead


def lowest_first(v, params):
    """Reads the rank in its only clause."""
    low = v.subset(lambda m: v.not_(v.exists(lambda o: v.precedes(o, m))))
    return v.first((v.nonempty(low), v.deliver(low, "lowest")))


def test_the_view_records_which_clauses_read_the_rank():
    g = make_facts(4)
    v = make_facts_view(g, "V")
    o = gl_toto(v.rule_view(g), Params(1))
    assert o.ranked == (False, False, True)  # G-ToTo's two clauses, then the prefix
    lead = rank_free_lead(o)
    assert lead is not None and lead.clauses == ("early", "default")
    # nothing to cut: every clause is rank-free (the whole rule is reduced), or the
    # first one reads the rank
    for rule, d in ((g_toto, 1), (toto, 2), (lowest_first, None)):
        o = rule(v.rule_view(g), Params(d))
        assert rank_free_lead(o) is None, rule.__name__
    assert lowest_first(v.rule_view(g), Params()).ranked == (True,)


def test_sym_keeps_the_taint_through_arithmetic():
    a, b = Sym(z3.Int("a"), True), Sym(z3.Int("b"))
    assert (a + b).ranked and (b - a).ranked and (1 - a).ranked and (-a).ranked
    assert not (b + 1 < 3).ranked and (b == a).ranked and (a != 2).ranked
    g = make_facts(3)
    rv = make_facts_view(g, "V").rule_view(g)
    ranked = rv.exists(lambda m: rv.precedes(m, m))
    assert ranked.ranked and rv.or_(rv.u > 1, ranked).ranked
    assert rv.subset(lambda m: rv.seen_through(m)).ranked
    assert rv.nonempty(rv.subset(lambda m: rv.not_(ranked))).ranked
    assert not rv.exists(lambda m: rv.nvt(m) + rv.u > 1).ranked
    assert (rv.ite(ranked, 1, 0) + rv.u > 0).ranked


# ------------------------------------------------------------ the lemma, concretely


def _rename(msgs: list[Message], view: en.View, pi: dict[int, int]
            ) -> tuple[list[Message], en.View]:
    def mid(x: str) -> str:
        q, k = x[1:].split(".")
        return f"p{pi[int(q)]}.{k}"
    out = [Message(mid(m.id), f"p{pi[int(m.sender[1:])]}", tuple(mid(d) for d in m.deps))
           for m in msgs]
    return out, en.View(frozenset(mid(x) for x in view.messages),
                        frozenset(f"p{pi[int(q[1:])]}" for q in view.crashed))


def test_renamings_that_keep_candidates_and_the_first_unseen_keep_the_decision():
    # the renaming of docs/prove.md keeps the order of the candidates and of the
    # lowest-ranked unseen processor, and ranks every other unseen processor above it
    # (an unseen processor moved below it would become the lowest)
    n, rng = 4, random.Random(3)
    procs = tuple(f"p{q}" for q in range(n))
    shapes = rng.sample(list(en.dag_shapes(n, 1)), 40)
    perms = list(itertools.permutations(range(n)))
    kept = changed = 0
    for shape in shapes:
        msgs = en.messages_of(shape)
        for view in rng.sample(en.views_of(shape, n), 4):
            for rule, d in ((gl_toto, 1), (gl_toto, 2), (gl_unseen, 1)):
                g, dec = en.evaluate(procs, msgs, view, lambda v: rule(v, Params(d)))  # noqa: B023
                cands = {int(m[1:].split(".")[0]) for m in g.candidates()}
                seen = {q for q in range(n) if f"p{q}.1" in view.messages
                        or f"p{q}" in view.crashed}
                unseen = [q for q in range(n) if q not in seen]
                rel = sorted(cands | set(unseen[:1]))
                for perm in rng.sample(perms, 6):
                    pi = dict(enumerate(perm))
                    rm, rv = _rename(msgs, view, pi)
                    _, dec2 = en.evaluate(procs, rm, rv, lambda v: rule(v, Params(d)))  # noqa: B023
                    mapped = None if dec is None else tuple(
                        f"p{pi[int(x[1:].split('.')[0])]}.1" for x in dec.messages)
                    same = (dec is None) == (dec2 is None) and (
                        dec is None or (mapped == dec2.messages
                                        and dec.clause == dec2.clause
                                        and dec.ends_activation == dec2.ends_activation))
                    keeps = (all(pi[a] < pi[b] for a, b in zip(rel, rel[1:]))
                             and all(pi[p] > pi[unseen[0]] for p in unseen[1:]))
                    if keeps:
                        assert same, (shape, view, rule.__name__, d, perm)
                        kept += 1
                    elif not same:
                        changed += 1
    # the lemma was exercised, and the rank does matter when the order is not kept
    assert kept > 500 and changed > 0


# ----------------------------------------------------- broken and correct, by Z3


@pytest.mark.parametrize("name,delta,prop", [
    ("gl-unseen", 2, "agreement"),
    ("gl-unstable", 1, "stability"),
    ("gl-gaps", 2, "agreement"),
    ("gl-no-u", 1, "agreement"),
])
def test_broken_prefixes_are_refuted_through_the_reductions(name, delta, prop):
    rule = BROKEN[name]
    r = prove(lambda v: rule(v, Params(delta)), 4, 3, prop, minimal=False)
    assert r.status == "counterexample"
    # the reduced facts encoding found it (else its "proved" would be wrong) after the
    # pinned lead (G-ToTo's clauses at both views) was unsat, in the rest's split
    assert r.stats["facts"] == "sat" and r.stats["symmetry"] == "lead"
    assert len(r.stats["parts"]) >= 2
    validate(from_witness(r.witness, name, delta), rule)  # replays concretely
    c = prove(lambda v: rule(v, Params(delta)), 4, 3, prop, minimal=False,
              encoding="classic")
    assert c.status == "counterexample"


@pytest.mark.parametrize("name,delta", [("gl-unstable", 3), ("gl-no-u", 2)])
def test_safe_readings_are_proved_by_both(name, delta):
    rule = BROKEN[name]
    for enc in ("facts", "classic"):
        r = prove(lambda v: rule(v, Params(delta)), 4, 3, "agreement",  # noqa: B023
                  minimal=False, encoding=enc)
        assert r.status == "proved", enc


def test_gl_toto_is_still_proved():
    for d, prop in ((1, "agreement"), (3, "agreement"), (2, "internal-stability"),
                    (2, "external-stability")):
        r = prove(lambda v: gl_toto(v, Params(d)), 4, 3, prop)  # noqa: B023
        assert r.status == "proved" and r.stats["symmetry"] == "lead", (d, prop)
    assert prove(lambda v: gl_toto(v, Params(2)), 4, 3, "agreement",
                 encoding="classic").status == "proved"
