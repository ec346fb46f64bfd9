"""From a TLC counterexample to a v1 trace that ``tomkit check`` reads.

The events come from three values known at each state of the behaviour
(:mod:`~tomkit.fuzz.tlc.tracemap` says which expressions of the spec give
them; tomkit's own specs expose them as the variables ``delivered`` and
``broadcast``):

* ``deliveries``: each process's delivery sequence, a function from the
  processes to sequences (TLC prints it as a tuple when the processes are
  ``1..n``). Each message appended to p's sequence is a ``deliver`` at p;
  a sequence that shrinks or changes in place is no delivery log and raises
  :class:`TraceConversionError`.
* ``sends`` (optional): the messages broadcast so far, either a set of
  pairs ``<<sender, k>>`` (tomkit's convention: 004's mi, mi_id) or a
  function from each process to the set or sequence of messages it has
  broadcast. Each new message is a ``send`` at its sender.
* ``views`` (optional): a function from each process to its current view, a
  record ``[id |-> ..., members |-> {...}]``. A process's first view and each
  change is a ``view`` event.

Within one step the events are written sends first, then deliveries, then
view changes (a step that installs a view and then sends in it should be two
steps of the spec). Processes are named ``p<k>`` for an integer k and by
their name for a model value or string; messages ``m<p>.<i>`` for a pair of
integers, ``<a>.<b>`` for another pair of names and numbers, else by their
TLA+ text. The record's ``time`` is the number of the TLC state (1 for the
initial state) and ``x_tlc_action`` the action that led to it.

:func:`check_counterexample` runs the trace checker (the engine's
``check_paths``) on the written file and reports whether it finds the same
violation: :data:`CHECKER_PROPERTY` maps the TLA+ property names of tomkit's
specs to the checker's; a trace map may add its own.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tomkit.fuzz.tlc.runner import TlcResult, TlcState
from tomkit.fuzz.tlc.values import Function, ModelValue, Record, format_value

__all__ = ["CHECKER_PROPERTY", "Confirmation", "TraceConversionError", "check_counterexample",
           "counterexample_records", "mapped_records", "message_name", "process_name",
           "write_counterexample", "write_records_file"]

#: the TotalOrderBroadcast property -> the trace checker's property that states it
CHECKER_PROPERTY = {
    "Integrity": "integrity",
    "NoDuplication": "integrity",
    "NoCreation": "integrity",
    "WeakTotalOrder": "total-order-weak",
    "GapFreeTotalOrder": "total-order-strong",
    # the prefix form fails on diverging prefixes that no finite trace shows as a
    # violation yet; the checker's counterpart is still the strong order
    "StrongTotalOrder": "total-order-strong",
    "Validity": "liveness",
}


class TraceConversionError(ValueError):
    """The behaviour does not give the values a trace is built from."""


def _scalar_name(x: Any) -> str | None:
    if isinstance(x, bool):
        return None
    if isinstance(x, int):
        return str(x)
    if isinstance(x, (str, ModelValue)):
        return str(x)
    return None


def process_name(p: Any) -> str:
    if isinstance(p, bool):
        raise TraceConversionError(f"a process cannot be the boolean {p}")
    if isinstance(p, int):
        return f"p{p}"
    if isinstance(p, (str, ModelValue)):
        return str(p)
    return format_value(p)


def message_name(m: Any) -> str:
    if isinstance(m, tuple) and len(m) == 2 and all(type(x) is int for x in m):
        return f"m{m[0]}.{m[1]}"
    if isinstance(m, tuple) and len(m) == 2 and None not in map(_scalar_name, m):
        return f"{_scalar_name(m[0])}.{_scalar_name(m[1])}"
    if type(m) is int:
        return f"m{m}"
    if isinstance(m, (str, ModelValue)):
        return str(m)
    return format_value(m)


def message_sender(m: Any, where: str) -> str:
    if isinstance(m, tuple) and len(m) == 2:
        return process_name(m[0])
    raise TraceConversionError(
        f"{where}: message {format_value(m)} is not a pair <<sender, k>>, so its sender is "
        "unknown (give sends as a function from each process to the messages it sent)")


def _per_process(v: Any, what: str, where: str) -> dict[str, Any]:
    """A function from processes, printed as a tuple (on 1..n), a function or a record."""
    if isinstance(v, tuple):
        return {process_name(i + 1): x for i, x in enumerate(v)}
    if isinstance(v, (Function, Record)):
        return {process_name(k): x for k, x in v.items()}
    raise TraceConversionError(f"{where}: {what} is {format_value(v)}, not a function of "
                               "the processes")


def _deliveries(v: Any, where: str) -> dict[str, tuple]:
    out = _per_process(v, "deliveries", where)
    for p, s in out.items():
        if not isinstance(s, tuple):
            raise TraceConversionError(f"{where}: the delivery sequence of {p} is "
                                       f"{format_value(s)}, not a sequence")
    return out


def _sends(v: Any, where: str) -> dict[str, tuple]:
    """Each process's messages broadcast so far, in a fixed order (sets sorted)."""
    def ordered(x: Any, p: str) -> tuple:
        if isinstance(x, frozenset):
            return tuple(sorted(x, key=format_value))
        if isinstance(x, tuple):
            return x
        raise TraceConversionError(f"{where}: the messages sent by {p} are {format_value(x)}, "
                                   "not a set or sequence")
    if isinstance(v, frozenset):
        out: dict[str, list] = {}
        for m in sorted(v, key=format_value):
            out.setdefault(message_sender(m, where), []).append(m)
        return {p: tuple(ms) for p, ms in out.items()}
    return {p: ordered(x, p) for p, x in _per_process(v, "sends", where).items()}


def _views(v: Any, where: str) -> dict[str, tuple[str, list[str]]]:
    out = {}
    for p, view in _per_process(v, "views", where).items():
        if not (isinstance(view, Record) and "id" in view and "members" in view):
            raise TraceConversionError(f"{where}: the view of {p} is {format_value(view)}, not "
                                       "a record [id |-> ..., members |-> {...}]")
        members = view["members"]
        if not isinstance(members, (frozenset, tuple)):
            raise TraceConversionError(f"{where}: the members of {p}'s view are "
                                       f"{format_value(members)}, not a set")
        vid = _scalar_name(view["id"]) or format_value(view["id"])
        out[p] = (vid, sorted(process_name(q) for q in members))
    return out


def mapped_records(behaviour: Sequence[TlcState], mapped: Sequence[Mapping[str, Any]],
                   trace_id: str) -> list[dict]:
    """The v1 records of a behaviour, from the trace-map values at each of its states
    (``mapped[i]`` for ``behaviour[i]``: ``deliveries`` and optionally ``sends``,
    ``views``)."""
    records: list[dict] = []
    seq: dict[str, int] = {}
    prev_s: dict[str, tuple] = {}
    prev_d: dict[str, tuple] = {}
    prev_v: dict[str, tuple[str, list[str]]] = {}

    def emit(proc: str, kind: str, st: TlcState, **fields: Any) -> None:
        n = seq.get(proc, 0)
        seq[proc] = n + 1
        records.append({"trace": trace_id, "process": proc, "kind": kind, **fields,
                        "time": float(st.index), "seq": n, "x_tlc_action": st.action})

    for st, values in zip(behaviour, mapped):
        where = f"state {st.index}"
        if "deliveries" not in values:
            raise TraceConversionError(f"{where}: no deliveries")
        d = _deliveries(values["deliveries"], where)
        if values.get("sends") is not None:
            s = _sends(values["sends"], where)
            for proc in sorted(set(s) | set(prev_s)):
                old, new = prev_s.get(proc, ()), s.get(proc, ())
                gone = set(old) - set(new)
                if gone:
                    raise TraceConversionError(
                        f"{where}: {proc}'s sends lost {format_value(next(iter(gone)))}; sends "
                        "must be the messages broadcast so far, which only grow")
                for m in (new[len(old):] if new[:len(old)] == old else
                          [m for m in new if m not in set(old)]):
                    emit(proc, "send", st, msg=message_name(m))
            prev_s = s
        for proc in sorted(set(d) | set(prev_d)):
            old, new = prev_d.get(proc, ()), d.get(proc, ())
            if new[:len(old)] != old:
                raise TraceConversionError(
                    f"{where}: the delivery sequence of {proc} went from {format_value(old)} to "
                    f"{format_value(new)}; a delivery sequence only grows")
            for m in new[len(old):]:
                emit(proc, "deliver", st, msg=message_name(m))
        prev_d = d
        if values.get("views") is not None:
            v = _views(values["views"], where)
            for proc in sorted(v):
                if prev_v.get(proc) != v[proc]:
                    emit(proc, "view", st, view=v[proc][0], members=v[proc][1])
            prev_v = v
    return records


def counterexample_records(behaviour: Iterable[TlcState], trace_id: str) -> list[dict]:
    """The v1 records of a behaviour of one of tomkit's specs: sends from the variable
    ``broadcast``, deliveries from ``delivered``, in state order."""
    states = list(behaviour)
    mapped = []
    for st in states:
        if "delivered" not in st.values:
            raise TraceConversionError(f"state {st.index} has no variable 'delivered' (the spec "
                                       "must expose each process's delivery sequence)")
        mapped.append({"deliveries": st.values["delivered"],
                       "sends": st.values.get("broadcast")})
    return mapped_records(states, mapped, trace_id)


def trace_id(result: TlcResult) -> str:
    cfg = os.path.splitext(os.path.basename(result.config or result.spec or "tlc"))[0]
    return f"tlc-{cfg}"


def write_records_file(records: list[dict], path: str | os.PathLike) -> int:
    """Write v1 records (one trace) to ``path``; returns their number."""
    from tomkit.traces.writer import write_records

    if not records:
        raise TraceConversionError("the counterexample has no send, delivery or view")
    return write_records(path, records, grouped=True)


def write_counterexample(result: TlcResult, path: str | os.PathLike,
                         trace_id_: str | None = None) -> int:
    """Write the counterexample of ``result`` (a run of one of tomkit's specs) as a v1
    trace; returns the number of records."""
    if not result.behaviour:
        raise TraceConversionError("the TLC result has no counterexample behaviour")
    return write_records_file(
        counterexample_records(result.behaviour, trace_id_ or trace_id(result)), path)


@dataclass
class Confirmation:
    """What ``tomkit check`` says about a converted counterexample."""

    property: str | None  # the checker property expected to fail (None: no counterpart)
    violated: list[str]  # the checker properties found violated
    explanation: str  # the checker's explanation of the expected property's witness

    @property
    def confirmed(self) -> bool:
        return self.property is not None and self.property in self.violated


def check_counterexample(path: str | os.PathLike, tla_property: str | None,
                         properties: Mapping[str, str] | None = None) -> Confirmation:
    """Run the trace checker's properties (safety ones, plus liveness when the TLA+
    property's counterpart is liveness) on a written counterexample and say whether the
    TLA+ property's counterpart fails. ``properties`` (TLA+ name -> checker name) is
    consulted before :data:`CHECKER_PROPERTY`."""
    from tomkit.checker.engine import check_paths, select
    from tomkit.checker.properties import Options
    from tomkit.checker.result import Verdict

    table = {**CHECKER_PROPERTY, **(properties or {})}
    want = table.get(tla_property or "")
    props = select(None, Options(), liveness=want == "liveness")
    report = check_paths([path], props, Options(), workers=1)
    violated = [name for name, c in report.counts.items() if c[Verdict.VIOLATED]]
    text = ""
    for outcome in report.outcomes:
        res = outcome.results.get(want or "")
        if res is not None and res.verdict == Verdict.VIOLATED:
            text = res.explanation
    return Confirmation(want, violated, text)
