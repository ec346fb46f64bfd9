"""The workloads: Maelstrom's echo, broadcast and kafka, and total-order-broadcast."""

from __future__ import annotations

from .base import Anomaly, Workload
from .broadcast import Broadcast
from .echo import Echo
from .kafka import Kafka
from .tob import TotalOrderBroadcast

__all__ = ["WORKLOADS", "Anomaly", "Workload"]

WORKLOADS: dict[str, type[Workload]] = {
    w.name: w for w in (Echo, Broadcast, TotalOrderBroadcast, Kafka)}
