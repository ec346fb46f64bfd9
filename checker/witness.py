"""Small constructors of witness events from a Trace, so every property cites events alike."""

from __future__ import annotations

from tomkit.checker.result import WitnessEvent
from tomkit.checker.trace import Ev, Trace


def delivery(trace: Trace, process: str, i: int) -> WitnessEvent:
    """The ``i``-th delivery (0-based, repeats included) of ``process``."""
    e = trace.deliveries[process][i]
    return WitnessEvent(process, "deliver", e.msg, i, e.location)


def send(trace: Trace, msg: str) -> WitnessEvent:
    k, e = trace.sends[msg]
    return WitnessEvent(e.process, "send", msg, k, e.location)


def event(e: Ev, index: int | None = None) -> WitnessEvent:
    return WitnessEvent(e.process, e.kind, e.msg, index, e.location, e.view)

