"""Record validation, exact and vectorized, and the record <-> Arrow conversions.

Two validators implement the same rules (those of ``schema/trace-v1.json``):

* The *exact* validator works on one decoded record (a dict). A quick
  hand-written predicate (:func:`_quick_ok`) accepts the common, valid case
  cheaply; only when it says no does the JSON Schema run (``jsonschema``), and
  its first error, by field order, becomes the human message. The exact
  validator is the single source of error messages for both formats and the
  writers, so a record gets the same message wherever it is checked.
  The tests check the predicate against ``jsonschema`` on random records.

* The *vectorized* checks (:func:`ok_mask`, :func:`fast_table_ok`) work on Arrow
  columns with ``pyarrow.compute``. They serve the fast paths: when they find
  nothing wrong, the batch is accepted as is; when they find anything, the
  caller falls back to the exact validator for the exact message (and, with
  ``keep_going``, to sort good rows from bad).

A few rules go beyond the JSON Schema because Arrow cannot hold the value:
``seq`` must fit in int64 and numbers must fit in a float64 (``1e400`` is valid
JSON but would become infinity). Both validators apply them.

Extension fields (``x_*``) are carried, not checked. In Arrow an ``x_`` column
is bool, int64, float64 or string when all its values in a batch are of that
kind (int64 and float64 mix to float64, as in ``pyarrow.json``); anything else
(objects, arrays, mixed kinds) is carried as JSON text in a string column whose
field metadata has ``tomkit.encoding = json``, so that writing it out again
gives back the same JSON values.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from functools import lru_cache
from itertools import chain, repeat
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tomkit.traces.schema import (
    ARROW_SCHEMA,
    EXTENSION_PREFIX,
    FIELDS,
    FORMAT_NAME,
    HEADER_KEY,
    KINDS,
    MSG_KINDS,
    json_schema,
)

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)

KIND_SET = frozenset(KINDS)
STRING_FIELDS = ("trace", "process", "kind", "msg", "view")
LIST_FIELDS = ("deps", "members")
TIME_FIELDS = ("time", "real_time")  # float64 seconds: local clock, real time
_STRING_FIELDS = frozenset(STRING_FIELDS)
_LIST_FIELDS = frozenset(LIST_FIELDS)
_FIELD_RANK = {name: i for i, name in enumerate(FIELDS)}
_KINDS_TEXT = ", ".join(KINDS)

# Field metadata marking an x_ column that holds JSON text (see module docstring).
ENCODING_KEY = b"tomkit.encoding"
JSON_ENCODING = b"json"


# --------------------------------------------------------------------------
# Exact validation of one record
# --------------------------------------------------------------------------


def _int_fits_float(value: int) -> bool:
    try:
        float(value)
    except OverflowError:
        return False
    return True


def _quick_ok(rec: Any) -> bool:
    """True if `rec` is certainly valid. False means: ask the slow path why.

    Kept in step with the JSON Schema by a property test; it must never accept
    what the schema (plus the range rules) rejects.
    """
    if type(rec) is not dict:
        return False
    kind = rec.get("kind")
    if type(kind) is not str or kind not in KIND_SET or "trace" not in rec or "process" not in rec:
        return False
    for key, value in rec.items():
        if key in _STRING_FIELDS:
            if type(value) is not str or not value:
                return False
        elif key in _LIST_FIELDS:
            if type(value) is not list:
                return False
            for item in value:
                if type(item) is not str or not item:
                    return False
        elif key == "seq":
            t = type(value)
            if t is int:
                if not 0 <= value <= INT64_MAX:
                    return False
            elif t is float:
                if not (value.is_integer() and 0 <= value <= INT64_MAX):
                    return False
            else:
                return False
        elif key == "time" or key == "real_time":
            t = type(value)
            if t is float:
                if not math.isfinite(value):
                    return False
            elif t is int:
                if not _int_fits_float(value):
                    return False
            else:
                return False
        elif not key.startswith(EXTENSION_PREFIX):
            return False
    if ("msg" in rec) != (kind in MSG_KINDS):
        return False
    is_view = kind == "view"
    if ("view" in rec) != is_view or ("members" in rec) != is_view:
        return False
    return not ("deps" in rec and kind != "send")


@lru_cache(maxsize=1)
def _schema_validator() -> Any:
    from jsonschema import Draft202012Validator

    schema = json_schema()
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def json_type(value: Any) -> str:
    """The JSON name of a Python value's type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _show(value: Any) -> str:
    if isinstance(value, str):
        text = value if len(value) <= 60 else value[:57] + "..."
        return f"'{text}'"
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _rank(field: str | None, rec: dict) -> int:
    if field is None:
        return -1
    if field in _FIELD_RANK:
        return _FIELD_RANK[field]
    # unknown fields after the known ones, in the record's own order
    keys = list(rec)
    return len(FIELDS) + (keys.index(field) if field in keys else len(keys))


def _describe(err: Any, rec: Any) -> tuple[str | None, str]:
    """Turn one jsonschema error into (field, message) in plain words."""
    path = list(err.absolute_path)
    v = err.validator
    kind = rec.get("kind") if isinstance(rec, dict) else None
    where = ""
    if len(path) > 1:
        where = f"item {path[1]}: "
    field = path[0] if path else None
    if v == "type":
        if not path:
            return None, f"record is not a JSON object (got {json_type(err.instance)})"
        expected = err.validator_value
        got = json_type(err.instance)
        if expected == "integer" and got == "number":
            return field, f"{where}expected integer, got number {_show(err.instance)}"
        return field, f"{where}expected {expected}, got {got}"
    if v == "minLength":
        return field, f"{where}empty string" if where else "empty string"
    if v == "enum":
        return field, f"{_show(err.instance)} is not one of {_KINDS_TEXT}"
    if v == "minimum":
        return field, f"must be >= {err.validator_value}, got {_show(err.instance)}"
    if v == "required":
        missing = [n for n in err.validator_value if n not in err.instance]
        name = missing[0] if missing else err.validator_value[0]
        if "then" in err.schema_path:
            return name, f"missing, required for kind {_show(kind)}"
        return name, "missing required field"
    if v == "additionalProperties":
        extra = [
            k for k in err.instance
            if k not in _FIELD_RANK and not k.startswith(EXTENSION_PREFIX)
        ]
        name = extra[0] if extra else None
        return name, f"unknown field (extension fields must start with '{EXTENSION_PREFIX}')"
    if v == "not":
        required = err.validator_value.get("required", [None])
        name = required[0]
        if isinstance(kind, str) and kind in KIND_SET:
            return name, f"not allowed for kind {_show(kind)}"
        return name, "not allowed without a valid kind"
    return field, err.message


def _range_problems(rec: dict) -> list[tuple[str, str]]:
    """The rules beyond the JSON Schema: values Arrow cannot hold."""
    out = []
    seq = rec.get("seq")
    if type(seq) in (int, float) and seq > INT64_MAX:
        out.append(("seq", f"{_show(seq)} is too large (the maximum is {INT64_MAX})"))
    for name in TIME_FIELDS:
        t = rec.get(name)
        if type(t) is float and not math.isfinite(t):
            out.append((name, f"{_show(t)} is not a finite number"))
        elif type(t) is int and not _int_fits_float(t):
            out.append((name, "number out of range of a 64-bit float"))
    return out


def record_problem(rec: Any) -> tuple[str | None, str] | None:
    """None if `rec` is a valid record, else (field, message) of its first problem.

    "First" means: a record-level problem, then by field in FIELDS order, then
    unknown fields in the record's order.
    """
    if _quick_ok(rec):
        return None
    if not isinstance(rec, dict):
        return None, f"record is not a JSON object (got {json_type(rec)})"
    if rec.get(HEADER_KEY) == FORMAT_NAME:
        return HEADER_KEY, "a header line is allowed only as the first line of the file"
    found = [_describe(e, rec) for e in _schema_validator().iter_errors(rec)]
    found.extend(_range_problems(rec))
    if not found:  # pragma: no cover - the property test keeps this unreachable
        return None, "record rejected by the trace format"
    return min(found, key=lambda fm: _rank(fm[0], rec))


def normalize(rec: dict) -> dict:
    """A valid record with numbers in their Arrow types (seq int, time float)."""
    seq = rec.get("seq")
    if type(seq) is float:
        rec = dict(rec, seq=int(seq))
    for name in TIME_FIELDS:
        t = rec.get(name)
        if type(t) is int:
            rec = dict(rec, **{name: float(t)})
    return rec


# --------------------------------------------------------------------------
# Records <-> Arrow
# --------------------------------------------------------------------------


def is_json_field(field: pa.Field) -> bool:
    return bool(field.metadata) and field.metadata.get(ENCODING_KEY) == JSON_ENCODING


def json_field(name: str) -> pa.Field:
    return pa.field(name, pa.string(), metadata={ENCODING_KEY: JSON_ENCODING})


_X_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _dumps_x(value: Any) -> str:
    return _X_ENCODER.encode(value)


def x_column(name: str, values: Sequence[Any], *, exact: bool = False
             ) -> tuple[pa.Field, pa.Array]:
    """Arrow column for one extension field (see the module docstring). ``exact``: a
    column whose numbers a float64 column would change (ints mixed with floats, ints
    beyond int64) is JSON text instead, so that it is written back as it came."""
    kinds = set(map(type, values))
    kinds.discard(type(None))
    if not kinds:
        return pa.field(name, pa.null()), pa.nulls(len(values))
    if kinds == {bool}:
        return pa.field(name, pa.bool_()), pa.array(values, pa.bool_())
    if kinds == {str}:
        return pa.field(name, pa.string()), pa.array(values, pa.string())
    if kinds <= {int, float}:
        if kinds == {int}:
            try:  # (the range is checked in C)
                return pa.field(name, pa.int64()), pa.array(values, pa.int64())
            except (OverflowError, pa.ArrowInvalid):
                pass  # beyond int64
        if exact and kinds != {float}:
            return json_field(name), pa.array(
                [None if v is None else _dumps_x(v) for v in values], pa.string()
            )
        try:
            floats = [None if v is None else float(v) for v in values]
        except OverflowError:
            floats = None
        if floats is not None:
            return pa.field(name, pa.float64()), pa.array(floats, pa.float64())
    return json_field(name), pa.array(
        [None if v is None else _dumps_x(v) for v in values], pa.string()
    )


_CORE_STRUCT = pa.struct(list(ARROW_SCHEMA))


def records_to_table(records: Sequence[dict], *, exact: bool = False,
                     none_absent: bool = False) -> pa.Table:
    """Valid, normalized records -> a table with ARROW_SCHEMA then x_ columns, in the
    order they first appear. ``exact``: see :func:`x_column`; ``none_absent``: an x_
    key whose value is None counts as absent (as the writer takes it), so a key that
    only ever has None makes no column."""
    # pyarrow converts a list of dicts to a struct array in C, keys by name
    core = pa.array(records, type=_CORE_STRUCT)
    arrays = core.flatten() if len(records) else [pa.array([], f.type) for f in ARROW_SCHEMA]
    fields = list(ARROW_SCHEMA)
    for name, values in _x_values(records, none_absent):
        field, arr = x_column(name, values, exact=exact)
        fields.append(field)
        arrays.append(arr)
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def _x_values(records: Sequence[dict], none_absent: bool) -> list[tuple[str, list]]:
    """Per extension key, its values, keys in the order they first appear (found in C,
    then each one's values; see records_to_table for ``none_absent``)."""
    found: dict[str, tuple[int, list]] = {}
    for name in set().union(*records):
        if name.startswith(EXTENSION_PREFIX):
            values = list(map(dict.get, records, repeat(name)))
            if none_absent:
                first = next((i for i, v in enumerate(values) if v is not None), None)
            else:
                first = next(i for i, r in enumerate(records) if name in r)
            if first is not None:
                found[name] = (first, values)
    # keys first met in one record keep that record's order
    rank = {name: (first, list(records[first]).index(name))
            for name, (first, _) in found.items()}
    return [(name, found[name][1]) for name in sorted(found, key=rank.__getitem__)]


#: per core field, the one Python type whose values the Arrow conversion keeps as they
#: are (it would turn True into 1.0 and "ab" into ["a", "b"])
_CORE_TYPES = {**dict.fromkeys(STRING_FIELDS, str), **dict.fromkeys(LIST_FIELDS, list),
               **dict.fromkeys(TIME_FIELDS, float), "seq": int}


def columnar_safe(records: Sequence[Any]) -> bool:
    """Whether :func:`records_to_table` holds exactly these records, so that the
    vectorized checks of a table (``check_table``) judge them as :func:`record_problem`
    judges each one: every record a dict, no key but the format's fields and ``x_``
    ones, and every value of a core field (None aside) of the one type the conversion
    keeps as it is, list items strings. False sends the caller to the exact check of
    each record. Runs over the records in C (``map``), not record by record."""
    if not records or set(map(type, records)) != {dict}:
        return False
    none = type(None)
    for key in set().union(*records):
        want = _CORE_TYPES.get(key)
        if want is None:
            if not key.startswith(EXTENSION_PREFIX):
                return False
            continue
        types = set(map(type, map(dict.get, records, repeat(key))))
        types.discard(none)
        if types - {want}:
            return False
        if want is list and set(map(type, chain.from_iterable(
                filter(None, map(dict.get, records, repeat(key)))))) - {str}:
            return False
    return True


def empty_table() -> pa.Table:
    return ARROW_SCHEMA.empty_table()


def _decoder_for(field: pa.Field):
    if is_json_field(field):
        return json.loads
    return None


def table_to_records(table: pa.Table) -> list[dict]:
    """Rows as dicts in FIELDS order then x_ fields; null fields left out."""
    names = table.column_names
    cols = []
    for i in range(len(names)):
        values = table.column(i).to_pylist()
        dec = _decoder_for(table.schema.field(i))
        if dec is not None:
            values = [None if v is None else dec(v) for v in values]
        cols.append(values)
    out = []
    for row in zip(*cols, strict=True):
        out.append({k: v for k, v in zip(names, row, strict=True) if v is not None})
    return out


def unify_tables(tables: Sequence[pa.Table]) -> pa.Table:
    """Concatenate batches whose x_ columns may differ in presence or type.

    Null-typed columns take the other type, int64 and float64 become float64,
    and any other disagreement turns the column into JSON text in all batches.
    """
    if not tables:
        return empty_table()
    types: dict[str, list[pa.Field]] = {}
    for t in tables:
        for f in t.schema:
            if f.name not in _FIELD_RANK:
                types.setdefault(f.name, []).append(f)
    target: dict[str, pa.Field] = {}
    for name, fields in types.items():
        kinds = {("json" if is_json_field(f) else str(f.type)) for f in fields}
        kinds.discard("null")
        if not kinds:
            target[name] = pa.field(name, pa.null())
        elif len(kinds) == 1:
            target[name] = next(f for f in fields if f.type != pa.null())
        elif kinds == {"int64", "double"}:
            target[name] = pa.field(name, pa.float64())
        else:
            target[name] = json_field(name)
    schema = pa.schema(list(ARROW_SCHEMA) + list(target.values()))
    fixed = []
    for t in tables:
        arrays = [t.column(f.name) for f in ARROW_SCHEMA]
        for name, field in target.items():
            if name not in t.column_names:
                arrays.append(pa.nulls(t.num_rows, field.type))
                continue
            col = t.column(name)
            have = t.schema.field(name)
            if is_json_field(field) and not is_json_field(have):
                col = pa.array(
                    [None if v is None else _dumps_x(v) for v in col.to_pylist()], pa.string()
                )
            elif col.type != field.type:
                col = col.cast(field.type)
            arrays.append(col)
        fixed.append(pa.Table.from_arrays(arrays, schema=schema))
    return pa.concat_tables(fixed)


# --------------------------------------------------------------------------
# Vectorized checks
# --------------------------------------------------------------------------

_KINDS_ARR = pa.array(KINDS, pa.string())
_MSG_KINDS_ARR = pa.array(sorted(MSG_KINDS), pa.string())
_FAST_X_TYPES = frozenset({pa.null(), pa.bool_(), pa.int64(), pa.float64(), pa.string()})


_N_MSG_KINDS = 3
assert set(KINDS[:_N_MSG_KINDS]) == MSG_KINDS
_VIEW_CODE = KINDS.index("view")
_SEND_CODE = KINDS.index("send")


def _presence_is(col: pa.ChunkedArray | pa.Array, wanted: Callable[[], Any]) -> bool:
    """Is the column non-null exactly where the boolean array `wanted()` is true?"""
    nulls = col.null_count
    if nulls == 0:
        return _all(wanted())
    if nulls == len(col):
        return not pc.any(wanted()).as_py()
    return _all(pc.equal(pc.is_valid(col), wanted()))


def _kind_codes(kind: pa.ChunkedArray | pa.Array) -> pa.ChunkedArray | pa.Array:
    """Each record's kind as its index in KINDS (null: not a kind). A dictionary column's
    few values are looked up once, then taken by index."""
    if not pa.types.is_dictionary(kind.type):
        return pc.index_in(kind, value_set=_KINDS_ARR)
    return pa.chunked_array([pc.take(pc.index_in(c.dictionary, value_set=_KINDS_ARR),
                                     c.indices) for c in _chunks(kind)], pa.int32())


def _all(arr: pa.ChunkedArray | pa.Array) -> bool:
    # pc.all skips nulls and is null on an empty input: both mean "nothing wrong"
    return pc.all(arr).as_py() is not False


def _min_length(col: pa.ChunkedArray | pa.Array) -> int:
    """The shortest string in a string or dictionary column. For a dictionary, the shortest
    dictionary value: an unused empty value gives 0, which only sends the caller to the
    exact row-by-row check."""
    if pa.types.is_dictionary(col.type):
        lengths = [pc.min(pc.binary_length(c.dictionary)).as_py() for c in _chunks(col)
                   if len(c.dictionary)]
        return min((x for x in lengths if x is not None), default=1)
    return pc.min(pc.binary_length(col)).as_py()


def decode_dictionaries(table: pa.Table) -> pa.Table:
    """The table with dictionary-encoded string columns decoded to plain strings."""
    for i, field in enumerate(table.schema):
        if pa.types.is_dictionary(field.type):
            table = table.set_column(i, field.name,
                                     table.column(i).cast(field.type.value_type))
    return table


def _strings_nonempty(col: pa.ChunkedArray | pa.Array) -> pa.ChunkedArray | pa.Array:
    return pc.fill_null(pc.greater(pc.binary_length(col), 0), True)


def _chunks(col: pa.ChunkedArray | pa.Array) -> list[pa.Array]:
    return col.chunks if isinstance(col, pa.ChunkedArray) else [col]


def _list_items_ok(col: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """Per row: the list has no null or empty item (null lists are fine)."""
    out = []
    for chunk in _chunks(col):
        ok = np.ones(len(chunk), dtype=bool)
        items = chunk.flatten()
        if len(items):
            bad = pc.invert(pc.fill_null(pc.greater(pc.binary_length(items), 0), False))
            bad_np = bad.to_numpy(zero_copy_only=False)
            if bad_np.any():
                # flatten skips the values under a null list, and list_parent_indices
                # does not (a damaged file's null list can still own values): each item's
                # row from the lengths flatten went by
                lengths = pc.list_value_length(chunk).fill_null(0).to_numpy(
                    zero_copy_only=False)
                parents = np.repeat(np.arange(len(chunk)), lengths)
                ok[parents[bad_np]] = False
        out.append(ok)
    return np.concatenate(out) if out else np.ones(0, dtype=bool)


def ok_mask(table: pa.Table) -> np.ndarray:
    """Per row: True if the row passes every rule (table has ARROW_SCHEMA types).

    Null in a column means the field is absent; x_ columns are not looked at.
    """
    kind = table.column("kind")
    ok = pc.and_(pc.is_valid(table.column("trace")), pc.is_valid(table.column("process")))
    ok = pc.and_(ok, pc.fill_null(pc.is_in(kind, value_set=_KINDS_ARR), False))
    msg_kind = pc.fill_null(pc.is_in(kind, value_set=_MSG_KINDS_ARR), False)
    ok = pc.and_(ok, pc.equal(pc.is_valid(table.column("msg")), msg_kind))
    is_view = pc.fill_null(pc.equal(kind, "view"), False)
    ok = pc.and_(ok, pc.equal(pc.is_valid(table.column("view")), is_view))
    ok = pc.and_(ok, pc.equal(pc.is_valid(table.column("members")), is_view))
    is_send = pc.fill_null(pc.equal(kind, "send"), False)
    ok = pc.and_(ok, pc.or_(pc.is_null(table.column("deps")), is_send))
    for name in STRING_FIELDS:
        ok = pc.and_(ok, _strings_nonempty(table.column(name)))
    ok = pc.and_(ok, pc.fill_null(pc.greater_equal(table.column("seq"), 0), True))
    for name in TIME_FIELDS:
        ok = pc.and_(ok, pc.fill_null(pc.is_finite(table.column(name)), True))
    mask = np.asarray(ok.to_numpy(zero_copy_only=False), dtype=bool)
    for name in LIST_FIELDS:
        mask &= _list_items_ok(table.column(name))
    return mask


def fast_table_ok(table: pa.Table, *, extensions: bool = True) -> bool:
    """All-or-nothing version of :func:`ok_mask` for a table from pyarrow.json.

    Also rejects what the exact path would treat differently: extra columns
    that are not x_, and x_ columns of a type that pyarrow inferred but that
    the exact path would not give (timestamps, structs, lists), or that hold a
    non-finite number (NaN/Infinity literals, numbers too large). With
    ``extensions=False`` (Parquet, tables) x_ columns are carried unlooked-at.
    """
    names = table.column_names
    if extensions and len(names) > len(FIELDS):
        for field in list(table.schema)[len(FIELDS):]:
            if not field.name.startswith(EXTENSION_PREFIX) or field.type not in _FAST_X_TYPES:
                return False
            if field.type == pa.float64() and not _all(pc.is_finite(table.column(field.name))):
                return False
    n = table.num_rows
    if table.column("trace").null_count or table.column("process").null_count:
        return False
    # one hash pass over kind, then the per-kind rules on its small integer codes,
    # as bitmaps (KINDS starts with the three message kinds)
    codes = _kind_codes(table.column("kind"))
    if codes.null_count:
        return False
    if not _presence_is(table.column("msg"), lambda: pc.less(codes, _N_MSG_KINDS)):
        return False
    is_view = pc.equal(codes, _VIEW_CODE)
    if not _presence_is(table.column("view"), lambda: is_view):
        return False
    if not _presence_is(table.column("members"), lambda: is_view):
        return False
    deps = table.column("deps")
    if deps.null_count != n:
        if not _all(pc.or_(pc.is_null(deps), pc.equal(codes, _SEND_CODE))):
            return False
    for name in ("trace", "process", "msg", "view"):
        col = table.column(name)
        if col.null_count != len(col) and _min_length(col) == 0:
            return False
    for name in LIST_FIELDS:
        items = pc.list_flatten(table.column(name))
        if len(items) and (items.null_count or pc.min(pc.binary_length(items)).as_py() == 0):
            return False
    seq = table.column("seq")
    if seq.null_count != len(seq) and pc.min(seq).as_py() < 0:
        return False
    for name in TIME_FIELDS:
        time = table.column(name)
        if time.null_count != len(time) and not _all(pc.is_finite(time)):
            return False
    return True


def run_starts(col: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, list[str]]:
    """Start index and value of each run of equal consecutive values."""
    n = len(col)
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    if n == 0:
        return np.zeros(0, dtype=np.int64), []
    change = pc.not_equal(col.slice(1), col.slice(0, n - 1))
    idx = np.flatnonzero(change.to_numpy(zero_copy_only=False)) + 1
    starts = np.concatenate([np.zeros(1, dtype=np.int64), idx.astype(np.int64)])
    return starts, pc.take(col, pa.array(starts)).to_pylist()
