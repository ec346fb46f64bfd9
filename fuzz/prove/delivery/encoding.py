"""One activation of a ToTo-family delivery rule, encoded for Z3.

Sources: the causal DAG of 000 section 2.1 and 002 section 2; the vocabulary of 000
section 4.1 and 002 section 3; Crash(q) of 000 section 5.2 (Figure 4). The argument for
why one activation and K = 3 suffice is in docs/prove.md.

The final DAG G
---------------
Processor q (rank q = 0..n-1) sent ``len_q <= K`` messages ``(q, 0), (q, 1), ...``
(``exists[q][j]``, downward closed in j). ``F[a][b]``: message a follows message b. It
is reflexive on existing messages, relates existing messages only, is transitive and
antisymmetric (a partial order), and each processor's messages form a chain
(``(q, j)`` follows ``(q, j - 1)``, 000 section 2.1). These are exactly the DAGs a
``DagView`` accepts, with ``F`` the reflexive-transitive closure of the ACK edges.

Views
-----
A view (what one process has seen when it evaluates the rule) is a causally closed set of
messages, ``inv[a]`` (``inv[a] and F[a][b] -> inv[b]``), and a set of Crash(q) events,
``crash[q]``. Membership assumption (000 section 5.1: no message of q is received after
Crash(q)): a view with Crash(q) already holds *every* message of q in G, so all processes
agree on the messages of a crashed processor. Two nested views also nest their crashes.

The vocabulary at a view
------------------------
The delivered prefix is empty, so the activation's G is the view itself:

* slot q's message is q's first message (q, 0); it is a candidate iff it is visible
  and follows no other message (a root, 000 section 4.1: "follows only delivered");
* q votes for candidate i iff q's voter (q, 0) is visible and follows (i, 0) (002
  section 3; a Crash without a visible message votes for nothing, 000 Figure 4);
* q is in Tail(i) iff *some* visible message of q follows (i, 0) (000 section 4.1:
  Tail depends on every visible message of q, not only its voter);
* q is in Tail(G) iff (q, 0) is visible or Crash(q) is in the view.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import z3

from tomkit.fuzz.prove.delivery.symbolic import Z3RuleView

__all__ = ["SymbolicDag", "SymbolicView", "make_dag", "make_view", "nested"]

Msg = tuple[int, int]


@dataclass
class SymbolicDag:
    """The final DAG's variables and constraints (see the module docstring)."""

    n: int
    k: int
    exists: list[list[Any]]
    follows: dict[tuple[Msg, Msg], Any]
    constraints: list[Any] = field(default_factory=list)

    @property
    def messages(self) -> list[Msg]:
        return [(q, j) for q in range(self.n) for j in range(self.k)]

    def f(self, a: Msg, b: Msg) -> Any:
        return self.follows[a, b]


@dataclass
class SymbolicView:
    """One causally closed view of a :class:`SymbolicDag`, and its vocabulary."""

    name: str
    inv: dict[Msg, Any]
    crash: list[Any]
    cand: list[Any]
    yes: list[list[Any]]
    tail: list[list[Any]]
    seen: list[Any]
    constraints: list[Any] = field(default_factory=list)

    def rule_view(self, n: int) -> Z3RuleView:
        return Z3RuleView(n, self.cand, self.yes, self.tail, self.seen)


def make_dag(n: int, k: int, prefix: str = "") -> SymbolicDag:
    """The symbolic final DAG of one activation: n processors, at most k messages each."""
    if n < 1 or k < 1:
        raise ValueError(f"need n >= 1 and k >= 1, got n = {n}, k = {k}")
    ex = [[z3.Bool(f"{prefix}e_{q}_{j}") for j in range(k)] for q in range(n)]
    msgs = [(q, j) for q in range(n) for j in range(k)]
    fol: dict[tuple[Msg, Msg], Any] = {}
    cs: list[Any] = []
    for q in range(n):
        for j in range(1, k):
            cs.append(z3.Implies(ex[q][j], ex[q][j - 1]))
    for a in msgs:
        for b in msgs:
            if a == b:
                fol[a, b] = ex[a[0]][a[1]]
            elif a[0] == b[0]:
                # a processor's messages form a chain: later ones follow earlier ones
                fol[a, b] = z3.And(ex[a[0]][a[1]]) if b[1] < a[1] else z3.BoolVal(False)
            else:
                v = z3.Bool(f"{prefix}f_{a[0]}_{a[1]}__{b[0]}_{b[1]}")
                fol[a, b] = v
                cs.append(z3.Implies(v, z3.And(ex[a[0]][a[1]], ex[b[0]][b[1]])))
    for a in msgs:
        for b in msgs:
            if a[0] == b[0]:
                continue
            # antisymmetry between messages of different processors
            cs.append(z3.Not(z3.And(fol[a, b], fol[b, a])))
            for c in msgs:
                if c == a or c == b:
                    continue
                cs.append(z3.Implies(z3.And(fol[a, b], fol[b, c]), fol[a, c]))
    # following a processor's later message implies following its earlier ones (a
    # consequence of transitivity with the chain; stated to help the solver)
    for a in msgs:
        for r in range(n):
            if r == a[0]:
                continue
            for j in range(1, k):
                cs.append(z3.Implies(fol[a, (r, j)], fol[a, (r, j - 1)]))
    return SymbolicDag(n, k, ex, fol, cs)


def make_view(g: SymbolicDag, name: str) -> SymbolicView:
    """A causally closed view of ``g`` with its Crash set, and its vocabulary."""
    n, k = g.n, g.k
    inv = {a: z3.Bool(f"{name}_in_{a[0]}_{a[1]}") for a in g.messages}
    crash = [z3.Bool(f"{name}_crash_{q}") for q in range(n)]
    cs: list[Any] = []
    for a in g.messages:
        cs.append(z3.Implies(inv[a], g.exists[a[0]][a[1]]))
        for b in g.messages:
            if a != b:
                cs.append(z3.Implies(z3.And(inv[a], g.f(a, b)), inv[b]))
    for q in range(n):
        # the membership assumption: Crash(q) comes after all of q's messages in G
        for j in range(k):
            cs.append(z3.Implies(z3.And(crash[q], g.exists[q][j]), inv[q, j]))
    first = [(q, 0) for q in range(n)]
    root = [z3.And([z3.Not(g.f((q, 0), b)) for b in g.messages if b[0] != q])
            for q in range(n)]
    cand = [z3.And(inv[q, 0], root[q]) for q in range(n)]
    yes = [[z3.And(inv[first[q]], g.f(first[q], first[i])) for q in range(n)]
           for i in range(n)]
    tail = [[z3.Or([z3.And(inv[q, j], g.f((q, j), first[i])) for j in range(k)])
             for q in range(n)] for i in range(n)]
    seen = [z3.Or(inv[q, 0], crash[q]) for q in range(n)]
    return SymbolicView(name, inv, crash, cand, yes, tail, seen, cs)


def nested(v1: SymbolicView, v2: SymbolicView) -> list[Any]:
    """Constraints making ``v1`` a subview of ``v2`` (messages and crashes)."""
    return ([z3.Implies(v1.inv[a], v2.inv[a]) for a in v1.inv]
            + [z3.Implies(c1, c2) for c1, c2 in zip(v1.crash, v2.crash)])
