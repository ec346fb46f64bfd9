"""The retired prefix of the canonical sequence, in order, on disk.

When the single pass retires positions of S (canon.py), their ids leave memory: only
a set of first hashes stays, to catch an id used again. A process that lags behind the
retired prefix (one that first appears late, as in a file grouped by process: one
process's records, then the next's) still has to deliver those positions, each to be
compared with S[k]. So each retired position's two hashes (hashes.py), and per
measured clock its message's send time (a late delivery's latency), are appended to a
file of fixed-width rows, and read back by position as the lagging process advances:
memory holds the window, not the lag; the file costs 16 bytes a position (and 8 a
clock).

A lagging delivery that matches S[k] keeps the picture; anything else a lagging process
does to the retired prefix (another message there, a send of a retired id) breaks it
where the held records cannot stand for it, and the trace goes to the whole-trace
engine, as before this file existed.

**The witnesses of the retired prefix.** A clean trace whose correct process stopped
behind the retired prefix (a process that lagged in a file grouped by process, a
leaver, a member stalled in an early view, a late member that owes what was sent
before it came) violates agreement, validity, liveness or member liveness *there*: the
verdict follows from counts (ledger.py), but the witness names the message and a record
of it, as the whole-trace checker cites them: a process's delivery of it (with its
index among that process's deliveries, file and line) or its send (its index among the
sender's sends, file and line), and member liveness judges by the send's clocks. So
each retired position also keeps, beside the hashes:

- its id: the bytes in a strings file, the end offset in the row (8 bytes and the id);
- its send: the sender, its index among the sender's sends and its location (file and
  line, packed: 16 bytes), filled in later for a position retired before its send came;
- the send's ``time``, ``real_time`` and slot (``x_slot``), each in its own file, made
  the first time a retired send carries that clock (8 bytes a position each);
- per process, the line of each of its deliveries that left memory, in its delivery
  order (4 bytes a delivery; the files its lines lie in as runs, in memory): a process's
  positions in S increase along its deliveries (views are laid out in the order they are
  installed), so its deliveries retire in its own order, those of a process lagging
  behind as they are judged, and its delivery number i is row i of its file.

Which deliverer a witness cites is the whole-trace checker's choice (agreement: the
first deliverer by name, in the scope, with a delivery some correct process misses;
liveness: the first correct deliverer by name), which only the end of the trace
settles (a crash after the delivery, a lagging process first by name), so every
process's lines are kept. Only the rows a witness needs are read back (memory maps).

``tomkit watch --state DIR`` keeps the files in DIR; its checkpoint holds their counts,
and a restart cuts them back (what was written after is retired again).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from ...traces.errors import Location
from .spill import CheckpointedFile

__all__ = ["CLOCKS", "RetiredSequence", "Sends"]

#: the send clocks member liveness reads (checker/trace.py's time, real_time, slot)
CLOCKS = ("time", "real_time", "slot")
#: a location packed in 64 bits: the source's index above, its line (or row) below
_SHIFT = 40
_LINE_MASK = (1 << _SHIFT) - 1
_WITNESS = np.dtype([("sender", "<i4"), ("sidx", "<i4"), ("sloc", "<i8"), ("idend", "<u8")])


@dataclass
class Sends:
    """The sends of retired positions, in position order (-1: not known)."""

    sender: np.ndarray  # the sender's process code (canon.py's)
    sidx: np.ndarray  # its index among the sender's sends
    line: np.ndarray  # its line (JSON Lines) or row (Parquet)
    source: np.ndarray  # its file's index (``RetiredSequence.source``)
    clocks: dict[str, np.ndarray] = field(default_factory=dict)  # by CLOCKS name


def _mkfile(directory: str | None, what: str) -> str:
    fd, path = tempfile.mkstemp(prefix=f"tomkit-retired-{what}-", suffix=".bin",
                                dir=directory)
    os.close(fd)
    return path


def _write(path: str, at: int, data: bytes) -> None:
    with open(path, "r+b") as f:
        f.seek(at)
        f.write(data)


class _Lines:
    """One process's delivery lines, in its delivery order (module docstring)."""

    def __init__(self, directory: str | None) -> None:
        self.path = _mkfile(directory, "lines")
        self.count = 0
        #: (first delivery number, source index): where its lines' file changes
        self.runs: list[tuple[int, int]] = []
        #: a line past 32 bits was read: its locations are not kept (witness: whole)
        self.lost = False

    def append(self, lines: np.ndarray, source: int) -> None:
        if not self.runs or self.runs[-1][1] != source:
            self.runs.append((self.count, source))
        if len(lines) and int(lines.max()) >= 1 << 32:
            self.lost = True
        _write(self.path, self.count * 4, np.asarray(lines, "<u4").tobytes())
        self.count += len(lines)

    def at(self, i: int) -> tuple[int, int] | None:
        """(source index, line) of delivery number ``i`` (None: not kept)."""
        if self.lost or not 0 <= i < self.count:
            return None
        with open(self.path, "rb") as f:
            f.seek(i * 4)
            line = int(np.frombuffer(f.read(4), "<u4")[0])
        src = next(s for first, s in reversed(self.runs) if first <= i)
        return src, line


class RetiredSequence(CheckpointedFile):
    """S[0:rows) as rows of (h1, h2, one send time per clock) in a file, and what the
    end-of-trace witnesses cite of each (module docstring)."""

    def __init__(self, clocks: Sequence[str], directory: str | None = None) -> None:
        fd, self.path = tempfile.mkstemp(prefix="tomkit-retired-", suffix=".bin",
                                         dir=directory)
        os.close(fd)
        self.directory = directory
        self.dtype = np.dtype([("h1", "<u8"), ("h2", "<u8")] +
                              [(f"t_{c}", "<f8") for c in clocks])
        self.clocks = tuple(clocks)
        self.rows = 0
        self.wpath = _mkfile(directory, "witness")
        self.ipath = _mkfile(directory, "ids")
        self.id_bytes = 0
        #: (start, end) of the positions whose ids were not kept (their rows read as "")
        self.lost: list[tuple[int, int]] = []
        #: member liveness's send clocks, by name: a file each, made when first needed
        self.cpaths: dict[str, str] = {}
        #: per process name, its delivery lines
        self.lines: dict[str, _Lines] = {}
        self.sources: list[tuple[str, str]] = []  # (source, fmt), by index

    # ---- writing ------------------------------------------------------------------------

    def append(self, h1: np.ndarray, h2: np.ndarray, t_send: dict[str, np.ndarray],
               ids: pa.Array | None = None, sends: Sends | None = None) -> None:
        """The next retired positions, in S's order; ``ids`` and ``sends``: what their
        witnesses cite (None: not kept, a witness there goes whole)."""
        n = len(h1)
        rec = np.empty(n, self.dtype)
        rec["h1"], rec["h2"] = h1, h2
        for c in self.clocks:
            rec[f"t_{c}"] = t_send[c]
        _write(self.path, self.rows * self.dtype.itemsize, rec.tobytes())
        wit = np.full(n, -1, _WITNESS)
        if ids is not None:
            ids = ids.cast(pa.large_binary())
            offs = np.frombuffer(ids.buffers()[1], np.int64)[ids.offset:ids.offset + n + 1]
            data = ids.buffers()[2]
            _write(self.ipath, self.id_bytes,
                   data.to_pybytes()[int(offs[0]):int(offs[-1])] if data else b"")
            wit["idend"] = self.id_bytes + offs[1:] - offs[0]
            self.id_bytes += int(offs[-1] - offs[0])
        else:
            wit["idend"] = self.id_bytes
            self.lost.append((self.rows, self.rows + n))
        at = self.rows
        self.rows += n
        if sends is not None:  # in memory, then one write (a memory map costs a flush)
            wit["sender"], wit["sidx"] = sends.sender, sends.sidx
            wit["sloc"] = self._packed(sends)
        _write(self.wpath, at * _WITNESS.itemsize, wit.tobytes())
        if sends is None:
            return
        for c, t in sends.clocks.items():
            t = np.asarray(t, "<f8")
            if c not in self.cpaths:
                if np.isnan(t).all():
                    continue
                self.cpaths[c] = _mkfile(self.directory, c)
            self._grow_clock(c, at)
            _write(self.cpaths[c], at * 8, t.tobytes())

    def _packed(self, sends: Sends) -> np.ndarray:
        line = np.asarray(sends.line, np.int64)
        src = np.asarray(sends.source, np.int64)
        return np.where(line >= 0, (src << _SHIFT) | (line & _LINE_MASK), -1)

    def fill(self, pos: np.ndarray, sends: Sends) -> None:
        """The sends of retired positions ``pos`` (each below ``rows``)."""
        if not len(pos):
            return
        mm = np.memmap(self.wpath, _WITNESS, mode="r+", shape=(self.rows,))
        try:
            mm["sender"][pos] = sends.sender
            mm["sidx"][pos] = sends.sidx
            mm["sloc"][pos] = self._packed(sends)
            # no msync: the pages reach the file through the page cache, which every later
            # read (and a restart after kill -9) sees; forcing them to the disk cost more
            # than the fill itself in a small window
        finally:
            del mm
        for c, t in sends.clocks.items():
            t = np.asarray(t, np.float64)
            if c not in self.cpaths:
                if np.isnan(t).all():
                    continue
                self.cpaths[c] = _mkfile(self.directory, c)
            self._grow_clock(c)
            cm = np.memmap(self.cpaths[c], "<f8", mode="r+", shape=(self.rows,))
            try:
                cm[pos] = t
            finally:
                del cm

    def _grow_clock(self, c: str, upto: int | None = None) -> None:
        """Pad clock ``c``'s file with absent values (NaN) up to ``upto`` rows (None:
        ``rows``)."""
        upto = self.rows if upto is None else upto
        have = os.path.getsize(self.cpaths[c]) // 8
        if have < upto:
            _write(self.cpaths[c], have * 8, np.full(upto - have, np.nan, "<f8").tobytes())

    def deliveries(self, process: str, lines: np.ndarray, source: str, fmt: str) -> None:
        """``process``'s next deliveries that left memory, in its delivery order."""
        if not len(lines):
            return
        mine = self.lines.get(process)
        if mine is None:
            mine = self.lines[process] = _Lines(self.directory)
        mine.append(lines, self.source(source, fmt))

    def source(self, source: str, fmt: str) -> int:
        """The index of a file (its source and format) in the packed locations."""
        key = (source, fmt)
        if key not in self.sources:
            self.sources.append(key)
        return self.sources.index(key)

    # ---- reading ------------------------------------------------------------------------

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

    def witness(self, lo: int, hi: int) -> np.ndarray:
        """The witness rows (sender, sidx, sloc, idend) of positions lo..hi-1."""
        if hi <= lo:
            return np.empty(0, _WITNESS)
        mm = np.memmap(self.wpath, _WITNESS, mode="r", shape=(self.rows,))
        try:
            return np.array(mm[lo:hi])
        finally:
            del mm

    def witness_at(self, pos: np.ndarray) -> np.ndarray:
        """The witness rows (sender, sidx, sloc, idend) at positions ``pos``: the sends
        a lagging delivery's latency witness names (canon.py)."""
        if not len(pos):
            return np.empty(0, _WITNESS)
        mm = np.memmap(self.wpath, _WITNESS, mode="r", shape=(self.rows,))
        try:
            return np.array(mm[pos])
        finally:
            del mm

    def ids(self, lo: int, hi: int) -> pa.Array | None:
        """The ids of positions lo..hi-1, as an Arrow string array (None: one is not
        kept)."""
        if hi <= lo:
            return pa.array([], pa.large_string())
        if any(a < hi and lo < b for a, b in self.lost):
            return None
        ends = self.witness(max(lo - 1, 0), hi)["idend"].astype(np.int64)
        start = int(ends[0]) if lo else 0
        ends = ends[1:] if lo else ends
        if (np.diff(np.concatenate(([start], ends))) < 0).any():
            return None
        with open(self.ipath, "rb") as f:
            f.seek(start)
            data = f.read(int(ends[-1]) - start)
        offs = np.concatenate(([0], ends - start)).astype(np.int64)
        arr = pa.LargeStringArray.from_buffers(hi - lo, pa.py_buffer(offs.tobytes()),
                                               pa.py_buffer(data))
        return arr

    def id_at(self, k: int) -> str | None:
        arr = self.ids(k, k + 1)
        return None if arr is None else arr[0].as_py()

    def send_at(self, k: int) -> tuple[int, int, Location] | None:
        """(sender code, its send index, location) of retired position k's send (None:
        not known)."""
        w = self.witness(k, k + 1)[0]
        if int(w["sender"]) < 0 or int(w["sloc"]) < 0:
            return None
        return int(w["sender"]), int(w["sidx"]), self.location(int(w["sloc"]))

    def send_clocks(self, pos: np.ndarray) -> dict[str, np.ndarray]:
        """The sends' member-liveness clocks at positions ``pos``, by CLOCKS name (NaN:
        absent)."""
        out = {}
        for c in CLOCKS:
            if c not in self.cpaths:
                out[c] = np.full(len(pos), np.nan)
                continue
            have = os.path.getsize(self.cpaths[c]) // 8
            cm = np.memmap(self.cpaths[c], "<f8", mode="r", shape=(have,))
            try:
                ok = pos < have
                v = np.full(len(pos), np.nan)
                v[ok] = cm[pos[ok]]
                out[c] = v
            finally:
                del cm
        return out

    def delivery(self, process: str, i: int) -> Location | None:
        """Where ``process``'s delivery number ``i`` was read (None: not kept)."""
        mine = self.lines.get(process)
        hit = None if mine is None else mine.at(i)
        if hit is None:
            return None
        return self.location((hit[0] << _SHIFT) | hit[1])

    def location(self, packed: int) -> Location:
        source, fmt = self.sources[packed >> _SHIFT]
        n = packed & _LINE_MASK
        return Location(source, row=n) if fmt == "parquet" else Location(source, line=n)

    # ---- the files ----------------------------------------------------------------------

    def kept(self) -> int:
        return self.rows * self.dtype.itemsize

    def disk(self) -> int:
        """Bytes on disk, every file."""
        paths = [self.path, self.wpath, self.ipath, *self.cpaths.values(),
                 *(x.path for x in self.lines.values())]
        return sum(os.path.getsize(p) for p in paths if os.path.exists(p))

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        if "wpath" not in state:  # a checkpoint from before the witnesses: none kept
            self.directory = os.path.dirname(self.path)
            self.wpath = _mkfile(self.directory, "witness")
            self.ipath = _mkfile(self.directory, "ids")
            self.id_bytes, self.cpaths, self.lines, self.sources = 0, {}, {}, []
            self.lost = [(0, self.rows)]
            _write(self.wpath, 0, np.full(self.rows, -1, _WITNESS).tobytes())
        for path, size in [(self.path, self.kept()),
                           (self.wpath, self.rows * _WITNESS.itemsize),
                           (self.ipath, self.id_bytes),
                           *((p, self.rows * 8) for p in self.cpaths.values()),
                           *((x.path, x.count * 4) for x in self.lines.values())]:
            with open(path, "r+b") as f:
                f.truncate(min(size, os.path.getsize(path)))

    def close(self) -> None:
        for path in [self.path, self.wpath, self.ipath, *self.cpaths.values(),
                     *(x.path for x in self.lines.values())]:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass


def send_clocks(table: pa.Table, rows: np.ndarray) -> dict[str, np.ndarray]:
    """The member-liveness clocks of ``table``'s ``rows`` (sends), by CLOCKS name, as
    canon.py's ``_clocks`` reads a record: NaN where absent, not a finite number, or a
    bool; the slot floored."""
    out = {}
    for c, col in zip(CLOCKS, ("time", "real_time", "x_slot")):
        v = np.full(len(rows), np.nan)
        if col in table.column_names:
            arr = table.column(col)
            if pa.types.is_integer(arr.type) or pa.types.is_floating(arr.type):
                x = arr.take(pa.array(rows)).to_numpy(zero_copy_only=False).astype(np.float64)
                x[~np.isfinite(x)] = np.nan
                v = np.floor(x) if c == "slot" else x
        out[c] = v
    return out
