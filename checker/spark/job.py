"""The scan job: read a data set, decide every default property per trace, write the results.

Entry points: :func:`scan` (used by ``tomkit scan`` and tests) and :func:`main`, which
``tomkit scan`` and the launcher script for ``spark-submit`` (``launcher.py``) run:

    spark-submit --master URL --py-files tomkit.whl "$(tomkit scan --launcher)" DIR --out OUT

Output, replaced atomically (``commit.py``: written into a staging directory beside it,
marked complete, then installed; a killed run's leftovers are put right by the next run):

* ``verdicts/`` Parquet, one row per trace and property: protocol, config, trace,
  property, verdict (holds / violated / unknown), clause, explanation (the reason when
  unknown), witness (JSON list of witness events with file and row or line), events.
* ``rejected/`` Parquet: every bad record (source, line or row, field, message), and one
  row per trace rejected for its ``seq`` (all its records count as rejected).
* ``report.json`` and ``report.txt``: the aggregate report (``report.py``).
* ``_SUCCESS``: written last; on object stores a reader takes ``OUT`` as complete only
  when it exists.

Exit codes as ``tomkit check``: 1 a property is violated; else 2 records were rejected;
else 0.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import urllib.parse
from dataclasses import dataclass
from functools import reduce
from typing import Any

import pyarrow.parquet as pq
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from tomkit.checker.engine import EngineDisagreement
from tomkit.checker.properties import HOLDS, UNKNOWN, Options
from tomkit.checker.spark import report as R
from tomkit.checker.spark.commit import ArrowTree, HadoopTree, Tree, commit, recover, staging_name
from tomkit.checker.spark.exact import local_path, run_exact
from tomkit.checker.spark.options import ENGINES, scan_options
from tomkit.checker.spark.progress import Progress
from tomkit.checker.spark.properties import FACTS, NAMES, decide, reason_column
from tomkit.checker.spark.read import KEY, detect_format, read_events
from tomkit.checker.spark.summary import LISTED, Summary


@dataclass
class ScanResult:
    doc: dict[str, Any]
    text: str
    exit_code: int
    out: str | None


def verdict_rows(codes: DataFrame, exact: DataFrame, options: Options = Options()) -> DataFrame:
    """One row per trace and property: from the detection codes where they settle it
    (holds, unknown with its reason), else the exact result (``exact.ROWS_SCHEMA``: every
    flagged pair has one). A union, not a join: both halves are rows of their own, so the
    query needs no broadcast of the exact results (a job of its own in every query that
    reads the verdicts) and no hash join to plan."""
    stack = ", ".join(f"'{n}', `{n}`" for n in NAMES)
    facts = [c for c in FACTS.values() if c in codes.columns]
    long = codes.select(*KEY, "events", *facts,
                        F.expr(f"stack({len(NAMES)}, {stack}) as (property, code)"))
    reason = F.lit(None).cast("string")
    for n in NAMES:
        reason = F.when(F.col("property") == n, reason_column(n, options, facts)
                        ).otherwise(reason)
    settled = long.filter(F.col("code").isin(HOLDS, UNKNOWN)).select(
        *KEY, "property",
        F.when(F.col("code") == HOLDS, F.lit("holds")).otherwise(F.lit("unknown"))
        .alias("verdict"), F.lit(None).cast("string").alias("clause"),
        F.when(F.col("code") == UNKNOWN, reason).alias("explanation"),
        F.lit(None).cast("string").alias("witness"), "events")
    return settled.unionByName(exact.select(*settled.columns))


def scan(spark: SparkSession, inputs: str | list[str], out: str | None,
         fmt: str | None = None, fail_after_write: bool = False,
         engine: str = "files", progress: Progress | None = None,
         options: Options = Options()) -> ScanResult:
    """Scan ``inputs`` (module docstring); ``out=None`` computes the report only.
    ``fail_after_write`` raises after the outputs are written but before the commit (a
    test of atomicity). ``engine``: "files" (the default) has Spark run tomkit's own engine
    on the files (``files.py``; any store pyarrow opens), "arrow" the numpy engine on
    Spark's rows in ``mapInArrow`` (``arrow.py``, needs pandas), "sql" decides the
    properties with DataFrame windows and joins (``properties.py``). The verdicts are the
    same. ``progress``: where to report progress (None: nowhere). ``options``: the bounds of
    the options-taking properties (realtime-latency, rate), as ``tomkit check`` takes them."""
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r} (one of {', '.join(ENGINES)})")
    if spark is None and engine != "files":
        raise ValueError(f"the {engine} engine needs a Spark session")
    from tomkit.checker.spark.session import apply_conf, engine_conf

    if spark is not None:
        apply_conf(spark)
    paths = [inputs] if isinstance(inputs, str) else list(inputs)
    progress = progress or Progress(spark, enabled=False)
    if engine == "files":
        return _scan_files(spark, paths, out, fmt, fail_after_write, progress, options)
    tree = None
    if out is not None:  # before anything else: put right what a killed run left
        tree = HadoopTree(spark, out)
        if tree.local and "://" not in out:
            # a relative name is the working directory's (as for the files engine), not
            # that of a JVM started elsewhere
            out = os.path.abspath(out)
        recover(tree, out)
    with progress, engine_conf(spark, engine):
        res = _scan_spark(spark, paths, out, fmt, fail_after_write, engine, tree, options)
    progress.finish(None, res.doc["summary"]["events"])
    return res


def _scan_spark(spark: SparkSession, paths: list[str], out: str | None, fmt: str | None,
                fail_after_write: bool, engine: str, tree: Tree | None,
                options: Options = Options()) -> ScanResult:
    """The arrow and sql engines' scan: Spark reads, decides and writes."""
    ev = read_events(spark, paths, fmt)
    fmt, rejected_records = ev.fmt, ev.rejected
    if engine == "arrow":
        from tomkit.checker.spark.arrow import decide_arrow

        decided = decide_arrow(ev.events, fmt, options)
    else:
        decided = decide(ev.events, options)
    codes, firsts = decided.codes, decided.firsts  # checkpointed by decide
    exact = None
    try:
        exact = decided.exact
        if exact is None:
            exact = run_exact(spark, decided.events, codes, NAMES, fmt, options)
        exact = exact.persist()
        verdicts = verdict_rows(codes, exact, options)
        bad_seq = decided.bad_seq.select(
            "protocol", "config", "records", "src", F.lit(None).cast("long").alias("line"),
            F.col("pos").alias("row") if fmt == "parquet" else F.lit(None).cast("long")
            .alias("row"), F.lit("seq").alias("field"), "message")
        rejected = rejected_records.unionByName(bad_seq.select(*rejected_records.columns))
        deliveries = decided.deliveries
        if deliveries is None:
            deliveries = decided.events.filter(F.col("kind") == "deliver")
        summary, listed, disagreement = _summary(verdicts, firsts, deliveries,
                                                 rejected_records, bad_seq, exact)
        if disagreement is not None:
            raise EngineDisagreement(disagreement)
        doc = R.document(summary, paths, fmt, listed)
        text = R.to_text(doc)
        if out is not None:
            _write(tree, out, verdicts, rejected, doc, text, fail_after_write)
        return ScanResult(doc, text, doc["exit_code"], out)
    finally:
        if exact is not None:  # the session may run more scans
            exact.unpersist()
        decided.release()


def _summary(verdicts: DataFrame, firsts: DataFrame, deliveries: DataFrame,
             rejected_records: DataFrame, bad_seq: DataFrame, exact: DataFrame
             ) -> tuple[Summary, list[dict], str | None]:
    """The report's aggregates, its first LISTED rejected records (``bad_seq``: the
    traces rejected for seq, one rejected row each with protocol, config, records) and
    the first disagreement of a reference check with the detection in ``exact`` (None if
    none), by ONE Spark aggregation over a union of what each needs: per group of protocol
    and configuration the verdict counts and events, each property's first violated trace
    with its explanation, the latency histogram, the index-of-latency counts, the
    rejected records and traces, the disagreements. One shuffle: an aggregation of each's
    own is two jobs, and on a small data set jobs are what a scan costs; the
    disagreements are found in the same job (before anything is written)."""
    ex = F.struct(*KEY, "explanation")
    rej = F.struct("src", "line", "row", "field", "message")
    odd = F.struct(*KEY, F.concat("property", F.lit(" on trace "), "trace", F.lit(": "),
                                  "disagreement").alias("explanation"))
    parts = [
        # any one property's rows give each group's traces and events
        _part(verdicts, "verdict", a="property", b="verdict", v="events", x=ex),
        _part(R.latencies(firsts), "latency", c="s", d="k", v="lat"),
        _part(deliveries.filter(F.col("iol").isNotNull()), "iol", c="iol"),
        _part(rejected_records, "rejected", r=rej, key=False),
        _part(bad_seq, "seq", v="records", r=rej),
        _part(exact.filter(F.col("disagreement").isNotNull()), "disagree", x=odd),
    ]
    rows = reduce(DataFrame.unionByName, parts).groupBy(
        "part", "protocol", "config", "a", "b", "c", "d").agg(
        F.count(F.lit(1)).alias("n"), F.sum("v").alias("total"), F.min("v").alias("lo"),
        F.max("v").alias("hi"),
        F.min_by("x", F.struct("x.protocol", "x.config", "x.trace")).alias("x"),
        F.min_by("r", F.struct("r.src", "r.line", "r.row"), LISTED).alias("r")).collect()
    summary, listed, odd_ones = Summary(), [], []
    for r in rows:
        part = r["part"]
        if part == "disagree":
            x = r["x"]
            odd_ones.append(((x["protocol"], x["config"], x["trace"]), x["explanation"]))
            continue
        if part in ("rejected", "seq"):
            listed += r["r"] or []
            if part == "rejected":
                summary.rejected += r["n"]
            else:
                summary.seq_traces += r["n"]
                summary.seq_records += int(r["total"])
            continue
        g = summary.group(r["protocol"], r["config"])
        if part == "verdict":
            g.counts[r["a"]][r["b"]] += r["n"]
            if r["a"] == NAMES[0]:
                g.traces += r["n"]
                g.events += int(r["total"])
            if r["b"] == "violated":
                x = r["x"]
                summary.add_example(r["a"], tuple(x[k] for k in KEY), x["explanation"])
        elif part == "latency":
            g.add_bucket(int(r["c"]), int(r["d"]), r["n"], r["total"], r["lo"], r["hi"])
        else:
            g.iol[r["c"]] = g.iol.get(r["c"], 0) + r["n"]
    # as Spark orders them: by source, line and row, nulls first
    listed.sort(key=lambda x: (x["src"], x["line"] is not None, x["line"] or 0,
                               x["row"] is not None, x["row"] or 0))
    return summary, [{"source": local_path(x["src"]), "line": x["line"], "row": x["row"],
                      "field": x["field"], "message": x["message"]} for x in listed[:LISTED]
                     ], min(odd_ones)[1] if odd_ones else None


def _part(df: DataFrame, name: str, a: str | None = None, b: str | None = None,
          c: str | None = None, d: str | None = None, v: str | None = None,
          x: Column | None = None, r: Column | str | None = None, key: bool = True
          ) -> DataFrame:
    """``df`` as rows of ``_summary``'s union: its name, its group (protocol and
    configuration, if ``key``), keys ``a`` ``b`` (strings) ``c`` ``d`` (numbers), the
    value ``v``, an example ``x`` and a rejected record ``r``."""

    def col(name: str | Column | None, dt: str) -> Column:
        if name is None:
            return F.lit(None).cast(dt)
        return (F.col(name) if isinstance(name, str) else name).cast(dt)

    return df.select(
        F.lit(name).alias("part"),
        *(col(k if key else None, "string").alias(k) for k in ("protocol", "config")),
        col(a, "string").alias("a"), col(b, "string").alias("b"),
        col(c, "double").alias("c"), col(d, "double").alias("d"),
        col(v, "double").alias("v"),
        col(x, "struct<protocol:string,config:string,trace:string,explanation:string>")
        .alias("x"),
        col(r, "struct<src:string,line:bigint,row:bigint,field:string,message:string>")
        .alias("r"))


def _write(tree: Tree, out: str, verdicts: DataFrame, rejected: DataFrame,
           doc: dict, text: str, fail_after_write: bool) -> None:
    """Spark writes the tables into a staging directory, then the commit (``commit.py``)."""
    staging = staging_name(out)
    try:
        verdicts.write.mode("error").parquet(f"{staging}/verdicts")
        rejected.write.mode("error").parquet(f"{staging}/rejected")
        _finish(tree, out, staging, doc, text, fail_after_write)
    except BaseException:
        _after_failure(tree, out)
        raise


def _finish(tree: Tree, out: str, staging: str, doc: dict, text: str,
            fail_after_write: bool) -> None:
    """Add the report to the staging directory and commit it."""
    tree.write(f"{staging}/report.json", (json.dumps(doc, indent=1) + "\n").encode())
    tree.write(f"{staging}/report.txt", text.encode())
    if fail_after_write:
        raise RuntimeError("failing on purpose before the commit")
    commit(tree, out, staging)


def _after_failure(tree: Tree, out: str) -> None:
    """A failed run leaves a complete result: its own staging directory is deleted, or
    installed if the failure came inside the commit, once it was complete."""
    with contextlib.suppress(Exception):  # the store may be what failed: keep that error
        recover(tree, out)


def _scan_files(spark: SparkSession | None, paths: list[str], out: str | None, fmt: str | None,
                fail_after_write: bool, progress: Progress,
                options: Options = Options()) -> ScanResult:
    """The files engine's scan: its tasks write the verdict and rejected parts straight
    into the staging directory, and their summaries make the report (``files.py``)."""
    from tomkit.checker.spark.files import list_files, run_files
    from tomkit.checker.spark.files_task import REJECTED_SCHEMA, VERDICT_SCHEMA, Target
    from tomkit.checker.spark.storage import hadoop_settings, qualify, store_of

    if spark is None:  # in this process: local paths only (small_local)
        roots = [_local_path(p) for p in paths]
        dest = _local_path(out) if out is not None else None
        settings: dict[str, str] = {}
    else:
        roots = [qualify(spark, p) for p in paths]
        dest = qualify(spark, out) if out is not None else None
        settings = hadoop_settings(spark, roots + ([dest] if dest else []))
    target, tree = None, None
    if dest is not None:  # before anything else: put right what a killed run left
        st = store_of(dest, settings)
        tree = ArrowTree(st.fs, st.renames_atomically)
        recover(tree, st.path(dest))
    files = list_files(roots, settings)
    fmt = fmt or detect_format(spark, paths, (f.path for f in files))
    if tree is not None:
        target = Target(st, staging_name(st.path(dest)))
    try:
        with progress:
            summary = run_files(spark, files, target, progress, options)
        if summary.disagreements:
            raise EngineDisagreement(summary.disagreements[0])
        listed = [{"source": r["src"], "line": r["line"], "row": r["row"],
                   "field": r["field"], "message": r["message"]}
                  for r in summary.first_listed()]
        doc = R.document(summary, paths, fmt, listed)
        text = R.to_text(doc)
        if target is not None:
            for d, schema in (("verdicts", VERDICT_SCHEMA), ("rejected", REJECTED_SCHEMA)):
                if not tree.files(f"{target.root}/{d}"):  # readable as an empty table
                    pq.write_table(schema.empty_table(), target.part(d, "0"),
                                   filesystem=st.fs)
            _finish(tree, st.path(dest), target.root, doc, text, fail_after_write)
        progress.finish(len(files), doc["summary"]["events"])
        return ScanResult(doc, text, doc["exit_code"], out)
    except BaseException:
        if tree is not None:
            _after_failure(tree, st.path(dest))
        raise


def _local_path(path: str) -> str:
    """A local path or ``file:`` URI as an absolute path."""
    if path.startswith("file:"):
        return os.path.abspath(urllib.parse.unquote(urllib.parse.urlsplit(path).path))
    return os.path.abspath(path)


def small_local(inputs: list[str], out: str | None) -> bool:
    """May a files scan of ``inputs`` run in this process, without Spark? When every path
    is on the local file system without asking Hadoop (no scheme, or ``file:``; and no
    Hadoop configuration in the environment, which could make a bare path HDFS) and the
    data files come to at most ``files.IN_PROCESS_BYTES``. Missing inputs go to Spark's
    path, which reports them."""
    from tomkit.checker.spark.files import IN_PROCESS_BYTES

    size = local_size(inputs, out)
    return size is not None and size <= IN_PROCESS_BYTES


def local_size(inputs: list[str], out: str | None) -> int | None:
    """The bytes of the data files of ``inputs`` when they and ``out`` are on the local file
    system without asking Hadoop (``small_local``); else, or if an input is missing, None."""
    from tomkit.checker.spark.files import list_files

    if any(os.environ.get(v) for v in ("HADOOP_CONF_DIR", "YARN_CONF_DIR")):
        return None
    paths = list(inputs) + ([out] if out is not None else [])
    if any(urllib.parse.urlsplit(p).scheme not in ("", "file") for p in paths):
        return None
    try:
        files = list_files([_local_path(p) for p in inputs])
    except (FileNotFoundError, OSError):
        return None
    return sum(f.size for f in files)


#: a small local data set on Spark gets a shuffle partition per this many bytes of files
#: (at least one, at most the session's default): a task per partition and stage costs
#: more than its share of a few megabytes
BYTES_PER_PARTITION = 16 << 20


def build_parser(prog: str = "tomkit.checker.spark.job") -> argparse.ArgumentParser:
    from tomkit.checker.spark.options import add_arguments

    ap = argparse.ArgumentParser(prog=prog, description="Scan a trace data set with Spark.")
    add_arguments(ap)
    return ap


def run_args(args: argparse.Namespace) -> int:
    from tomkit.checker.pandas_guard import lift as lift_pandas
    from tomkit.checker.spark.files import IN_PROCESS_BYTES
    from tomkit.checker.spark.read import SchemaMismatch
    from tomkit.checker.spark.session import (
        JvmStderr,
        class_archive,
        get_session,
        silent_exit,
        under_spark_submit,
    )
    from tomkit.checker.spark.storage import StoreError

    try:  # before a Spark session starts: a bad option costs no JVM
        options = scan_options(args)
    except ValueError as e:
        sys.stderr.write(f"tomkit scan: {e}\n")
        return 2
    master = args.master
    if master is None and "spark.master" not in os.environ.get("PYSPARK_SUBMIT_ARGS", "") \
            and not under_spark_submit():
        master = "local[*]"
    spark, archive = None, None
    local = master is not None and master.startswith("local")
    size = local_size(args.inputs, args.out) if local else None
    small = size is not None and size <= IN_PROCESS_BYTES
    if not (args.engine == "files" and not args.spark and small):
        lift_pandas()  # pyspark's driver converts through pandas
        partitions = args.shuffle_partitions
        if small and partitions is None:
            partitions = max(1, -(-size // BYTES_PER_PARTITION))
        # a small local data set: a short run, where the JVM's start and warm-up are most
        # of the cost (docs/spark.md, "Which engine")
        # a class archive only for a JVM started here, for this run alone
        if local and not under_spark_submit() and SparkSession.getActiveSession() is None:
            archive = class_archive(args.engine)
        spark = get_session(master, shuffle_partitions=partitions, verbose=args.verbose,
                            quick_start=small, archive=archive)
    err = JvmStderr(spark.sparkContext._jvm) if under_spark_submit() else sys.stderr
    try:
        res = scan(spark, args.inputs, args.out, args.fmt, engine=args.engine,
                   progress=Progress(spark, stream=err), options=options)
    except (SchemaMismatch, FileNotFoundError, StoreError, OSError) as e:
        # bad input, or a store that cannot be reached (pyarrow's I/O errors are OSErrors)
        err.write(f"tomkit scan: {e}\n")
        err.flush()
        return 2
    print(json.dumps(res.doc, indent=1) if args.output_format == "json" else res.text,
          end="", flush=True)
    if under_spark_submit() and not args.verbose:
        silent_exit(spark.sparkContext._jvm)
    if archive is not None:  # the first run with $TOMKIT_SPARK_CDS: its JVM writes it
        archive.adopt(spark)
    return res.exit_code


def main(argv: list[str] | None = None) -> int:
    return run_args(build_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
