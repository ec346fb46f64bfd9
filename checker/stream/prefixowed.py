"""The end-of-trace properties of a broken trace across its retired prefix: agreement,
validity, liveness and member liveness when a process delivered less of the retired
prefix than the others (it crashed, it is behind it, or with views it skipped a view).

A broken trace is decided on its held records H (reduced.py; around the breach when a
cut serves it, cutowed.py), which stand for the whole trace W less the sends and
deliveries of the retired messages S[0:base). The order properties need no more: no
witness of theirs lies in the retired prefix. The end-of-trace properties (Défago,
Schiper and Urbán 2004, section 2.2; member liveness: Bar-Joseph, Keidar, Anker and
Lynch 2000, section 2) ask who owes what of *every* message, the retired ones too: a
process that crashed before the break, whose position the low watermark no longer
waited for, delivered only a prefix of the retired part; a process seen but behind it
(one that only sends, first seen after positions retired) delivered none of it; with
views, a member from the start that skipped a view owes that view's retired messages
to member liveness (its rules ignore the views a member from the start installed).
Before this module such a trace went to the whole-trace engine (about 540 bytes an
event).

**The retired part R.** Its records are the sends and deliveries of the retired
messages. What each process delivered there is a count per view, known at the break:
without views, process p's deliveries are a prefix of S (canon.py), so it delivered
S[0:r_p), r_p = min(its cursor, base); with views, per view v it installed, the first
positions of v's range, as many as viewheld.py's ``ViewPrefix.per_view`` says (its
deliveries in v are a prefix of v's range). Each sender's retired sends are its first
ones (reduced.py, viewheld.py's condition 1), with their senders, indexes, locations and
clocks on disk (retired.py), as are the retired ids and each process's delivery lines.
So R is summed up as a clean trace whose window is empty and whose every process may be
behind its retired prefix: a ``Ledger`` (ledger.py) with those counts and the retired
sequence, whose stream deciders (``Property.stream``) give check(R), reading back from
disk only the rows a witness needs and the senders of the missed ranges, a block at a
time: memory is the counts (processes x views), not the prefix.

**Who is who in R.** The deciders read, besides the counts, who crashed, who left, each
process's latest join (record, clocks, its sends before it), the views it installed
since, and the last record of each. Those are read from the held records
(``ledger.membership``): every view, join, leave and crash record is held for the
trace's life (canon.py), so they are the whole trace's to its end, including a crash, a
join or a view installed after the break, which the pass's own state (frozen at the
break) does not know. A join made after the break comes after all of its process's
retired sends in its order (those were read before their positions retired), so none of
them is sent after the sender's latest join: its floor is its retired sends. Each
process's last record is canon.py's ``last``, kept as the records come.

**Why merging check(R) and check(H) gives check(W)**, property by property, with the
same processes on both sides (every process of the trace has a held record: checked
here on the held path, by cutowed.py's condition A across a cut), the same crashed,
correct and final-view processes (read on the same membership records), and each
message's records on one side only (a held record naming a retired id sends the trace
whole, canon.py):

- *agreement* scans the deliverers by name, each one's first deliveries in order, then
  the correct processes q by name. p's deliveries in W are its retired ones (R) and then
  its held ones (H): a process short of the retired prefix delivers nothing after the
  break (canon.py's ``behind`` sends it whole, a crashed one too), so a process with held
  deliveries delivered the whole retired prefix first. Whether q delivers a message and
  owes it is read on the message's side. So W's first violation is check(R)'s when its
  deliverer comes first by name or is the same, else check(H)'s: cutowed.py's
  ``Owed.merge`` with R first and H second.
- *validity* scans the correct senders by name, each one's sends in order: its retired
  sends first, then its held ones; the same merge by sender. R always has a send (a
  retired position's send was checked before it retired), so check(H)'s "no send" reads
  as holding.
- *liveness* scans the messages by id: the smaller id of the two sides' violations (ids
  are disjoint).
- *member liveness* scans the correct senders by name, each one's sends since its latest
  join, then q: the same merge by sender, its retired sends coming first. Its unknown (a
  pair no clock decides) is one side's when the other has none; both sides undecided
  cannot be ordered (the sentence does not name the sender): whole, as cutowed.py's
  condition C.

With views, agreement, validity and liveness have no candidate in R (viewheld.py: every
correct process not behind delivered every retired position of the views it installed,
a leaver those it moved on from), so only member liveness is merged; without views all
four are. The witnesses of check(H) are shifted first (reduced.py's ``shift``, or
``ViewPrefix.shift`` with views); check(R)'s indexes are the whole trace's already
(delivery numbers and send indexes from the start).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..properties import Options, Property
from ..result import Result, WitnessEvent
from .clean import Clean
from .cutowed import Owed, owing
from .ledger import Join, Ledger, Stay, Window, membership
from .views import NONE

if TYPE_CHECKING:
    from ..chunk import Piece
    from .canon import TraceState

__all__ = ["MEMBER_LIVENESS", "asked", "decide", "merge", "prefix"]

MEMBER_LIVENESS = "member-liveness"


def asked(state: TraceState, props: Sequence[Property]) -> list[Property]:
    """The end-of-trace properties among ``props`` whose retired part this module decides
    for ``state`` (a broken trace with positions retired): all four without views, member
    liveness alone with them (module docstring)."""
    if not state.base:
        return []
    props = owing(props)
    if state.vprefix is not None:
        return [p for p in props if p.name.split("@")[0] == MEMBER_LIVENESS]
    return props


def prefix(state: TraceState, pieces: Sequence[Piece], cut: bool) -> Clean | str:
    """The retired part R of ``state`` as a clean trace (module docstring), read with the
    membership records of ``pieces`` (the held records, or the cut's, which hold every
    membership record with views and none without); ``cut``: across a cut, whose
    condition A checked that every process has a held record. Why not, else."""
    names = list(state.procs)
    n = len(names)
    seen = [names[i] for i in np.flatnonzero(state.seen[:n])]
    mem = membership(pieces)
    if not cut and not set(seen) <= mem.present:
        # it would be missing from the processes the exact checks on H judge
        return "a process with no held record"
    base = state.base
    vs, vp = state.views, state.vprefix
    view_names: list[str | None] = [None]
    offsets, lengths, members = [0], [-1], [None]
    index: dict[str, int] = {}
    if vp is not None:
        assert vs is not None
        view_names, offsets = list(vs.names), list(vs.offset)
        lengths, members = list(vs.length), list(vs.members)
        index = dict(vs.index)
    stays: dict[str, list[Stay]] = {}
    joins: dict[str, Join] = {}
    last_kind: dict[str, str | None] = {}
    crashed: set[str] = set()
    left: set[str] = set()
    cursor: dict[str, int] = {}
    for p in seen:
        i = state.procs[p]
        if vp is None:  # its deliveries: S's first ones
            r = min(int(state.cursor[i]), base)
            stays[p], cursor[p] = [Stay(NONE, 0, 0, r)], r
        else:
            per = vp.per_view.get(p, {})
            at_break = {v: (first, sends) for v, first, sends, _ in vs.stays[i]}
            stays[p], cursor[p] = [Stay(NONE, 0, 0, per.get(None, 0))], base
        kind_at: str | None = None
        join = None
        for kind, view, record, clocks in mem.records.get(p, ()):
            if kind == "view":
                v = index.get(view)
                if v is None:  # installed after the break: no range in the retired prefix
                    v = index[view] = len(view_names)
                    view_names.append(view)
                    offsets.append(-1)
                    lengths.append(-1)
                    members.append(None)
                if any(s.view == v for s in stays[p]):
                    continue  # installed twice (after the break): its first install counts
                first, sends = at_break.get(v, (0, 0))
                stays[p].append(Stay(v, first, sends, per.get(view, 0), record))
                continue
            kind_at = kind
            if kind == "join":
                join = (record, clocks, len(stays[p]))
            elif kind == "leave":
                left.add(p)
            elif kind == "crash":
                crashed.add(p)
        last_kind[p] = kind_at
        if join is not None:
            known = vs.joins[i] if vs is not None else None
            # the join the pass saw before the break knows its sends; one after it comes
            # after every retired send of its process
            sends = known[2] if known is not None and \
                known[0].location == join[0].location else int(state.soff[i])
            joins[p] = Join(join[0], join[1], sends, join[2])
    soff = state.soff[:n]
    led = Ledger(names, stays, view_names, offsets, members, state.view_records, lengths,
                 frozenset(left), cursor, base, np.zeros(0, np.int64),
                 Window(np.zeros(0, np.int32), np.zeros(0, np.int64), np.zeros(0, np.int64),
                        np.zeros(0, np.int64)),
                 {names[p]: e for p, e in state.last.items()}, _nothing_held, _no_ids,
                 joins, last_kind, None, state.past)
    delivered = {p: sum(s.count for s in stays[p]) for p in seen}
    return Clean(state.id, frozenset(seen),
                 frozenset(names[i] for i in np.flatnonzero(soff > 0)),
                 frozenset(p for p in seen if delivered[p]), frozenset(crashed), delivered,
                 sent=int(soff.sum()), ledger=led)


def _nothing_held(code: int, kind: str, process: str) -> None:
    """R holds no record in memory: every one of its witnesses is read from disk."""
    return None


def _no_ids(codes: np.ndarray) -> dict[int, str]:
    return {}


def decide(clean: Clean, props: Sequence[Property], options: Options) -> dict[str, Result] | None:
    """check(R) for each of ``props`` (``asked``), None when one needs the whole trace
    (a witness not kept)."""
    out = {}
    for prop in props:
        res = prop.stream(clean, options) if prop.stream else None
        if res is None:
            return None
        out[prop.name] = res
    return out


def merge(name: str, retired: Result, held: Result,
          last: dict[str, WitnessEvent]) -> Result | None:
    """check(W) of property ``name`` from check(R) and check(H), H's witnesses shifted
    already (module docstring); None: both undecided (whole)."""
    return Owed({name: held}, {}, {}).merge(name, retired.verdict, retired, last)
