"""Round trips between JSON Lines, gzip JSON Lines and Parquet; streaming; writers."""

from __future__ import annotations

import gzip
import json
import math

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tomkit.traces.jsonl as jsonl_mod
from tomkit.traces import ARROW_SCHEMA, FIELDS
from tomkit.traces.errors import TraceFormatError
from tomkit.traces.reader import Batch, TraceReader, read_records, read_table
from tomkit.traces.schema import META_FORMAT, META_GROUPED, META_VERSION
from tomkit.traces.writer import TraceWriter, write_records, write_table

SUFFIXES = [".jsonl", ".jsonl.gz", ".parquet"]

RECORDS = [
    {"trace": "t1", "process": "p", "kind": "send", "msg": "m1", "deps": [], "time": 0.5,
     "seq": 0},
    {"trace": "t1", "process": "p", "kind": "send", "msg": "m2", "deps": ["m1"], "seq": 1,
     "x_note": "héllo"},
    {"trace": "t1", "process": "q", "kind": "recv", "msg": "m1", "time": 1.0, "seq": 0},
    {"trace": "t1", "process": "q", "kind": "deliver", "msg": "m1", "time": 2.0, "seq": 1},
    {"trace": "t1", "process": "q", "kind": "view", "view": "v1", "members": ["p", "q"],
     "x_meta": {"why": [1, None, "x"]}},
    {"trace": "t2", "process": "p", "kind": "join"},
    {"trace": "t2", "process": "p", "kind": "leave", "time": 3.25},
    {"trace": "t2", "process": "q", "kind": "crash", "seq": 9223372036854775807},
]


def _read_header(path) -> dict:
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.loads(f.readline())


# --------------------------------------------------------------------------
# Hand-written round trips
# --------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_round_trip_records(tmp_path, suffix):
    path = tmp_path / f"t{suffix}"
    assert write_records(path, RECORDS) == len(RECORDS)
    assert read_records(path) == RECORDS
    reader = TraceReader(path)
    assert reader.info.fmt == ("parquet" if suffix == ".parquet" else "jsonl")
    assert reader.info.version == 1
    assert reader.info.grouped is True
    assert reader.info.source == str(path)


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_batch_table_schema(tmp_path, suffix):
    path = tmp_path / f"t{suffix}"
    write_records(path, RECORDS)
    batches = list(TraceReader(path))
    for b in batches:
        assert isinstance(b, Batch)
        assert b.table.schema.names[:len(FIELDS)] == list(FIELDS)
        for i, field in enumerate(ARROW_SCHEMA):
            assert b.table.schema.field(i) == field
        assert all(n.startswith("x_") for n in b.table.schema.names[len(FIELDS):])
        assert b.lines.dtype == np.int64
    lines = np.concatenate([b.lines for b in batches])
    if suffix == ".parquet":
        assert lines.tolist() == list(range(len(RECORDS)))
        assert batches[0].location(1).row == 1
    else:
        # line 1 is the header
        assert lines.tolist() == list(range(2, len(RECORDS) + 2))
        assert batches[0].location(1).line == 3


def test_canonical_jsonl_text(tmp_path):
    path = tmp_path / "t.jsonl"
    write_records(path, [
        {"x_b": 1, "seq": 3, "kind": "send", "trace": "t", "deps": [], "msg": "m",
         "process": "p", "x_a": "é", "time": 2, "view": None},
    ], grouped=True)
    assert path.read_text(encoding="utf-8").splitlines() == [
        '{"format":"tomkit-trace","version":1,"grouped":true}',
        '{"trace":"t","process":"p","kind":"send","msg":"m","deps":[],"time":2.0,"seq":3,'
        '"x_a":"é","x_b":1}',
    ]


@pytest.mark.parametrize("src", SUFFIXES)
@pytest.mark.parametrize("dst", SUFFIXES)
def test_convert_between_formats(tmp_path, src, dst):
    a = tmp_path / f"a{src}"
    b = tmp_path / f"b{dst}"
    write_records(a, RECORDS)
    write_table(b, read_table(a))
    assert read_records(b) == RECORDS
    assert TraceReader(b).info.grouped is True
    # canonical: converting back gives the same JSON Lines text
    c1, c2 = tmp_path / "c1.jsonl", tmp_path / "c2.jsonl"
    write_records(c1, RECORDS)
    write_table(c2, read_table(b))
    assert c1.read_bytes() == c2.read_bytes()


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_x_types_survive(tmp_path, suffix):
    recs = [
        {"trace": "t", "process": "p", "kind": "crash", "x_i": 2**62 + 1, "x_b": True,
         "x_f": 0.1, "x_s": "2020-01-01", "x_l": [1, {"a": 2**70}], "x_mixed": 1},
        {"trace": "t", "process": "p", "kind": "crash", "x_i": -5, "x_b": False,
         "x_f": 1e300, "x_s": "x", "x_l": [], "x_mixed": "one"},
    ]
    path = tmp_path / f"t{suffix}"
    write_records(path, recs)
    back = read_records(path)
    assert back == recs
    assert type(back[0]["x_i"]) is int and type(back[0]["x_b"]) is bool
    assert type(back[1]["x_mixed"]) is str
    assert back[0]["x_l"][1]["a"] == 2**70


def test_parquet_metadata_written(tmp_path):
    path = tmp_path / "t.parquet"
    write_records(path, RECORDS)
    pf = pq.ParquetFile(path)
    meta = pf.metadata.metadata
    assert meta[META_FORMAT] == b"tomkit-trace"
    assert meta[META_VERSION] == b"1"
    assert meta[META_GROUPED] == b"true"
    assert pf.schema_arrow.names[:9] == list(FIELDS[:9])
    assert pf.metadata.row_group(0).column(0).compression.lower() in ("zstd", "snappy")


# --------------------------------------------------------------------------
# grouped
# --------------------------------------------------------------------------

UNGROUPED = [
    {"trace": "a", "process": "p", "kind": "join"},
    {"trace": "b", "process": "p", "kind": "join"},
    {"trace": "a", "process": "p", "kind": "leave"},
]


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_grouped_computed(tmp_path, suffix):
    p1, p2 = tmp_path / f"g{suffix}", tmp_path / f"u{suffix}"
    write_records(p1, UNGROUPED[:2])
    write_records(p2, UNGROUPED)
    assert TraceReader(p1).info.grouped is True
    assert TraceReader(p2).info.grouped is False
    assert read_records(p1) == UNGROUPED[:2]
    assert read_records(p2) == UNGROUPED
    if suffix != ".parquet":
        assert _read_header(p1)["grouped"] is True
        assert _read_header(p2)["grouped"] is False
    p3, p4 = tmp_path / f"tg{suffix}", tmp_path / f"tu{suffix}"
    write_table(p3, read_table(p1))
    write_table(p4, read_table(p2))
    assert TraceReader(p3).info.grouped is True
    assert TraceReader(p4).info.grouped is False


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_grouped_true_is_enforced(tmp_path, suffix):
    path = tmp_path / f"t{suffix}"
    with pytest.raises(ValueError, match=r"record 2: trace 'a' appears again"):
        with TraceWriter(path) as w:
            for r in UNGROUPED:
                w.write(r)
    assert not path.exists()  # a failed writer removes its partial file
    with pytest.raises(ValueError, match="appears again"):
        write_table(path, read_table_from(tmp_path, UNGROUPED), grouped=True)


def read_table_from(tmp_path, records) -> pa.Table:
    p = tmp_path / "src.jsonl"
    write_records(p, records)
    return read_table(p)


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_grouped_false_and_no_header(tmp_path, suffix):
    path = tmp_path / f"t{suffix}"
    write_records(path, UNGROUPED[:2], grouped=False)
    assert TraceReader(path).info.grouped is False
    if suffix == ".parquet":
        bare = tmp_path / "bare.parquet"
        pq.write_table(read_table(path).replace_schema_metadata(None), bare)
        assert pq.ParquetFile(bare).metadata.metadata.get(META_FORMAT) is None
    else:
        bare = tmp_path / "bare.jsonl"
        bare.write_text("\n".join(json.dumps(r) for r in UNGROUPED) + "\n")
    info = TraceReader(bare).info
    assert (info.version, info.grouped) == (1, None)


def test_writer_table_and_records_mixed(tmp_path):
    for suffix in SUFFIXES:
        path = tmp_path / f"m{suffix}"
        with TraceWriter(path, grouped=None) as w:
            w.write(RECORDS[0])
            schema = pa.schema(list(ARROW_SCHEMA) + [pa.field("x_note", pa.string())])
            w.write_table(pa.Table.from_pylist(RECORDS[1:4], schema=schema))
            for r in RECORDS[4:]:
                w.write(r)
        assert w.count == len(RECORDS)
        assert read_records(path) == RECORDS


def test_writer_accepts_other_arrow_types(tmp_path):
    table = pa.table({
        "trace": pa.array(["a", "a"]).dictionary_encode(),
        "process": pa.array(["p", "q"], pa.large_string()),
        "kind": pa.array(["send", "crash"]),
        "msg": pa.array(["m", None]),
        "deps": pa.array([["x"], None], pa.large_list(pa.large_string())),
        "seq": pa.array([1, 2], pa.int8()),
        "time": pa.array([1.5, 2.0], pa.float32()),
    })
    path = tmp_path / "t.parquet"
    assert write_table(path, table) == 2
    assert read_records(path) == [
        {"trace": "a", "process": "p", "kind": "send", "msg": "m", "deps": ["x"],
         "time": 1.5, "seq": 1},
        {"trace": "a", "process": "q", "kind": "crash", "time": 2.0, "seq": 2},
    ]
    assert read_table(path).schema.field("seq").type == pa.int64()


def test_writer_rejects_bad_record_with_index(tmp_path):
    path = tmp_path / "t.jsonl"
    with pytest.raises(TraceFormatError) as ei:
        write_records(path, [RECORDS[0], {"trace": "t", "process": "p", "kind": "crash",
                                          "msg": "m"}])
    e = ei.value
    assert (e.location.source, e.location.row, e.field) == (str(path), 1, "msg")
    assert "not allowed for kind 'crash'" in e.message
    with pytest.raises(TraceFormatError) as ei:
        write_table(tmp_path / "u.parquet", pa.table({
            "trace": ["a", "a", None], "process": ["p", "p", "p"],
            "kind": ["join", "join", "join"]}))
    assert (ei.value.location.row, ei.value.field) == (2, "trace")
    with pytest.raises(TraceFormatError, match="x_f"):
        write_records(tmp_path / "v.jsonl", [{"trace": "t", "process": "p", "kind": "join",
                                             "x_f": math.nan}])


def test_writer_unknown_suffix(tmp_path):
    with pytest.raises(ValueError, match="cannot tell the format"):
        TraceWriter(tmp_path / "t.csv")


def test_parquet_writer_row_groups(tmp_path, monkeypatch):
    import tomkit.traces.parquet as parquet_mod

    monkeypatch.setattr(parquet_mod, "ROW_GROUP_ROWS", 100)
    recs = [{"trace": "t", "process": "p", "kind": "join", "seq": i, "x_i": i}
            for i in range(250)]
    path = tmp_path / "t.parquet"
    write_records(path, recs)
    pf = pq.ParquetFile(path)
    assert pf.metadata.num_row_groups == 3
    assert pf.metadata.row_group(0).num_rows == 100
    assert read_records(path) == recs
    batches = list(TraceReader(path, batch_rows=64))
    assert max(len(b) for b in batches) == 64
    assert np.concatenate([b.lines for b in batches]).tolist() == list(range(250))


# --------------------------------------------------------------------------
# Hypothesis round trips
# --------------------------------------------------------------------------

ids = st.text(min_size=1, max_size=6)
json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**80), 2**80),
    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=5),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)
nested = st.one_of(
    st.lists(json_values, max_size=3), st.dictionaries(st.text(max_size=4), json_values,
                                                       max_size=3)
)


@st.composite
def valid_record(draw, traces=st.sampled_from(["a", "b", "ü-3", "trace 🙂", "42"])):
    kind = draw(st.sampled_from(["send", "recv", "deliver", "view", "crash", "join", "leave"]))
    rec = {"trace": draw(traces), "process": draw(ids), "kind": kind}
    if kind in ("send", "recv", "deliver"):
        rec["msg"] = draw(ids)
    if kind == "send" and draw(st.booleans()):
        rec["deps"] = draw(st.lists(ids, max_size=4))
    if kind == "view":
        rec["view"] = draw(ids)
        rec["members"] = draw(st.lists(ids, max_size=4))
    if draw(st.booleans()):
        rec["time"] = draw(st.one_of(
            st.floats(allow_nan=False, allow_infinity=False),
            st.integers(-(2**70), 2**70).map(float),
        ))
    if draw(st.booleans()):
        rec["seq"] = draw(st.one_of(st.integers(0, 100), st.integers(0, 2**63 - 1)))
    # extension fields: one type per name, as a real producer would write them
    for name, values in (
        ("x_s", st.text(max_size=8)),
        ("x_i", st.integers(-(2**63), 2**63 - 1)),
        ("x_f", st.floats(allow_nan=False, allow_infinity=False)),
        ("x_b", st.booleans()),
        ("x_j", nested),
    ):
        if draw(st.integers(0, 3)) == 0:
            rec[name] = draw(values)
    return rec


@settings(max_examples=examples(30), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(records=st.lists(valid_record(), min_size=1, max_size=25), group=st.booleans())
def test_hypothesis_round_trip(tmp_path, records, group):
    if group:
        records = sorted(records, key=lambda r: r["trace"])
    runs = [r["trace"] for i, r in enumerate(records)
            if i == 0 or records[i - 1]["trace"] != r["trace"]]
    grouped = len(runs) == len(set(runs))
    paths = {s: tmp_path / f"h{s}" for s in SUFFIXES}
    for suffix, path in paths.items():
        write_records(path, records)
        assert read_records(path) == records, suffix
        assert TraceReader(path).info.grouped is grouped
    # lossless both ways through every pair of formats, and canonical
    for a in SUFFIXES:
        for b in SUFFIXES:
            out = tmp_path / f"conv_{a[1:]}_{b[1:]}{b}"
            write_table(out, read_table(paths[a]))
            assert read_records(out) == records, (a, b)
            if b == ".jsonl" and a != ".jsonl":
                assert out.read_bytes() == paths[".jsonl"].read_bytes()
    # the types, not only the values, come back
    back = read_records(paths[".parquet"])
    for r, s in zip(records, back, strict=True):
        for k, v in r.items():
            if k != "x_j":
                assert type(s[k]) is type(v), k


# --------------------------------------------------------------------------
# Streaming
# --------------------------------------------------------------------------


def _messy_file(path, n: int, *, gz: bool = False) -> list[int]:
    """Records with blank lines, CRLF and spacing here and there; returns their lines."""
    rng = np.random.default_rng(7)
    out, lines = [], []
    out.append('{"format": "tomkit-trace", "version": 1, "grouped": false}')
    for i in range(n):
        r = rng.integers(0, 40)
        if r == 0:
            out.append("")
        elif r == 1:
            out.append("   \t")
        rec = {"trace": f"t{i % 3}", "process": f"p{i % 5}", "kind": "send",
               "msg": f"m{i}", "deps": [f"m{j}" for j in range(i % 3)], "time": i / 7,
               "seq": i}
        if i % 11 == 0:
            rec["x_k"] = i
        text = json.dumps(rec, separators=(",", ":"))
        if r == 2:
            text = "  " + text + " \r"
        out.append(text)
        lines.append(len(out))
    data = ("\n".join(out) + "\n").encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    return lines


@pytest.mark.parametrize("gz", [False, True])
def test_streaming_matches_whole_read(tmp_path, gz):
    path = tmp_path / ("s.jsonl.gz" if gz else "s.jsonl")
    expected_lines = _messy_file(path, 3000, gz=gz)
    whole = list(TraceReader(path))
    assert len(whole) == 1
    small = list(TraceReader(path, batch_rows=7, block_bytes=700))
    assert len(small) > 100
    assert all(len(b) <= 7 for b in small)
    lines = np.concatenate([b.lines for b in small])
    assert lines.tolist() == expected_lines
    assert whole[0].lines.tolist() == expected_lines
    t_small = read_table_batches(small)
    assert t_small.to_pylist() == whole[0].table.to_pylist()
    # every batch is tied to the right line: its msg id is m<i> for record i
    for b in small[:50] + small[-50:]:
        for i in range(len(b)):
            idx = expected_lines.index(int(b.lines[i]))
            assert b.table.column("msg")[i].as_py() == f"m{idx}"


def read_table_batches(batches) -> pa.Table:
    from tomkit.traces.validate import unify_tables

    return unify_tables([b.table for b in batches])


def test_clean_file_takes_the_fast_path(tmp_path, monkeypatch):
    path = tmp_path / "clean.jsonl"
    write_records(path, [dict(RECORDS[0], seq=i, msg=f"m{i}") for i in range(5000)])
    calls = []
    real = jsonl_mod._exact_block

    def spy(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(jsonl_mod, "_exact_block", spy)
    batches = list(TraceReader(path, block_bytes=4096))
    assert len(batches) > 20
    assert calls == []
    assert sum(len(b) for b in batches) == 5000
    # empty lines and CRLF stay on the fast path, with the right line numbers
    text = path.read_text().splitlines()
    text.insert(2500, "")
    text.insert(10, "")
    path.write_bytes(("\r\n".join(text) + "\r\n").encode())
    batches = list(TraceReader(path, block_bytes=4096))
    lines = np.concatenate([b.lines for b in batches]).tolist()
    assert lines == [n for n in range(2, 5004) if n not in (11, 2502)]
    assert calls == []
    # a line of spaces sends just its block to the exact path
    text.insert(4000, "   ")
    path.write_text("\n".join(text) + "\n")
    batches = list(TraceReader(path, block_bytes=4096))
    assert sum(len(b) for b in batches) == 5000
    assert len(calls) == 1
    assert np.concatenate([b.lines for b in batches]).tolist() == [
        n for n in range(2, 5005) if n not in (11, 2502, 4001)]


def test_huge_line_longer_than_block(tmp_path):
    path = tmp_path / "t.jsonl"
    big = "x" * 50_000
    recs = [RECORDS[0], dict(RECORDS[5], x_big=big), RECORDS[6]]
    write_records(path, recs)
    batches = list(TraceReader(path, block_bytes=1024))
    assert np.concatenate([b.lines for b in batches]).tolist() == [2, 3, 4]
    assert read_records(path) == recs


def test_no_trailing_newline_and_bom(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + b"\n".join(json.dumps(r).encode() for r in RECORDS))
    assert read_records(path) == RECORDS
    lines = np.concatenate([b.lines for b in TraceReader(path)])
    assert lines.tolist() == list(range(1, len(RECORDS) + 1))


def test_multi_member_gzip(tmp_path):
    path = tmp_path / "t.jsonl.gz"
    half = len(RECORDS) // 2
    parts = [
        "\n".join(json.dumps(r) for r in RECORDS[:half]) + "\n",
        "\n".join(json.dumps(r) for r in RECORDS[half:]) + "\n",
    ]
    path.write_bytes(gzip.compress(parts[0].encode()) + gzip.compress(parts[1].encode()))
    assert read_records(path) == RECORDS


def test_gzip_detected_by_content(tmp_path):
    path = tmp_path / "trace.data"
    path.write_bytes(gzip.compress("\n".join(json.dumps(r) for r in RECORDS).encode()))
    assert read_records(path) == RECORDS
    ppath = tmp_path / "trace.bin"
    write_records(tmp_path / "x.parquet", RECORDS)
    ppath.write_bytes((tmp_path / "x.parquet").read_bytes())
    assert TraceReader(ppath).info.fmt == "parquet"
    assert read_records(ppath) == RECORDS


def test_line_longer_than_pyarrow_chunk(tmp_path, monkeypatch):
    monkeypatch.setattr(jsonl_mod, "PARSE_BLOCK_SIZE", 4096)
    calls = []
    real = jsonl_mod._exact_block
    monkeypatch.setattr(jsonl_mod, "_exact_block", lambda *a, **k: calls.append(1) or real(*a, **k))
    path = tmp_path / "t.jsonl"
    recs = [dict(RECORDS[5], x_big="y" * 10_000), RECORDS[6]]
    write_records(path, recs)
    assert read_records(path) == recs
    assert calls == []


def test_table_with_unwritable_extension(tmp_path):
    import datetime

    table = pa.table({
        "trace": ["t", "t"], "process": ["p", "p"], "kind": ["join", "leave"],
        "x_when": pa.array([None, datetime.datetime(2020, 1, 1)], pa.timestamp("s")),
        "x_f": pa.array([1.0, 2.0]),
    })
    with pytest.raises(TraceFormatError) as ei:
        write_table(tmp_path / "t.jsonl", table)
    assert (ei.value.location.row, ei.value.field) == (1, "x_when")
    assert not (tmp_path / "t.jsonl").exists()
    # Parquet carries any Arrow type in x_ columns
    write_table(tmp_path / "t.parquet", table)
    assert pa.types.is_timestamp(read_table(tmp_path / "t.parquet").column("x_when").type)
    bad = table.set_column(4, "x_f", pa.array([1.0, math.inf]))
    with pytest.raises(TraceFormatError) as ei:
        write_table(tmp_path / "u.parquet", bad)
    assert (ei.value.location.row, ei.value.field) == (1, "x_f")


def test_vectorized_jsonl_encoding_matches_record_encoding(tmp_path, monkeypatch):
    monkeypatch.setattr(jsonl_mod, "ENCODE_ROWS", 3)
    odd = ['q"uote', "back\\slash", "tab\there", "nl\nx", "\x00\x1f", "é✓🙂", "\u2028", "/"]
    recs = []
    for i, s in enumerate(odd * 2):
        recs.append({"trace": s, "process": f"p{i}", "kind": "send", "msg": s + str(i),
                     "deps": [s, "m"], "time": [0.1, 1e-7, 1e16, -0.0, 5e-324][i % 5],
                     "seq": i, "x_s": s, "x_b": i % 2 == 0, "x_i": -i, "x_f": i / 3,
                     "x_j": {"k": [s, None, 1.5]}})
    recs.append({"trace": "v", "process": "p", "kind": "view", "view": "v1",
                 "members": []})
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    write_records(a, recs, grouped=False)
    write_table(b, read_table(a), grouped=False)
    assert a.read_bytes() == b.read_bytes()
    assert read_records(b) == recs
