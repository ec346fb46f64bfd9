"""One trace as plain Python objects: the exact, per-trace view the reference checks read.

The vectorized engine (``chunk.py``) decides verdicts for many traces at
once; for a trace it finds violated, or cannot decide cheaply, it builds a
``Trace`` and runs the property's reference check, which is simple, exact
and produces the minimal witness. Tests compare the two engines.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property

from tomkit.traces.errors import Location, TraceFormatError


@dataclass(frozen=True)
class Ev:
    """One event, in its process's local order."""

    process: str
    kind: str
    msg: str | None
    deps: tuple[str, ...] | None
    view: str | None
    members: tuple[str, ...] | None
    time: float | None
    location: Location
    #: real (global) time, seconds, when the trace logs it (``real_time``)
    real_time: float | None = None
    #: the ``x_slot`` extension field (a time slot number), when the record carries one
    slot: int | None = None
    #: ``x_join: true`` on a packet: a join announcement, outside the reservation (rate.py)
    unreserved: bool = False
    #: the ``x_offset`` extension field (a message's offset in a per-key log), when given
    offset: int | None = None
    #: a ``negotiate`` record's declared reservation, as logged: (``x_rate_max``,
    #: ``x_rate_avg``, ``x_rate_window``, ``x_rn``), None where absent (rate.py checks them)
    reserve: tuple | None = None


class Trace:
    """The events of one execution, per process in local order."""

    def __init__(self, trace_id: str, events: Mapping[str, list[Ev]]):
        self.id = trace_id
        self.events: dict[str, list[Ev]] = dict(events)
        # processes in order of name, so every report lists them the same way
        self.processes: list[str] = sorted(self.events)

    @classmethod
    def from_records(cls, records: Iterable[Mapping], source: str = "<records>") -> Trace:
        """Build one trace from v1 records (dicts); record order is the local order unless
        ``seq`` is given. Raises TraceFormatError on mixed or repeated ``seq``."""
        rows: dict[str, list[tuple[int | None, int, Ev]]] = {}
        trace_ids = set()
        for i, r in enumerate(records):
            trace_ids.add(r["trace"])
            ev = Ev(
                process=r["process"],
                kind=r["kind"],
                msg=r.get("msg"),
                deps=tuple(r["deps"]) if r.get("deps") is not None else None,
                view=r.get("view"),
                members=tuple(r["members"]) if r.get("members") is not None else None,
                time=float(r["time"]) if r.get("time") is not None else None,
                location=Location(source, line=i + 1),
                real_time=float(r["real_time"]) if r.get("real_time") is not None else None,
                slot=_slot(r.get("x_slot")),
                unreserved=r.get("x_join") is True,
                offset=_slot(r.get("x_offset")),
                reserve=(_number(r.get("x_rate_max")), _number(r.get("x_rate_avg")),
                         _number(r.get("x_rate_window")), r.get("x_rn") is True)
                if r["kind"] == "negotiate" else None,
            )
            rows.setdefault(ev.process, []).append((r.get("seq"), i, ev))
        if len(trace_ids) > 1:
            raise ValueError(f"records of several traces: {sorted(trace_ids)}")
        events = {}
        for p, lst in rows.items():
            with_seq = [x for x in lst if x[0] is not None]
            if with_seq and len(with_seq) != len(lst):
                bad = next(x for x in lst if x[0] is None)
                raise TraceFormatError(
                    bad[2].location, f"process {p} gives seq on some events only", "seq"
                )
            if with_seq:
                lst = sorted(lst, key=lambda x: x[0])
                for a, b in zip(lst, lst[1:]):
                    if a[0] == b[0]:
                        raise TraceFormatError(
                            b[2].location, f"process {p} repeats seq {b[0]}", "seq"
                        )
            events[p] = [x[2] for x in lst]
        return cls(next(iter(trace_ids)) if trace_ids else "", events)

    # ---- derived views, each computed once -------------------------------------------------

    @cached_property
    def deliveries(self) -> dict[str, list[Ev]]:
        """Every deliver event per process, in local order (repeats included)."""
        return {p: [e for e in evs if e.kind == "deliver"] for p, evs in self.events.items()}

    @cached_property
    def first_deliveries(self) -> dict[str, list[tuple[int, Ev]]]:
        """Per process, the first delivery of each message with its index in ``deliveries``.

        Order properties read only first deliveries: a repeated delivery is
        integrity's business and must not count twice as an order fact.
        """
        out = {}
        for p, ds in self.deliveries.items():
            seen = set()
            lst = []
            for i, e in enumerate(ds):
                if e.msg not in seen:
                    seen.add(e.msg)
                    lst.append((i, e))
            out[p] = lst
        return out

    @cached_property
    def delivery_index(self) -> dict[str, dict[str, int]]:
        """process -> msg -> index of its first delivery (in ``deliveries``)."""
        return {p: {e.msg: i for i, e in lst} for p, lst in self.first_deliveries.items()}

    @cached_property
    def sends(self) -> dict[str, tuple[int, Ev]]:
        """msg -> (index in the sender's sends, the first send event of it)."""
        out: dict[str, tuple[int, Ev]] = {}
        for p in self.processes:  # by name: a reused id's "first" send is the same everywhere
            evs = self.events[p]
            k = 0
            for e in evs:
                if e.kind == "send":
                    out.setdefault(e.msg, (k, e))
                    k += 1
        return out

    @cached_property
    def own_sends(self) -> dict[str, dict[str, tuple[int, Ev]]]:
        """process -> msg -> (index in its sends, its first send of msg), in send order."""
        out: dict[str, dict[str, tuple[int, Ev]]] = {}
        for p, sends in self.send_lists.items():
            mine: dict[str, tuple[int, Ev]] = {}
            for k, e in enumerate(sends):
                mine.setdefault(e.msg, (k, e))
            out[p] = mine
        return out

    @cached_property
    def senders(self) -> dict[str, list[str]]:
        """msg -> every process that sends it, by name (one, unless the id is reused)."""
        out: dict[str, list[str]] = {}
        for p in self.processes:
            for m in self.own_sends[p]:
                out.setdefault(m, []).append(p)
        return out

    @cached_property
    def send_lists(self) -> dict[str, list[Ev]]:
        return {p: [e for e in evs if e.kind == "send"] for p, evs in self.events.items()}

    @cached_property
    def has_sends(self) -> bool:
        return any(self.send_lists.values())

    @cached_property
    def has_views(self) -> bool:
        return any(e.kind == "view" for evs in self.events.values() for e in evs)

    def view_at(self, process: str) -> list[str | None]:
        """For each event of ``process``, the view it had installed when the event happened
        (the view event itself counts as installed)."""
        cur = None
        out = []
        for e in self.events[process]:
            if e.kind == "view":
                cur = e.view
            out.append(cur)
        return out

    @cached_property
    def views_at(self) -> dict[str, list[str | None]]:
        return {p: self.view_at(p) for p in self.processes}

    def delivery_views(self, process: str) -> list[str | None]:
        """The installed view at each delivery of ``process`` (parallel to ``deliveries``)."""
        views = self.views_at[process]
        return [v for e, v in zip(self.events[process], views) if e.kind == "deliver"]

    @cached_property
    def messages(self) -> set[str]:
        return {e.msg for evs in self.events.values() for e in evs if e.msg is not None}


def _number(value: object) -> float | None:
    """An extension field's number (None when absent or not a finite number), as the chunk
    reads it."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _slot(value: object) -> int | None:
    """An ``x_slot`` (or ``x_offset``) value as an int (None when absent or not a number),
    as the chunk reads it."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return math.floor(value) if math.isfinite(value) else None
