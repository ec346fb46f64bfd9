"""Inputs the reader fuzzer (fuzz/inputs.py, issue 30's campaign) found crashing the
readers, each rebuilt by hand: a clear error or a verdict, every record accounted for."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

from tomkit.checker.engine import check_paths, select
from tomkit.checker.properties import Options
from tomkit.traces.errors import TraceFormatError
from tomkit.traces.schema import parquet_metadata
from tomkit.traces.validate import ok_mask
from tomkit.traces.writer import write_records

RECORDS = [
    {"trace": "t", "process": "p0", "kind": "send", "msg": "a", "deps": [], "time": 0.0},
    {"trace": "t", "process": "p0", "kind": "deliver", "msg": "a", "time": 1.0},
    {"trace": "t", "process": "p0", "kind": "send", "msg": "b", "deps": ["a"], "time": 2.0},
    {"trace": "t", "process": "p0", "kind": "deliver", "msg": "b", "time": 3.0},
]


def test_a_bad_row_beside_a_list_of_binary_views_is_rejected_alone(tmp_path):
    """Seed 4002, input 18,655: `deps` as large_list<binary_view>, and a row whose bytes
    are not UTF-8; dropping that row took the table, and Arrow has no take for views."""
    plain = tmp_path / "plain.parquet"
    write_records(plain, RECORDS)
    table = pq.read_table(plain)
    deps = pa.array(table.column("deps").to_pylist(), pa.large_list(pa.binary()))
    deps = deps.cast(pa.large_list(pa.binary_view()))
    # a string column whose bytes are not all UTF-8 (Arrow builds it from its buffers
    # unchecked; the file's damage did the same)
    procs = pa.array([p.encode() for p in table.column("process").to_pylist()])
    data = bytearray(procs.buffers()[2].to_pybytes())
    data[-1] = 0xFF
    procs = pa.Array.from_buffers(pa.string(), len(procs),
                                  [None, procs.buffers()[1], pa.py_buffer(bytes(data))])
    table = table.set_column(table.column_names.index("deps"), "deps", deps)
    table = table.set_column(table.column_names.index("process"), "process", procs)
    path = tmp_path / "views.parquet"
    pq.write_table(table.replace_schema_metadata(parquet_metadata(True)), path)
    assert pq.read_schema(path).field("deps").type == pa.large_list(pa.binary_view())
    props = select(["integrity"], Options())
    try:
        check_paths([str(path)], props, Options())
        raise AssertionError("a row that is not UTF-8 read without an error")
    except TraceFormatError as e:
        assert str(e).startswith(str(path)) and "process" in str(e)
    rep = check_paths([str(path)], props, Options(), keep_going=True)
    assert (rep.n_accepted, rep.n_rejected) == (3, 1)


def test_a_null_list_that_owns_values_does_not_shift_the_items_rows():
    """Seed 4002, input 68,634: a damaged file's null `deps` list still owns values, which
    flatten skips and list_parent_indices counts; the bad item's row was looked up in
    the wrong array."""
    deps = pa.ListArray.from_arrays(pa.array([0, 1, 3, 4, 4], pa.int32()),
                                    pa.array(["a", "x", "y", ""]),
                                    mask=pa.array([False, True, False, False]))
    assert deps.flatten().to_pylist() == ["a", ""]
    table = pa.table({
        "trace": ["t"] * 4, "process": ["p0"] * 4,
        "kind": ["send", "deliver", "send", "send"], "msg": ["a", "a", "b", "c"],
        "deps": deps, "view": pa.nulls(4, pa.string()),
        "members": pa.nulls(4, pa.list_(pa.string())), "time": [0.0, 1.0, 2.0, 3.0],
        "real_time": pa.nulls(4, pa.float64()),
        "seq": pa.nulls(4, pa.int64()),
    })
    assert ok_mask(table).tolist() == [True, True, False, True]  # row 2's item is empty
