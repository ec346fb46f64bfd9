"""The safety queries on one activation, and their plain-data witnesses.

Source: 002 section 2 ("the set of source messages must be stable: Internal Stability: No
non-source candidate message in G can become a source message. External Stability: No
unseen message (not in G) can become a source message"), and 000 section 4.2.

Each query asks Z3 for a final DAG G and two views V1, V2 of it (see ``encoding.py``)
at which the rule (evaluated by ``symbolic.Z3RuleView``) misbehaves:

``agreement``
    the rule fires at V1 and at V2 and the two deliveries disagree;
``stability``
    the same with V1 a subview of V2 (one process could be at V1 and later at V2);
``internal-stability``
    V1 within V2, the rule ends the activation at V1 and fires at V2 delivering a
    candidate of V1 that V1 left undelivered;
``external-stability``
    V1 within V2, the rule ends the activation at V1 and fires at V2 delivering a
    message that V1 had not seen.

Two deliveries (D1, e1) and (D2, e2) (sets, and whether they end the activation)
*disagree* when both end the activation and D1 != D2, or when neither of the sequences
lex(D1), lex(D2) is a prefix of the other (the only case for GL-ToTo's prefix deliveries,
which leave the activation open). Unsat proves the property for that n, delta and K;
sat gives a :class:`Witness`. For a witness of agreement or stability, the solver is
asked first for an *order* violation (neither sequence a prefix of the other), which a
trace shows as two processes delivering two messages in opposite orders.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import z3

from tomkit.fuzz.prove.delivery import QUERIES
from tomkit.fuzz.prove.delivery.encoding import (
    SymbolicDag,
    SymbolicView,
    make_dag,
    make_view,
    nested,
)
from tomkit.fuzz.prove.delivery.facts import (
    FactsDag,
    FactsView,
    facts_bounded,
    facts_nested,
    facts_pair,
    make_facts,
    make_facts_view,
)
from tomkit.fuzz.prove.delivery.minimal import minimize
from tomkit.fuzz.prove.delivery.symbolic import SymOutcome, Z3RuleView, outcome_of
from tomkit.fuzz.prove.delivery.symmetry import (
    by_clause,
    facts_keys,
    pinned_query,
    rank_blind_last,
    rank_free,
    rank_free_lead,
    sorted_by,
    split_query,
)

__all__ = ["ENCODINGS", "SOLVERS", "ProofResult", "ViewWitness", "Witness", "facts_parts", "prove",
           "symbolic_outcome"]

#: "facts": facts.py's encoding, with symmetry.py's reductions for rules that read no
#: rank; it only proves: a sat answer is re-asked on "classic" (issue 4's encoding,
#: encoding.py), which builds the witness, so counterexamples are the same either way
ENCODINGS = ("facts", "classic")

#: The named properties, in the order ``prove`` checks them.

RuleFn = Callable[[Any], Any]


@dataclass(frozen=True)
class ViewWitness:
    """One view of a witness: its messages and Crash events, and what Z3 says the rule
    does there (checked again concretely by ``fuzz/counterexample.py``)."""

    messages: tuple[str, ...]
    crashed: tuple[str, ...]
    fired: bool
    delivered: tuple[str, ...]
    ends_activation: bool
    clause: str | None


@dataclass(frozen=True)
class Witness:
    """A counterexample DAG and two views of it, as plain data.

    ``messages`` are (id, sender, deps) in a causal order; ids are ``p<q>.<k>`` for the
    k'th message (from 1) of processor ``p<q>``; deps are the direct predecessors (the
    transitive reduction of "follows"). Messages in neither view are left out: they
    cannot change the rule's decisions."""

    property: str
    n: int
    processors: tuple[str, ...]
    messages: tuple[tuple[str, str, tuple[str, ...]], ...]
    views: tuple[ViewWitness, ViewWitness]
    order_violation: bool


@dataclass
class ProofResult:
    """The outcome of one query: 'proved', 'counterexample' or 'unknown'."""

    property: str
    status: str
    seconds: float
    witness: Witness | None = None
    reason: str = ""
    stats: dict[str, Any] = field(default_factory=dict)


def symbolic_outcome(rule_fn: RuleFn, view: SymbolicView, n: int) -> SymOutcome:
    """Evaluate the rule on a symbolic view. Raises TypeError (or ValueError from the
    rule's own parameter checks) when the rule cannot be interpreted symbolically."""
    return _evaluate(rule_fn, view.rule_view(n), n)


def _evaluate(rule_fn: RuleFn, rv: Z3RuleView, n: int) -> SymOutcome:
    try:
        return outcome_of(rule_fn(rv), n)
    except z3.Z3Exception as e:  # e.g. Python arithmetic the vocabulary does not allow
        raise TypeError(f"not interpretable on Z3 terms: {e}") from e


def _lex_prefix(a: SymOutcome, b: SymOutcome, n: int) -> Any:
    """lex(D_a) is a prefix of lex(D_b): D_a within D_b, and every member of D_b not in
    D_a comes after every member of D_a (slots are in lexicographic order)."""
    sub = z3.And([z3.Implies(a.members[i], b.members[i]) for i in range(n)])
    after = z3.And([z3.Implies(z3.And(b.members[j], z3.Not(a.members[j]), a.members[i]),
                                z3.BoolVal(i < j))
                    for i in range(n) for j in range(n) if i != j])
    return z3.And(sub, after)


def order_conflict(o1: SymOutcome, o2: SymOutcome, n: int) -> Any:
    """Neither delivered sequence is a prefix of the other."""
    return z3.Not(z3.Or(_lex_prefix(o1, o2, n), _lex_prefix(o2, o1, n)))


def disagree(o1: SymOutcome, o2: SymOutcome, n: int) -> Any:
    differ = z3.Or([o1.members[i] != o2.members[i] for i in range(n)])
    return z3.Or(z3.And(o1.ends, o2.ends, differ), order_conflict(o1, o2, n))


def _query(prop: str, g: SymbolicDag | FactsDag, v1: SymbolicView | FactsView,
           v2: SymbolicView | FactsView, o1: SymOutcome, o2: SymOutcome,
           within: list[Any] | None = None) -> list[Any]:
    """The query's constraints; ``within``: V1 within V2 (default: ``nested``)."""
    n = g.n
    both = [o1.fired, o2.fired]
    if within is None and prop != "agreement":
        assert isinstance(v1, SymbolicView) and isinstance(v2, SymbolicView)
        within = nested(v1, v2)
    if prop == "agreement":
        return both + [disagree(o1, o2, n)]
    if prop == "stability":
        return both + within + [disagree(o1, o2, n)]
    if prop == "internal-stability":
        return both + within + [o1.ends, z3.Or(
            [z3.And(v1.cand[i], z3.Not(o1.members[i]), o2.members[i]) for i in range(n)])]
    if prop == "external-stability":
        return both + within + [o1.ends, z3.Or(
            [z3.And(o2.members[i], z3.Not(v1.inv[i, 0])) for i in range(n)])]
    raise ValueError(f"unknown property {prop!r}; expected one of {', '.join(QUERIES)}")


def _processors(n: int) -> tuple[str, ...]:
    return tuple(f"p{q}" for q in range(n))


def _mid(a: tuple[int, int]) -> str:
    return f"p{a[0]}.{a[1] + 1}"


def _witness(prop: str, m: z3.ModelRef, g: SymbolicDag, views: list[SymbolicView],
             outs: list[SymOutcome], order: bool) -> Witness:
    def val(x: Any) -> bool:
        return z3.is_true(m.eval(x, model_completion=True))

    msgs = [a for a in g.messages if val(g.exists[a[0]][a[1]])
            and any(val(v.inv[a]) for v in views)]
    fol = {(a, b): val(g.f(a, b)) for a in msgs for b in msgs}
    # a causal order: fewer predecessors first
    msgs.sort(key=lambda a: (sum(fol[a, b] for b in msgs), a))
    out = []
    for a in msgs:
        preds = [b for b in msgs if b != a and fol[a, b]]
        direct = [b for b in preds
                  if not any(c != b and fol[c, b] for c in preds)]
        out.append((_mid(a), f"p{a[0]}", tuple(_mid(b) for b in direct)))
    vws = []
    for v, o in zip(views, outs):
        fired = val(o.fired)
        ci = m.eval(o.clause, model_completion=True).as_long()
        vws.append(ViewWitness(
            messages=tuple(_mid(a) for a in msgs if val(v.inv[a])),
            crashed=tuple(f"p{q}" for q in range(g.n) if val(v.crash[q])),
            fired=fired,
            delivered=tuple(f"p{q}.1" for q in range(g.n) if val(o.members[q])),
            ends_activation=fired and val(o.ends),
            clause=o.clauses[ci] if fired and 0 <= ci < len(o.clauses) else None))
    return Witness(prop, g.n, _processors(g.n), tuple(out), (vws[0], vws[1]), order)


def prove(rule_fn: RuleFn, n: int, k: int = 3, prop: str = "agreement",
          timeout: float | None = None, crashes: bool = True,
          minimal: bool = True, encoding: str = "facts",
          rank_symmetry: bool = True, solver: str = "cardinality") -> ProofResult:
    """Decide ``prop`` (one of :data:`QUERIES`) for the rule on n processors with at
    most k messages per processor, with (``crashes``) or without Crash(q) events.

    ``rule_fn(v)`` evaluates the rule, parameters bound, on a view ``v``. Raises
    TypeError when the rule is outside the vocabulary (see ``symbolic.py``). With
    ``minimal``, a witness has the fewest messages, then the fewest causal edges, of any
    for this n and K (``minimal.py``; its sizes in ``stats["sizes"]``). ``encoding``:
    one of :data:`ENCODINGS`; both give the same answers and witnesses.
    ``rank_symmetry``: for a rule that reads the rank, the reductions of
    ``symmetry.py`` (False: only the split by slot, issue 19's first version, kept as
    the benchmark's baseline). ``solver``: how the facts encoding's parts go to SAT,
    one of :data:`SOLVERS` (the same answers; "bit-blast" was the default before issue
    30)."""
    if prop not in QUERIES:
        raise ValueError(f"unknown property {prop!r}; expected one of {', '.join(QUERIES)}")
    if solver not in SOLVERS:
        raise ValueError(f"unknown solver {solver!r}; expected one of {', '.join(SOLVERS)}")
    if encoding not in ENCODINGS:
        raise ValueError(f"unknown encoding {encoding!r}; expected one of "
                         f"{', '.join(ENCODINGS)}")
    t0 = time.perf_counter()
    stats: dict[str, Any] = {"encoding": encoding}
    if encoding == "facts":
        r, reason = _prove_facts(rule_fn, n, k, prop, crashes, timeout, stats, rank_symmetry,
                                 solver)
        if r == z3.unsat:
            return ProofResult(prop, "proved", time.perf_counter() - t0, stats=stats)
        if r == z3.unknown:
            return ProofResult(prop, "unknown", time.perf_counter() - t0, reason=reason,
                               stats=stats)
        if timeout is not None:
            timeout = max(1.0, timeout - (time.perf_counter() - t0))
    g = make_dag(n, k)
    v1, v2 = make_view(g, "V1"), make_view(g, "V2")
    r1, r2 = v1.rule_view(n), v2.rule_view(n)
    o1 = _evaluate(rule_fn, r1, n)
    o2 = _evaluate(rule_fn, r2, n)
    base = g.constraints + v1.constraints + v2.constraints
    if not crashes:
        base += [z3.Not(c) for c in v1.crash + v2.crash]
    query = base + _query(prop, g, v1, v2, o1, o2)
    r, model, reason = _check(query, timeout)
    if r == z3.unsat:
        return ProofResult(prop, "proved", time.perf_counter() - t0, stats=stats)
    if r == z3.unknown:
        return ProofResult(prop, "unknown", time.perf_counter() - t0, reason=reason,
                           stats=stats)
    order = z3.is_true(model.eval(order_conflict(o1, o2, n), model_completion=True))
    if not order and prop in ("agreement", "stability"):
        # prefer a witness whose two delivery sequences conflict in order
        r2, model2, _ = _check(query + [order_conflict(o1, o2, n)], timeout)
        if r2 == z3.sat:
            model, order = model2, True
    if minimal:
        if order:
            query = query + [order_conflict(o1, o2, n)]
        model, sizes = minimize(query, model, g, [v1, v2], _check, timeout)
        stats["sizes"] = sizes
    w = _witness(prop, model, g, [v1, v2], [o1, o2], order)
    return ProofResult(prop, "counterexample", time.perf_counter() - t0, witness=w,
                       stats=stats)


#: the last facts encoding built, reused by the next query on the same rule function
#: and n (tomkit prove asks three or four queries in a row; building the encoding and
#: evaluating the rule on Z3 terms cost as much as solving at n = 7)
_LAST: list[Any] = []


def _facts_encoding(rule_fn: RuleFn, n: int) -> tuple[Any, ...]:
    if _LAST and _LAST[0] is rule_fn and _LAST[1] == n:
        return tuple(_LAST[2:])
    g = make_facts(n)
    v1, v2 = make_facts_view(g, "V1"), make_facts_view(g, "V2")
    r1, r2 = v1.rule_view(g), v2.rule_view(g)
    o1, o2 = _evaluate(rule_fn, r1, n), _evaluate(rule_fn, r2, n)
    _LAST[:] = [rule_fn, n, g, v1, v2, r1, r2, o1, o2]
    return g, v1, v2, r1, r2, o1, o2


def facts_parts(rule_fn: RuleFn, n: int, k: int = 3, prop: str = "agreement",
                crashes: bool = True, rank_symmetry: bool = True,
                stats: dict[str, Any] | None = None) -> list[list[Any]]:
    """The query on facts.py's encoding, reduced and split (symmetry.py) into parts:
    unsat of every part proves it (any K); a sat part may be spurious. ``stats`` gets
    which reduction applied ("symmetry")."""
    if stats is None:
        stats = {}
    g, v1, v2, r1, r2, o1, o2 = _facts_encoding(rule_fn, n)
    base = (g.constraints + v1.constraints + v2.constraints + facts_pair(g, v1, v2)
            + facts_bounded(g, v1, v2, k))
    if not crashes:
        base += [z3.Not(c) for c in v1.crash + v2.crash]
    within = facts_nested(v1, v2)
    l1, l2 = rank_free_lead(o1), rank_free_lead(o2)
    if rank_free([r1, r2]):
        # symmetry.py: the violation is pinned on processor 0, the others sorted
        whole = (base + pinned_query(prop, v1, v2, o1, o2, within)
                 + sorted_by(facts_keys(g, [v1, v2])[1:]))
        parts = [whole + case for case in by_clause(o1, o2)]
        stats["symmetry"] = True
    elif not rank_symmetry:
        parts = split_query(prop, v1, v2, o1, o2, base + _query(prop, g, v1, v2, o1, o2,
                                                                within))
    elif l1 is not None and l2 is not None:
        # symmetry.py: where both views fire the rule's rank-free leading clauses, pin
        # and sort as above; the rest (a view fires a later clause) split by slot
        # and that part, like a rank-free rule's query, split by the lead clause that
        # fires at each view (GL-ToTo, n = 8, delta = 3, agreement: 10.1 s of CPU
        # against 16.0 s whole, docs/prove.md "Issue 30")
        lead = (base + pinned_query(prop, v1, v2, l1, l2, within)
                + sorted_by(facts_keys(g, [v1, v2])[1:]))
        parts = [lead + case for case in by_clause(l1, l2)]
        swap = prop == "agreement"
        rest = [z3.Not(l1.fired)] if swap else [z3.Not(z3.And(l1.fired, l2.fired))]
        full = base + _query(prop, g, v1, v2, o1, o2, within) + rest
        full += rank_blind_last([v1, v2], facts_keys(g, [v1, v2]))
        parts += split_query(prop, v1, v2, o1, o2, full, swapped=swap)
        stats["symmetry"] = "lead"
    else:
        # symmetry.py: the rank-blind processors last, sorted; split by slot
        full = (base + _query(prop, g, v1, v2, o1, o2, within)
                + rank_blind_last([v1, v2], facts_keys(g, [v1, v2])))
        parts = split_query(prop, v1, v2, o1, o2, full)
    return parts


def _prove_facts(rule_fn: RuleFn, n: int, k: int, prop: str, crashes: bool,
                 timeout: float | None, stats: dict[str, Any],
                 rank_symmetry: bool = True, solver: str = "cardinality") -> tuple[Any, str]:
    """Solve :func:`facts_parts` in turn: unsat of all proves the query; the first part
    that is not unsat answers. ``stats`` gets each part's wall and CPU seconds."""
    parts = facts_parts(rule_fn, n, k, prop, crashes, rank_symmetry, stats)
    t0 = time.perf_counter()
    r, reason = z3.unsat, ""
    for part in parts:
        left = None if timeout is None else timeout - (time.perf_counter() - t0)
        if left is not None and left <= 0:
            return z3.unknown, "timeout"
        t1, c1 = time.perf_counter(), time.process_time()
        r, _, reason = _check(part, left, solver)
        stats.setdefault("parts", []).append(round(time.perf_counter() - t1, 2))
        stats.setdefault("parts_cpu", []).append(round(time.process_time() - c1, 2))
        if r != z3.unsat:
            break
    stats["facts"] = str(r)
    return r, reason


def fires_somewhere(rule_fn: RuleFn, n: int, k: int = 3,
                    timeout: float | None = None) -> bool | None:
    """Whether the rule fires at some view (None: unknown). A rule that never fires
    satisfies every property vacuously; ``tomkit prove`` says so. A DAG with one
    message per processor is asked first (small to build; if the rule fires there, it
    fires), then one with k."""
    for kk in sorted({min(1, k), k}):
        g = make_dag(n, kk)
        v = make_view(g, "V")
        o = symbolic_outcome(rule_fn, v, n)
        r, _, _ = _check(g.constraints + v.constraints + [o.fired], timeout)
        if r != z3.unsat:
            return None if r == z3.unknown else True
    return False


def _check(constraints: list[Any], timeout: float | None,
           solver: str = "bit-blast") -> tuple[Any, Any, str]:
    """Solve with a tactic that suits these formulas: the integers are small counts
    (sums of 0/1 terms compared with constants), so they are turned into cardinality
    constraints, then to SAT (3-4x faster than the default solver at n = 7; measured by
    bench/prove_bench.py). ``solver``: one of :data:`SOLVERS`."""
    s = _tactic(solver).solver()
    if timeout is not None:
        s.set("timeout", max(1, int(timeout * 1000)))
    s.add(constraints)
    r = s.check()
    reason = s.reason_unknown() if r == z3.unknown else ""
    if r == z3.unknown and solver != "bit-blast" and not _gave_up(reason):
        # a formula the tactic could not take to SAT (not propositional after
        # lia2card): the bit-blasting tactic takes any bounded arithmetic
        return _check(constraints, timeout, "bit-blast")
    return r, (s.model() if r == z3.sat else None), reason


def _gave_up(reason: str) -> bool:
    return any(w in reason for w in ("timeout", "canceled", "max. resource", "memout"))


#: how a facts part goes to SAT: "cardinality" keeps the counts as cardinality
#: constraints that the SAT solver reasons on natively (S-ToTo, n = 10, delta = 5,
#: agreement, the hardest part: 31 s of CPU against more than 81 s bit-blasted; G-ToTo,
#: n = 9, delta = 4: 29 s against 40 s; docs/prove.md "Issue 30"); "bit-blast" turns
#: them into adder circuits first (``card2bv``), as before
SOLVERS = ("cardinality", "bit-blast")


def _tactic(solver: str = "bit-blast") -> z3.Tactic:
    if solver == "cardinality":
        return z3.Then("simplify", "propagate-values", "solve-eqs", "lia2card", "simplify",
                       z3.With("sat", **{"cardinality.solver": True}))
    if solver != "bit-blast":
        raise ValueError(f"unknown solver {solver!r}; expected one of {', '.join(SOLVERS)}")
    return z3.Then("simplify", "propagate-values", "solve-eqs", "lia2card", "card2bv",
                   "simplify", "bit-blast", "sat")
