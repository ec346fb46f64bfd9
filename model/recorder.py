"""Processes' outputs as v1 trace records: what the simulator and the fuzzer write.

A :class:`Recorder` holds one trace's records. Every record is ``trace``, ``process``,
``kind``, ``msg`` (for sends, receptions and deliveries), then ``deps`` on an application
send that logs them, then ``time``, then the extension fields the process gave
(:class:`~tomkit.model.process.Logged`), in that order. The order of records is the
order of the calls: each process's records are in its local order, as the format asks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .kernel import mypyc_attr
from .process import Installed, Output

__all__ = ["Recorder", "Time"]

#: a time as the caller gave it. The module may run compiled by mypyc (model/kernel.py),
#: which would turn an int given for a ``float`` into a float, and the record's bytes
#: with it; a union keeps the value as given
Time = float | int


@mypyc_attr(allow_interpreted_subclasses=True)  # (RealTimeRecorder; model/kernel.py)
class Recorder:
    """The records of one trace ``trace_id`` over processes named ``names``."""

    __slots__ = ("trace_id", "names", "records")

    def __init__(self, trace_id: str, names: Sequence[str]) -> None:
        self.trace_id = trace_id
        self.names = tuple(names)
        self.records: list[dict] = []

    def sent(self, i: int, mid: str, out: Output, t: Time) -> None:
        """Process i's application send of ``mid`` (``out`` is what ``on_send`` returned);
        the views it installed first (its first view, at its first input) before it."""
        if out.installed:
            for v in out.installed:
                self.view(i, v, t)
            out.installed = ()  # written: not again by :meth:`logged`
        rec: dict[str, Any] = {"trace": self.trace_id, "process": self.names[i], "kind": "send",
                               "msg": mid}
        if out.deps is not None:
            rec["deps"] = out.deps
        rec["time"] = t
        if out.fields:
            rec.update(out.fields)
        self.records.append(rec)

    def logged(self, i: int, out: Output, t: Time) -> int:
        """Process i's ``negotiate`` record if it asked for a reservation
        (``out.negotiated``), its ``join`` record if it became a member (``out.joined``), its
        receptions, then its deliveries, of one input, with the views it installed among
        them (``out.installed``); returns how many deliveries."""
        tid, name, append = self.trace_id, self.names[i], self.records.append
        if out.negotiated is not None:
            append({"trace": tid, "process": name, "kind": "negotiate", "time": t,
                    **out.negotiated})
        if out.joined is not None:
            append({"trace": tid, "process": name, "kind": "join", "time": t, **out.joined})
        for m, fields in out.received:
            if fields is None:
                append({"trace": tid, "process": name, "kind": "recv", "msg": m, "time": t})
            else:
                append({"trace": tid, "process": name, "kind": "recv", "msg": m, "time": t,
                        **fields})
        delivered = out.delivered
        if out.installed:
            self._interleaved(i, out, t)
            return len(delivered)
        for m, fields in delivered:
            if fields is None:
                append({"trace": tid, "process": name, "kind": "deliver", "msg": m,
                        "time": t})
            elif len(fields) == 1:
                # one field (the ToTo family's index of latency): a literal of six keys
                # makes the dict at its final size, where ``**`` would grow it once
                (k, v), = fields.items()
                append({"trace": tid, "process": name, "kind": "deliver", "msg": m,
                        "time": t, k: v})
            else:
                append({"trace": tid, "process": name, "kind": "deliver", "msg": m,
                        "time": t, **fields})
        return len(delivered)

    def _interleaved(self, i: int, out: Output, t: Time) -> None:
        views = sorted(out.installed, key=lambda v: v.at)  # stable: installation order
        k = 0
        for n, (m, fields) in enumerate(out.delivered):
            while k < len(views) and views[k].at <= n:
                self.view(i, views[k], t)
                k += 1
            self.records.append({"trace": self.trace_id, "process": self.names[i],
                                 "kind": "deliver", "msg": m, "time": t, **(fields or {})})
        for v in views[k:]:
            self.view(i, v, t)

    def view(self, i: int, v: Installed, t: Time) -> None:
        """A ``view`` record of process i (members by name)."""
        rec = {"trace": self.trace_id, "process": self.names[i], "kind": "view",
               "view": v.view.id,
               "members": list(v.names) if v.names is not None
               else [self.names[j] for j in v.view.members],
               "time": t}
        if v.fields:
            rec.update(v.fields)
        self.records.append(rec)

    def crash(self, i: int, t: Time) -> None:
        self.records.append({"trace": self.trace_id, "process": self.names[i],
                             "kind": "crash", "time": t})

    def event(self, i: int, kind: str, t: Time, fields: Mapping | None = None) -> None:
        """A ``join``, ``leave`` or ``packet`` record of process i, with its extension
        fields."""
        rec = {"trace": self.trace_id, "process": self.names[i], "kind": kind, "time": t}
        if fields:
            rec.update(fields)
        self.records.append(rec)
