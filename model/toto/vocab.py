"""The vocabulary the ToTo-family delivery rules are written in, and its interpretations.

Sources: 000 (Dolev, Kramer, Malki) section 4.1 (candidates, Tail, NTail, VT, NVT, Win,
Future) and section 4.2 (sources); 002 (Johnson, Maugis) section 3 (VV, nvt, votes,
u, Win, Future, sources), section 4 (generalized sources) and section 5 (the
lexicographic order of GL-ToTo).

Why a vocabulary
----------------
A delivery rule (``model/toto/rules.py``) is a pure function ``rule(v, params)`` of a
:class:`RuleView` ``v``. It never touches a :class:`~tomkit.model.toto.dag.DagView`: it only
combines the primitives below. :class:`ConcreteRuleView` interprets them as Python
values computed from a ``DagView``; ``fuzz/prove/delivery/symbolic.py`` substitutes an
interpretation whose values are Z3 terms, and proves properties of the *same* rule
bodies. For that to work a rule body must obey three constraints:

* never branch on a value from ``v`` with Python ``if``/``and``/``or``/``not``/``bool``:
  use ``v.and_``, ``v.or_``, ``v.not_``, ``v.implies``, ``v.ite`` and ``v.first``;
* quantify over candidates only with ``v.forall`` / ``v.exists`` / ``v.subset`` /
  ``v.count`` (a symbolic interpretation has candidate *slots* with symbolic
  membership, not a Python list);
* treat candidates as opaque handles: compare them with ``v.distinct`` and
  ``v.precedes``, never with ``==``.

Arithmetic and comparisons (``+``, ``-``, unary ``-``, ``*`` by a Python int, ``<``,
``<=``, ``>``, ``>=``, ``==``) on the integers ``v`` returns, and on Python ints, are
allowed: Z3's linear arithmetic has them too. Every other operation (``/``, ``//``,
``%``, ``**``, a product of two values, bitwise operators, ``abs``, ``int()``) raises
:class:`VocabularyError`, one line naming it and what to write instead, in every
interpretation that can see it (the concrete one computes on plain ints).
``v.n`` and the rule's parameters are plain Python ints in every interpretation.
:class:`OpaqueRuleView` checks the constraints at run time: its values refuse
``bool()``, and its candidate handles refuse ``==``.

Primitives (all evaluated on the current activation's DAG ``G`` at one process)
------------------------------------------------------------------------------
``n``                 the number of processors (Python int)
``candidates``        M_G, as a candidate set
``forall(p, within)`` / ``exists(p, within)`` / ``count(p, within)``
                      quantifiers over M_G (or over the candidate set ``within``)
``subset(p, within)`` {m in M_G (or within) | p(m)}, a candidate set
``member(m, s)``, ``nonempty(s)``, ``distinct(a, b)``
``precedes(a, b)``    a before b in the lexicographic order of message ids
                      <sender, counter> (000 section 2), senders ranked as configured
``nvt(m)``            002: |{q : VV(m)[q] = 1}| (= 000's NVT(m))
``votes(a, b)``       002: |{q : VV(a)[q] = 1 and VV(b)[q] = 0}|
``ntail(m)``          000: NTail(m), processors with a message following m
``ntail_g``           000/002: NTail(G), processors with a message in G, and Defunc
``u``                 002: n - NTail(G), the processors unseen
``marked(m)``         m was delivered early in this activation (GL-ToTo, 002 section 5)
``seen_through(m)``   every processor ranked up to m's sender is in Tail(G)
                      (002 section 5: "i < min(P minus ntail(G))")
``and_``, ``or_``, ``not_``, ``implies``, ``ite``
``deliver(s, clause, ends_activation)``   a :class:`Delivery` of s in lexicographic order
``first((guard, delivery), ...)``         the delivery of the first guard that holds,
                                          or None

The paper's derived notions (Win, Future, sources) are functions below, written once
over these primitives.

A rule written by a user
------------------------
>>> from tomkit.model.toto.rules import Params, drain
>>> def unanimous(v: RuleView, params: Params) -> Delivery | None:
...     '''Deliver M_G once some candidate has every processor's vote (then it is the
...     only candidate and nobody is unseen, so every process delivers the same).'''
...     some_unanimous = v.exists(lambda m: v.nvt(m) == v.n)
...     return v.first((some_unanimous, v.deliver(v.candidates, "unanimous")))
>>> from tomkit.model.toto.dag import DagView, Message
>>> g = DagView(["a", "b"])
>>> _ = g.insert(Message("a1", "a")); _ = g.insert(Message("b1", "b", ("a1",)))
>>> [a.delivery for a in drain(g, unanimous, Params())]
[Delivery(messages=('a1',), clause='unanimous', ends_activation=True)]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from tomkit.model.toto.dag import DagView

#: Interpretation-dependent types: Python bool/int/str/frozenset concretely, Z3 terms
#: symbolically. Aliased only to document intent.
Bool = Any
Int = Any
Cand = Any
CandSet = Any

#: Win's third value, written bottom in 000 and X in 002 ("undecided").
WIN_BOTTOM = -1


@dataclass(frozen=True)
class Delivery:
    """What a rule decides: deliver ``messages`` now, in this order.

    ``clause`` names the part of the rule that fired ("early", "default", "prefix", ...).
    ``ends_activation`` is False only for GL-ToTo's early delivery of a stable prefix
    (002 section 5), which leaves the activation open.
    """

    messages: tuple[str, ...]
    clause: str
    ends_activation: bool = True


class RuleView(Protocol):
    """The vocabulary (see the module docstring); one implementation per interpretation."""

    n: int

    @property
    def candidates(self) -> CandSet: ...
    @property
    def ntail_g(self) -> Int: ...
    @property
    def u(self) -> Int: ...

    def forall(self, pred: Callable[[Cand], Bool], within: CandSet | None = None) -> Bool: ...
    def exists(self, pred: Callable[[Cand], Bool], within: CandSet | None = None) -> Bool: ...
    def count(self, pred: Callable[[Cand], Bool], within: CandSet | None = None) -> Int: ...
    def subset(self, pred: Callable[[Cand], Bool], within: CandSet | None = None) -> CandSet: ...
    def member(self, m: Cand, s: CandSet) -> Bool: ...
    def nonempty(self, s: CandSet) -> Bool: ...
    def distinct(self, a: Cand, b: Cand) -> Bool: ...
    def precedes(self, a: Cand, b: Cand) -> Bool: ...
    def nvt(self, m: Cand) -> Int: ...
    def votes(self, a: Cand, b: Cand) -> Int: ...
    def ntail(self, m: Cand) -> Int: ...
    def marked(self, m: Cand) -> Bool: ...
    def seen_through(self, m: Cand) -> Bool: ...
    def and_(self, *xs: Bool) -> Bool: ...
    def or_(self, *xs: Bool) -> Bool: ...
    def not_(self, x: Bool) -> Bool: ...
    def implies(self, a: Bool, b: Bool) -> Bool: ...
    def ite(self, c: Bool, a: Any, b: Any) -> Any: ...
    def deliver(self, s: CandSet, clause: str, ends_activation: bool = True) -> Any: ...
    def first(self, *options: tuple[Bool, Any]) -> Any: ...


# --------------------------------------------------------------------------------------
# The papers' derived notions, written once over the primitives.


def win(v: RuleView, a: Cand, b: Cand, delta: int) -> Int:
    """Win(a, b) (000 section 4.1, 002 section 3): 1 if votes(a, b) > delta, else 0 if
    votes(b, a) > delta, else WIN_BOTTOM. (000 compares VT entries,
    |{j | VT_a[j] < VT_b[j]}| > delta; VT_a[j] < VT_b[j] exactly when j votes for a and
    not b, bottom entries being incomparable, so the two definitions agree.)"""
    return v.ite(v.votes(a, b) > delta, 1, v.ite(v.votes(b, a) > delta, 0, WIN_BOTTOM))


def future_has_one(v: RuleView, a: Cand, b: Cand, delta: int) -> Bool:
    """1 in Future(a, b) iff votes(a, b) + u > delta (002 section 3; 000 section 4.1
    writes it |{j | VT_b[j] <= VT_a[j]}| < n - delta, the seen processors that do not
    vote for a over b, which is the same)."""
    return v.votes(a, b) + v.u > delta


def future_has(v: RuleView, a: Cand, b: Cand, value: int, delta: int) -> Bool:
    """Whether ``value`` (1, 0 or WIN_BOTTOM) is in Future(a, b).

    Future(a, b) is the set of values Win(a, b) takes on the extensions of G in which
    every processor is heard from (000 section 4.1). Only unseen processors' votes are
    still open, and each may vote for a only, b only, both or neither, so:

    * 1 is possible iff votes(a, b) + u > delta;
    * bottom iff Win(a, b) is bottom now (the unseen may vote for both);
    * 0 iff votes(a, b) <= delta and votes(b, a) + u > delta.

    Decision: the papers print "0 in Future(a, b) iff 1 in Future(b, a)" (000 OCR
    "0 2 Future_p(VT_p1; VT_p2) () 1 2 Future_p(VT_p2; VT_p1)"). That is the same for
    delta >= n/2, but for G-ToTo's delta < n/2 Win's first case (1) can hold together
    with votes(b, a) + u > delta, and then 0 is not a possible permanent value; we take
    the definition, which keeps Future(a, b) = {1} iff Win(a, b) = 1 (002 section 3).
    """
    if value == 1:
        return future_has_one(v, a, b, delta)
    if value == 0:
        return v.and_(v.not_(v.votes(a, b) > delta), v.votes(b, a) + v.u > delta)
    if value == WIN_BOTTOM:
        return v.and_(v.not_(v.votes(a, b) > delta), v.not_(v.votes(b, a) > delta))
    raise ValueError(f"Win takes 1, 0 or WIN_BOTTOM, not {value!r}")


def future_is_one(v: RuleView, a: Cand, b: Cand, delta: int) -> Bool:
    """Future(a, b) = {1}: a beats b for sure. Seen votes never change, so this is
    Win(a, b) = 1, as 002 section 3 notes ("Future(m1, m2) = {1} iff Win(m1, m2) = 1");
    tests check it against :func:`future_has`."""
    return v.votes(a, b) > delta


def is_source(v: RuleView, m: Cand, delta: int) -> Bool:
    """000 section 4.2: m is a source if for every *other* candidate m',
    1 not in Future(m', m).

    Decision: 002 section 3 quantifies over all j in M_G, including m itself; since
    votes(m, m) = 0, 1 in Future(m, m) iff u > delta, so with 002's reading nothing is a
    source while more than delta processors are unseen. We follow 000 ("for every other
    candidate message m'"). No ToTo/S-ToTo/G-ToTo delivery can happen with u > delta
    anyway (each needs nvt(s) > delta or NTail(G) > n - delta), so the rules' behaviour
    is the same; only the reported S_G and GL-ToTo's prefix can differ.
    """
    return v.forall(lambda j: v.implies(v.distinct(j, m),
                                        v.not_(future_has_one(v, j, m, delta))))


def is_generalized_source(v: RuleView, m: Cand, delta: int) -> Bool:
    """002 section 4: i in S_G iff nvt(i) > delta or for every other j in M_G,
    1 not in Future(j, i) (OCR "i C SG V Vj E MG, 1 V Future(j, i)]"; the text explains
    "it is necessary to allow a message with at least delta + 1 votes to become source
    message"). The same as :func:`is_source` when delta >= n/2."""
    return v.or_(v.nvt(m) > delta, is_source(v, m, delta))


def sources(v: RuleView, delta: int) -> CandSet:
    """S_p (000 section 4.2) / S_G (002 section 3)."""
    return v.subset(lambda m: is_source(v, m, delta))


def generalized_sources(v: RuleView, delta: int) -> CandSet:
    """S_G of G-ToTo (002 section 4)."""
    return v.subset(lambda m: is_generalized_source(v, m, delta))


# --------------------------------------------------------------------------------------
# The concrete interpretation.


class ConcreteRuleView:
    """The vocabulary interpreted on a :class:`DagView`'s current state.

    Candidates are message ids (str), candidate sets frozensets of ids, truth values
    bools and counts ints. Votes are precomputed as one bitmask per candidate (bit =
    processor rank), so votes(a, b) is one popcount. The view is a snapshot: build a new
    one after the DagView changes.
    """

    def __init__(self, dag: DagView) -> None:
        st = dag.activation_state()
        self.n = dag.n
        self._cands = st.candidates
        self._pos = {m: i for i, m in enumerate(st.candidates)}
        self._rank = st.ranks
        self._yes = st.yes
        self._tail = st.tail
        self._marked = st.marked
        # plain attributes rather than properties: rules read them in inner loops
        self.ntail_g: int = st.seen.bit_count()
        self.u: int = self.n - self.ntail_g
        self.candidates: frozenset[str] = frozenset(st.candidates)
        # lowest processor rank not in Tail(G); n when everybody is seen
        unseen = ~st.seen & ((1 << dag.n) - 1)
        self._first_unseen = (unseen & -unseen).bit_length() - 1 if unseen else dag.n

    def _domain(self, within: frozenset[str] | None) -> Iterable[str]:
        return self._cands if within is None else within

    def forall(self, pred: Callable[[str], bool], within: frozenset[str] | None = None) -> bool:
        return all(map(pred, self._domain(within)))

    def exists(self, pred: Callable[[str], bool], within: frozenset[str] | None = None) -> bool:
        return any(map(pred, self._domain(within)))

    def count(self, pred: Callable[[str], bool], within: frozenset[str] | None = None) -> int:
        return sum(1 for m in self._domain(within) if pred(m))

    def subset(self, pred: Callable[[str], bool],
               within: frozenset[str] | None = None) -> frozenset[str]:
        return frozenset(m for m in self._domain(within) if pred(m))

    def member(self, m: str, s: frozenset[str]) -> bool:
        return m in s

    def nonempty(self, s: frozenset[str]) -> bool:
        return bool(s)

    def distinct(self, a: str, b: str) -> bool:
        return a != b

    def precedes(self, a: str, b: str) -> bool:
        return self._pos[a] < self._pos[b]

    def nvt(self, m: str) -> int:
        return self._yes[m].bit_count()

    def votes(self, a: str, b: str) -> int:
        # every processor with a voter votes 0 or 1 for each candidate, so "VV(b) = 0"
        # among those voting for a is "not voting for b"
        return (self._yes[a] & ~self._yes[b]).bit_count()

    def ntail(self, m: str) -> int:
        return self._tail[m].bit_count()

    def marked(self, m: str) -> bool:
        return m in self._marked

    def seen_through(self, m: str) -> bool:
        return self._rank[m] < self._first_unseen

    @staticmethod
    def and_(*xs: bool) -> bool:
        return all(xs)

    @staticmethod
    def or_(*xs: bool) -> bool:
        return any(xs)

    @staticmethod
    def not_(x: bool) -> bool:
        return not x

    @staticmethod
    def implies(a: bool, b: bool) -> bool:
        return (not a) or b

    @staticmethod
    def ite(c: bool, a: Any, b: Any) -> Any:
        return a if c else b

    def deliver(self, s: frozenset[str], clause: str, ends_activation: bool = True) -> Delivery:
        return Delivery(tuple(m for m in self._cands if m in s), clause, ends_activation)

    @staticmethod
    def first(*options: tuple[bool, Delivery]) -> Delivery | None:
        for guard, delivery in options:
            if guard:
                return delivery
        return None


# --------------------------------------------------------------------------------------
# What the vocabulary's values refuse, in every interpretation that wraps them.


class VocabularyError(TypeError):
    """An operation the rule vocabulary does not have; the message names it and says
    what to write instead."""


_DIVIDE = ("multiply the other side by a Python int instead: "
           "v.nvt(m) * 2 > v.n, not v.nvt(m) > v.n / 2")
_BITWISE = "combine truth values with v.and_ / v.or_ / v.not_"
_NUMBER = ("a vocabulary value is not a Python number (it is a Z3 term when proving): "
           "combine it with +, - and * by an int, and compare it")
_INSTEAD = {
    "/": _DIVIDE, "//": _DIVIDE,
    "%": "compare multiples instead: x == 2 * k, or count with v.count",
    "*": "multiply by a Python int only (linear arithmetic, as Z3 decides it): "
         "2 * v.nvt(m), not v.nvt(m) * v.ntail(m)",
    "**": "multiply by a Python int only: v.nvt(m) * 2, not v.nvt(m) ** 2",
    "&": _BITWISE, "|": _BITWISE, "^": _BITWISE, "~": _BITWISE,
    "<<": "multiply by a power of two written as an int", ">>": _DIVIDE,
    "abs()": "write v.ite(x >= 0, x, 0 - x)",
    "int()": _NUMBER, "float()": _NUMBER, "an index": _NUMBER, "round()": _NUMBER,
}


def unsupported(op: str) -> VocabularyError:
    """The error for an operation ``op`` (as written in :data:`_INSTEAD`)."""
    return VocabularyError(f"the rule vocabulary has no {op if op.endswith(')') else repr(op)} "
                           f"on its values: {_INSTEAD[op]}")


def scale(o: Any) -> int:
    """The Python int a vocabulary value may be multiplied by, or the error."""
    if isinstance(o, int):
        return o
    raise unsupported("*")


def _refuse(op: str) -> Callable[..., Any]:
    def method(self: Any, *args: Any) -> Any:
        raise unsupported(op)
    method.__name__ = f"refuse {op}"
    return method


class Refusals:
    """Mixin of a vocabulary value's class: every operation the vocabulary does not have
    raises :class:`VocabularyError` (rather than Python's "unsupported operand type")."""

    __slots__ = ()
    __truediv__ = __rtruediv__ = _refuse("/")
    __floordiv__ = __rfloordiv__ = _refuse("//")
    __mod__ = __rmod__ = __divmod__ = __rdivmod__ = _refuse("%")
    __pow__ = __rpow__ = _refuse("**")
    __and__ = __rand__ = _refuse("&")
    __or__ = __ror__ = _refuse("|")
    __xor__ = __rxor__ = _refuse("^")
    __invert__ = _refuse("~")
    __lshift__ = __rlshift__ = _refuse("<<")
    __rshift__ = __rrshift__ = _refuse(">>")
    __abs__ = _refuse("abs()")
    __int__ = _refuse("int()")
    __float__ = _refuse("float()")
    __index__ = _refuse("an index")
    __round__ = _refuse("round()")


# --------------------------------------------------------------------------------------
# A checking interpretation: the concrete values, made opaque.


class _Opaque(Refusals):
    """A concrete bool or int that refuses bool(): a rule that branches on it would not
    work on Z3 terms."""

    __slots__ = ("x",)
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, x: Any) -> None:
        self.x = x

    def __bool__(self) -> bool:
        raise TypeError("a rule must not branch on a vocabulary value in Python; "
                        "use v.and_/v.or_/v.not_/v.ite/v.first")

    def __add__(self, o: Any) -> _Opaque:
        return _Opaque(self.x + _val(o))

    __radd__ = __add__

    def __sub__(self, o: Any) -> _Opaque:
        return _Opaque(self.x - _val(o))

    def __rsub__(self, o: Any) -> _Opaque:
        return _Opaque(_val(o) - self.x)

    def __mul__(self, o: Any) -> _Opaque:
        return _Opaque(self.x * scale(o))

    __rmul__ = __mul__

    def __neg__(self) -> _Opaque:
        return _Opaque(-self.x)

    def __lt__(self, o: Any) -> _Opaque:
        return _Opaque(self.x < _val(o))

    def __le__(self, o: Any) -> _Opaque:
        return _Opaque(self.x <= _val(o))

    def __gt__(self, o: Any) -> _Opaque:
        return _Opaque(self.x > _val(o))

    def __ge__(self, o: Any) -> _Opaque:
        return _Opaque(self.x >= _val(o))

    def __eq__(self, o: object) -> _Opaque:  # type: ignore[override]
        return _Opaque(self.x == _val(o))

    def __ne__(self, o: object) -> _Opaque:  # type: ignore[override]
        return _Opaque(self.x != _val(o))


class _Handle:
    """An opaque candidate: rules must compare candidates through the vocabulary."""

    __slots__ = ("id",)
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, mid: str) -> None:
        self.id = mid

    def __eq__(self, o: object) -> bool:
        raise TypeError("compare candidates with v.distinct / v.precedes, not ==")

    def __bool__(self) -> bool:
        raise TypeError("a candidate has no truth value")


class _OpaqueSet:
    __slots__ = ("s",)

    def __init__(self, s: frozenset[str]) -> None:
        self.s = s

    def __bool__(self) -> bool:
        raise TypeError("use v.nonempty(s)")

    def __iter__(self) -> Any:
        raise TypeError("quantify with v.forall/v.exists(..., within=s)")


def _val(o: Any) -> Any:
    if isinstance(o, _Opaque):
        return o.x
    if isinstance(o, (_Handle, _OpaqueSet)):
        raise TypeError("candidates and candidate sets are not numbers")
    return o


class OpaqueRuleView:
    """The concrete interpretation behind opaque values (see the module docstring).

    Evaluating a rule with it gives the same Delivery as :class:`ConcreteRuleView` when
    the rule keeps to the vocabulary, and raises TypeError when the rule branches on a
    value or compares candidates itself, which a symbolic interpretation could not run.
    """

    def __init__(self, dag: DagView) -> None:
        self._c = ConcreteRuleView(dag)
        self.n = dag.n

    def _dom(self, within: _OpaqueSet | None) -> Iterable[str]:
        return self._c._cands if within is None else sorted(within.s)

    def _test(self, pred: Callable[[_Handle], Any], m: str) -> bool:
        r = pred(_Handle(m))
        if not isinstance(r, (_Opaque, bool)):
            raise TypeError(f"a predicate returned {r!r}, not a truth value")
        return bool(_val(r))

    @property
    def candidates(self) -> _OpaqueSet:
        return _OpaqueSet(self._c.candidates)

    @property
    def ntail_g(self) -> _Opaque:
        return _Opaque(self._c.ntail_g)

    @property
    def u(self) -> _Opaque:
        return _Opaque(self._c.u)

    def forall(self, pred: Callable[[_Handle], Any], within: _OpaqueSet | None = None) -> _Opaque:
        # evaluate every instance, as a symbolic conjunction would
        return _Opaque(all([self._test(pred, m) for m in self._dom(within)]))

    def exists(self, pred: Callable[[_Handle], Any], within: _OpaqueSet | None = None) -> _Opaque:
        return _Opaque(any([self._test(pred, m) for m in self._dom(within)]))

    def count(self, pred: Callable[[_Handle], Any], within: _OpaqueSet | None = None) -> _Opaque:
        return _Opaque(sum(self._test(pred, m) for m in self._dom(within)))

    def subset(self, pred: Callable[[_Handle], Any],
               within: _OpaqueSet | None = None) -> _OpaqueSet:
        return _OpaqueSet(frozenset(m for m in self._dom(within) if self._test(pred, m)))

    def member(self, m: _Handle, s: _OpaqueSet) -> _Opaque:
        return _Opaque(m.id in s.s)

    def nonempty(self, s: _OpaqueSet) -> _Opaque:
        return _Opaque(len(s.s) > 0)

    def distinct(self, a: _Handle, b: _Handle) -> _Opaque:
        return _Opaque(a.id != b.id)

    def precedes(self, a: _Handle, b: _Handle) -> _Opaque:
        return _Opaque(self._c.precedes(a.id, b.id))

    def nvt(self, m: _Handle) -> _Opaque:
        return _Opaque(self._c.nvt(m.id))

    def votes(self, a: _Handle, b: _Handle) -> _Opaque:
        return _Opaque(self._c.votes(a.id, b.id))

    def ntail(self, m: _Handle) -> _Opaque:
        return _Opaque(self._c.ntail(m.id))

    def marked(self, m: _Handle) -> _Opaque:
        return _Opaque(self._c.marked(m.id))

    def seen_through(self, m: _Handle) -> _Opaque:
        return _Opaque(self._c.seen_through(m.id))

    def and_(self, *xs: Any) -> _Opaque:
        return _Opaque(all([bool(_val(x)) for x in xs]))

    def or_(self, *xs: Any) -> _Opaque:
        return _Opaque(any([bool(_val(x)) for x in xs]))

    def not_(self, x: Any) -> _Opaque:
        return _Opaque(not _val(x))

    def implies(self, a: Any, b: Any) -> _Opaque:
        return _Opaque((not _val(a)) or bool(_val(b)))

    def ite(self, c: Any, a: Any, b: Any) -> Any:
        return a if _val(c) else b

    def deliver(self, s: _OpaqueSet, clause: str, ends_activation: bool = True) -> Delivery:
        return self._c.deliver(s.s, clause, ends_activation)

    def first(self, *options: tuple[Any, Delivery]) -> Delivery | None:
        for guard, delivery in options:
            if _val(guard):
                return delivery
        return None
