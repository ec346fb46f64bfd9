"""The trace format's `real_time` field and `packet` kind: read, written, validated, carried.

`real_time` is optional (old traces stay valid and are written byte for byte as before);
`packet` is a record of one network message, with no `msg`; both reach the checker's
chunk and exact views, and every property but the rate check ignores packet records.
"""

from __future__ import annotations

import json

import numpy as np
import pyarrow.parquet as pq
import pytest

from tomkit.checker.chunk import PACKET, Chunk, Piece
from tomkit.checker.engine import check_paths, select
from tomkit.checker.properties import Options
from tomkit.checker.result import Verdict
from tomkit.traces.errors import TraceFormatError
from tomkit.traces.reader import TraceReader, read_records, read_table
from tomkit.traces.schema import ARROW_SCHEMA, FIELDS, KINDS, json_schema
from tomkit.traces.validate import record_problem
from tomkit.traces.writer import write_records

QOS = [
    {"trace": "q", "process": "p1", "kind": "send", "msg": "a", "time": 0.01,
     "real_time": 0.012, "x_slot": 0},
    {"trace": "q", "process": "p1", "kind": "packet", "time": 0.02, "real_time": 0.022,
     "x_slot": 0},
    {"trace": "q", "process": "p1", "kind": "packet", "time": 0.1, "real_time": 0.102,
     "x_slot": 0},
    {"trace": "q", "process": "p1", "kind": "deliver", "msg": "a", "time": 0.16,
     "real_time": 0.162},
    {"trace": "q", "process": "p2", "kind": "deliver", "msg": "a", "time": 0.15,
     "real_time": 0.148},
    {"trace": "q", "process": "p2", "kind": "packet", "time": 0.1, "real_time": 0.098,
     "x_slot": 0},
]


def test_schema_names_the_field_and_kind():
    assert "real_time" in FIELDS and "packet" in KINDS
    assert ARROW_SCHEMA.field("real_time").type == "double"
    schema = json_schema()
    assert schema["properties"]["real_time"]["type"] == "number"
    assert "packet" in schema["properties"]["kind"]["enum"]


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz", ".parquet"])
def test_round_trip(tmp_path, suffix):
    path = tmp_path / f"q{suffix}"
    write_records(path, QOS)
    back = list(read_records(path))
    assert back == [dict(r) for r in QOS]
    table = read_table(path)
    assert table.column("real_time").to_pylist() == [r["real_time"] for r in QOS]


def test_integer_real_time_is_written_as_float(tmp_path):
    path = tmp_path / "q.jsonl"
    write_records(path, [{"trace": "t", "process": "p", "kind": "crash", "real_time": 3}])
    line = path.read_text().splitlines()[-1]
    assert json.loads(line)["real_time"] == 3.0 and "3.0" in line


def test_old_traces_unchanged(tmp_path):
    """A trace without real_time has no real_time column in Parquet (as before the field),
    and reads with the column all null."""
    old = [{k: v for k, v in r.items() if k not in ("real_time",)} for r in QOS
           if r["kind"] != "packet"]
    path = tmp_path / "old.parquet"
    write_records(path, old)
    assert "real_time" not in pq.ParquetFile(path).schema_arrow.names
    table = read_table(path)
    assert table.column("real_time").null_count == len(old)


@pytest.mark.parametrize("rec, field, fragment", [
    ({"trace": "t", "process": "p", "kind": "crash", "real_time": "now"}, "real_time",
     "number"),
    ({"trace": "t", "process": "p", "kind": "packet", "msg": "m"}, "msg", ""),
    ({"trace": "t", "process": "p", "kind": "crash", "real_time": 10 ** 400}, "real_time",
     "64-bit float"),
])
def test_bad_values_name_the_field(tmp_path, rec, field, fragment):
    assert record_problem(rec)[0] == field
    path = tmp_path / "bad.jsonl"
    ok = {"trace": "t", "process": "p", "kind": "crash"}
    path.write_text("\n".join(json.dumps(x) for x in [ok, ok, rec]) + "\n")
    with pytest.raises(TraceFormatError) as ei:
        read_table(path)
    assert ei.value.field == field and ei.value.location.line == 3
    assert fragment in str(ei.value)


def test_packet_record_valid_everywhere():
    assert record_problem({"trace": "t", "process": "p", "kind": "packet"}) is None
    assert record_problem({"trace": "t", "process": "p", "kind": "packet", "time": 1.0,
                           "real_time": 1.5, "x_slot": 3}) is None


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_chunk_and_trace_carry_real_time_and_slot(tmp_path, suffix):
    path = tmp_path / f"q{suffix}"
    write_records(path, QOS)
    reader = TraceReader(path)
    pieces = [Piece(b.table, b.lines, b.source, b.fmt) for b in reader]
    c = Chunk.build(pieces)
    assert int((c.kind == PACKET).sum()) == 3
    assert sorted(c.real_time.tolist()) == sorted(r["real_time"] for r in QOS)
    assert np.isnan(c.slot).sum() == 2  # the deliveries carry no x_slot
    assert c.trace_has["packet"].all() and c.trace_has["real_time"].all()
    tr = c.trace(0)
    p1 = tr.events["p1"]
    assert [e.kind for e in p1] == ["send", "packet", "packet", "deliver"]
    assert p1[0].real_time == 0.012 and p1[0].slot == 0 and p1[3].slot is None


def test_packets_raise_no_false_alarm(tmp_path):
    """Every property of the catalogue on a clean trace with packet records: nothing is
    violated (packets are no sends, deliveries or views)."""
    from tomkit.checker.properties import properties

    path = tmp_path / "q.jsonl"
    recs = QOS + [{"trace": "q", "process": "p2", "kind": "packet", "time": 0.2}]
    write_records(path, recs)
    names = [n for n in properties()]
    rep = check_paths([path], select(names, Options(latency_bound=1.0)),
                      Options(latency_bound=1.0))
    bad = {n for n, c in rep.counts.items() if c[Verdict.VIOLATED]}
    assert not bad


def test_bulk_generator_fills_the_new_column():
    """The synthetic generator builds tables column by column: real_time is there, null."""
    from tomkit.traces.generate import bulk_table

    t = next(iter(bulk_table(3, n_processes=2, n_messages=2, seed=1)))
    assert t.schema == ARROW_SCHEMA and t.column("real_time").null_count == t.num_rows
