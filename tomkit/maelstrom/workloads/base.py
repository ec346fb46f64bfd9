"""What every workload provides to the harness, and the anomalies it reports.

A workload says which requests clients send (``operation``), what it does before the
clients start (``setup``: Maelstrom's ``topology`` for broadcast) and after the
cluster healed (``final``: the final reads), how its history becomes v1 trace records
(``records``), which tomkit properties judge that trace (``properties``), and which of
its own checks the trace cannot express (``anomalies``: kafka's offsets, an echo that
came back different, an acknowledged write missing from the final reads).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..client import Client, History
    from ..harness import Harness

__all__ = ["Anomaly", "Workload"]


@dataclass
class Anomaly:
    """One anomaly in Maelstrom's words (``name``) and tomkit's (``property``)."""

    name: str
    property: str
    text: str
    ops: list[int] = field(default_factory=list)  # history op indices

    def to_dict(self) -> dict[str, Any]:
        return {"anomaly": self.name, "property": self.property, "text": self.text,
                "ops": self.ops}


class Workload:
    name = ""
    #: the tomkit properties that judge this workload's trace (a profile's list)
    properties: tuple[str, ...] = ()
    #: the Maelstrom name of each tomkit property's violations in this workload
    vocabulary: dict[str, str] = {}

    def __init__(self, harness: Harness):
        self.h = harness

    async def setup(self) -> None:
        """Before the clients start (after every node answered init)."""

    async def operation(self, client: Client, rng: random.Random) -> None:
        """Perform one operation of ``client`` (recorded in the harness's history)."""
        raise NotImplementedError

    async def final(self) -> None:
        """After the cluster healed: the final reads."""

    def records(self, history: History) -> list[dict[str, Any]]:
        """The trace records (send, deliver) that the history gives."""
        return []

    def anomalies(self, history: History) -> list[Anomaly]:
        """The checks the trace cannot express."""
        return []
