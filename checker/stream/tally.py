"""The cut's first pass (narrow.py), fed the held records of a broken trace as they spill.

A long trace broken early holds most of itself in the spill (spill.py); narrow.py looks
for a place after the breach where the run keeps the picture again. What it needs to
choose that place is gathered here, one held piece at a time, while the records are
read (each piece is tallied as it goes to the spill file, the buffer's rest when the
cut is sought), so that the spill is read back once, not twice:

- **fingerprints per count.** Per count c of held deliveries, the first process to
  reach c leaves two 64-bit sums of the hashes (hashes.py) of its first c deliveries
  and the hash of its c-th; every other process that reaches c is compared with them.
  After the last count where some process differs, every process has delivered the
  same messages (a local breach, as two swapped deliveries).
- **the first delivering process's deliveries**, both hashes per count: the messages of
  a cut at count k.
- **each message delivered at a count below ``reach``**, both hashes and the least count
  at which any process delivered it: the messages of a cut at count n < ``reach`` when
  processes are shifted against each other (a repeat or a gap: one process's positions
  differ from the others' for the rest of the run), the union of every process's first
  n deliveries.

The sums and counts only choose where to cut; narrow.py's second pass checks the cut
exactly. Memory: 41 bytes a held position, and 24 bytes a message delivered below
``reach``.
"""

from __future__ import annotations

import copy

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..chunk import CRASH, DELIVER, JOIN, LEAVE, SEND, VIEW, Piece, kind_codes
from .hashes import hash_ids

__all__ = ["Procs", "Tally", "grow", "id_hashes", "reach"]


def reach(least: int) -> int:
    """The counts below which a tally keeps each delivered message, for a trace whose
    picture broke when S ended ``least`` held positions in: twice that and a margin, so
    that a process shifted at the breach has delivered, before the cut, a later message
    of the sender whose message it skipped (FIFO's scan then stops before the cut,
    narrow.py)."""
    return 2 * least + 64


class Procs:
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


def id_hashes(col: pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
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


def grow(a: np.ndarray, n: int) -> np.ndarray:
    if len(a) >= n:
        return a
    out = np.zeros(max(n, 2 * len(a)), a.dtype)
    out[:len(a)] = a
    return out


class Tally:
    """The first pass (module docstring)."""

    def __init__(self, reach: int, views: bool = False) -> None:
        self.procs = Procs()
        #: a trace with views: its membership records are passed over (viewcut.py), and
        #: a process whose first held delivery is not the first delivering process's (a
        #: late joiner, delivering from a later view on) is left out of the counts
        self.views = views
        self.outside: set[int] = set()
        #: the held records are sends and deliveries only (and, with views, membership
        #: records): a cut needs that
        self.plain = True
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
        #: counts below which each delivered message's least count is kept
        self.reach = reach
        #: (h1, h2, least count), unique by h1, sorted by it; and pieces not merged yet
        self.low = (np.zeros(0, np.uint64), np.zeros(0, np.uint64), np.zeros(0, np.int64))
        self.fresh: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.nfresh = 0
        #: two ids with one first hash among those below ``reach`` (no cut by them)
        self.clash = False

    def copy(self) -> Tally:
        return copy.deepcopy(self)

    def feed(self, piece: Piece) -> None:
        """The next held piece, in the order the records came."""
        if not self.plain:
            return
        t = piece.table
        kinds = kind_codes(t.column("kind"))
        allowed = (SEND, DELIVER, VIEW, JOIN, LEAVE, CRASH) if self.views else (SEND, DELIVER)
        if not np.isin(kinds, allowed).all():
            self.plain = False
            return
        dr = np.flatnonzero(kinds == DELIVER)
        if not len(dr):
            return
        proc = self.procs.of(t.column("process"))[dr]
        h1, h2 = id_hashes(t.column("msg"))
        h1, h2 = h1[dr], h2[dr]
        n = len(self.procs)
        self.d = grow(self.d, n)
        self.x1 = grow(self.x1, n)
        self.x2 = grow(self.x2, n)
        for q in np.unique(proc).tolist():
            rows = np.flatnonzero(proc == q)
            if self.views and self._outside(q, h1[rows[0]]):
                continue
            lo, hi = int(self.d[q]), int(self.d[q]) + len(rows)
            s1 = np.cumsum(h1[rows], dtype=np.uint64) + self.x1[q]
            s2 = np.cumsum(h2[rows], dtype=np.uint64) + self.x2[q]
            for name in ("a1", "a2", "last", "bad", "r1", "r2"):
                setattr(self, name, grow(getattr(self, name), hi))
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
            if lo < self.reach:
                below = min(hi, self.reach) - lo
                self._note(h1[rows[:below]], h2[rows[:below]],
                           np.arange(lo, lo + below, dtype=np.int64))
            self.d[q], self.x1[q], self.x2[q] = hi, s1[-1], s2[-1]

    def _outside(self, q: int, first: np.uint64) -> bool:
        """Whether process q's deliveries are left out (a trace with views: its first held
        delivery is not the first delivering process's)."""
        if q in self.outside:
            return True
        if self.d[q] or self.ref < 0 or q == self.ref:
            return False
        if first != self.r1[0]:
            self.outside.add(q)
            return True
        return False

    def _note(self, h1: np.ndarray, h2: np.ndarray, count: np.ndarray) -> None:
        self.fresh.append((h1, h2, count))
        self.nfresh += len(h1)
        if self.nfresh > max(len(self.low[0]), 1 << 16):
            self._merge()

    def _merge(self) -> None:
        if not self.fresh:
            return
        h1, h2, c = (np.concatenate([a[i] for a in [self.low, *self.fresh]])
                     for i in range(3))
        self.fresh, self.nfresh = [], 0
        order = np.lexsort((c, h1))  # by first hash, least count first
        h1, h2, c = h1[order], h2[order], c[order]
        first = np.ones(len(h1), bool)
        first[1:] = h1[1:] != h1[:-1]
        # every row of one first hash must carry one second hash (else two ids share it)
        group = np.cumsum(first) - 1
        if (h2 != h2[first][group]).any():
            self.clash = True
        self.low = (h1[first], h2[first], c[first])

    def delivering(self) -> int:
        """The least count of held deliveries among the processes that delivered."""
        d = self.d[:len(self.procs)]
        return int(d[d > 0].min()) if (d > 0).any() else 0

    def most(self) -> int:
        """The largest count of held deliveries of a process."""
        d = self.d[:len(self.procs)]
        return int(d.max()) if len(d) else 0

    def settled(self) -> int:
        """The first count after every count where processes differ (0: none delivered),
        among those every delivering process reached."""
        low = self.delivering()
        if not low:
            return 0
        bad = np.flatnonzero(self.bad[:low])
        return min(int(bad[-1]) + 2 if len(bad) else 1, low)

    def parted(self) -> int:
        """The first count after the first count where processes differ (0: none), among
        those every delivering process reached: where a shift (a repeat, a gap) begins."""
        bad = np.flatnonzero(self.bad[:self.delivering()])
        return int(bad[0]) + 2 if len(bad) else 0

    def below(self, n: int) -> tuple[np.ndarray, np.ndarray] | None:
        """Both hashes of the messages some process delivered as one of its first ``n``
        held deliveries (n <= ``reach``); None when two of them share a first hash."""
        self._merge()
        if self.clash:
            return None
        h1, h2, c = self.low
        keep = c < n
        return h1[keep], h2[keep]

    def first(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Both hashes of the first delivering process's first ``k`` held deliveries."""
        return self.r1[:k].copy(), self.r2[:k].copy()
