"""Bad input: every error names file, line (or row) and field; keep_going; fast == exact."""

from __future__ import annotations

import gzip
import json
import math
import zlib

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tomkit.traces.errors import TraceFormatError
from tomkit.traces.jsonl import read_lines_exact
from tomkit.traces.reader import TraceReader, read_table
from tomkit.traces.schema import KINDS, json_schema, parquet_metadata
from tomkit.traces.validate import _quick_ok, record_problem, table_to_records, unify_tables
from tomkit.traces.writer import write_records

OK = '{"trace":"t","process":"p","kind":"crash"}'
KINDS_TEXT = "send, recv, deliver, view, crash, join, leave"


def _write(tmp_path, text: str | bytes, name: str = "t.jsonl"):
    path = tmp_path / name
    data = text.encode() if isinstance(text, str) else text
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    return path


def _error(path, **kwargs) -> TraceFormatError:
    with pytest.raises(TraceFormatError) as ei:
        read_table(path, **kwargs)
    return ei.value


# --------------------------------------------------------------------------
# JSON Lines: one bad record
# --------------------------------------------------------------------------

BAD_LINES = [
    # (line, field, message fragment)
    ('{"trace":"t","process":"p",kind:"crash"}', None, "invalid JSON at column 28"),
    # a line cut short (kill -9 of its writer) names the field it ends after or in
    ('{"trace":"t","process":"p","kind":"crash"', "kind",
     "the record ends after this field, mid-way: a line cut short"),
    ('{"trace":"t","process":"p","kind":"cra', "kind",
     "the record ends inside this field's value, mid-way: a line cut short"),
    ("[1, 2]", None, "record is not a JSON object (got array)"),
    ('"just a string"', None, "record is not a JSON object (got string)"),
    ('{"trace":"t","kind":"crash"}', "process", "missing required field"),
    ('{"trace":5,"process":"p","kind":"crash"}', "trace", "expected string, got integer"),
    ('{"trace":"t","process":true,"kind":"crash"}', "process", "expected string, got boolean"),
    ('{"trace":"t","process":"p","kind":"crash","seq":"3"}', "seq",
     "expected integer, got string"),
    ('{"trace":"t","process":"p","kind":"crash","seq":1.5}', "seq",
     "expected integer, got number 1.5"),
    ('{"trace":"t","process":"p","kind":"crash","time":"now"}', "time",
     "expected number, got string"),
    ('{"trace":"t","process":"p","kind":"send","msg":"m","deps":"m0"}', "deps",
     "expected array, got string"),
    ('{"trace":"t","process":"p","kind":"send","msg":"m","deps":["a",7]}', "deps",
     "item 1: expected string, got integer"),
    ('{"trace":"t","process":"p","kind":"delvier"}', "kind",
     f"'delvier' is not one of {KINDS_TEXT}"),
    ('{"trace":"t","process":"p","kind":3}', "kind", f"3 is not one of {KINDS_TEXT}"),
    ('{"trace":"t","process":"p","kind":"crash","msg":"m"}', "msg",
     "not allowed for kind 'crash'"),
    ('{"trace":"t","process":"p","kind":"deliver","msg":"m","deps":[]}', "deps",
     "not allowed for kind 'deliver'"),
    ('{"trace":"t","process":"p","kind":"join","view":"v"}', "view",
     "not allowed for kind 'join'"),
    ('{"trace":"t","process":"p","kind":"send"}', "msg", "missing, required for kind 'send'"),
    ('{"trace":"t","process":"p","kind":"view","view":"v"}', "members",
     "missing, required for kind 'view'"),
    ('{"trace":"t","process":"p","kind":"crash","colour":"red"}', "colour",
     "unknown field (extension fields must start with 'x_')"),
    ('{"trace":"","process":"p","kind":"crash"}', "trace", "empty string"),
    ('{"trace":"t","process":"p","kind":"view","view":"v","members":["a",""]}', "members",
     "item 1: empty string"),
    ('{"trace":"t","process":"p","kind":"crash","seq":-1}', "seq", "must be >= 0, got -1"),
    ('{"trace":"t","process":"p","kind":"crash","seq":9223372036854775808}', "seq",
     "too large"),
    ('{"trace":"t","process":"p","kind":"crash","msg":null}', "msg",
     "expected string, got null"),
    ('{"trace":"t","process":"p","kind":"crash","time":NaN}', None,
     "invalid JSON at column 50: NaN is not a JSON value"),
    ('{"trace":"t","process":"p","kind":"crash","time":1e400}', "time", "out of range"),
    ('{"trace":"t","process":"p","kind":"crash","trace":"u"}', "trace",
     "appears more than once"),
    ('{"trace":"t\\udc00","process":"p","kind":"crash"}', "trace", "unpaired surrogate"),
    (OK + OK, None, "invalid JSON at column 43: Extra data"),
    ('{"format":"tomkit-trace","version":1}', "format", "only as the first line"),
]


@pytest.mark.parametrize(("line", "field", "fragment"), BAD_LINES)
@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz"])
def test_bad_record(tmp_path, line, field, fragment, suffix):
    # good lines around it, so that the block first goes down the fast path
    text = "\n".join([OK] * 5 + [line] + [OK] * 5) + "\n"
    path = _write(tmp_path, text, "t" + suffix)
    e = _error(path)
    assert e.location.source == str(path)
    assert (e.location.line, e.location.row) == (6, None)
    assert e.field == field
    assert fragment in e.message
    assert str(e).startswith(f"{path}:6: ")
    reader = TraceReader(path, keep_going=True)
    assert sum(len(b) for b in reader) == 10
    assert reader.accepted == 10
    assert [r.location.line for r in reader.rejected] == [6]


def test_message_reads_well(tmp_path):
    path = _write(tmp_path, "\n".join([OK] * 16 + ['{"trace":"t","process":"p","kind":"delvier"}']))
    assert str(_error(path)) == (
        f"{path}:17: field 'kind': 'delvier' is not one of send, recv, deliver, view, crash, "
        "join, leave, packet, negotiate"
    )


def test_invalid_utf8(tmp_path):
    path = _write(tmp_path, OK.encode() + b'\n{"trace":"t\xff","process":"p","kind":"crash"}\n')
    e = _error(path)
    assert (e.location.line, e.field) == (2, None)
    assert "invalid UTF-8 at column 12" in e.message


def test_first_bad_line_wins_and_keep_going_counts(tmp_path):
    lines = [OK] * 100
    bad_at = [3, 50, 51, 99]  # 0-based
    for i in bad_at:
        lines[i] = '{"trace":"t","process":"p","kind":"crash","seq":-2}'
    lines.insert(60, "")  # blank: skipped, but counted for line numbers
    path = _write(tmp_path, "\n".join(lines) + "\n")
    e = _error(path)
    assert (e.location.line, e.field) == (4, "seq")
    reader = TraceReader(path, keep_going=True, block_bytes=512)
    table = unify_tables([b.table for b in reader])
    assert reader.accepted == table.num_rows == 96
    assert reader.accepted + len(reader.rejected) == 100
    assert [r.location.line for r in reader.rejected] == [4, 51, 52, 101]


def test_keep_going_on_fast_path_blocks_and_order(tmp_path):
    recs = [{"trace": "t", "process": "p", "kind": "join", "seq": i} for i in range(400)]
    lines = [json.dumps(r) for r in recs]
    lines[123] = lines[123].replace('"join"', '"jion"')
    path = _write(tmp_path, "\n".join(lines) + "\n")
    reader = TraceReader(path, keep_going=True, block_bytes=1024)
    batches = list(reader)
    seqs = np.concatenate([b.table.column("seq").to_numpy() for b in batches])
    lines_out = np.concatenate([b.lines for b in batches])
    assert seqs.tolist() == [i for i in range(400) if i != 123]
    assert lines_out.tolist() == [i + 1 for i in range(400) if i != 123]
    assert len(reader.rejected) == 1 and reader.rejected[0].field == "kind"


# --------------------------------------------------------------------------
# JSON Lines: file level
# --------------------------------------------------------------------------


def test_file_not_found(tmp_path):
    e = _error(tmp_path / "missing.jsonl")
    assert e.location.source == str(tmp_path / "missing.jsonl")
    assert e.message == "file not found"
    e = _error(tmp_path / "missing.parquet")
    assert e.message == "file not found"


@pytest.mark.parametrize("name", ["t.jsonl", "t.jsonl.gz"])
@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "no records"),
        ("\n  \n\n", "no records"),
        ('{"format":"tomkit-trace","version":1,"grouped":true}\n', "only a header: no records"),
        ('{"format":"tomkit-trace","version":1,"grouped":true}\n\n\n', "no records"),
    ],
)
def test_no_records(tmp_path, name, text, fragment):
    path = _write(tmp_path, text, name)
    e = _error(path)
    assert fragment in e.message
    assert e.location.line is None
    e = _error(path, keep_going=True)
    assert fragment in e.message


def test_no_records_found_while_reading(tmp_path):
    # too long to be seen on opening; found at the end of the stream
    path = _write(tmp_path, '{"format":"tomkit-trace","version":1}\n' + "\n" * 200_000)
    reader = TraceReader(path)
    with pytest.raises(TraceFormatError, match="no records"):
        list(reader)


@pytest.mark.parametrize(
    ("header", "field", "fragment"),
    [
        ('{"format":"tomkit-trace","version":2}', "version",
         "unsupported format version 2: this reader reads version 1"),
        ('{"format":"tomkit-trace","version":"1"}', "version", "unsupported format version"),
        ('{"format":"tomkit-trace"}', "version", "no format version"),
        ('{"format":"other-trace","version":1}', "format", "not a tomkit trace"),
        ('{"format":"tomkit-trace","version":1,"grouped":"yes"}', "grouped",
         "expected true or false"),
        ('{"format":"tomkit-trace","version":1,"sorted":true}', "sorted",
         "unknown header field"),
    ],
)
def test_bad_header(tmp_path, header, field, fragment):
    path = _write(tmp_path, header + "\n" + OK + "\n")
    with pytest.raises(TraceFormatError) as ei:
        TraceReader(path, keep_going=True)  # raised on opening, even with keep_going
    e = ei.value
    assert (e.location.line, e.field) == (1, field)
    assert fragment in e.message


def _gzip_lines(n: int) -> tuple[bytes, list[str]]:
    lines = ['{"format":"tomkit-trace","version":1,"grouped":true}'] + [
        json.dumps({"trace": "t", "process": "p", "kind": "join", "seq": i, "x_pad": "x" * 40})
        for i in range(n)
    ]
    return gzip.compress(("\n".join(lines) + "\n").encode(), 1), lines


def test_truncated_gzip(tmp_path):
    data, lines = _gzip_lines(20_000)
    path = _write(tmp_path, b"", "t.jsonl.gz")
    path.write_bytes(data[: len(data) // 2])
    # the complete lines before the break, for comparison
    got = zlib.decompressobj(31).decompress(path.read_bytes())
    complete = got[: got.rfind(b"\n") + 1].count(b"\n")
    assert 1000 < complete < 20_000
    reader = TraceReader(path, block_bytes=1 << 16)
    seen = 0
    with pytest.raises(TraceFormatError) as ei:
        for b in reader:
            seen += len(b)
    e = ei.value
    assert seen == complete - 1  # the header is not a record
    assert e.location.line == complete + 1
    assert f"truncated: the gzip data ends unexpectedly after line {complete}" in e.message
    assert "last line read completely" in e.message
    reader = TraceReader(path, keep_going=True)
    table = unify_tables([b.table for b in reader])
    assert table.num_rows == reader.accepted == complete - 1
    assert table.column("seq").to_pylist() == list(range(complete - 1))
    assert len(reader.rejected) == 1 and "truncated" in reader.rejected[0].message


def test_truncated_gzip_tiny(tmp_path):
    data, _ = _gzip_lines(3)
    path = _write(tmp_path, b"", "t.jsonl.gz")
    path.write_bytes(data[:-4])  # only the trailer is cut: all lines are complete
    e = _error(path)
    assert "truncated" in e.message
    assert e.location.line == 5


def test_not_gzip(tmp_path):
    path = tmp_path / "t.jsonl.gz"
    path.write_text(OK + "\n")
    e = _error(path)
    assert "not gzip data" in e.message
    assert e.location == type(e.location)(str(path))


def test_corrupt_gzip(tmp_path):
    data, _ = _gzip_lines(5000)
    bad = bytearray(data)
    bad[len(bad) // 2: len(bad) // 2 + 200] = b"\xff" * 200
    path = tmp_path / "t.jsonl.gz"
    path.write_bytes(bytes(bad))
    e = _error(path, keep_going=True)
    assert "corrupt gzip data" in e.message


# --------------------------------------------------------------------------
# Parquet
# --------------------------------------------------------------------------


def _parquet(tmp_path, columns: dict, *, meta=None, name="t.parquet"):
    table = pa.table(columns)
    if meta is not None:
        table = table.replace_schema_metadata(meta)
    path = tmp_path / name
    pq.write_table(table, path)
    return path


GOOD_COLS = {
    "trace": ["t", "t", "t", "t"],
    "process": ["p", "p", "q", "q"],
    "kind": ["send", "recv", "crash", "join"],
    "msg": ["m", "m", None, None],
}


def test_parquet_flexible_types(tmp_path):
    path = _parquet(tmp_path, {
        "trace": pa.array(["t"] * 3).dictionary_encode(),
        "process": pa.array(["p", "q", "r"], pa.large_string()),
        "kind": pa.array(["send", "view", "join"]),
        "msg": pa.array(["m", None, None]),
        "view": pa.array([None, "v", None]),
        "members": pa.array([None, ["p", "q"], None], pa.large_list(pa.string())),
        "seq": pa.array([0, 1, 2], pa.uint16()),
        "time": pa.array([1, 2, 3], pa.int32()),
        "x_any": pa.array([1, 2, 3], pa.int8()),
    })
    table = read_table(path)
    assert table.schema.field("seq").type == pa.int64()
    assert table.schema.field("time").type == pa.float64()
    assert table.column("time").to_pylist() == [1.0, 2.0, 3.0]
    assert table.column("members").to_pylist() == [None, ["p", "q"], None]
    assert table.schema.field("x_any").type == pa.int8()


def test_parquet_missing_required_column(tmp_path):
    path = _parquet(tmp_path, {"trace": ["t"], "process": ["p"]})
    with pytest.raises(TraceFormatError) as ei:
        TraceReader(path)
    e = ei.value
    assert (e.location.source, e.field) == (str(path), "kind")
    assert "missing required column" in e.message


@pytest.mark.parametrize(
    ("column", "values", "fragment"),
    [
        ("seq", pa.array(["1"]), "column has type string; expected an integer column"),
        ("seq", pa.array([1.0]), "expected an integer column"),
        ("time", pa.array(["x"]), "expected a numeric column"),
        ("msg", pa.array([1]), "expected a string column"),
        ("deps", pa.array([[1]]), "expected a list-of-strings column"),
        ("kind", pa.array([True]), "expected a string column"),
    ],
)
def test_parquet_wrong_column_type(tmp_path, column, values, fragment):
    cols = {"trace": ["t"], "process": ["p"], "kind": ["send"], "msg": ["m"]}
    cols[column] = values
    path = _parquet(tmp_path, cols)
    with pytest.raises(TraceFormatError) as ei:
        TraceReader(path, keep_going=True)
    assert ei.value.field == column
    assert fragment in ei.value.message


def test_parquet_unknown_column(tmp_path):
    path = _parquet(tmp_path, dict(GOOD_COLS, colour=["r"] * 4))
    e = _error(path)
    assert e.field == "colour" and "unknown column" in e.message


def test_parquet_null_in_required_column(tmp_path):
    path = _parquet(tmp_path, dict(GOOD_COLS, process=["p", None, "q", None]))
    e = _error(path)
    assert (e.location.row, e.location.line, e.field) == (1, None, "process")
    assert e.message == "null in a required column"
    assert str(e) == f"{path}: row 1: field 'process': null in a required column"
    reader = TraceReader(path, keep_going=True)
    table = unify_tables([b.table for b in reader])
    assert [r.location.row for r in reader.rejected] == [1, 3]
    assert reader.accepted == table.num_rows == 2
    assert np.concatenate([b.lines for b in TraceReader(path, keep_going=True)]).tolist() == [
        0, 2]


@pytest.mark.parametrize(
    ("change", "row", "field", "fragment"),
    [
        ({"kind": ["send", "recv", "crash", "jion"]}, 3, "kind", "'jion' is not one of"),
        ({"msg": ["m", "m", "m", None]}, 2, "msg", "not allowed for kind 'crash'"),
        ({"msg": ["m", None, None, None]}, 1, "msg", "missing, required for kind 'recv'"),
        ({"trace": ["t", "", "t", "t"]}, 1, "trace", "empty string"),
        ({"seq": pa.array([0, 1, -3, 2], pa.int32())}, 2, "seq", "must be >= 0, got -3"),
        ({"seq": pa.array([0, 2**64 - 1, 1, 2], pa.uint64())}, 1, "seq", "too large"),
        ({"time": [0.0, math.nan, 1.0, 2.0]}, 1, "time", "not a finite number"),
        ({"deps": [["a", None], None, None, None]}, 0, "deps",
         "item 1: expected string, got null"),
        ({"deps": [None, [], None, None]}, 1, "deps", "not allowed for kind 'recv'"),
    ],
)
def test_parquet_bad_row(tmp_path, change, row, field, fragment):
    path = _parquet(tmp_path, dict(GOOD_COLS, **change))
    e = _error(path)
    assert (e.location.row, e.field) == (row, field)
    assert fragment in e.message
    reader = TraceReader(path, keep_going=True)
    assert sum(len(b) for b in reader) == 3
    assert reader.accepted + len(reader.rejected) == 4


def test_parquet_bad_rows_across_batches(tmp_path):
    n = 1000
    kinds = ["join"] * n
    for i in (5, 499, 500, 999):
        kinds[i] = "nope"
    path = _parquet(tmp_path, {"trace": ["t"] * n, "process": ["p"] * n, "kind": kinds,
                               "seq": list(range(n))})
    reader = TraceReader(path, keep_going=True, batch_rows=100)
    batches = list(reader)
    rows = np.concatenate([b.lines for b in batches])
    seqs = np.concatenate([b.table.column("seq").to_numpy() for b in batches])
    assert [r.location.row for r in reader.rejected] == [5, 499, 500, 999]
    assert rows.tolist() == seqs.tolist() == [i for i in range(n) if i not in (5, 499, 500, 999)]
    assert batches[0].location(5).row == 6


@pytest.mark.parametrize(
    ("meta", "field", "fragment"),
    [
        ({b"tomkit.format": b"tomkit-trace", b"tomkit.version": b"2"}, "tomkit.version",
         "unsupported format version"),
        ({b"tomkit.format": b"nope", b"tomkit.version": b"1"}, "tomkit.format",
         "not a tomkit trace"),
        ({b"tomkit.format": b"tomkit-trace", b"tomkit.version": b"1",
          b"tomkit.grouped": b"maybe"}, "tomkit.grouped", "expected true or false"),
    ],
)
def test_parquet_bad_metadata(tmp_path, meta, field, fragment):
    path = _parquet(tmp_path, GOOD_COLS, meta=meta)
    with pytest.raises(TraceFormatError) as ei:
        TraceReader(path)
    assert ei.value.field == field
    assert fragment in ei.value.message


def test_parquet_metadata_read(tmp_path):
    path = _parquet(tmp_path, GOOD_COLS, meta=parquet_metadata(False))
    assert TraceReader(path).info.grouped is False


def test_parquet_not_parquet_and_corrupt(tmp_path):
    path = tmp_path / "t.parquet"
    path.write_text("hello, this is not a Parquet file\n")
    e = _error(path)
    assert e.message.startswith("cannot read the Parquet file: ")
    assert "magic bytes" in e.message
    good = _parquet(tmp_path, GOOD_COLS, name="good.parquet")
    data = good.read_bytes()
    path.write_bytes(data[: len(data) - 20])
    assert "cannot read the Parquet file" in _error(path).message
    # page data destroyed, footer intact: found while reading, no other exception type
    n = 20_000
    big = tmp_path / "big.parquet"
    pq.write_table(pa.table({"trace": [f"t{i}" for i in range(n)], "process": ["p"] * n,
                             "kind": ["join"] * n}), big, compression="zstd")
    data = bytearray(big.read_bytes())
    data[100: len(data) // 2] = b"\xff" * (len(data) // 2 - 100)
    big.write_bytes(bytes(data))
    e = _error(big)
    assert "Parquet" in e.message


def test_parquet_empty(tmp_path):
    path = _parquet(tmp_path, {"trace": pa.array([], pa.string()),
                               "process": pa.array([], pa.string()),
                               "kind": pa.array([], pa.string())})
    with pytest.raises(TraceFormatError, match="no records"):
        TraceReader(path)


# --------------------------------------------------------------------------
# The exact validator agrees with the JSON Schema
# --------------------------------------------------------------------------

any_json = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-5, 2**64), st.floats(allow_nan=False),
              st.text(max_size=3), st.sampled_from(KINDS)),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.text(max_size=3), inner, max_size=3)),
    max_leaves=6,
)
field_value = st.one_of(
    st.sampled_from(["", "a", "send", "view", -1, 0, 1.0, 1.5, 2**63, True, None, [], ["a"],
                     [""], [1], {}, math.inf]),
    any_json,
)


@st.composite
def near_records(draw):
    rec = {}
    kind = draw(st.one_of(st.sampled_from([*KINDS, "bogus", 1]), field_value))
    for name in ["trace", "process", "kind", "msg", "deps", "view", "members", "time", "seq",
                 "x_a", "other"]:
        if draw(st.integers(0, 4)) == 0:
            continue
        if name in ("trace", "process") and draw(st.booleans()):
            rec[name] = "t"
        elif name == "kind":
            rec[name] = kind
        elif name in ("msg", "view") and draw(st.booleans()):
            rec[name] = "m"
        elif name in ("deps", "members") and draw(st.booleans()):
            rec[name] = ["a"]
        elif name == "other" and draw(st.booleans()):
            continue
        else:
            rec[name] = draw(field_value)
    return rec


@settings(max_examples=1500, deadline=None)
@given(near_records())
def test_quick_predicate_agrees_with_json_schema(rec):
    from jsonschema import Draft202012Validator

    schema_ok = Draft202012Validator(json_schema()).is_valid(rec)
    in_range = not (
        (type(rec.get("seq")) in (int, float) and rec["seq"] > 2**63 - 1)
        or (type(rec.get("time")) is float and not math.isfinite(rec["time"]))
    )
    expected = schema_ok and in_range
    assert _quick_ok(rec) == expected
    problem = record_problem(rec)
    assert (problem is None) == expected
    if problem is not None:
        assert problem[1] != "record rejected by the trace format"


# --------------------------------------------------------------------------
# Fast path vs exact path, on random corrupted files
# --------------------------------------------------------------------------

CORRUPTIONS = [
    "none", "none", "none", "none", "wrong_type", "missing", "bad_kind", "number_id",
    "null_value", "unknown_field", "x_null", "empty", "neg_seq", "deps_not_send", "nan",
    "dup_key", "blank", "ws_line", "spaces", "crlf", "two_objects", "split", "truncate",
    "not_object", "bad_utf8", "surrogate", "big_number", "int_literal_float", "seq_float",
    "x_timestamp", "x_mixed", "x_object", "x_nan", "header_again", "escaped_key",
    "bom", "time_big_int", "split_after_object", "two_objects",
]


@st.composite
def corrupted_file(draw):
    n = draw(st.integers(1, 40))
    out: list[bytes] = []
    for i in range(n):
        kind = draw(st.sampled_from(["send", "recv", "deliver", "view", "crash", "join"]))
        rec: dict = {"trace": draw(st.sampled_from(["a", "b"])), "process": f"p{i % 3}",
                     "kind": kind}
        if kind in ("send", "recv", "deliver"):
            rec["msg"] = f"m{i}"
        if kind == "send":
            rec["deps"] = [f"m{j}" for j in range(i % 3)]
        if kind == "view":
            rec["view"] = f"v{i}"
            rec["members"] = ["p0", "p1"]
        rec["time"] = draw(st.floats(0, 1e6))
        rec["seq"] = i
        if draw(st.booleans()):
            rec["x_k"] = i
        how = draw(st.sampled_from(CORRUPTIONS))
        line: str | bytes
        if how == "wrong_type":
            field = draw(st.sampled_from(["trace", "process", "kind", "msg", "time", "seq",
                                          "deps"]))
            rec[field] = draw(st.sampled_from([5, 1.5, True, [], {}, "s", ["x", 2], 1.0]))
        elif how == "missing":
            rec.pop(draw(st.sampled_from(sorted(rec))))
        elif how == "bad_kind":
            rec["kind"] = draw(st.sampled_from(["delvier", "", "SEND", 7]))
        elif how == "number_id":
            rec[draw(st.sampled_from(["trace", "process", "msg"]))] = draw(
                st.integers(0, 10**6))
        elif how == "null_value":
            rec[draw(st.sampled_from(["msg", "time", "seq", "deps", "view"]))] = None
        elif how == "unknown_field":
            rec["colour"] = "red"
        elif how == "x_null":
            rec["x_k"] = None
        elif how == "empty":
            rec[draw(st.sampled_from(["trace", "process"]))] = ""
        elif how == "neg_seq":
            rec["seq"] = -draw(st.integers(1, 5))
        elif how == "deps_not_send":
            rec["deps"] = ["m0"]
        elif how == "x_timestamp":
            rec["x_when"] = "2021-03-04T05:06:07"
        elif how == "x_mixed":
            rec["x_k"] = draw(st.sampled_from(["s", 1.5, True, [1], 2**70]))
        elif how == "x_object":
            rec["x_o"] = {"a": [1, None]}
        elif how == "seq_float":
            rec["seq"] = float(i)
        line = json.dumps(rec, separators=(",", ":"))
        if how == "nan":
            line = line[:-1] + ',"x_n":NaN}' if draw(st.booleans()) else \
                line.replace('"time":', '"time":NaN,"x_t":', 1)
        elif how == "x_nan":
            line = line[:-1] + ',"x_f":Infinity}'
        elif how == "dup_key":
            line = line[:-1] + ',"trace":"c"}'
        elif how == "blank":
            out.append(b"")
        elif how == "ws_line":
            out.append(b" \t ")
        elif how == "spaces":
            line = " " + line + "  "
        elif how == "crlf":
            line = line + "\r"
        elif how == "two_objects":
            line = line + line
        elif how == "split":
            cut = line.index(",") + 1
            line = line[:cut] + "\n" + line[cut:]
        elif how == "truncate":
            line = line[: draw(st.integers(1, len(line) - 1))]
        elif how == "not_object":
            line = draw(st.sampled_from(["[1]", "3", '"x"', "null", "true"]))
        elif how == "surrogate":
            line = line.replace('"process":"', '"process":"\\ud800', 1)
        elif how == "big_number":
            line = line.replace('"time":', '"time":1' + "0" * 400 + ',"x_t":', 1)
        elif how == "int_literal_float":
            line = line.replace(f'"seq":{i}', f'"seq":{i}.0', 1) if f'"seq":{i}' in line \
                else line
        elif how == "header_again":
            line = '{"format":"tomkit-trace","version":1}'
        elif how == "escaped_key":
            line = line.replace('"trace"', '"tr\\u0061ce"', 1)
        elif how == "split_after_object":
            # a line ending in "}" that does not end the record
            line = '{"x_o":{"a":1}' + "\n" * draw(st.integers(1, 2)) + "," + line[1:]
        elif how == "bom":
            line = "\ufeff" + line
        elif how == "time_big_int":
            line = line.replace('"time":', f'"time":{draw(st.integers(2**53, 2**80))},"x_t":', 1)
        data = line.encode("utf-8")
        if how == "bad_utf8":
            data = data.replace(b'"p', b'"\xc3(p', 1)
        out.append(data)
    header = draw(st.sampled_from([b"", b'{"format":"tomkit-trace","version":1}\n']))
    trailing = draw(st.sampled_from([b"\n", b""]))
    return header + b"\n".join(out) + trailing


def _reader_outcome(path, block_bytes):
    """(first error line or None, records) through TraceReader."""
    try:
        batches = list(TraceReader(path, block_bytes=block_bytes))
    except TraceFormatError as e:
        return e.location.line, e.field, None
    return None, None, table_to_records(unify_tables([b.table for b in batches]))


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=corrupted_file(), block_bytes=st.sampled_from([64, 300, 1000, 1 << 20]),
       gz=st.booleans())
def test_fast_path_agrees_with_exact_path(tmp_path, data, block_bytes, gz):
    name = "c.jsonl.gz" if gz else "c.jsonl"
    path = _write(tmp_path, data, name)
    try:
        exact = list(read_lines_exact(str(path), str(path)))
    except TraceFormatError:
        with pytest.raises(TraceFormatError):
            list(TraceReader(path))
        return
    problems = [(line, p) for line, _, p in exact if p is not None]
    # null top-level fields (x_ only, in good records) read back as absent
    good = [{k: v for k, v in rec.items() if v is not None} for _, rec, p in exact if p is None]
    if not exact:
        with pytest.raises(TraceFormatError, match="no records"):
            list(TraceReader(path, block_bytes=block_bytes))
        return
    line, field, records = _reader_outcome(path, block_bytes)
    if problems:
        assert line == problems[0][0]
        assert field == problems[0][1][0]
    else:
        assert line is None
        # same values, and never a changed value (x_ ints may become floats, equal)
        assert records == good
    reader = TraceReader(path, keep_going=True, block_bytes=block_bytes)
    kept = table_to_records(unify_tables([b.table for b in reader]))
    assert kept == good
    assert [e.location.line for e in reader.rejected] == [ln for ln, _ in problems]
    assert reader.accepted + len(reader.rejected) == len(exact)


def test_written_files_are_fast_path_clean(tmp_path):
    # the writer's output is exactly what the fast path takes
    path = tmp_path / "w.jsonl"
    recs = [{"trace": "t", "process": "p", "kind": "send", "msg": f"m{i}", "deps": [],
             "time": i * 0.5, "seq": i, "x_tag": "u" * (i % 3)} for i in range(300)]
    write_records(path, recs)
    exact = [rec for _, rec, p in read_lines_exact(str(path), str(path)) if p is None]
    assert exact == table_to_records(read_table(path))


# --------------------------------------------------------------------------
# pyarrow quirks the fast path must not let through (regressions)
# --------------------------------------------------------------------------


def test_quirk_timestamp_like_strings_stay_strings(tmp_path):
    # pyarrow infers timestamps from ISO strings; the value must stay the text
    lines = [json.dumps({"trace": "t", "process": "p", "kind": "join",
                         "x_when": f"2021-03-0{i % 9 + 1}T05:06:07"}) for i in range(50)]
    path = _write(tmp_path, "\n".join(lines) + "\n")
    table = read_table(path)
    assert table.schema.field("x_when").type == pa.string()
    assert table.column("x_when")[3].as_py() == "2021-03-04T05:06:07"


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ("\ufeff" + OK, None),  # pyarrow skips a BOM at the start of its input
        ('{"trace":"t","process":"p","kind":"crash","time":1' + "0" * 400 + "}", "time"),
        ('{"trace":"t","process":"p","kind":"crash","x_f":-Infinity}', None),
        ('{"trace":"t","process":"p","kind":"crash","seq":null}', "seq"),
        ('{"trace":"t","process":"p","kind":"send","msg":"m","deps":[null]}', "deps"),
        ('{"trace":"t","process":"p","kind":"crash","tr\\u0061ce":"u"}', "trace"),
    ],
)
def test_quirk_rejected_mid_file(tmp_path, line, field):
    # the bad line starts a block, where pyarrow's leniencies would apply
    text = OK + "\n" + line + "\n" + OK + "\n"
    path = _write(tmp_path, text)
    for block_bytes in (len(OK) + 1, 1 << 20):
        with pytest.raises(TraceFormatError) as ei:
            list(TraceReader(path, block_bytes=block_bytes))
        assert (ei.value.location.line, ei.value.field) == (2, field)


def test_quirk_seq_written_as_float_is_an_integer(tmp_path):
    # JSON Schema counts 1.0 as an integer; pyarrow refuses it; the exact path decides
    path = _write(tmp_path, '{"trace":"t","process":"p","kind":"crash","seq":3.0}\n')
    table = read_table(path)
    assert table.column("seq").to_pylist() == [3]
    assert table.schema.field("seq").type == pa.int64()
