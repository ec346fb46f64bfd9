"""Symmetry breaking for rules that read no rank (docs/prove.md, "Reaching n = 8").

Processors are interchangeable except for their rank. A rule that never reads the rank
(no ``precedes``, no ``seen_through``: :func:`rank_free`) decides, on a DAG whose
processors are renamed by a permutation, the renamed decision; if it also always ends
the activation, every query asks for a slot where two deliveries differ as *sets*
(``disagree`` reduces to ``D1 != D2`` when both end the activation: an order conflict
implies different sets). The facts encoding (``facts.py``) and the queries are
invariant under renaming processors, and the agreement query also under swapping V1
and V2. So any counterexample can be renamed so that

* the slot where it goes wrong is processor 0 (:func:`pinned_query`): for agreement,
  0 is delivered at V1 and not at V2 (swap the views if needed); for stability, 0 is
  delivered at one view and not the other; for internal stability, 0 is a candidate of
  V1 that V1 left out and V2 delivers; for external stability, V2 delivers 0 and V1 had
  not seen it;
* processors 1..n-1 are sorted by a key computed from their own variables
  (:func:`facts_keys`, :func:`sorted_by`): renaming among them keeps processor 0.

Without the pin the solver proves agreement at n = 6 by trying every slot (11 s for
ToTo, delta = 3); with it, 0.3 s. A rule that reads the rank has its queries split
(:func:`split_query`) into n queries, one per slot where the violation shows (for
agreement the smallest slot where the two sets differ), and two reductions that
respect the rank (docs/prove.md, "Symmetry for rules that read the rank"):

* the rule's leading clauses that read no rank and end the activation
  (:func:`rank_free_lead`; GL-ToTo: G-ToTo's two clauses) are a rank-free rule of their
  own: where both views fire them, the violation is pinned and the processors sorted
  as above; the rest of the query (a view fires a later clause) is split;
* processors whose rank nothing reads (:func:`rank_blind`: in each view neither a
  candidate nor the lowest-ranked unseen processor) are ranked last, sorted
  (:func:`rank_blind_last`).

GL-ToTo at n = 8 (every delta) takes 2.5-5 minutes with them; with the split alone it
had not finished after 25 minutes.
"""

from __future__ import annotations

from typing import Any

import z3

from tomkit.fuzz.prove.delivery.facts import FactsDag, FactsView
from tomkit.fuzz.prove.delivery.symbolic import SymOutcome, Z3RuleView, first_of

__all__ = ["by_clause", "facts_keys", "lex_geq", "pinned_query", "rank_blind",
           "rank_blind_last", "rank_free", "rank_free_lead", "sorted_by", "split_query"]


def rank_free(views: list[Z3RuleView]) -> bool:
    """The rule, as evaluated on these views, read no rank and always ended the
    activation (the condition for the reductions of this module)."""
    return all(not v.rank_used and not v.open_delivery for v in views)


def rank_free_lead(o: SymOutcome) -> SymOutcome | None:
    """The rule cut to its leading ``v.first`` options that read no rank and end the
    activation (GL-ToTo: G-ToTo's two clauses), when there are such options and others
    after them; else None. Where one of these options fires, the rule's decision is the
    cut rule's, which any renaming of the processors carries along."""
    j = 0
    while (j < len(o.options) and not o.ranked[j] and o.options[j].ends_activation):
        j += 1
    if j == 0 or j == len(o.options):
        return None
    return first_of(len(o.members), o.guards[:j], o.options[:j])


def pinned_query(prop: str, v1: FactsView, v2: FactsView, o1: SymOutcome, o2: SymOutcome,
                 within: list[Any]) -> list[Any]:
    """solve._query with its violation at slot 0 (see the module docstring)."""
    both = [o1.fired, o2.fired]
    if prop == "agreement":
        return both + [o1.members[0], z3.Not(o2.members[0])]
    if prop == "stability":
        return both + within + [o1.members[0] != o2.members[0]]
    if prop == "internal-stability":
        return both + within + [o1.ends, v1.cand[0], z3.Not(o1.members[0]), o2.members[0]]
    if prop == "external-stability":
        return both + within + [o1.ends, o2.members[0], z3.Not(v1.vis[0])]
    raise ValueError(f"unknown property {prop!r}")


def by_clause(o1: SymOutcome, o2: SymOutcome) -> list[list[Any]]:
    """One case per pair of options (i at V1, j at V2) that fire first: the cases are
    disjoint and, as every query asks both views to fire, their union is the query.
    Solved apart they take less CPU than whole (S-ToTo's agreement at n = 10, delta = 5:
    114 s against 168 s, docs/prove.md "Issue 30"), as the cases where one view fires
    the default clause are immediate."""
    def first(o: SymOutcome, i: int) -> Any:
        return z3.And(*[z3.Not(g) for g in o.guards[:i]], o.guards[i])
    return [[first(o1, i), first(o2, j)]
            for i in range(len(o1.guards)) for j in range(len(o2.guards))]


def split_query(prop: str, v1: FactsView, v2: FactsView, o1: SymOutcome, o2: SymOutcome,
                full: list[Any], swapped: bool = False) -> list[list[Any]]:
    """For a rule that reads the rank: ``full`` (solve._query) split into one query per
    slot i where the violation shows, which together cover it (docs/prove.md).

    agreement: i is the *smallest* slot where the two delivered sets differ (a
    disagreement needs one: equal sets are prefixes of each other), delivered at V1
    (else swap the views: the agreement query is symmetric in them); stability: the
    same without the swap (the views are nested); internal and external stability: the
    slot of their existential."""
    n = len(v1.vis)
    out = []
    for i in range(n):
        if prop in ("agreement", "stability"):
            pin = ([o1.members[i], z3.Not(o2.members[i])]
                   if prop == "agreement" and not swapped
                   else [o1.members[i] != o2.members[i]])
            pin += [o1.members[j] == o2.members[j] for j in range(i)]
        elif prop == "internal-stability":
            pin = [v1.cand[i], z3.Not(o1.members[i]), o2.members[i]]
        elif prop == "external-stability":
            pin = [o2.members[i], z3.Not(v1.vis[i])]
        else:
            raise ValueError(f"unknown property {prop!r}")
        out.append(full + pin)
    return out


def lex_geq(a: list[Any], b: list[Any]) -> Any:
    """Boolean vectors a >= b lexicographically (True > False), most significant first."""
    # from the least significant bit: geq_i = a_i > b_i or (a_i == b_i and geq_{i+1})
    geq: Any = z3.BoolVal(True)
    for x, y in reversed(list(zip(a, b))):
        geq = z3.Or(z3.And(x, z3.Not(y)), z3.And(x == y, geq))
    return geq


def _unary(bits: list[Any]) -> list[Any]:
    """How many of ``bits`` hold, in unary (``>= 1``, ``>= 2``, ...)."""
    return [z3.PbGe([(b, 1) for b in bits], t) for t in range(1, len(bits) + 1)]


def facts_keys(g: FactsDag, views: list[FactsView]) -> list[list[Any]]:
    """Per processor: its Crash events and visibility in each view, how many voters its
    voter follows, how many first messages its latest message follows in each view
    (each is carried along by a renaming of the processors)."""
    keys = []
    for q in range(g.n):
        bits = [v.crash[q] for v in views] + [v.vis[q] for v in views]
        bits += _unary([g.a[q][r] for r in range(g.n) if r != q])
        for v in views:
            bits += _unary([v.t[q][r] for r in range(g.n) if r != q])
        keys.append(bits)
    return keys


def _seen(v: FactsView, q: int) -> Any:
    return z3.Or(v.vis[q], v.crash[q])


def rank_blind(views: list[FactsView], q: int) -> Any:
    """Processor q's rank is read by nothing: in every view it is not a candidate
    (``precedes`` compares candidates) and not the lowest-ranked unseen processor
    (``seen_through(m)`` asks whether that one is ranked above m), docs/prove.md
    ("Symmetry for rules that read the rank")."""
    return z3.And([z3.And(z3.Not(v.cand[q]),
                          z3.Or(_seen(v, q), *[z3.Not(_seen(v, p)) for p in range(q)]))
                   for v in views])


def rank_blind_last(views: list[FactsView], keys: list[list[Any]]) -> list[Any]:
    """The rank-blind processors ranked last, in decreasing key order: the renaming
    that moves them there, sorted, and keeps the others in their order, keeps every
    rank the rule and the query read (docs/prove.md)."""
    n = len(keys)
    bl = [rank_blind(views, q) for q in range(n)]
    return ([z3.Implies(bl[q], bl[q + 1]) for q in range(n - 1)]
            + [z3.Implies(bl[q], lex_geq(keys[q], keys[q + 1])) for q in range(n - 1)])


def sorted_by(keys: list[list[Any]]) -> list[Any]:
    """The processors of ``keys``, in that order, sorted by decreasing key."""
    return [lex_geq(keys[q], keys[q + 1]) for q in range(len(keys) - 1)]
