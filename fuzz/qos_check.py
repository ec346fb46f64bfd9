"""What a qos run must satisfy, read from its trace: 003's liveness under joins, leaves,
crashes and recoveries, the real-time latency bounds, and the safety properties the
checker already has (integrity, total-order-weak, global-order).

Source: 003 (Bar-Joseph, Keidar, Anker and Lynch) Definition 2.1 and section 3.3. The
checker's own ``liveness`` asks every correct process for every message of a correct
sender; 003's asks less: a process is correct from its latest join on (join_OK, then no
leave or failure), and only messages sent while both sender and receiver are correct
are owed. Read at the end of a drained finite run (the simulator and the fuzzer drain),
in real time: m, sent after the join_OK of both (their ``join`` records' ``real_time``),
is delivered by both if both are correct at the end. That is the checker's
``member-liveness``; this module hands runs to it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

from tomkit.checker.properties import Options, properties
from tomkit.checker.result import Verdict
from tomkit.checker.trace import Trace
from tomkit.model.net.timed import REAL_TIME

__all__ = ["SAFETY", "Violation", "latencies", "liveness", "safety"]

#: the checker's properties every qos run satisfies (003 Definition 2.1; global order:
#: the key (slot, sender index, position) is one sequence)
SAFETY = ("integrity", "total-order-weak", "global-order")


class Violation(NamedTuple):
    kind: str
    explanation: str


def _checkable(records: Sequence[Mapping]) -> list[Mapping]:
    """The records the checker reads (``packet`` records are for rate checks)."""
    return [r for r in records if r["kind"] != "packet"]


def safety(records: Sequence[Mapping], props: Sequence[str] = SAFETY) -> list[Violation]:
    """The checker's verdicts on the run; violated properties only."""
    recs = _checkable(records)
    if not recs:
        return []
    trace = Trace.from_records(recs)
    table = properties()
    out = []
    for name in props:
        res = table[name].check(trace, Options())
        if res.verdict == Verdict.VIOLATED:
            out.append(Violation(name, res.explanation))
    return out


def liveness(records: Sequence[Mapping]) -> list[Violation]:
    """003's liveness at the end of a drained run: the checker's ``member-liveness`` in
    its default, real-time reading of Definition 2.1 (a process is correct from its
    join_OK, the ``join`` record)."""
    recs = _checkable(records)
    if not recs:
        return []
    res = properties()["member-liveness"].check(Trace.from_records(recs), Options())
    if res.verdict == Verdict.VIOLATED:
        return [Violation("member-liveness", res.explanation)]
    return []


def latencies(records: Sequence[Mapping]) -> list[float]:
    """Real-time latency of every delivery: its real time (``REAL_TIME``) minus the
    send's."""
    sent = {r["msg"]: r[REAL_TIME] for r in records if r["kind"] == "send"}
    return [r[REAL_TIME] - sent[r["msg"]] for r in records if r["kind"] == "deliver"]
