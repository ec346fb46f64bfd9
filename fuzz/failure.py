"""What the process machines (``fuzz/process_machine.py``, ``fuzz/qos_machine.py``) report
when the checker finds a promised property violated on a run's trace."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["ProcessFailure", "RuleFailure"]


@dataclass
class ProcessFailure:
    """A property the checker found violated on the run's trace."""

    protocol: str
    n: int
    options: dict[str, Any]
    kind: str  # the property's name
    explanation: str
    records: list[dict] = field(default_factory=list)
    #: runs Hypothesis had started when a property first failed (set by the runner)
    found_at: int | None = None
    #: the run's steps, replayable by :meth:`ProcessMachine.apply` (``fuzz/reduce.py``)
    schedule: list[tuple] = field(default_factory=list)
    #: records of the failure before ``fuzz/reduce.py`` reduced it (None: not reduced)
    reduced_from: int | None = None
    #: records of the reduced run once drained, when ``records`` is only the prefix that
    #: already violates the (safety) property (``fuzz/reduce.py``)
    drained: int | None = None

    def describe(self) -> str:
        was = "" if self.reduced_from is None else f", reduced from {self.reduced_from}"
        return f"{self.kind}: {self.explanation} ({len(self.records)} events{was})"


class RuleFailure(AssertionError):
    def __init__(self, found: ProcessFailure) -> None:
        super().__init__(found.describe())
        self.found = found
