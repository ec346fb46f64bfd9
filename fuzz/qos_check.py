"""What a qos run must satisfy, read from its trace: 003's liveness under joins, leaves,
crashes and recoveries, the real-time latency bounds, and the safety properties the
checker already has (integrity, total-order-weak, global-order).

Source: 003 (Bar-Joseph, Keidar, Anker and Lynch) Definition 2.1 and section 3.3. The
checker's own ``liveness`` asks every correct process for every message of a correct
sender; 003's asks less: a process is correct from its latest join on (join_OK, then no
leave or failure), and only messages sent while both sender and receiver are correct
are owed. Read at the end of a drained finite run (the simulator and the fuzzer drain):

    p and q correct at the end, q sends m in slot s >= max(s_j(p), s_j(q))
    ==> p delivers m,

where s_j is the join slot of the process's latest join (``x_slot`` of its ``join``
record) and 0 for a process up from time 0 that never joined. The checker helper's
branch adds trace properties of this kind; this module is the model's own oracle for
its tests and its fuzzer.
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
    """003's liveness at the end of a drained run (module docstring)."""
    since: dict[str, int | None] = {}
    sends: dict[str, list[tuple[str, int]]] = {}
    delivered: dict[str, set[str]] = {}
    for r in records:
        p, kind = r["process"], r["kind"]
        if p not in since:
            since[p] = None if kind == "join" else 0  # up from time 0 unless it joins
        if kind == "join":
            since[p] = r["x_slot"]
        elif kind in ("crash", "leave"):
            since[p] = None
        elif kind == "send":
            if since[p] is None:
                raise ValueError(f"{p} sends {r['msg']} while not a member")
            sends.setdefault(p, []).append((r["msg"], r["x_slot"]))
        elif kind == "deliver":
            delivered.setdefault(p, set()).add(r["msg"])
    # sends of q since its latest join only: a send before a later join belongs to an
    # earlier membership, and q was not correct through it
    latest: dict[str, list[tuple[str, int]]] = {}
    for q, lst in sends.items():
        s_q = since[q]
        if s_q is not None:
            latest[q] = [(m, s) for m, s in lst if s >= s_q]
    out = []
    correct = sorted(p for p, s in since.items() if s is not None)
    for q in correct:
        for m, s in latest.get(q, []):
            for p in correct:
                s_p = since[p]
                if s >= max(s_p, since[q]) and m not in delivered.get(p, ()):  # type: ignore[type-var]
                    out.append(Violation("qos-liveness", (
                        f"{p} never delivers {m} (slot {s}), although {p} and {q} are "
                        f"correct since slots {s_p} and {since[q]} (003 Definition 2.1)")))
                    return out
    return out


def latencies(records: Sequence[Mapping]) -> list[float]:
    """Real-time latency of every delivery: its real time (``REAL_TIME``) minus the
    send's."""
    sent = {r["msg"]: r[REAL_TIME] for r in records if r["kind"] == "send"}
    return [r[REAL_TIME] - sent[r["msg"]] for r in records if r["kind"] == "deliver"]
