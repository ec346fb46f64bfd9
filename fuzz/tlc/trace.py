"""From a TLC counterexample to a v1 trace that ``tomkit check`` reads.

tomkit's specs (specs/, see specs/TotalOrderBroadcast) expose two variables
that say everything the trace checker needs:

* ``broadcast``: the set of messages broadcast so far; a message is a pair
  ``<<p, i>>``, the i-th message of process p (paper 004's mi, mi_id);
* ``delivered``: each process's delivery sequence, a function from the
  processes to sequences (TLC prints it as a tuple when the processes are
  ``1..n``).

Walking the behaviour state by state, a message that enters ``broadcast``
becomes a ``send`` record at its sender, and each message appended to
``delivered[p]`` a ``deliver`` record at p. Processes and messages are named
``p<k>`` and ``m<p>.<i>``; the record's ``time`` is the number of the TLC
state (1 for the initial state) and ``x_tlc_action`` the action that led
to it. A delivery sequence that shrinks or changes in place is no delivery
log and raises :class:`TraceConversionError`.

:func:`check_counterexample` runs the trace checker (the engine's
``check_paths``) on the written file and reports whether it finds the same
violation: :data:`CHECKER_PROPERTY` maps the TLA+ property names to the
checker's.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from tomkit.fuzz.tlc.runner import TlcResult, TlcState
from tomkit.fuzz.tlc.values import Function, ModelValue, format_value

__all__ = ["CHECKER_PROPERTY", "TraceConversionError", "check_counterexample",
           "counterexample_records", "process_name", "message_name", "write_counterexample"]

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
    """The behaviour does not have the variables a trace is built from."""


def process_name(p: Any) -> str:
    if isinstance(p, bool):
        raise TraceConversionError(f"a process cannot be the boolean {p}")
    if isinstance(p, int):
        return f"p{p}"
    if isinstance(p, (str, ModelValue)):
        return str(p)
    raise TraceConversionError(f"cannot name process {format_value(p)}")


def message_name(m: Any) -> str:
    if isinstance(m, tuple) and len(m) == 2 and all(type(x) is int for x in m):
        return f"m{m[0]}.{m[1]}"
    if isinstance(m, (str, ModelValue)) or type(m) is int:
        return f"m{m}" if type(m) is int else str(m)
    raise TraceConversionError(f"cannot name message {format_value(m)}")


def message_sender(m: Any) -> str:
    if isinstance(m, tuple) and len(m) == 2 and all(type(x) is int for x in m):
        return process_name(m[0])
    raise TraceConversionError(f"message {format_value(m)} is not a pair <<process, id>>, so "
                               "its sender is unknown")


def _deliveries(state: TlcState) -> dict[str, tuple]:
    if "delivered" not in state.values:
        raise TraceConversionError(f"state {state.index} has no variable 'delivered' (the spec "
                                   "must expose each process's delivery sequence)")
    d = state.values["delivered"]
    if isinstance(d, tuple):  # a function on 1..n, printed as a sequence
        pairs = [(i + 1, s) for i, s in enumerate(d)]
    elif isinstance(d, Function):
        pairs = list(d.items())
    else:
        raise TraceConversionError(f"state {state.index}: 'delivered' is "
                                   f"{format_value(d)}, not a function of the processes")
    out = {}
    for p, s in pairs:
        if not isinstance(s, tuple):
            raise TraceConversionError(f"state {state.index}: delivered[{format_value(p)}] is "
                                       f"{format_value(s)}, not a sequence")
        out[process_name(p)] = s
    return out


def _broadcast(state: TlcState) -> frozenset:
    b = state.values.get("broadcast")
    if b is None:
        raise TraceConversionError(f"state {state.index} has no variable 'broadcast'")
    if not isinstance(b, frozenset):
        raise TraceConversionError(f"state {state.index}: 'broadcast' is {format_value(b)}, "
                                   "not a set")
    return b


def counterexample_records(behaviour: Iterable[TlcState], trace_id: str) -> list[dict]:
    """The v1 records of a behaviour: sends from ``broadcast``, deliveries from
    ``delivered``, in state order."""
    records: list[dict] = []
    seq: dict[str, int] = {}
    prev_b: frozenset = frozenset()
    prev_d: dict[str, tuple] = {}

    def emit(proc: str, kind: str, msg: Any, st: TlcState) -> None:
        n = seq.get(proc, 0)
        seq[proc] = n + 1
        records.append({"trace": trace_id, "process": proc, "kind": kind,
                        "msg": message_name(msg), "time": float(st.index), "seq": n,
                        "x_tlc_action": st.action})

    for st in behaviour:
        b, d = _broadcast(st), _deliveries(st)
        for m in sorted(b - prev_b, key=format_value):
            emit(message_sender(m), "send", m, st)
        for proc, s in d.items():
            old = prev_d.get(proc, ())
            if s[:len(old)] != old:
                raise TraceConversionError(
                    f"state {st.index}: delivered[{proc}] went from {format_value(old)} to "
                    f"{format_value(s)}; a delivery sequence only grows")
            for m in s[len(old):]:
                emit(proc, "deliver", m, st)
        prev_b, prev_d = b, d
    return records


def write_counterexample(result: TlcResult, path: str | os.PathLike,
                         trace_id: str | None = None) -> int:
    """Write the counterexample of ``result`` as a v1 trace; returns the number of records."""
    from tomkit.traces.writer import write_records

    if not result.behaviour:
        raise TraceConversionError("the TLC result has no counterexample behaviour")
    tid = trace_id or _trace_id(result)
    return write_records(path, counterexample_records(result.behaviour, tid), grouped=True)


def _trace_id(result: TlcResult) -> str:
    cfg = os.path.splitext(os.path.basename(result.config or result.spec or "tlc"))[0]
    return f"tlc-{cfg}"


@dataclass
class Confirmation:
    """What ``tomkit check`` says about a converted counterexample."""

    property: str | None  # the checker property expected to fail (None: no counterpart)
    violated: list[str]  # the checker properties found violated
    explanation: str  # the checker's explanation of the expected property's witness

    @property
    def confirmed(self) -> bool:
        return self.property is not None and self.property in self.violated


def check_counterexample(path: str | os.PathLike, tla_property: str | None) -> Confirmation:
    """Run the trace checker's properties (safety ones, plus liveness for Validity) on a
    written counterexample and say whether the TLA+ property's counterpart fails."""
    from tomkit.checker.engine import check_paths, select
    from tomkit.checker.properties import Options
    from tomkit.checker.result import Verdict

    want = CHECKER_PROPERTY.get(tla_property or "")
    props = select(None, Options(), liveness=want == "liveness")
    report = check_paths([path], props, Options(), workers=1)
    violated = [name for name, c in report.counts.items() if c[Verdict.VIOLATED]]
    text = ""
    for outcome in report.outcomes:
        res = outcome.results.get(want or "")
        if res is not None and res.verdict == Verdict.VIOLATED:
            text = res.explanation
    return Confirmation(want, violated, text)
