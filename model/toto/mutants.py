"""Deliberately broken delivery rules: what ``tomkit prove`` and ``tomkit fuzz`` must
refute, and what data sets with real order violations are simulated from.

Each mutant is a rule over the vocabulary (``model/toto/vocab.py``), written like the rules of
``model/toto/rules.py`` and run unchanged by the simulator (``model/sim.py``). Each drops one
condition the papers' correctness arguments rely on. All of them are in :data:`MUTANTS`,
which ``tomkit prove`` and ``tomkit fuzz`` accept by name:

``toto-low-delta``
    ToTo_delta (000 section 4.2) with delta < n/2, below the range 000 allows: two
    disjoint sets of delta + 1 voters can make two different messages win.
``s-toto-no-internal``
    S-ToTo (002 section 3) without rule 1a, internal stability: a candidate that is not
    a source yet may still become one.
``s-toto-low-delta``
    S-ToTo (002 section 3) with delta < n/2. (ToTo itself with delta < n/2 is
    ``toto-low-delta``; ``tomkit prove`` finds it safe for one activation: its clause
    NTail(s) >= n - delta leaves at most delta processors unseen, see docs/prove.md.)
``g-toto-no-ntail``
    G-ToTo (002 section 4) without "Ntail(G) > n - delta" in rule 1b: an unseen
    message may still gather more than delta votes.
``majority``
    deliver whatever a majority voted for, once anything has a majority.
``toto-002-restated``
    ToTo as Johnson and Maugis (002 section 3) restate it, which is not Dolev, Kramer and
    Malki's (000 section 4.2): S-ToTo's rules with one more conjunct in the early clause,
    NTail(s') > n - delta for every source s' (as the OCR of 002 prints it). A literal
    reading of a paper rather than a dropped condition: ``tomkit prove`` proves it at n =
    4 and refutes agreement at n = 6, delta = 3 (7 messages): a view where a source's
    NTail is too small falls to the default rule and delivers a non-source that another
    view, stable early, did not (000's clause (b) delivers S_p there, which is why 000's
    ToTo is safe). docs/toto-figures.md measures it (``toto-002``).

:func:`toto_002_restated_ge` is the same with NTail(s') >= n - delta (000's relation),
refuted at n = 6, delta = 3 too; it is no entry of :data:`MUTANTS` (reach it as
``tomkit.model.toto.mutants:toto_002_restated_ge``): every entry is cross-checked against
exhaustive enumeration up to n = 4 by the test suite (about 15 s each), and it would
repeat the printed reading's.

The data set generator simulates ``majority`` (``model/dataset.py``); what was measured of
two of them:

* ``toto-low-delta``: ToTo_delta (000 section 4.2, criterion (DEL)) with delta below n/2.
  000 section 4.1 requires n/2 <= delta < n: two sources that each collect more than
  delta votes then cannot both exist, so all processes agree on S_p. With a smaller
  delta two processes can see different early sources and deliver them in different
  orders. The rule body is ToTo's, minus the range check of ``rules._delta``.
  Measured (n = 4, 6, 8; delta 1 to 3; 40 seeds each): no safety violation at all, but
  many runs never end: a process whose sources never stabilise keeps sending idle ACKs.
  It breaks liveness, not order, so the data set generator does not use it.
* ``majority``: "deliver what a majority voted for": every candidate that more than n/2
  processors vote for (nvt > n/2) is delivered at once, alone, in lexicographic order,
  with no stability condition. Which candidate first reaches a majority depends on the
  arrival order at each process, so processes disagree on the order. Measured with n = 8,
  300 messages/s per process, 10 ms mean delay: 16 of 40 seeds violate total order
  (weak, strong, global); 10 of 40 never end (a candidate short of a majority waits
  forever), which :func:`tomkit.model.dataset.simulate_mutant` turns into ``model.sim.Runaway``.

The simulator runs a mutant through the ToTo family's ``rule`` option
(``SimConfig(protocol="toto", options={"rule": "majority"})``; the protocol then only
names the run), so a mutant is never a protocol of its own.

The literal readings of 000 section 5 (the membership service) are not rules but
variants of the ``toto-dynamic`` protocol (its ``variant`` option), listed in
``model.toto.membership.VARIANTS`` (where the decisions are):

``no-flush-acks``
    the agreed set of the Agree stage holds regular messages only: a survivor that sent
    nothing after the last messages never votes on them, so the Flush stage never ends
    (liveness; tests/model/toto/test_toto_membership_variants.py).
``all-components``
    every component of a partition continues (000 section 1): components order the old
    configuration's messages differently (total-order-strong, the "agreed" order).
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import math
import operator
from collections.abc import Callable

from tomkit.model.toto.rules import (
    RULES,
    Params,
    Rule,
    g_toto_clauses,
    toto_external_stability_a,
    toto_internal_stability,
    unmarked,
)
from tomkit.model.toto.vocab import (
    CandSet,
    Delivery,
    RuleView,
    future_is_one,
    generalized_sources,
    sources,
)

__all__ = ["MUTANTS", "g_toto_no_ntail", "majority", "resolve_rule",
           "s_toto_low_delta", "s_toto_no_internal",
           "toto_002_restated", "toto_002_restated_ge", "toto_low_delta"]


def _need_delta(params: Params, name: str) -> int:
    if params.delta is None:
        raise ValueError(f"{name} needs Params(delta=...)")
    return params.delta


def toto_low_delta(v: RuleView, params: Params) -> Delivery | None:
    """ToTo's body (``model.rules.toto``) with delta in [1, n/2) instead of [n/2, n)."""
    d = _need_delta(params, "toto-low-delta")
    if not 1 <= d < math.ceil(v.n / 2):
        raise ValueError(f"toto-low-delta: delta must be in [1, n/2), got {d} with n = {v.n}")
    s = sources(v, d)
    internal = v.and_(v.nonempty(s), toto_internal_stability(v, s, d))
    out = unmarked(v, s)
    return v.first(
        (v.and_(internal, toto_external_stability_a(v, s, d)), v.deliver(out, "early")),
        (v.and_(internal, v.ntail_g == v.n), v.deliver(out, "default")),
    )


def s_toto_no_internal(v: RuleView, params: Params) -> Delivery | None:
    """S-ToTo (``model.rules.s_toto``) without rule 1a (internal stability)."""
    d = _need_delta(params, "s-toto-no-internal")
    if not (v.n <= 2 * d and d < v.n):
        raise ValueError(f"s-toto-no-internal: delta must be in [n/2, n), got {d}")
    s = sources(v, d)
    external = v.exists(lambda x: v.nvt(x) > d, within=s)
    return v.first(
        (external, v.deliver(unmarked(v, s), "early")),
        (v.and_(v.ntail_g == v.n, v.nonempty(v.candidates)),
         v.deliver(unmarked(v, v.candidates), "default")),
    )


def _s_toto_body(v: RuleView, d: int,
                 more: Callable[[RuleView, CandSet], object] | None = None) -> Delivery | None:
    """S-ToTo's rules (``model.rules.s_toto``) at ``d``, whatever its range, with ``more``
    (of the view and S_G) as one more conjunct of the early clause."""
    s = sources(v, d)
    internal = v.forall(lambda m: v.or_(
        v.member(m, s),
        v.exists(lambda m2: future_is_one(v, m2, m, d), within=s)))
    external = v.exists(lambda x: v.nvt(x) > d, within=s)
    if more is not None:
        external = v.and_(external, more(v, s))
    return v.first(
        (v.and_(internal, external), v.deliver(unmarked(v, s), "early")),
        (v.and_(v.ntail_g == v.n, v.nonempty(v.candidates)),
         v.deliver(unmarked(v, v.candidates), "default")),
    )


def s_toto_low_delta(v: RuleView, params: Params) -> Delivery | None:
    """S-ToTo's body (``model.rules.s_toto``) with delta in [1, n/2)."""
    d = _need_delta(params, "s-toto-low-delta")
    if not 1 <= d < math.ceil(v.n / 2):
        raise ValueError(f"s-toto-low-delta: delta must be in [1, n/2), got {d} with n = {v.n}")
    return _s_toto_body(v, d)


def _toto_002(v: RuleView, params: Params, strict: bool, name: str) -> Delivery | None:
    d = _need_delta(params, name)
    if not (v.n <= 2 * d and d < v.n):
        raise ValueError(f"{name}: delta must be in [n/2, n), got {d} with n = {v.n}")
    cmp = operator.gt if strict else operator.ge
    return _s_toto_body(v, d, lambda v, s: v.forall(lambda x: cmp(v.ntail(x), v.n - d),
                                                    within=s))


def toto_002_restated(v: RuleView, params: Params) -> Delivery | None:
    """ToTo as Johnson and Maugis (002 section 3) restate it, which is not 000's
    (``model.rules.toto``): internal stability asks for a beating m' in S_G (000: in
    M_p), external stability (a) asks NTail(s') > n - delta of every source (OCR
    "Ntail(s') > n- 1"; 000: >= n - delta), and the default rule delivers M_G (000's (b)
    delivers S_p). Not safe: an agreement counterexample at n = 6, delta = 3 (module
    docstring)."""
    return _toto_002(v, params, True, "toto-002-restated")


def toto_002_restated_ge(v: RuleView, params: Params) -> Delivery | None:
    """:func:`toto_002_restated` with NTail(s') >= n - delta (000's relation): also
    unsafe (agreement counterexample at n = 6, delta = 3)."""
    return _toto_002(v, params, False, "toto-002-restated-ge")


def g_toto_no_ntail(v: RuleView, params: Params) -> Delivery | None:
    """G-ToTo (``model.rules.g_toto``) without "Ntail(G) > n - delta" in rule 1b."""
    d = _need_delta(params, "g-toto-no-ntail")
    if not 1 <= d < v.n:
        raise ValueError(f"g-toto-no-ntail: delta must be in [1, n), got {d}")
    s = generalized_sources(v, d)
    internal = v.forall(lambda i: v.or_(
        v.member(i, s),
        v.and_(v.nvt(i) + v.u <= d,
               v.exists(lambda j: future_is_one(v, j, i, d), within=s))))
    external = v.exists(lambda x: v.nvt(x) > d, within=s)
    default = g_toto_clauses(v, d, s)[1]
    return v.first((v.and_(internal, external), v.deliver(unmarked(v, s), "early")),
                   default)


def majority(v: RuleView, params: Params = Params()) -> Delivery | None:
    """Deliver the candidates more than half of the processors voted for, as soon as
    there is one (delta is ignored)."""
    won = v.subset(lambda m: v.nvt(m) > v.n // 2)
    return v.first((v.nonempty(won), v.deliver(won, "majority")))


#: every mutant rule by name (``tomkit prove`` and ``tomkit fuzz`` accept the names)
MUTANTS: dict[str, Rule] = {
    "toto-low-delta": toto_low_delta,
    "s-toto-no-internal": s_toto_no_internal,
    "s-toto-low-delta": s_toto_low_delta,
    "g-toto-no-ntail": g_toto_no_ntail,
    "majority": majority,
    "toto-002-restated": toto_002_restated,
}


def resolve_rule(name: str) -> Rule:
    """A rule by name: built-in (``model.rules.RULES``), mutant (:data:`MUTANTS`), or
    ``module:function``. Raises ValueError for an unknown name."""
    if name == "":  # an unset shell variable: "unknown rule ''" said less
        raise ValueError("the rule is an empty name; give one of "
                         f"{', '.join([*RULES, *MUTANTS])} or module:function")
    if name in RULES:
        return RULES[name]
    if name in MUTANTS:
        return MUTANTS[name]
    mod, sep, fn = name.partition(":")
    if not sep or not mod or not fn:
        near = difflib.get_close_matches(name, [*RULES, *MUTANTS], n=1)
        raise ValueError(f"unknown rule {name!r}: expected one of "
                         f"{', '.join([*RULES, *MUTANTS])} or module:function"
                         + (f"; did you mean {near[0]!r}?" if near else ""))
    try:
        rule = getattr(importlib.import_module(mod), fn)
    except (ImportError, AttributeError) as e:
        raise ValueError(f"rule {name!r}: {e}") from e
    if not callable(rule):
        raise ValueError(f"rule {name!r} is not callable")
    try:  # a rule is called as rule(view, params): say so now, not in a traceback later
        inspect.signature(rule).bind(None, None)
    except TypeError:
        raise ValueError(f"rule {name!r} must take two arguments, (view, params), as the "
                         f"rules of model/toto/rules.py do; it takes "
                         f"{inspect.signature(rule)}") from None
    except ValueError:  # no signature to read (some builtins): it is tried as it is
        pass
    return rule
