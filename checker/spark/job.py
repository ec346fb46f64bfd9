"""The scan job: read a data set, decide every default property per trace, write the results.

Entry points: :func:`scan` (used by ``tomkit scan`` and tests) and :func:`main`, so that

    spark-submit --master URL -m tomkit.checker.spark.job DIR --out OUT

(or ``python -m tomkit.checker.spark.job``) runs the same job on a cluster.

Output, committed atomically (written to ``OUT.tmp-<id>``, then renamed into place; an
older ``OUT`` is replaced only once the new one is complete, and a failed run removes
its temporary directory, so a reader sees the old result or the new one, never a half):

* ``verdicts/`` Parquet, one row per trace and property: protocol, config, trace,
  property, verdict (holds / violated / unknown), clause, explanation (the reason when
  unknown), witness (JSON list of witness events with file and row or line), events.
* ``rejected/`` Parquet: every bad record (source, line or row, field, message), and one
  row per trace rejected for its ``seq`` (all its records count as rejected).
* ``report.json`` and ``report.txt``: the aggregate report (``report.py``).

Exit codes as ``tomkit check``: 1 a property is violated; else 2 records were rejected;
else 0.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import uuid
from dataclasses import dataclass
from typing import Any

import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from tomkit.checker.engine import EngineDisagreement
from tomkit.checker.properties import HOLDS, UNKNOWN, VIOLATED
from tomkit.checker.spark import report as R
from tomkit.checker.spark.exact import local_path, run_exact, wanted_codes
from tomkit.checker.spark.options import ENGINES
from tomkit.checker.spark.properties import NAMES, decide, unknown_reason
from tomkit.checker.spark.read import KEY, detect_format, read_events
from tomkit.checker.spark.summary import LISTED, Summary


@dataclass
class ScanResult:
    doc: dict[str, Any]
    text: str
    exit_code: int
    out: str | None


def verdict_rows(codes: DataFrame, exact: DataFrame) -> DataFrame:
    """One row per trace and property, from the detection codes and the exact results."""
    stack = ", ".join(f"'{n}', `{n}`" for n in NAMES)
    long = codes.select(*KEY, "events", "has_send",
                        F.expr(f"stack({len(NAMES)}, {stack}) as (property, code)"))
    reason = F.lit(None).cast("string")
    for n in NAMES:
        r_send, r_none = unknown_reason(n, True), unknown_reason(n, False)
        reason = F.when(F.col("property") == n,
                        F.when(F.col("has_send"), F.lit(r_send)).otherwise(F.lit(r_none))
                        ).otherwise(reason)
    ex = exact.select(*KEY, "property", F.col("verdict").alias("_v"), "clause",
                      F.col("explanation").alias("_x"), "witness")
    j = long.join(F.broadcast(ex), [*KEY, "property"], "left")
    verdict = (F.when(F.col("code") == HOLDS, F.lit("holds"))
               .when(F.col("code") == UNKNOWN, F.lit("unknown"))
               .otherwise(F.col("_v")))
    expl = F.when(F.col("code") == UNKNOWN, reason).otherwise(F.col("_x"))
    return j.select(*KEY, "property", verdict.alias("verdict"), "clause",
                    expl.alias("explanation"), "witness", "events")


def scan(spark: SparkSession, inputs: str | list[str], out: str | None,
         fmt: str | None = None, fail_after_write: bool = False,
         engine: str = "auto") -> ScanResult:
    """Scan ``inputs`` (module docstring); ``out=None`` computes the report only.
    ``fail_after_write`` raises after the outputs are written but before the commit (a
    test of atomicity). ``engine``: "files" has Spark run tomkit's own engine on the files
    (``files.py``; local paths only), "arrow" the numpy engine on Spark's rows in
    ``mapInArrow`` (``arrow.py``, needs pandas), "sql" decides the properties with
    DataFrame windows and joins (``properties.py``); "auto" is files for local paths, else
    arrow. The verdicts are the same."""
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r} (one of {', '.join(ENGINES)})")
    from tomkit.checker.spark.session import apply_conf

    apply_conf(spark)
    paths = [inputs] if isinstance(inputs, str) else list(inputs)
    if engine == "auto":
        from tomkit.checker.spark.files import is_local

        engine = "files" if is_local(spark, paths + ([out] if out else [])) else "arrow"
    if engine == "files":
        return _scan_files(spark, paths, out, fmt, fail_after_write)
    ev = read_events(spark, paths, fmt)
    fmt, rejected_records = ev.fmt, ev.rejected
    if engine == "arrow":
        from tomkit.checker.spark.arrow import decide_arrow

        decided = decide_arrow(ev.events, fmt)
    else:
        decided = decide(ev.events)
    codes, firsts = decided.codes, decided.firsts  # checkpointed by decide
    try:
        exact = decided.exact
        if exact is None:
            flagged_rows = codes.filter(" or ".join(f"`{n}` >= {VIOLATED}" for n in NAMES)) \
                .select(*KEY, *NAMES).collect()
            flagged = {tuple(r[k] for k in KEY): wanted_codes(r, NAMES) for r in flagged_rows}
            exact = run_exact(spark, decided.events, flagged, fmt)
        exact = exact.persist()
        disagree = exact.filter(F.col("disagreement").isNotNull()).limit(5).collect()
        if disagree:
            d = disagree[0]
            raise EngineDisagreement(f"{d['property']} on trace {d['trace']}: {d['disagreement']}")
        verdicts = verdict_rows(codes, exact)
        bad_seq = decided.bad_seq.select(
            "src", F.lit(None).cast("long").alias("line"),
            F.col("pos").alias("row") if fmt == "parquet" else F.lit(None).cast("long")
            .alias("row"), F.lit("seq").alias("field"), "message")
        rejected = rejected_records.unionByName(bad_seq)
        deliveries = decided.deliveries
        if deliveries is None:
            deliveries = decided.events.filter(F.col("kind") == "deliver")
        summary = _summary(verdicts, firsts, deliveries, rejected_records, decided.bad_seq)
        listed = []
        if summary.rejected or summary.seq_traces:
            listed = [{"source": local_path(r["src"]), "line": r["line"], "row": r["row"],
                       "field": r["field"], "message": r["message"]}
                      for r in rejected.orderBy("src", "line", "row").limit(LISTED).collect()]
        doc = R.document(summary, paths, fmt, listed)
        text = R.to_text(doc)
        if out is not None:
            _write(spark, out, verdicts, rejected, doc, text, fail_after_write)
        return ScanResult(doc, text, doc["exit_code"], out)
    finally:
        codes.unpersist()
        firsts.unpersist()
        if decided.events is not None:
            decided.events.unpersist()


def _summary(verdicts: DataFrame, firsts: DataFrame, deliveries: DataFrame,
             rejected_records: DataFrame, bad_seq: DataFrame) -> Summary:
    """The report's aggregates, by Spark aggregations over the per-trace rows."""
    summary = Summary()
    # one aggregation gives both the verdict counts and, from any one property's rows,
    # the traces and events of each group
    for r in verdicts.groupBy("protocol", "config", "property", "verdict").agg(
            F.count(F.lit(1)).alias("count"), F.sum("events").alias("events")).collect():
        g = summary.group(r["protocol"], r["config"])
        g.counts[r["property"]][r["verdict"]] += r["count"]
        if r["property"] == NAMES[0]:
            g.traces += r["count"]
            g.events += int(r["events"])
    R.latency(summary, firsts)
    R.index_of_latency(summary, deliveries)
    summary.rejected = rejected_records.count()
    seq_stats = bad_seq.agg(F.count(F.lit(1)), F.sum("records")).first()
    summary.seq_traces, summary.seq_records = seq_stats[0], int(seq_stats[1] or 0)
    first = (verdicts.filter(F.col("verdict") == "violated").groupBy("property")
             .agg(F.min_by(F.struct(*KEY, "explanation"), F.struct(*KEY)).alias("x"))
             .collect())
    for r in first:
        x = r["x"]
        summary.add_example(r["property"], tuple(x[k] for k in KEY), x["explanation"])
    return summary


def _fs(spark: SparkSession, path: str):
    jvm = spark.sparkContext._jvm
    p = jvm.org.apache.hadoop.fs.Path(path)
    return p.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()), p


def _write_text(spark: SparkSession, path: str, text: str) -> None:
    fs, p = _fs(spark, path)
    stream = fs.create(p, True)
    try:
        stream.write(bytearray(text.encode()))
    finally:
        stream.close()


def _write(spark: SparkSession, out: str, verdicts: DataFrame, rejected: DataFrame,
           doc: dict, text: str, fail_after_write: bool) -> None:
    """Write everything under OUT.tmp-<id>, then rename it to OUT (module docstring)."""
    tmp = _tmp_name(out)
    try:
        verdicts.write.mode("error").parquet(f"{tmp}/verdicts")
        rejected.write.mode("error").parquet(f"{tmp}/rejected")
        _commit(spark, out, tmp, doc, text, fail_after_write)
    except BaseException:
        _delete(spark, tmp)
        raise


def _tmp_name(out: str) -> str:
    return f"{out.rstrip('/')}.tmp-{uuid.uuid4().hex[:12]}"


def _delete(spark: SparkSession, path: str) -> None:
    fs, p = _fs(spark, path)
    fs.delete(p, True)


def _commit(spark: SparkSession, out: str, tmp: str, doc: dict, text: str,
            fail_after_write: bool) -> None:
    """Add the report to the temporary output ``tmp``, then rename it to ``out``, moving
    an older ``out`` aside first and deleting it last."""
    out = out.rstrip("/")
    fs, tmp_p = _fs(spark, tmp)
    jvm = spark.sparkContext._jvm
    _write_text(spark, f"{tmp}/report.json", json.dumps(doc, indent=1) + "\n")
    _write_text(spark, f"{tmp}/report.txt", text)
    if fail_after_write:
        raise RuntimeError("failing on purpose before the commit")
    out_p = jvm.org.apache.hadoop.fs.Path(out)
    old_p = None
    if fs.exists(out_p):
        old_p = jvm.org.apache.hadoop.fs.Path(f"{out}.old-{uuid.uuid4().hex[:12]}")
        if not fs.rename(out_p, old_p):
            raise OSError(f"{out}: could not move the previous result aside")
    if not fs.rename(tmp_p, out_p):
        if old_p is not None:
            fs.rename(old_p, out_p)
        raise OSError(f"{out}: could not move the new result into place")
    if old_p is not None:
        fs.delete(old_p, True)


def _scan_files(spark: SparkSession, paths: list[str], out: str | None, fmt: str | None,
                fail_after_write: bool) -> ScanResult:
    """The files engine's scan: its tasks write the verdict and rejected parts straight
    into the temporary output, and their summaries make the report (``files.py``)."""
    from tomkit.checker.spark.files import NotLocal, is_local, list_files, run_files
    from tomkit.checker.spark.files_task import REJECTED_SCHEMA, VERDICT_SCHEMA

    if out is not None and not is_local(spark, [out]):
        raise NotLocal(f"{out}: the files engine writes local paths only; use --engine arrow")
    files = list_files(spark, paths)
    fmt = fmt or detect_format(spark, paths, (f.path for f in files))
    tmp = _tmp_name(out) if out is not None else None
    root = os.path.abspath(local_path(tmp)) if tmp is not None else None
    try:
        summary = run_files(spark, files, root)
        if summary.disagreements:
            raise EngineDisagreement(summary.disagreements[0])
        listed = [{"source": r["src"], "line": r["line"], "row": r["row"],
                   "field": r["field"], "message": r["message"]}
                  for r in summary.first_listed()]
        doc = R.document(summary, paths, fmt, listed)
        text = R.to_text(doc)
        if tmp is not None:
            for d, schema in (("verdicts", VERDICT_SCHEMA), ("rejected", REJECTED_SCHEMA)):
                if not os.listdir(os.path.join(root, d)):  # readable as an empty table
                    pq.write_table(schema.empty_table(), os.path.join(root, d, "part-0.parquet"))
            _commit(spark, out, tmp, doc, text, fail_after_write)
        return ScanResult(doc, text, doc["exit_code"], out)
    except BaseException:
        if tmp is not None:
            _delete(spark, tmp)
        raise


def build_parser(prog: str = "tomkit.checker.spark.job") -> argparse.ArgumentParser:
    from tomkit.checker.spark.options import add_arguments

    ap = argparse.ArgumentParser(prog=prog, description="Scan a trace data set with Spark.")
    add_arguments(ap)
    return ap


def run_args(args: argparse.Namespace) -> int:
    from tomkit.checker.spark.files import NotLocal
    from tomkit.checker.spark.read import SchemaMismatch
    from tomkit.checker.spark.session import get_session

    master = args.master
    if master is None and "spark.master" not in os.environ.get("PYSPARK_SUBMIT_ARGS", "") \
            and not os.environ.get("SPARK_ENV_LOADED"):
        master = "local[*]"
    spark = get_session(master, shuffle_partitions=args.shuffle_partitions)
    try:
        res = scan(spark, args.inputs, args.out, args.fmt, engine=args.engine)
    except (SchemaMismatch, FileNotFoundError, NotLocal) as e:
        print(f"tomkit scan: {e}", file=sys.stderr)
        return 2
    print(json.dumps(res.doc, indent=1) if args.json else res.text, end="")
    return res.exit_code


def main(argv: list[str] | None = None) -> int:
    return run_args(build_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
