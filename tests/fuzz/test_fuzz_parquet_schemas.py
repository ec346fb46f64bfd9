"""The input fuzzer's Parquet schemas (fuzz/parquet_schemas.py): every Arrow type is
drawn, for core and x_ columns, nested and dictionary-encoded; the readers give every
such file a verdict or an error naming it; and the pool keeps a hung or dying input to
itself (fuzz/inputs.py)."""

from __future__ import annotations

import io
import os
import time
from collections import Counter

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from tomkit.fuzz import inputs
from tomkit.fuzz.inputs import FAILURES, fuzz, run_one, seeds
from tomkit.fuzz.parquet_schemas import PRIMITIVES, convert, draw_type, retype_parquet
from tomkit.traces.schema import ARROW_SCHEMA


def _kinds(t: pa.DataType, out: set[str]) -> None:
    """The type's constructors, at every depth."""
    if pa.types.is_dictionary(t):
        out.add("dictionary")
        _kinds(t.value_type, out)
        return
    nested = {"list": pa.types.is_list, "large_list": pa.types.is_large_list,
              "fixed_size_list": pa.types.is_fixed_size_list,
              "list_view": pa.types.is_list_view,
              "large_list_view": pa.types.is_large_list_view,
              "struct": pa.types.is_struct, "map": pa.types.is_map}
    for name, test in nested.items():
        if test(t):
            out.add(name)
            for i in range(t.num_fields):
                _kinds(t.field(i).type, out)
            return
    out.add(str(t))


def test_draw_type_reaches_every_primitive_and_every_nesting():
    rng = np.random.default_rng(0)
    seen: set[str] = set()
    for _ in range(3000):
        _kinds(draw_type(rng), seen)
    assert {str(t) for t in PRIMITIVES} <= seen
    assert {"dictionary", "list", "large_list", "fixed_size_list", "list_view",
            "large_list_view", "struct", "map"} <= seen


def test_retyped_files_give_core_columns_foreign_types_and_add_x_columns():
    rng = np.random.default_rng(1)
    pool = [d for s, d in seeds(0) if s == ".parquet"]
    foreign: Counter = Counter()
    extra = 0
    for k in range(80):
        schema = pq.read_schema(io.BytesIO(retype_parquet(rng, pool[k % len(pool)])))
        for f in schema:
            if f.name in ARROW_SCHEMA.names and f.type != ARROW_SCHEMA.field(f.name).type:
                foreign[f.name] += 1
            extra += f.name.startswith("x_")
    assert set(foreign) >= set(ARROW_SCHEMA.names) - {"real_time"}  # every core column
    assert extra > 0


def test_a_seeded_slice_of_retyped_files_gets_verdicts_and_named_errors(tmp_path):
    rng = np.random.default_rng(7)
    pool = [d for s, d in seeds(0) if s == ".parquet"]
    kinds: Counter = Counter()
    for k in range(60):
        path = tmp_path / f"in{k}.parquet"
        path.write_bytes(retype_parquet(rng, pool[k % len(pool)]))
        for o in run_one(str(path), ".parquet"):
            assert o.kind not in FAILURES, (path, pq.read_schema(path), o.detail)
            kinds[o.kind] += 1
    assert kinds["verdict"] > 0 and kinds["error"] > 0


def _sleepy(path, suffix):
    if suffix == ".jsonl.gz":
        time.sleep(30)
    return [inputs.Outcome("verdict")]


def _dying(path, suffix):
    if suffix == ".jsonl.gz":
        os._exit(3)  # as a segmentation fault ends a worker
    return [inputs.Outcome("verdict")]


def test_a_hung_input_is_a_hang_and_the_others_still_get_their_outcomes(monkeypatch,
                                                                         tmp_path):
    # the pool forks its workers, which inherit the patched run_one
    monkeypatch.setattr(inputs, "run_one", _sleepy)
    counts = fuzz(12, seed=2, out=str(tmp_path / "fails"), workers=2, timeout=2)
    assert counts["inputs"] == 12
    assert counts["hang"] > 0 and counts["verdict"] > 0
    assert counts["hang"] + counts["verdict"] == 12
    assert len(list((tmp_path / "fails").glob("*.jsonl.gz"))) == counts["hang"]


def test_a_dying_worker_fails_its_own_input_only(monkeypatch, tmp_path):
    monkeypatch.setattr(inputs, "run_one", _dying)
    counts = fuzz(24, seed=2, out=str(tmp_path / "fails"), workers=2, timeout=60)
    assert counts["crash"] > 0 and counts["verdict"] > 0
    assert counts["crash"] + counts["verdict"] == 24
    kept = list((tmp_path / "fails").glob("*.txt"))
    assert all("the worker process died" in p.read_text() for p in kept)


def test_a_conversion_arrow_gets_wrong_is_not_used():
    """pyarrow 26 casts a list view holding a null to a list with non-monotonic offsets
    (an invalid array; pc.if_else on it killed the fuzzer's own process): the schema
    mutation gives only valid arrays, or none."""
    views = pa.array([[1.0, 2.0], None, [3.0]], pa.large_list_view(pa.float32()))
    got = convert(pa.chunked_array([views]), pa.list_(pa.float64()))
    assert got is None or got.validate(full=True) is None
