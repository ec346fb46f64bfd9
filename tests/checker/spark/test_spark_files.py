"""The files engine of ``tomkit scan`` where its data set is not tomkit's own layout.

Traces spread over files (one log per process, so the second pass must merge them), a
file that declares its traces grouped and interleaves them, and files that cannot be read
at all; the verdicts must be those of ``tomkit check`` over the merged files. Also the
latency histogram of the report (``checker/spark/report.py``) against exact quantiles.
"""

from __future__ import annotations

import json
import math
import os
import random

import numpy as np
import pyarrow.parquet as pq
import pytest

from tomkit.checker.engine import check_paths, select
from tomkit.checker.properties import Options
from tomkit.checker.spark.report import ALPHA, QUANTILES, summarize
from tomkit.traces.generate import FAULTS, clean_trace, faulty_trace
from tomkit.traces.writer import write_records


def _hist(values: list[float]) -> list[tuple]:
    b: dict[tuple, list[float]] = {}
    for x in values:
        s = (x > 0) - (x < 0)
        k = 0 if s == 0 else math.floor(math.log(abs(x)) / math.log1p(ALPHA))
        b.setdefault((s, k), []).append(x)
    return [(s, k, len(v), sum(v), min(v), max(v)) for (s, k), v in b.items()]


@pytest.mark.parametrize("seed", range(5))
def test_histogram_quantiles_within_half_a_bucket(seed):
    rng = random.Random(seed)
    values = [rng.lognormvariate(-4, 1.5) for _ in range(2000)]
    values += [-rng.expovariate(100) for _ in range(100)] + [0.0] * 50  # skewed clocks
    got = summarize(_hist(values))
    assert got["deliveries"] == len(values)
    assert got["max"] == max(values)
    assert got["mean"] == pytest.approx(np.mean(values))
    for q in QUANTILES:
        want = float(np.quantile(values, q, method="inverted_cdf"))
        assert abs(got[f"p{round(q * 100)}"] - want) <= abs(want) * ALPHA / 2 + 1e-15, q


@pytest.mark.parametrize("spread", [False, True])
def test_task_histogram_matches_the_definition(spread):
    """summary.Group.add_latencies (dense bucket arrays, or sparse ones when the values lie
    too far apart) against a plain per-value loop over the same bucket definition."""
    from tomkit.checker.spark.summary import Group, bucket_of

    rng = np.random.default_rng(3)
    v = np.concatenate([rng.lognormal(-4, 2, 5000), -rng.exponential(0.01, 100),
                        np.zeros(7)] + ([np.array([1e-300, 1e300])] if spread else []))
    want: dict[tuple[int, int], list] = {}
    for x, s, k in zip(v.tolist(), *(a.tolist() for a in bucket_of(v))):
        b = want.setdefault((s, k), [0, 0.0, math.inf, -math.inf])
        b[0] += 1
        b[1] += x
        b[2], b[3] = min(b[2], x), max(b[3], x)
    g = Group()
    g.add_latencies(v[:3000])
    g.add_latencies(v[3000:])  # two batches merge into the same buckets
    assert g.latency.keys() == want.keys() and (0, 0) in want
    for key, (n, total, lo, hi) in want.items():
        got = g.latency[key]
        assert (got[0], got[2], got[3]) == (n, lo, hi)
        assert got[1] == pytest.approx(total, rel=1e-12, abs=1e-300)


def test_files_sharing_a_trace_form_connected_sets():
    from tomkit.checker.spark.files import shared

    h = {0: np.array([1, 2, 3], np.uint64), 1: np.array([4, 5], np.uint64),
         2: np.array([3, 6], np.uint64), 3: np.array([6, 7], np.uint64),
         4: np.array([5], np.uint64), 5: np.array([8, 8 + 2**63], np.uint64)}
    assert shared(h) == [[0, 2, 3], [1, 4]]
    assert shared({0: np.array([1], np.uint64), 1: np.array([2], np.uint64)}) == []


def test_histogram_is_exact_on_equal_values():
    got = summarize(_hist([0.25] * 7 + [0.5] * 3))
    assert (got["p50"], got["p90"], got["p99"]) == (0.25, 0.5, 0.5)


pyspark = pytest.importorskip("pyspark")

from tomkit.checker.spark.job import scan  # noqa: E402
from tomkit.checker.spark.properties import NAMES  # noqa: E402

pytestmark = pytest.mark.spark


def _traces() -> list[list[dict]]:
    out = []
    for k, fault in enumerate(FAULTS):
        recs, _ = faulty_trace(f"f{k}", fault, seed=k, n_processes=3, n_messages=6,
                               views=fault in ("view-mismatch", "wrong-view"), recv=False)
        out.append(recs)
    for j in range(4):
        out.append(clean_trace(f"c{j}", n_processes=3, n_messages=6, seed=j, recv=False))
    return out


def _write_jsonl(path, records, grouped: bool) -> None:
    head = {"format": "tomkit-trace", "version": 1, "grouped": grouped}
    with open(path, "w") as f:
        f.write("\n".join(json.dumps(r) for r in [head, *records]) + "\n")


@pytest.mark.parametrize("ext", ["jsonl", "parquet"])
def test_split_traces_and_broken_files(spark, tmp_path, ext):
    d = tmp_path / "in" / "protocol=mixed" / "config=c"
    d.mkdir(parents=True)
    traces = _traces()
    # one log per process: every trace of the first half is spread over three files
    per_proc: dict[str, list[dict]] = {}
    for recs in traces[: len(traces) // 2]:
        for r in recs:
            per_proc.setdefault(r["process"], []).append(r)
    good = []
    for p, recs in per_proc.items():
        good.append(str(d / f"log-{p}.{ext}"))
        write_records(good[-1], recs, grouped=True)
    # the second half: interleaved records under a header that promises grouped traces
    rest = [r for recs in traces[len(traces) // 2:] for r in recs]
    random.Random(1).shuffle(rest)
    good.append(str(d / "interleaved.jsonl"))
    _write_jsonl(good[-1], rest, grouped=True)
    (d / "empty.jsonl").write_text("")
    (d / "future.jsonl").write_text('{"format": "tomkit-trace", "version": 7}\n')

    ref = check_paths(good, select(NAMES, Options()), Options(), merge=True)
    want = {o.trace: {n: str(v) for n, v in o.verdicts.items()} for o in ref.outcomes}
    assert {v for t in want.values() for v in t.values()} >= {"holds", "violated"}

    out = tmp_path / "out"
    res = scan(spark, str(tmp_path / "in"), str(out), engine="files")
    got: dict[str, dict[str, str]] = {}
    rows = spark.read.parquet(str(out / "verdicts")).collect()
    for r in rows:
        assert (r["protocol"], r["config"]) == ("mixed", "c")
        got.setdefault(r["trace"], {})[r["property"]] = r["verdict"]
    assert got == want
    # one row per trace and property: the first pass's rows of the merged files are gone,
    # and so are those the broken grouped promise had written
    assert len(rows) == len(want) * len(NAMES)
    # the unreadable files are reported, each once, and the rest is checked
    rej = {os.path.basename(r["source"]): (r["line"], r["row"], r["message"])
           for r in res.doc["rejected"]}
    assert set(rej) == {"empty.jsonl", "future.jsonl"}
    assert rej["empty.jsonl"][:2] == (None, None) and "no records" in rej["empty.jsonl"][2]
    assert "version" in rej["future.jsonl"][2]
    assert res.doc["summary"]["traces"] == len(traces)
    assert res.doc["summary"]["events"] == sum(map(len, traces))
    assert res.exit_code == 1

    # latencies: first delivery per (trace, process, message) minus the first send
    lat = []
    for recs in traces:
        sent: dict[str, float] = {}
        seen = set()
        for r in recs:
            if r["kind"] == "send" and r.get("time") is not None:
                sent.setdefault(r["msg"], r["time"])
        for r in recs:
            key = (r["process"], r.get("msg"))
            if r["kind"] == "deliver" and key not in seen:
                seen.add(key)
                if r["msg"] in sent and r.get("time") is not None:
                    lat.append(r["time"] - sent[r["msg"]])
    (group,) = res.doc["groups"]
    assert group["latency"]["deliveries"] == len(lat)

    # the same scan in this process, without Spark (a small local data set): the same
    # verdict rows, rejected rows and report
    out2 = tmp_path / "out-in-process"
    here = scan(None, str(tmp_path / "in"), str(out2), engine="files")
    for d in ("verdicts", "rejected"):
        keys = [(c, "ascending") for c in ("source", "line", "row", "trace", "property")
                if c in pq.read_schema(next((out / d).glob("*.parquet"))).names]
        a, b = (pq.read_table(str(o / d)).sort_by(keys) for o in (out, out2))
        assert a.equals(b), d
    assert here.doc == res.doc and here.text == res.text and here.exit_code == 1
    assert group["latency"]["max"] == pytest.approx(max(lat))
    want_p50 = float(np.quantile(lat, 0.5, method="inverted_cdf"))
    assert group["latency"]["p50"] == pytest.approx(want_p50, rel=ALPHA)


def test_json_number_for_a_string_field_is_rejected(spark, tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    recs = clean_trace("t", n_processes=2, n_messages=2, recv=False)
    lines = [json.dumps(r) for r in recs] + [
        json.dumps({"trace": 5, "process": "p0", "kind": "send", "msg": "x"})]
    (d / "part-0.jsonl").write_text("\n".join(lines) + "\n")
    res = scan(spark, str(d), None, engine="files")
    (rej,) = res.doc["rejected"]
    assert (rej["line"], rej["field"]) == (len(lines), "trace")
    assert "expected string" in rej["message"]
    assert res.doc["summary"]["events"] == len(recs) and res.exit_code == 2


def test_a_single_file_is_a_data_set(spark, tmp_path):
    path = tmp_path / "one.parquet"
    recs = clean_trace("t", n_processes=2, n_messages=2, recv=False)
    write_records(str(path), recs, grouped=True)
    for engine in ("files", "arrow"):
        res = scan(spark, str(path), None, engine=engine)
        assert res.doc["format"] == "parquet", engine
        assert res.doc["summary"]["events"] == len(recs) and res.exit_code == 0, engine


def test_report_from_task_summaries_equals_the_spark_aggregations(spark, tmp_path):
    """The files engine's report comes from its tasks' summaries (the second pass's for
    files that share traces); the arrow engine's from Spark aggregations. Same data set,
    same report: whole files and per-process logs side by side, index-of-latency values,
    a bad record and a trace rejected for its seq."""
    rng = random.Random(7)
    traces = _traces()
    for recs in traces:
        for r in recs:
            if r["kind"] == "deliver" and rng.random() < 0.7:
                r["x_index_of_latency"] = rng.choice([2, 3, 3, 4])
    whole = tmp_path / "in" / "protocol=p" / "config=whole"
    split = tmp_path / "in" / "protocol=p" / "config=split"
    whole.mkdir(parents=True)
    split.mkdir(parents=True)
    half = len(traces) // 2
    for i in range(2):  # two files of whole traces
        write_records(whole / f"part-{i}.jsonl",
                      [r for recs in traces[i * half // 2:(i + 1) * half // 2] for r in recs],
                      grouped=True)
    per_proc: dict[str, list[dict]] = {}
    for recs in traces[half:]:
        for r in recs:
            per_proc.setdefault(r["process"], []).append(dict(r, trace="s-" + r["trace"]))
    for p, recs in per_proc.items():
        write_records(split / f"log-{p}.jsonl", recs, grouped=True)
    bad = [{"trace": "badseq", "process": "p", "kind": "send", "msg": m, "seq": 1}
           for m in "ab"]
    bad.append({"trace": "x", "process": "p", "kind": "nonsense", "msg": "m"})
    _write_jsonl(whole / "part-bad.jsonl", bad, grouped=False)

    docs = {e: scan(spark, str(tmp_path / "in"), None, engine=e).doc
            for e in ("files", "arrow")}
    a, b = docs["files"], docs["arrow"]
    assert a["summary"] == b["summary"] and a["summary"]["rejected"] == 3
    assert a["examples"] == b["examples"] and a["examples"]
    # the same records, by place and field (the arrow engine validates in Spark SQL, whose
    # messages are worded differently)
    assert [(r["source"], r["line"], r["field"]) for r in a["rejected"]] == \
        [(r["source"], r["line"], r["field"]) for r in b["rejected"]]
    assert a["exit_code"] == b["exit_code"] == 1
    assert [g["config"] for g in a["groups"]] == ["split", "whole"]
    for ga, gb in zip(a["groups"], b["groups"]):
        assert ga["counts"] == gb["counts"] and ga["traces"] == gb["traces"]
        assert ga["index_of_latency"] == gb["index_of_latency"]
        assert ga["index_of_latency"]["deliveries"] > 0
        assert ga["latency"] == pytest.approx(gb["latency"], rel=1e-12)


def test_json_lines_are_parsed_once(spark, tmp_path):
    """The sql and arrow engines' JSON Lines reader: Spark would push the filter on the
    record rules below the parse and inline ``from_json`` into each of their ~30 uses
    (JSON Lines then cost 23 times Parquet); the parsed records are materialized first."""
    from tomkit.checker.spark.read import read_events

    path = tmp_path / "t.jsonl"
    write_records(str(path), clean_trace("t", n_processes=2, n_messages=2, recv=False),
                  grouped=True)
    ev = read_events(spark, [str(path)])
    for df in (ev.events, ev.rejected):
        plan = df._jdf.queryExecution().executedPlan().toString()
        assert plan.count("from_json") <= 1, plan
    assert ev.events.count() == len(clean_trace("t", n_processes=2, n_messages=2, recv=False))


def test_command_line_errors_and_progress(spark, tmp_path, capsys):
    """``tomkit scan``'s job: tomkit's closing progress line on stderr with the report on
    stdout; a missing input and a store nothing can open are errors (exit 2) naming
    them."""
    from tomkit.checker.spark.job import main

    path = tmp_path / "in" / "one.parquet"
    path.parent.mkdir()
    write_records(str(path), clean_trace("t", n_processes=2, n_messages=2, recv=False),
                  grouped=True)
    assert main([str(tmp_path / "in"), "--master", "local[2]"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("tomkit scan: 1 trace(s)")
    assert not [ln for ln in out.splitlines() if ln.startswith("scan: ")]
    assert [ln for ln in err.splitlines() if ln.startswith("scan: 1 file(s), ")], err
    assert main([str(tmp_path / "in"), "--master", "local[2]", "--engine", "arrow"]) == 0
    err = capsys.readouterr().err
    assert [ln for ln in err.splitlines() if ln.startswith("scan: 6 events in ")], err
    from tomkit.checker.spark.progress import Progress  # the arrow and sql engines' line

    assert Progress(spark).line().startswith("scan: 0/0 tasks of 0 running stage(s)")
    assert main([str(tmp_path / "nothing"), "--master", "local[2]"]) == 2
    assert "nothing: no such file or directory" in capsys.readouterr().err
    assert main(["nosuchscheme://x/y", "--master", "local[2]"]) == 2
    assert "no file system for scheme 'nosuchscheme'" in capsys.readouterr().err


def test_quiet_mode_drops_the_errors_spark_ignores(spark):
    """Quiet (the default): Spark's loggers at ERROR, except the endpoint inbox's "Ignoring
    error", which a standalone cluster's shutdown race prints after every scan on a loaded
    machine; `quiet` (the path under spark-submit) sets the same."""
    from tomkit.checker.spark.session import INBOX_LOGGER, quiet

    lm = spark._jvm.org.apache.logging.log4j.LogManager
    assert str(lm.getLogger(INBOX_LOGGER).getLevel()) == "FATAL"
    assert str(lm.getRootLogger().getLevel()) == "ERROR"
    cfg = spark._jvm.org.apache.logging.log4j.core.config.Configurator
    cfg.setLevel(INBOX_LOGGER, spark._jvm.org.apache.logging.log4j.Level.ERROR)
    quiet(spark._jvm)
    assert str(lm.getLogger(INBOX_LOGGER).getLevel()) == "FATAL"


def test_small_local_data_sets_skip_spark(tmp_path, monkeypatch):
    """Which scans run in this process: local paths, no Hadoop configuration that could
    make a bare path HDFS, at most IN_PROCESS_BYTES of data files."""
    from tomkit.checker.spark import files
    from tomkit.checker.spark.job import small_local

    path = tmp_path / "in" / "one.parquet"
    path.parent.mkdir()
    write_records(str(path), clean_trace("t", n_processes=2, n_messages=2, recv=False),
                  grouped=True)
    monkeypatch.delenv("HADOOP_CONF_DIR", raising=False)
    monkeypatch.delenv("YARN_CONF_DIR", raising=False)
    assert small_local([str(tmp_path / "in")], str(tmp_path / "out"))
    assert small_local([f"file://{tmp_path / 'in'}"], None)
    assert not small_local([str(tmp_path / "nothing")], None)  # Spark's path reports it
    assert not small_local(["s3a://bucket/data"], None)
    assert not small_local([str(tmp_path / "in")], "s3a://bucket/out")
    monkeypatch.setattr(files, "IN_PROCESS_BYTES", path.stat().st_size - 1)
    assert not small_local([str(tmp_path / "in")], None)
    monkeypatch.setattr(files, "IN_PROCESS_BYTES", path.stat().st_size)
    assert small_local([str(tmp_path / "in")], None)
    monkeypatch.setenv("HADOOP_CONF_DIR", str(tmp_path))
    assert not small_local([str(tmp_path / "in")], None)
