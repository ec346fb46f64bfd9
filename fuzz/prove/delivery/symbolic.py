"""The rule vocabulary interpreted on Z3 terms.

Source: the vocabulary of ``model/toto/vocab.py`` (000 section 4.1, 002 sections 3-5). A
delivery rule is a Python function of a view ``v`` that only combines the vocabulary's
primitives; :class:`Z3RuleView` implements the same RuleView protocol structurally, so
evaluating the rule on it *builds* the rule's firing condition and delivered set as Z3
terms instead of computing them. The rule is written once, in ``model/toto/rules.py``, and
the models execute exactly what is proved here.

Candidates are *slots*: one per processor (a candidate is its sender's first message in
G, and processors have at most one candidate each, 000 section 4.1), with a symbolic
membership bit. A slot is a :class:`Slot` handle; candidate sets are vectors of Z3
booleans (:class:`SlotSet`). Quantifiers unroll over the n slots, guarded by membership:
``forall(p, s)`` is the conjunction of ``s[i] -> p(i)``, ``count`` a sum of
``If(s[i] and p(i), 1, 0)``, and so on.

Values are wrapped in :class:`Sym`, which refuses ``bool()`` with a TypeError, like the
vocabulary's OpaqueRuleView. This matters: a raw Z3 ``a == b`` has a Python truth value
(structural identity of the two terms), so a rule that branches on ``v.nvt(m) == 3``
would silently be proved wrong. A rule that branches on a value, compares slots with
``==`` or iterates over a set raises TypeError here; the caller takes that to mean "the
rule is outside the vocabulary" and falls back to enumeration.

The result of a rule is a :class:`SymOutcome`: a fired flag, a membership bit per slot
(the delivered set), the symbolic index of the clause that fired and whether the
delivery ends the activation (False for GL-ToTo's "prefix").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import z3

from ....model.toto.vocab import Refusals, scale

__all__ = ["Slot", "SlotSet", "Sym", "SymDelivery", "SymOutcome", "Z3RuleView", "first_of",
           "outcome_of"]


class Sym(Refusals):
    """A Z3 boolean or integer term that refuses bool() (see the module docstring).

    ``ranked``: the term was built from ``v.precedes`` or ``v.seen_through`` (the
    processors' rank), directly or through any value it combines; a term built without
    them is carried to the renamed term by any renaming of the processors
    (``symmetry.py``'s per-clause reductions rely on this)."""

    __slots__ = ("x", "ranked")
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, x: Any, ranked: bool = False) -> None:
        self.x = x
        self.ranked = ranked

    def __bool__(self) -> bool:
        raise TypeError("a rule must not branch on a vocabulary value in Python "
                        "(it is a Z3 term here); use v.and_/v.or_/v.not_/v.ite/v.first")

    def __repr__(self) -> str:
        return f"Sym({self.x})"

    def _with(self, x: Any, o: Any = None) -> Sym:
        return Sym(x, self.ranked or _ranked(o))

    def __add__(self, o: Any) -> Sym:
        return self._with(self.x + _int(o), o)

    __radd__ = __add__

    def __sub__(self, o: Any) -> Sym:
        return self._with(self.x - _int(o), o)

    def __rsub__(self, o: Any) -> Sym:
        return self._with(_int(o) - self.x, o)

    def __mul__(self, o: Any) -> Sym:
        return self._with(self.x * scale(o))

    __rmul__ = __mul__

    def __neg__(self) -> Sym:
        return self._with(-self.x)

    def __lt__(self, o: Any) -> Sym:
        return self._with(self.x < _int(o), o)

    def __le__(self, o: Any) -> Sym:
        return self._with(self.x <= _int(o), o)

    def __gt__(self, o: Any) -> Sym:
        return self._with(self.x > _int(o), o)

    def __ge__(self, o: Any) -> Sym:
        return self._with(self.x >= _int(o), o)

    def __eq__(self, o: object) -> Sym:  # type: ignore[override]
        return self._with(self.x == _term(o), o)

    def __ne__(self, o: object) -> Sym:  # type: ignore[override]
        return self._with(self.x != _term(o), o)


def _ranked(*xs: Any) -> bool:
    """Whether any of these vocabulary values was built from the rank (see Sym)."""
    return any(getattr(x, "ranked", False) for x in xs)


class Slot:
    """A candidate slot (processor rank ``i``): opaque, compared only through the view."""

    __slots__ = ("_rank",)
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, i: int) -> None:
        self._rank = i

    @property
    def i(self) -> int:
        # the rank is read through v.precedes / v.seen_through only, so that the view
        # knows whether the rule reads it (symmetry.py's reductions depend on that)
        raise TypeError("a rule must not read a candidate's rank; use v.precedes")

    def __eq__(self, o: object) -> bool:
        raise TypeError("compare candidates with v.distinct / v.precedes, not ==")

    def __bool__(self) -> bool:
        raise TypeError("a candidate has no truth value")


class SlotSet:
    """A candidate set: one Z3 boolean per slot (``ranked`` as for Sym)."""

    __slots__ = ("bits", "ranked")

    def __init__(self, bits: Sequence[Any], ranked: bool = False) -> None:
        self.bits = tuple(bits)
        self.ranked = ranked

    def __bool__(self) -> bool:
        raise TypeError("use v.nonempty(s)")

    def __iter__(self) -> Any:
        raise TypeError("quantify with v.forall/v.exists(..., within=s)")


def _term(o: Any) -> Any:
    """The Z3 term of a vocabulary value or a Python bool/int."""
    if isinstance(o, Sym):
        return o.x
    if isinstance(o, bool):
        return z3.BoolVal(o)
    if isinstance(o, int):
        return z3.IntVal(o)
    if isinstance(o, (Slot, SlotSet)):
        raise TypeError("candidates and candidate sets are not values")
    raise TypeError(f"not a vocabulary value: {o!r}")


def _int(o: Any) -> Any:
    t = _term(o)
    if z3.is_bool(t):
        raise TypeError("arithmetic on a truth value")
    return t


def _bool(o: Any) -> Any:
    t = _term(o)
    if not z3.is_bool(t):
        raise TypeError(f"expected a truth value, got the integer {t}")
    return t


@dataclass(frozen=True)
class SymDelivery:
    """``v.deliver(s, clause, ends_activation)``: members per slot, clause name, flag."""

    members: tuple[Any, ...]
    clause: str
    ends_activation: bool = True
    ranked: bool = False


@dataclass(frozen=True)
class SymOutcome:
    """A rule's decision at one symbolic view.

    ``clause`` is a Z3 integer: the index in ``clauses`` of the option that fired (-1
    when none did). ``guards`` and ``options`` are ``v.first``'s options (guard terms
    and deliveries), ``ranked`` per option whether its guard or delivery reads the
    rank (``symmetry.rank_free_lead`` reads them)."""

    fired: Any
    members: tuple[Any, ...]
    ends: Any
    clause: Any
    clauses: tuple[str, ...]
    guards: tuple[Any, ...] = ()
    options: tuple[SymDelivery, ...] = ()
    ranked: tuple[bool, ...] = ()


class Z3RuleView:
    """The vocabulary over one symbolic view (see the module docstring).

    ``cand[i]``: slot i (processor i's first message) is a candidate; ``yes[i][q]``:
    processor q votes for slot i's message (q's voter is visible and follows it);
    ``tail[i][q]``: q is in Tail(slot i), some visible message of q follows it;
    ``seen[q]``: q is in Tail(G) (it has a message in G, or Crash(q) arrived);
    ``marked[i]``: GL-ToTo's early-delivered mark (all False in the encoding, see
    docs/prove.md).
    """

    def __init__(self, n: int, cand: Sequence[Any], yes: Sequence[Sequence[Any]],
                 tail: Sequence[Sequence[Any]], seen: Sequence[Any],
                 marked: Sequence[Any] | None = None) -> None:
        self.n = n
        self._cand = tuple(cand)
        self._yes = yes
        self._tail = tail
        self._seen = tuple(seen)
        self._marked = tuple(marked) if marked is not None else (z3.BoolVal(False),) * n
        self._nvt: dict[int, Any] = {}
        # whether the rule read a rank or left the activation open (symmetry.py)
        self.rank_used = False
        self.open_delivery = False
        self._votes: dict[tuple[int, int], Any] = {}
        ntail_g = z3.Sum([z3.If(s, 1, 0) for s in self._seen])
        self._ntail_g = ntail_g
        self._u = n - ntail_g

    @staticmethod
    def _count(bits: Sequence[Any]) -> Any:
        return z3.Sum([z3.If(b, 1, 0) for b in bits]) if bits else z3.IntVal(0)

    def _dom(self, within: SlotSet | None) -> tuple[Any, ...]:
        if within is None:
            return self._cand
        if not isinstance(within, SlotSet):
            raise TypeError(f"within must be a candidate set, not {within!r}")
        return within.bits

    def _quant(self, pred: Callable[[Slot], Any], within: SlotSet | None
               ) -> tuple[list[tuple[Any, Any]], bool]:
        """(membership, predicate) per slot, and whether any of them reads the rank."""
        dom = self._dom(within)
        ranked = _ranked(within)
        out = []
        for i, b in enumerate(dom):
            r = pred(Slot(i))
            ranked = ranked or _ranked(r)
            out.append((b, _bool(r)))
        return out, ranked

    @property
    def candidates(self) -> SlotSet:
        return SlotSet(self._cand)

    @property
    def ntail_g(self) -> Sym:
        return Sym(self._ntail_g)

    @property
    def u(self) -> Sym:
        return Sym(self._u)

    def forall(self, pred: Callable[[Slot], Any], within: SlotSet | None = None) -> Sym:
        xs, r = self._quant(pred, within)
        return Sym(z3.And([z3.Implies(b, p) for b, p in xs]), r)

    def exists(self, pred: Callable[[Slot], Any], within: SlotSet | None = None) -> Sym:
        xs, r = self._quant(pred, within)
        return Sym(z3.Or([z3.And(b, p) for b, p in xs]), r)

    def count(self, pred: Callable[[Slot], Any], within: SlotSet | None = None) -> Sym:
        xs, r = self._quant(pred, within)
        return Sym(self._count([z3.And(b, p) for b, p in xs]), r)

    def subset(self, pred: Callable[[Slot], Any], within: SlotSet | None = None) -> SlotSet:
        xs, r = self._quant(pred, within)
        return SlotSet([z3.simplify(z3.And(b, p)) for b, p in xs], r)

    def member(self, m: Slot, s: SlotSet) -> Sym:
        return Sym(self._dom(s)[_slot(m)], _ranked(s))

    def nonempty(self, s: SlotSet) -> Sym:
        return Sym(z3.Or(list(self._dom(s))), _ranked(s))

    def distinct(self, a: Slot, b: Slot) -> Sym:
        # a renaming keeps two slots distinct or equal: this reads no rank
        return Sym(z3.BoolVal(_slot(a) != _slot(b)))

    def precedes(self, a: Slot, b: Slot) -> Sym:
        # slots are processor ranks, and candidates have distinct senders, so the
        # lexicographic order of <sender, counter> ids is the slots' order
        self.rank_used = True
        return Sym(z3.BoolVal(_slot(a) < _slot(b)), True)

    def nvt(self, m: Slot) -> Sym:
        i = _slot(m)
        if i not in self._nvt:
            self._nvt[i] = self._count(list(self._yes[i]))
        return Sym(self._nvt[i])

    def votes(self, a: Slot, b: Slot) -> Sym:
        key = (_slot(a), _slot(b))
        if key not in self._votes:
            ya, yb = self._yes[key[0]], self._yes[key[1]]
            self._votes[key] = (z3.IntVal(0) if key[0] == key[1] else
                                self._count([z3.And(x, z3.Not(y)) for x, y in zip(ya, yb)]))
        return Sym(self._votes[key])

    def ntail(self, m: Slot) -> Sym:
        return Sym(self._count(list(self._tail[_slot(m)])))

    def marked(self, m: Slot) -> Sym:
        return Sym(self._marked[_slot(m)])

    def seen_through(self, m: Slot) -> Sym:
        self.rank_used = True
        return Sym(z3.And(list(self._seen[:_slot(m) + 1])), True)

    @staticmethod
    def and_(*xs: Any) -> Sym:
        return Sym(z3.And([_bool(x) for x in xs]), _ranked(*xs))

    @staticmethod
    def or_(*xs: Any) -> Sym:
        return Sym(z3.Or([_bool(x) for x in xs]), _ranked(*xs))

    @staticmethod
    def not_(x: Any) -> Sym:
        return Sym(z3.Not(_bool(x)), _ranked(x))

    @staticmethod
    def implies(a: Any, b: Any) -> Sym:
        return Sym(z3.Implies(_bool(a), _bool(b)), _ranked(a, b))

    @staticmethod
    def ite(c: Any, a: Any, b: Any) -> Any:
        if isinstance(a, (SymDelivery, SlotSet, Slot)) or isinstance(b, (SymDelivery, SlotSet,
                                                                          Slot)):
            raise TypeError("v.ite chooses between values; choose deliveries with v.first")
        return Sym(z3.If(_bool(c), _term(a), _term(b)), _ranked(c, a, b))

    def deliver(self, s: SlotSet, clause: str, ends_activation: bool = True) -> SymDelivery:
        if not ends_activation:
            self.open_delivery = True
        return SymDelivery(self._dom(s), str(clause), bool(ends_activation), _ranked(s))

    def first(self, *options: tuple[Any, SymDelivery]) -> SymOutcome:
        guards = []
        for opt in options:
            if not (isinstance(opt, tuple) and len(opt) == 2
                    and isinstance(opt[1], SymDelivery)):
                raise TypeError(f"v.first takes (guard, v.deliver(...)) pairs, not {opt!r}")
            guards.append(_bool(opt[0]))
        o = first_of(self.n, guards, [d for _, d in options])
        return SymOutcome(o.fired, o.members, o.ends, o.clause, o.clauses, o.guards,
                          o.options, tuple(_ranked(g) or d.ranked for g, d in options))


def first_of(n: int, guards: Sequence[Any], deliveries: Sequence[SymDelivery]) -> SymOutcome:
    """The delivery of the first guard that holds (``v.first`` on Z3 terms)."""
    members = [z3.BoolVal(False)] * n
    ends: Any = z3.BoolVal(False)
    clause: Any = z3.IntVal(-1)
    for k in range(len(guards) - 1, -1, -1):
        d, g = deliveries[k], guards[k]
        members = [z3.If(g, d.members[i], members[i]) for i in range(n)]
        ends = z3.If(g, z3.BoolVal(d.ends_activation), ends)
        clause = z3.If(g, z3.IntVal(k), clause)
    return SymOutcome(z3.Or(list(guards)) if guards else z3.BoolVal(False), tuple(members),
                      ends, clause, tuple(d.clause for d in deliveries), tuple(guards),
                      tuple(deliveries))


def _slot(m: Any) -> int:
    if not isinstance(m, Slot):
        raise TypeError(f"expected a candidate, got {m!r}")
    return m._rank


def outcome_of(result: Any, n: int) -> SymOutcome:
    """Normalise what a rule returned on a :class:`Z3RuleView`: ``None`` (never
    fires), a bare ``v.deliver(...)`` (always fires) or ``v.first(...)``."""
    if result is None:
        f = z3.BoolVal(False)
        return SymOutcome(f, (f,) * n, f, z3.IntVal(-1), ())
    if isinstance(result, SymDelivery):
        return SymOutcome(z3.BoolVal(True), result.members,
                          z3.BoolVal(result.ends_activation), z3.IntVal(0), (result.clause,),
                          (z3.BoolVal(True),), (result,), (result.ranked,))
    if isinstance(result, SymOutcome):
        return result
    raise TypeError(f"a rule must return v.first(...), v.deliver(...) or None, not {result!r}")
