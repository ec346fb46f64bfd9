"""The Arrow types a trace column may have in a Parquet file, and their conversion to
the format's own (``ARROW_SCHEMA``).

A Parquet file from another writer stores a trace column in whatever type that writer
chose, so each column is read from every type that holds its values and refused, by
name, from every other:

* a string field (``trace``, ``process``, ``kind``, ``msg``, ``view``): string,
  large_string, string_view, or a binary kind (binary, large_binary, binary_view,
  fixed_size_binary: Parquet files from Hive or Spark keep text as bytes), whose
  values must then be UTF-8 -- a value that is not is a row error;
* a list field (``deps``, ``members``): any list kind (list, large_list,
  fixed_size_list, list_view, large_list_view) of those;
* ``time``, ``real_time``: any integer, float (16, 32 or 64 bits) or decimal;
* ``seq``: any integer, or a decimal of scale 0; a value outside int64 is a row error;
* any of these dictionary-encoded, with any index type, and any column all null
  (Arrow type ``null``).

Every other type (booleans, dates, timestamps, structs, maps, nested lists, ...) is
refused when the file opens, with one error naming the file, the column, its type and
the types it may have. Extension columns (``x_*``) are carried as they are.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .validate import INT64_MAX, INT64_MIN

#: a row's problem found while converting a column: row index -> (field, message)
Problems = dict[int, tuple[str, str]]

_LIST_KINDS = (pa.types.is_list, pa.types.is_large_list, pa.types.is_fixed_size_list,
               pa.types.is_list_view, pa.types.is_large_list_view)


def is_string_kind(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)


def is_binary_kind(t: pa.DataType) -> bool:
    return (pa.types.is_binary(t) or pa.types.is_large_binary(t)
            or pa.types.is_binary_view(t) or pa.types.is_fixed_size_binary(t))


def is_list_kind(t: pa.DataType) -> bool:
    return any(test(t) for test in _LIST_KINDS)


def _plain(t: pa.DataType) -> pa.DataType:
    return _plain(t.value_type) if pa.types.is_dictionary(t) else t


def _textual(t: pa.DataType) -> bool:
    t = _plain(t)
    return is_string_kind(t) or is_binary_kind(t) or pa.types.is_null(t)


def readable(t: pa.DataType, target: pa.DataType) -> bool:
    """Whether a column of type t reads as the format's type ``target``."""
    t = _plain(t)
    if pa.types.is_null(t):
        return True
    if pa.types.is_string(target):
        return _textual(t)
    if pa.types.is_list(target):
        return is_list_kind(t) and _textual(t.value_type)
    if pa.types.is_floating(target):
        return pa.types.is_floating(t) or pa.types.is_integer(t) or pa.types.is_decimal(t)
    if pa.types.is_integer(target):
        return pa.types.is_integer(t) or (pa.types.is_decimal(t) and t.scale == 0)
    return t == target  # pragma: no cover - the format has only the four kinds above


def expected(target: pa.DataType) -> str:
    """The types a column of the format's type ``target`` may have, for an error."""
    text = "string, large_string, string_view or a binary kind holding UTF-8"
    if pa.types.is_string(target):
        return f"a string column ({text})"
    if pa.types.is_list(target):
        return f"a list-of-strings column (any list kind of {text})"
    if pa.types.is_floating(target):
        return "a numeric column (an integer, float or decimal)"
    return "an integer column (an integer, or a decimal of scale 0)"


# --------------------------------------------------------------------------
# Conversion
# --------------------------------------------------------------------------


def to_format(col: pa.ChunkedArray, name: str, target: pa.DataType,
              ) -> tuple[pa.ChunkedArray, Problems]:
    """A column of a ``readable`` type as ``target``, and the rows whose value cannot be
    (nulled in the result, each with its problem)."""
    problems: Problems = {}
    chunks = []
    offset = 0
    for chunk in col.chunks:
        arr, bad = _convert(_decoded(chunk), name, target)
        chunks.append(arr)
        problems.update({offset + i: p for i, p in bad.items()})
        offset += len(chunk)
    return pa.chunked_array(chunks, target), problems


def _decoded(arr: pa.Array) -> pa.Array:
    while pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    return arr


def _convert(arr: pa.Array, name: str, target: pa.DataType) -> tuple[pa.Array, Problems]:
    if arr.type == target:
        return arr, {}
    if pa.types.is_null(arr.type):
        return pa.nulls(len(arr), target), {}
    if pa.types.is_string(target):
        return _text(arr, name)
    if pa.types.is_list(target):
        return _strings_list(arr, name)
    if pa.types.is_floating(target):
        # a float64 holds every integer and decimal a clock reads, to its precision
        return arr.cast(target, safe=False), {}
    return _integers(arr, name, target)


def _text(arr: pa.Array, name: str) -> tuple[pa.Array, Problems]:
    if pa.types.is_null(arr.type):
        return pa.nulls(len(arr), pa.string()), {}
    if is_binary_kind(arr.type) and not pa.types.is_binary(arr.type):
        arr = arr.cast(pa.binary())
    try:
        return arr.cast(pa.string()), {}
    except pa.ArrowInvalid:  # a binary value that is not UTF-8: find which, by row
        pass
    problems: Problems = {}
    values = []
    for i, raw in enumerate(arr.to_pylist()):
        try:
            values.append(None if raw is None else raw.decode("utf-8"))
        except UnicodeDecodeError as e:
            problems[i] = (name, f"not valid UTF-8 (byte {e.start + 1} of the value)")
            values.append(None)
    return pa.array(values, pa.string()), problems


def _strings_list(arr: pa.Array, name: str) -> tuple[pa.Array, Problems]:
    lengths = pc.list_value_length(arr).fill_null(0).to_numpy(zero_copy_only=False)
    offsets = np.zeros(len(arr) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    items, item_problems = _text(_decoded(arr.flatten()), name)
    problems: Problems = {}
    if item_problems:
        rows = np.repeat(np.arange(len(arr)), lengths)
        for j, (field, message) in item_problems.items():
            problems.setdefault(int(rows[j]), (field, f"item {j - offsets[rows[j]]}: "
                                               + message))
    if offsets[-1] > np.iinfo(np.int32).max:
        raise ValueError(f"column '{name}': more list items in one batch than a list "
                         "holds")  # pragma: no cover - a batch holds 2**18 rows
    out = pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), items,
                                   mask=arr.is_null() if arr.null_count else None)
    if problems:
        bad = np.zeros(len(arr), bool)
        bad[list(problems)] = True
        out = pc.if_else(pa.array(bad), pa.scalar(None, out.type), out)
    return out, problems


def _integers(arr: pa.Array, name: str, target: pa.DataType) -> tuple[pa.Array, Problems]:
    try:
        return arr.cast(target), {}
    except pa.ArrowInvalid:  # a value past int64: find which, by row
        pass
    problems: Problems = {}
    values = []
    for i, v in enumerate(arr.to_pylist()):
        if v is not None and not INT64_MIN <= v <= INT64_MAX:
            side = "large (the maximum" if v > 0 else "small (the minimum"
            bound = INT64_MAX if v > 0 else INT64_MIN
            problems[i] = (name, f"{v} is too {side} is {bound})")
            v = None
        values.append(None if v is None else int(v))
    return pa.array(values, target), problems


# --------------------------------------------------------------------------
# Extension columns
# --------------------------------------------------------------------------


def _viewless(t: pa.DataType) -> pa.DataType:
    """t with string_view and binary_view replaced by string and binary, at any depth."""
    if pa.types.is_string_view(t):
        return pa.string()
    if pa.types.is_binary_view(t):
        return pa.binary()
    if pa.types.is_dictionary(t):
        return pa.dictionary(t.index_type, _viewless(t.value_type), t.ordered)
    if pa.types.is_fixed_size_list(t):
        return pa.list_(t.value_field.with_type(_viewless(t.value_type)), t.list_size)
    for test, make in ((pa.types.is_list, pa.list_), (pa.types.is_large_list, pa.large_list),
                       (pa.types.is_list_view, pa.list_view),
                       (pa.types.is_large_list_view, pa.large_list_view)):
        if test(t):
            return make(t.value_field.with_type(_viewless(t.value_type)))
    if pa.types.is_struct(t):
        return pa.struct([t.field(i).with_type(_viewless(t.field(i).type))
                          for i in range(t.num_fields)])
    if pa.types.is_map(t):
        return pa.map_(t.key_field.with_type(_viewless(t.key_type)),
                       t.item_field.with_type(_viewless(t.item_type)), t.keys_sorted)
    return t


def carried(col: pa.ChunkedArray) -> pa.ChunkedArray:
    """An extension column as the readers carry it: its values, with the view string
    kinds in their plain form (Arrow has no take or filter for views, and a reader that
    drops a bad row takes the others)."""
    t = _viewless(col.type)
    if t == col.type:
        return col
    try:
        return col.cast(t)
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid):
        # a cast Arrow lacks (a view inside a map, say): through Python values
        return pa.chunked_array([pa.array(c.to_pylist(), t) for c in col.chunks], t)
