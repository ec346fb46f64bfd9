"""Conformance replay: an implementation's trace against a reference delivery rule.

The trace records what each process of the implementation saw and did: the
messages it sent (with their ``deps``, the ACKs), the messages that reached
its ordering layer (``recv``), and what it delivered. The replay feeds each
process's own sends and receptions, in that process's order, into a fresh
causal DAG view (model/dag.py) and lets the reference rule (model/rules.py)
deliver whatever it may after each step. It then compares, per process:

- order: the k-th delivery of the implementation and of the rule differ
  (another message, or another order);
- early: the implementation delivers m at a point of its log where the rule,
  having seen the same receptions, would not yet deliver m (the rule cannot
  justify it yet);
- missing / extra: at the end of the log the sets differ (the rule would have
  delivered a message the implementation never did, or the other way round).

A delivery later than the rule would allow is legal (rules say when delivery
*may* happen) and only counted. The witness of a difference is the first such
point of the process's log.

Which DAG is replayed: a message's ACKs are its send's ``x_dag_deps`` when logged,
else its ``deps``. An implementation that multicasts control messages the application
never sends (Transis' ACK-only messages, heartbeats) logs them as ``recv`` records marked
``x_ack_only: true`` with ``x_sender`` and ``x_dag_deps`` (model/sim.py does): they
enter the replayed DAG, vote and are ordered like any message, but neither side delivers
them, so they are left out of the comparison. Without them a replay would see fewer
votes than the implementation did and report its deliveries as early.

Decisions: the configuration is the set of processes in the trace; a process
receives its own message when it sends it (000 section 3); a view event that
leaves out a process q of the configuration is the Crash(q) event at that
process (000 Figure 4) and is applied at that point. Receptions must be
logged (``recv``): without them the rule has nothing to replay.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from tomkit.model.dag import DagView, Message
from tomkit.model.rules import RULES, Params, drain


@dataclass(frozen=True)
class Difference:
    process: str
    kind: str  # "order", "early", "missing", "extra"
    msg: str
    index: int  # position in the process's delivery sequence
    event: int  # position in the process's log where it shows (the implementation's)
    explanation: str
    record: Mapping | None = None  # the implementation's record, with its location if known


@dataclass
class ProcessReport:
    process: str
    implementation: list[str] = field(default_factory=list)
    model: list[str] = field(default_factory=list)
    later_than_rule: int = 0
    differences: list[Difference] = field(default_factory=list)


class ReplayError(ValueError):
    """The trace cannot be replayed (e.g. receptions not logged, a message never sent)."""


def replay(records: Iterable[Mapping], rule: str, delta: int | None = None
           ) -> dict[str, ProcessReport]:
    """Replay one trace's records through ``rule``; a report per process (by name)."""
    if rule not in RULES:
        raise ReplayError(f"unknown rule {rule}; known: {', '.join(RULES)}")
    events: dict[str, list[Mapping]] = {}
    sends: dict[str, Mapping] = {}
    for r in records:
        events.setdefault(r["process"], []).append(r)
        if r["kind"] == "send" or (r["kind"] == "recv" and r.get("x_ack_only")):
            sends.setdefault(r["msg"], r)
    if not any(r["kind"] == "recv" for evs in events.values() for r in evs):
        raise ReplayError("the trace logs no recv events: conformance needs each process's "
                          "receptions to replay")
    procs = sorted(events)
    for evs in events.values():
        for r in evs:
            if r["kind"] == "view":
                procs = sorted(set(procs) | set(r["members"]))
    return {p: _replay_process(p, events[p], sends, procs, RULES[rule], Params(delta))
            for p in sorted(events)}


def _replay_process(p, evs, sends, procs, rule, params) -> ProcessReport:
    rep = ProcessReport(p)
    dag = DagView(procs)
    model_at: dict[str, int] = {}  # msg -> event position where the rule delivers it
    # log positions whose send/recv brought a new message (a sender's recv of its own
    # message, logged after its send, brings nothing)
    fresh: list[int] = []
    fed: set[str] = set()
    crashed: set[str] = set()

    def feed(msg_id: str, at: int) -> None:
        s = sends.get(msg_id)
        if s is None:
            raise ReplayError(f"{p} receives {msg_id}, which no process sent")
        sender = s["process"] if s["kind"] == "send" else s.get("x_sender")
        if not sender:
            raise ReplayError(f"{p}: the ACK-only message {msg_id} has no x_sender")
        deps = s.get("x_dag_deps")
        if deps is None:
            deps = s.get("deps")
        try:
            dag.insert(Message(msg_id, sender, tuple(deps or ())))
        except ValueError as e:
            raise ReplayError(f"{p}: {e}") from None
        if msg_id not in fed:
            fed.add(msg_id)
            fresh.append(at)
        _drain(at)

    def _drain(at: int) -> None:
        for applied in drain(dag, rule, params):
            for m in applied.delivery.messages:
                if sends[m]["kind"] != "send":
                    continue  # an ACK-only message: ordered, never delivered
                rep.model.append(m)
                model_at.setdefault(m, at)

    impl_at: dict[str, tuple[int, Mapping]] = {}
    for i, r in enumerate(evs):
        kind = r["kind"]
        if kind in ("send", "recv"):
            feed(r["msg"], i)
        elif kind == "deliver":
            rep.implementation.append(r["msg"])
            impl_at.setdefault(r["msg"], (i, r))
        elif kind == "view":
            for q in set(procs) - set(r["members"]) - crashed:
                crashed.add(q)
                try:
                    dag.crash(q)
                except ValueError as e:
                    raise ReplayError(f"{p}: {e}") from None
                _drain(i)

    # order: the first position where the two sequences part
    for k, (a, b) in enumerate(zip(rep.implementation, rep.model)):
        if a != b:
            i, r = impl_at[a]
            rep.differences.append(Difference(
                p, "order", a, k, i,
                f"{p} delivers {a} as #{k}, the rule delivers {b} there", r))
            break
    for k, m in enumerate(rep.implementation):
        i, r = impl_at[m]
        j = model_at.get(m)
        if j is None:
            rep.differences.append(Difference(
                p, "extra", m, k, i, f"{p} delivers {m}, which the rule never delivers "
                "with what this process received", r))
        elif i < j:
            rep.differences.append(Difference(
                p, "early", m, k, i, f"{p} delivers {m} at event {i}; the rule delivers it "
                f"only after event {j}", r))
        elif bisect_right(fresh, j) < bisect_left(fresh, i):
            # delivered only after a further reception: later than the rule needed
            rep.later_than_rule += 1
    for k, m in enumerate(rep.model):
        if m not in impl_at:
            rep.differences.append(Difference(
                p, "missing", m, k, len(evs) - 1, f"the rule delivers {m} (#{k}) at event "
                f"{model_at[m]}; {p} never does"))
    rep.differences.sort(key=lambda d: (d.event, d.index))
    return rep
