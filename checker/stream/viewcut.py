"""The cut after a breach in a trace with views: the view state carried into the tail.

narrow.py cuts a broken trace of sends and deliveries after its breach: a set M of
messages, per process p the count K_p of its held deliveries that name M, the records
naming M kept for the exact checks, the others (the *tail*) fed to a fresh canonical
pass that must keep its picture to the end. Every real system's recorder writes views,
so a soak trace broken early is a trace with view, join, leave and crash records (the
*membership records*), and without this module it holds every record after its break
(viewheld.py's exact checks on all of them). This module is what the cut needs besides
with views; the second pass itself is narrow.py's (``Cut``), told to route membership
records to both sides.

**What each side reads.** The held records H of a trace with views hold every
membership record since the trace's start (canon.py keeps them for the trace's life).
The cut's exact checks read H_M: the records naming M and *every* membership record, in
their order. The tail's canonical pass reads the records naming other messages and,
again, every membership record in its order: replaying them from the start lays the
views out on the tail's sequence S' as canon.py lays them on S, with the views (and
the deliveries) before the cut empty there, so the tail's view state at the cut is the
trace's (who installed which view with which members, each process's stays and
stretches, joins, leaves and crashes) with M's deliveries taken out. A view that holds
the cut at some process starts its range at S'[0].

**The conditions** (besides narrow.py's 1 to 3 and its ``NARROWED`` properties, which
hold here with "sends and deliveries" read as "sends, deliveries and membership
records"):

4v. the tail's pass keeps its picture with views to its end (views.py), with no frozen
    view whose sends its range lacks (``Views.gaps``: FIFO's membership rule would
    read such a view whole); both sides log sends or neither; M has a delivery;
5v. write A_p for p's first deliveries of M, B_p for its deliveries after its cut, and
    call p *continuing* when B_p is not empty; t_p is B_p's first message, v_p the view
    p had installed at it, and z_p the last of A_p when p delivered it in v_p (else
    none). Then (``agree``):
    - *strong order*: the continuing processes with one (v_p, t_p) share z_p, and
      where z_p is a message, t_p is the tail's first delivery S'[0];
    - *prefix order*: for a continuing p and any q, A_p restricted to the views q
      installed is not a proper prefix of A_q restricted to the views p installed
      (unless q installed no view and p's first delivery past its cut was made in one);
    - *FIFO*: a continuing p delivers in A_p, for some sender s of M, a place of s in
      M that p owes (a message s sent, at its first send of it, in a view p installed,
      or one p delivers: fifo.py) after one it lacks (its scan breaks within A_p); or
      else p delivers every place in M it owes of each sender that sends outside M.

**Why the exact checks on H_M give H's first violations, witnesses and sentences.**
Each process's deliveries of M are its first K_p held deliveries and each sender's
sends of M its first held sends (condition 1), so they are the same records at the same
indexes on both sides; every membership record is on both sides, in the same local
order, so a record's installed view (trace.py: the process's latest view record before
it), each process's installed views and each view's epochs are the same on both sides.
The tail keeps the picture with views, so every order and view property holds on the
tail (views.py), with the same views. Property by property, in each exact check's fixed
order:

- *integrity, weak total order, global order*: they read no view; narrow.py's argument
  holds as it is (every process delivers all of A_p before B_p).
- *strong total order*: a delivery's predecessor is the previous first delivery of
  its process in the same view. For a message of M it is a message of M, the same on
  both sides. For a message t outside M delivered by q in view v it is the tail's
  predecessor, except at q's first delivery past its cut, where it is z_q; the tail's
  picture gives every deliverer of t in v one predecessor, which is none when t = t_p
  for some continuing p. So where z_p is none for every p with (v_p, t_p) = (v, t),
  H's predecessors of t in v are all none; where they share a message z, t is S'[0],
  which every deliverer delivers as its first message past its cut (a process's
  positions on S' grow along its deliveries) and in one view (the picture), so every
  deliverer of t in v has t_q = t and z_q = z. Either way no violation lies outside M,
  and the scan (processes by name, their first deliveries in order) meets the same
  first one among M's, with a witness that reads deliveries in v before it: M's.
- *prefix order*: the sequences a pair compares are A_p|q then B_p|q (restricted to
  the views the other installed: the same sets on both sides). A first difference
  below both lengths of the A's is the same on both sides; equal A's go on with the
  B's, prefixes of each other by the tail's prefix order on the same views; an A_p|q
  that is a proper prefix of A_q|p belongs to a process that does not continue (5v),
  or to one whose B_p|q is empty (q installed no view, and p's deliveries past its cut
  are all made in views: a record's view is its process's latest view record, and p's
  first one past its cut had one), whose sequence ends there on both sides.
- *FIFO*: p owes s the messages s sent in views p installed and those p delivers;
  s's messages of M come first in s's order (condition 1), and which of them p owes
  is the same on both sides (installed views, p's deliveries of M). A process that
  does not continue is scanned on the same records on both sides. After a place of
  some sender s it cannot count, a continuing one's count of s never passes it, so a
  later place of s in A_p breaks its scan there at the latest: its first violation lies
  among its deliveries of M, whatever it owes the other senders (5v; the check
  reports each process's first violation only). Else it counts all it owes of every
  sender that sends outside M, and either breaks among A_p (the same first violation),
  or starts B_p at each such sender's first owed place outside M, whose scan is the
  tail's FIFO on the same views (it holds: 4v).
- *view agreement, view sequence*: they read membership records only: all of them are
  on both sides.
- *same-view and sending-view delivery*: per message; a message outside M is delivered
  in one view, its sending view (the tail's picture), with the same views on both
  sides: every violation names a message of M, met in the same order.
- *virtual synchrony*: a process's set in V (between its installs of V and the next)
  is its set of M there plus its set of the tail there; the tail's sets are equal
  among the processes with one epoch (V, V') (movers deliver all of a frozen range),
  so the union less a process's set is the same on both sides, and so are the first
  short process, its missing message (the least) and its witness.

Then viewheld.py carries each process's retired prefix into H_M's witnesses, as into
H's: its argument reads each process's deliveries per installed view, the same on H_M
(every view record) for the messages M's witnesses name.

**The end-of-trace properties.** Agreement, validity, liveness and member liveness ask
who owes what of every message: the tail's clean pass answers it for the tail's
messages (it replays every membership record, so who installed, left, crashed and
joined is the trace's), and cutowed.py merges that with the exact checks on H_M; a
cut whose tail left a member set unjudged is refused for them (they read who the
members are: cutdeps.py, "A breach among the membership records").

**What the cut does not serve by this argument alone.** Causal order and latency are
served with conditions of their own (cutdeps.py, latencies.py). A breach among the
membership records themselves breaks the tail too, which replays every membership
record, unless view agreement alone reads it on the membership records (cutdeps.py, "A
breach among the membership records": member sets, a smaller numeric id, a view
installed again at once); a view installed again after tail deliveries in it, views
out of their order, a fork or a merge keep the held path (cutdeps.py says why).

**A process with no membership record** (a trace with views whose process installs no
view) is on one side only: silent in the tail, it is told to the tail's summary
(cutowed.py, "A process silent in the tail"); first seen in the tail, narrow.py tries
the cut that holds its first record (``Heads``).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..chunk import DELIVER, VIEW

__all__ = ["Continuing", "agree"]


class Continuing:
    """What condition 5v needs of the cut's second pass (narrow.py), gathered as the held
    records come, per process by its code in narrow.py's ``Procs``: the view it has
    installed (view codes, in order of first appearance; -1: none yet), the views it
    installed, the installed view at each of its first deliveries of M and at each send
    of M; once it delivers past its cut, that first delivery's message and view (t_p,
    v_p); and the tail's first delivery S'[0]."""

    def __init__(self) -> None:
        self.codes: dict[str, int] = {}
        self.view: dict[int, int] = {}
        self.installed: dict[int, set[int]] = {}
        self.first: dict[int, tuple[str, int]] = {}
        self.head: str | None = None
        self.seen_view = False
        #: per process, the view of each of its first deliveries of M (narrow.py's
        #: ``Deliveries.seqs``, in the same order)
        self.dviews: dict[int, list[np.ndarray]] = {}
        #: the view of each send of M (narrow.py's ``Cut.send_p``, in the same order)
        self.sviews: list[np.ndarray] = []
        #: strong order's part, as processes continue: (v_p, t_p) -> z_p (-1: none)
        self.keyed: dict[tuple[int, str], int] = {}

    def row_views(self, table: pa.Table, kinds: np.ndarray, proc: np.ndarray) -> np.ndarray:
        """Each row's installed view (the view record itself counts), as trace.py's
        ``view_at`` reads it; notes each process's view and installs for later pieces."""
        out = np.full(len(kinds), -1, np.int64)
        vrows = np.flatnonzero(kinds == VIEW)
        code = np.full(len(kinds), -1, np.int64)
        if len(vrows):
            self.seen_view = True
            names = table.column("view").take(pa.array(vrows)).to_pylist()
            code[vrows] = [self.codes.setdefault(v, len(self.codes)) for v in names]
        for q in np.unique(proc).tolist():
            rows = np.flatnonzero(proc == q)
            mine = code[rows]
            at = np.where(mine >= 0, np.arange(len(rows)), -1)
            last = np.maximum.accumulate(at)
            before = self.view.get(q, -1)
            out[rows] = np.where(last >= 0, mine[np.maximum(last, 0)], before)
            if (mine >= 0).any():
                self.installed.setdefault(q, set()).update(mine[mine >= 0].tolist())
                self.view[q] = int(out[rows[-1]])
        return out

    def feed(self, table: pa.Table, kinds: np.ndarray, proc: np.ndarray,
             outside: np.ndarray, views: np.ndarray) -> None:
        """A held piece: which rows name a message outside M (the tail's), and each row's
        installed view (``row_views``)."""
        tail_d = np.flatnonzero((kinds == DELIVER) & outside)
        if len(tail_d) and self.head is None:
            self.head = table.column("msg")[int(tail_d[0])].as_py()
        for q in np.unique(proc[tail_d]).tolist():
            if q not in self.first:
                r = int(tail_d[np.argmax(proc[tail_d] == q)])
                self.first[q] = (table.column("msg")[r].as_py(), int(views[r]))

    def continues(self, q: int, last: int, view: int) -> bool:
        """Process q delivers past its cut, its last first delivery of M ``last`` (M's
        code; -1: none) made in ``view``: whether strong order's part of condition 5v
        still holds (checked as processes continue, so that a cut refuted here costs no
        more of the pass; ``_strong`` checks it again at the end)."""
        t, v = self.first[q]
        z = last if view == v else -1
        return self.keyed.setdefault((v, t), z) == z and (z < 0 or t == self.head)

    def delivered(self, q: int, views: np.ndarray) -> None:
        """The views of process q's new first deliveries of M."""
        self.dviews.setdefault(q, []).append(views)

    def sent(self, views: np.ndarray) -> None:
        self.sviews.append(views)


def _cat(parts: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


def agree(cont: Continuing, seqs: list[np.ndarray], got: np.ndarray,
          continuing: np.ndarray, later_send: np.ndarray, sp: np.ndarray,
          sm: np.ndarray) -> bool:
    """Condition 5v of the module docstring: per process (narrow.py's codes) its first
    deliveries of M in order (``seqs``, M's codes) and which of M it delivered (``got``),
    whether it continues past its cut, whether it sends outside M; the sends of M in
    order (sender ``sp``, message ``sm``)."""
    n = len(seqs)
    if not got[:n].any():
        return False  # no delivery of M: integrity's unknown would differ
    dv = [_cat(cont.dviews.get(q, [])) for q in range(n)]
    inst = [np.array(sorted(cont.installed.get(q, ())), np.int64) for q in range(n)]
    going = np.flatnonzero(continuing[:n]).tolist()
    return _strong(cont, seqs, dv, going) and \
        _prefix(cont.seen_view, seqs, dv, inst, going,
                {q: v for q, (_, v) in cont.first.items()}) and \
        _fifo(cont.seen_view, got, inst, going, later_send, sp, sm, _cat(cont.sviews))


def _strong(cont: Continuing, seqs: list[np.ndarray], dv: list[np.ndarray],
            going: list[int]) -> bool:
    """Strong order's part: the continuing processes with one (v_p, t_p) share z_p, and
    a z_p that is a message has t_p = S'[0]."""
    keyed: dict[tuple[int, str], set[int]] = {}
    for q in going:
        t, v = cont.first[q]
        z = int(seqs[q][-1]) if len(seqs[q]) and dv[q][-1] == v else -1
        keyed.setdefault((v, t), set()).add(z)
    return all(len(zs) == 1 and (zs == {-1} or t == cont.head)
               for (_, t), zs in keyed.items())


def _prefix(views: bool, seqs: list[np.ndarray], dv: list[np.ndarray],
            inst: list[np.ndarray], going: list[int], tail_view: dict[int, int]) -> bool:
    """Prefix order's part: a continuing process's A, restricted to the views another
    installed, is no proper prefix of the other's, restricted to the views it installed.
    A process that installed no view is no other for a continuing one whose first
    delivery past its cut was made in a view (``tail_view``): every later record of that
    one is made in a view too (a record's view is its process's latest view record), so
    its deliveries past the cut, restricted to no view, are none, and its sequence ends
    with A on both sides."""

    def restricted(p: int, q: int) -> np.ndarray:
        if not views:
            return seqs[p]
        return seqs[p][(dv[p] < 0) | np.isin(dv[p], inst[q])]

    for p in going:
        for q in range(len(seqs)):
            if q == p or (views and not len(inst[q]) and tail_view.get(p, -1) >= 0):
                continue
            a, b = restricted(p, q), restricted(q, p)
            if len(a) < len(b) and np.array_equal(b[:len(a)], a):
                return False
    return True


def _fifo(views: bool, got: np.ndarray, inst: list[np.ndarray], going: list[int],
          later_send: np.ndarray, sp: np.ndarray, sm: np.ndarray, sv: np.ndarray) -> bool:
    """FIFO's part: a continuing process's scan breaks within M (``scan_in_m``), or it
    delivers every place in M it owes a sender that sends outside M (a message the
    sender sent, at its first send of it, in a view the process installed, or one it
    delivers: fifo.py)."""
    if not len(sp):
        return True
    rows = {s: places(sp, sm, s) for s in np.unique(sp).tolist()}
    later = set(np.flatnonzero(later_send[:len(inst)]).tolist())
    for p in going:
        countable = {}
        for s, r in rows.items():
            have = got[p, sm[r]]
            owed = have | np.isin(sv[r], inst[p]) if views else np.ones(len(r), bool)
            countable[s] = have[owed]
        if not scan_in_m(countable, later):
            return False
    return True


def places(sp: np.ndarray, sm: np.ndarray, s: int) -> np.ndarray:
    """The rows of sender ``s``'s places in M (its first send of each message), in its
    send order, among the sends of M (senders ``sp``, messages ``sm``)."""
    rows = np.flatnonzero(sp == s)
    _, first = np.unique(sm[rows], return_index=True)
    return rows[np.sort(first)]


def scan_in_m(countable: dict[int, np.ndarray], later: set[int]) -> bool:
    """FIFO's part of condition 5 for one continuing process, per sender of M its places
    it owes in M, each whether it delivers it (``countable``); ``later``: the senders that
    send outside M. Its scan breaks within M when, for some sender, it delivers a place
    after one it cannot count (its count of that sender never passes the hole, and a
    sender's places are distinct messages): then its first violation is met among its
    deliveries of M, the same records on both sides, whatever it owes the others.
    Else every sender that sends outside M must have each of its places counted, so that
    the process starts past its cut with every count right."""
    if any(not c.all() and c[int(np.argmin(c)) + 1:].any() for c in countable.values()):
        return True
    return all(countable[s].all() for s in later if s in countable)
