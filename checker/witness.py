"""Small constructors of witness events from a Trace, so every property cites events alike."""

from __future__ import annotations

from tomkit.checker.result import WitnessEvent
from tomkit.checker.trace import Ev, Trace


def delivery(trace: Trace, process: str, i: int) -> WitnessEvent:
    """The ``i``-th delivery (0-based, repeats included) of ``process``."""
    e = trace.deliveries[process][i]
    return WitnessEvent(process, "deliver", e.msg, i, e.location)


def send(trace: Trace, msg: str, process: str | None = None) -> WitnessEvent:
    """The first send of ``msg`` (of the process first by name), or ``process``'s first send
    of it when given (an id sent by several processes: fifo-order, causal-order)."""
    if process is None:
        k, e = trace.sends[msg]
    else:
        k, e = trace.own_sends[process][msg]
    return WitnessEvent(e.process, "send", msg, k, e.location)


def event(e: Ev, index: int | None = None) -> WitnessEvent:
    return WitnessEvent(e.process, e.kind, e.msg, index, e.location, e.view)

