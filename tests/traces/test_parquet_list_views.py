"""A list column stored as a list view reads by its views, not by its buffers' layout:
views out of order, and a null whose view still points into the values (pyarrow 26's cast
of such an array to a list writes invalid offsets, so the reader must not rely on it)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

from tomkit.traces.reader import read_records
from tomkit.traces.schema import ARROW_SCHEMA, parquet_metadata
from tomkit.traces.writer import write_records

RECORDS = [
    {"trace": "t", "process": "p0", "kind": "send", "msg": "a", "deps": [], "time": 0.0},
    {"trace": "t", "process": "p0", "kind": "send", "msg": "b", "deps": ["a"], "time": 1.0},
    {"trace": "t", "process": "p0", "kind": "send", "msg": "c", "deps": ["a", "b"],
     "time": 2.0},
]


def test_deps_as_out_of_order_list_views_with_a_null_read_right(tmp_path):
    plain = tmp_path / "plain.parquet"
    write_records(plain, RECORDS)
    want = read_records(plain)
    table = pq.read_table(plain)
    deps = table.column("deps").combine_chunks()
    assert deps.to_pylist()[:3] == [[], ["a"], ["a", "b"]]
    # the values laid out backwards: "b", "a", then the views; row 0 is empty, and a
    # null row (made below) keeps a view of size 1 into the values
    values = pa.array(["b", "a", "a", "b"], pa.large_string())
    n = len(deps)
    offsets = [0] * n
    sizes = [0] * n
    mask = [False] * n
    for i, v in enumerate(deps.to_pylist()):
        if v == ["a"]:
            offsets[i], sizes[i] = 1, 1
        elif v == ["a", "b"]:
            offsets[i], sizes[i] = 2, 2
        elif v is None:
            mask[i] = True
            offsets[i], sizes[i] = 0, 1
    views = pa.LargeListViewArray.from_arrays(pa.array(offsets, pa.int64()),
                                              pa.array(sizes, pa.int64()), values,
                                              mask=pa.array(mask))
    views.validate(full=True)
    assert views.to_pylist() == deps.to_pylist()
    path = tmp_path / "views.parquet"
    table = table.set_column(table.column_names.index("deps"), "deps", views)
    pq.write_table(table.replace_schema_metadata(parquet_metadata(True)), path)
    assert pq.read_schema(path).field("deps").type != ARROW_SCHEMA.field("deps").type
    assert read_records(path) == want
