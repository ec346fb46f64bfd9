"""Hypothesis stateful fuzzing of the full process models on a hostile network.

Where ``fuzz/dag_machine.py`` feeds DAG views to a rule, this machine runs n
:class:`~tomkit.model.process.Process` state machines (causal layer + rule, exactly what
the simulator runs) and plays the network against them:

* ``send``: a live process multicasts (its message ACKs the heads of its view);
* ``transmit``: one message in flight on some link arrives, in *any* order: the
  adversary reorders freely, and the causal layer buffers what is not ready;
* ``lose`` / ``retransmit``: a message in flight is lost, and later sent again (reliable
  links are built from lossy ones by retransmission, so every loss is eventually
  repaired; the teardown repairs what is left);
* ``crash``: a process stops (while more than delta stay live, so the rule can decide);
* ``notify``: the membership's Crash(q) at a live process, once no message of q is still
  on its way there (000 section 5.1; the Process defers it while q's messages wait in
  its causal buffer).

Every action is logged as v1 trace records, and the foundation's safety checkers
(``checker/properties``: integrity, weak and strong total order, global order, causal
and FIFO order) are invariants on the trace so far. The teardown drains the run (every
loss repaired, everything transmitted, Crash(q) everywhere, two rounds of messages from
every live process) and checks liveness with the same checker.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from tomkit.checker.properties import Options, properties
from tomkit.checker.result import Verdict
from tomkit.checker.trace import Trace
from tomkit.model.dag import Message
from tomkit.model.process import Process, Step
from tomkit.model.rules import Params, Rule

__all__ = ["ProcessFailure", "RuleFailure", "SAFETY", "process_machine"]

#: the checker's safety properties used as invariants
SAFETY = ("integrity", "total-order-weak", "total-order-strong", "global-order",
          "causal-order", "fifo-order")


@dataclass
class ProcessFailure:
    """A property the checker found violated on the run's trace."""

    rule: str
    n: int
    delta: int | None
    kind: str  # the property's name
    explanation: str
    records: list[dict] = field(default_factory=list)

    def describe(self) -> str:
        return f"{self.kind}: {self.explanation} ({len(self.records)} events)"


class RuleFailure(AssertionError):
    def __init__(self, found: ProcessFailure) -> None:
        super().__init__(found.describe())
        self.found = found


def process_machine(rule_fn: Rule, params: Params, n: int, name: str | None = None,
                    max_messages: int = 12, max_crashes: int | None = None
                    ) -> type[RuleBasedStateMachine]:
    """A RuleBasedStateMachine class over n processes running ``rule_fn`` (see the module
    docstring). ``max_crashes`` defaults to n - delta - 1 (0 without a delta)."""
    names = [f"p{i}" for i in range(n)]
    label = name or getattr(rule_fn, "__name__", "rule")
    delta = params.delta
    if max_crashes is None:
        max_crashes = max(0, n - delta - 1) if delta is not None else 0
    props = properties()

    class ProcessMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.procs = {p: Process(p, names, rule_fn, params) for p in names}
            # (sender, recipient) -> messages in flight, oldest first
            self.links: dict[tuple[str, str], list[Message]] = {
                (a, b): [] for a in names for b in names if a != b}
            self.lost: list[tuple[tuple[str, str], Message]] = []
            self.sent = 0
            self.crashed: list[str] = []
            self.noted: dict[str, set[str]] = {p: set() for p in names}
            self.records: list[dict] = []
            self.checked_at = self.delivered_at = 0

        def alive(self) -> list[str]:
            return [p for p in names if p not in self.crashed]

        def log(self, p: str, kind: str, **kw: object) -> None:
            self.records.append({"trace": f"fuzz-{label}", "process": p, "kind": kind,
                                 "seq": len(self.records), **kw})

        def logged(self, p: str, st_: Step) -> None:
            for m in st_.released:
                if self.procs[p].dag.message(m).sender != p:
                    self.log(p, "recv", msg=m)
            for d in st_.delivered:
                self.log(p, "deliver", msg=d.msg)

        def live_links(self) -> list[tuple[str, str]]:
            return [k for k, q in self.links.items() if q and k[1] not in self.crashed]

        # ------------------------------------------------------------------- rules

        @precondition(lambda self: self.sent < max_messages)
        @rule(data=st.data())
        def send(self, data: st.DataObject) -> None:
            self.do_send(data.draw(st.sampled_from(self.alive()), label="sender"))

        def do_send(self, p: str) -> None:
            msg, st_ = self.procs[p].send()
            self.sent += 1
            self.log(p, "send", msg=msg.id, deps=list(msg.deps))
            self.logged(p, st_)
            for q in names:
                if q != p:
                    self.links[(p, q)].append(msg)

        @precondition(lambda self: bool(self.live_links()))
        @rule(data=st.data())
        def transmit(self, data: st.DataObject) -> None:
            link = data.draw(st.sampled_from(self.live_links()), label="link")
            i = data.draw(st.integers(0, len(self.links[link]) - 1), label="which")
            self.arrive(link[1], self.links[link].pop(i))

        def arrive(self, p: str, m: Message) -> None:
            self.logged(p, self.procs[p].receive(m))

        @precondition(lambda self: bool(self.live_links()) and len(self.lost) < 4)
        @rule(data=st.data())
        def lose(self, data: st.DataObject) -> None:
            link = data.draw(st.sampled_from(self.live_links()), label="link")
            i = data.draw(st.integers(0, len(self.links[link]) - 1), label="which")
            self.lost.append((link, self.links[link].pop(i)))

        @precondition(lambda self: bool(self.lost))
        @rule(data=st.data())
        def retransmit(self, data: st.DataObject) -> None:
            link, m = self.lost.pop(data.draw(st.integers(0, len(self.lost) - 1)))
            self.links[link].append(m)

        @precondition(lambda self: len(self.crashed) < max_crashes)
        @rule(data=st.data())
        def crash(self, data: st.DataObject) -> None:
            q = data.draw(st.sampled_from(self.alive()), label="crash")
            self.crashed.append(q)
            self.log(q, "crash")

        def notifiable(self) -> list[tuple[str, str]]:
            return [(p, q) for p in self.alive() for q in self.crashed
                    if q not in self.noted[p] and not self.links[(q, p)]
                    and not any(k == (q, p) for k, _ in self.lost)]

        @precondition(lambda self: bool(self.notifiable()))
        @rule(data=st.data())
        def notify(self, data: st.DataObject) -> None:
            p, q = data.draw(st.sampled_from(self.notifiable()), label="Crash(q) at p")
            self.noted[p].add(q)
            self.logged(p, self.procs[p].crash(q))

        @precondition(lambda self: self.sent >= max_messages and not self.live_links()
                      and not self.lost and not self.notifiable())
        @rule()
        def settle(self) -> None:
            """Nothing left to do (the machine always needs a rule to run)."""

        # -------------------------------------------------------------- invariants

        def check(self, prop: str) -> None:
            if not self.records:
                return
            res = props[prop].check(Trace.from_records(self.records), Options())
            if res.verdict == Verdict.VIOLATED:
                raise RuleFailure(ProcessFailure(label, n, delta, prop, res.explanation,
                                                 list(self.records)))

        @invariant()
        def safety(self) -> None:
            # only deliveries can break a safety property: skip steps that made none
            if len(self.records) == self.checked_at:
                return
            self.checked_at = len(self.records)
            if not any(r["kind"] == "deliver" for r in self.records[self.delivered_at:]):
                return
            self.delivered_at = len(self.records)
            for prop in SAFETY:
                self.check(prop)

        def teardown(self) -> None:
            if not self.sent:
                return
            for link, m in self.lost:
                self.links[link].append(m)
            self.lost.clear()
            for rnd in range(3):  # drain, then two rounds of messages from every process
                for (_, b), q in self.links.items():
                    while q and b not in self.crashed:
                        self.arrive(b, q.pop(0))
                for p in self.alive():
                    for q in self.crashed:
                        if q not in self.noted[p]:
                            self.noted[p].add(q)
                            self.logged(p, self.procs[p].crash(q))
                if rnd < 2:
                    for p in self.alive():
                        self.do_send(p)
            self.safety()
            self.check("liveness")

    ProcessMachine.__name__ = ProcessMachine.__qualname__ = \
        f"ProcessMachine_{label.replace('-', '_')}_n{n}"
    return ProcessMachine
