"""A compiled concrete interpretation of the rule vocabulary, for the simulator's speed.

Why
---
:class:`~tomkit.model.toto.vocab.ConcreteRuleView` evaluates a rule body by calling Python
closures for every quantifier, vote count and connective, every time a process evaluates
its rule. Profiling the simulator put two thirds of its time there. But a rule body is a
pure function of the vocabulary (the constraints in ``model/toto/vocab.py``), so for a fixed
rule, parameters, n and *number of candidates* k, its computation has one shape: only the
vote and tail bitmasks, the marks and the unseen processors vary. We run the rule body
once on a *tracing* view whose candidates are k slots and whose values are expression
nodes, and turn the recorded expression into straight-line Python source (common
subexpressions shared, constants folded), compiled once and cached. Evaluating the rule
is then one call to that function.

This is the same idea as the Z3 interpretation (fuzz/prove/delivery/symbolic.py: candidate slots,
values as terms) with Python source as the term language. The rule is still defined once:
the compiled function is derived from the rule body, and a test compares it with
``ConcreteRuleView`` on random DAG views for every built-in rule.

A rule that breaks the vocabulary's constraints (branches on a value, compares candidates
with ``==``) cannot be traced: :func:`compiled` returns None for it and the driver keeps
using ``ConcreteRuleView``, so user rules that only run concretely still work.

The slots are the candidates in lexicographic order, so ``precedes`` and ``distinct`` are
known while tracing and cost nothing at run time. Every candidate of the activation is a
slot, so quantifiers without ``within`` are plain conjunctions over all slots.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from tomkit.model.toto.vocab import Delivery, Refusals, VocabularyError, scale

__all__ = ["Compiled", "CompiledRule", "Decision", "compiled"]

#: compiled(yes, tail, marked, ranks, seen) -> (option index, delivered slot mask) or None
CompiledRule = Callable[[Sequence[int], Sequence[int], Sequence[bool], Sequence[int], int],
                        "tuple[int, int] | None"]


#: a decision as a plain tuple: (messages, clause, ends_activation), Delivery's fields
Decision = tuple[tuple[str, ...], str, bool]


class _Untraceable(TypeError):
    pass


class _E(Refusals):
    """An expression node: the name (or literal) of a value in the generated code."""

    __slots__ = ("b", "code")
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, b: _Builder, code: str) -> None:
        self.b = b
        self.code = code

    def __bool__(self) -> bool:
        raise _Untraceable("the rule branches on a vocabulary value")

    def _bin(self, op: str, o: Any, swap: bool = False) -> _E:
        a, c = self.code, _code(o)
        return self.b.let(f"({c} {op} {a})" if swap else f"({a} {op} {c})")

    def __add__(self, o: Any) -> _E:
        return self._bin("+", o)

    def __radd__(self, o: Any) -> _E:
        return self._bin("+", o, True)

    def __sub__(self, o: Any) -> _E:
        return self._bin("-", o)

    def __rsub__(self, o: Any) -> _E:
        return self._bin("-", o, True)

    def __mul__(self, o: Any) -> _E:
        return self._bin("*", scale(o))

    __rmul__ = __mul__

    def __neg__(self) -> _E:
        return self.b.let(f"(-{self.code})")

    def __lt__(self, o: Any) -> _E:
        return self._bin("<", o)

    def __le__(self, o: Any) -> _E:
        return self._bin("<=", o)

    def __gt__(self, o: Any) -> _E:
        return self._bin(">", o)

    def __ge__(self, o: Any) -> _E:
        return self._bin(">=", o)

    def __eq__(self, o: object) -> _E:  # type: ignore[override]
        return self._bin("==", o)

    def __ne__(self, o: object) -> _E:  # type: ignore[override]
        return self._bin("!=", o)


def _code(x: Any) -> str:
    if isinstance(x, _E):
        return x.code
    if isinstance(x, bool | int):
        return repr(x)
    raise _Untraceable(f"not a vocabulary value: {x!r}")


class _Slot:
    __slots__ = ("i",)
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, i: int) -> None:
        self.i = i

    def __eq__(self, o: object) -> bool:
        raise _Untraceable("candidates compared with ==")

    def __bool__(self) -> bool:
        raise _Untraceable("a candidate has no truth value")


class _Set(tuple):
    """A candidate set: per slot, a bool or a boolean expression (membership)."""

    def __bool__(self) -> bool:
        raise _Untraceable("use v.nonempty(s)")

    def __iter__(self) -> Any:
        raise _Untraceable("quantify with v.forall/v.exists(..., within=s)")


def _items(s: _Set) -> list:
    """The slots' memberships (a _Set refuses iteration to the rule, not to us)."""
    return [tuple.__getitem__(s, i) for i in range(len(s))]


class _Delivery:
    __slots__ = ("ends", "clause", "members")

    def __init__(self, members: tuple, clause: str, ends: bool) -> None:
        self.members, self.clause, self.ends = members, clause, ends


class _Builder:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.names: dict[str, str] = {}

    def let(self, code: str) -> _E:
        name = self.names.get(code)
        if name is None:
            name = self.names[code] = f"t{len(self.names)}"
            self.lines.append(f"    {name} = {code}")
        return _E(self, name)


def _truth(x: Any) -> bool | _E:
    if isinstance(x, _E | bool):
        return x
    raise _Untraceable(f"a predicate returned {x!r}, not a truth value")


class _TraceView:
    """The vocabulary over k candidate slots, recording expressions (see the module
    docstring); inputs are ``yes``, ``tail``, ``mk``, ``rk`` (per slot) and ``seen``."""

    def __init__(self, n: int, k: int) -> None:
        self.n = n
        self.k = k
        self.b = _Builder()
        self.ntail_g = self.b.let("seen.bit_count()")
        self.u = self.b.let(f"({n} - {self.ntail_g.code})")
        self.candidates = _Set((True,) * k)
        unseen = self.b.let(f"(~seen & {(1 << n) - 1})")
        # lowest processor rank not in Tail(G); n when everybody is seen
        self._first_unseen = self.b.let(
            f"((({unseen.code} & -{unseen.code}).bit_length() - 1) if {unseen.code} "
            f"else {n})")

    def and_(self, *xs: Any) -> bool | _E:
        return self._connective("and", False, xs)

    def or_(self, *xs: Any) -> bool | _E:
        return self._connective("or", True, xs)

    def _connective(self, op: str, absorbing: bool, xs: tuple) -> bool | _E:
        """``op`` over xs, folding constants: the absorbing constant decides at once,
        the other one drops out (so a quantifier over a constant set stays small)."""
        parts = []
        for x in map(_truth, xs):
            if x is absorbing:
                return absorbing
            if not isinstance(x, bool):
                parts.append(x.code)
        if not parts:
            return not absorbing
        if len(parts) == 1:
            return _E(self.b, parts[0])
        return self.b.let("(" + f" {op} ".join(parts) + ")")

    def not_(self, x: Any) -> bool | _E:
        x = _truth(x)
        return (not x) if isinstance(x, bool) else self.b.let(f"(not {x.code})")

    def implies(self, a: Any, b: Any) -> bool | _E:
        return self.or_(self.not_(a), b)

    def ite(self, c: Any, a: Any, b: Any) -> Any:
        c = _truth(c)
        if isinstance(c, bool):
            return a if c else b
        return self.b.let(f"({_code(a)} if {c.code} else {_code(b)})")

    # quantifiers over slots
    def _members(self, within: _Set | None) -> list[tuple[int, bool | _E]]:
        s = self.candidates if within is None else within
        if not isinstance(s, _Set):
            raise _Untraceable("within must be a candidate set")
        return [(i, m) for i, m in enumerate(_items(s)) if m is not False]

    def forall(self, pred: Callable[[_Slot], Any], within: _Set | None = None) -> Any:
        return self.and_(*(self.implies(m, pred(_Slot(i))) for i, m in self._members(within)))

    def exists(self, pred: Callable[[_Slot], Any], within: _Set | None = None) -> Any:
        return self.or_(*(self.and_(m, pred(_Slot(i))) for i, m in self._members(within)))

    def count(self, pred: Callable[[_Slot], Any], within: _Set | None = None) -> Any:
        terms = [self.and_(m, pred(_Slot(i))) for i, m in self._members(within)]
        consts = sum(1 for t in terms if t is True)
        exprs = [t.code for t in terms if isinstance(t, _E)]
        if not exprs:
            return consts
        return self.b.let("(" + " + ".join([str(consts)] + exprs) + ")")

    def subset(self, pred: Callable[[_Slot], Any], within: _Set | None = None) -> _Set:
        s = self.candidates if within is None else within
        return _Set(self.and_(m, pred(_Slot(i))) if m is not False else False
                    for i, m in enumerate(_items(s)))

    def member(self, m: _Slot, s: _Set) -> Any:
        return s[m.i]

    def nonempty(self, s: _Set) -> Any:
        return self.or_(*_items(s))

    def distinct(self, a: _Slot, b: _Slot) -> bool:
        return a.i != b.i

    def precedes(self, a: _Slot, b: _Slot) -> bool:
        return a.i < b.i

    # the DAG's values
    def nvt(self, m: _Slot) -> _E:
        return self.b.let(f"yes[{m.i}].bit_count()")

    def votes(self, a: _Slot, b: _Slot) -> _E | int:
        if a.i == b.i:
            return 0
        return self.b.let(f"(yes[{a.i}] & ~yes[{b.i}]).bit_count()")

    def ntail(self, m: _Slot) -> _E:
        return self.b.let(f"tail[{m.i}].bit_count()")

    def marked(self, m: _Slot) -> _E:
        return self.b.let(f"mk[{m.i}]")

    def seen_through(self, m: _Slot) -> _E:
        return self.b.let(f"(rk[{m.i}] < {self._first_unseen.code})")

    def deliver(self, s: _Set, clause: str, ends_activation: bool = True) -> _Delivery:
        return _Delivery(tuple(_items(s)), clause, ends_activation)

    def first(self, *options: tuple[Any, _Delivery]) -> list[tuple[Any, int, _Delivery]]:
        return [(_truth(g), i, d) for i, (g, d) in enumerate(options)]


def _generate(rule: Callable, params: Any, n: int, k: int
              ) -> tuple[CompiledRule, list[_Delivery]] | None:
    v = _TraceView(n, k)
    try:
        options = rule(v, params)
    except (_Untraceable, VocabularyError):
        # the concrete interpretation runs it (on plain ints, which have every operation)
        return None
    if options is None:
        options = []
    if not isinstance(options, list):
        return None  # the rule did not end in v.first(...)
    b = v.b
    body = list(b.lines)
    for guard, i, d in options:
        if guard is False:
            continue
        mask = " | ".join(f"({1 << j} if {_code(m)} else 0)" if not isinstance(m, bool)
                          else str((1 << j) if m else 0) for j, m in enumerate(d.members))
        ret = f"return ({i}, {mask or '0'})"
        if guard is True:
            body.append(f"    {ret}")
            break
        body.append(f"    if {guard.code}:\n        {ret}")
    body.append("    return None")
    body = _live(body)
    src = "def f(yes, tail, mk, rk, seen):\n" + "\n".join(body) + "\n"
    ns: dict[str, Any] = {}
    exec(compile(src, f"<compiled {getattr(rule, '__name__', rule)} n={n} k={k}>", "exec"),
         ns)
    fn = ns["f"]
    fn.source = src  # for inspection and tests
    return fn, [d for _, _, d in options]


_NAME = re.compile(r"\bt\d+\b")


def _live(lines: list[str]) -> list[str]:
    """Drop assignments whose value nothing uses (quantifiers over constant sets leave
    some)."""
    used: set[str] = set()
    out = []
    for line in reversed(lines):
        target, eq, expr = line.strip().partition(" = ")
        if eq and _NAME.fullmatch(target):
            if target not in used:
                continue
            used.update(_NAME.findall(expr))
        else:
            used.update(_NAME.findall(line))
        out.append(line)
    return out[::-1]


class Compiled:
    """A rule compiled for n processors and k candidates: called with ``(cands, yes, tail,
    marked, ranks, seen)`` it returns the rule's :class:`Delivery` or None, exactly as
    the rule on ConcreteRuleView would (see :func:`compiled`)."""

    __slots__ = ("fn", "options", "full", "source")

    def __init__(self, fn: CompiledRule, options: Sequence[_Delivery], k: int) -> None:
        self.fn = fn
        #: per option of the rule's ``v.first``: its clause and whether it ends the
        #: activation
        self.options = [(d.clause, d.ends) for d in options]
        #: the slot mask that delivers every candidate
        self.full = (1 << k) - 1
        self.source: str = fn.source  # type: ignore[attr-defined]

    def __call__(self, cands: Sequence[str], yes: Sequence[int], tail: Sequence[int],
                 mk: Sequence[bool], rk: Sequence[int], seen: int) -> Delivery | None:
        r = self.decide(cands, yes, tail, mk, rk, seen)
        return None if r is None else Delivery(*r)

    def decide(self, cands: Sequence[str], yes: Sequence[int], tail: Sequence[int],
               mk: Sequence[bool], rk: Sequence[int], seen: int) -> Decision | None:
        """The Delivery's fields (messages, clause, ends_activation), or None: the
        simulator's inner loop does not need the Delivery object."""
        r = self.fn(yes, tail, mk, rk, seen)
        if r is None:
            return None
        i, mask = r
        clause, ends = self.options[i]
        if mask == self.full:
            return tuple(cands), clause, ends
        return tuple([c for j, c in enumerate(cands) if mask >> j & 1]), clause, ends


_cache: dict[tuple, Compiled | None] = {}


def compiled(rule: Callable, params: Any, n: int, k: int) -> Compiled | None:
    """The rule compiled for n processors and k candidates, or None when the rule cannot
    be traced (then evaluate it with ConcreteRuleView).

    The result takes ``(cands, yes, tail, marked, ranks, seen)``: the candidates in
    lexicographic order and, per candidate, its vote and tail bitmasks, whether it is
    marked and its sender's rank, plus the Tail(G) bitmask; it returns the rule's
    :class:`Delivery` or None, exactly as the rule on ConcreteRuleView would.
    """
    key = (rule, params, n, k)
    try:
        return _cache[key]
    except KeyError:
        pass
    except TypeError:  # unhashable params: no caching, no compiling
        return None
    gen = _generate(rule, params, n, k)
    _cache[key] = None if gen is None else Compiled(gen[0], gen[1], k)
    return _cache[key]
