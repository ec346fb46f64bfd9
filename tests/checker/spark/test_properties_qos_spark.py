"""The Spark scan decides member-liveness, realtime-latency and rate as `tomkit check` does,
trace by trace, with the scan's options (`--realtime-bound`, `--slot`, `--rate-*`), on
traces with real_time, packet records and x_slot in Parquet and JSON Lines: clean ones
and every planted violation kind of the three properties."""

from __future__ import annotations

import os

import pytest
from qos_traces import OPTIONS, QOS, qos_records

from tomkit.checker.engine import check_paths, select
from tomkit.traces.writer import write_records

pyspark = pytest.importorskip("pyspark")

from tomkit.checker.spark.job import scan  # noqa: E402
from tomkit.checker.spark.options import scan_options  # noqa: E402
from tomkit.checker.spark.properties import NAMES  # noqa: E402

pytestmark = pytest.mark.spark

@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    root = tmp_path_factory.mktemp("qos")
    out = {}
    for ext in ("parquet", "jsonl"):
        d = root / ext / "protocol=qos" / "config=c"
        d.mkdir(parents=True)
        write_records(d / f"part-0.{ext}", qos_records(), grouped=True)
        out[ext] = (str(root / ext), str(d / f"part-0.{ext}"))
    return out


def _reference(path: str) -> dict[str, dict[str, tuple[str, str]]]:
    rep = check_paths([path], select(NAMES, OPTIONS), OPTIONS)
    return {o.trace: {n: (str(v), o.results[n].explanation if str(v) == "unknown" else "")
                      for n, v in o.verdicts.items()} for o in rep.outcomes}


def test_reference_verdicts_cover_every_kind(dataset):
    ref = _reference(dataset["parquet"][1])
    v = {t: {n: ref[t][n][0] for n in QOS} for t in ref}
    assert v["clean"] == dict.fromkeys(QOS, "holds")
    assert v["miss"]["member-liveness"] == "violated"
    assert v["join-miss"]["member-liveness"] == "violated"
    assert v["join"]["member-liveness"] == v["crash"]["member-liveness"] == "holds"
    assert v["late"]["realtime-latency"] == "violated"
    assert v["no-real-time"]["realtime-latency"] == "unknown"
    assert v["rate-max"]["rate"] == v["rate-window"]["rate"] == "violated"
    assert v["no-packets"]["rate"] == v["unplaced"]["rate"] == "unknown"
    assert v["join-copies"]["rate"] == "holds"
    assert ref["no-packets"]["rate"][1].startswith("not applicable")


# two scans here, to keep the suite small: the files engine (tomkit's reader, the numpy
# detect, the options shipped to the tasks) on Parquet, the arrow engine on JSON Lines
# (Spark's JSON reader); the SQL engine (the SQL of properties.py) decides these traces
# with these options in test_spark_scan.py, beside its own (one SQL scan: its fixed cost
# is most of either module's time). `QOS_SPARK_ALL=1` adds SQL on both formats here.
PAIRS = [("files", "parquet"), ("arrow", "jsonl")]
if os.environ.get("QOS_SPARK_ALL"):
    PAIRS += [("sql", "parquet"), ("sql", "jsonl")]


@pytest.mark.parametrize("engine, fmt", PAIRS)
def test_scan_agrees_with_check(spark, dataset, tmp_path, engine, fmt):
    root, path = dataset[fmt]
    ref = _reference(path)
    out = tmp_path / "out"
    res = scan(spark, root, str(out), engine=engine, options=OPTIONS)
    rows = spark.read.parquet(os.path.join(out, "verdicts")).collect()
    got: dict = {}
    for r in rows:
        got.setdefault(r["trace"], {})[r["property"]] = (
            r["verdict"], r["explanation"] if r["verdict"] == "unknown" else "")
    assert got == ref
    assert res.exit_code == 1


def test_scan_options_from_the_command_line():
    from tomkit.checker.spark.job import build_parser

    args = build_parser().parse_args(["d", "--realtime-bound", "0.165", "--slot", "0.1",
                                      "--rate-max", "3", "--rate-avg", "5",
                                      "--rate-window", "2"])
    assert scan_options(args) == OPTIONS
