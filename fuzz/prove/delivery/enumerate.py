"""Exhaustive enumeration of one activation: every DAG shape, every pair of views.

The concrete twin of ``fuzz/prove`` (see its ``encoding.py`` and ``solve.py``, and
docs/prove.md): the same space and the same four properties, decided by running the rule
itself on :class:`~tomkit.model.toto.dag.DagView` views through
:class:`~tomkit.model.toto.vocab.ConcreteRuleView`. It serves

* ``tomkit prove`` for rules outside the vocabulary (they cannot run on Z3 terms), and
* the cross-check of the Z3 verdicts (tests/fuzz/prove/test_prove_crosscheck.py).

"Every DAG shape" for n processors and at most K messages each: every partial order
("follows") on a set of messages ``(q, 0..len_q - 1)``, len_q <= K, in which each
processor's messages form a chain, generated up to nothing (labelled: processors are
ranked, so no two shapes are identified). Views: every causally closed subset (down-set)
with every set of Crash(q) events whose processor has all its messages in the view (the
membership assumption of ``encoding.py``). Pairs: every ordered pair of views for
agreement; every nested pair (messages and crashes) for the stability properties.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from tomkit.fuzz.prove.delivery import QUERIES
from tomkit.model.toto.dag import DagView, Message
from tomkit.model.toto.vocab import ConcreteRuleView, Delivery

__all__ = ["Found", "dag_shapes", "disagree", "search", "search_all", "views_of",
           "violates"]


Msg = tuple[int, int]
#: a DAG shape: messages in a causal order, and for each the set of messages it follows
Shape = tuple[tuple[Msg, ...], dict[Msg, frozenset[Msg]]]


def _mid(a: Msg) -> str:
    return f"p{a[0]}.{a[1] + 1}"


def dag_shapes(n: int, k: int) -> Iterator[Shape]:
    """Every DAG shape (see the module docstring), each once.

    Messages are added one at a time in the fixed order (0,0), (1,0), ..., (n-1,0),
    (0,1), ...; a new message chooses which of the earlier ones it follows (a down-set
    D) and which follow it (an up-set U, of messages not in D, each of which follows
    everything in D). This builds every partial order on the chosen messages once."""
    order = [(q, j) for j in range(k) for q in range(n)]

    def rec(i: int, present: tuple[Msg, ...], below: dict[Msg, frozenset[Msg]]
            ) -> Iterator[Shape]:
        if i == len(order):
            yield _causal(present, below), below
            return
        a = order[i]
        q, j = a
        # (q, j) may be absent; absent only if all later messages of q are absent too,
        # which the fixed order gives by requiring (q, j - 1) present
        yield from rec(i + 1, present, below)
        if j > 0 and (q, j - 1) not in below:
            return
        prev = list(present)
        for dn in _down_sets(prev, below):
            if j > 0 and (q, j - 1) not in dn:
                continue  # the chain: (q, j) follows (q, j - 1)
            rest = [b for b in prev if b not in dn and all(d in below[b] for d in dn)]
            for up in _up_sets(rest, below):
                if any(b[0] == q for b in up):
                    continue  # a processor's earlier message cannot follow a later one
                nb = dict(below)
                nb[a] = frozenset(dn) | {a}
                for b in up:
                    nb[b] = below[b] | nb[a]
                yield from rec(i + 1, present + (a,), nb)

    yield from rec(0, (), {})


def _down_sets(elems: list[Msg], below: dict[Msg, frozenset[Msg]]) -> Iterator[set[Msg]]:
    for r in range(len(elems) + 1):
        for c in itertools.combinations(elems, r):
            s = set(c)
            if all(below[x] <= s for x in s):
                yield s


def _up_sets(elems: list[Msg], below: dict[Msg, frozenset[Msg]]) -> Iterator[set[Msg]]:
    for r in range(len(elems) + 1):
        for c in itertools.combinations(elems, r):
            s = set(c)
            if all(y in s for x in s for y in elems if x in below[y]):
                yield s


def _causal(present: tuple[Msg, ...], below: dict[Msg, frozenset[Msg]]) -> tuple[Msg, ...]:
    return tuple(sorted(present, key=lambda a: (len(below[a]), a)))


def messages_of(shape: Shape) -> list[Message]:
    """The shape as DagView messages (deps = direct predecessors), in a causal order."""
    msgs, below = shape
    out = []
    for a in msgs:
        preds = below[a] - {a}
        direct = [b for b in preds if not any(c != b and b in below[c] for c in preds)]
        out.append(Message(_mid(a), f"p{a[0]}", tuple(_mid(b) for b in sorted(direct))))
    return out


@dataclass(frozen=True)
class View:
    messages: frozenset[str]
    crashed: frozenset[str]


def views_of(shape: Shape, n: int, crashes: bool = True) -> list[View]:
    """Every view of the shape: down-sets, times the crash sets the membership
    assumption allows."""
    msgs, below = shape
    out = []
    for dn in _down_sets(list(msgs), below):
        ids = frozenset(_mid(a) for a in dn)
        eligible = [q for q in range(n) if all(a in dn for a in msgs if a[0] == q)]
        for r in range(len(eligible) + 1 if crashes else 1):
            for c in itertools.combinations(eligible, r):
                out.append(View(ids, frozenset(f"p{q}" for q in c)))
    return out


def evaluate(processors: Sequence[str], msgs: Sequence[Message], view: View,
             rule_fn: Callable[[ConcreteRuleView], Delivery | None]) -> tuple[DagView,
                                                                            Delivery | None]:
    """The rule's decision at one view (a fresh DagView; crashes after the messages)."""
    g = DagView(processors)
    for m in msgs:
        if m.id in view.messages:
            g.insert(m)
    for q in sorted(view.crashed):
        g.crash(q)
    return g, rule_fn(ConcreteRuleView(g))


def _lex_prefix(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    return b[:len(a)] == a


def disagree(d1: Delivery, d2: Delivery) -> bool:
    """The deliveries disagree (``fuzz/prove/delivery/solve.py``): both end the activation with
    different sets, or neither sequence is a prefix of the other."""
    if d1.ends_activation and d2.ends_activation and set(d1.messages) != set(d2.messages):
        return True
    return order_conflict(d1, d2)


def order_conflict(d1: Delivery, d2: Delivery) -> bool:
    return not (_lex_prefix(d1.messages, d2.messages) or _lex_prefix(d2.messages, d1.messages))


def nested(v1: View, v2: View) -> bool:
    return v1.messages <= v2.messages and v1.crashed <= v2.crashed


def violates(prop: str, v1: View, d1: Delivery | None, cands1: Sequence[str], v2: View,
             d2: Delivery | None) -> bool:
    """Whether the pair of views violates ``prop``: the concrete definition of the
    queries of ``fuzz/prove/delivery/solve.py``."""
    if d1 is None or d2 is None:
        return False
    if prop == "agreement":
        return disagree(d1, d2)
    if not nested(v1, v2):
        return False
    if prop == "stability":
        return disagree(d1, d2)
    if prop == "internal-stability":
        return d1.ends_activation and any(m in d2.messages for m in cands1
                                          if m not in d1.messages)
    if prop == "external-stability":
        return d1.ends_activation and any(m not in v1.messages for m in d2.messages)
    raise ValueError(f"unknown property {prop!r}; expected one of {', '.join(QUERIES)}")


@dataclass(frozen=True)
class Found:
    """A violation found by enumeration: the DAG, the two views, the two deliveries."""

    property: str
    processors: tuple[str, ...]
    messages: tuple[Message, ...]
    views: tuple[View, View]
    deliveries: tuple[Delivery, Delivery]


@dataclass(frozen=True)
class SearchResult:
    shapes: int
    found: Found | None


def search(rule_fn: Callable[[ConcreteRuleView], Delivery | None], n: int, k: int,
           prop: str, crashes: bool = True, sample: int | None = None, seed: int = 0,
           shapes: list[Shape] | None = None) -> SearchResult:
    """Look for a violation of ``prop`` over every DAG shape (or ``sample`` of them,
    drawn with ``seed``) and every pair of their views. The first one found is returned
    (shapes in generation order, views in enumeration order)."""
    return search_all(rule_fn, n, k, (prop,), crashes, sample, seed, shapes)[prop]


def search_all(rule_fn: Callable[[ConcreteRuleView], Delivery | None], n: int, k: int,
               props: Sequence[str] = QUERIES, crashes: bool = True,
               sample: int | None = None, seed: int = 0,
               shapes: list[Shape] | None = None) -> dict[str, SearchResult]:
    """:func:`search` for several properties at once, evaluating the rule once per view."""
    for prop in props:
        if prop not in QUERIES:
            raise ValueError(f"unknown property {prop!r}; expected one of "
                             f"{', '.join(QUERIES)}")
    procs = tuple(f"p{q}" for q in range(n))
    all_shapes = shapes if shapes is not None else list(dag_shapes(n, k))
    if sample is not None and sample < len(all_shapes):
        all_shapes = random.Random(seed).sample(all_shapes, sample)
    out: dict[str, SearchResult] = {}
    open_props = list(props)
    for count, shape in enumerate(all_shapes, 1):
        msgs = messages_of(shape)
        evals = []
        for v in views_of(shape, n, crashes):
            g, d = evaluate(procs, msgs, v, rule_fn)
            if d is not None:
                evals.append((v, d, g.candidates()))
        # every violation needs two different deliveries (for internal and external
        # stability: D2 holds a message D1 does not), so only pairs across groups count
        groups: dict[tuple, list] = {}
        for e in evals:
            groups.setdefault((e[1].messages, e[1].ends_activation), []).append(e)
        if len(groups) < 2:
            continue
        pairs = [(a, b) for ga, gb in itertools.permutations(groups.values(), 2)
                 for a in ga for b in gb]
        for prop in list(open_props):
            for (v1, d1, c1), (v2, d2, _) in pairs:
                if violates(prop, v1, d1, c1, v2, d2):
                    out[prop] = SearchResult(count, Found(prop, procs, tuple(msgs), (v1, v2),
                                                          (d1, d2)))
                    open_props.remove(prop)
                    break
        if not open_props:
            break
    for prop in open_props:
        out[prop] = SearchResult(len(all_shapes), None)
    return out
