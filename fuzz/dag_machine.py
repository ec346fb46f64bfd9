"""Hypothesis stateful fuzzing of a delivery rule over causal DAG views.

What is fuzzed
--------------
A delivery rule (``model/toto/rules.py``, or a user's rule written over ``model/toto/vocab.py``)
is meant to be a pure function of a process's causal DAG view that every process can
evaluate on its own and still deliver the same messages in the same order (000 section
4: agreement; the rule's internal and external stability are what make it so). The
machine below builds a random DAG the way processes do, reveals it to every process in
its own order, evaluates the rule at every step (:func:`~tomkit.model.toto.rules.drain`) and
checks, as an invariant, that the delivery sequences of any two processes are prefixes
of one another. Shrinking then gives a minimal DAG and reveal order.

One rule per action (STYLE.md, Hypothesis' stateful testing):

* ``send``: a live processor multicasts a new message ACKing the heads of its view
  (as ``model/process.py`` does: Transis' explicit ACKs);
* ``reveal``: one message in flight reaches a live processor, in any order the
  adversary likes: the DagView buffers a message until its causal predecessors arrive
  (Transis' causal layer), so every order is "within causal constraints";
* ``crash``: a processor stops (while a quorum of more than n - delta stays, so that the
  rule can still decide);
* ``notify``: the membership service's Crash(q) at a live processor, only once every
  message q sent has reached it (000 section 5.1: Crash(q) means no message of q comes
  henceforth; the Agree stage gives everybody the same set of q's messages).

Invariant ``agreement``: for any two processors, one's delivery sequence is a prefix of
the other's (crashed processors included: what they delivered before crashing counts).
In ``teardown`` the run is drained (everything revealed, Crash(q) everywhere, then two
rounds of ACK messages from every live processor, which makes NTail(G) = n), and every
message must then be delivered by every live processor (liveness).

A failure carries a :class:`Disagreement` (the DAG, the two processors' views and
delivery sequences) for the counterexample writers in ``fuzz/counterexample.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
)

from tomkit.fuzz.counterexample import Counterexample, CxView, shrink, validate
from tomkit.model.toto.dag import DagView, Message
from tomkit.model.toto.rules import Params, Rule, drain
from tomkit.model.toto.vocab import Delivery

__all__ = ["Batch", "Disagreement", "RuleFailure", "activation_counterexample",
           "rule_machine"]


@dataclass(frozen=True)
class Batch:
    """One delivery a processor made: from position ``start`` of its sequence, at the
    view (visible messages, Crash(q) set) it had when its rule fired, with ``marked``
    messages of the activation already delivered early (GL-ToTo)."""

    start: int
    visible: frozenset[str]
    defunc: tuple[str, ...]
    marked: int
    delivery: Delivery


@dataclass
class Disagreement:
    """Two processors whose delivery sequences are not prefixes of one another."""

    rule: str
    n: int
    delta: int | None
    #: every message sent so far, in sending order
    messages: list[Message]
    #: processors declared crashed (Crash(q) given to someone)
    crashed: list[str]
    #: per processor of the pair: its visible messages, its Crash(q) set and deliveries
    a: str
    b: str
    views: dict[str, list[str]] = field(default_factory=dict)
    defunc: dict[str, list[str]] = field(default_factory=dict)
    delivered: dict[str, list[str]] = field(default_factory=dict)
    #: "agreement" (two sequences part) or "liveness" (a message never delivered)
    kind: str = "agreement"
    #: liveness: the message that processor a never delivers (b is then a too)
    missing: str | None = None
    #: per processor of the pair, its deliveries with the views they were made at
    batches: dict[str, list[Batch]] = field(default_factory=dict)
    #: the whole run so far as v1 trace records
    records: list[dict] = field(default_factory=list)

    def describe(self) -> str:
        da, db = self.delivered[self.a], self.delivered[self.b]
        k = next((i for i, (x, y) in enumerate(zip(da, db)) if x != y), min(len(da), len(db)))
        if self.kind == "liveness":
            return (f"after draining, {self.a} delivered {len(da)} messages and never "
                    f"delivers {self.missing} ({len(self.messages)} sent)")
        return (f"{self.a} delivers {da[k] if k < len(da) else '-'} as #{k}, "
                f"{self.b} delivers {db[k] if k < len(db) else '-'}; "
                f"{len(self.messages)} messages in the DAG")


class RuleFailure(AssertionError):
    def __init__(self, found: Disagreement) -> None:
        super().__init__(found.describe())
        self.found = found


def rule_machine(rule_fn: Rule, params: Params, n: int, name: str | None = None,
                 max_messages: int = 14, max_crashes: int | None = None,
                 on_failure: Callable[[Disagreement], None] | None = None
                 ) -> type[RuleBasedStateMachine]:
    """A RuleBasedStateMachine class fuzzing ``rule_fn`` with n processors (see the module
    docstring). ``max_crashes`` defaults to n - delta - 1 (ToTo's external stability
    needs more than delta votes, and with a delta of None to 0). ``on_failure`` is told
    every failure before it is raised (the last one told is the shrunk one)."""
    procs = [f"p{i}" for i in range(n)]
    label = name or getattr(rule_fn, "__name__", "rule")
    delta = params.delta
    if max_crashes is None:
        max_crashes = max(0, n - (delta or n) - 1) if delta is not None else 0

    class DagRuleMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.views = {p: DagView(procs) for p in procs}
            self.delivered: dict[str, list[str]] = {p: [] for p in procs}
            self.in_flight: dict[str, list[Message]] = {p: [] for p in procs}
            self.sent: list[Message] = []
            self.count = dict.fromkeys(procs, 0)
            self.crashed: list[str] = []
            self.noted: dict[str, set[str]] = {p: set() for p in procs}
            self.batches: dict[str, list[Batch]] = {p: [] for p in procs}
            self.records: list[dict] = []

        # ------------------------------------------------------------------ helpers

        def alive(self) -> list[str]:
            return [p for p in procs if p not in self.crashed]

        def run_rule(self, p: str) -> None:
            g = self.views[p]
            view = (frozenset(g.visible), tuple(sorted(g.defunc)))
            for a in drain(g, rule_fn, params):
                d = a.delivery
                self.batches[p].append(Batch(len(self.delivered[p]), view[0], view[1],
                                             len(g.marked), d))
                self.delivered[p].extend(d.messages)
                for m in d.messages:
                    self.log(p, "deliver", msg=m, x_clause=d.clause)
                view = (frozenset(g.visible), tuple(sorted(g.defunc)))

        def log(self, p: str, kind: str, **kw: object) -> None:
            self.records.append({"trace": f"fuzz-{label}", "process": p, "kind": kind,
                                 "seq": len(self.records), **kw})

        def do_send(self, p: str) -> None:
            g = self.views[p]
            latest = [c[-1] for c in (g.messages_of(q) for q in procs) if c]
            heads = tuple(m for m in latest
                          if not any(o != m and g.follows(o, m) for o in latest))
            self.count[p] += 1
            m = Message(f"{p}.{self.count[p]}", p, heads)
            self.sent.append(m)
            self.log(p, "send", msg=m.id, deps=list(m.deps))
            g.insert(m)
            for q in procs:
                if q != p:
                    self.in_flight[q].append(m)
            self.run_rule(p)

        def fail(self, a: str, b: str, kind: str, missing: str | None = None) -> None:
            found = Disagreement(
                label, n, delta, list(self.sent), list(self.crashed), a, b,
                views={p: sorted(self.views[p].visible) for p in (a, b)},
                defunc={p: sorted(self.views[p].defunc) for p in (a, b)},
                delivered={p: list(self.delivered[p]) for p in (a, b)}, kind=kind,
                missing=missing, batches={p: list(self.batches[p]) for p in (a, b)},
                records=list(self.records))
            if on_failure is not None:
                on_failure(found)
            raise RuleFailure(found)

        # -------------------------------------------------------------------- rules

        @precondition(lambda self: len(self.sent) < max_messages)
        @rule(data=st.data())
        def send(self, data: st.DataObject) -> None:
            self.do_send(data.draw(st.sampled_from(self.alive()), label="sender"))

        @precondition(lambda self: any(self.in_flight[p] for p in self.alive()))
        @rule(data=st.data())
        def reveal(self, data: st.DataObject) -> None:
            p = data.draw(st.sampled_from([p for p in self.alive() if self.in_flight[p]]),
                          label="to")
            i = data.draw(st.integers(0, len(self.in_flight[p]) - 1), label="which")
            self.receive(p, self.in_flight[p].pop(i))
            self.run_rule(p)

        def receive(self, p: str, m: Message) -> None:
            for r in self.views[p].insert(m):
                self.log(p, "recv", msg=r.id)

        @precondition(lambda self: len(self.sent) >= max_messages
                      and not any(self.in_flight[p] for p in self.alive()))
        @rule()
        def settle(self) -> None:
            """Nothing left to do but wait (so the machine always has a rule to run);
            the teardown drains the run."""

        @precondition(lambda self: len(self.crashed) < max_crashes)
        @rule(data=st.data())
        def crash(self, data: st.DataObject) -> None:
            q = data.draw(st.sampled_from(self.alive()), label="crash")
            self.crashed.append(q)
            self.log(q, "crash")

        @precondition(lambda self: any(self._notifiable()))
        @rule(data=st.data())
        def notify(self, data: st.DataObject) -> None:
            p, q = data.draw(st.sampled_from(self._notifiable()), label="Crash(q) at p")
            self.noted[p].add(q)
            self.views[p].crash(q)
            self.run_rule(p)

        def _notifiable(self) -> list[tuple[str, str]]:
            out = []
            for p in self.alive():
                waiting = {m.sender for m in self.in_flight[p]}
                waiting |= {m.rsplit(".", 1)[0] for m in self.views[p].buffered}
                out.extend((p, q) for q in self.crashed
                           if q not in self.noted[p] and q not in waiting)
            return out

        # --------------------------------------------------------------- invariants

        @invariant()
        def agreement(self) -> None:
            for i, a in enumerate(procs):
                da = self.delivered[a]
                for b in procs[i + 1:]:
                    db = self.delivered[b]
                    k = min(len(da), len(db))
                    if da[:k] != db[:k]:
                        self.fail(a, b, "agreement")

        def teardown(self) -> None:
            # only check liveness on runs that got somewhere; an exception raised
            # elsewhere must not be hidden by a second one here
            if not self.sent:
                return
            for p in self.alive():
                while self.in_flight[p]:
                    self.receive(p, self.in_flight[p].pop(0))
                for q in self.crashed:
                    if q not in self.noted[p]:
                        self.noted[p].add(q)
                        self.views[p].crash(q)
                self.run_rule(p)
            for _ in range(2):  # ACK rounds: every live processor hears from every other
                for p in self.alive():
                    self.do_send(p)
                for p in self.alive():
                    while self.in_flight[p]:
                        self.receive(p, self.in_flight[p].pop(0))
                    self.run_rule(p)
            self.agreement()
            live = self.alive()
            for p in live:
                missing = [m.id for m in self.sent if m.id not in set(self.delivered[p])
                           and m.sender in live]
                if missing:
                    self.fail(p, p, "liveness", missing[0])

    DagRuleMachine.__name__ = DagRuleMachine.__qualname__ = \
        f"DagRuleMachine_{label.replace('-', '_')}_n{n}"
    return DagRuleMachine


def activation_counterexample(found: Disagreement, rule_fn: Rule) -> Counterexample | None:
    """The agreement failure as one activation at two views (``fuzz/counterexample.py``),
    so it can be drawn and explained like a ``tomkit prove`` counterexample.

    The two processors agree up to some delivery and part there. Their first pair of
    deliveries that start at the same position and differ was made on the same
    delivered prefix P, one activation each. Removing P from the DAG (and from the
    ACKs: no path between undelivered messages runs through a delivered one, since a
    message that follows an undelivered one is not delivered) leaves the DAG G of that
    activation, and the two views minus P are the views at which the rule decided
    differently. None for a liveness failure, or when the parting delivery came after
    early deliveries in the same activation (GL-ToTo's marks), which one view of G
    cannot show.
    """
    if found.kind != "agreement":
        return None
    ba, bb = found.batches[found.a], found.batches[found.b]
    starts_b = {x.start: x for x in bb}
    pair = next(((x, starts_b[x.start]) for x in ba
                 if x.start in starts_b
                 and (x.delivery.messages, x.delivery.ends_activation)
                 != (starts_b[x.start].delivery.messages,
                     starts_b[x.start].delivery.ends_activation)), None)
    if pair is None or pair[0].marked or pair[1].marked:
        return None
    prefix = set(found.delivered[found.a][:pair[0].start])
    msgs = tuple((m.id, m.sender, tuple(d for d in m.deps if d not in prefix))
                 for m in found.messages if m.id not in prefix)
    views = tuple(CxView(tuple(i for i, _, _ in msgs if i in x.visible), x.defunc)
                  for x in pair)
    cx = Counterexample(
        rule=found.rule, n=found.n, delta=found.delta, property="agreement",
        processors=tuple(f"p{i}" for i in range(found.n)), messages=msgs,
        views=views,  # type: ignore[arg-type]
        delivered=(pair[0].delivery.messages, pair[1].delivery.messages),
        ends=(pair[0].delivery.ends_activation, pair[1].delivery.ends_activation),
        clauses=(pair[0].delivery.clause, pair[1].delivery.clause), method="fuzz")
    validate(cx, rule_fn)
    # Hypothesis shrank the run; the activation may still hold messages neither view
    # needs (sent after the parting): drop them too
    return shrink(cx, rule_fn)
