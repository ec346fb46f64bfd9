"""The held records of a broken trace, on disk once they outgrow a bounded buffer.

When a trace's canonical picture breaks (canon.py), the single pass keeps every record
after its retired prefix for the properties' exact checks at the end (reduced.py): a
later record can still move the first violation they report. In a long run broken
early, that is the rest of the run. Those records go to an in-memory buffer of at most
``SPILL_ROWS`` records, then, each time it fills, to a temporary file as one Arrow IPC
stream (zstd-compressed, dictionaries decoded, each record's line and file kept beside
it), so that reading the rest of the run holds a buffer, not the run. The exact checks
read them back, in the order they came.

``tomkit watch --state DIR`` keeps the file in DIR: its checkpoint names the file and
its length, and a restart cuts the file back to that length (what was spilled after the
checkpoint is read again from the logs), so a record is never held twice.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..chunk import Piece

__all__ = ["SPILL_ROWS", "Spill"]

#: held records kept in memory before they go to the spill file
SPILL_ROWS = 1 << 18
_LINE, _SRC = "__line", "__source"


def _plain(table: pa.Table) -> pa.Table:
    """The table with its dictionary columns decoded (pieces encode them differently)."""
    for i, f in enumerate(table.schema):
        if pa.types.is_dictionary(f.type):
            table = table.set_column(i, f.name, pc.cast(table.column(i), f.type.value_type))
    return table


class CheckpointedFile:
    """A file the single pass appends to and ``tomkit watch --state`` keeps (the spill,
    checker/stream/retired.py's sequence): removed by ``close``; on a restart from a
    checkpoint, cut back to the bytes the checkpoint counted (``kept``), because what
    was written after it is written again as the logs are read again."""

    path: str

    def kept(self) -> int:
        raise NotImplementedError

    def close(self) -> None:
        """Remove the file."""
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        with open(self.path, "r+b") as f:
            f.truncate(self.kept())


class Spill(CheckpointedFile):
    """A file of held records, appended in segments (module docstring)."""

    def __init__(self, directory: str | None = None) -> None:
        fd, self.path = tempfile.mkstemp(prefix="tomkit-held-", suffix=".arrows",
                                         dir=directory)
        os.close(fd)
        self.size = 0  # bytes written (a restart cuts the file back to this)
        self.offsets: list[int] = []  # where each segment starts
        self.rows = 0
        self.sources: list[tuple[str, str]] = []  # (source, fmt) by the __source code

    def write(self, pieces: list[Piece]) -> None:
        """Append ``pieces`` as one segment."""
        tables = []
        for p in pieces:
            key = (p.source, p.fmt)
            if key not in self.sources:
                self.sources.append(key)
            n = p.table.num_rows
            tables.append(_plain(p.table)
                          .append_column(_LINE, pa.array(np.asarray(p.lines, np.int64)))
                          .append_column(_SRC, pa.array(np.full(n, self.sources.index(key),
                                                                np.int32))))
        table = pa.concat_tables(tables, promote_options="permissive")
        options = pa.ipc.IpcWriteOptions(compression="zstd")
        with open(self.path, "r+b") as f:
            f.seek(self.size)
            with pa.ipc.new_stream(f, table.schema, options=options) as w:
                w.write_table(table)
            f.truncate()
            self.offsets.append(self.size)
            self.size = f.tell()
        self.rows += table.num_rows

    def read(self) -> list[Piece]:
        """Every spilled record, as pieces in the order they were written."""
        return list(self.pieces())

    def pieces(self) -> Iterator[Piece]:
        """The spilled records as pieces in the order they were written, one segment
        in memory at a time (a second pass over a long broken run, reduced.py)."""
        with open(self.path, "rb") as f:
            for off in self.offsets:
                f.seek(off)
                table = pa.ipc.open_stream(f).read_all()
                lines = table.column(_LINE).to_numpy()
                src = table.column(_SRC).to_numpy()
                table = table.drop_columns([_LINE, _SRC])
                cuts = np.flatnonzero(src[1:] != src[:-1]) + 1
                for a, b in zip([0, *cuts.tolist()], [*cuts.tolist(), len(src)]):
                    source, fmt = self.sources[int(src[a])]
                    yield Piece(table.slice(a, b - a), lines[a:b], source, fmt)

    def kept(self) -> int:
        return self.size
