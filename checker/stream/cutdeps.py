"""What the cut's two sides name of each other: dependencies, and views' member sets.

narrow.py (without views) and viewcut.py (with views) cut a long broken trace at a set
M of messages: the records naming M (and, with views, every membership record) go to
the exact checks (H_M), the rest, the tail, to a fresh canonical pass that keeps its
picture to its end. Causal order (checker/properties/causal.py) reads each send's
``deps``, and a dependency may lie on the other side. This module gathers, during the
cut's second pass, what the argument below needs, and ``serves`` checks it at its end.

**What each side checks.** The tail's pass checks each dependency of a tail message as a
clean pass does (canon.py): in its window before the message in its sequence S', or
among its retired ids, which are the trace's retired ids, M, and its own retired
prefix. The held records' retired dependencies are left out of their lists before the
exact checks (reduced.py's ``without_retired``: every process delivered them before any
held delivery). The exact check reads H_M.

**The conditions** (besides the cut's own; with "deps" read after ``without_retired``):

c1. no tail record names a dependency of a message of M that is neither in M nor
    retired (``named``): such a dependency is a tail message, or named nowhere;
c2. every continuing process (one that delivers past its cut) delivered, among its
    first deliveries of M, every message of M that a tail message depends on
    (``needed``), unless, with views, it owes it nothing: the message is sent, and none
    of its sending views (each sender's installed view at its first send of it) is one
    it installed;
c3. if a tail send carries deps, a send of M does (``carried``).

**Why the exact check on H_M gives H's first violation, witness and sentence.** The
check scans processes by name, each one's first deliveries in order, each delivery's
dependencies in their fixed order (causal.py's ``_deps``: every send of the message,
senders by name, each sender's in its order); a dependency d of p's delivery of m at
index i fails when p delivers d nowhere before i, unless, with views, p owes d nothing.
The records split by message id, so every send of m, and so its dependency list, lies on
m's side, and each process's deliveries of M are its first K_p held deliveries, the same
records at the same indexes on both sides (the cut's condition 1); each sender's sends of
M are its first held sends. With views every membership record is on both sides, so
each process's installed views and each message of M's sending views are the same.

- *a delivery past a process's cut* (a tail message t, at p) never fails in H. A
  dependency of t is retired (left out), or a tail message, or in M, or named nowhere.
  A tail message lies before t in S' (the tail's pass holds), which p delivers as a
  prefix (view by view with views: the tail's picture) after all of its deliveries of
  M, so p delivered it before t, as in the tail (and a dependency p owes nothing keeps
  its excuse: its sends and p's installs are the same records). One in M: p delivered
  it among its first K_p deliveries, before t, or owes it nothing (c2). One named
  nowhere breaks the tail's pass (neither in its window nor retired): no cut.
- *a delivery of m in M* reads the same dependency list on both sides. A dependency in
  M has the same first delivery at p on both sides; one that is retired was left out of
  both; any other is named by no record of H (c1), so p delivers it nowhere and owes it
  (no send names its sending view) on both sides: the same verdict for each pair.

So H's violations are H_M's, at the same (process, delivery, dependency), met in the
same order, with the same witness (m's send, p's delivery of m, p's later delivery of d
if there is one: all records of M) and sentence; shifted back by the retired prefix as
any held witness (reduced.py). The *unknown* verdicts: a trace without sends is not cut
(narrow.py's condition 4 asks sends before the cut wherever sends come after it); "no
send carries deps" reads the same on both sides by c3 (a send of M that carries deps is
one of H's), and when the retired sends carried deps and no held send does, the trace
goes whole as before (reduced.py's ``deps_held``).

What the conditions refuse keeps the held path: a message of M that depends on a tail
message (a causal violation at every process that delivers it: its witness would name
the tail's delivery), a tail message depending on a message of M that a continuing
process skipped (a gap at it), or a tail dependency named nowhere (a second breach).

**Crashes** (with views: crash records are on both sides). The correct-process scope
judges the trace without its crashed processes' records (scope.py's ``in_scope``): a
message of M sent only by crashed processes has no send there, so it has no sending
view (c2's excuse reads otherwise) and its deps are not read (c3 reads otherwise). So
when a held process crashes, c2 counts a message of M owed when it is in either
reading (``owed``: its sends, or those of the processes that do not crash; a message
with no send is owed by all), and c3, with "some process sends" (causal order's other
*unknown*), is read again on the sends of the processes that do not crash; which scope
is asked does not matter (both are then met). "Some process sends" is also integrity's
and FIFO's *unknown*, asked with or without causal order: narrow.py's condition 4
reads it through the same ``sent_before``, so a cut whose messages are sent only by
processes that crash, before a tail sent by others, is refused in both scopes (its
records would read FIFO's "no send events logged" in the correct-process scope where
the whole trace reads the tail's sends).

Memory: per cut, a flag per message of M, and the dependencies of M's sends that lie
outside M and outside the retired ids (usually none: a dependency never sent).

**A breach among the membership records** (with views). The tail's pass replays every
membership record (viewcut.py), so a breach among them broke the tail too: no cut. Four
kinds are read by view agreement (and view sequence) alone, on the membership records,
which are on both sides in their local orders, so that their first violation, witness
and sentence are the same on H_M as on H:

- *one view id installed with two member sets*, and *a process installing a view whose
  members leave it out*. Of the properties the cut serves (``MEMBERS_UNREAD``), only
  view agreement reads member sets. The others read view ids (each record's installed
  view, each process's installed views and stretches, each view's epochs), never
  members. So the tail's pass leaves member sets unjudged (views.py's
  ``judge_members``) and keeps its picture with views on everything else, which is what
  viewcut.py's argument reads of it; the cut is then taken for those properties only
  (agreement, validity, liveness and member liveness read who the members are, the
  final view's among them: a cut whose tail left a member set unjudged is refused for
  them, narrow.py's ``result``).
- *a smaller numeric id after a greater one* (every id a number). Only view agreement's
  decreasing-view-id clause reads ids as numbers; every other property reads them as
  names (liveness's final view breaks a tie by the greater id as a string), and the
  tail's one order of views is their order of first appearance, which a decreasing
  number does not disturb. The tail leaves the numeric order unjudged (views.py,
  ``decreasing``) and the cut serves every property.
- *a view installed again at once*: a process installs the view it is in again, in the
  same stretch, having delivered and sent no tail message since its install (views.py,
  ``reinstalled``: the tail reads it as one install). Every property but view agreement
  and view sequence reads the same of it as of one install: each record's installed
  view (trace.py's latest view record) is the same, so are the installed views (sets:
  the membership rules of FIFO, causal order, prefix order, agreement, validity,
  liveness; member liveness's views since a join), strong order's runs of first
  deliveries in one view (a run breaks on a change of view, not on an install), same-view
  and sending-view delivery. Virtual synchrony reads the process's epochs install by
  install: (V, V), which no other process has, holds only what it delivered between the
  two installs, all of it messages of M (none of the tail's), and its epoch (V, V')
  lacks exactly those: the union of the movers' sets less its own is then a set of M's
  messages on both sides (the tail's parts are equal among the movers, the tail's
  picture), so the same short process and least missing message are met on H_M.

The other kinds cannot be cut this way:

- *a view installed again after tail deliveries in it* (V, then V again, the process
  having delivered tail messages between): its epoch (V, V') after the second install
  lacks them, so virtual synchrony's first violation may be a tail message, which the
  cut's records do not hold, and the tail's layout has one range per view and one stay
  per install of it, with no place for a second epoch of V.
- *a view installed again after another* (V, V', V), *views out of their one order*
  (one process installs V3 before V2, the others V2 before V3) and *a smaller index than
  the current view*: the tail lays each view's range of S' where the frozen one before
  it ended, in the one order of views; a process that goes back delivers in V after V'
  began, so its deliveries there lie before V's successor's range at the others and
  after it at itself: no one S' holds both, and the tail's picture (each process
  delivers view by view prefixes of one sequence) is false of the tail even where no
  order property breaks there. Strong order (per view), prefix order (restricted to
  common views) and virtual synchrony (per epoch: (V3, V2) at one process, (V2, V3) at
  the others) would need the exact checks on the tail's records, which is what the cut
  avoids.
- *a fork or a merge* (V followed by V' at p and by V'' at q, or one view following two):
  the views form a tree, two ranges would grow at once from where V ended (a
  partitionable run: Chockler, Keidar and Vitenberg 2001, section 4, against the one
  sequence of a primary component that views.py lays out), and a tail message delivered
  in V' by p and in V'' by q breaks same-view delivery in the tail, whose first
  violation in H may be that tail message when no message of M is delivered on both
  branches.

For these the tail would have to carry a view state that is not one sequence (per
branch, or per epoch), or begin from each process's view at its cut with the breach
judged on the cut's records only; neither is built (the first changes views.py's
layout, the second the tail's view state, which the end-of-trace properties read as
the trace's). Such a trace keeps the held path (viewheld.py) or goes whole, as before.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..chunk import CRASH, SEND
from ..properties import Property
from .canon import TraceState
from .hashes import RetiredIds, hash_ids

__all__ = ["CAUSAL", "CutDeps", "asks_causal", "members_unread", "owed"]

#: the property whose witnesses need this module's conditions, by name without its scope
CAUSAL = "causal-order"


def asks_causal(props: Sequence[Property]) -> bool:
    return any(p.name.split("@")[0] == CAUSAL for p in props)


#: the properties whose exact checks read no member set but on membership records (view
#: agreement), by name without their scope: a cut whose tail left member sets unjudged
#: serves them (module docstring, "A breach among the membership records")
MEMBERS_UNREAD = frozenset({"integrity", "total-order-weak", "total-order-strong",
                            "global-order", "prefix-order", "fifo-order", "causal-order",
                            "latency", "realtime-latency", "view-agreement",
                            "view-sequence", "same-view-delivery", "sending-view-delivery",
                            "virtual-synchrony"})


def members_unread(props: Sequence[Property]) -> bool:
    return all(p.name.split("@")[0] in MEMBERS_UNREAD for p in props)


def owed(installed: dict[int, set[int]], sp: np.ndarray, sm: np.ndarray, sv: np.ndarray,
         n: int, k: int, crashed: frozenset[int] = frozenset()) -> np.ndarray:
    """Per process (of ``n``) and message of M (of ``k``), whether the process owes it
    (causal.py's membership rule): the message has no send, or one of its sending views,
    each sender's installed view at its first send of it, is a view the process
    installed; the sends of M in order by sender ``sp``, message ``sm``, installed view
    ``sv`` (-1: none yet), the processes' installed views ``installed`` (viewcut.py's
    ``Continuing``). With ``crashed`` processes, owed in either scope: the
    correct-process one reads the sends of the others only (module docstring)."""
    out = np.ones((n, k), bool)
    sent = np.unique(sm)
    out[:, sent] = False
    if len(sp):
        _, first = np.unique(sp * k + sm, return_index=True)
        fm, fv = sm[first], sv[first]
        for q in range(n):
            mine = installed.get(q)
            if mine:
                out[q, fm[np.isin(fv, np.fromiter(mine, np.int64))]] = True
    if crashed:
        alive = ~np.isin(sp, np.fromiter(crashed, np.int64))
        out |= owed(installed, sp[alive], sm[alive], sv[alive], n, k)
    return out


def _distinct_hashes(arr: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Both hashes of each distinct id of ``arr`` (strings, nulls skipped), and each
    row's index among them (-1: null): hashing the distinct ids only."""
    enc = pc.dictionary_encode(arr)
    idx = enc.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    v1, v2 = hash_ids(enc.dictionary)
    return v1, v2, idx


class CutDeps:
    """Conditions c1 to c3 of the module docstring, gathered as the cut's second pass
    (narrow.py's ``Cut``) is fed the held records: M's first hashes ``m1`` (sorted) and
    second ``m2``; ``retired``: the trace's retired ids (without M)."""

    def __init__(self, m1: np.ndarray, m2: np.ndarray, retired: RetiredIds) -> None:
        self.m1, self.m2, self.k = m1, m2, len(m1)
        self.retired = retired
        self.needed = np.zeros(self.k, bool)  # c2: M's messages a tail message depends on
        #: processes (the cut's codes) that crash, that send M or a tail message, that
        #: send one with deps: "some process sends" in both scopes (below, "Crashes";
        #: ``sent_before``)
        self.crashed: set[int] = set()
        self.senders = {"m": set(), "tail": set(), "m deps": set(), "tail deps": set()}
        #: c1: the first hashes of M's dependencies outside M and the retired ids
        self.outside = np.zeros(0, np.uint64)
        self.named = False  # c1 refuted: a tail record names one of them

    def _in_m(self, v1: np.ndarray, v2: np.ndarray) -> np.ndarray:
        """Each id's index in M (-1: outside M)."""
        if not self.k:
            return np.full(len(v1), -1, np.int64)
        i = np.minimum(np.searchsorted(self.m1, v1), self.k - 1)
        hit = (self.m1[i] == v1) & (self.m2[i] == v2)
        return np.where(hit, i, -1)

    def feed(self, table: pa.Table, kinds: np.ndarray, proc: np.ndarray, mi: np.ndarray,
             tail_rows: np.ndarray, tail: TraceState) -> None:
        """A held piece (before its tail rows are fed to ``tail``, the tail's canonical
        pass): each row's process (the cut's codes), its index in M (``mi``, -1 outside
        M) and whether it goes to the tail (``tail_rows``)."""
        self.crashed.update(proc[kinds == CRASH].tolist())
        sends = kinds == SEND
        self.senders["m"].update(np.unique(proc[sends & (mi >= 0)]).tolist())
        self.senders["tail"].update(np.unique(proc[sends & tail_rows]).tolist())
        if "deps" in table.column_names:
            deps = table.column("deps").combine_chunks()
            if deps.null_count < len(deps):
                has = sends & np.asarray(deps.is_valid().to_numpy(zero_copy_only=False), bool)
                self.senders["m deps"].update(np.unique(proc[has & (mi >= 0)]).tolist())
                self.senders["tail deps"].update(np.unique(proc[has & tail_rows]).tolist())
                self._of_m(deps, has & (mi >= 0), tail)
                self._of_tail(deps, has & tail_rows)
        if len(self.outside) and not self.named and tail_rows.any():
            # a tail record naming one of M's dependencies outside M (c1)
            ids = table.column("msg").combine_chunks().take(pa.array(np.flatnonzero(tail_rows)))
            if ids.null_count < len(ids):
                v1, _, _ = _distinct_hashes(ids.cast(pa.string()))
                self.named = bool(np.isin(v1, self.outside).any())

    def _flat(self, deps: pa.Array, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Both hashes of the distinct dependencies of ``rows`` (a mask)."""
        lists = deps.take(pa.array(np.flatnonzero(rows)))
        flat = pc.list_flatten(lists)
        if not len(flat):
            return np.zeros(0, np.uint64), np.zeros(0, np.uint64)
        v1, v2, _ = _distinct_hashes(flat.cast(pa.string()))
        return v1, v2

    def _of_m(self, deps: pa.Array, rows: np.ndarray, tail: TraceState) -> None:
        if not rows.any():
            return
        v1, v2 = self._flat(deps, rows)
        out = (self._in_m(v1, v2) < 0) & ~self.retired.contains(v1)
        if not out.any():
            return
        new = v1[out]
        # read by the tail already: in its window, or among its retired ids (the trace's
        # and M's are left out above, so a hit is a tail message)
        if (tail.ids.get(new) >= 0).any() or tail.retired.contains(new).any():
            self.named = True
        self.outside = np.union1d(self.outside, new)

    def _of_tail(self, deps: pa.Array, rows: np.ndarray) -> None:
        if not rows.any():
            return
        v1, v2 = self._flat(deps, rows)
        at = self._in_m(v1, v2)
        self.needed[at[at >= 0]] = True

    def sent_before(self, what: str = "") -> bool:
        """Whether, if a tail send is read (one carrying deps, with ``what`` " deps"), a
        send of M is too, in both scopes: the correct-process one reads the sends of the
        processes that do not crash only (module docstring, "Crashes"). Else the exact
        checks on the cut's records would read "no send" (or "no deps") where the whole
        trace reads the tail's: integrity's, FIFO's and causal order's *unknown*
        (narrow.py's condition 4; c3 here)."""
        tail, m = self.senders["tail" + what], self.senders["m" + what]
        if tail and not m:
            return False
        return not (tail - self.crashed and not m - self.crashed)

    def serves(self, got: np.ndarray, continuing: np.ndarray,
               owes: np.ndarray | None = None) -> bool:
        """Conditions c1 to c3 at the end of the pass: per process (narrow.py's codes)
        which messages of M it delivered (``got``), whether it continues past its cut;
        with views, which messages of M it owes (``owes``: one of their sending views is
        one it installed; None without views: every one)."""
        if self.named or not self.sent_before(" deps"):
            return False
        if not self.needed.any():
            return True
        n = len(continuing)
        going = np.flatnonzero(continuing)
        lack = ~got[:n][going][:, self.needed]
        if owes is not None:
            lack &= owes[:n][going][:, self.needed]
        return not lack.any()
