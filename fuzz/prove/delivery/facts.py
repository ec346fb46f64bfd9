"""The "facts" encoding: per processor, only what the rule vocabulary reads.

Sources: the vocabulary of 000 section 4.1 and 002 section 3, as ``encoding.py``
encodes it; the argument is in docs/prove.md ("The facts encoding").

The vocabulary at a view reads, per processor q: whether its voter (q,0) is visible
(``vis[q]``), whether Crash(q) is in the view (``crash[q]``), which first messages
(i,0) the voter follows (``a[q][i]``, the same in every view: it is a fact of G) and
which first messages q's *latest* visible message follows (``t[q][i]``, Tail). So this
encoding has those variables and no message beyond the first ones:

* ``a`` is a strict partial order (irreflexive, transitive);
* a view is causally closed on voters: ``a[q][i] and vis[q] -> vis[i]``;
* Tail: ``t[q][i] -> vis[q] and vis[i]``; the voter is q's first message, so
  ``vis[q] and a[q][i] -> t[q][i]``; the latest message follows what (i,0) follows:
  ``t[q][j] and a[j][i] -> t[q][i]``;
* q's messages form a chain, so its latest messages in the two views are ordered:
  ``t1[q]`` within ``t2[q]`` or the other way round (and ``vis`` likewise);
* Crash(q) in a view: every message of q in G is in it, so the other view's voter and
  latest message of q are too: ``crash1[q] -> (vis2[q] -> vis1[q]) and t2[q] within t1[q]``;
* nested views (V1 within V2): ``vis1 -> vis2``, ``t1[q]`` within ``t2[q]``,
  ``crash1 -> crash2``.

Every one of these holds in every DAG and pair of views of ``encoding.py`` (they are
facts about the chain, transitivity, closure and the crash assumption), so a
counterexample there gives a model here, and unsat here proves the property. The
converse (a model here is a DAG) is argued in docs/prove.md; it is not relied on: a sat
answer is re-asked on the classic encoding, which builds the witness.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import z3

from tomkit.fuzz.prove.delivery.symbolic import Z3RuleView

__all__ = ["FactsDag", "FactsView", "facts_bounded", "facts_nested", "facts_pair",
           "make_facts", "make_facts_view"]


@dataclass
class FactsDag:
    """The voters' order ``a[q][i]`` ((q,0) follows (i,0), q != i)."""

    n: int
    a: list[list[Any]]
    constraints: list[Any] = field(default_factory=list)


@dataclass
class FactsView:
    """One view: visible voters, Crash events, Tail facts, and the vocabulary."""

    name: str
    vis: list[Any]
    crash: list[Any]
    t: list[list[Any]]
    cand: list[Any]
    constraints: list[Any] = field(default_factory=list)

    @property
    def inv(self) -> dict[tuple[int, int], Any]:
        # what solve._query reads: is the first message (q,0) visible
        return {(q, 0): x for q, x in enumerate(self.vis)}

    def rule_view(self, g: FactsDag) -> Z3RuleView:
        n = g.n
        yes = [[self.vis[q] if q == i else z3.And(self.vis[q], g.a[q][i])
                for q in range(n)] for i in range(n)]
        tail = [[self.t[q][i] for q in range(n)] for i in range(n)]
        seen = [z3.Or(self.vis[q], self.crash[q]) for q in range(n)]
        return Z3RuleView(n, self.cand, yes, tail, seen)


def make_facts(n: int, prefix: str = "") -> FactsDag:
    """The voters' strict partial order."""
    if n < 1:
        raise ValueError(f"need n >= 1, got n = {n}")
    a = [[z3.BoolVal(False) if q == i else z3.Bool(f"{prefix}a_{q}_{i}") for i in range(n)]
         for q in range(n)]
    cs: list[Any] = []
    for q in range(n):
        for i in range(n):
            if q == i:
                continue
            cs.append(z3.Not(z3.And(a[q][i], a[i][q])))
            for j in range(n):
                if j != q and j != i:
                    cs.append(z3.Implies(z3.And(a[q][j], a[j][i]), a[q][i]))
    return FactsDag(n, a, cs)


def make_facts_view(g: FactsDag, name: str) -> FactsView:
    """One view's variables and the constraints on them alone."""
    n = g.n
    vis = [z3.Bool(f"{name}_vis_{q}") for q in range(n)]
    crash = [z3.Bool(f"{name}_crash_{q}") for q in range(n)]
    t = [[vis[q] if q == i else z3.Bool(f"{name}_t_{q}_{i}") for i in range(n)]
         for q in range(n)]
    cs: list[Any] = []
    for q in range(n):
        for i in range(n):
            if q == i:
                continue
            cs.append(z3.Implies(z3.And(g.a[q][i], vis[q]), vis[i]))
            cs.append(z3.Implies(t[q][i], z3.And(vis[q], vis[i])))
            cs.append(z3.Implies(z3.And(vis[q], g.a[q][i]), t[q][i]))
            for j in range(n):
                if j != q and j != i:
                    cs.append(z3.Implies(z3.And(t[q][j], g.a[j][i]), t[q][i]))
    cand = [z3.And(vis[q], *[z3.Not(g.a[q][i]) for i in range(n) if i != q])
            for q in range(n)]
    return FactsView(name, vis, crash, t, cand, cs)


def _within(x: list[Any], y: list[Any]) -> Any:
    return z3.And([z3.Implies(p, r) for p, r in zip(x, y)])


def facts_pair(g: FactsDag, v1: FactsView, v2: FactsView) -> list[Any]:
    """Constraints between the two views of one DAG: chains and crashes."""
    cs: list[Any] = []
    for q in range(g.n):
        c12, c21 = _within(v1.t[q], v2.t[q]), _within(v2.t[q], v1.t[q])
        cs.append(z3.Or(c12, c21))
        cs.append(z3.Implies(v1.crash[q], c21))
        cs.append(z3.Implies(v2.crash[q], c12))
    return cs


def facts_bounded(g: FactsDag, v1: FactsView, v2: FactsView, k: int) -> list[Any]:
    """At most k messages per processor (k >= 3 restricts nothing, docs/prove.md): with
    k = 1 the latest message is the voter; with k = 2 the two views' latest messages
    that are not the voter are the same message."""
    if k >= 3:
        return []
    cs: list[Any] = []
    for q in range(g.n):
        base = [[v.vis[q] if i == q else z3.And(v.vis[q], g.a[q][i]) for i in range(g.n)]
                for v in (v1, v2)]
        own = [[v.t[q][i] == b for i, b in enumerate(bs)] for v, bs in zip((v1, v2), base)]
        if k == 1:
            cs += own[0] + own[1]
        else:
            same = [x == y for x, y in zip(v1.t[q], v2.t[q])]
            cs.append(z3.Or(z3.And(own[0]), z3.And(own[1]), z3.And(same)))
    return cs


def facts_nested(v1: FactsView, v2: FactsView) -> list[Any]:
    """V1 within V2 (messages and crashes)."""
    return ([_within(v1.t[q], v2.t[q]) for q in range(len(v1.vis))]
            + [z3.Implies(c1, c2) for c1, c2 in zip(v1.crash, v2.crash)])
