"""Broken variants of the ToTo-family rules, written in the rule vocabulary, that
``tomkit prove`` must refute (issue 4). Each drops one condition the papers' correctness
arguments rely on:

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

``MUTANTS`` maps these names to the rules; ``tomkit prove`` accepts them as RULE.
"""

from __future__ import annotations

import math

from tomkit.model.rules import (
    Params,
    Rule,
    _g_toto,
    _minus_marked,
    toto_external_stability_a,
    toto_internal_stability,
)
from tomkit.model.vocab import (
    Delivery,
    RuleView,
    future_is_one,
    generalized_sources,
    sources,
)

__all__ = ["MUTANTS", "g_toto_no_ntail", "majority", "s_toto_low_delta", "s_toto_no_internal",
           "toto_low_delta"]


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
    out = _minus_marked(v, s)
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
        (external, v.deliver(_minus_marked(v, s), "early")),
        (v.and_(v.ntail_g == v.n, v.nonempty(v.candidates)),
         v.deliver(_minus_marked(v, v.candidates), "default")),
    )


def s_toto_low_delta(v: RuleView, params: Params) -> Delivery | None:
    """S-ToTo's body (``model.rules.s_toto``) with delta in [1, n/2)."""
    d = _need_delta(params, "s-toto-low-delta")
    if not 1 <= d < math.ceil(v.n / 2):
        raise ValueError(f"s-toto-low-delta: delta must be in [1, n/2), got {d} with n = {v.n}")
    s = sources(v, d)
    internal = v.forall(lambda m: v.or_(
        v.member(m, s),
        v.exists(lambda m2: future_is_one(v, m2, m, d), within=s)))
    external = v.exists(lambda x: v.nvt(x) > d, within=s)
    return v.first(
        (v.and_(internal, external), v.deliver(_minus_marked(v, s), "early")),
        (v.and_(v.ntail_g == v.n, v.nonempty(v.candidates)),
         v.deliver(_minus_marked(v, v.candidates), "default")),
    )


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
    default = _g_toto(v, d, s)[1]
    return v.first((v.and_(internal, external), v.deliver(_minus_marked(v, s), "early")),
                   default)


def majority(v: RuleView, params: Params = Params()) -> Delivery | None:
    """Deliver the candidates more than half of the processors voted for, as soon as
    there is one (delta is ignored)."""
    won = v.subset(lambda m: v.nvt(m) > v.n // 2)
    return v.first((v.nonempty(won), v.deliver(won, "majority")))


MUTANTS: dict[str, Rule] = {
    "toto-low-delta": toto_low_delta,
    "s-toto-no-internal": s_toto_no_internal,
    "s-toto-low-delta": s_toto_low_delta,
    "g-toto-no-ntail": g_toto_no_ntail,
    "majority": majority,
}
