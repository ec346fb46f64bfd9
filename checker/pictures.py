"""Pictures of witnesses: a violated property drawn as a space-time diagram.

A witness is a handful of events in a trace of thousands. The picture shows what a
person needs to see it at a glance: one lane per process, the sends and deliveries of
the witness's messages with an arrow from each send to each delivery of the same
message, every view a process installed as a shaded band along its lane, crashes and
leaves, and the witness's own events ringed in red with their number in the witness.
Other messages are left out (their events would bury the ones that matter).

Layout: the columns are Lamport's logical clock (Lamport 1978): an event's clock is one
more than its process's previous event and, for a delivery, than the send of its
message; so every arrow goes rightwards and a process's events stay in their order. The
clocks of the events shown are then ranked, so the diagram has no empty columns.
"""

from __future__ import annotations

from collections import deque

from tomkit.checker import spacetime
from tomkit.checker.result import Result
from tomkit.checker.spacetime import Arrow, Band, Event
from tomkit.checker.trace import Ev, Trace

__all__ = ["lamport", "witness_svg"]

BAND_COLOURS = ("#cfe2f3", "#d9ead3", "#fff2cc", "#ead1dc", "#d0e0e3", "#fce5cd")


def lamport(trace: Trace) -> dict[tuple[str, int], int]:
    """(process, index of the event in its local order) -> Lamport clock. A delivery whose
    message has no send in the trace, or whose send cannot be ordered before it (a
    process that delivers a message before sending it), follows its process only."""
    send_at: dict[str, tuple[str, int]] = {}
    for p in trace.processes:
        for i, e in enumerate(trace.events[p]):
            if e.kind == "send" and e.msg not in send_at:
                send_at[e.msg] = (p, i)
    clock: dict[tuple[str, int], int] = {}
    pos = {p: 0 for p in trace.processes}
    todo = deque(trace.processes)
    stuck = 0
    while todo:
        p = todo.popleft()
        evs = trace.events[p]
        moved = False
        while pos[p] < len(evs):
            i = pos[p]
            e = evs[i]
            c = clock[(p, i - 1)] + 1 if i else 1
            if e.kind == "deliver" and e.msg in send_at:
                s = send_at[e.msg]
                if s not in clock and stuck <= len(todo):
                    break  # wait for the send (unless every process is waiting)
                if s in clock:
                    c = max(c, clock[s] + 1)
            clock[(p, i)] = c
            pos[p] += 1
            moved = True
        if pos[p] < len(evs):
            todo.append(p)
            stuck = 0 if moved else stuck + 1
    return clock


def _label(e: Ev) -> str:
    if e.kind in ("send", "deliver", "recv"):
        return f"{e.kind} {e.msg}"
    if e.kind == "view":
        return f"view {e.view}"
    return e.kind


def witness_svg(trace: Trace, result: Result) -> str:
    """The space-time diagram of ``result``'s witness in ``trace`` (module docstring)."""
    clock = lamport(trace)
    marks = {(w.location.source, w.location.line, w.location.row): k
             for k, w in enumerate(result.witness, 1) if w.location is not None}
    msgs = {w.msg for w in result.witness if w.msg is not None}
    shown: list[tuple[str, int, Ev]] = []
    for p in trace.processes:
        for i, e in enumerate(trace.events[p]):
            loc = (e.location.source, e.location.line, e.location.row)
            if (e.msg in msgs and e.kind in ("send", "deliver")) or loc in marks \
                    or e.kind in ("view", "crash", "leave", "join"):
                shown.append((p, i, e))
    ranks = {c: r for r, c in enumerate(sorted({clock[(p, i)] for p, i, _ in shown}))}
    lane = {p: r for r, p in enumerate(trace.processes)}
    events, arrows, bands = [], [], []
    sends: dict[str, str] = {}
    delivers: dict[str, list[str]] = {}
    for p, i, e in shown:
        eid = f"{p}#{i}"
        col = ranks[clock[(p, i)]]
        k = marks.get((e.location.source, e.location.line, e.location.row))
        notes = (f"witness {k}",) if k is not None else ()
        if e.kind == "view":
            continue  # drawn as a band
        events.append(Event(eid, lane[p], col, _label(e), notes,
                            "#ffffff" if e.kind != "send" else "#e8e8e8",
                            cross=e.kind == "crash", highlight=k is not None))
        if e.kind == "send":
            sends.setdefault(e.msg, eid)
        elif e.kind == "deliver":
            delivers.setdefault(e.msg, []).append(eid)
    for m, ds in delivers.items():
        if m in sends:
            arrows += [Arrow(sends[m], d, "#d62728" if m in msgs else "#555555") for d in ds]
    last = max(ranks.values(), default=0)
    for p in trace.processes:
        views = [(i, e) for pp, i, e in shown if pp == p and e.kind == "view"]
        for k, (i, e) in enumerate(views):
            start = ranks[clock[(p, i)]]
            end = ranks[clock[(p, views[k + 1][0])]] - 1 if k + 1 < len(views) else last
            colour = BAND_COLOURS[_view_colour(e.view) % len(BAND_COLOURS)]
            bands.append(Band(lane[p], start, max(start, end), f"view {e.view}", colour))
            if (e.location.source, e.location.line, e.location.row) in marks:
                k2 = marks[(e.location.source, e.location.line, e.location.row)]
                events.append(Event(f"{p}#{i}", lane[p], start, f"view {e.view}",
                                    (f"witness {k2}",), highlight=True))
    title = f"{result.property} violated in trace {trace.id}"
    legend = [result.explanation,
              "red ring: a witness event (numbered); arrows: from a send to each delivery; "
              "bands: the view a process had installed; columns: Lamport clock"]
    return spacetime.svg(trace.processes, events, arrows, (), title, legend, bands)


def _view_colour(view: str | None) -> int:
    """A colour index for a view id, the same in every picture (not Python's salted
    hash)."""
    return sum(map(ord, view or ""))
