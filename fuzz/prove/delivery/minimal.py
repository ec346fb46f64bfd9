"""The smallest counterexample of a query: fewest messages, then fewest causal edges.

A counterexample DAG is what a user studies to see why a rule is wrong, so it should hold
nothing that the violation does not need. Z3 returns *some* model of a satisfiable query,
and which one depends on the solver's search: for ``s-toto-no-internal`` at n = 6 it gave
DAGs of 8 to 16 messages from run to run. Here the model is driven down by a descending
bound, with the same fast solver as the query itself (``solve._check``):

1. messages: the number of messages in either view (the only ones a witness shows; the
   others cannot change a decision) is bounded by one less than the last model's, until
   the bound is unsatisfiable;
2. edges: with that many messages, the same for the *direct* causal edges between
   messages of different processors (a follows b, and no third message lies between
   them: the edges a space-time diagram draws; a processor's own chain is not counted,
   it is implied by the messages).

Each step is one satisfiability call; the last call of each step, unsat, proves the
minimum for this n and K. A step that times out keeps the best model so far and says so
(``Sizes.proved`` is False).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import z3

from tomkit.fuzz.prove.delivery.encoding import Msg, SymbolicDag, SymbolicView

__all__ = ["Sizes", "edge_count", "message_count", "minimize"]

Check = Callable[[list[Any], float | None], tuple[Any, Any, str]]


@dataclass(frozen=True)
class Sizes:
    """Messages and direct cross-processor edges of the first model Z3 gave and of the
    minimal one; ``proved``: both minima were proved (the last bound was unsat)."""

    messages_first: int
    edges_first: int
    messages: int
    edges: int
    proved: bool
    calls: int

    def to_dict(self) -> dict[str, Any]:
        return {"messages_first": self.messages_first, "edges_first": self.edges_first,
                "messages": self.messages, "edges": self.edges, "proved": self.proved,
                "calls": self.calls}


def _in_views(views: list[SymbolicView], a: Msg) -> Any:
    return z3.Or([v.inv[a] for v in views])


def message_count(g: SymbolicDag, views: list[SymbolicView]) -> Any:
    """The number of messages in some view, as a Z3 integer term."""
    return z3.Sum([z3.If(_in_views(views, a), 1, 0) for a in g.messages])


def edge_count(g: SymbolicDag, views: list[SymbolicView]) -> Any:
    """The number of direct edges a -> b (a follows b, nothing between) with a and b of
    different processors and a in some view (then b is too: views are causally
    closed), as a Z3 integer term."""
    msgs = g.messages
    terms = []
    for a in msgs:
        inside = _in_views(views, a)
        for b in msgs:
            if a[0] == b[0]:
                continue
            between = [z3.And(g.f(a, c), g.f(c, b)) for c in msgs if c != a and c != b]
            terms.append(z3.If(z3.And(inside, g.f(a, b), z3.Not(z3.Or(between))), 1, 0))
    return z3.Sum(terms)


def _value(model: Any, term: Any) -> int:
    return model.eval(term, model_completion=True).as_long()


def minimize(query: list[Any], model: Any, g: SymbolicDag, views: list[SymbolicView],
             check: Check, timeout: float | None = None) -> tuple[Any, Sizes]:
    """The model of ``query`` with fewest messages, then fewest edges (module docstring),
    starting from ``model``; ``check(constraints, timeout)`` is the solver call."""
    msgs, edges = message_count(g, views), edge_count(g, views)
    m0, e0 = _value(model, msgs), _value(model, edges)
    best, calls = model, 0

    def descend(term: Any, query: list[Any]) -> tuple[int, bool]:
        """Bound ``term`` below the best model's value until unsat: (minimum, proved)."""
        nonlocal best, calls
        cur = _value(best, term)
        while cur > 0:
            r, m, _ = check(query + [term <= cur - 1], timeout)
            calls += 1
            if r != z3.sat:
                return cur, r == z3.unsat
            best, cur = m, _value(m, term)
        return cur, True

    n_msgs, proved_m = descend(msgs, query)
    n_edges, proved_e = descend(edges, query + [msgs == n_msgs])
    return best, Sizes(m0, e0, n_msgs, n_edges, proved_m and proved_e, calls)
