"""Parquet inputs with every Arrow type a column can have, for the input fuzzer.

A trace column is read from whatever Arrow type a foreign writer gave it, so the
readers must either read each type correctly (a ``large_string`` or dictionary
``trace``, an ``uint16`` ``seq``, a ``fixed_size_list`` of ``deps``) or refuse it with an
error naming the file and the column -- never a traceback. The mutation here takes a
valid trace table and gives one to three of its columns (core or new ``x_`` ones) a
type drawn from all of Arrow's: null, boolean, every integer width and signedness,
the floats, decimals, strings, binaries and their large, view and fixed-size forms,
dates, times, timestamps, durations, intervals, the canonical extension types (uuid,
json, bool8, opaque), dictionaries of any index type, the list kinds, structs and maps,
nested to a few levels. The values are the column's
own, converted, when the conversion works (so that a correct reader still finds a
valid trace), and random values of the type otherwise; some rows become null.

The file is written with Arrow's own Parquet writer, with or without the tomkit
metadata; types Parquet cannot store as drawn come back as what Parquet makes of
them (which is also what a reader meets).
"""

from __future__ import annotations

import datetime
import decimal
import io
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..traces.schema import ARROW_SCHEMA

__all__ = ["draw_readable", "draw_type", "random_array", "retype_parquet", "PRIMITIVES"]

INTEGERS = (pa.int8(), pa.int16(), pa.int32(), pa.int64(),
            pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64())
FLOATS = (pa.float16(), pa.float32(), pa.float64())
STRINGS = (pa.string(), pa.large_string(), pa.string_view())
BINARIES = (pa.binary(), pa.large_binary(), pa.binary_view(), pa.binary(3))
TEMPORAL = (pa.date32(), pa.date64(), pa.time32("s"), pa.time64("us"),
            pa.timestamp("ms"), pa.timestamp("ns", tz="UTC"), pa.duration("s"),
            pa.month_day_nano_interval())
#: Arrow's canonical extension types (Parquet stores their name beside the storage)
EXTENSIONS = (pa.uuid(), pa.json_(), pa.bool8(), pa.opaque(pa.int32(), "t", "tomkit"))
PRIMITIVES: tuple[pa.DataType, ...] = (
    pa.null(), pa.bool_(), *INTEGERS, *FLOATS, pa.decimal128(9, 0), pa.decimal128(12, 3),
    pa.decimal256(40, 2), *STRINGS, *BINARIES, *TEMPORAL, *EXTENSIONS,
)


def draw_type(rng: np.random.Generator, depth: int = 2) -> pa.DataType:
    """Any Arrow type: a primitive, or (while ``depth`` lasts) a dictionary, a list kind,
    a struct or a map of drawn types."""
    k = int(rng.integers(11)) if depth > 0 else 0
    if k <= 3:
        return PRIMITIVES[int(rng.integers(len(PRIMITIVES)))]
    if k == 4:
        index = INTEGERS[int(rng.integers(len(INTEGERS)))]
        value = [*STRINGS, *BINARIES[:2], *INTEGERS, *FLOATS[1:], pa.null()]
        return pa.dictionary(index, value[int(rng.integers(len(value)))])
    inner = draw_type(rng, depth - 1)
    if k == 5:
        return pa.list_(inner)
    if k == 6:
        return pa.large_list(inner)
    if k == 7:
        # size 1 to 3: Arrow 26's Parquet writer aborts the process on a null in a
        # fixed_size_list<string>[0] (a writer's bug; such a file is not ours to make)
        return pa.list_(inner, int(rng.integers(1, 4)))
    if k == 8:
        return (pa.list_view, pa.large_list_view)[int(rng.integers(2))](inner)
    if k == 9:
        return pa.struct([pa.field("a", inner), pa.field("b", draw_type(rng, depth - 1))])
    keys = (pa.string(), pa.int32(), pa.large_string())
    return pa.map_(keys[int(rng.integers(len(keys)))], inner)


def draw_readable(rng: np.random.Generator, name: str) -> pa.DataType | None:
    """A type the readers should read for core column ``name`` (None for an x_ column):
    the foreign forms of the format's own type, which a mutation draws half the time
    so that the conversions meet values worth checking."""
    if name not in ARROW_SCHEMA.names:
        return None
    target = ARROW_SCHEMA.field(name).type
    text = [*STRINGS, *BINARIES[:3]]
    if pa.types.is_string(target) or pa.types.is_list(target):
        t = text[int(rng.integers(len(text)))]
    elif pa.types.is_floating(target):
        numbers = [*INTEGERS, *FLOATS, pa.decimal128(18, 6), pa.decimal256(40, 3)]
        t = numbers[int(rng.integers(len(numbers)))]
    else:
        numbers = [*INTEGERS, pa.decimal128(18, 0), pa.decimal256(40, 0)]
        t = numbers[int(rng.integers(len(numbers)))]
    if rng.random() < 0.3:
        t = pa.dictionary(INTEGERS[int(rng.integers(len(INTEGERS)))], t)
    if pa.types.is_list(target):
        kinds = (pa.list_, pa.large_list, pa.list_view, pa.large_list_view)
        t = kinds[int(rng.integers(len(kinds)))](t)
    if rng.random() < 0.1:
        t = pa.null()
    return t


# --------------------------------------------------------------------------
# Values
# --------------------------------------------------------------------------


def _word(rng: np.random.Generator) -> str:
    pool = ("p0", "p1", "m1", "send", "deliver", "view", "", "x", "é", "\u0000", "v1")
    return pool[int(rng.integers(len(pool)))]


def _value(rng: np.random.Generator, t: pa.DataType) -> Any:
    """A random Python value of type t (None now and then)."""
    if pa.types.is_null(t) or rng.random() < 0.05:
        return None
    if isinstance(t, pa.BaseExtensionType):
        return _value(rng, t.storage_type)
    if pa.types.is_boolean(t):
        return bool(rng.integers(2))
    if pa.types.is_integer(t):
        info = np.iinfo(t.to_pandas_dtype())
        edge = (info.min, info.max, 0, 1, -1 if info.min < 0 else 2)
        if rng.random() < 0.3:
            return int(edge[int(rng.integers(len(edge)))])
        return int(rng.integers(max(info.min, -1000), min(info.max, 1000), endpoint=True))
    if pa.types.is_floating(t):
        special = (float("nan"), float("inf"), -0.0, 1e300, -1.5)
        if rng.random() < 0.2:
            v = special[int(rng.integers(len(special)))]
        else:
            v = float(rng.normal(0, 100))
        return v
    if pa.types.is_decimal(t):
        scale = t.scale
        digits = int(rng.integers(0, 10 ** min(t.precision, 8)))
        return decimal.Decimal(digits).scaleb(-scale)
    if pa.types.is_fixed_size_binary(t):
        return bytes(rng.integers(0, 256, t.byte_width, dtype=np.uint8))
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        if rng.random() < 0.3:
            return bytes(rng.integers(0, 256, int(rng.integers(0, 6)), dtype=np.uint8))
        return _word(rng).encode()
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return _word(rng)
    if pa.types.is_date(t):
        return datetime.date(2000, 1, 1) + datetime.timedelta(days=int(rng.integers(9000)))
    if pa.types.is_time(t):
        return datetime.time(int(rng.integers(24)), int(rng.integers(60)))
    if pa.types.is_timestamp(t):
        base = datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc if t.tz else None)
        return base + datetime.timedelta(seconds=int(rng.integers(10**8)))
    if pa.types.is_duration(t):
        return datetime.timedelta(seconds=int(rng.integers(10**6)))
    if pa.types.is_interval(t):
        return pa.MonthDayNano([int(rng.integers(12)), int(rng.integers(30)), 0])
    if pa.types.is_dictionary(t):
        return _value(rng, t.value_type)
    if pa.types.is_fixed_size_list(t):
        return [_value(rng, t.value_type) for _ in range(t.list_size)]
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_list_view(t) \
            or pa.types.is_large_list_view(t):
        return [_value(rng, t.value_type) for _ in range(int(rng.integers(0, 4)))]
    if pa.types.is_struct(t):
        return {t.field(i).name: _value(rng, t.field(i).type) for i in range(t.num_fields)}
    if pa.types.is_map(t):
        keys = {_value(rng, t.key_type) for _ in range(int(rng.integers(0, 3)))} - {None}
        return [(key, _value(rng, t.item_type)) for key in keys]
    raise TypeError(f"no values drawn for {t}")  # pragma: no cover - draw_type's types only


def _plain(t: pa.DataType) -> pa.DataType:
    """t with dictionaries replaced by their values and float16 by float32: the type
    Arrow builds from Python values, to be cast to t."""
    if pa.types.is_dictionary(t):
        return _plain(t.value_type)
    if isinstance(t, pa.BaseExtensionType):
        return _plain(t.storage_type)
    if pa.types.is_float16(t):
        return pa.float32()
    if pa.types.is_fixed_size_list(t):
        return pa.list_(_plain(t.value_type), t.list_size)
    for test, make in ((pa.types.is_list, pa.list_), (pa.types.is_large_list, pa.large_list),
                       (pa.types.is_list_view, pa.list_view),
                       (pa.types.is_large_list_view, pa.large_list_view)):
        if test(t):
            return make(_plain(t.value_type))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(t.field(i).name, _plain(t.field(i).type))
                          for i in range(t.num_fields)])
    if pa.types.is_map(t):
        return pa.map_(_plain(t.key_type), _plain(t.item_type))
    return t


def random_array(rng: np.random.Generator, t: pa.DataType, n: int) -> pa.Array:
    """n random values of type t (of a near type where Arrow cannot cast to t: a
    dictionary whose index cannot count the distinct values stays plain)."""
    plain = pa.array([_value(rng, t) for _ in range(n)], _plain(t))
    try:
        return plain.cast(t)
    except (pa.ArrowException, OverflowError):
        return plain


def _index_room(t: pa.DataType) -> int:
    return int(np.iinfo(t.to_pandas_dtype()).max)


def convert(col: pa.ChunkedArray, t: pa.DataType) -> pa.Array | None:
    """The column's own values as type t, or None when Arrow cannot convert them."""
    arr = _convert(col, t)
    if arr is None:
        return None
    try:
        # pyarrow 26's cast of a list view holding a null to a list writes non-monotonic
        # offsets; compute kernels then read past the values, and pc.if_else on such an
        # array killed the fuzzer's own process (seeds 2005 and 3001 of issue 30)
        arr.validate(full=True)
    except pa.ArrowInvalid:
        return None
    return arr


def _convert(col: pa.ChunkedArray, t: pa.DataType) -> pa.Array | None:
    try:
        arr = col.combine_chunks()
        if pa.types.is_dictionary(t):
            plain = convert(pa.chunked_array([arr]), t.value_type)
            if plain is None or len(plain.unique()) > _index_room(t.index_type):
                return None
            return plain.dictionary_encode().cast(t)
        if (pa.types.is_list(t) or pa.types.is_large_list(t)) and \
                pa.types.is_list(arr.type):
            inner = convert(pa.chunked_array([arr.flatten()]), t.value_type)
            if inner is None:
                return None
            offsets = arr.offsets
            cls = pa.ListArray if pa.types.is_list(t) else pa.LargeListArray
            if pa.types.is_large_list(t):
                offsets = offsets.cast(pa.int64())
            return cls.from_arrays(offsets, inner, mask=arr.is_null())
        if pa.types.is_binary(t) or pa.types.is_large_binary(t):
            return arr.cast(pa.binary()).cast(t)
        if pa.types.is_list_view(t) or pa.types.is_large_list_view(t):
            listed = convert(pa.chunked_array([arr]), pa.list_(t.value_type))
            return None if listed is None else listed.cast(t)
        return arr.cast(t)
    except (pa.ArrowException, ValueError, TypeError, OverflowError):
        return None


# --------------------------------------------------------------------------
# The mutation
# --------------------------------------------------------------------------


def _with_nulls(rng: np.random.Generator, arr: pa.Array) -> pa.Array:
    if rng.random() < 0.7 or len(arr) == 0 or pa.types.is_null(arr.type):
        return arr
    mask = pa.array(rng.random(len(arr)) < 0.2)
    try:
        return pc.if_else(mask, pa.scalar(None, arr.type), arr)
    except (pa.ArrowException, TypeError):
        return arr


def retype_table(rng: np.random.Generator, table: pa.Table) -> pa.Table:
    """The table with one to three columns (core or new ``x_``) given a drawn type."""
    for _ in range(int(rng.integers(1, 4))):
        names = table.column_names
        if rng.random() < 0.2:
            name = f"x_{int(rng.integers(3))}"
        else:
            name = names[int(rng.integers(len(names)))]
        t = (draw_readable(rng, name) if rng.random() < 0.5 else None) or draw_type(rng)
        arr = None
        if name in names and rng.random() < 0.7:
            arr = convert(table.column(name), t)
        if arr is None:
            arr = random_array(rng, t, table.num_rows)
        arr = _with_nulls(rng, arr)
        field = pa.field(name, arr.type)
        if name in names:
            table = table.set_column(names.index(name), field, arr)
        else:
            table = table.append_column(field, arr)
    return table


def retype_parquet(rng: np.random.Generator, data: bytes) -> bytes:
    """A Parquet trace file (``data``) with columns of drawn types, written again; the
    input unchanged if it does not read (a mutation before this one broke it)."""
    try:
        pf = pq.ParquetFile(io.BytesIO(data))
        table = pf.read()
        meta = pf.metadata.metadata
    except (pa.ArrowException, OSError, ValueError):
        return data
    for _ in range(8):  # a drawn type Parquet cannot write: draw again
        mutated = retype_table(rng, table)
        if rng.random() < 0.5 and meta:
            mutated = mutated.replace_schema_metadata(meta)
        out = io.BytesIO()
        try:
            # Arrow's writer aborts the process on some invalid arrays, rather than raise
            mutated.validate(full=True)
            # without the stored Arrow schema a reader sees what Parquet makes of the
            # types (a large_string as string, a dictionary as its values, ...)
            pq.write_table(mutated, out, row_group_size=int(rng.integers(1, 64)),
                           use_dictionary=bool(rng.integers(2)),
                           store_schema=rng.random() < 0.8)
        except (pa.ArrowException, ValueError, TypeError, OverflowError):
            continue
        return out.getvalue()
    return data
