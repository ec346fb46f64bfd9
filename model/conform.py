"""Conformance replay: an implementation's trace against a reference protocol model.

The trace records what each process of the implementation saw and did. The protocol
(``model/protocols.py``) turns each process's records into the inputs of its model
(``Protocol.replay``: for the ToTo family the messages sent and received, with their
ACKs; for ABCAST and TOMP the sends and the receptions of data messages,
acknowledgements and final timestamps); the replay feeds them, in that process's order,
into a fresh model process (``model/process.py``) and records what the model delivers
after each. It then compares, per process:

- order: the k-th delivery of the implementation and of the model differ (another
  message, or another order);
- early: the implementation delivers m at a point of its log where the model, having
  had the same inputs, would not yet deliver m (the model cannot justify it yet);
- missing / extra: at the end of the log the sets differ (the model would have delivered
  a message the implementation never did, or the other way round).

A delivery later than the model would allow is legal (protocols say when delivery *may*
happen) and only counted. The witness of a difference is the first such point of the
process's log.

Decisions: the group is the set of processes in the trace (and in its views), in natural
order (``p2`` before ``p10``, as the simulator numbers them); a process's place in it is
its index (its rank in the ToTo family, its host id in ABCAST and TOMP). Inputs the model
refuses (a message sent twice, an acknowledgement nobody waits for) make the trace
unreplayable: :class:`~tomkit.model.process.ReplayError`, naming the process and record.

Membership events: a trace's ``crash``, ``join`` and ``leave`` records are events of
``model/events.py`` (a ``join`` after the process's own crash is its recover); a protocol
replays only the events it honours (``Protocol.events``) and refuses a trace with any
other, naming the protocol, the event and the record. A process the protocol's replay
starts with ``MemberEvent("outside")`` (its first incarnation joins) is taken out of the
group before any process runs, as the simulator does before a run. A protocol whose
restarted processes log under names of their own (``Protocol.incarnations``: the
hybrid's ``p0~2``) has one model process per member: each incarnation's records go to
it after the earlier incarnations', and each is reported apart.

Timed protocols (003's qos, which declares a timed network): each input carries the
local time its record logged (``Replayed.now``), inputs are fed in time order, and the
replayer runs the process's clock between them: the timers the process asks for fire
before an input of a later time and after one of the same time (the simulator runs
timers after the arrivals of their instant), within 1e-9 s, since a trace's times are
floats and a timer's own time and a record written at it may differ in the last bit.
A packet a process sends to itself comes back at once, as in the simulator. The
comparison is then by time: a delivery is early when the implementation logs it before
the model's (by more than 1e-9 s), later than the model when after; order, missing and
extra as above. A ``MemberEvent("crash")`` voids the process's timers.

Views: the protocol's replay says what a logged ``view`` is. The fixed-group ToTo family
reads a view that leaves q out as Crash(q) (and cannot replay a join: q stays Defunc);
``toto-dynamic`` (``model/toto/membership.py``) reads it as the configuration change of 000
section 5.1, which the model refuses while M_p is not empty, and a ``crash`` record as the
end of that process's incarnation.
"""

from __future__ import annotations

import heapq
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..traces.schema import report_stamp
from .process import MemberEvent, Output, Protocol, ReplayError, feed
from .protocols import protocol as get_protocol

OUTSIDE = MemberEvent("outside")

__all__ = ["ConformReport", "Difference", "ProcessReport", "ReplayError", "conform_traces",
           "natural_order", "replay"]


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
    later_than_model: int = 0
    differences: list[Difference] = field(default_factory=list)


@dataclass
class ConformReport:
    """What ``tomkit conform`` reports, and the API returns: per trace, per process, the
    comparison with the model; ``to_dict()`` is ``--format json``, as for the reports of
    ``check`` and ``prove``."""

    protocol: str
    options: dict[str, Any]
    traces: dict[str, dict[str, ProcessReport]] = field(default_factory=dict)

    @property
    def conforms(self) -> bool:
        """Every process of every trace delivers as the model would (or later)."""
        return not any(r.differences for reps in self.traces.values() for r in reps.values())

    def exit_code(self) -> int:
        """The command's: 0 conforms, 1 some delivery differs."""
        return 0 if self.conforms else 1

    @property
    def verdict(self) -> str:
        """conforms or differs: the word of ``to_dict()`` and ``--format json``."""
        return "conforms" if self.conforms else "differs"

    def processes(self, trace: str | None = None) -> dict[str, ProcessReport]:
        """The reports of one trace's processes (``trace`` may be left out when there is
        only one)."""
        if trace is None:
            if len(self.traces) != 1:
                raise ValueError(f"the report has {len(self.traces)} traces "
                                 f"({', '.join(self.traces)}): name one")
            trace = next(iter(self.traces))
        return self.traces[trace]

    def to_dict(self) -> dict[str, Any]:
        """``tomkit conform --format json``: ``verdict`` is the word every report uses;
        ``conforms`` (the same as a bool) stays for one release (docs/api.md)."""
        return {**report_stamp(), "verdict": self.verdict,
                "protocol": self.protocol, "options": dict(self.options),
                "conforms": self.conforms,
                "traces": {tid: {p: {"implementation": r.implementation, "model": r.model,
                                     "later_than_model": r.later_than_model,
                                     "differences": [
                                         {"kind": d.kind, "msg": d.msg, "index": d.index,
                                          "event": d.event, "explanation": d.explanation}
                                         for d in r.differences]}
                                 for p, r in reps.items()}
                           for tid, reps in self.traces.items()}}


def conform_traces(records: Iterable[Mapping], protocol: str,
                   options: Mapping[str, Any] | None = None) -> ConformReport:
    """Replay each trace among ``records`` (split by their ``trace`` field, in order of
    first appearance) through the model; ReplayError names the trace it stops on."""
    traces: dict[str, list[Mapping]] = {}
    for r in records:
        traces.setdefault(r["trace"], []).append(r)
    report = ConformReport(protocol, dict(options or {}))
    for tid, recs in traces.items():
        try:
            report.traces[tid] = replay(recs, protocol, options)
        except ReplayError as e:
            raise ReplayError(f"trace {tid}: {e}") from None
    return report


def natural_order(names: Iterable[str]) -> list[str]:
    """``names`` sorted with their digit runs compared as numbers (p2 before p10)."""
    def key(s: str) -> list[tuple[int, Any]]:
        return [(0, int(t)) if t.isdigit() else (1, t) for t in re.split(r"(\d+)", s) if t]

    return sorted(set(names), key=key)


def replay(records: Iterable[Mapping], protocol: str,
           options: Mapping[str, Any] | None = None) -> dict[str, ProcessReport]:
    """Replay one trace's records through the model of ``protocol`` (with its
    ``options``, e.g. ``{"delta": 4}``); a report per process (by name)."""
    p = get_protocol(protocol)
    if p.replay is None:
        raise ReplayError(f"{protocol} has no replay of recorded traces")
    opts = p.resolve(options)
    records = list(records)
    events: dict[str, list[Mapping]] = {}
    members: set[str] = set()
    for r in records:
        events.setdefault(r["process"], []).append(r)
        if r["kind"] == "view":
            members.update(r["members"])
    of = p.incarnations or (lambda name: (name, 1))
    names = natural_order(of(n)[0] for n in set(events) | members)
    at = {n: i for i, n in enumerate(names)}
    for name, evs in events.items():
        _refuse_events(p, name, evs)
    inputs = p.replay(records, names, opts)
    try:
        procs = p.make(names, opts, 1.0)
    except ValueError as e:
        raise ReplayError(str(e)) from None
    # a process outside the group from time 0 is out before any process starts, as in
    # the simulator (the others' first view leaves it out)
    for name in events:
        todo = inputs.get(name, [])
        while todo and todo[0].input == OUTSIDE:
            feed(procs[at[of(name)[0]]], todo.pop(0).input, 0.0)
    one = _replay_process if p.timing is None else _replay_timed
    # an incarnation continues its process's model, after the earlier ones (by number)
    order = sorted(events, key=lambda n: (at[of(n)[0]], of(n)[1]))
    reports = {name: one(name, procs[at[of(name)[0]]], events[name], inputs.get(name, []))
               for name in order}
    return {name: reports[name] for name in natural_order(events)}


def _refuse_events(p: Protocol, name: str, evs: list[Mapping]) -> None:
    """ReplayError for the first membership event of ``name``'s records that ``p`` does
    not honour."""
    crashed = False
    for i, r in enumerate(evs):
        kind = r["kind"]
        if kind == "crash":
            event, crashed = "crash", True
        elif kind == "join":
            event, crashed = ("recover" if crashed else "join"), False
        elif kind == "leave":
            event = "leave"
        else:
            continue
        where = f" at record {i} of {name}" + (", a join after its crash"
                                                if event == "recover" else "")
        try:
            p.refuse([event], where)
        except ValueError as e:
            raise ReplayError(str(e)) from None


def _replay_process(name: str, proc: Any, evs: list[Mapping], inputs: list) -> ProcessReport:
    rep = ProcessReport(name)
    model_at: dict[str, int] = {}  # msg -> log position where the model delivers it
    fresh: list[int] = []  # log positions whose input brought something new
    for pos, inp, is_fresh, _ in inputs:
        if is_fresh:
            fresh.append(pos)
        try:
            out = feed(proc, inp, float(pos))
        except ValueError as e:
            raise ReplayError(f"{name}: record {pos} ({evs[pos]['kind']} "
                              f"{evs[pos].get('msg', '')}): the model refuses it: {e}") from None
        for m, _ in out.delivered:
            rep.model.append(m)
            model_at.setdefault(m, pos)
    def judge(m: str, i: int, r: Mapping, j: int) -> str | bool | None:
        if i < j:
            return (f"{name} delivers {m} at event {i}; the model delivers it only after "
                    f"event {j}")
        # delivered only after a further reception: later than the model needed
        return bisect_right(fresh, j) < bisect_left(fresh, i) or None

    return _compared(rep, evs, model_at, judge, lambda j: f"event {j}")


#: times within this many seconds are one instant (module docstring)
TIME_TOLERANCE = 1e-9


def _replay_timed(name: str, proc: Any, evs: list[Mapping], inputs: list) -> ProcessReport:
    """One process of a timed protocol (module docstring)."""
    rep = ProcessReport(name)
    timers: list[float] = []
    model_at: dict[str, float] = {}
    tol = TIME_TOLERANCE

    def take(out: Output, now: float) -> None:
        for m, _ in out.delivered:
            rep.model.append(m)
            model_at.setdefault(m, now)
        if out.timer is not None:
            heapq.heappush(timers, out.timer)
        for tr in out.sends:
            if proc.index in tr.to:  # its own packet comes back at once
                take(proc.on_receive(tr.packet, now), now)

    def run_until(t: float, inclusive: bool) -> None:
        while timers and (timers[0] < t - tol or inclusive and timers[0] <= t + tol):
            x = heapq.heappop(timers)
            take(proc.on_timer(x), x)

    order = sorted(inputs, key=lambda x: (x.now, x.position))
    for pos, inp, _, now in order:
        run_until(now, False)
        if isinstance(inp, MemberEvent) and inp.kind == "crash":
            timers.clear()
            continue
        try:
            take(feed(proc, inp, now), now)
        except ValueError as e:
            raise ReplayError(f"{name}: record {pos} ({evs[pos]['kind']} "
                              f"{evs[pos].get('msg', '')}): the model refuses it: {e}") from None
    end = max((r["time"] for r in evs if r.get("time") is not None), default=0.0)
    run_until(end, True)

    def judge(m: str, i: int, r: Mapping, t: float) -> str | bool | None:
        if r["time"] < t - tol:
            return (f"{name} delivers {m} at local {r['time']:g}; the model, with the "
                    f"same receptions, delivers it only at {t:g}")
        return r["time"] > t + tol or None

    return _compared(rep, evs, model_at, judge, lambda t: f"local {t:g}")


def _compared(rep: ProcessReport, evs: list[Mapping], model_at: Mapping[str, Any],
              judge: Callable[[str, int, Mapping, Any], str | bool | None],
              when: Callable[[Any], str]) -> ProcessReport:
    """The differences of the implementation's deliveries (``evs``) from the model's
    (``rep.model``, delivered at ``model_at``): the first position where the two
    sequences part, extra, early and missing deliveries. ``judge`` says of a delivery the
    model makes too: early (its sentence), later than the model needed (True) or neither;
    ``when`` words the model's place of a delivery for a missing one."""
    name = rep.process
    impl_at: dict[str, tuple[int, Mapping]] = {}
    for i, r in enumerate(evs):
        if r["kind"] == "deliver":
            rep.implementation.append(r["msg"])
            impl_at.setdefault(r["msg"], (i, r))
    for k, (a, b) in enumerate(zip(rep.implementation, rep.model)):
        if a != b:
            i, r = impl_at[a]
            rep.differences.append(Difference(
                name, "order", a, k, i,
                f"{name} delivers {a} as #{k}, the model delivers {b} there", r))
            break
    for k, m in enumerate(rep.implementation):
        i, r = impl_at[m]
        at = model_at.get(m)
        if at is None:
            rep.differences.append(Difference(
                name, "extra", m, k, i, f"{name} delivers {m}, which the model never "
                "delivers with what this process received", r))
            continue
        verdict = judge(m, i, r, at)
        if isinstance(verdict, str):
            rep.differences.append(Difference(name, "early", m, k, i, verdict, r))
        elif verdict:
            rep.later_than_model += 1
    for k, m in enumerate(rep.model):
        if m not in impl_at:
            rep.differences.append(Difference(
                name, "missing", m, k, len(evs) - 1, f"the model delivers {m} (#{k}) at "
                f"{when(model_at[m])}; {name} never does"))
    rep.differences.sort(key=lambda d: (d.event, d.index))
    return rep
