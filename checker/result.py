"""Verdicts, witnesses and results, shared by every property and engine.

A check never passes silently: its verdict is one of holds / violated /
unknown, and an unknown carries the reason (e.g. "no send events logged").
Verdicts are ordered worst-last: holds < unknown < violated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

from tomkit.traces.errors import Location


class Verdict(IntEnum):
    HOLDS = 0
    UNKNOWN = 1
    VIOLATED = 2

    def __str__(self) -> str:
        return self.name.lower()


@dataclass(frozen=True)
class WitnessEvent:
    """One event of a witness: who did what, where in its own order, and where in the file.

    ``index`` is the event's position in the process's delivery sequence for
    deliveries, and in its send sequence for sends (0-based), so that "p1
    delivers m3 as #4" can be read straight off.
    """

    process: str
    kind: str
    msg: str | None = None
    index: int | None = None
    location: Location | None = None
    view: str | None = None

    def describe(self) -> str:
        what = self.kind if self.msg is None else f"{self.kind} {self.msg}"
        if self.view is not None and self.kind == "view":
            what = f"view {self.view}"
        pos = f" #{self.index}" if self.index is not None else ""
        loc = f"  [{self.location}]" if self.location is not None else ""
        return f"{self.process}: {what}{pos}{loc}"

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"process": self.process, "kind": self.kind}
        if self.msg is not None:
            d["msg"] = self.msg
        if self.view is not None:
            d["view"] = self.view
        if self.index is not None:
            d["index"] = self.index
        if self.location is not None:
            d["source"] = self.location.source
            if self.location.line is not None:
                d["line"] = self.location.line
            if self.location.row is not None:
                d["row"] = self.location.row
        return d


@dataclass
class Result:
    """The outcome of one property on one trace."""

    property: str
    trace: str
    verdict: Verdict
    witness: list[WitnessEvent] = field(default_factory=list)
    explanation: str = ""  # a sentence a person can read; the reason when unknown
    clause: str | None = None  # which part of the definition failed, e.g. "duplicate-delivery"
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"property": self.property, "verdict": str(self.verdict)}
        if self.clause:
            d["clause"] = self.clause
        if self.explanation:
            d["explanation"] = self.explanation
        if self.witness:
            d["witness"] = [w.to_dict() for w in self.witness]
        if self.details:
            d["details"] = self.details
        return d
