"""The single pass over a trace with views: the views laid out on one delivery sequence.

A view-synchronous run (Chockler, Keidar and Vitenberg 2001, sections 4 and 5) keeps one
picture, which this module and canon.py check as records arrive, in memory bounded by
the open views and the lag rather than the trace's length:

- **views in one order.** Every view id gets an index when it first appears; each process
  installs views in increasing index (so never one twice, and along one order), one view
  id names one member set, an installer is among the members, numeric ids do not
  decrease; within a process's stretch (records between ``crash``, ``join`` and
  ``leave``) each view has one successor and one predecessor (no fork, no merge; a loop
  is impossible when every step goes up in index).
- **one sequence, a range per view.** The deliveries made in a view are a prefix of that
  view's own sequence, laid out on the trace's one canonical sequence S (canon.py) as a
  range: the view before the first one (no view yet) starts at 0; a view's range starts
  where the last range ended, when its first delivery comes, and only once the view
  before it is *frozen*: a process moved on from it (installed a later view), having
  delivered all of it. Every later mover must have delivered exactly that much, and no
  one delivers more in a frozen view. So at most one view grows at a time, each message
  is delivered in one view, and a process's deliveries follow S.
- **sending view.** A message is delivered in the view its sender had installed when it
  sent it; each sender's messages within a view's range come in its send order from its
  first send in that view (FIFO within views).

Every order and view property then holds: each process delivers, view by view, prefixes
of one sequence (total, strong, prefix and global order); processes that move on from a
view delivered the same messages in it (virtual synchrony; prefix order across views);
a message has one delivery view, its sending view. FIFO across views also needs every
send of a frozen view delivered in its range (a view's send not delivered excuses a gap
only where the deliverer did not install it: ``gaps``, left to the whole-trace engine).
Records a leaver logs after its ``leave`` are cut from the trace by the order properties'
scope (properties/scope.py): they break the picture.

What breaks the picture makes the trace slow (canon.py); with views, a slow trace whose
prefix was retired carries what each process delivered in the retired views into the
exact checks on its held records (viewheld.py), or goes to the whole-trace engine. The
per-view state (a name, members, successor, a range) lives as long as the trace: views
are few; per-message state retires with the positions every live process has passed.

A process not seen yet, or behind the retired prefix, does not hold the low watermark:
its delivery at a retired position k is S[k] read from disk (canon.py, retired.py), and
k lies in the range of the view it installed (its cursor is the range's start plus its
deliveries in it; a frozen range's length bounds it, an unfrozen started range is the
growing one, which ends at S's end), so the delivery is made in S[k]'s one delivery
view, its sending view. A position that retires before its send is read keeps its
range's view, checked against its sender's view at the send when that comes.
"""

from __future__ import annotations

__all__ = ["NONE", "Views"]

#: the index of "no view yet": the deliveries and sends before a process's first view
NONE = 0


def _number(view: str) -> float | None:
    """The id as view-agreement reads it (``float``), None when it is not a number."""
    try:
        return float(view)
    except ValueError:
        return None


class Views:
    """Per view: name, members, layout on S, successor; per process: its view."""

    #: judge member sets here (one per view id, holding each installer) and numeric ids'
    #: order; False for narrow.py's tail, whose member sets and ids view agreement
    #: judges on the cut's records (cutdeps.py, "A breach among the membership
    #: records"); class defaults, so a view layout pickled by tomkit watch before them
    #: reads as judging
    judge_members = True
    unjudged = False  # a member set was left unjudged (judge_members False)
    decreasing = False  # a smaller numeric id after a greater was left unjudged
    reinstalled = False  # a view installed again at once was read as one install

    def __init__(self, judge_members: bool = True) -> None:
        self.judge_members = judge_members
        self.index: dict[str, int] = {}
        self.names: list[str | None] = [None]
        self.members: list[frozenset[str] | None] = [None]
        #: per view: where its range starts in S (-1: not started), its frozen length
        #: (-1: no process moved on from it yet), its sends, successor and predecessor
        self.offset: list[int] = [0]
        self.length: list[int] = [-1]
        self.sends: list[int] = [0]
        self.succ: list[int] = [-1]
        self.pred: list[int] = [-1]
        #: the last view whose range started: the only one that may still grow
        self.growing = NONE
        #: per process (by its code in canon.py): its view, the previous view of its
        #: stretch (-1 after a crash, join or leave), whether it logged a leave
        self.cur: list[int] = []
        self.prev: list[int] = []
        self.left: list[bool] = []
        #: per process, its stays: (view, its deliveries and sends before it installed
        #: it, the install's record as a witness names it), from "no view yet" on; its
        #: latest join: (the record, its clocks, its sends and stays before it); its
        #: latest join, leave or crash. ledger.py reads them at the end of a clean trace
        self.stays: list[list[tuple[int, int, int, object]]] = []
        self.joins: list[tuple[object, tuple, int, int] | None] = []
        self.last_kind: list[str | None] = []
        #: processes that installed a view (a scope may drop them all: unknown)
        self.viewers: set[int] = set()
        self.numeric = True  # every view id so far is a number

    def grow(self, n: int) -> None:
        while len(self.cur) < n:
            self.cur.append(NONE)
            self.prev.append(-1)
            self.left.append(False)
            self.stays.append([(NONE, 0, 0, None)])
            self.joins.append(None)
            self.last_kind.append(None)

    def end_stretch(self, p: int, kind: str) -> None:
        """A crash, join or leave record of process ``p``."""
        self.prev[p] = -1
        self.last_kind[p] = kind

    def join(self, p: int, record: object, clocks: tuple, sent: int) -> None:
        """Process ``p`` joins (after ``sent`` sends; ``clocks``: the record's time,
        real_time and slot, member liveness's readings)."""
        self.joins[p] = (record, clocks, sent, len(self.stays[p]))

    def install(self, p: int, view: str, members: frozenset[str] | None, name: str,
                cursor: int, end: int, delivered: int = 0, sent: int = 0,
                record: object = None) -> tuple[str, int]:
        """Process ``p`` (named ``name``; its next delivery would be at S position
        ``cursor``, S ending at ``end``; ``delivered`` and ``sent`` so far) installs
        ``view``: why the picture breaks ("" if it holds), and p's cursor in the new view
        (-1: its range has not started)."""
        v = self.index.get(view)
        if v is None:
            v = self.index[view] = len(self.names)
            self.names.append(view)
            self.members.append(members)
            for lst, x in ((self.offset, -1), (self.length, -1), (self.sends, 0),
                           (self.succ, -1), (self.pred, -1)):
                lst.append(x)
            self.numeric = self.numeric and _number(view) is not None
        elif set(self.members[v] or ()) != set(members or ()):
            if self.judge_members:
                return "one view id with two member sets", -1
            self.unjudged = True
        if members is not None and name not in members:
            if self.judge_members:
                return "a process installs a view that does not include it", -1
            self.unjudged = True
        old = self.cur[p]
        if v == old and not self.judge_members and self.prev[p] == v and \
                self.stays[p][-1][1:3] == (delivered, sent):
            # the view it is in, again, with nothing delivered or sent since (in this
            # stretch): every property but view agreement and view sequence reads it as
            # one install, and those two read it on the cut's records (cutdeps.py)
            self.reinstalled = True
            return "", self.offset[v]
        if v <= old:
            return "a process installs views out of their one order (or one twice)", -1
        if self.numeric and old != NONE and _number(view) < _number(self.names[old]):
            if self.judge_members:
                return "a process installs a smaller view id after a greater one", -1
            self.decreasing = True
        why = self._move_on(old, cursor, end)
        if why:
            return why, -1
        a = self.prev[p]
        if a >= 0:
            if self.succ[a] not in (-1, v) or self.pred[v] not in (-1, a):
                return "two views follow one view (or one view two)", -1
            self.succ[a], self.pred[v] = v, a
        self.prev[p] = v
        self.cur[p] = v
        self.viewers.add(p)
        self.stays[p].append((v, delivered, sent, record))
        return "", self.offset[v]

    def _move_on(self, old: int, cursor: int, end: int) -> str:
        """A process leaves view ``old`` for a later one: it has delivered all of ``old``."""
        off, n = self.offset[old], self.length[old]
        count = cursor - off if off >= 0 and cursor >= 0 else 0
        if n >= 0:
            return "" if count == n else \
                "processes move on from one view having delivered different messages in it"
        if off >= 0 and cursor != end:  # the growing view: nobody may have delivered more
            return "processes move on from one view having delivered different messages in it"
        self.length[old] = count
        return ""

    def start(self, v: int, end: int) -> str:
        """The first delivery in view ``v`` lays its range out from S position ``end``."""
        if self.offset[v] >= 0:
            return ""
        if v < self.growing or self.length[self.growing] < 0:
            return "deliveries in a view before the view before it is closed"
        self.offset[v] = end
        self.growing = v
        return ""

    def end_of(self, v: int) -> int:
        """Where view ``v``'s range ends in S once it is frozen (-1: not frozen)."""
        n = self.length[v]
        return self.offset[v] + n if n >= 0 else -1

    def gaps(self) -> bool:
        """Whether some frozen view has a send its range does not hold (FIFO's membership
        rule then decides; the whole-trace engine reads it)."""
        return any(n >= 0 and s != n for s, n in zip(self.sends[1:], self.length[1:]))
