"""Space-time diagrams as SVG: one lane per process, time (or causal depth) to the right.

The picture distributed-systems papers draw (Lamport's, and 000's Figure 1): a
horizontal lane per process, its events on it in local order, an arrow for each message
from where it left to where it arrived, and *cuts*: a set of events closed under "happened
before", drawn as a shaded region ending, on each lane, just after the cut's last event
there. ``tomkit prove`` draws its counterexample DAGs with it, the two views as two cuts
(``fuzz/counterexample.py``).

The layout is the caller's: each :class:`Event` says its lane and column; this module
only places and styles. Columns are abstract units (causal depth, or a rank of time), so
the same code draws a DAG and a recorded trace. The SVG is self-contained (no scripts,
no external fonts) and deterministic: same input, same bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

__all__ = ["Arrow", "Band", "Cut", "Event", "svg"]

#: geometry, in SVG user units (pixels)
LANE_H, COL_W, LEFT, TOP, RADIUS = 84, 110, 150, 60, 9


@dataclass(frozen=True)
class Event:
    """One event: ``id`` (unique), its ``lane`` and ``column``, the ``label`` written
    above it and the ``notes`` below (one line each); ``fill`` marks a kind (e.g. a
    candidate); ``cross`` draws it as an X (a crash)."""

    id: str
    lane: int
    column: float
    label: str = ""
    notes: tuple[str, ...] = ()
    fill: str = "#ffffff"
    cross: bool = False
    #: ringed in red: an event a witness names
    highlight: bool = False


@dataclass(frozen=True)
class Arrow:
    """An arrow from event ``src`` to event ``dst`` (a message, or a causal edge)."""

    src: str
    dst: str
    colour: str = "#555555"


@dataclass(frozen=True)
class Band:
    """A stretch of lane ``lane`` from column ``start`` to ``end`` (inclusive), shaded
    ``colour`` and labelled: a view a process had installed, for instance."""

    lane: int
    start: float
    end: float
    label: str
    colour: str


@dataclass(frozen=True)
class Cut:
    """A cut named ``name``: per lane, the last column it includes (None: nothing of
    that lane). Drawn as a region of ``colour``, lightly shaded, with its border."""

    name: str
    frontier: tuple[float | None, ...]
    colour: str


def _x(col: float) -> float:
    return LEFT + col * COL_W


def _y(lane: int) -> float:
    return TOP + lane * LANE_H + LANE_H / 2


def _cut_outline(cut: Cut, lanes: int, offset: float) -> list[tuple[float, float]]:
    """The staircase polygon of a cut: from the lanes' left end to just after each
    lane's frontier (``offset`` apart for two cuts, so both borders show)."""
    left = LEFT - 30
    pts: list[tuple[float, float]] = [(left, TOP)]
    for r in range(lanes):
        f = cut.frontier[r] if r < len(cut.frontier) else None
        x = left if f is None else _x(f) + COL_W / 2 - offset
        pts += [(x, TOP + r * LANE_H), (x, TOP + (r + 1) * LANE_H)]
    pts.append((left, TOP + lanes * LANE_H))
    return pts


def svg(lanes: Sequence[str], events: Sequence[Event], arrows: Sequence[Arrow] = (),
        cuts: Sequence[Cut] = (), title: str = "", legend: Sequence[str] = (),
        bands: Sequence[Band] = ()) -> str:
    """The diagram as an SVG document (module docstring). Raises ValueError for an
    arrow or event that names an unknown event or lane."""
    where: dict[str, Event] = {}
    for e in events:
        if not 0 <= e.lane < len(lanes):
            raise ValueError(f"event {e.id!r}: lane {e.lane} of {len(lanes)}")
        if e.id in where:
            raise ValueError(f"event {e.id!r} given twice")
        where[e.id] = e
    for a in arrows:
        for end in (a.src, a.dst):
            if end not in where:
                raise ValueError(f"arrow {a.src!r} -> {a.dst!r}: no event {end!r}")
    cols = max((e.column for e in events), default=0.0)
    # wide enough for the title and legend too (about 7 units per character)
    width = max(_x(cols) + COL_W + 20, 20 + 7.2 * max(map(len, [title, *legend])))
    legend_h = 18 * len(legend) + (10 if legend else 0)
    height = TOP + len(lanes) * LANE_H + 20 + legend_h
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" '
           f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" '
           'font-family="Helvetica, Arial, sans-serif" font-size="12">',
           # a white halo keeps labels readable where arrows and lanes cross them
           '<style>text.halo { paint-order: stroke; stroke: #ffffff; stroke-width: 3px; '
           'stroke-linejoin: round; }</style>',
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" '
           'markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
           '<path d="M 0 0 L 10 5 L 0 10 z" fill="#555555"/></marker></defs>',
           '<rect width="100%" height="100%" fill="#ffffff"/>']
    if title:
        out.append(f'<text x="10" y="22" font-size="14" font-weight="bold">'
                   f'{escape(title)}</text>')
    for i, cut in enumerate(cuts):
        pts = " ".join(f"{x:.1f},{y:.1f}" for x, y in _cut_outline(cut, len(lanes), 6 * i))
        out.append(f'<polygon class="cut" data-cut="{escape(cut.name)}" points="{pts}" '
                   f'fill="{cut.colour}" fill-opacity="0.13" stroke="{cut.colour}" '
                   'stroke-width="2" stroke-dasharray="6 3"/>')
        out.append(f'<text x="{LEFT - 26 + 40 * i}" y="{TOP - 8}" fill="{cut.colour}" '
                   f'font-weight="bold">{escape(cut.name)}</text>')
    for b in bands:
        if not 0 <= b.lane < len(lanes):
            raise ValueError(f"band {b.label!r}: lane {b.lane} of {len(lanes)}")
        x0, x1 = _x(b.start) - COL_W / 2, _x(b.end) + COL_W / 2
        y0 = TOP + b.lane * LANE_H + 6
        out.append(f'<rect class="band" data-label="{escape(b.label)}" x="{x0:.1f}" '
                   f'y="{y0:.1f}" width="{x1 - x0:.1f}" height="{LANE_H - 12}" '
                   f'fill="{b.colour}" fill-opacity="0.35" rx="6"/>')
        out.append(f'<text x="{x0 + 4:.1f}" y="{y0 + 12:.1f}" font-size="10" '
                   f'fill="#555555">{escape(b.label)}</text>')
    for r, name in enumerate(lanes):
        y = _y(r)
        out.append(f'<text x="10" y="{y + 4:.1f}" font-weight="bold">{escape(name)}</text>')
        out.append(f'<line x1="{LEFT - 30}" y1="{y:.1f}" x2="{width - 10:.1f}" y2="{y:.1f}" '
                   'stroke="#999999" stroke-width="1.5"/>')
    # labels, then arrows over them (their heads must show), then the events' marks
    for e in events:
        x, y = _x(e.column), _y(e.lane)
        if e.label:
            out.append(f'<text class="halo" x="{x:.1f}" y="{y - RADIUS - 5:.1f}" '
                       'text-anchor="middle">'
                       f'{escape(e.label)}</text>')
        for k, note in enumerate(e.notes):
            out.append(f'<text class="halo" x="{x:.1f}" y="{y + RADIUS + 13 + 12 * k:.1f}" '
                       f'text-anchor="middle" font-size="10" fill="#333333">'
                       f'{escape(note)}</text>')
    for a in arrows:
        s, d = where[a.src], where[a.dst]
        x1, y1, x2, y2 = _x(s.column), _y(s.lane), _x(d.column), _y(d.lane)
        # stop at the circle's edge, so the head shows
        dx, dy = x2 - x1, y2 - y1
        length = max((dx * dx + dy * dy) ** 0.5, 1e-9)
        x2, y2 = x2 - dx / length * (RADIUS + 1), y2 - dy / length * (RADIUS + 1)
        out.append(f'<line class="arrow" data-from="{escape(a.src)}" '
                   f'data-to="{escape(a.dst)}" x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" '
                   f'y2="{y2:.1f}" stroke="{a.colour}" stroke-width="1.3" '
                   'marker-end="url(#arrow)"/>')
    for e in events:
        x, y = _x(e.column), _y(e.lane)
        if e.cross:
            r = RADIUS
            out.append(f'<path class="event" data-id="{escape(e.id)}" d="M {x - r:.1f} '
                       f'{y - r:.1f} L {x + r:.1f} {y + r:.1f} M {x - r:.1f} {y + r:.1f} '
                       f'L {x + r:.1f} {y - r:.1f}" stroke="#000000" stroke-width="2.5"/>')
        else:
            stroke, width_ = ("#d62728", 3.5) if e.highlight else ("#333333", 1.5)
            out.append(f'<circle class="event{" witness" if e.highlight else ""}" '
                       f'data-id="{escape(e.id)}" cx="{x:.1f}" cy="{y:.1f}" r="{RADIUS}" '
                       f'fill="{e.fill}" stroke="{stroke}" stroke-width="{width_}"/>')
    y0 = TOP + len(lanes) * LANE_H + 24
    for k, line in enumerate(legend):
        out.append(f'<text x="10" y="{y0 + 18 * k}" font-size="11" fill="#333333">'
                   f'{escape(line)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
