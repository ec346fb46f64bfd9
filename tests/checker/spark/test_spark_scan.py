"""The Spark scan against the single-machine checker, trace by trace.

The session's local[2] Spark session (the ``spark`` fixture of conftest.py). The data
set: every planted fault of traces.generate.FAULTS (with and without views), clean
traces (with views, crashes, without deps, without sends) and the QoS traces of
tests/qos_traces.py (judged with their options), written as a partitioned Parquet data
set and as JSON Lines; each engine, on the formats of PAIRS, must give check's verdict
(and the same unknown reason) for every trace and property it decides. Also: bad records
are reported with file and line, a schema mismatch fails with a clear message, and a
failed run leaves the previous output untouched.
"""

from __future__ import annotations

import json
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from qos_traces import OPTIONS, qos_records
from reused_ids import CASES as REUSED
from reused_ids import OTHERS as REUSED_OTHERS
from tracedsl import parse

from tomkit.checker.engine import check_paths, select
from tomkit.checker.properties import Options
from tomkit.traces.generate import FAULTS, clean_trace, faulty_trace
from tomkit.traces.writer import write_records

pyspark = pytest.importorskip("pyspark")

from tomkit.checker.spark.job import scan  # noqa: E402
from tomkit.checker.spark.properties import NAMES  # noqa: E402
from tomkit.checker.spark.read import SchemaMismatch  # noqa: E402

pytestmark = pytest.mark.spark


def _records() -> dict[tuple[str, str], list[dict]]:
    parts: dict[tuple[str, str], list[dict]] = {}
    k = 0
    for fault in FAULTS:
        for views in (False, True):
            if fault in ("view-mismatch", "wrong-view") and not views:
                continue
            tid = f"f{k}-{fault}"
            recs, _ = faulty_trace(tid, fault, seed=k, n_processes=4, n_messages=8,
                                   views=views, recv=False)
            parts.setdefault(("planted", "views" if views else "plain"), []).extend(recs)
            k += 1
    clean = [
        ({}, "plain"), ({"views": True}, "views"), ({"crash": True}, "crash"),
        ({"deps": False}, "nodeps"), ({"times": False}, "notimes"),
    ]
    for i, (kw, cfg) in enumerate(clean):
        for j in range(3):
            tid = f"c{i}-{j}"
            parts.setdefault(("clean", cfg), []).extend(
                clean_trace(tid, n_processes=4, n_messages=8, seed=[i, j], recv=False, **kw))
    # no sends at all: integrity, causal and FIFO unknown; a cycle of three, weak holds
    cyc = []
    for p, seq in (("p", ["a", "b"]), ("q", ["b", "c"]), ("r", ["c", "a"])):
        cyc += [{"trace": "nosend-cycle", "process": p, "kind": "deliver", "msg": m}
                for m in seq]
    parts[("clean", "nosends")] = cyc
    # rejected for seq (the whole trace): a repeated seq, and seq on some events only
    bad = []
    for tid, seqs in (("badseq-repeat", [0, 1, 1]), ("badseq-mixed", [None, 3, None])):
        for m, sq in zip("abc", seqs):
            rec = {"trace": tid, "process": "p", "kind": "send", "msg": m}
            if sq is not None:
                rec["seq"] = sq
            bad += [rec, {"trace": tid, "process": "q", "kind": "deliver", "msg": m}]
    parts[("clean", "badseq")] = bad
    # a view installed twice by one process (the SQL engine finds it as the previous
    # installer of that view id being the same process): view-agreement violated,
    # virtual synchrony left to the exact check
    v1 = {"kind": "view", "view": "v1", "members": ["p", "q"]}
    parts[("planted", "reinstall")] = [
        {"trace": "reinstall", "process": "p", **v1},
        {"trace": "reinstall", "process": "q", **v1},
        {"trace": "reinstall", "process": "p", "kind": "send", "msg": "a"},
        {"trace": "reinstall", "process": "p", "kind": "deliver", "msg": "a"},
        {"trace": "reinstall", "process": "q", "kind": "deliver", "msg": "a"},
        {"trace": "reinstall", "process": "p", **v1},
    ]
    # and the QoS traces (real_time, packets, slots), judged with their options: the one
    # test of the SQL engine on member-liveness, realtime-latency and rate
    # (test_properties_qos_spark.py runs the other engines on them)
    parts[("qos", "c")] = qos_records()
    # message ids sent twice: fifo-order and causal-order go to the exact check
    # (tests/reused_ids.py; the old false alarm of FIFO among them)
    parts[("planted", "reused")] = [r for case in REUSED for r in parse(REUSED[case][0],
                                                                         trace=f"r-{case}")]
    parts[("planted", "reused")] += [r for case, text in REUSED_OTHERS.items()
                                     for r in parse(text, trace=f"r-{case}")]
    return parts


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    root = tmp_path_factory.mktemp("ds")
    pq_dir, js_dir = root / "parquet", root / "jsonl"
    files = []
    for (proto, cfg), recs in _records().items():
        for base, ext in ((pq_dir, "parquet"), (js_dir, "jsonl")):
            d = base / f"protocol={proto}" / f"config={cfg}"
            d.mkdir(parents=True)
            write_records(d / f"part-0.{ext}", recs, grouped=True)
            if ext == "parquet":
                files.append(str(d / f"part-0.{ext}"))
    return pq_dir, js_dir, files


def _reference(files: list[str]) -> tuple[dict[str, dict[str, tuple[str, str]]], set]:
    rep = check_paths(files, select(NAMES, OPTIONS), OPTIONS, keep_going=True)
    rejected = {(e.location.source, e.location.row, e.message) for e in rep.rejected}
    out = {}
    for o in rep.outcomes:
        out[o.trace] = {n: (str(v), o.results[n].explanation if n in o.results and
                            str(v) == "unknown" else "") for n, v in o.verdicts.items()}
    return out, rejected


def _scanned(spark, out: str) -> dict[str, dict[str, tuple[str, str]]]:
    rows = spark.read.parquet(os.path.join(out, "verdicts")).collect()
    got: dict[str, dict[str, tuple[str, str]]] = {}
    for r in rows:
        got.setdefault(r["trace"], {})[r["property"]] = (
            r["verdict"], r["explanation"] if r["verdict"] == "unknown" else "")
    return got


# each format through each reader, each engine at least once: the files engine (tomkit's
# own reader) on both formats; the arrow and SQL engines share Spark's reader
# (read.read_events), so the arrow engine takes JSON Lines and the SQL engine Parquet, and
# its row numbers (every cross of the two passed; `SPARK_SCAN_ALL=1` runs them all, the
# SQL engine's fixed cost is most of this module's time)
PAIRS = [("files", "parquet"), ("files", "jsonl"), ("arrow", "jsonl"), ("sql", "parquet")]
if os.environ.get("SPARK_SCAN_ALL"):
    PAIRS += [("arrow", "parquet"), ("sql", "jsonl")]


@pytest.mark.parametrize("engine, fmt", PAIRS)
def test_scan_agrees_with_check_trace_by_trace(spark, dataset, tmp_path, engine, fmt):
    pq_dir, js_dir, files = dataset
    ref, ref_rejected = _reference(files)
    assert {m.split(" seq")[0] for _, _, m in ref_rejected} == {"process p repeats",
                                                                "process p gives"}
    # the scan decides the default set and the order and view properties beside it
    assert {p.name for p in select(None, Options())} <= set(NAMES)
    assert {"prefix-order", "causal-order", "fifo-order", "view-agreement",
            "same-view-delivery", "sending-view-delivery", "virtual-synchrony"} <= set(NAMES)
    # every kind of verdict occurs, so agreement is not vacuous
    seen = {v for t in ref.values() for v, _ in t.values()}
    assert seen == {"holds", "violated", "unknown"}
    # and each QoS property is violated by some QoS trace, held by another
    for name in ("member-liveness", "realtime-latency", "rate"):
        assert {ref[t][name][0] for t in ("clean", "miss", "late", "rate-max")} \
            == {"holds", "violated"}, name
    for fmt_dir in [d for d in (pq_dir, js_dir) if d.name == fmt]:
        out = tmp_path / f"out-{fmt_dir.name}"
        res = scan(spark, str(fmt_dir), str(out), engine=engine, options=OPTIONS)
        got = _scanned(spark, str(out))
        assert got == ref, fmt_dir.name
        assert res.exit_code == 1 and res.doc["verdict"] == "violated"
        # the traces rejected for seq, each with the record and reason of check
        seq_rej = [r for r in res.doc["rejected"] if r["field"] == "seq"]
        if fmt_dir == pq_dir:
            assert {(r["source"], r["row"], r["message"]) for r in seq_rej} == ref_rejected
        else:
            assert sorted(r["message"] for r in seq_rej) == sorted(m for *_, m in ref_rejected)
        assert res.doc["summary"]["rejected"] == 12  # every record of both traces
        # witnesses point into the files, with lines for JSON Lines and rows for Parquet
        w = spark.read.parquet(str(out / "verdicts")).filter("verdict = 'violated'").first()
        ev = json.loads(w["witness"])[0]
        assert ev["source"].startswith(str(fmt_dir))
        assert ("line" in ev) == (fmt_dir == js_dir) and ("row" in ev) == (fmt_dir == pq_dir)
    # a reused id: FIFO's old false alarm holds now, a true breach is still found
    assert ref["r-second-sender-first"]["fifo-order"][0] == "holds"
    assert ref["r-reused-id-delivered-late"]["fifo-order"][0] == "violated"
    assert ref["r-causal-second-send-deps"]["causal-order"][0] == "violated"
    assert ref["reinstall"]["view-agreement"][0] == "violated"
    # the planted fault's property is violated in its trace, per the ground truth
    for tid, verdicts in ref.items():
        if tid.startswith("f"):
            fault = tid.split("-", 1)[1]
            if FAULTS[fault] in NAMES:  # liveness and latency are not default properties
                assert verdicts[FAULTS[fault]][0] == "violated", tid


def test_bad_records_reported_with_file_and_line(spark, tmp_path):
    d = tmp_path / "in" / "protocol=x" / "config=y"
    d.mkdir(parents=True)
    good = clean_trace("t1", n_processes=3, n_messages=3, recv=False)
    lines = ['{"format": "tomkit-trace", "version": 1, "grouped": true}']
    lines += [json.dumps(r) for r in good]
    lines.insert(3, '{"trace": "t1", "process": "p0", "kind": "explode"}')
    lines.insert(5, "{not json")
    lines.insert(7, '{"trace": "t1", "process": "p0", "kind": "deliver", "msg": "m0", '
                    '"colour": "red"}')
    (d / "part-0.jsonl").write_text("\n".join(lines) + "\n")
    res = scan(spark, str(tmp_path / "in"), str(tmp_path / "out"))
    rej = {(r["line"], r["field"]): r["message"] for r in res.doc["rejected"]}
    assert set(rej) == {(4, "kind"), (6, ""), (8, "colour")}
    assert "explode" in rej[(4, "kind")] and "unknown field" in rej[(8, "colour")]
    assert all(r["source"].endswith("part-0.jsonl") for r in res.doc["rejected"])
    assert res.doc["summary"]["rejected"] == 3 and res.exit_code == 2
    assert res.doc["summary"]["traces"] == 1  # the rest is checked
    assert "part-0.jsonl:4: field 'kind'" in res.text


@pytest.mark.parametrize("engine", ["files", "arrow"])
def test_schema_mismatch_is_a_clear_error(spark, tmp_path, engine):
    d = tmp_path / "bad"
    d.mkdir()
    pq.write_table(pa.table({"trace": ["t"], "process": ["p"], "kind": ["send"],
                             "time": ["noon"]}), d / "part-1.parquet")
    if engine == "files":  # which checks file by file: the good one does not hide it
        write_records(d / "part-0.parquet", clean_trace("t0", n_processes=2, n_messages=2),
                      grouped=True)
    want = {"files": r"part-1.parquet: field 'time': column has type string; expected a "
                     r"numeric column \(an integer, float or decimal\): the Parquet file's "
                     r"columns do not fit",
            "arrow": "column 'time' has type string, expected double"}[engine]
    with pytest.raises(SchemaMismatch, match=want):
        scan(spark, str(d), None, engine=engine)
    if engine == "arrow":  # two files whose schemas Spark cannot merge
        write_records(d / "part-0.parquet", clean_trace("t0", n_processes=2, n_messages=2),
                      grouped=True)
        with pytest.raises(SchemaMismatch, match="do not fit together.*part-1.parquet"):
            scan(spark, str(d), None, engine=engine)


@pytest.mark.parametrize("engine", ["files", "arrow"])  # tasks write, or Spark does
def test_output_is_atomic(spark, dataset, tmp_path, engine):
    pq_dir, _, _ = dataset
    out = tmp_path / "out"
    clean = str(pq_dir / "protocol=clean" / "config=plain")
    planted = str(pq_dir / "protocol=planted" / "config=plain")
    scan(spark, clean, str(out), engine=engine)
    before = (out / "report.json").read_text()
    with pytest.raises(RuntimeError, match="on purpose"):
        scan(spark, planted, str(out), fail_after_write=True, engine=engine)
    assert (out / "report.json").read_text() == before  # the old result, whole
    assert sorted(os.listdir(tmp_path)) == ["out"]  # no temporary left behind
    scan(spark, planted, str(out), engine=engine)  # a re-run replaces it
    assert json.loads((out / "report.json").read_text())["verdict"] == "violated"
    assert sorted(os.listdir(tmp_path)) == ["out"]
    # both tables are there and readable, the empty one too
    assert spark.read.parquet(str(out / "verdicts")).count() > 0
    assert spark.read.parquet(str(out / "rejected")).count() == 0


def test_sql_detection_of_view_faults_needs_no_exact_check(spark, dataset):
    """The SQL form itself finds a view installed twice and a view id with two member
    sets (VIOLATED, not EXACT: the exact check would hide a form that misses them)."""
    from tomkit.checker.properties import EXACT, VIOLATED
    from tomkit.checker.spark.properties import decide
    from tomkit.checker.spark.read import read_events

    pq_dir, _, _ = dataset
    d = decide(read_events(spark, [str(pq_dir / "protocol=planted")]).events)
    try:
        codes = {r["trace"]: r for r in d.codes.filter(
            "trace = 'reinstall' or trace like '%split-view'").collect()}
    finally:
        d.release()
    split = [t for t in codes if t.endswith("split-view")]
    assert split and "reinstall" in codes
    assert codes["reinstall"]["view-agreement"] == VIOLATED
    assert codes["reinstall"]["virtual-synchrony"] == EXACT  # as virtual_synchrony.detect
    assert all(codes[t]["view-agreement"] == VIOLATED for t in split)
