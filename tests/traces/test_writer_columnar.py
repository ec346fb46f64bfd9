"""write_records writes a list column by column (TraceWriter.write_many): the same bytes
and the same errors as write() record by record, which stays the reference."""

from __future__ import annotations

import math
import os

import numpy as np
import pyarrow as pa
import pytest

from tomkit.traces.errors import TraceFormatError
from tomkit.traces.jsonl import float_reprs
from tomkit.traces.validate import columnar_safe
from tomkit.traces.writer import TraceWriter, write_records


def _one_by_one(path: str, records: list, grouped: bool | None) -> int:
    with TraceWriter(path, grouped=grouped) as w:
        for r in records:
            w.write(r)
    return w.count


def _rec(i: int, **more: object) -> dict:
    r = {"trace": "t", "process": f"p{i % 3}", "kind": "recv", "msg": f"m{i}",
         "time": 0.001 * i + 1e-7}
    r.update(more)
    return r


def _varied() -> list[dict]:
    """Records of every kind of value the writer meets: x_ fields of each type, mixed
    ints and floats, ints beyond int64, nested values, None, text to escape, floats
    repr writes with an exponent or with .0, two traces."""
    out = [{"trace": "t", "process": "p0", "kind": "send", "msg": "m0", "deps": [],
            "time": 0.0, "x_dag_deps": []}]
    for i in range(1, 400):
        r = _rec(i)
        if i % 7 == 0:
            r["x_int"] = i
        if i % 11 == 0:
            r["x_mixed"] = i if i % 2 else i + 0.5
        if i % 13 == 0:
            r["x_nested"] = {"a": [1, 2.5, None, "é\"\\"], "b": {"c": True}}
        if i % 17 == 0:
            r["x_big"] = 2**70 + i
        if i % 5 == 0:
            r["x_flag"] = i % 2 == 0
        if i % 19 == 0:
            r["x_text"] = 'quote " back \\ line\n ünï'
        if i % 23 == 0:
            r["x_none"] = None
        if i % 31 == 0:  # two keys first met in one record, not in name order
            r["x_zeta"], r["x_alpha"] = i, str(i)
        if i % 29 == 0:
            r["x_float"] = [1e-5, 1e17, 3.0, -0.0, 123456789012.5, 0.1][i % 6]
        out.append(r)
    out.append({"trace": "t", "process": "p1", "kind": "deliver", "msg": "m3", "time": 5e-6})
    out.append({"trace": "t", "process": "p1", "kind": "crash", "time": 1e16})
    out.append({"trace": "u", "process": "p1", "kind": "view", "view": "v1",
                "members": ["p1", "p2"], "time": 2.0, "seq": 4})
    out.append({"trace": "u", "process": "p2", "kind": "send", "msg": "m9", "deps": ["m3"],
                "time": 7.25, "real_time": 7.5, "x_none": None})
    return out


def test_table_columns_in_first_seen_order():
    from tomkit.traces.validate import records_to_table

    recs = [_rec(0, x_z=None), _rec(1, x_b=1, x_a=2), _rec(2, x_z=3, x_c=None)]
    names = records_to_table(recs).column_names[-4:]
    assert names == ["x_z", "x_b", "x_a", "x_c"]
    assert records_to_table(recs, none_absent=True).column_names[-3:] == ["x_b", "x_a", "x_z"]


def _sim_records() -> list[dict]:
    from tomkit.model.sim import SimConfig, simulate

    return simulate(SimConfig(protocol="toto", n=4, messages=300, seed=3)).records


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz", ".parquet"])
@pytest.mark.parametrize("source", ["varied", "sim"])
def test_same_bytes_as_record_by_record(tmp_path, suffix, source):
    records = _varied() if source == "varied" else _sim_records()
    assert columnar_safe(records)
    a, b = str(tmp_path / f"a{suffix}"), str(tmp_path / f"b{suffix}")
    assert write_records(a, records, grouped=None) == _one_by_one(b, records, None)
    with open(a, "rb") as fa, open(b, "rb") as fb:
        assert fa.read() == fb.read()


def test_many_batches_and_a_fallback_batch(tmp_path, monkeypatch):
    """Batches that go column by column and one that cannot (an int time, which write()
    accepts as a float) mix in one file, with the same bytes."""
    import tomkit.traces.writer as writer

    monkeypatch.setattr(writer, "_RECORD_BATCH", 50)
    records = _varied()
    records[120] = dict(records[120], time=3)
    for suffix in (".jsonl", ".parquet"):
        a, b = str(tmp_path / f"a{suffix}"), str(tmp_path / f"b{suffix}")
        write_records(a, records, grouped=False)
        _one_by_one(b, records, False)
        with open(a, "rb") as fa, open(b, "rb") as fb:
            assert fa.read() == fb.read()


BAD = [
    ("time is a bool", {"time": True}),
    ("time is text", {"time": "1.5"}),
    ("time is not finite", {"time": math.nan}),
    ("deps is text", {"kind": "send", "deps": "ab"}),
    ("deps holds a number", {"kind": "send", "deps": ["a", 1]}),
    ("deps on a recv", {"deps": ["a"]}),
    ("unknown field", {"color": "red"}),
    ("seq negative", {"seq": -1}),
    ("seq beyond int64", {"seq": 2**64}),
    ("empty process", {"process": ""}),
    ("unknown kind", {"kind": "bogus"}),
    ("crash with a msg", {"kind": "crash"}),
    ("x_ not finite", {"x_f": math.inf}),
    ("x_ not JSON", {"x_s": {1, 2}}),
    ("x_ NaN inside", {"x_l": [1.0, math.nan]}),
    ("header as a record", {"format": "tomkit-trace"}),
    ("real_time not finite", {"real_time": math.inf}),
    ("members on a recv", {"members": ["p1"]}),
    ("view without members", {"kind": "view", "view": "v2"}),
    ("msg is bytes", {"msg": b"m"}),
    ("time beyond a float", {"time": 10**400}),
]


def _error(fn, path: str, records: list) -> tuple[type, str]:
    with pytest.raises((TraceFormatError, ValueError, TypeError)) as e:
        fn(path, records)
    assert not os.path.exists(path), "a failed write leaves no file"
    return type(e.value), str(e.value).replace(path, "FILE")


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
@pytest.mark.parametrize("what,change", BAD, ids=[b[0] for b in BAD])
def test_same_error_as_record_by_record(tmp_path, suffix, what, change):
    records = [_rec(i) for i in range(200)]
    records[137] = {**records[137], **change}
    a, b = str(tmp_path / f"a{suffix}"), str(tmp_path / f"b{suffix}")
    got = _error(lambda p, r: write_records(p, r, grouped=True), a, records)
    want = _error(lambda p, r: _one_by_one(p, r, True), b, records)
    assert got == want
    assert "137" in got[1] or "row 137" in got[1] or "record 137" in got[1]


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_not_a_dict_and_ungrouped_traces(tmp_path, suffix):
    for bad in ([_rec(0), "text", _rec(2)],
                [_rec(0), _rec(1) | {"trace": "u"}, _rec(2)]):
        a, b = str(tmp_path / f"a{suffix}"), str(tmp_path / f"b{suffix}")
        got = _error(lambda p, r: write_records(p, r, grouped=True), a, bad)
        assert got == _error(lambda p, r: _one_by_one(p, r, True), b, bad)


def test_columnar_safe_refuses_what_arrow_would_change():
    ok = [_rec(i) for i in range(5)]
    assert columnar_safe(ok)
    for change in ({"time": True}, {"time": 3}, {"deps": "ab"}, {"deps": ("a",)},
                   {"color": 1}, {"seq": 2.0}, {"msg": b"m"}):
        assert not columnar_safe(ok[:2] + [ok[2] | change] + ok[3:]), change
    assert not columnar_safe([])
    assert not columnar_safe(ok + ["text"])


def test_float_reprs_is_repr():
    rng = np.random.default_rng(7)
    values = np.concatenate([
        rng.random(50_000) * 10.0 ** rng.integers(-12, 20, 50_000),
        -rng.exponential(1.0, 10_000),
        rng.integers(-2_000, 2_000, 2_000).astype(float),
        rng.integers(0, 2**63, 50_000, dtype=np.uint64).view(np.float64),
        [0.0, -0.0, 1e-4, 9.999999999999999e-05, 1e9, 999999999.9999999, 1e16, 5e-324,
         1.7976931348623157e308, math.nan, math.inf, -math.inf],
    ])
    got = float_reprs(pa.array(values)).to_pylist()
    assert [repr(v) for v in values.tolist()] == got
    assert float_reprs(pa.array([1.5, None, 2.0])).to_pylist() == ["1.5", None, "2.0"]
