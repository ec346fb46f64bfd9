"""The Spark scan on traces that declare their reservations (``negotiate`` records, 003
section 2.1; checker/properties/rate.py): the files and arrow engines judge the rate as
`tomkit check` does, trace by trace (clean, over max' in a slot, over avg' in K slots,
over the old reservation after an RN, a bad declaration); the SQL engine, which has no
form for declarations, says unknown for them, never a false verdict."""

from __future__ import annotations

import os

import pytest

from tomkit.checker.engine import check_paths, select
from tomkit.checker.properties import Options
from tomkit.traces.writer import write_records

pyspark = pytest.importorskip("pyspark")

from tomkit.checker.spark.job import scan  # noqa: E402
from tomkit.checker.spark.properties import NAMES  # noqa: E402

pytestmark = pytest.mark.spark


def negotiate(t, p, slot, most=None, avg=None, window=None, rn=False):
    r = {"trace": t, "process": p, "kind": "negotiate", "time": slot * 0.1,
         "x_slot": slot, "x_rn": rn}
    for k, v in (("x_rate_max", most), ("x_rate_avg", avg), ("x_rate_window", window)):
        if v is not None:
            r[k] = float(v) if k != "x_rate_window" else v
    return r


def packets(t, p, slot, k):
    return [{"trace": t, "process": p, "kind": "packet", "time": slot * 0.1 + 0.05,
             "x_slot": slot}] * k


def records():
    out = []
    for body in {
        "clean": [negotiate("clean", "p", 0, 4, 10, 3), *packets("clean", "p", 0, 4),
                  *packets("clean", "p", 1, 3), *packets("clean", "p", 3, 4)],
        "over-max": [negotiate("over-max", "p", 0, 4, 100, 3),
                     *packets("over-max", "p", 1, 5)],
        "over-avg": [negotiate("over-avg", "p", 0, 4, 10, 3),
                     *packets("over-avg", "p", 0, 4), *packets("over-avg", "p", 1, 4),
                     *packets("over-avg", "p", 2, 3)],
        "after-rn": [negotiate("after-rn", "p", 0, 6, 100, 3),
                     negotiate("after-rn", "p", 3, 2, 100, 3, rn=True),
                     *packets("after-rn", "p", 2, 6), *packets("after-rn", "p", 4, 6)],
        "bad": [*packets("bad", "p", 0, 2), negotiate("bad", "p", 0)],
    }.values():
        out += body
    return out


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    root = tmp_path_factory.mktemp("declared")
    out = {}
    for ext in ("parquet", "jsonl"):
        d = root / ext / "protocol=qos" / "config=c"
        d.mkdir(parents=True)
        write_records(d / f"part-0.{ext}", records(), grouped=True)
        out[ext] = (str(root / ext), str(d / f"part-0.{ext}"))
    return out


def reference(path):
    rep = check_paths([path], select(NAMES, Options()), Options())
    return {o.trace: str(o.verdicts["rate"]) for o in rep.outcomes}


def test_reference_verdicts(dataset):
    assert reference(dataset["parquet"][1]) == {
        "clean": "holds", "over-max": "violated", "over-avg": "violated",
        "after-rn": "violated", "bad": "unknown"}


@pytest.mark.parametrize("engine, fmt", [("files", "parquet"), ("arrow", "jsonl"),
                                         ("sql", "parquet")])
def test_scan_on_declared_reservations(spark, dataset, tmp_path, engine, fmt):
    root, path = dataset[fmt]
    out = tmp_path / "out"
    scan(spark, root, str(out), engine=engine, options=Options())
    rows = spark.read.parquet(os.path.join(out, "verdicts")).collect()
    got = {r["trace"]: r["verdict"] for r in rows if r["property"] == "rate"}
    if engine == "sql":
        assert got == dict.fromkeys(reference(path), "unknown")
    else:
        assert got == reference(path)
