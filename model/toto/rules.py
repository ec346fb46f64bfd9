"""Delivery rules of the ToTo family, as pure functions of the vocabulary.

Sources: the all-ack baseline (000 section 1; 002 section 2), ToTo_delta (000 section 4.2,
criterion (DEL), Figure 3; Crash handling 000 section 5.2, Figure 4), S-ToTo (002 section
3), G-ToTo (002 section 4) and GL-ToTo (002 section 5).

Each rule is ``rule(v: RuleView, params: Params) -> Delivery | None``: given the
vocabulary ``v`` of one process's current activation (``model/toto/vocab.py``), the ordered
messages to deliver now, or None. Rule bodies use only the vocabulary, so the Z3
interpretation (``fuzz/prove/delivery/symbolic.py``) evaluates them unchanged;
``OpaqueRuleView`` checks that they do.

A process evaluates its rule whenever its DAG view changes (000 Figure 3 is event
driven) and again after each delivery, since a delivery opens a new activation whose
candidates may already be deliverable: :func:`drain` does that on a ``DagView``.

Summary (M = candidates, S = sources, u = unseen processors, all on the current G):

=========  ====================================================================  =========
rule       fires when                                                            delivers
=========  ====================================================================  =========
all-ack    NTail(G) = n                                                          M
ToTo       internal (every m in M-S beaten for sure by some m' in M) and         S
           (a) some s in S has NVT(s) > delta and every s in S NTail(s) >= n-delta,
           or (b) NTail(G) = n
S-ToTo     early: internal (beaten by some m' in S) and some s in S nvt(s) > delta; S
           else default: NTail(G) = n                                            M
G-ToTo     early: every i in M-S has nvt(i) + u <= delta and is beaten for sure  S
           by some j in S; NTail(G) > n - delta and some s in S nvt(s) > delta;
           sources generalized (nvt > delta makes a source); else default        M
GL-ToTo    G-ToTo; else the sources in the longest stable prefix of M            prefix
=========  ====================================================================  =========

Decisions where the papers are ambiguous (the OCR quoted):

* ToTo's (b) delivers S_p, as 000 (DEL) reads: "Deliver S_p when: 1. Internal stability
  ... And, 2. External stability: (a) ... Or, (b) NTail_p = n". 002's restatement of ToTo
  delivers M_G under its default rule instead; 000 is the source for ToTo_delta. With
  u = 0 internal stability always holds when delta >= n/2, so (b) always fires then.
* ToTo's internal stability quantifies m' over M_p (000: "8m 2 M_p - S_p 9m' 2 M_p s.t.
  Future(VT_p(m'), VT_p(m)) = f1g"); 002 restates it with m' in S_G, which we use for
  S-ToTo and G-ToTo as 002 writes them.
* ToTo (a): NTail(s) >= n - delta. The relation is lost in 000's OCR ("NTail_p(s) � n� �"
  and 002's "Ntail(s') > n- 1"); 000 explains it as "the waiting time for all candidate
  messages to collect n - delta acknowledgments", i.e. at least n - delta.
* G-ToTo and GL-ToTo: NTail(G) > n - delta, strictly (002 OCR "Ntail(G) > n ( A"; section
  7: "when it receives more than n - delta votes"). ">=" would also keep the argument of
  section 4 (an unseen message gets at most u <= delta votes) but we keep the printed,
  stronger, condition.
* G-ToTo internal stability: nvt(i) + u <= delta (OCR "nvt(i) + u < 4"): section 6 needs
  "<=", since it accepts "nvt(I) + u = 4" with delta = 4.
* G-ToTo's range of delta: 1 <= delta < n (OCR "1 < c < n"; 002's OCR drops the bar of
  <= elsewhere, e.g. "( > n/2" for 000's delta >= n/2). delta = 1 is property-tested.
* GL-ToTo's source test in the prefix is "nvt(m_i) > delta or NTail(G) > n - delta" (OCR
  "nvt(mi) > 1 V Ntail(G) > n b"; V read as "or", as in the pseudo-code's
  "(nvt(mi) > 1 V Ntail(G) > n )").
* GL-ToTo: a message delivered early stays in G, marked, until the activation ends
  (002's pseudo-code: "else /* mi has already been delivered in the same activation,
  continue */"); the activation then delivers its remaining sources (or candidates,
  by the default rule).
* Sources need not beat themselves (000 "for every other candidate"), and 0 is in
  Future(a, b) by Future's definition rather than by the printed shortcut: see
  ``is_source`` and ``future_has`` in ``model/toto/vocab.py``.
* "Lexicographical order" (000 section 4.2, Figure 3) is the order of message ids
  <sender, counter> (000 section 2), processors ranked as the configuration lists them;
  candidates have distinct senders, so it is the senders' order, which is what GL-ToTo's
  loop over processors needs (002 section 5).
* The rules see agreed messages only: 000 Figure 1 also has causal-only messages,
  which are in the DAG but never candidates. The simulator's only such messages are
  ToTo's ACK-only messages (model/toto/process.py); the DagView retires them from G, without an
  activation, once all they follow is delivered (``DagView._retire``), so no rule ever
  sees one as a candidate; they vote while in G.
* A Crash(q) (000 Figure 4) is applied to every rule alike: q counts in NTail(G), so it
  is not unseen, and votes for nothing when it has no message in G. For all-ack this
  lets the baseline make progress after a crash, as the membership service intends.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tomkit.model.toto.compiled import Compiled, Decision, compiled
from tomkit.model.toto.dag import DagView
from tomkit.model.toto.vocab import (
    CandSet,
    ConcreteRuleView,
    Delivery,
    RuleView,
    future_is_one,
    generalized_sources,
    sources,
)

__all__ = [
    "Applied",
    "Decider",
    "Delivery",
    "Params",
    "RULES",
    "Rule",
    "all_ack",
    "apply",
    "decide",
    "drain",
    "evaluate",
    "g_toto",
    "g_toto_clauses",
    "gl_toto",
    "s_toto",
    "step",
    "toto",
    "unmarked",
]


@dataclass(frozen=True)
class Params:
    """Rule parameters: the threshold delta (000 section 4.1; ignored by all-ack)."""

    delta: int | None = None


Rule = Callable[[RuleView, Params], "Delivery | None"]


def _delta(v: RuleView, params: Params, lo_half: bool, name: str) -> int:
    d = params.delta
    if d is None:
        raise ValueError(f"{name} needs Params(delta=...)")
    if lo_half and not (v.n <= 2 * d and d < v.n):
        raise ValueError(f"{name}: delta must be in [n/2, n), got {d} with n = {v.n}")
    if not lo_half and not (1 <= d < v.n):
        raise ValueError(f"{name}: delta must be in [1, n), got {d} with n = {v.n}")
    return d


def unmarked(v: RuleView, s: CandSet) -> CandSet:
    """The messages of ``s`` not marked (GL-ToTo's early prefix deliveries, 002 section 5,
    mark candidates that are already delivered)."""
    return v.subset(lambda m: v.not_(v.marked(m)), within=s)


# -------------------------------------------------------------------------------- all-ack


def all_ack(v: RuleView, params: Params = Params()) -> Delivery | None:
    """All-ack (000 section 1: "Wait for a message from each machine in the system.
    Deliver the set of messages that do not causally follow any other, in lexicographical
    order"): deliver M_G once every processor has a message in G (or is Defunc)."""
    everyone = v.and_(v.ntail_g == v.n, v.nonempty(v.candidates))
    return v.first((everyone, v.deliver(unmarked(v, v.candidates), "default")))


# ----------------------------------------------------------------------------------- ToTo


def toto_internal_stability(v: RuleView, s: CandSet, delta: int) -> object:
    """000 (DEL) 1: every m in M_p - S_p has some m' in M_p with Future(m', m) = {1}."""
    return v.forall(lambda m: v.or_(
        v.member(m, s),
        v.exists(lambda m2: future_is_one(v, m2, m, delta))))


def toto_external_stability_a(v: RuleView, s: CandSet, delta: int) -> object:
    """000 (DEL) 2(a): some s in S_p has NVT(s) > delta, and every s in S_p has
    NTail(s) >= n - delta."""
    return v.and_(v.exists(lambda x: v.nvt(x) > delta, within=s),
                  v.forall(lambda x: v.ntail(x) >= v.n - delta, within=s))


def toto(v: RuleView, params: Params) -> Delivery | None:
    """ToTo_delta (000 section 4.2, criterion (DEL); Figure 3; n/2 <= delta < n): deliver
    S_p in lexicographic order when internal stability and external stability (a) or
    (b) NTail_p = n hold. Crash(q) (Figure 4) enters through NTail(G) and the votes."""
    d = _delta(v, params, True, "ToTo")
    s = sources(v, d)
    internal = v.and_(v.nonempty(s), toto_internal_stability(v, s, d))
    out = unmarked(v, s)
    return v.first(
        (v.and_(internal, toto_external_stability_a(v, s, d)), v.deliver(out, "early")),
        (v.and_(internal, v.ntail_g == v.n), v.deliver(out, "default")),
    )


# --------------------------------------------------------------------------------- S-ToTo


def s_toto(v: RuleView, params: Params) -> Delivery | None:
    """S-ToTo (002 section 3, "Simplified ToTo Delivery Rules"; n/2 <= delta < n):

    1) early: (a) every m in M_G - S_G has some m' in S_G with Future(m', m) = {1}, and
       (b) some s in S_G has nvt(s) > delta: deliver S_G;
    2) default: else if NTail(G) = n: deliver M_G.
    """
    d = _delta(v, params, True, "S-ToTo")
    s = sources(v, d)
    internal = v.forall(lambda m: v.or_(
        v.member(m, s),
        v.exists(lambda m2: future_is_one(v, m2, m, d), within=s)))
    external = v.exists(lambda x: v.nvt(x) > d, within=s)
    return v.first(
        (v.and_(internal, external), v.deliver(unmarked(v, s), "early")),
        (v.and_(v.ntail_g == v.n, v.nonempty(v.candidates)),
         v.deliver(unmarked(v, v.candidates), "default")),
    )


# --------------------------------------------------------------------------------- G-ToTo


def g_toto_internal_stability(v: RuleView, s: CandSet, delta: int) -> object:
    """002 section 4, rule 1a: every i in M_G - S_G has nvt(i) + u <= delta and some j
    in S_G with Future(j, i) = {1}."""
    return v.forall(lambda i: v.or_(
        v.member(i, s),
        v.and_(v.nvt(i) + v.u <= delta,
               v.exists(lambda j: future_is_one(v, j, i, delta), within=s))))


def g_toto_external_stability(v: RuleView, s: CandSet, delta: int) -> object:
    """002 section 4, rule 1b: NTail(G) > n - delta and some s in S_G has nvt(s) > delta."""
    return v.and_(v.ntail_g > v.n - delta, v.exists(lambda x: v.nvt(x) > delta, within=s))


def g_toto_clauses(v: RuleView, d: int, s: CandSet) -> list[tuple[object, Delivery]]:
    """G-ToTo's two clauses (002 section 4) for the generalised sources ``s``: deliver
    them early when internally and externally stable, or every candidate when every
    processor is seen (GL-ToTo and a mutant reuse them)."""
    early = v.and_(g_toto_internal_stability(v, s, d), g_toto_external_stability(v, s, d))
    return [
        (early, v.deliver(unmarked(v, s), "early")),
        (v.and_(v.ntail_g == v.n, v.nonempty(v.candidates)),
         v.deliver(unmarked(v, v.candidates), "default")),
    ]


def g_toto(v: RuleView, params: Params) -> Delivery | None:
    """G-ToTo (002 section 4, "Generalized ToTo Delivery Rules"; 1 <= delta < n):

    1) early: (a) every i in M_G - S_G has nvt(i) + u <= delta and some j in S_G with
       Future(j, i) = {1}, and (b) NTail(G) > n - delta and some s in S_G has
       nvt(s) > delta: deliver S_G (generalized sources);
    2) default: else if NTail(G) = n: deliver M_G.
    """
    d = _delta(v, params, False, "G-ToTo")
    return v.first(*g_toto_clauses(v, d, generalized_sources(v, d)))


# -------------------------------------------------------------------------------- GL-ToTo


def gl_prefix_stable(v: RuleView, m: object, s: CandSet, delta: int) -> object:
    """One step of 002 section 5's construction of the stable prefix w: candidate m may
    be passed over (it is marked, or it stays a source, or it never becomes one)."""
    stays_source = v.and_(v.member(m, s), v.or_(v.nvt(m) > delta, v.ntail_g > v.n - delta))
    never_source = v.and_(v.not_(v.member(m, s)),
                          v.nvt(m) + v.u <= delta,
                          v.exists(lambda j: future_is_one(v, j, m, delta)))
    return v.or_(v.marked(m), stays_source, never_source)


def gl_prefix(v: RuleView, s: CandSet, delta: int) -> CandSet:
    """002 section 5: the candidates in the stable prefix w of M_G (lexicographic order).

    The paper builds w by a loop over processors "for i = min(P) to
    min(P minus ntail(G)) - 1", stopping at the first candidate that fails
    :func:`gl_prefix_stable`; processors without a candidate are passed (being seen,
    they get none in this activation). Declaratively: m is in w iff every processor up to
    m's sender is seen and every candidate up to m is stable.
    """
    # the stability of each candidate does not depend on its position: compute it once
    stable = v.subset(lambda m: gl_prefix_stable(v, m, s, delta))
    return v.subset(lambda m: v.and_(
        v.seen_through(m),
        v.forall(lambda m2: v.implies(v.not_(v.precedes(m, m2)), v.member(m2, stable)))))


def gl_toto(v: RuleView, params: Params) -> Delivery | None:
    """GL-ToTo (002 section 5; 1 <= delta < n): G-ToTo; when it cannot deliver, deliver
    the not yet delivered sources of the stable prefix w early, leaving the activation
    open (clause "prefix")."""
    d = _delta(v, params, False, "GL-ToTo")
    s = generalized_sources(v, d)
    early = v.subset(lambda m: v.and_(v.member(m, s), v.not_(v.marked(m))),
                     within=gl_prefix(v, s, d))
    return v.first(*g_toto_clauses(v, d, s),
                   (v.nonempty(early), v.deliver(early, "prefix", ends_activation=False)))


#: The rules by name, as the CLI, simulator and benchmarks will refer to them.
RULES: dict[str, Rule] = {
    "all-ack": all_ack,
    "toto": toto,
    "s-toto": s_toto,
    "g-toto": g_toto,
    "gl-toto": gl_toto,
}


# ---------------------------------------------------------------------------- the driver


@dataclass(frozen=True)
class Applied:
    """A delivery applied to a DagView, with the index of latency of its messages
    (000 section 6: the processors heard from in the activation when delivering)."""

    delivery: Delivery
    index_of_latency: int


def evaluate(dag: DagView, rule: Rule, params: Params = Params()) -> Delivery | None:
    """The rule's decision on ``dag``'s current state (nothing is applied)."""
    return rule(ConcreteRuleView(dag), params)


class Decider:
    """A rule with its parameters, deciding on DagViews of ``n`` processors through the
    rule compiled for the number of candidates (model/toto/compiled.py) when it can be, else
    through ConcreteRuleView; both give the same result (tested). The compiled rules are
    looked up once per number of candidates: a process keeps one Decider."""

    __slots__ = ("rule", "params", "n", "_by_k")

    def __init__(self, rule: Rule, params: Params, n: int) -> None:
        self.rule, self.params, self.n = rule, params, n
        self._by_k: dict[int, Compiled | None] = {}

    def __call__(self, dag: DagView) -> Delivery | None:
        """The rule's decision on ``dag``'s current state (nothing is applied)."""
        r = self.decision(dag)
        return None if r is None else Delivery(*r)

    def compiled_for(self, k: int) -> Compiled | None:
        """The rule compiled for k candidates, or None when it cannot be compiled."""
        try:
            return self._by_k[k]
        except KeyError:
            fn = self._by_k[k] = compiled(self.rule, self.params, self.n, k)
            return fn

    def decision(self, dag: DagView) -> Decision | None:
        """The same, as a plain tuple (messages, clause, ends_activation): what the
        simulator's inner loop reads, without building a Delivery."""
        cands, yes, tail, mk, rk, seen = dag.rule_inputs()
        fn = self.compiled_for(len(cands))
        if fn is None:
            d = self.rule(ConcreteRuleView(dag), self.params)
            return None if d is None else (d.messages, d.clause, d.ends_activation)
        return fn.decide(cands, yes, tail, mk, rk, seen)


def decide(dag: DagView, rule: Rule, params: Params = Params()) -> Delivery | None:
    """The rule's decision on ``dag``'s current state (see :class:`Decider`)."""
    return Decider(rule, params, dag.n)(dag)


def apply(dag: DagView, messages: tuple[str, ...], ends_activation: bool, rule: Rule) -> int:
    """Apply the delivery (``messages``, ``ends_activation``) that ``rule`` decided on
    ``dag``; return the index of latency of its messages (taken before the activation
    ends)."""
    if not messages and not (ends_activation and dag.marked):
        # nothing would change, and drain would loop
        raise ValueError(f"{getattr(rule, '__name__', rule)} returned an empty delivery")
    iol = dag.index_of_latency()
    dag.deliver(messages, end_activation=ends_activation)
    return iol


def step(dag: DagView, rule: Rule, params: Params = Params()) -> Applied | None:
    """Evaluate the rule once and apply its delivery to ``dag``."""
    d = decide(dag, rule, params)
    return None if d is None else Applied(d, apply(dag, d.messages, d.ends_activation, rule))




def drain(dag: DagView, rule: Rule, params: Params = Params()) -> list[Applied]:
    """Apply the rule until it delivers nothing more: after a delivery the next
    activation may be deliverable at once.

    A rule is a pure function of the vocabulary, so while ``dag.vocab_version`` has not
    changed since the rule last returned None here, it is not evaluated again (a new
    message that neither votes nor extends a candidate's tail changes nothing).
    """
    if dag.quiet == (rule, params, dag.vocab_version):
        return []
    out = []
    while (a := step(dag, rule, params)) is not None:
        out.append(a)
    dag.quiet = (rule, params, dag.vocab_version)
    return out
