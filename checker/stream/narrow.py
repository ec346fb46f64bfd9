"""The cut after a breach: a long broken trace's exact checks on the records around it.

A trace whose picture broke (canon.py) holds every record after its retired prefix, and
reduced.py runs the properties' exact checks on them: the whole-trace engine's columns,
about 540 bytes an event, for what may be most of a long run broken early. Most breaches
are local: some time after two swapped deliveries every process has delivered the same
messages again; after a repeat or a gap every process but one has, and that one
delivers the same messages from then on at positions shifted by one. From there on the
run keeps the picture. This module finds that place with one more pass over the held
records (from the spill, one segment in memory at a time; tally.py gathered what
chooses it while they were read) and keeps only what lies before it.

**The cut.** A set M of messages, and per process p the count K_p of its held
deliveries that name M, make a cut when

1. each process's deliveries of M are its first K_p held deliveries (a repeat of a
   message of M among them; a message of M missing from them: a gap), and each sender
   sends its messages of M before any other (held) send;
2. no record after that names a message of M;
3. the records naming the other messages, fed in their order to a fresh canonical pass
   whose retired prefix is M and the retired ids, keep its picture to the end: every
   process delivers after its cut a prefix B_p of one sequence S' of distinct messages,
   each sent once, each sender's in its send order;
4. the held records are sends and deliveries only (no crash, view, join or leave: a
   trace with views sends its membership records to both sides and reads condition 5
   per view, viewcut.py), the properties asked for are among ``NARROWED`` (the view
   properties are unknown on a trace without views, on any part of it; with views,
   viewcut.py argues them) or the end-of-trace ones (cutowed.py's ``OWED``, with its
   conditions), and if anything after the cut is sent, something before it is too, in
   both scopes (with a crash, read again on the sends of the processes that do not
   crash, all that the correct-process scope reads: cutdeps.py's ``sent_before``);
   some process delivers a message of M;
5. write A_p for p's first deliveries of M in order (repeats left out, as the order
   properties read them), and call p *continuing* when B_p is not empty. Every
   continuing process's A_p ends with one message, the same for all (or all are empty);
   no continuing process's A_p is a proper prefix of another process's; and every
   continuing process p's FIFO scan breaks within A_p, or starts B_p with every count
   right: for some sender s of M, after a place of s in M that p cannot count (a message
   of M at s's first send of it, as FIFO reads a message sent by several processes:
   fifo.py; p does not deliver it), p delivers in A_p a message of a later place of s;
   or else p counts each place in M of every sender that sends a message outside M.

**Why the exact checks on the records naming M are the whole trace's.** The records
split by message id, so every repeat of a delivery or of a send lies on one side. Each
process's first K_p held deliveries and each sender's first held sends are the same
records in both, at the same positions (condition 1), so every witness found among them
names the same records with the same positions and sentences. Each property, in the
fixed order of its scan (processes in name order, then positions):

- *integrity*: the other side has no repeat, no unsent delivery and no second send
  (condition 3), so every violation, and its count, lies among M's records, found in
  the same order; both sides log sends, or neither (condition 4), and M has a
  delivery, so its *unknown* is the same.
- *weak total order*: a process delivers all of A_p before any of B_p, and the B's are
  prefixes of S', so two processes' common messages outside M come in one order, after
  all of M: a pair's scan finds an inversion among M or none.
- *strong total order*: a message of M has the same predecessor at every process on
  both sides; S'[i] has S'[i-1] at every process for i > 0, and S'[0] has the last of
  A_p, the same at every continuing process (condition 5): no violation lies outside M,
  and the scan meets the same first one (its witness reads deliveries of M only).
- *prefix order*: a pair p, q compares its first-delivery sequences position by
  position. If A_p and A_q differ at a position below both lengths, the first such
  position is the first difference on both sides. Else the shorter one, say A_p, is a
  prefix of A_q: equal lengths go on with prefixes of S' (no difference); a proper
  prefix belongs to a process that does not continue (condition 5), so its sequence
  ends there on both sides.
- *global order*: no edge of "some process delivers u right before v" leads from a
  message outside M into M, so every cycle, every strongly connected component and the
  breadth-first searches of its shortest cycle lie within M; the searches reach
  messages outside M too, but those never close a cycle (every process delivers them
  after all of M), never lead back into M, leave the scans of M's positions whole, and
  stop a search on its length limit only where M's messages of the same distance would:
  the same cycle is found.
- *FIFO*: a process's scan counts, per sender, the messages delivered in its send
  order, and the check reports the first process (by name) whose scan breaks, where it
  breaks. A process that does not continue is scanned on the same records on both
  sides. After a place of some sender it cannot count, a continuing process's count of
  that sender never passes it (a sender's places are distinct messages), so its
  delivery of a later place of that sender in A_p breaks the scan there, at the latest:
  its first violation lies among its deliveries of M, the same records on both sides,
  whatever its counts of the other senders (condition 5). Else it counts each place in
  M of every sender that sends outside M, so it either breaks among A_p (the same first
  violation on both sides) or starts B_p with every such sender's count at its places
  in M, and then meets each sender's later messages in their send order (condition 3):
  no violation; a sender that sends nothing outside M puts nothing in B_p. Its
  *unknown* (no send) is the same: condition 4 holds in the scope asked (in the
  correct-process one, without the crashed processes' sends, a cut whose sends of M
  are all by processes that crash would read "no send" where the whole trace reads the
  tail's).
- *the view properties*: unknown on both sides, without view records.
- *causal order*: with its own conditions on what each side's deps name of the other
  (cutdeps.py); *latency*: the tail's tally joins the exact check's (latencies.py).

Agreement, validity, liveness and member liveness are asked of every message, a tail
one too: the tail's clean pass answers them for its messages, and cutowed.py merges
that answer with the exact checks' on M's records, in each check's own scan order
(its module docstring has the argument and its conditions); a cut that fails them is
not taken when they are asked.

A repeat, a gap or an id sent twice therefore stays exact; a later second breach
breaks the canonical pass of condition 3, and a breach whose shifted process never
delivers another message of the sender it skipped fails condition 5: both keep every
held record, as does any trace no cut fits.

**Finding M** (tally.py, fed as the records spill). A count n of held deliveries
gives M: the messages some process delivered as one of its first n (or, for n past
the tally's reach, those of the first delivering process). n is tried, in increasing
order and each below the most any process delivered: the count after the last one
where some process's fingerprint (sums of hashes) differs from the first reacher's (a
local breach: the tightest cut), S's end when the picture broke (a breach found by the
sends, as FIFO's, differs in no count), and twice that plus a margin (a shift: the
process that skipped a message has since delivered a later one of its sender). Two
more serve the processes that do not take part in the whole breach:

- *a process that stops before the breach's end* (silent in the tail, or stalled in
  its view: it delivers nothing more) bounds the counts every delivering process
  reached, below the breach; so the count after the last one where processes differ
  *among all counts reached* is tried too (a process that stopped cannot differ past
  its count).
- *a process that first appears in the tail* (a late joiner without views, a sender
  that starts late) has no record among M's, so the exact checks would not judge it:
  prefix order compares its first delivery with the others', FIFO its first counts,
  and the end-of-trace properties what it owes of M (cutowed.py's condition A); every
  cut refuses it (condition 5's prefix part when it delivers, condition A). ``Heads``
  keeps each process's first held record naming a message, and the count n at which
  the first delivering process's first n deliveries hold all of them is tried, with M
  those n messages (not the union of every process's first n, which would add the
  late process's own first n, far past the breach). Such a cut holds every record up
  to the late process's first: bounded by where it appears, not by the run.

The counts only choose: conditions 1 to 3 are checked exactly, by both hashes of each
id, in the second pass, which stops at the first record that refutes them, and 5 at its
end. Memory: the tally's (41 bytes a held position, 24 a message below its reach),
then M's records, one canonical window, and per process its first deliveries of M;
``Heads``: a hash a process.

A trace where no cut holds is checked on all its held records, as before.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..chunk import CRASH, DELIVER, JOIN, LEAVE, SEND, VIEW, Piece, kind_codes
from ..properties import Options, Property
from ..result import WitnessEvent
from .canon import FAST, TraceState
from .cutdeps import CutDeps, asks_causal, members_unread, owed
from .cutowed import OWED, Owed, decide, owing
from .hashes import hash_ids
from .latencies import Tally as Latencies
from .latencies import counted, shifted
from .tally import Procs, Tally, grow, reach
from .viewcut import Continuing, agree, places, scan_in_m

__all__ = ["NARROWED", "Cut", "Deliveries", "follow", "narrows", "narrowed", "shifts_agree"]

#: the most cells (processes x messages of M) the second pass keeps for one cut
MAX_CELLS = 1 << 27

#: the properties whose exact checks the cut keeps (module docstring), by name without
#: their scope
NARROWED = frozenset({"integrity", "total-order-weak", "total-order-strong",
                      "global-order", "prefix-order", "fifo-order",
                      # without a view record (condition 4), unknown on any part of it
                      "view-agreement", "view-sequence", "same-view-delivery",
                      "sending-view-delivery", "virtual-synchrony",
                      # with their own conditions: cutdeps.py; the tail's tally, latencies.py
                      "causal-order", "latency", "realtime-latency"})


def narrows(props: Sequence[Property]) -> bool:
    """Whether the cut keeps every one of ``props``'s witnesses (the end-of-trace
    properties' with the tail's clean pass: cutowed.py)."""
    return all(p.name.split("@")[0] in NARROWED | OWED for p in props)


def follow(state: TraceState, props: Sequence[Property] = ()) -> Cut | None:
    """A cut tried while the trace is read: the first candidate (``_candidates``) that
    the records held so far do not refute, fed the rest as they come
    (``TraceState.follower``), so that a cut that holds needs no pass over the spill;
    None when each is refuted already. With an end-of-trace property among ``props``,
    its tail keeps what their witnesses cite (cutowed.py)."""
    for cut in _cuts(state, bool(owing(props))):
        if all(cut.feed(piece) for piece in state.held_iter()):
            return cut
        cut.close()
    return None


def narrowed(state: TraceState, props: Sequence[Property],
             options: Options | None = None) -> list[Piece] | None:
    """The held records that stand for all of them (module docstring), or None when no
    cut holds; sets ``state.cut`` (the messages before the cut) and, with an
    end-of-trace property, ``state.owed`` (the tail's part of it: cutowed.py)."""
    state.owed = None
    if not narrows(props):
        return None
    options = options or Options()
    if state.follower is not None:  # followed while read: no pass over the spill
        cut = state.follower
        kept = cut.result(props) if isinstance(cut, Cut) else None
        due = cut.tail_owed(props, options, state) if kept is not None else None
        if kept is not None and due is not False:
            state.cut, state.owed = cut.k, due
            state.cut_latency = cut.latencies()
            return kept
    for cut in _cuts(state, bool(owing(props))):
        try:
            if all(cut.feed(piece) for piece in state.held_iter()):
                kept = cut.result(props)
                due = cut.tail_owed(props, options, state) if kept is not None else None
                if kept is not None and due is not False:
                    state.cut, state.owed = cut.k, due
                    state.cut_latency = cut.latencies()
                    return kept
        finally:
            cut.close()
    return None


def _last(state: TraceState) -> dict[str, WitnessEvent]:
    """Each process's last record in the trace (canon.py keeps them as records come)."""
    names = list(state.procs)
    return {names[p]: e for p, e in state.last.items()}


def _seen(state: TraceState) -> set[str]:
    """The processes of the trace (with a record, held or retired)."""
    names = list(state.procs)
    return {names[i] for i in np.flatnonzero(state.seen[:len(names)])}


def _cuts(state: TraceState, owing: bool = False) -> Iterator[Cut]:
    """The cuts to try, tightest first, from a first pass over the held records
    (tally.py): per candidate count n, the messages some process delivered as one of
    its first n held deliveries."""
    least = state.broke_at - state.base
    tally = Tally(reach(least), state.has_views)
    heads = Heads()
    for piece in state.held_iter():
        tally.feed(piece)
        heads.feed(piece)
    if not tally.plain:
        return
    every = heads.reached(tally)
    for n in _candidates(tally, least, every):
        # the count holding every process's first message: the first delivering
        # process's deliveries (the union of every process's first n would add a late
        # process's first n, far past the breach)
        got = tally.below(n) if n <= tally.reach and n != every else tally.first(n)
        if got is None:
            continue
        m1, m2 = got
        order = np.argsort(m1)
        m1, m2 = m1[order], m2[order]
        same = np.flatnonzero(np.diff(m1) == 0)
        if (m2[same] != m2[same + 1]).any():  # two ids sharing a first hash
            continue
        keep = np.ones(len(m1), bool)
        keep[same + 1] = False  # a repeat of the first process's
        m1, m2 = m1[keep], m2[keep]
        if len(m1) * max(len(tally.procs), 1) > MAX_CELLS:
            return
        yield Cut(state, m1, m2, owing)


def _candidates(tally: Tally, least: int, every: int = 0) -> list[int]:
    """The counts n to cut at, in increasing order: after the last count where
    processes differ (a local breach; among the counts every delivering process reached,
    and among all), after the first one and with a margin past it (a
    shift: a repeat or a gap), S's end when the picture broke (a breach found by the
    sends, as FIFO's, differs in no count), the tally's reach, and ``every`` (the least
    count whose cut holds a record of every process: ``Heads``); each below the most
    any process delivered (else nothing is cut)."""
    k, first = tally.settled(), tally.parted()
    most = tally.most()
    # after the last count where processes differ among all counts reached, not only
    # those every delivering process reached: a process that stops before the breach's
    # end (silent in the tail, or stalled in its view) would hold ``settled`` below it
    bad = np.flatnonzero(tally.bad[:tally.reached])
    wanted = {k, max(k, least), least, tally.reach, every,
              int(bad[-1]) + 2 if len(bad) else 0}
    if first:
        wanted |= {first, 2 * first + 64}
    return [n for n in sorted(wanted) if 0 < n < most]


class Heads:
    """Each process's first held record naming a message (its first hash), gathered in
    the cut's first pass: a process whose records all lie past the cut (it first appears
    in the tail: a late joiner without views, a sender that starts late) is missing from
    the cut's records, where the exact checks would not judge it (prefix order compares
    its first delivery with the others'; the end-of-trace properties ask what it owes of
    M: cutowed.py's condition A). A cut whose M holds every process's first such message
    has a record of each (module docstring, "Finding M")."""

    def __init__(self) -> None:
        self.first: dict[str, np.uint64] = {}

    def feed(self, piece: Piece) -> None:
        t = piece.table
        kinds = kind_codes(t.column("kind"))
        rows = np.flatnonzero(np.isin(kinds, (SEND, DELIVER)))
        if not len(rows):
            return
        procs = t.column("process").take(pa.array(rows))
        if all(p in self.first for p in pc.unique(procs).to_pylist()):
            return  # after the first pieces, every process is known: one unique a piece
        names = procs.to_pylist()
        new = {}
        for r, p in zip(rows.tolist(), names):
            if p not in self.first and p not in new:
                new[p] = r
        h1, _ = hash_ids(t.column("msg").combine_chunks().take(pa.array(list(new.values())))
                         .cast(pa.string()))
        self.first.update(zip(new, h1))

    def reached(self, tally: Tally) -> int:
        """The least count n such that the first delivering process's first n held
        deliveries hold every process's first message (0: some process's is not
        among them)."""
        if tally.ref < 0 or not self.first:
            return 0
        ref = tally.r1[:int(tally.d[tally.ref])]
        order = np.argsort(ref, kind="stable")  # equal hashes keep their order: the first
        heads = np.fromiter(self.first.values(), np.uint64, len(self.first))
        at = np.minimum(np.searchsorted(ref[order], heads), max(len(ref) - 1, 0))
        if not len(ref) or (ref[order][at] != heads).any():
            return 0
        return int(order[at].max()) + 1


class Deliveries:
    """Per process of the second pass: whether it delivered a message outside M yet
    (``closed``), which messages of M it delivered, its first deliveries of them in
    order, and the last of those."""

    def __init__(self, k: int, cont: Continuing | None = None) -> None:
        self.k = k
        #: with views, what viewcut.py gathers (strong order's part of condition 5 is
        #: then read per view); None: without views
        self.cont = cont
        self.closed = np.zeros(0, bool)
        self.got = np.zeros((0, k), bool)
        self.seqs: list[list[np.ndarray]] = []
        self.lastf = np.zeros(0, np.int64)
        self.joint: int | None = None  # the last of A_p of the first continuing process

    def grow(self, n: int) -> None:
        if n <= len(self.closed):
            return
        extra = n - len(self.closed)
        self.closed = np.concatenate((self.closed, np.zeros(extra, bool)))
        self.got = np.vstack((self.got, np.zeros((extra, self.k), bool)))
        self.seqs += [[] for _ in range(extra)]
        self.lastf = np.concatenate((self.lastf, np.full(extra, -1, np.int64)))

    def feed(self, q: int, m: np.ndarray, views: np.ndarray | None = None) -> bool:
        """Process q's next deliveries (M's codes, -1 outside M; with views, each one's
        installed view, for viewcut.py); False when one of M comes after one outside
        it."""
        mine = m >= 0
        if self.closed[q]:
            return not mine.any()
        f = int(np.argmin(mine)) if not mine.all() else len(mine)
        if mine[f:].any():
            return False
        if f:
            mm = m[:f]
            first = np.zeros(f, bool)
            first[np.unique(mm, return_index=True)[1]] = True
            fresh = first & ~self.got[q, mm]
            new = mm[fresh]
            if len(new):
                self.got[q, new] = True
                self.seqs[q].append(new)
                self.lastf[q] = new[-1]
                if self.cont is not None and views is not None:
                    self.cont.delivered(q, views[:f][fresh])
        if f < len(mine):
            self.closed[q] = True
            # strong order (condition 5), checked as processes continue: a cut refuted
            # here costs no more of the pass
            if self.cont is not None:  # with views, per (view, first message past the cut)
                dv = self.cont.dviews.get(q)
                if not self.cont.continues(q, int(self.lastf[q]),
                                           int(dv[-1][-1]) if dv else -2):
                    return False
            elif self.joint is None:
                self.joint = int(self.lastf[q])
            elif self.joint != self.lastf[q]:
                return False
        return True

    def sequence(self, q: int) -> np.ndarray:
        return np.concatenate(self.seqs[q]) if self.seqs[q] else np.zeros(0, np.int64)


class Cut:
    """The second pass for the messages M of first hashes ``m1`` (sorted) and second
    hashes ``m2``, fed the held records in order (module docstring): conditions 1 to 3
    as they come, 5 at the end; ``result`` gives the records naming M, or None."""

    def __init__(self, state: TraceState, m1: np.ndarray, m2: np.ndarray,
                 owing: bool = False) -> None:
        self.k = len(m1)
        self.m1, self.m2 = m1, m2
        self.procs = Procs()
        # the tail's first deliveries tallied on the trace's clocks (latencies.py)
        self.tail = TraceState(state.id, state.trim_at, clocks=state.clocks,
                               spill_dir=state.spill_dir)
        # its clean verdicts are asked for the end-of-trace properties (cutowed.py); with
        # clocks, a lagging delivery's latency reads its send's witness where it retired
        self.tail.witnesses = owing or bool(state.clocks)
        #: per process: a record in H_M, its deliveries and its sends of M (cutowed.py)
        self.on_m = np.zeros(0, bool)
        self.m_del = np.zeros(0, np.int64)
        self.m_sent = np.zeros(0, np.int64)
        for run in state.retired.runs:
            self.tail.retired.add(run)
        self.tail.retired.add(m1)
        self.deps = CutDeps(m1, m2, state.retired)  # causal order's conditions
        # member sets are judged by view agreement on the cut's side (cutdeps.py)
        self.tail.judge_members = False
        self.kept: list[Piece] = []
        self.views = state.has_views
        self.cont = Continuing()
        self.dels = Deliveries(self.k, self.cont if self.views else None)
        self.later_send = np.zeros(0, bool)  # per process: sent a message outside M
        self.send_p: list[np.ndarray] = []  # the sends of M, in order: sender, message
        self.send_m: list[np.ndarray] = []
        self.failed = not self.k

    def feed(self, piece: Piece) -> bool:
        """The next held piece; False once the cut is refuted."""
        if self.failed:
            return False
        self.failed = not self._feed(piece)
        if self.failed:
            self.close()
            self.kept = []
        return not self.failed

    def _feed(self, piece: Piece) -> bool:
        t = piece.table
        kinds = kind_codes(t.column("kind"))
        member = np.isin(kinds, (VIEW, JOIN, LEAVE, CRASH)) if self.views else \
            np.zeros(len(kinds), bool)
        if not (np.isin(kinds, (SEND, DELIVER)) | member).all():
            return False
        proc = self.procs.of(t.column("process"))
        self.dels.grow(len(self.procs))
        self.later_send = grow(self.later_send, len(self.procs))
        mi = self._codes(t.column("msg"))
        if mi is None:
            return False
        if self.views:
            rv = self.cont.row_views(t, kinds, proc)
            self.cont.feed(t, kinds, proc, (mi < 0) & ~member, rv)
        d = kinds == DELIVER
        for q in np.unique(proc[d]).tolist():
            mine = d & (proc == q)
            if not self.dels.feed(q, mi[mine], rv[mine] if self.views else None):
                return False
        s = kinds == SEND
        for q in np.unique(proc[s]).tolist():
            mine = mi[s & (proc == q)] >= 0
            first_other = int(np.argmin(mine)) if not mine.all() else len(mine)
            if mine[first_other:].any() or (self.later_send[q] and mine.any()):
                return False
            self.later_send[q] |= not mine.all()
        ms = s & (mi >= 0)
        self.send_p.append(proc[ms])
        self.send_m.append(mi[ms])
        if self.views:
            self.cont.sent(rv[ms])
        mine = (mi >= 0) | member  # membership records: both sides (viewcut.py)
        n = len(self.procs)
        self.on_m, self.m_del, self.m_sent = (grow(a, n) for a in
                                              (self.on_m, self.m_del, self.m_sent))
        self.on_m[proc[mine]] = True
        self.m_del[:n] += np.bincount(proc[d & (mi >= 0)], minlength=n)[:n]
        self.m_sent[:n] += np.bincount(proc[ms], minlength=n)[:n]
        rows = np.flatnonzero(mine)
        if len(rows):
            self.kept.append(Piece(t.take(pa.array(rows)), piece.lines[rows], piece.source,
                                   piece.fmt))
        theirs = (mi < 0) | member
        self.deps.feed(t, kinds, proc, mi, theirs, self.tail)
        if not theirs.any():
            return True
        if not theirs.all():
            rest = np.flatnonzero(theirs)
            piece = Piece(t.take(pa.array(rest)), piece.lines[rest], piece.source, piece.fmt)
        self.tail.feed(piece)  # past the breach, most pieces name nothing of M
        return self.tail.mode == FAST

    def _codes(self, col: pa.ChunkedArray) -> np.ndarray | None:
        """Each row's message as its index in M (-1: outside M, or none), looked up by
        the distinct ids only; None when two ids share a first hash."""
        arr = col.combine_chunks()
        if not pa.types.is_dictionary(arr.type):
            arr = pc.dictionary_encode(arr)
        idx = arr.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
        used = np.zeros(len(arr.dictionary), bool)
        used[idx[idx >= 0]] = True
        at = np.flatnonzero(used)  # a batch's dictionary may hold other pieces' ids
        v1, v2 = hash_ids(arr.dictionary.take(pa.array(at)))
        i = np.minimum(np.searchsorted(self.m1, v1), self.k - 1)
        hit = self.m1[i] == v1
        if (self.m2[i[hit]] != v2[hit]).any():
            return None
        code = np.full(len(arr.dictionary) + 1, -1, np.int64)  # the last: no id
        code[at] = np.where(hit, i, -1)
        return code[idx]

    def result(self, props: Sequence[Property] = ()) -> list[Piece] | None:
        """The records naming M when the cut holds over every piece fed, for ``props``
        (causal order's conditions: cutdeps.py; the tail is left as it is: a trace still
        read may be fed more)."""
        if self.failed or not self.tail.settled() or \
                (asks_causal(props) and not self._serves_causal()):
            return None
        vs = self.tail.views
        if vs is not None and vs.unjudged and not members_unread(props):
            return None
        sp = np.concatenate(self.send_p) if self.send_p else np.zeros(0, np.int64)
        sm = np.concatenate(self.send_m) if self.send_m else np.zeros(0, np.int64)
        if not self.deps.sent_before():  # condition 4, in both scopes (cutdeps.py)
            return None
        n = len(self.procs)
        if self.views:
            vs = self.tail.views
            self.dels.grow(n)
            seqs = [self.dels.sequence(q) for q in range(n)]
            if (vs is not None and vs.gaps()) or \
                    not agree(self.cont, seqs, self.dels.got, self.dels.closed,
                              self.later_send, sp, sm):
                return None
        elif not shifts_agree(self.dels, n, list(self.procs.codes), self.later_send, sp, sm):
            return None
        return list(self.kept)

    def tail_owed(self, props: Sequence[Property], options: Options,
                  state: TraceState) -> Owed | None | bool:
        """The tail's part of the end-of-trace properties among ``props`` (cutowed.py;
        None: none asked), False when the cut cannot serve them (its conditions A, B);
        ``state``: the trace's, each of whose processes must have a held record."""
        if not owing(props):
            return None
        names = list(self.procs.codes)
        if not _seen(state) <= set(names):
            return False  # a process whose records all retired (condition A)
        got = decide(self.tail, props, options, set(names),
                     {names[i] for i in np.flatnonzero(self.on_m[:len(names)])},
                     {names[i]: int(self.m_del[i]) for i in range(len(names))},
                     {names[i]: int(self.m_sent[i]) for i in range(len(names))},
                     _last(state))
        return False if got is None else got

    def _serves_causal(self) -> bool:
        n = len(self.procs)
        self.dels.grow(n)
        owes = None
        if self.views and self.cont.seen_view:  # causal.py's membership rule
            sp = np.concatenate(self.send_p) if self.send_p else np.zeros(0, np.int64)
            sm = np.concatenate(self.send_m) if self.send_m else np.zeros(0, np.int64)
            sv = np.concatenate(self.cont.sviews) if self.cont.sviews else \
                np.zeros(0, np.int64)
            owes = owed(self.cont.installed, sp, sm, sv, n, self.k,
                        frozenset(self.deps.crashed))
        return self.deps.serves(self.dels.got, self.dels.closed[:n], owes)

    def latencies(self) -> dict[str, Latencies]:
        """Per clock, the tail's tally with its indexes counted from the held records'
        start (latencies.py, "Across the cut")."""
        delivered, sent = counted(self.kept)
        return {c: shifted(self.tail.latencies(c), delivered, sent) for c in self.tail.clocks}

    def close(self) -> None:
        self.tail.close()


def shifts_agree(dels: Deliveries, n: int, names: list[str], later_send: np.ndarray,
                  sp: np.ndarray, sm: np.ndarray) -> bool:
    """Condition 5 of the module docstring: where processes' cuts lie at different
    counts, strong order, prefix order and FIFO still meet their first violation before
    every cut."""
    dels.grow(n)
    closed = dels.closed[:n]
    if not dels.got[:n].any():  # no delivery of M: integrity's unknown would differ
        return False
    # strong order: each process reaches S' from the same message
    if len(np.unique(dels.lastf[:n][closed])) > 1:
        return False
    # prefix order: a cut before another's, on the same messages, would differ after it
    seqs = [dels.sequence(q) for q in range(n)]
    for p in np.flatnonzero(closed).tolist():
        a = seqs[p]
        if any(len(b) > len(a) and np.array_equal(b[:len(a)], a) for b in seqs):
            return False
    if not len(sp):
        return True
    # FIFO (fifo.py: a message is in the order of each process that sends it, at that
    # process's first send of it; a sender's later send of it adds no place): a place of
    # a sender's order in M that a process cannot count (it lacks the message) stops
    # that process's scan in M, if it delivers a later message of that sender there;
    # else its scan may fail after its cut
    rows = {s: places(sp, sm, s) for s in np.unique(sp).tolist()}
    later = set(np.flatnonzero(later_send[:n]).tolist())
    for p in np.flatnonzero(closed).tolist():
        if not scan_in_m({s: dels.got[p, sm[r]] for s, r in rows.items()}, later):
            return False
    return True
