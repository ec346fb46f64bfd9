"""Parquet traces: streaming reader and writer.

A trace Parquet file has the columns of ``ARROW_SCHEMA`` (optional ones may be
missing and are then all null) plus any ``x_*`` columns, and the key-value
metadata of :func:`tomkit.traces.schema.parquet_metadata`. A null in a column
means the field is absent. Files without that metadata are read as version 1,
grouped unknown.

Reading goes row group by row group (``ParquetFile.iter_batches``), never the
whole file. Column types are checked once, on opening: string columns may be
string, large_string, string_view or dictionary<string>; list columns any list
kind of those; ``seq`` any integer type; ``time`` any integer or float type.
Each batch is cast to ``ARROW_SCHEMA`` and checked with the vectorized rules;
only when a rule fails are the offending rows looked at one by one, through the
same exact validator as JSON Lines records, for the message.

Writing buffers about one row group (``ROW_GROUP_ROWS`` rows, as Arrow data)
so that the file's schema is fixed from the union of the first row group's
extension columns; a later batch whose extension columns do not fit that schema
is an error (the JSON Lines writer has no such limit).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from tomkit.traces.errors import ColumnError, Location, TraceFormatError
from tomkit.traces.jsonl import prefetch
from tomkit.traces.schema import (
    ARROW_SCHEMA,
    EXTENSION_PREFIX,
    FORMAT_NAME,
    FORMAT_VERSION,
    META_FORMAT,
    META_GROUPED,
    META_VERSION,
    REQUIRED,
    parquet_metadata,
)
from tomkit.traces.validate import (
    _dumps_x,
    decode_dictionaries,
    fast_table_ok,
    is_json_field,
    ok_mask,
    record_problem,
    unify_tables,
)

from .columns import carried, expected, is_string_kind, readable, to_format

PARQUET_MAGIC = b"PAR1"
ROW_GROUP_ROWS = 1 << 20
READ_ROWS = 1 << 18  # rows per read; the reader cuts them into batches of batch_rows
COMPRESSION = "zstd"

_CORE = {f.name: f for f in ARROW_SCHEMA}


# --------------------------------------------------------------------------
# Columns
# --------------------------------------------------------------------------


def _stringish(t: pa.DataType) -> bool:
    """A string kind, or a dictionary of one: what a reader may keep dictionary-encoded."""
    if pa.types.is_dictionary(t):
        return _stringish(t.value_type)
    return is_string_kind(t) or pa.types.is_null(t)


def check_columns(schema: pa.Schema, source: str) -> None:
    """File-level column problems: missing required, wrong type, unknown, duplicate."""
    loc = Location(source)
    seen: set[str] = set()
    for field in schema:  # by position: schema.field(name) fails on a duplicate name
        name = field.name
        if name in seen:
            raise ColumnError(loc, "the column appears more than once", name)
        seen.add(name)
        if name in _CORE:
            t = field.type
            target = _CORE[name].type
            if not readable(t, target):
                raise ColumnError(
                    loc, f"column has type {t}; expected {expected(target)}", name
                )
        elif not name.startswith(EXTENSION_PREFIX):
            raise ColumnError(
                loc, f"unknown column (extension columns must start with '{EXTENSION_PREFIX}')",
                name,
            )
    for name in REQUIRED:
        if name not in seen:
            raise ColumnError(loc, "missing required column", name)


# string columns a reader may hand out dictionary-encoded (TraceReader(dictionary=True));
# kind has a handful of values, so its checks and codes need only look at the dictionary
DICTIONARY_FIELDS = ("trace", "process", "kind", "msg")
DICT_STRING = pa.dictionary(pa.int32(), pa.string())


def conform(table: pa.Table, *, keep_dictionary: bool = False,
            ) -> tuple[pa.Table, dict[int, tuple[str, str]]]:
    """Cast a table with checked columns to ARROW_SCHEMA (+ its x_ columns).

    With ``keep_dictionary``, the DICTIONARY_FIELDS stay dictionary<int32, string> when
    they were read so (Parquet stores them dictionary-encoded; decoding millions of
    strings only for a checker to encode them again is the costliest step of a scan).
    Returns the table and the row problems the conversion itself finds (a ``seq``
    past int64, a binary string that is not UTF-8; see :mod:`.columns`), by row index.
    """
    problems: dict[int, tuple[str, str]] = {}
    arrays = []
    n = table.num_rows
    for field in ARROW_SCHEMA:
        if field.name not in table.column_names:
            arrays.append(pa.nulls(n, field.type))
            continue
        col = table.column(field.name)
        if col.type == field.type:
            arrays.append(col)
            continue
        if keep_dictionary and field.name in DICTIONARY_FIELDS and \
                pa.types.is_dictionary(col.type) and is_string_kind(col.type.value_type):
            arrays.append(col.cast(DICT_STRING))
            continue
        col, bad = to_format(col, field.name, field.type)
        problems.update(bad)
        arrays.append(col)
    fields = list(ARROW_SCHEMA)
    for field in table.schema:
        if field.name not in _CORE:
            fields.append(field)
            arrays.append(carried(table.column(field.name)))
    fields = [pa.field(f.name, a.type, f.nullable, f.metadata) if a.type != f.type else f
              for f, a in zip(fields, arrays)]
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields)), problems


def _row_record(table: pa.Table, i: int) -> dict:
    rec = {}
    for field in ARROW_SCHEMA:
        value = table.column(field.name)[i].as_py()
        if value is not None:
            rec[field.name] = value
    return rec


def row_problem(table: pa.Table, i: int) -> tuple[str | None, str]:
    """The first problem of row i of a conformed table, worded for a table."""
    rec = _row_record(table, i)
    for name in REQUIRED:
        if name not in rec:
            return name, "null in a required column"
    problem = record_problem(rec)
    if problem is None:  # pragma: no cover - ok_mask and the validator agree
        return None, "row rejected by the trace format"
    return problem


def encoding_problems(table: pa.Table) -> dict[int, tuple[str, str]]:
    """Rows whose bytes Arrow would misread: a string that is not valid UTF-8, a
    dictionary index past the dictionary (Parquet readers check neither; a corrupt file
    has both). Arrow's full validation finds that a column has one; only then is each
    row of the failing chunk validated alone, to name it. Row -> (field, message)."""
    problems: dict[int, tuple[str, str]] = {}
    for name in table.column_names:
        col = table.column(name)
        offset = 0
        for chunk in col.chunks:
            try:
                chunk.validate(full=True)
            except pa.ArrowInvalid:
                for i, why in _bad_rows(chunk):
                    problems.setdefault(offset + i, (name, f"unreadable value: {why}"))
            offset += len(chunk)
    return problems


def _bad_rows(chunk: pa.Array) -> Iterator[tuple[int, str]]:
    """The rows of a chunk that fails full validation, each with Arrow's reason."""
    def reason(e: Exception) -> str:
        return str(e).split(": ")[-1] or "invalid data"

    if pa.types.is_dictionary(chunk.type):
        # a slice keeps the whole dictionary: judge the entries once, then the indices
        dictionary = chunk.dictionary
        bad_entry: dict[int, str] = {}
        for j in range(len(dictionary)):
            try:
                dictionary.slice(j, 1).validate(full=True)
            except pa.ArrowInvalid as e:
                bad_entry[j] = reason(e)
        idx = chunk.indices
        valid = idx.is_valid().to_numpy(zero_copy_only=False)
        codes = idx.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
        for i in np.flatnonzero(valid):
            k = int(codes[i])
            if not 0 <= k < len(dictionary):
                yield int(i), f"dictionary index {k} past the dictionary of {len(dictionary)}"
            elif k in bad_entry:
                yield int(i), bad_entry[k]
        return
    for i in range(len(chunk)):
        try:
            chunk.slice(i, 1).validate(full=True)
        except pa.ArrowInvalid as e:
            yield i, reason(e)


def _viewless(table: pa.Table) -> pa.Table:
    """The table with its string and binary view columns, at any depth, in their plain
    kinds."""
    for i, name in enumerate(table.column_names):
        col = table.column(i)
        plain = carried(col)
        if plain is not col:
            table = table.set_column(i, name, plain)
    return table


def check_table(
    table: pa.Table,
    where: Callable[[int], Location],
    *,
    keep_going: bool = False,
    rejected: list[TraceFormatError] | None = None,
    keep_dictionary: bool = False,
    validated: bool = False,
) -> tuple[pa.Table, np.ndarray | None]:
    """Conform and check a table; raise on the first bad row unless keep_going.

    Returns the good rows and, if some rows were dropped, the indices of the
    rows kept (None when all were kept). ``validated``: the table's bytes are known
    to be sound (built in memory, not read from a file).
    """
    if not validated:
        enc = encoding_problems(table)
        if enc:
            for i in sorted(enc):
                err = TraceFormatError(where(i), enc[i][1], enc[i][0])
                if not keep_going:
                    raise err
                assert rejected is not None
                rejected.append(err)
            keep0 = np.array([i for i in range(table.num_rows) if i not in enc], np.int64)
            # Arrow has no take for the view kinds (a deps of binary_view items, say)
            kept = _viewless(table).take(pa.array(keep0))
            for name in {f for f, _ in enc.values()}:
                col = kept.column(name)
                if pa.types.is_dictionary(col.type):
                    # the dictionary still holds the bad entry: keep the used ones only
                    plain = pa.chunked_array([c.dictionary_decode() for c in col.chunks],
                                             col.type.value_type)
                    kept = kept.set_column(kept.schema.get_field_index(name), name, plain)
            good, keep = check_table(kept,
                                     lambda i: where(int(keep0[i])), keep_going=keep_going,
                                     rejected=rejected, keep_dictionary=keep_dictionary,
                                     validated=True)
            return good, (keep0 if keep is None else keep0[keep])
    table, cast_problems = conform(table, keep_dictionary=keep_dictionary)
    if not cast_problems and fast_table_ok(table, extensions=False):
        return table, None
    table = decode_dictionaries(table)  # the exact checks read plain strings
    mask = ok_mask(table)
    for i in cast_problems:
        mask[i] = False
    bad = np.flatnonzero(~mask)
    if not len(bad):
        return table, None
    for i in bad:
        field, message = cast_problems.get(int(i)) or row_problem(table, int(i))
        err = TraceFormatError(where(int(i)), message, field)
        if not keep_going:
            raise err
        assert rejected is not None
        rejected.append(err)
    keep = np.flatnonzero(mask)
    return table.take(pa.array(keep)), keep


# --------------------------------------------------------------------------
# Reader
# --------------------------------------------------------------------------


def _read_meta(meta: dict[bytes, bytes] | None, source: str) -> tuple[int, bool | None]:
    loc = Location(source)
    meta = meta or {}
    if META_FORMAT not in meta and META_VERSION not in meta:
        return FORMAT_VERSION, None
    fmt = meta.get(META_FORMAT, b"").decode("utf-8", "replace")
    if fmt != FORMAT_NAME:
        raise TraceFormatError(
            loc,
            f"not a tomkit trace: the metadata names format {json.dumps(fmt)}, "
            f"expected \"{FORMAT_NAME}\"",
            META_FORMAT.decode(),
        )
    raw = meta.get(META_VERSION, b"").decode("utf-8", "replace")
    if raw != str(FORMAT_VERSION):
        raise TraceFormatError(
            loc,
            f"unsupported format version {json.dumps(raw)}: this reader reads "
            f"version {FORMAT_VERSION}",
            META_VERSION.decode(),
        )
    grouped_raw = meta.get(META_GROUPED)
    if grouped_raw is None:
        return FORMAT_VERSION, None
    if grouped_raw not in (b"true", b"false"):
        raise TraceFormatError(
            loc, f"expected true or false, got {grouped_raw!r}", META_GROUPED.decode()
        )
    return FORMAT_VERSION, grouped_raw == b"true"


class ParquetSource:
    """One Parquet file: metadata and column types are checked on construction."""

    fmt = "parquet"

    def __init__(self, path: str, source: str, *, prefetch: bool = True,
                 dictionary: bool = False):
        self.path = path
        self.source = source
        self.prefetch = prefetch
        self.dictionary = dictionary
        self.read_rows: int | None = None  # None: max(batch_rows, READ_ROWS)
        try:
            self.file = pq.ParquetFile(path, pre_buffer=False)
            schema = self.file.schema_arrow
            # before anything looks a column up by name (a duplicate name makes that fail)
            check_columns(schema, source)
            if dictionary:
                wanted = [n for n in DICTIONARY_FIELDS if n in schema.names
                          and _stringish(schema.field(n).type)]
                # pre_buffer off: its cache of coalesced reads is kept until the file is
                # closed, so a long file's read grew by what it had read (about 90 MB a
                # 36-million-row file at batch 60 of 140); reads from local disk lose
                # nothing by it
                self.file = pq.ParquetFile(path, read_dictionary=wanted, pre_buffer=False)
                schema = self.file.schema_arrow
            meta = self.file.metadata.metadata
        except FileNotFoundError:
            raise TraceFormatError(Location(source), "file not found") from None
        except (OSError, pa.ArrowException) as e:
            raise TraceFormatError(
                Location(source), f"cannot read the Parquet file: {e}"
            ) from None
        except UnicodeDecodeError as e:
            # a column name or a metadata key that is not UTF-8
            raise TraceFormatError(
                Location(source), f"cannot read the Parquet file: a name in its schema or "
                f"metadata is not valid UTF-8 (byte {e.start + 1})"
            ) from None
        self.version, self.grouped = _read_meta(meta, source)
        self.schema = schema
        self.num_rows = self.file.metadata.num_rows
        if self.num_rows == 0:
            raise TraceFormatError(Location(source), "no records")

    def batches(
        self, *, keep_going: bool, rejected: list[TraceFormatError], batch_rows: int
    ) -> Iterator[tuple[pa.Table, np.ndarray]]:
        start = 0

        def produce() -> Iterator[pa.RecordBatch]:
            # reading (which releases the GIL) runs ahead of the checks
            size = self.read_rows or max(batch_rows, READ_ROWS)
            return self.file.iter_batches(batch_size=size, use_threads=True)

        it = prefetch(produce) if self.prefetch else produce()
        try:
            while True:
                try:
                    batch = next(it, None)
                except (OSError, pa.ArrowException) as e:
                    raise TraceFormatError(
                        Location(self.source, row=start), f"cannot read the Parquet data: {e}"
                    ) from None
                if batch is None:
                    # what the row groups declare (a damaged footer's file total may
                    # disagree with them; the rows are in the row groups)
                    declared = sum(self.file.metadata.row_group(i).num_rows
                                   for i in range(self.file.metadata.num_row_groups))
                    if start != declared:
                        # a damaged page can hold fewer values than the footer declares,
                        # and Arrow's reader then returns fewer rows without an error
                        missing = declared - start
                        err = TraceFormatError(
                            Location(self.source, row=start), f"the file declares "
                            f"{declared} rows but its pages hold {start}: "
                            f"{abs(missing)} rows cannot be read")
                        if not keep_going:
                            raise err
                        rejected.extend([err] * max(missing, 0))
                    return
                n = batch.num_rows
                # keep the file's field metadata (the JSON-text marker of x_ columns)
                table = pa.Table.from_arrays(
                    batch.columns,
                    schema=pa.schema([self.schema.field(name) for name in batch.schema.names]),
                )
                offset = start
                good, keep = check_table(
                    table,
                    lambda i, offset=offset: Location(self.source, row=offset + i),
                    keep_going=keep_going,
                    rejected=rejected,
                    keep_dictionary=self.dictionary,
                )
                rows = start + (
                    np.arange(n, dtype=np.int64) if keep is None else keep.astype(np.int64)
                )
                start += n
                if good.num_rows:
                    yield good, rows
        finally:
            close = getattr(it, "close", None)
            if close is not None:
                close()


# --------------------------------------------------------------------------
# Writer
# --------------------------------------------------------------------------


def conform_to(table: pa.Table, schema: pa.Schema, first_row: int) -> pa.Table:
    """Fit a checked table's extension columns to the writer's fixed schema."""
    arrays = []
    for field in schema:
        if field.name not in table.column_names:
            arrays.append(pa.nulls(table.num_rows, field.type))
            continue
        col = table.column(field.name)
        have = table.schema.field(field.name)
        if is_json_field(field) and not is_json_field(have):
            col = pa.array(
                [None if v is None else _dumps_x(v) for v in col.to_pylist()], pa.string()
            )
        elif col.type != field.type:
            ok = pa.types.is_null(col.type) or (
                field.type == pa.float64() and pa.types.is_integer(col.type)
            )
            if not ok or is_json_field(have) != is_json_field(field):
                raise ValueError(
                    f"extension column {field.name!r} changes type from {field.type} to "
                    f"{col.type} at record {first_row}: a Parquet file has one type "
                    "per column, fixed by its first row group"
                )
            col = col.cast(field.type)
        arrays.append(col)
    extra = [n for n in table.column_names if n not in schema.names
             and not (n == OPTIONAL_COLUMN and _all_null(table, n))]
    if extra:
        raise ValueError(
            f"extension column {extra[0]!r} first appears at record {first_row}, after "
            "the Parquet schema was fixed by the first row group"
        )
    return pa.Table.from_arrays(arrays, schema=schema)


#: a core column the writer leaves out of a file whose first row group has no value in it
OPTIONAL_COLUMN = "real_time"


def _all_null(table: pa.Table, name: str) -> bool:
    return name in table.column_names and table.column(name).null_count == table.num_rows


class ParquetSink:
    def __init__(self, path: str):
        self.path = path
        self._pending: list[pa.Table] = []
        self._pending_rows = 0
        self._written = 0
        self._writer: pq.ParquetWriter | None = None
        self._schema: pa.Schema | None = None
        # create the file now, so that a bad path fails on open, as for JSON Lines
        open(path, "wb").close()

    def write_table(self, table: pa.Table) -> None:
        if table.num_rows == 0:
            return
        self._pending.append(table)
        self._pending_rows += table.num_rows
        if self._pending_rows >= ROW_GROUP_ROWS:
            self._flush()

    def _flush(self) -> None:
        if self._schema is None:
            combined = unify_tables(self._pending)
            if _all_null(combined, OPTIONAL_COLUMN):
                # a trace without real time is written as before the field existed, byte
                # for byte (readers take a missing optional column as all null)
                combined = combined.drop_columns([OPTIONAL_COLUMN])
            self._open(combined.schema)
        else:
            parts, first = [], self._written
            for t in self._pending:
                parts.append(conform_to(t, self._schema, first))
                first += t.num_rows
            combined = pa.concat_tables(parts) if parts else self._schema.empty_table()
        assert self._writer is not None
        if combined.num_rows:
            self._writer.write_table(combined, row_group_size=ROW_GROUP_ROWS)
        self._written += combined.num_rows
        self._pending, self._pending_rows = [], 0

    def _open(self, schema: pa.Schema) -> None:
        self._schema = schema
        self._writer = pq.ParquetWriter(self.path, schema, compression=COMPRESSION)

    def close(self, grouped: bool) -> None:
        self._flush()
        assert self._writer is not None
        self._writer.add_key_value_metadata(parquet_metadata(grouped))
        self._writer.close()

    def abort(self) -> None:
        if self._writer is not None:
            self._writer.close()

