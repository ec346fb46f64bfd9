"""Reading trace files: one streaming API over JSON Lines (plain, gzip) and Parquet.

:class:`TraceReader` opens a file, reads its header or metadata at once
(:attr:`TraceReader.info`), and yields :class:`Batch` es of checked records,
never holding the whole file. Every bad input raises
:class:`~tomkit.traces.errors.TraceFormatError` naming the file, the line
(JSON Lines, 1-based) or row (Parquet, 0-based) and the field. With
``keep_going=True`` bad records are collected in :attr:`TraceReader.rejected`
instead and all good records are delivered, so that ``accepted +
len(rejected)`` is the number of records in the file; file-level problems
(unreadable file, bad header, wrong column type) still raise, except a
truncated gzip file, whose complete lines are delivered and whose truncation
is recorded as the last rejection.

The format is chosen by suffix (``.parquet``/``.pq``; anything else is JSON
Lines, gzip when it ends in ``.gz``) and, for other names, by the file's first
bytes (``PAR1``, gzip magic). How each format is read fast, and checked
exactly, is described in :mod:`tomkit.traces.jsonl` and
:mod:`tomkit.traces.parquet`.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from tomkit.traces.errors import Location, TraceFormatError
from tomkit.traces.jsonl import JsonlSource
from tomkit.traces.parquet import PARQUET_MAGIC, ParquetSource
from tomkit.traces.validate import table_to_records, unify_tables

PARQUET_SUFFIXES = (".parquet", ".pq")


@dataclass
class FileInfo:
    source: str  # the path as given
    fmt: str  # "jsonl" or "parquet"
    version: int  # 1
    grouped: bool | None  # from header/metadata, None if absent


@dataclass
class Batch:
    """Checked records: ARROW_SCHEMA's 9 columns, then any x_* columns."""

    source: str
    table: pa.Table
    lines: np.ndarray  # int64: JSON Lines 1-based line number; Parquet 0-based row
    fmt: str

    def location(self, i: int) -> Location:
        n = int(self.lines[i])
        if self.fmt == "parquet":
            return Location(self.source, row=n)
        return Location(self.source, line=n)

    def __len__(self) -> int:
        return self.table.num_rows


def detect_format(path: str) -> str:
    """'parquet' or 'jsonl', by suffix, else by the first bytes."""
    lower = path.lower()
    if lower.endswith(PARQUET_SUFFIXES):
        return "parquet"
    if lower.endswith((".jsonl", ".json", ".ndjson", ".gz")):
        return "jsonl"
    try:
        with open(path, "rb") as f:
            magic = f.read(4)
    except OSError:
        return "jsonl"  # the JSON Lines reader reports the error
    return "parquet" if magic == PARQUET_MAGIC else "jsonl"


def trace_files(paths: Iterable[str | os.PathLike]) -> list[str]:
    """The paths, each directory replaced by the files below it, as ``tomkit scan`` lists
    a data set: recursively, in path order, skipping names that start with ``_`` or ``.``
    below it (``_SUCCESS``, ``.crc``, a data set's ``_ground_truth.jsonl``). A file named
    twice (itself and through its folder, say) is read once: twice, its traces would be
    checked twice, and merged (``--merge``) every event would be doubled. A directory with
    no such file is a TraceFormatError naming it."""
    out: list[str] = []
    seen: set[str] = set()

    def add(path: str) -> None:
        key = os.path.realpath(path)
        if key not in seen:
            seen.add(key)
            out.append(path)

    for path in map(os.fspath, paths):
        if not os.path.isdir(path):
            add(path)
            continue
        found = []
        for top, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith(("_", ".")))
            found += [os.path.join(top, f) for f in files if not f.startswith(("_", "."))]
        if not found:
            raise TraceFormatError(Location(path), "a directory with no trace file in it "
                                   "(names starting with _ or . are skipped)")
        for f in sorted(found):
            add(f)
    return out


def not_a_file(path: str) -> str | None:
    """Why ``path``, which exists, is no file the readers can read, or None. A pipe (the
    shell's ``<(zcat run.jsonl.gz)``) was read as an empty file, its first bytes taken to
    tell the format; /dev/zero filled the memory until the OOM killer came."""
    try:
        mode = os.stat(path).st_mode
    except OSError:  # missing, or unreadable: the reader says so as ever
        return None
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    what = ("a pipe" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a device")
    return (f"{what}, not a file: a trace file is read more than once (its first bytes "
            "tell the format); save the stream to a file first, or follow a growing "
            "file with tomkit watch")


class TraceReader:
    """Stream a trace file as checked :class:`Batch` es of at most ``batch_rows`` rows.

    ``block_bytes`` sets the size of the JSON Lines read blocks (default 16 MB;
    small values are for tests). With ``dictionary=True`` a Parquet file's ``trace``,
    ``process`` and ``msg`` columns may come as dictionary<int32, string> (as stored),
    which saves decoding them; the checker asks for this.
    """

    def __init__(
        self,
        path: str | os.PathLike,
        *,
        keep_going: bool = False,
        batch_rows: int = 65536,
        block_bytes: int | None = None,
        dictionary: bool = False,
    ):
        if batch_rows < 1:
            raise ValueError("batch_rows must be at least 1")
        self.source = os.fspath(path)
        self.keep_going = keep_going
        self.batch_rows = batch_rows
        special = not_a_file(self.source)
        if special is not None:
            raise TraceFormatError(Location(self.source), special)
        fmt = detect_format(self.source)
        self._src: JsonlSource | ParquetSource
        if fmt == "parquet":
            self._src = ParquetSource(self.source, self.source, dictionary=dictionary)
        else:
            self._src = JsonlSource(self.source, self.source, block_bytes=block_bytes)
        self.info = FileInfo(self.source, fmt, self._src.version, self._src.grouped)
        self.accepted = 0
        self.rejected: list[TraceFormatError] = []

    def __iter__(self) -> Iterator[Batch]:
        self.accepted = 0
        self.rejected.clear()
        if isinstance(self._src, ParquetSource):
            parts = self._src.batches(
                keep_going=self.keep_going, rejected=self.rejected, batch_rows=self.batch_rows
            )
        else:
            parts = self._src.batches(keep_going=self.keep_going, rejected=self.rejected)
        fmt = self.info.fmt
        step = self.batch_rows
        for table, lines in parts:
            n = table.num_rows
            for off in range(0, n, step):
                part = table if n <= step else table.slice(off, step)
                self.accepted += part.num_rows
                yield Batch(self.source, part, lines[off:off + step], fmt)
        if self.accepted + len(self.rejected) == 0:
            raise TraceFormatError(Location(self.source), "no records")


def read_table(path: str | os.PathLike, *, keep_going: bool = False) -> pa.Table:
    """The whole file as one table (for tests and small files)."""
    return unify_tables([b.table for b in TraceReader(path, keep_going=keep_going)])


def read_records(path: str | os.PathLike) -> list[dict]:
    """The records as dicts without null fields (for tests)."""
    return table_to_records(read_table(path))
