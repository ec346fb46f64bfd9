"""The Spark scan decides member-liveness, realtime-latency and rate as `tomkit check` does,
trace by trace, with the scan's options (`--realtime-bound`, `--slot`, `--rate-*`), on
traces with real_time, packet records and x_slot in Parquet and JSON Lines: clean ones
and every planted violation kind of the three properties."""

from __future__ import annotations

import os

import pytest

from tomkit.checker.engine import check_paths, select
from tomkit.checker.properties import Options
from tomkit.traces.writer import write_records

pyspark = pytest.importorskip("pyspark")

from tomkit.checker.spark.job import scan  # noqa: E402
from tomkit.checker.spark.options import scan_options  # noqa: E402
from tomkit.checker.spark.properties import NAMES  # noqa: E402

pytestmark = pytest.mark.spark

OPTIONS = Options(realtime_bound=0.165, slot=0.1, rate_max=3, rate_avg=5, rate_window=2)
QOS = ("member-liveness", "realtime-latency", "rate")


def _run(tid: str, n: int = 3, drop: tuple = (), late: float = 0.0, packets=None,
         real: bool = True, extra: list | None = None) -> list[dict]:
    """Every process sends one message in slot 0 and delivers all in slot 1; ``drop``
    (process, msg) deliveries left out, ``late`` added to p1's deliveries in real time."""
    procs = [f"p{i}" for i in range(n)]
    out = []
    for i, p in enumerate(procs):
        rec = {"trace": tid, "process": p, "kind": "send", "msg": f"{p}.m", "time": 0.01 * i,
               "x_slot": 0}
        if real:
            rec["real_time"] = 0.01 * i + 0.002
        out.append(rec)
        for t in (packets or {}).get(p, [0.05, 0.1]):
            out.append({"trace": tid, "process": p, "kind": "packet", "time": t,
                        **({"real_time": t} if real else {})})
        for q in procs:
            if (p, f"{q}.m") in drop:
                continue
            d = {"trace": tid, "process": p, "kind": "deliver", "msg": f"{q}.m", "time": 0.15}
            if real:
                d["real_time"] = 0.15 + (late if p == "p1" else 0.0)
            out.append(d)
    return out + (extra or [])


def _records() -> list[dict]:
    recs = _run("clean") + _run("no-real-time", real=False)
    recs += _run("no-packets", packets={"p0": [], "p1": [], "p2": []})
    recs += _run("miss", drop=(("p2", "p0.m"),))
    recs += _run("late", late=0.03)
    recs += _run("rate-max", packets={"p1": [0.11, 0.12, 0.13, 0.14]})
    recs += _run("rate-window", packets={"p1": [0.11, 0.12, 0.13, 0.21, 0.22, 0.23]})
    recs += _run("unplaced", extra=[{"trace": "unplaced", "process": "p0", "kind": "packet"}])
    # join announcements (x_join) are outside the reservation: not counted
    recs += _run("join-copies", extra=[
        {"trace": "join-copies", "process": "p1", "kind": "packet", "time": 0.15,
         "x_slot": 0, "x_join": True} for _ in range(4)])
    # a crashed sender's message reaches p0 only: 003 allows it
    recs += _run("crash", drop=(("p1", "p2.m"),), extra=[
        {"trace": "crash", "process": "p2", "kind": "crash", "time": 0.05}])
    # a joiner (slot 1) owes nothing of slot 0; a joiner that misses a later message
    join = [{"trace": "join", "process": "j", "kind": "join", "time": 0.1, "x_slot": 1},
            {"trace": "join", "process": "p0", "kind": "send", "msg": "late", "time": 0.12,
             "x_slot": 1}]
    join += [{"trace": "join", "process": p, "kind": "deliver", "msg": "late", "time": 0.25}
             for p in ("p0", "p1", "p2")]
    recs += _run("join", extra=join + [{"trace": "join", "process": "j", "kind": "deliver",
                                        "msg": "late", "time": 0.25}])
    recs += _run("join-miss", extra=[dict(r, trace="join-miss") for r in join])
    return recs


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    root = tmp_path_factory.mktemp("qos")
    out = {}
    for ext in ("parquet", "jsonl"):
        d = root / ext / "protocol=qos" / "config=c"
        d.mkdir(parents=True)
        write_records(d / f"part-0.{ext}", _records(), grouped=True)
        out[ext] = (str(root / ext), str(d / f"part-0.{ext}"))
    return out


def _reference(path: str) -> dict[str, dict[str, tuple[str, str]]]:
    rep = check_paths([path], select(NAMES, OPTIONS), OPTIONS)
    return {o.trace: {n: (str(v), o.results[n].explanation if str(v) == "unknown" else "")
                      for n, v in o.verdicts.items()} for o in rep.outcomes}


@pytest.fixture(scope="module")
def spark():
    from tomkit.checker.spark.session import get_session

    return get_session("local[2]", shuffle_partitions=2, driver_memory="1g")


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


# three scans, each engine once, to keep the suite small: the files engine (tomkit's
# reader, the numpy detect, the options shipped to the tasks) and the SQL engine (the SQL
# of properties.py) on Parquet, the arrow engine on JSON Lines (Spark's JSON reader);
# SQL on JSON Lines passed too, at twice SQL on Parquet's time (`QOS_SPARK_ALL=1` runs it)
PAIRS = [("files", "parquet"), ("sql", "parquet"), ("arrow", "jsonl")]
if os.environ.get("QOS_SPARK_ALL"):
    PAIRS += [("sql", "jsonl")]


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
