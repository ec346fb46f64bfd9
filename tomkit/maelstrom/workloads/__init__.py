"""The workloads: Maelstrom's echo, broadcast, kafka, unique-ids, g-set, g-counter and
pn-counter, and tomkit's total-order-broadcast."""

from __future__ import annotations

from .base import Anomaly, Workload
from .broadcast import Broadcast
from .counter import GCounter, PNCounter
from .echo import Echo
from .g_set import GSet
from .kafka import Kafka
from .tob import TotalOrderBroadcast
from .unique_ids import UniqueIds

__all__ = ["WORKLOADS", "Anomaly", "Workload"]

WORKLOADS: dict[str, type[Workload]] = {
    w.name: w for w in (Echo, Broadcast, TotalOrderBroadcast, Kafka, UniqueIds, GSet,
                        GCounter, PNCounter)}
