"""TraceReader(dictionary=True): Parquet string columns handed out dictionary-encoded, with
the same values and the same errors as the plain read."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tomkit.traces.errors import TraceFormatError
from tomkit.traces.generate import clean_trace
from tomkit.traces.reader import TraceReader, read_table
from tomkit.traces.schema import ARROW_SCHEMA
from tomkit.traces.writer import write_records


def batches(path, **kw):
    return [b.table for b in TraceReader(path, batch_rows=50, **kw)]


def test_same_values_as_plain_read(tmp_path):
    path = tmp_path / "t.parquet"
    write_records(path, clean_trace("a", seed=1) + clean_trace("b", seed=2, views=True))
    plain = pa.concat_tables(batches(path))
    enc = batches(path, dictionary=True)
    assert all(pa.types.is_dictionary(t.schema.field("msg").type) for t in enc)
    decoded = pa.concat_tables([t.cast(ARROW_SCHEMA) for t in enc])
    assert decoded.equals(plain)
    assert read_table(path).equals(plain)  # the default read stays plain


def test_errors_are_the_same(tmp_path):
    recs = clean_trace("a", seed=1, n_messages=5)
    recs[7] = dict(recs[7], process="")
    path = tmp_path / "bad.parquet"
    pq.write_table(pa.Table.from_pylist(recs, schema=ARROW_SCHEMA), path)
    errors = []
    for kw in ({}, {"dictionary": True}):
        with pytest.raises(TraceFormatError) as e:
            batches(path, **kw)
        errors.append(str(e.value))
    assert errors[0] == errors[1] and "row 7" in errors[0] and "'process'" in errors[0]
    kept = [TraceReader(path, keep_going=True, dictionary=True)]
    tables = [b.table for b in kept[0]]
    assert sum(t.num_rows for t in tables) == len(recs) - 1 and len(kept[0].rejected) == 1
