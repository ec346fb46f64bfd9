"""Who delivered and who sent what, per process and view, at the end of a clean trace:
what the end-of-trace properties' stream deciders read (agreement, validity, liveness),
and the witness events they cite.

In a clean trace (canon.py, views.py) every process delivers, view by view, a prefix of
each view's range of the one sequence S: its *stay* in a view (where its deliveries and
sends stood when it installed the view, how many it delivered in it) says which
messages it delivered there, and its send rank says which send is which. So who owes
what under the membership rules (Chockler, Keidar and Vitenberg 2001, section 4: a
process owes only what was delivered, or sent, in views it installed, and nothing of
the view it leaves from; properties/agreement.py, ``owes``) is read from counts per
view and process, not from per-message history: the state is a few integers a stay,
kept with the views (views are few), and each process's latest record.

A violation's witness names messages at positions a correct process has not passed:
those positions hold the low watermark (canon.py's trim), so their records are still
held, and the witness events are read from them.

**Behind the retired prefix.** A correct process may not hold the low watermark: one
that lags in a file grouped by process (it reads the retired prefix from disk and
stops short there), a leaver, a member stalled in an early view while the others went
on, a member from the start that skipped a view (JGroups' late joiner logs no
``join``). Its obligations may then lie in the retired prefix, whose ids and records
left memory. The argument stays one of counts: in a clean trace the messages q did
not deliver in view v are exactly the positions of v's range past q's count there
(``missed``), whoever q is, so which retired positions each end-of-trace property
judges follows from the stays; and what their witnesses cite of such a position is
on disk (retired.py): its id, its send (sender, index among the sender's sends, file
and line, clocks) and each process's deliveries (by delivery number, which the stays
give: p's j-th delivery in v is its delivery number ``first + j``). The deciders read
back only the rows a witness needs, and the senders of the missed ranges (``scan``), a
block at a time. What refutes it goes whole, as before: a row not kept (a process
whose line numbers pass 32 bits, a position whose send came after it retired and was
never read, a retired sequence not made).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...traces.errors import Location
from ..chunk import CRASH, JOIN, LEAVE, SLOT_COLUMN, VIEW, Piece, kind_codes
from ..result import WitnessEvent
from .retired import CLOCKS, RetiredSequence
from .views import NONE

__all__ = ["Join", "Ledger", "Membership", "Stay", "Window", "location", "membership",
           "record_clocks"]


def location(piece: Piece, i: int) -> Location:
    """Where row ``i`` of a piece was read (line of JSON Lines, row of Parquet)."""
    n = int(piece.lines[i])
    return Location(piece.source, row=n) if piece.fmt == "parquet" else \
        Location(piece.source, line=n)


def record_clocks(table: pa.Table, row: int = 0) -> tuple:
    """A record's time, real_time and slot (``x_slot``, floored), as the whole-trace
    checker reads them (checker/trace.py; None where absent)."""
    out = []
    for name in ("time", "real_time", SLOT_COLUMN):
        x = table.column(name)[row].as_py() if name in table.column_names else None
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
            x = None
        elif name == SLOT_COLUMN:
            x = math.floor(x)
        else:
            x = float(x)
        out.append(x)
    return tuple(out)


@dataclass(frozen=True)
class Membership:
    """The processes with a record among some pieces, and each one's view, join, leave and
    crash records there in its own order: (kind, view, the record as a witness names it,
    its clocks). A broken trace holds every such record for its life (canon.py), so read
    from its held records these are the whole trace's, to its end."""

    present: frozenset[str]
    records: dict[str, list[tuple[str, str | None, WitnessEvent, tuple]]]


def membership(pieces: Iterable[Piece]) -> Membership:
    """The membership records of ``pieces`` (few: a handful a view change)."""
    present: set[str] = set()
    records: dict[str, list[tuple[str, str | None, WitnessEvent, tuple]]] = {}
    for piece in pieces:
        t = piece.table
        present.update(pc.unique(t.column("process")).to_pylist())
        rows = np.flatnonzero(np.isin(kind_codes(t.column("kind")), (VIEW, JOIN, LEAVE, CRASH)))
        if not len(rows):
            continue
        taken = t.take(pa.array(rows))
        cols = [taken.column(c).to_pylist() for c in ("process", "kind", "view")]
        for j, (p, kind, view) in enumerate(zip(*cols)):
            record = WitnessEvent(p, kind, None, None, location(piece, int(rows[j])), view)
            records.setdefault(p, []).append((kind, view, record, record_clocks(taken, j)))
    present.discard(None)
    return Membership(frozenset(present), records)

#: (message id, location, clocks: time, real_time, slot) of a held record, by message
#: code, kind and process
Finder = Callable[[int, str, str], "tuple[str, Location, tuple] | None"]


@dataclass(frozen=True)
class Stay:
    """A process's time in one view (``views.NONE``: before its first view)."""

    view: int
    first: int  # its deliveries before it installed the view
    sends: int  # its sends before it installed the view
    count: int  # its deliveries in the view
    record: WitnessEvent | None = None  # its view record (None: "no view yet")


@dataclass(frozen=True)
class Join:
    """A process's latest join (member liveness reads it)."""

    record: WitnessEvent
    clocks: tuple  # its time, real_time and slot (None where absent)
    sends: int  # its sends before it
    stays: int  # its stays before it: later ones are views installed since


@dataclass(frozen=True)
class Window:
    """The messages a clean trace still holds (retired ones every live process passed),
    by code: sender (process name's index in ``Ledger.names``, -1: no send), send rank
    in its sending view, S position (-1: delivered by none), the view it was sent in."""

    sender: np.ndarray
    rank: np.ndarray
    pos: np.ndarray
    view: np.ndarray


class Ledger:
    """The end of a clean trace, per process and view (module docstring)."""

    def __init__(self, names: list[str], stays: dict[str, list[Stay]],
                 view_names: list[str | None], offsets: list[int],
                 members: list[frozenset[str] | None], view_records: bool,
                 lengths: list[int],
                 left: frozenset[str], cursor: dict[str, int], base: int,
                 S: np.ndarray, window: Window, last: dict[str, WitnessEvent],
                 find: Finder, ids: Callable[[np.ndarray], dict[int, str]],
                 joins: dict[str, Join] | None = None,
                 last_kind: dict[str, str | None] | None = None,
                 send_clocks: Callable[[], dict[int, tuple]] | None = None,
                 past: RetiredSequence | None = None) -> None:
        self.names = names
        self.stays = stays
        self.view_names = view_names
        self.offsets = offsets
        self.members = members
        self.lengths = lengths  # per view, its frozen length (-1: not frozen yet)
        #: a view record was read (the whole-trace checker's ``Trace.has_views``)
        self.view_records = view_records
        self.left = left
        self.cursor = cursor
        self.base = base
        self.S = S
        self.window = window
        self.last = last
        self._find = find
        self._ids = ids
        self._at = {p: {s.view: s for s in ss} for p, ss in stays.items()}
        #: per process, its latest join, and its latest join, leave or crash
        self.joins = joins or {}
        self.last_kind = last_kind or {}
        self._send_clocks = send_clocks
        self._clocks: dict[int, tuple] | None = None
        #: the retired prefix on disk, with its witnesses (retired.py; None: none)
        self.past = past

    def add_silent(self, last: dict[str, WitnessEvent]) -> None:
        """Processes of a larger trace that log nothing in this one (with views, ones that
        installed no view: cutowed.py): each delivered and sent nothing here, before any
        view, from the sequence's start; ``last``: each one's last record in the larger
        trace, which its witnesses cite (cutowed.py, condition A)."""
        for p, event in last.items():
            stay = Stay(NONE, 0, 0, 0)
            self.stays[p], self._at[p] = [stay], {NONE: stay}
            self.cursor[p], self.last[p] = 0, event
            if p not in self.names:  # a code no held message's sender has
                self.names.append(p)

    # ---- who delivered, who owes ----------------------------------------------------------

    def stay(self, p: str, view: int) -> Stay | None:
        return self._at[p].get(view)

    def count(self, p: str, view: int) -> int:
        """p's deliveries in ``view`` (0 when it did not install it)."""
        s = self._at[p].get(view)
        return 0 if s is None else s.count

    def left_from(self, p: str) -> int | None:
        """The view p left from (views.NONE: before any view; None: it did not leave):
        a leaver logs nothing after its leave in a clean trace, so its last stay."""
        return self.stays[p][-1].view if p in self.left else None

    def owes(self, q: str, view: int) -> bool:
        """Whether q owes a message delivered (or sent) in ``view``: agreement.owes on
        the stays (q's being correct is the caller's question)."""
        if not self.view_records:
            return q not in self.left  # no view tells what a leaver owed
        if view == NONE or view not in self._at[q]:
            return False
        return self.left_from(q) != view

    def ends(self, p: str) -> np.ndarray:
        """Per view index, where p's deliveries in it end in S (p delivered the view's
        positions below; -1 where p did not install the view or it has no range)."""
        out = np.full(len(self.view_names), -1, np.int64)
        for s in self.stays[p]:
            if self.offsets[s.view] >= 0:
                out[s.view] = self.offsets[s.view] + s.count
        return out

    def behind(self, p: str) -> bool:
        """Whether p's next delivery would lie in the retired prefix: it may owe retired
        messages, whose ids and records are gone."""
        c = self.cursor[p]
        return 0 <= c < self.base

    def final_members(self, p: str) -> tuple[str | None, frozenset[str] | None]:
        """p's last view (name and members; None, None: it installed none)."""
        v = self.stays[p][-1].view
        return (None, None) if v == NONE else (self.view_names[v], self.members[v])

    # ---- witness events -----------------------------------------------------------------

    def last_event(self, p: str) -> WitnessEvent:
        return self.last[p]

    def delivery(self, p: str, view: int, j: int) -> WitnessEvent | None:
        """p's ``j``-th delivery in ``view`` (None: its record is not kept)."""
        pos = self.offsets[view] + j
        stay = self._at[p][view]
        if pos < self.base:  # retired: its id and p's line on disk
            if self.past is None or pos >= self.past.rows:
                return None
            m, loc = self.past.id_at(pos), self.past.delivery(p, stay.first + j)
            if m is None or loc is None:
                return None
            return WitnessEvent(p, "deliver", m, stay.first + j, loc)
        code = int(self.S[pos - self.base])
        hit = self._find(code, "deliver", p)
        if hit is None:
            return None
        return WitnessEvent(p, "deliver", hit[0], stay.first + j, hit[1])

    def delivery_of(self, p: str, code: int) -> WitnessEvent | None:
        """p's delivery of the held message ``code``."""
        v = int(self.window.view[code])
        return self.delivery(p, v, int(self.window.pos[code]) - self.offsets[v])

    def send(self, code: int) -> WitnessEvent | None:
        """The send of the held message ``code``, with its index in its sender's sends."""
        p = self.names[int(self.window.sender[code])]
        hit = self._find(code, "send", p)
        stay = self._at[p].get(int(self.window.view[code]))
        if hit is None or stay is None:
            return None
        return WitnessEvent(p, "send", hit[0], stay.sends + int(self.window.rank[code]),
                            hit[1])

    def send_clocks(self, code: int) -> tuple | None:
        """The time, real_time and slot of the held message ``code``'s send (one read
        of the held records for all of them, the first time)."""
        if self._clocks is None:
            self._clocks = self._send_clocks() if self._send_clocks else {}
        return self._clocks.get(code)

    def since_join(self, p: str) -> dict[int, Stay]:
        """The views p installed after its latest join, by index (none without a join)."""
        j = self.joins.get(p)
        return {} if j is None else {s.view: s for s in self.stays[p][j.stays:]}

    def sent_in(self, p: str, view: int) -> str | None:
        """The view p had installed since its latest join when it sent in ``view`` (None:
        none since that join)."""
        if view == NONE:
            return None
        j = self.joins.get(p)
        if j is not None and self.stays[p].index(self._at[p][view]) < j.stays:
            return None
        return self.view_names[view]

    def gaps_below_base(self, p: str) -> dict[int, int]:
        """Per view, how many of its retired positions p did not deliver."""
        out = {}
        for v, off in enumerate(self.offsets):
            if off < 0 or off >= self.base:
                continue
            end = min(self.base, off + self.lengths[v]) if self.lengths[v] >= 0 else self.base
            top = min(end, off + self.count(p, v))
            if end - top > 0:
                out[v] = end - top
        return out

    def ids(self, codes: np.ndarray) -> dict[int, str]:
        """The ids of held messages, by code (from their held records)."""
        return self._ids(codes)

    # ---- the retired prefix (module docstring) --------------------------------------------

    def ranges(self) -> list[tuple[int, int, int]]:
        """(view, start, end) of each view's range of S within the retired prefix."""
        out = []
        for v, off in enumerate(self.offsets):
            if 0 <= off < self.base:
                n = self.lengths[v]
                out.append((v, off, self.base if n < 0 else min(self.base, off + n)))
        return [r for r in out if r[2] > r[1]]

    def missed(self, q: str) -> list[tuple[int, int, int]]:
        """(view, start, end): the retired positions q did not deliver, per view (past its
        count there; a view it did not install whole)."""
        out = []
        for v, lo, hi in self.ranges():
            top = max(lo, self.offsets[v] + self.count(q, v))
            if top < hi:
                out.append((v, top, hi))
        return out

    def scan(self, spans: list[tuple[int, int, int]],
             block: int = 1 << 20) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
        """(view, positions, witness rows: sender, sidx, sloc, idend) of the retired
        ``spans`` in S's order, a block at a time (retired.py)."""
        assert self.past is not None
        for v, lo, hi in spans:
            for a in range(lo, hi, block):
                b = min(hi, a + block)
                yield v, np.arange(a, b), self.past.witness(a, b)

    def retired_send(self, pos: int) -> WitnessEvent | None:
        """The send of the message at retired position ``pos``, with its index among its
        sender's sends (None: not kept)."""
        if self.past is None or pos >= self.past.rows:
            return None
        hit, m = self.past.send_at(pos), self.past.id_at(pos)
        if hit is None or m is None:
            return None
        return WitnessEvent(self.names[hit[0]], "send", m, hit[1], hit[2])

    def retired_clocks(self, pos: np.ndarray) -> dict[str, np.ndarray]:
        """The time, real_time and slot of the sends at retired positions (NaN: absent)."""
        if self.past is None:
            return {c: np.full(len(pos), np.nan) for c in CLOCKS}
        return self.past.send_clocks(pos)

    def retired_ids(self, pos: np.ndarray) -> list[str] | None:
        """The ids at retired positions ``pos`` (None: one is not kept)."""
        if self.past is None:
            return None
        out = [self.past.id_at(int(k)) for k in pos]
        return None if any(m is None for m in out) else out  # type: ignore[return-value]
