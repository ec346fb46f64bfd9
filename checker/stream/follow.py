"""Following growing JSON Lines logs: what ``tomkit watch`` reads, and where it stands.

A :class:`Follower` reads the complete lines appended to one file since its last
read (a line still being written stays for the next read), checked as the reader
checks a block (traces/jsonl.py: ``parse_lines``); once the run is over,
:meth:`Follower.read_rest` reads a last line without its newline as ``tomkit check``
does (a line cut short is an error naming file, line and field). Its position (device,
inode, byte offset, line number) is plain data, so that ``--state`` can store it and a
restart goes on from it. A named pipe, socket or device is refused (:func:`unfollowable`).

Rotation and truncation are told apart, never guessed at:

- *rotated*: the path now names another file (a new inode). The old file, still
  open, is read to its end first; then the new file is followed from its start, its
  records located as ``PATH (rotation k)``.
- *truncated*: the open file is shorter than what was read. Records read before
  cannot be told from the new ones, so following stops with :class:`FollowError`.
- at a restart, a path that names another file than the stored one, or a file shorter
  than the stored offset, is refused the same way.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ...traces.errors import TraceFormatError
from ...traces.importer import ImportStats, LiveImport, Mapping
from ...traces.jsonl import BOM, parse_lines
from ...traces.jsonl import header_line as read_header
from ...traces.validate import records_to_table
from ..chunk import Piece

__all__ = ["FollowError", "Follower", "MappedFollower", "Position", "unfollowable"]

#: at most this much a read: a backlog comes in pieces of a few thousand records, each
#: checked (and its verdicts printed) before the next is parsed
READ_BYTES = 1 << 20


class FollowError(Exception):
    """A followed file was truncated, or replaced while tomkit watch was down, or is
    no file that grows (a pipe, a device, a socket)."""


def unfollowable(path: str) -> str | None:
    """Why ``path``, which exists, cannot be followed, in one line; or None (a regular
    file, or nothing there yet). Opening a named pipe waited for a writer, and offsets
    and a restart's position mean nothing in a stream."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):  # a folder: the command says it
        return None
    what = ("a named pipe" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a device")
    return (f"{path}: {what}, not a file: tomkit watch follows a file as it grows "
            "(reading on from where it stopped, also after a restart); have the writer "
            "append to a file and watch that, or save the stream to a file and check it "
            "with tomkit check")


@dataclass
class Position:
    path: str
    dev: int = -1
    ino: int = -1
    offset: int = 0  # bytes of complete lines consumed
    line: int = 0  # lines consumed
    rotation: int = 0
    records: int = 0  # records read from the path (every rotation)
    header: list[str] | None = None  # a mapped CSV log's columns, once its header is read

    @property
    def source(self) -> str:
        return self.path if not self.rotation else f"{self.path} (rotation {self.rotation})"


class Follower:
    """One followed file (module docstring)."""

    def __init__(self, pos: Position, *, keep_going: bool = False) -> None:
        self.pos = pos
        self.keep_going = keep_going
        self.rejected: list[TraceFormatError] = []
        self.f = None
        self.grouped: bool | None = None

    def _open(self) -> bool:
        """Open the path if it exists; check it is the stored file at a restart."""
        why = unfollowable(self.pos.path)
        if why:  # opening a named pipe waits for a writer, for ever if none comes
            raise FollowError(why)
        try:
            f = open(self.pos.path, "rb")
        except FileNotFoundError:
            return False
        st = os.fstat(f.fileno())
        if self.pos.ino >= 0 and (st.st_dev, st.st_ino) != (self.pos.dev, self.pos.ino):
            f.close()
            raise FollowError(f"{self.pos.path}: not the file followed before (another "
                              f"inode): it was rotated or replaced while tomkit watch was "
                              "down, so its records cannot be told from those read; start "
                              "again with a new --state")
        if st.st_size < self.pos.offset:
            f.close()
            raise FollowError(f"{self.pos.path}: {st.st_size} bytes, shorter than the "
                              f"{self.pos.offset} read before: truncated; start again with "
                              "a new --state")
        self.pos.dev, self.pos.ino = st.st_dev, st.st_ino
        f.seek(self.pos.offset)
        self.f = f
        return True

    def close(self) -> None:
        if self.f is not None:
            self.f.close()
            self.f = None

    def read(self) -> Iterator[Piece]:
        """The records of the complete lines appended since the last read, piece by
        piece: the position stands after each piece as it is handed out, so a caller
        that checks each piece before taking the next reports a breach in a backlog
        without parsing the rest of it first."""
        if self.f is None and not self._open():
            return
        yield from self._drain()
        try:
            st = os.stat(self.pos.path)
        except FileNotFoundError:
            return  # mid-rotation: the new file is not there yet
        if (st.st_dev, st.st_ino) != (self.pos.dev, self.pos.ino):
            yield from self._drain(final=True)  # the rotated file's last lines
            self.close()
            self.pos = Position(self.pos.path, rotation=self.pos.rotation + 1,
                                records=self.pos.records)
            if self._open():
                yield from self._drain()

    def read_rest(self) -> Iterator[Piece]:
        """The records still unread once the file is complete (the run is over): a last
        line without its newline is read as tomkit check reads it, a whole record taken
        and one cut short (its writer killed mid-write) a TraceFormatError naming file,
        line and field (rejected, keep going). While the file grows such a line is one
        still being written, left for the next read."""
        if self.f is None and not self._open():
            return
        yield from self.read()
        if self.f is None:
            return
        self.f.seek(self.pos.offset)
        rest = self.f.read()
        if not rest.strip():
            return
        piece = self._parse(rest + b"\n")
        self.pos.offset += len(rest)
        if piece is not None:
            yield piece

    def _drain(self, final: bool = False) -> Iterator[Piece]:
        assert self.f is not None
        size = os.fstat(self.f.fileno()).st_size
        if size < self.pos.offset:
            raise FollowError(f"{self.pos.source}: truncated while followed (now {size} "
                              f"bytes, {self.pos.offset} read): the records written again "
                              "cannot be told from those read; tomkit watch stops")
        want = READ_BYTES
        while True:
            self.f.seek(self.pos.offset)
            data = self.f.read(want)
            end = self._cut(data)
            if end == 0 and len(data) == want:
                want *= 2  # one line longer than a read: read more, not never
                continue
            want = READ_BYTES
            if end == 0:
                if final and data:
                    raise FollowError(f"{self.pos.source}: rotated with an unfinished last "
                                      f"line (after line {self.pos.line}): not read")
                return
            piece = self._parse(data[:end])
            self.pos.offset += end
            if piece is not None:
                yield piece
            if len(data) < want:
                return

    def _cut(self, data: bytes) -> int:
        """How many bytes of ``data`` are complete lines."""
        return data.rfind(b"\n") + 1

    def _parse(self, data: bytes) -> Piece | None:
        first = self.pos.line + 1
        nl = int(np.count_nonzero(np.frombuffer(data, np.uint8) == 10))
        self.pos.line += nl
        if first == 1:
            if data.startswith(BOM):
                data = data[len(BOM):]
            cut = data.find(b"\n")
            grouped = read_header(data[:cut].rstrip(b"\r"), self.pos.source)
            if grouped != "record":
                self.grouped = grouped
                data, first = data[cut + 1:], 2
                if not data:
                    return None
        table, lines = parse_lines(data, first, self.pos.source, keep_going=self.keep_going,
                                   rejected=self.rejected)
        if table.num_rows == 0:
            return None
        self.pos.records += table.num_rows
        return Piece(table, np.asarray(lines, np.int64), self.pos.source, "jsonl")


class MappedFollower(Follower):
    """One followed log read through an import mapping (traces/importer.py): the records
    ``tomkit import`` makes of its lines, located at the log's own lines."""

    def __init__(self, pos: Position, mapping: Mapping, seq: dict[tuple[str, str], int], *,
                 keep_going: bool = False) -> None:
        super().__init__(pos, keep_going=keep_going)
        self.live = LiveImport(mapping, pos.path, seq)
        self.stats = ImportStats()
        self.rejected = self.stats.rejected

    def _cut(self, data: bytes) -> int:
        return self.live.cut(data)

    def _parse(self, data: bytes) -> Piece | None:
        m = self.live.m
        if self.pos.header is None and not m.csv_header:
            self.pos.header = list(m.csv_columns)
        self.live.columns = self.pos.header
        self.live.path = self.pos.source
        records, lines, n = self.live.records(data, self.pos.line + 1, self.stats,
                                              keep_going=self.keep_going)
        self.pos.header = self.live.columns
        self.pos.line += n
        if not records:
            return None
        self.pos.records += len(records)
        return Piece(records_to_table(records), np.asarray(lines, np.int64), self.pos.source,
                     "jsonl")
