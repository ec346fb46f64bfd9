"""A trace with views broken after part of it retired: its exact checks on the held
records, with what the retired prefix was carried over per process.

Without views, every process delivered the retired prefix S[0:base) alike, as its first
``base`` deliveries, so reduced.py shifts every witness by ``base``. With views that is
not so: a process delivers only the ranges of the views it installed (views.py), a late
joiner none of the early ones, a crashed member stops inside its view. What each one
delivered there is still known when the picture breaks, and it is all the exact checks
need to stand for the whole trace (Chockler, Keidar and Vitenberg 2001, section 4: the
membership rules read a process's deliveries per view it installed).

**What the single pass holds at the break.** Every view, join, leave and crash record
since the start (canon.py holds them for the trace's life), and every send and delivery
of a message not retired. So the held trace H is the whole trace W less the sends and
deliveries of the retired messages. At the break, per process p:

- its *retired deliveries* r_p = its deliveries so far less those held; they are its
  first r_p deliveries (its positions in S increase along its deliveries: views are laid
  out in the order processes install them);
- per view u it installed, how many of them lie in u (its stays, views.py: its
  deliveries in u cover u's range from its start, so the first ``base - start`` of them,
  at most its count there, are retired);
- per sender, its retired sends (canon.py's ``soff``).

**When H stands for W** (each checked here; anything else sends the trace whole, as
before):

1. *every sender's retired sends are its first ones*: each held send's number among its
   sender's sends (its sends before it installed the sending view, plus its rank there)
   is at least the sender's retired sends (a send its view's range lacks, followed by a
   later send that retired, would make them not a prefix);
2. *a process behind the retired prefix at the break* (its next position below ``base``:
   a crashed member, a leaver) *logs nothing after it* but a crash: whatever it delivered
   there is retired, and the held records have none of its deliveries;
3. *no record after the break installs a view whose range starts below base* (a
   *retired view*), and none names a retired id (canon.py sends the latter whole);
4. no process lagged behind the retired prefix and read it from disk, no position
   retired before its send came (canon.py's guards); a process that first appears after
   the break (a late joiner) installs only views that are not retired (condition 3), so
   it owes nothing retired, unless some retired position lies before any view (then the
   deliveries it makes before its first view meet retired ones: whole);
5. the counts agree: per process, its retired deliveries summed over its stays are its
   deliveries less those held (the piece that broke the picture counted or not), and
   per sender its held sends are its sends less its retired ones; every delivery in that
   piece lies at or past base (a crashed process's might lie in the retired prefix,
   unjudged).

**Why the witnesses and sentences are the whole trace's.** Let P+ be the processes not
behind at the break. Each p in P+ delivered, in every view u it installed (and before
its first view), all of u's positions below ``base``: it moved on from u (a mover
delivered u's frozen range whole) or u is its view at the break and its cursor is at
``base`` or past it. So for p, q in P+ and any view both installed, their retired
deliveries there are one and the same list, and a process behind delivered a prefix of
it. Then, property by property (first deliveries; each held message is named by no
retired record and each retired one by no held record, by condition 3):

- *integrity*: a retired message is sent once and delivered once by each of its
  deliverers; every violation names held messages only, in the same order, and the
  count is the same.
- *weak total order, global order*: the retired deliveries of each process come first
  and keep S's order; no held delivery leads back to a retired message; so every
  inversion and every cycle lies among held messages, met in the same order.
- *strong total order*: a held delivery's predecessor in its view differs between W and
  H only for a process's first held delivery in the view V* holding position base - 1:
  S[base - 1] in W, none in H. Every process that delivers in V* after the break is in
  P+ and in V* at the break (condition 3), so it is the same substitution for all of
  them, and which predecessors differ is the same; the witness's "delivered before it"
  lists share their retired part.
- *prefix order*: for p, q in P+ the sequences restricted to each other's views start
  with the same retired list R(p, q), so W compares what H compares, k positions later,
  k = |R(p, q)|; a pair with a process behind compares only retired deliveries (a prefix
  of the other's) in W, nothing in H.
- *FIFO*: the messages p owes a sender are those sent in views p installed (or that p
  delivered); the retired ones among them are exactly those p delivered there, first,
  in the sender's send order (condition 1), so the held check counts from the same place.
- *causal order*: a retired dependency of a held send was sent in a view; p owes it only
  if p installed that view, and then delivered it before any held delivery
  (reduced.py's ``without_retired``).
- *view agreement, view sequence*: they read only view, crash, join and leave records,
  all held.
- *same-view and sending-view delivery*: a held delivery's view and a held send's view
  are read from the same view records; the retired messages keep both (the picture).
- *virtual synchrony*: every process with epoch (V, V') delivered in V the same retired
  messages (all of V's positions below base), so its set in W is that set plus its set
  in H, and the union likewise: the same processes fall short by the same messages.

Witnesses are shifted per process: a delivery by r_p, a send by its sender's retired
sends; a sentence's "#k" names a delivery of the witness (its last with that index:
strong order's "only later, as #k" is q's, the other templates' p's), and prefix
order's "after the same k deliveries" (and its ``position``) moves by |R(p, q)|.

- *agreement, validity, liveness*: a correct process not behind delivered every retired
  message of the views it installed, and one behind (a leaver) all of those it moved on
  from; its own retired sends too (it holds the low watermark until it delivers them).
  So no retired message is owed and missing: the first violation in their orders
  (deliverers, then their deliveries; senders, then their sends; message ids) is among
  held messages, and the correct processes and the final view are read from the held
  view and crash records. Their witness ends with "the last event of q", q's latest
  record, which may have retired: canon.py keeps each process's latest record as the
  records come, and it replaces the held records' last one. A process with no held
  record at all (every record of it retired) would be missing from the correct
  processes the held records show: such a trace goes whole for these (``stands``).

- *member liveness*: a pair (a correct sender's message, a correct process q) is judged
  only when q did not deliver the message; among the held messages its exact check on
  the held records (each process's latest join, its views, the held sends' clocks)
  meets the same pairs, in the same order. A correct process that did not deliver every
  retired position (a member from the start that skipped a view owes it every message
  of a correct sender, whatever views it installed; a late joiner by the clocks) may owe
  a retired pair: those are decided from each process's retired deliveries per view
  (``ViewPrefix.per_view``: the positions of each view's range it missed) and the
  retired sends on disk, and merged with the held records' first pair by sender
  (prefixowed.py). Before, such a trace went whole.

Latency combines the retired prefix's tally with the held records' (reduced.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
import pyarrow.compute as pc

from ..chunk import CRASH, DELIVER, VIEW, Piece, kind_codes
from ..result import Result, WitnessEvent
from .views import NONE

if TYPE_CHECKING:
    from ..properties import Property
    from .canon import TraceState

__all__ = ["CARRIED", "ViewPrefix", "carries", "installed", "stands", "summarize"]

MEMBER_LIVENESS = "member-liveness"

#: the end-of-trace properties whose exact checks on the held records stand for the
#: whole trace with the retired views carried over (module docstring), by name
CARRIED = frozenset({"agreement", "validity", "liveness", MEMBER_LIVENESS})


def carries(prop: Property) -> bool:
    """Whether ``prop``'s exact check on a broken view trace's held records, its retired
    views carried over, is the whole trace's (an end-of-trace property: when every
    process has a held record, ``stands``; member liveness with its retired pairs merged
    in, prefixowed.py)."""
    name = prop.name.split("@")[0]
    return (prop.held or name == MEMBER_LIVENESS) and (not prop.final() or name in CARRIED)


@dataclass(frozen=True)
class ViewPrefix:
    """What the retired prefix of a view trace was, per process, when it broke."""

    #: per process name, its retired deliveries (its first ones)
    delivered: dict[str, int]
    #: per process name, its retired sends (its first ones)
    sent: dict[str, int]
    #: per process name, per view it installed (name; None: before its first view),
    #: its retired deliveries there
    per_view: dict[str, dict[str | None, int]]
    #: the views whose range starts below the retired prefix's end
    retired_views: frozenset[str]
    #: the process codes (canon.py's) behind the retired prefix at the break
    behind: frozenset[int]

    def refutes(self, piece: Piece, kinds: np.ndarray, proc: np.ndarray) -> str:
        """Why records read after the break refute the carried prefix (conditions 2 and
        3 of the module docstring), else ""."""
        if self.behind and bool((np.isin(proc, list(self.behind)) & (kinds != CRASH)).any()):
            return "a process behind the retired prefix logs a record after the break"
        rows = np.flatnonzero(kinds == VIEW)
        if len(rows) and self.retired_views:
            col = piece.table.column("view")
            if any(col[int(r)].as_py() in self.retired_views for r in rows):
                return "a view whose range starts in the retired prefix installed after the break"
        return ""

    def welcomes(self) -> bool:
        """Whether a process that first appears after the break stands for itself: it
        owes only the views it installs, none of them retired (``refutes``), so only what
        it delivers before its first view could meet a retired delivery."""
        return not any(mine.get(None, 0) for mine in self.per_view.values())

    def common(self, p: str, q: str, installed: dict[str, set[str]]) -> int:
        """|R(p, q)|: p's retired deliveries before its first view and in views q
        installed."""
        mine = self.per_view.get(p, {})
        return sum(n for v, n in mine.items() if v is None or v in installed.get(q, ()))

    def shift(self, res: Result, installed: dict[str, set[str]],
              last: dict[str, WitnessEvent] | None = None) -> Result:
        """``res`` found on the held records, with positions counted from the trace's
        start (module docstring); ``last``: each process's latest record, the last event
        an end-of-trace witness ends with."""

        def event(w: WitnessEvent) -> WitnessEvent:
            if w.index is None:
                return w
            if w.kind == "deliver":
                return replace(w, index=w.index + self.delivered.get(w.process, 0))
            if w.kind == "send":
                return replace(w, index=w.index + self.sent.get(w.process, 0))
            return w

        def delivery(m: re.Match) -> str:
            k = int(m.group(2))
            # the witness's delivery with that index; the last one: strong order's "only
            # later, as #k" is the last event's (q's), every other template's are p's
            who = [w.process for w in res.witness if w.kind == "deliver" and w.index == k]
            add = self.delivered.get(who[-1], 0) if who else 0
            return f"{m.group(1)}#{k + add}"

        text = re.sub(r"(as |\()#(\d+)", delivery, res.explanation)
        details = dict(res.details)
        pair = [w.process for w in res.witness if w.kind == "deliver"]
        if res.clause == "diverge" and len(pair) == 2:  # prefix order
            k = self.common(pair[0], pair[1], installed)
            text = re.sub(r"after the same (\d+) deliveries",
                          lambda m: f"after the same {int(m.group(1)) + k} deliveries", text)
            if "position" in details:
                details["position"] += k
        witness = [event(w) for w in res.witness]
        if last and res.property.split("@")[0] in CARRIED and witness and \
                witness[-1].index is None and witness[-1].process in last:
            # "the last event of q": its latest record, which may have retired
            witness[-1] = last[witness[-1].process]
        return replace(res, witness=witness, explanation=text, details=details)


def summarize(state: TraceState) -> ViewPrefix | str:
    """The retired prefix of ``state`` (a trace with views, broken now, with positions
    retired), or why the held records cannot stand for it (module docstring)."""
    vs = state.views
    names = list(state.procs)
    np_ = len(names)
    if vs is None:
        return "views appeared only with the break"
    # per process, its held deliveries before the latest piece and in it: the piece
    # that broke the picture may have been counted (a break among its deliveries) or
    # not (a break among its sends, before them)
    held_d = np.zeros((2, np_), np.int64)
    for i, (piece, codes) in enumerate(state.buffer):
        if codes is not None and (codes == -2).any():
            return "a held record names a retired id"
        kinds = kind_codes(piece.table.column("kind"))
        d = kinds == DELIVER
        if d.any():
            proc = np.array([state.procs[x] for x in
                             piece.table.column("process").to_pylist()], np.int64)
            held_d[int(i == len(state.buffer) - 1)] += \
                np.bincount(proc[d], minlength=np_)[:np_]
    base = state.base
    cur = state.cursor[:np_]
    # a process whose view's range has not started delivers from S's end on
    pos = np.where(cur >= 0, cur, base + len(state.S))
    if ((held_d[1] > 0) & (pos - held_d[1] < base)).any():
        # a process (a crashed one: the others hold the low watermark) whose deliveries
        # in the piece that broke the picture may lie in the retired prefix, unjudged
        return "a delivery in the records that broke the picture may lie in the retired prefix"
    per_view: dict[str, dict[str | None, int]] = {}
    send_base: list[dict[int, int]] = []
    retired = np.zeros(np_, np.int64)
    for i in range(np_):
        stays = vs.stays[i]
        ends = [s[1] for s in stays[1:]] + [int(state.dcount[i])]
        mine: dict[str | None, int] = {}
        total = 0
        for (v, first, _, _), end in zip(stays, ends):
            off, n = vs.offset[v], end - first
            below = 0 if off < 0 else min(max(base - off, 0), n)
            if below:
                key = None if v == NONE else vs.names[v]
                mine[key] = mine.get(key, 0) + below
                total += below
        counted = int(state.dcount[i]) - int(held_d[0, i])
        if total not in (counted - int(held_d[1, i]), counted):
            return "a process's retired deliveries do not lie where its views say"
        retired[i] = total
        per_view[names[i]] = mine
        send_base.append({s[0]: s[2] for s in stays})
    # condition 1: each sender's held sends are numbered from its retired sends on
    n = state.nmsgs
    snd = state.sender[:n]
    for i in range(np_):
        mine = np.flatnonzero(snd == i)
        if int(state.scount[i]) != int(state.soff[i]) + len(mine):
            return "a sender's sends are neither retired nor held"
        if not len(mine) or not state.soff[i]:
            continue
        at = np.array([send_base[i].get(int(v), -1) for v in state.sview[mine]], np.int64)
        if (at < 0).any() or int((at + state.rank[mine]).min()) < int(state.soff[i]):
            return "a sender's retired sends are not its first ones"
    behind = np.flatnonzero(state.seen[:np_] & (pos < base))
    retired_views = frozenset(vs.names[v] for v in range(1, len(vs.names))
                              if 0 <= vs.offset[v] < base)
    return ViewPrefix({names[i]: int(retired[i]) for i in range(np_)},
                      {names[i]: int(state.soff[i]) for i in range(np_)}, per_view,
                      retired_views, frozenset(behind.tolist()))


def stands(state: TraceState) -> bool:
    """Whether every process of the trace has a held record (the end-of-trace properties
    judge the processes the records show, and cite each one's last event). Member
    liveness's pairs whose message is retired (a member from the start that skipped a
    view owes it every message of a correct sender, a late member by the clocks) are
    decided from each process's retired deliveries per view (prefixowed.py)."""
    present: set[str] = set()
    for piece in state.held_iter():
        present.update(pc.unique(piece.table.column("process")).to_pylist())
    names = list(state.procs)
    return all(names[i] in present for i in np.flatnonzero(state.seen[:len(names)]))


def installed(pieces: list[Piece]) -> tuple[dict[str, set[str]], set[str]]:
    """Per process, the views it installs in the held records (all its view records); and
    the processes with a held record."""
    out: dict[str, set[str]] = {}
    present: set[str] = set()
    for piece in pieces:
        t = piece.table
        present.update(pc.unique(t.column("process")).to_pylist())
        kinds = kind_codes(t.column("kind"))
        rows = np.flatnonzero(kinds == VIEW)
        if not len(rows):
            continue
        procs = t.column("process").to_pylist()
        views = t.column("view").to_pylist()
        for r in rows.tolist():
            out.setdefault(procs[r], set()).add(views[r])
    return out, present
