"""Writing trace files: canonical JSON Lines (plain, gzip) and Parquet.

Every record is checked by the same rules as on reading (bad input raises
:class:`~tomkit.traces.errors.TraceFormatError` whose location is the 0-based
index of the record among those written, as ``row``). Fields whose value is
``None`` count as absent, so rows of ``table.to_pylist()`` can be written as
they are.

Canonical output:

* JSON Lines: the header line first; then one compact object per line, keys
  in ``FIELDS`` order then extension keys sorted by name, absent fields left
  out, UTF-8 (not ASCII-escaped), ``time`` always written as a float and
  ``seq`` as an integer.
* Parquet: ``ARROW_SCHEMA`` then the extension columns, zstd, row groups of
  about a million rows, the format metadata in the file's key-value metadata.

``grouped``: True (the default of :class:`TraceWriter`) promises that each
trace's records are contiguous, and a record that breaks the promise raises
ValueError; False promises nothing; None finds out while writing and records
the answer on close (see :class:`tomkit.traces.jsonl.JsonlSink`), so that
nothing is buffered. A writer leaving its ``with`` block by an exception
deletes the partly written file; by Ctrl-C (KeyboardInterrupt), it closes the file with
the records written so far, each whole (its writes finish before the interrupt is
raised: ``traces/interrupt.py``), and says so in a note on the exception (deleting a
file with no record, which the readers would refuse).
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Iterable, Sequence
from types import TracebackType

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tomkit.traces.errors import Location, TraceFormatError
from tomkit.traces.interrupt import add_note, uninterrupted
from tomkit.traces.jsonl import JsonlSink, _canonical, encode_record, encode_table
from tomkit.traces.parquet import ParquetSink, check_columns, check_table
from tomkit.traces.schema import EXTENSION_PREFIX
from tomkit.traces.validate import (
    _dumps_x,
    columnar_safe,
    normalize,
    record_problem,
    records_to_table,
    run_starts,
    table_to_records,
)

_RECORD_BATCH = 65536  # records buffered before conversion to Arrow (Parquet)


def output_format(path: str) -> tuple[str, bool]:
    """(fmt, gzip) from the file name."""
    lower = path.lower()
    if lower.endswith((".parquet", ".pq")):
        return "parquet", False
    if lower.endswith((".jsonl.gz", ".json.gz", ".ndjson.gz")):
        return "jsonl", True
    if lower.endswith((".jsonl", ".json", ".ndjson")):
        return "jsonl", False
    raise ValueError(
        f"{path}: cannot tell the format from the name; use .jsonl, .jsonl.gz, .json "
        "or .parquet"
    )


def _extension_problem(rec: dict) -> tuple[str, str] | None:
    """x_ values are not checked, but they must be writable as JSON."""
    for k, v in rec.items():
        if not k.startswith(EXTENSION_PREFIX) or type(v) in (str, int, bool):
            continue
        if type(v) is float:
            if not math.isfinite(v):
                return k, f"{v} is not a finite number"
            continue
        try:
            _dumps_x(v)
        except (TypeError, ValueError) as e:
            return k, f"value cannot be written as JSON: {e}"
    return None


class TraceWriter:
    """Write records and tables to one trace file; the format comes from the suffix."""

    def __init__(self, path: str | os.PathLike, *, grouped: bool | None = True):
        self.path = os.fspath(path)
        self.fmt, self.compressed = output_format(self.path)
        self.grouped = grouped
        self.count = 0
        self._current: str | None = None
        self._finished: set[str] = set()
        self._is_grouped = True
        self._records: list[dict] = []
        self._closed = False
        self._jsonl: JsonlSink | None = None
        self._parquet: ParquetSink | None = None
        try:
            if self.fmt == "jsonl":
                self._jsonl = JsonlSink(self.path, compressed=self.compressed,
                                        grouped=grouped)
            else:
                self._parquet = ParquetSink(self.path)
        except KeyboardInterrupt as e:  # Ctrl-C or SIGTERM while the header is written:
            # not yet inside the caller's with block, whose exit would say it (an empty
            # file was left, which the readers refuse)
            with contextlib.suppress(OSError):
                os.remove(self.path)
            add_note(e, f"removed {self.path}: stopped before any record was written")
            raise

    # -- grouping -----------------------------------------------------------

    def _track(self, trace: str, index: int) -> None:
        if trace == self._current:
            return
        if self._current is not None:
            self._finished.add(self._current)
        if trace in self._finished:
            self._is_grouped = False
            if self.grouped:
                raise ValueError(
                    f"{self.path}: record {index}: trace {trace!r} appears again after "
                    "other traces started, but the writer promises grouped=True "
                    "(pass grouped=None to find out, or grouped=False)"
                )
        self._current = trace

    # -- writing ------------------------------------------------------------

    def write(self, record: dict) -> None:
        """Check and write one record (a dict; None values count as absent)."""
        if self._closed:
            raise ValueError("write to a closed TraceWriter")
        if not isinstance(record, dict):
            raise TraceFormatError(
                Location(self.path, row=self.count),
                f"record is not a dict (got {type(record).__name__})",
            )
        rec = {k: v for k, v in record.items() if v is not None}
        problem = record_problem(rec) or _extension_problem(rec)
        if problem is not None:
            raise TraceFormatError(Location(self.path, row=self.count), problem[1], problem[0])
        rec = normalize(rec)
        if self.grouped is not False:
            self._track(rec["trace"], self.count)
        if self._jsonl is not None:
            self._jsonl.write_lines([encode_record(_canonical(rec))])
        else:
            self._records.append(rec)
            if len(self._records) >= _RECORD_BATCH:
                self._flush_records()
        self.count += 1

    def _flush_records(self) -> None:
        with uninterrupted():  # the records leave the list as they enter the file
            if self._records and self._parquet is not None:
                self._parquet.write_table(records_to_table(self._records))
            self._records = []

    def write_many(self, records: Sequence[dict]) -> None:
        """Check and write records, as :meth:`write` on each, column by column where
        that is exact (the same bytes; tested): a batch that
        :func:`~tomkit.traces.validate.columnar_safe` passes becomes one table checked
        by the vectorized checks; a batch they refuse, or that cannot be a table, goes
        through :meth:`write` record by record, for the message naming the record."""
        if self._closed:
            raise ValueError("write to a closed TraceWriter")
        step = _RECORD_BATCH
        for start in range(0, len(records), step):
            batch = records[start:start + step]
            if self._parquet is not None and self._records:
                done = False  # records wait in write()'s batch: keep its batching
            else:
                done = self._write_batch(batch)
            if not done:
                for rec in batch:
                    self.write(rec)

    def _write_batch(self, batch: Sequence[dict]) -> bool:
        """Write ``batch`` as one table if it is exactly one; False, with nothing
        written and nothing tracked, if not."""
        if not columnar_safe(batch):
            return False
        tracking = (self._current, set(self._finished), self._is_grouped)
        before = self.count
        try:
            # JSON Lines writes each x_ number as it came (ints stay ints); Parquet
            # columns are typed as write()'s batches type them
            table = records_to_table(batch, exact=self._jsonl is not None, none_absent=True)
            checked = self._checked(table)
            self._emit(checked)
        except (TraceFormatError, ValueError, TypeError, OverflowError, pa.ArrowException):
            self._current, self._finished, self._is_grouped = tracking
            return False
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM: if before the table was written
            # (the count moves with it), its traces were never written either, so that
            # the caller may write the batch again (tomkit sample does)
            if self.count == before:
                self._current, self._finished, self._is_grouped = tracking
            raise
        return True

    def write_table(self, table: pa.Table) -> None:
        """Check and write a table (ARROW_SCHEMA-compatible columns, plus x_*)."""
        if self._closed:
            raise ValueError("write to a closed TraceWriter")
        self._emit(self._checked(table))

    def _checked(self, table: pa.Table) -> pa.Table:
        """The table checked and conformed, its traces tracked (see ``grouped``)."""
        check_columns(table.schema, self.path)
        first = self.count
        checked, _ = check_table(table, lambda i: Location(self.path, row=first + i))
        for i in range(checked.num_columns):
            field = checked.schema.field(i)
            if field.name.startswith(EXTENSION_PREFIX) and pa.types.is_floating(field.type):
                col = checked.column(i)
                bad = pc.and_(pc.is_valid(col), pc.invert(pc.is_finite(col)))
                rows = np.flatnonzero(bad.to_numpy(zero_copy_only=False))
                if len(rows):
                    raise TraceFormatError(
                        Location(self.path, row=first + int(rows[0])),
                        "not a finite number", field.name,
                    )
        if self.grouped is not False:
            starts, ids = run_starts(checked.column("trace"))
            for i, trace in zip(starts, ids, strict=True):
                self._track(trace, first + int(i))
        return checked

    def _emit(self, checked: pa.Table) -> None:
        with uninterrupted():  # the table whole, and counted
            first = self.count
            if self._jsonl is not None:
                self._write_jsonl_table(checked, first)
            else:
                self._flush_records()
                assert self._parquet is not None
                self._parquet.write_table(checked)
            self.count += checked.num_rows

    def _write_jsonl_table(self, checked: pa.Table, first: int) -> None:
        assert self._jsonl is not None
        try:
            pieces = list(encode_table(checked))
        except (TypeError, ValueError):
            # an extension value JSON cannot hold: find the row for the message
            for i, rec in enumerate(table_to_records(checked)):
                problem = _extension_problem(rec)
                if problem is not None:
                    raise TraceFormatError(
                        Location(self.path, row=first + i), problem[1], problem[0]
                    ) from None
            raise
        for piece in pieces:
            self._jsonl.write_encoded(piece)

    # -- closing ------------------------------------------------------------

    def close(self) -> None:
        if self._closed:
            return
        with uninterrupted():
            self._closed = True
            grouped = self._is_grouped if self.grouped is None else bool(self.grouped)
            if self._jsonl is not None:
                self._jsonl.close(grouped)
            else:
                self._flush_records()
                assert self._parquet is not None
                self._parquet.close(grouped)

    def abort(self) -> None:
        """Close and delete the file (after an error)."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._jsonl is not None:
                self._jsonl.f.close()
            elif self._parquet is not None:
                self._parquet.abort()
        finally:
            try:
                os.remove(self.path)
            except OSError:
                pass

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.close()
        elif isinstance(exc, KeyboardInterrupt):
            self._close_interrupted(exc)
        else:
            self.abort()

    def _close_interrupted(self, exc: KeyboardInterrupt) -> None:
        """Ctrl-C: keep the records written so far as a valid file, or delete a file
        that has none; either is said in a note on ``exc`` (the command prints it)."""
        if self._closed:
            return
        if self.count == 0 and not self._records:
            self.abort()
            add_note(exc, f"removed {self.path}: stopped before any record was written")
            return
        try:
            self.close()
        except Exception as e:  # noqa: BLE001 (said, and the half-written file removed)
            self._closed = False
            self.abort()
            add_note(exc, f"removed {self.path}: it could not be closed ({e})")
            return
        add_note(exc, f"kept {self.count:,} complete records in {self.path}, a valid file "
                   "that ends where the run was stopped")


def write_records(
    path: str | os.PathLike, records: Iterable[dict], *, grouped: bool | None = None
) -> int:
    """Write records to a new file; returns how many. grouped=None: find out. A list or
    tuple is written column by column where that is exact (:meth:`TraceWriter.write_many`)."""
    with TraceWriter(path, grouped=grouped) as w:
        if isinstance(records, list | tuple):
            w.write_many(records)
        else:
            for rec in records:
                w.write(rec)
    return w.count


def write_table(
    path: str | os.PathLike, table: pa.Table, *, grouped: bool | None = None
) -> int:
    """Write a table to a new file; returns the number of rows. grouped=None: compute."""
    with TraceWriter(path, grouped=grouped) as w:
        w.write_table(table)
    return w.count
