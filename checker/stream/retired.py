"""The retired prefix of the canonical sequence, in order, on disk.

When the single pass retires positions of S (canon.py), their ids leave memory: only
a set of first hashes stays, to catch an id used again. A process that lags behind the
retired prefix (one that first appears late, as in a file grouped by process: one
process's records, then the next's) still has to deliver those positions, each to be
compared with S[k]. So each retired position's two hashes (hashes.py), and per
measured clock its message's send time (a late delivery's latency), are appended to a
file of fixed-width rows, and read back by position as the lagging process advances:
memory holds the window, not the lag; the file costs 16 bytes a position (and 8 a
clock). With a clock measured, each row also names its message's send (its sender's
code, its index among that sender's sends, its line and source's code: 24 bytes), which
a late delivery's latency witness names when it is the slowest.

A lagging delivery that matches S[k] keeps the picture; anything else a lagging process
does to the retired prefix (another message there, a send of a retired id) breaks it
where the held records cannot stand for it, and the trace goes to the whole-trace
engine, as before this file existed.

``tomkit watch --state DIR`` keeps the file in DIR; its checkpoint holds the row count,
and a restart cuts the file back to it (what was written after is retired again).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence

import numpy as np

from .spill import CheckpointedFile

__all__ = ["RetiredSequence"]


#: the send columns a row carries with a clock measured (``append``'s ``sends``)
SEND_COLUMNS = (("sender", "<i4"), ("s_index", "<i8"), ("s_line", "<i8"), ("s_src", "<i4"))


class RetiredSequence(CheckpointedFile):
    """S[0:rows) as rows of (h1, h2, one send time per clock; with a clock, the send's
    sender, index and location) in a file."""

    def __init__(self, clocks: Sequence[str], directory: str | None = None) -> None:
        fd, self.path = tempfile.mkstemp(prefix="tomkit-retired-", suffix=".bin",
                                         dir=directory)
        os.close(fd)
        self.dtype = np.dtype([("h1", "<u8"), ("h2", "<u8")] +
                              [(f"t_{c}", "<f8") for c in clocks] +
                              (list(SEND_COLUMNS) if clocks else []))
        self.clocks = tuple(clocks)
        self.rows = 0

    def append(self, h1: np.ndarray, h2: np.ndarray, t_send: dict[str, np.ndarray],
               sends: dict[str, np.ndarray] | None = None) -> None:
        """The next retired positions, in S's order (``sends``: with a clock, the
        ``SEND_COLUMNS`` of each; -1 where a send is not read yet)."""
        rec = np.empty(len(h1), self.dtype)
        rec["h1"], rec["h2"] = h1, h2
        for c in self.clocks:
            rec[f"t_{c}"] = t_send[c]
        if self.clocks:
            for name, _ in SEND_COLUMNS:
                rec[name] = sends[name] if sends is not None else -1
        with open(self.path, "r+b") as f:
            f.seek(self.rows * self.dtype.itemsize)
            f.write(rec.tobytes())
        self.rows += len(h1)

    def fill(self, pos: np.ndarray, cols: dict[str, np.ndarray]) -> None:
        """Columns of the rows at positions ``pos``, written in place: the send of a
        position that retired before its send was read (canon.py's awaited sends), once
        it is."""
        if not len(pos):
            return
        mm = np.memmap(self.path, self.dtype, mode="r+", shape=(self.rows,))
        try:
            for name, v in cols.items():
                mm[name][pos] = v
            mm.flush()
        finally:
            del mm

    def at(self, pos: np.ndarray) -> np.ndarray:
        """The rows at positions ``pos`` (each below ``rows``), read through a memory
        map: only the pages they lie on are read."""
        if not len(pos):
            return np.empty(0, self.dtype)
        mm = np.memmap(self.path, self.dtype, mode="r", shape=(self.rows,))
        try:
            return np.array(mm[pos])
        finally:
            del mm

    def kept(self) -> int:
        return self.rows * self.dtype.itemsize
