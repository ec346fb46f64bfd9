"""001's latency metric, computed from a trace (a :class:`~tomkit.model.sim.SimResult` or
its records): "a weighted average of each message's maximum delivery time".

Source: Rodrigues, Fonseca, Verissimo (paper 001) section 3: "Values presented here were
obtained by performing a weighted average of each message's maximum delivery time."

Definition (ours where the sentence is short)
---------------------------------------------
* A message's *maximum delivery time* is ``max over r of (deliver_r(m) - send(m))``, over
  every process r that has not crashed by the end of the trace, the sender included (it
  delivers its own message too, in total order): the time until the last process has
  delivered m.
* The *weighted average* gives every message weight 1: it is the mean over messages, which
  is the average of the senders' means weighted by how many messages each sent (a high-load
  process counts a hundred times a low-load one at 100 and 1 msg/s). The per-sender means
  are reported beside it (:attr:`Latency001.per_sender`).
* A message some surviving process never delivered has no maximum; it is counted in
  :attr:`Latency001.incomplete` and left out of the mean (a run that drains has none).
* ``since`` / ``until`` select messages by send time (e.g. leaving out a warm-up), and
  :func:`latency_series` gives the mean per window of send time, Figure 5's curves.

Times are real times: a record's ``real_time`` when the run logs it (processes with clocks
of their own, ``model/net/clocks.py``: their ``time`` is a local clock, and a difference
of two clocks is no latency), else its ``time``.

Only application messages count: ``send`` and ``deliver`` records (the hybrid's
goingToActive/goingToPassive/reassign messages are not delivered to the user).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Latency001", "latency_001", "latency_series", "message_latencies", "real_time"]


def _records(run: Any) -> Sequence[Mapping[str, Any]]:
    return run.records if hasattr(run, "records") else run


def real_time(r: Mapping[str, Any]) -> float:
    """A record's real time: its ``real_time`` if it logs one, else its ``time``."""
    t = r.get("real_time")
    return r["time"] if t is None else t


def message_latencies(run: Any) -> tuple[dict[str, tuple[str, float, float]],
                                         dict[str, tuple[str, float]]]:
    """Per complete message: (sender, send time, maximum delivery time); per incomplete
    one (some surviving process did not deliver it; its sender did not crash): (sender,
    send time)."""
    recs = _records(run)
    crashed = {r.get("process") for r in recs if r.get("kind") == "crash"}
    procs = {r.get("process") for r in recs if r.get("process") is not None}
    sent: dict[str, tuple[str, float]] = {}
    last: dict[str, float] = {}
    count: dict[str, int] = {}
    for r in recs:
        kind = r.get("kind")
        if kind == "send":
            sent[r["msg"]] = (r["process"], real_time(r))
        elif kind == "deliver" and r.get("process") not in crashed:
            m, t = r["msg"], real_time(r)
            count[m] = count.get(m, 0) + 1
            if t > last.get(m, -math.inf):
                last[m] = t
    need = len(procs - crashed)
    done: dict[str, tuple[str, float, float]] = {}
    missing: dict[str, tuple[str, float]] = {}
    for m, (p, t) in sent.items():
        if count.get(m, 0) >= need:
            done[m] = (p, t, last[m] - t)
        elif p not in crashed:
            missing[m] = (p, t)
    return done, missing


@dataclass
class Latency001:
    """001's metric over the messages sent in [since, until)."""

    #: mean over messages of the maximum delivery time (s); nan with no message
    mean: float
    #: messages counted
    count: int
    #: messages some surviving process never delivered (left out of the mean)
    incomplete: int
    #: sender -> (mean maximum delivery time, messages)
    per_sender: dict[str, tuple[float, int]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"mean": self.mean, "count": self.count, "incomplete": self.incomplete,
                "per_sender": {p: {"mean": m, "count": c}
                               for p, (m, c) in self.per_sender.items()}}


def latency_001(run: Any, since: float = 0.0, until: float = math.inf) -> Latency001:
    """001's latency of a run (module docstring), over messages sent in [since, until).

    >>> recs = [{"kind": "send", "process": "a", "msg": "a.1", "time": 0.0},
    ...         {"kind": "deliver", "process": "a", "msg": "a.1", "time": 0.1},
    ...         {"kind": "deliver", "process": "b", "msg": "a.1", "time": 0.3},
    ...         {"kind": "send", "process": "b", "msg": "b.1", "time": 1.0},
    ...         {"kind": "deliver", "process": "b", "msg": "b.1", "time": 1.1},
    ...         {"kind": "deliver", "process": "a", "msg": "b.1", "time": 1.2}]
    >>> round(latency_001(recs).mean, 9)
    0.25
    """
    lat, missing = message_latencies(run)
    sums: dict[str, list[float]] = {}
    for p, t, d in lat.values():
        if since <= t < until:
            s = sums.setdefault(p, [0.0, 0])
            s[0] += d
            s[1] += 1
    total = sum(s[0] for s in sums.values())
    count = sum(int(s[1]) for s in sums.values())
    incomplete = sum(1 for _, t in missing.values() if since <= t < until)
    return Latency001(total / count if count else math.nan, count, incomplete,
                      {p: (s[0] / s[1], int(s[1])) for p, s in sorted(sums.items())})


def latency_series(run: Any, window: float, start: float = 0.0,
                   end: float | None = None) -> list[tuple[float, float, int]]:
    """(window start, mean maximum delivery time, messages) per window of send time, from
    ``start`` to ``end`` (default: the last send): Figure 5's curve. A window without a
    complete message has mean nan."""
    if not window > 0:
        raise ValueError(f"window must be positive, got {window}")
    lat, _ = message_latencies(run)
    if end is not None:
        k = max(int(math.ceil((end - start) / window)), 0)
    else:
        last = max((t for _, t, _ in lat.values()), default=None)
        k = 0 if last is None or last < start else int((last - start) // window) + 1
    sums = [0.0] * k
    counts = [0] * k
    for _, t, d in lat.values():
        b = int((t - start) // window)
        if 0 <= b < k:
            sums[b] += d
            counts[b] += 1
    return [(start + b * window, sums[b] / counts[b] if counts[b] else math.nan, counts[b])
            for b in range(k)]
