"""The cut after a breach: a long broken trace's exact checks on the records around it.

A trace whose picture broke (canon.py) holds every record after its retired prefix, and
reduced.py runs the properties' exact checks on them: the whole-trace engine's columns,
about 540 bytes an event, for what may be most of a long run broken early. Most breaches
are local (two deliveries swapped, one repeat): some time after them every process has
delivered the same messages again, and from there on the run keeps the picture. This
module finds that place with two more passes over the held records (from the spill, one
segment in memory at a time) and keeps only what lies before it.

**The cut.** For a count K of held deliveries, M_K is the set of messages the first
process delivers as its first K held deliveries. K is a cut when

1. every process with a held delivery has at least K of them, its first K are M_K, each
   once, and its K-th is the same message as everyone's;
2. no record after that names a message of M_K (no repeat, no second send), each
   message of M_K is sent at most once (FIFO's exact check ranks a second sender's
   later messages against the first send's sender), and each sender sends its messages
   of M_K before any other (held) send;
3. the records naming the other messages, fed in their order to a fresh canonical pass
   whose retired prefix is M_K and the retired ids, keep its picture to the end: every
   process delivers a prefix of one sequence S' of distinct messages, each sent once,
   each sender's in its send order;
4. the held records are sends and deliveries only (no crash, view, join or leave), the
   properties asked for are among ``NARROWED`` (the view properties are unknown on a
   trace without views, on any part of it), and if anything after the cut is sent,
   something before it is too.

Then the exact checks on the records naming M_K give the whole trace's witnesses and
sentences. Each process's first K held deliveries and each sender's first held sends
are the same records in both, at the same positions. An order fact between a message
of M_K and a later one is the same at every process (all of M_K first, then S' in its
order); the later messages break nothing among themselves (condition 3), every process
reaches S' from the same K-th message (strong order's predecessor), and each sender's
later messages follow its messages of M_K in send order and in S' (FIFO). So every
violation of integrity, weak, strong, prefix and global order and FIFO lies among the
records naming M_K, and their scans, which go by processes in name order and then by
positions, meet the same first one (global order's shortest cycle lies within M_K: no
later message leads back into it). Integrity's count of violations is theirs too.

**Finding K** (first pass). Per count c of held deliveries, the first process to reach
c leaves two 64-bit sums of the hashes (hashes.py) of its first c deliveries and the
hash of its c-th; every other process that reaches c is compared with them. K is the
count after the last one where some process differs, among those every delivering
process reached; when the second pass refutes it (a breach found by the sends, as
FIFO's, differs in no count), the first such count no smaller than S's end when the
picture broke. The sums only choose K: conditions 1 and 2 are then checked exactly, by
both hashes of each id, in the second pass, which stops at the first record that
refutes them. Memory: 41 bytes a held position for the first pass, then M_K's records
and one canonical window.

A trace where no cut holds is checked on all its held records, as before.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..chunk import DELIVER, SEND, Piece, kind_codes
from ..properties import Property
from .canon import FAST, TraceState
from .hashes import hash_ids

__all__ = ["NARROWED", "narrows", "narrowed"]

#: the properties whose exact checks the cut keeps (module docstring), by name without
#: their scope
NARROWED = frozenset({"integrity", "total-order-weak", "total-order-strong",
                      "global-order", "prefix-order", "fifo-order",
                      # without a view record (condition 4), unknown on any part of it
                      "view-agreement", "view-sequence", "same-view-delivery",
                      "sending-view-delivery", "virtual-synchrony"})


def narrows(props: Sequence[Property]) -> bool:
    """Whether the cut keeps every one of ``props``'s witnesses."""
    return all(p.name.split("@")[0] in NARROWED for p in props)


class _Procs:
    """Process names to small codes, in order of first appearance."""

    def __init__(self) -> None:
        self.codes: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self.codes)

    def of(self, col: pa.ChunkedArray) -> np.ndarray:
        arr = pc.dictionary_encode(col.combine_chunks().cast(pa.string()))
        table = np.array([self.codes.setdefault(x, len(self.codes))
                          for x in arr.dictionary.to_pylist()], np.int64)
        return table[arr.indices.to_numpy(zero_copy_only=False)]


def _hashes(col: pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """Both hashes of each row's id (0 where it has none)."""
    arr = col.combine_chunks()
    if not pa.types.is_dictionary(arr.type):
        arr = pc.dictionary_encode(arr)
    idx = arr.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    v1, v2 = hash_ids(arr.dictionary)
    some = idx >= 0
    h1 = np.zeros(len(idx), np.uint64)
    h2 = np.zeros(len(idx), np.uint64)
    h1[some], h2[some] = v1[idx[some]], v2[idx[some]]
    return h1, h2


def _grow(a: np.ndarray, n: int) -> np.ndarray:
    if len(a) >= n:
        return a
    out = np.zeros(max(n, 2 * len(a)), a.dtype)
    out[:len(a)] = a
    return out


class _Counts:
    """The first pass: per count of held deliveries, the first reacher's fingerprint,
    whether another process differed, and the first delivering process's messages."""

    def __init__(self) -> None:
        self.procs = _Procs()
        self.d = np.zeros(0, np.int64)  # per process: held deliveries
        self.x1 = np.zeros(0, np.uint64)  # per process: sums of its deliveries' hashes
        self.x2 = np.zeros(0, np.uint64)
        self.a1 = np.zeros(0, np.uint64)  # per count - 1: the first reacher's sums ...
        self.a2 = np.zeros(0, np.uint64)
        self.last = np.zeros(0, np.uint64)  # ... and its delivery's first hash
        self.bad = np.zeros(0, bool)
        self.r1 = np.zeros(0, np.uint64)  # the first delivering process's deliveries
        self.r2 = np.zeros(0, np.uint64)
        self.ref = -1
        self.reached = 0

    def feed(self, piece: Piece) -> bool:
        """A held piece; False when it holds a record other than a send or delivery."""
        t = piece.table
        kinds = kind_codes(t.column("kind"))
        if not np.isin(kinds, (SEND, DELIVER)).all():
            return False
        dr = np.flatnonzero(kinds == DELIVER)
        if not len(dr):
            return True
        proc = self.procs.of(t.column("process"))[dr]
        h1, h2 = _hashes(t.column("msg"))
        h1, h2 = h1[dr], h2[dr]
        n = len(self.procs)
        self.d = _grow(self.d, n)
        self.x1 = _grow(self.x1, n)
        self.x2 = _grow(self.x2, n)
        for q in np.unique(proc).tolist():
            rows = np.flatnonzero(proc == q)
            lo, hi = int(self.d[q]), int(self.d[q]) + len(rows)
            s1 = np.cumsum(h1[rows], dtype=np.uint64) + self.x1[q]
            s2 = np.cumsum(h2[rows], dtype=np.uint64) + self.x2[q]
            for name in ("a1", "a2", "last", "bad", "r1", "r2"):
                setattr(self, name, _grow(getattr(self, name), hi))
            old = max(0, min(hi, self.reached) - lo)  # counts some process reached first
            if old:
                at = slice(lo, lo + old)
                self.bad[at] |= (self.a1[at] != s1[:old]) | (self.a2[at] != s2[:old]) | \
                    (self.last[at] != h1[rows[:old]])
            if old < len(rows):
                at = slice(lo + old, hi)
                self.a1[at], self.a2[at], self.last[at] = s1[old:], s2[old:], h1[rows[old:]]
                self.reached = hi
            if self.ref < 0:
                self.ref = q
            if q == self.ref:
                self.r1[lo:hi], self.r2[lo:hi] = h1[rows], h2[rows]
            self.d[q], self.x1[q], self.x2[q] = hi, s1[-1], s2[-1]
        return True

    def cuts(self, least: int) -> list[int]:
        """The counts to try as K: the first after every count where processes differ,
        then the first of those no smaller than ``least``; each one that every
        delivering process reached."""
        d = self.d[:len(self.procs)]
        if not (d > 0).any():
            return []
        low = int(d[d > 0].min())
        bad = np.flatnonzero(self.bad[:low])
        k = int(bad[-1]) + 2 if len(bad) else 1
        return [c for c in dict.fromkeys((k, max(k, least))) if c <= low]


def narrowed(state: TraceState, props: Sequence[Property]) -> list[Piece] | None:
    """The held records that stand for all of them (module docstring), or None when no
    cut holds; sets ``state.cut``."""
    if not narrows(props):
        return None
    counts = _Counts()
    for piece in state.held_iter():
        if not counts.feed(piece):
            return None
    for k in counts.cuts(state.broke_at - state.base):
        m1, m2 = counts.r1[:k].copy(), counts.r2[:k].copy()
        order = np.argsort(m1)
        if (np.diff(m1[order]) == 0).any():  # the first process repeats a message
            return None
        kept = _second_pass(state, k, m1, m2, order, counts.procs)
        if kept is not None:
            state.cut = k
            return kept
    return None


def _second_pass(state: TraceState, k: int, m1: np.ndarray, m2: np.ndarray,
                 order: np.ndarray, procs: _Procs) -> list[Piece] | None:
    """Conditions 1 to 3 of the module docstring, exactly: the records naming M_K, or
    None."""
    sorted1 = m1[order]
    tail = TraceState(state.id, state.trim_at, spill_dir=state.spill_dir)
    for run in state.retired.runs:
        tail.retired.add(run)
    tail.retired.add(m1)
    kept: list[Piece] = []
    dn = np.zeros(len(procs), np.int64)
    got = np.zeros((len(procs), k), bool)
    later_send = np.zeros(len(procs), bool)  # sent a message outside M_K
    # a message of M_K sent twice: FIFO's exact check takes the first send for the
    # sender and ranks the later messages of the second sender against it, so its
    # witness can lie outside M_K (a cut is not taken then: every held record is read)
    sent = np.zeros(k, np.int64)
    sends_kept = sends_later = 0
    try:
        for piece in state.held_iter():
            t = piece.table
            kinds = kind_codes(t.column("kind"))
            proc = procs.of(t.column("process"))
            n = len(procs)
            if n > len(dn):
                dn = _grow(dn, n)
                got = np.vstack((got, np.zeros((len(dn) - len(got), k), bool)))
                later_send = np.concatenate((later_send,
                                             np.zeros(len(dn) - len(later_send), bool)))
            h1, h2 = _hashes(t.column("msg"))
            i = np.minimum(np.searchsorted(sorted1, h1), k - 1)
            hit = sorted1[i] == h1
            mi = np.where(hit, order[i], -1)
            if (m2[mi[hit]] != h2[hit]).any():  # two ids sharing a first hash
                return None
            d = kinds == DELIVER
            for q in np.unique(proc[d]).tolist():
                rows = np.flatnonzero(d & (proc == q))
                c = dn[q] + np.arange(len(rows))
                m = mi[rows]
                mine = m >= 0
                if (mine != (c < k)).any():
                    return None
                if mine.any():
                    mm = m[mine]
                    if got[q, mm].any() or len(np.unique(mm)) < len(mm):
                        return None
                    got[q, mm] = True
                    if c[-1] >= k - 1 > c[0] - 1 and m[k - 1 - c[0]] != k - 1:
                        return None
                dn[q] += len(rows)
            s = kinds == SEND
            for q in np.unique(proc[s]).tolist():
                mine = mi[s & (proc == q)] >= 0
                first_other = int(np.argmin(mine)) if not mine.all() else len(mine)
                if mine[first_other:].any() or (later_send[q] and mine.any()):
                    return None
                later_send[q] |= not mine.all()
            np.add.at(sent, mi[s & (mi >= 0)], 1)
            if (sent > 1).any():
                return None
            rows = np.flatnonzero(mi >= 0)
            sends_kept += int((s & (mi >= 0)).sum())
            sends_later += int((s & (mi < 0)).sum())
            if len(rows):
                kept.append(Piece(t.take(pa.array(rows)), piece.lines[rows], piece.source,
                                  piece.fmt))
            rest = np.flatnonzero(mi < 0)
            if len(rest):
                tail.feed(Piece(t.take(pa.array(rest)), piece.lines[rest], piece.source,
                                piece.fmt))
                if tail.mode != FAST:
                    return None
        delivering = dn[:len(procs)] > 0
        if not got[:len(procs)][delivering].all():
            return None
        tail.finish()
        if tail.mode != FAST or (sends_later and not sends_kept):
            return None
        return kept
    finally:
        tail.close()
