"""Events per second of the Spark scan (``tomkit scan``) against a bare Spark scan of the
same data set and against the single-machine checker, on this machine.

For each size (traces of about 100 events: 4 processes, 20 messages, from
``traces.generate.bulk_table``, the fast synthetic path, plus 1 % planted faults; the
simulator would take hours for 10^6 traces) it prints, measured in the same run:

* the full scan (read, every default property, witnesses, verdicts and report written);
* the bare scan: read every column the scan reads and materialize it (``write.format
  ("noop")``: a plain ``count()`` of Parquet reads no column at all, so it is no baseline);
* the single-machine checker (``checker.engine.check_paths``) on the same files;

with the ratios scan / bare and scan / single. Targets (issue 5): scan at most 3x the
bare scan; cost linear in the number of traces (the last column: seconds per million
events, which should stay flat).

The scan runs once per engine of ``--engine`` (``files``: Spark schedules the files and
tomkit's engine checks them, ``arrow``: the numpy engine in ``mapInArrow``, ``sql``:
DataFrame windows and joins; a comma list measures each), and the engines' verdict counts
must agree. With ``--jsonl`` each engine also scans a JSON Lines copy of the data set
(columns ``jsonl s`` and ``jsonl/parquet``). Each engine first scans a small data set
once, so that the JVM's warm-up and the Python workers' start are not charged to the first
size.

With ``--cluster`` the same data sets are also scanned on a Spark standalone cluster
started on this machine (``checker/spark/cluster.py``: a master and two workers of one
core each, on loopback), in the same run, after ``--master``: rows ``cluster`` give the
scan, the bare read on the same cluster, and the last column the cluster's events per
second relative to ``--master``'s for the same engine and size. Targets (issue 17): the
default engine on the cluster within 2x of the bare read at 10^6 traces, and within 1.3x
of local[2]'s events per second. ``--repeat N`` measures every row N times.

    .venv/bin/python bench/scan_bench.py [--sizes 10000,100000,1000000] [--master local[2]]
        [--engine files,arrow,sql] [--no-warmup] [--jsonl] [--cluster] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time

from tomkit.checker.engine import check_paths, select
from tomkit.checker.properties import Options
from tomkit.checker.spark.cluster import LocalCluster
from tomkit.checker.spark.job import ENGINES, scan
from tomkit.checker.spark.session import get_session
from tomkit.model.dataset import part_files, write_bulk
from tomkit.traces.reader import read_table
from tomkit.traces.writer import write_table


def bare(spark, path: str) -> float:
    t = time.perf_counter()
    df = spark.read.parquet(path).select("trace", "process", "kind", "msg", "deps", "view",
                                         "members", "time", "seq", "_metadata.file_path",
                                         "_metadata.row_index")
    df.write.format("noop").mode("overwrite").save()
    return time.perf_counter() - t


def generated(data: str, n: int, seed: int) -> int:
    """Write the data set of ``n`` traces (1 % more planted faults) unless ``data`` holds it
    already (a --workdir kept from an earlier run); its number of records."""
    meta = os.path.join(data, "_generate.json")
    if os.path.exists(meta):
        with open(meta) as f:
            m = json.load(f)
        if (m.get("seed"), m.get("traces"), m.get("generator")) == \
                (seed, n + round(0.01 * n), "traces.generate.bulk_table"):
            return m["records"]
    return write_bulk(data, n, faulty=0.01, seed=seed)["records"]


def to_jsonl(src: str, dst: str) -> None:
    """The same data set as JSON Lines, file for file."""
    for f in part_files(src):
        out = os.path.join(dst, os.path.relpath(f, src))[: -len(".parquet")] + ".jsonl"
        os.makedirs(os.path.dirname(out), exist_ok=True)
        write_table(out, read_table(f), grouped=True)


def measure(spark, mode: str, engines: list[str], datas: dict[int, tuple[str, int]],
            work: str, args, base: dict | None, single_too: bool) -> dict:
    """One session's rows: per size, the bare read and each engine's scan; returns events
    per second by (engine, size). ``base``: those of --master, for the last column."""
    # one small scan per engine first: the JVM's JIT and the Python workers' imports are
    # paid once per session, not per data set
    if not args.no_warmup:
        for engine in engines:
            scan(spark, datas[0][0], os.path.join(work, f"warm-out-{engine}"), engine=engine)
    rates: dict = {}
    for n, (data, events) in sorted(datas.items()):
        if n == 0:
            continue
        bare(spark, data)  # warm up the JVM and the file cache
        single = float("nan")
        if single_too:
            t = time.perf_counter()
            check_paths(list(part_files(data)), select(None, Options()), Options())
            single = time.perf_counter() - t
        tb = bare(spark, data)
        counts = {}
        for engine in engines:
            t = time.perf_counter()
            res = scan(spark, data, os.path.join(work, f"out{n}-{engine}"), engine=engine)
            ts = time.perf_counter() - t
            assert res.doc["summary"]["events"] == events
            counts[engine] = [g["counts"] for g in res.doc["groups"]]
            rates[(engine, n)] = events / ts
            extra = ""
            if args.jsonl:
                t = time.perf_counter()
                rj = scan(spark, data + "-jsonl", os.path.join(work, f"outj{n}-{engine}"),
                          engine=engine)
                tj = time.perf_counter() - t
                if [g["counts"] for g in rj.doc["groups"]] != counts[engine]:
                    raise SystemExit(f"{engine}: JSON Lines and Parquet verdicts differ")
                extra += f" {tj:>8.1f} {tj / ts:>13.1f}"
            if base is not None:
                extra += f" {events / ts / base[(engine, n)]:>10.2f}"
            print(f"{mode:>9} {engine:>6} {n:>9,} {events:>11,} {ts:>8.1f} "
                  f"{events / ts:>10,.0f} {tb:>7.1f} {ts / tb:>9.1f} {single:>8.1f} "
                  f"{ts / single:>11.1f} {ts / events * 1e6:>11.1f}{extra}", flush=True)
        if len({repr(c) for c in counts.values()}) > 1:
            raise SystemExit(f"the engines' verdict counts differ at {n} traces")
    return rates


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default=None,
                    help="comma list of trace counts (default 10000,100000,1000000; "
                         "100000,1000000 with --cluster)")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--engine", default="files",
                    help="comma list of scan engines to measure: files, arrow, sql (default files)")
    ap.add_argument("--no-single", action="store_true", help="skip the single-machine run")
    ap.add_argument("--no-warmup", action="store_true",
                    help="skip the small warm-up scan per engine")
    ap.add_argument("--jsonl", action="store_true",
                    help="also scan a JSON Lines copy of each data set (column jsonl/parquet)")
    ap.add_argument("--cluster", action="store_true",
                    help="also scan on a standalone cluster of two one-core workers")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each row")
    ap.add_argument("--cluster-url", default=None,
                    help="with --cluster: use this running standalone cluster (spark://...) "
                         "instead of starting one")
    ap.add_argument("--workdir", default=None)
    args = ap.parse_args(argv)
    sizes = [int(x) for x in (args.sizes or ("100000,1000000" if args.cluster
                                             else "10000,100000,1000000")).split(",")]
    engines = [x.strip() for x in args.engine.split(",") if x.strip()]
    bad = [x for x in engines if x not in ENGINES]
    if bad or not engines:
        ap.error(f"--engine: unknown {', '.join(bad)} (known: {', '.join(ENGINES)})")
    work = args.workdir or tempfile.mkdtemp(prefix="scan-bench-")
    if args.cluster:  # the driver's services on loopback, as the cluster's
        os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    also = " and a standalone cluster" if args.cluster else ""
    print(f"seed {args.seed}, master {args.master}{also}, work dir {work}, "
          f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    print(f"{'mode':>9} {'engine':>6} {'traces':>9} {'events':>11} {'scan s':>8} {'ev/s':>10} "
          f"{'bare s':>7} {'scan/bare':>9} {'single s':>8} {'scan/single':>11} "
          f"{'s per 1M ev':>11}" + (f" {'jsonl s':>8} {'jsonl/parquet':>13}" if args.jsonl else "")
          + (f" {'ev/s / ' + args.master:>10}" if args.cluster else ""), flush=True)
    try:
        datas = {}
        for n in ([0] if not args.no_warmup else []) + sizes:
            data = os.path.join(work, f"d{n}")
            datas[n] = (data, generated(data, n or min(1000, min(sizes)), args.seed))
            if args.jsonl and n:
                to_jsonl(data, data + "-jsonl")
        # --master and the cluster take turns, so that both see the same machine (a shared
        # one's load changes over minutes); the cluster's daemons idle in between
        cluster = LocalCluster(os.path.join(work, "cluster"), workers=2, cores=1,
                               memory="2g").start() \
            if args.cluster and not args.cluster_url else None
        url = args.cluster_url or (cluster.url if cluster is not None else None)
        try:
            for rep in range(args.repeat):
                spark = get_session(args.master)
                base = measure(spark, args.master, engines, datas, work, args, None,
                               rep == 0 and not args.no_single)
                if url is not None:
                    spark.stop()
                    spark = get_session(url, conf={
                        "spark.executor.memory": "1g", "spark.ui.enabled": "false",
                        "spark.driver.host": "127.0.0.1",
                        "spark.driver.bindAddress": "127.0.0.1"})
                    measure(spark, "cluster", engines, datas, work, args, base, False)
                    spark.stop()
        finally:
            if cluster is not None:
                cluster.stop()
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
