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

    .venv/bin/python bench/scan_bench.py [--sizes 10000,100000,1000000] [--master local[2]]
        [--engine files,arrow,sql] [--no-warmup] [--jsonl]
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time

from tomkit.checker.engine import check_paths, select
from tomkit.checker.properties import Options
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


def to_jsonl(src: str, dst: str) -> None:
    """The same data set as JSON Lines, file for file."""
    for f in part_files(src):
        out = os.path.join(dst, os.path.relpath(f, src))[: -len(".parquet")] + ".jsonl"
        os.makedirs(os.path.dirname(out), exist_ok=True)
        write_table(out, read_table(f), grouped=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--engine", default="files",
                    help="comma list of scan engines to measure: files, arrow, sql (default files)")
    ap.add_argument("--no-single", action="store_true", help="skip the single-machine run")
    ap.add_argument("--no-warmup", action="store_true",
                    help="skip the small warm-up scan per engine")
    ap.add_argument("--jsonl", action="store_true",
                    help="also scan a JSON Lines copy of each data set (column jsonl/parquet)")
    ap.add_argument("--workdir", default=None)
    args = ap.parse_args(argv)
    sizes = [int(x) for x in args.sizes.split(",")]
    engines = [x.strip() for x in args.engine.split(",") if x.strip()]
    bad = [x for x in engines if x not in ENGINES]
    if bad or not engines:
        ap.error(f"--engine: unknown {', '.join(bad)} (known: {', '.join(ENGINES)})")
    work = args.workdir or tempfile.mkdtemp(prefix="scan-bench-")
    spark = get_session(args.master)
    print(f"seed {args.seed}, master {args.master}, work dir {work}")
    print(f"{'engine':>6} {'traces':>9} {'events':>11} {'scan s':>8} {'ev/s':>10} {'bare s':>7} "
          f"{'scan/bare':>9} {'single s':>8} {'scan/single':>11} {'s per 1M ev':>11}"
          + (f" {'jsonl s':>8} {'jsonl/parquet':>13}" if args.jsonl else ""))
    try:
        # one small scan per engine first: the JVM's JIT and the Python workers' imports are
        # paid once per session, not per data set
        if not args.no_warmup:
            warm = os.path.join(work, "warm")
            write_bulk(warm, min(1000, min(sizes)), faulty=0.01, seed=args.seed)
            for engine in engines:
                scan(spark, warm, os.path.join(work, f"warm-out-{engine}"), engine=engine)
        for n in sizes:
            data = os.path.join(work, f"d{n}")
            summary = write_bulk(data, n, faulty=0.01, seed=args.seed)
            events = summary["records"]
            bare(spark, data)  # warm up the JVM and the file cache
            tb = bare(spark, data)
            single = float("nan")
            if not args.no_single:
                t = time.perf_counter()
                check_paths(list(part_files(data)), select(None, Options()), Options())
                single = time.perf_counter() - t
            counts = {}
            if args.jsonl:
                to_jsonl(data, data + "-jsonl")
            for engine in engines:
                t = time.perf_counter()
                res = scan(spark, data, os.path.join(work, f"out{n}-{engine}"), engine=engine)
                ts = time.perf_counter() - t
                assert res.doc["summary"]["events"] == events
                counts[engine] = [g["counts"] for g in res.doc["groups"]]
                extra = ""
                if args.jsonl:
                    t = time.perf_counter()
                    rj = scan(spark, data + "-jsonl", os.path.join(work, f"outj{n}-{engine}"),
                              engine=engine)
                    tj = time.perf_counter() - t
                    if [g["counts"] for g in rj.doc["groups"]] != counts[engine]:
                        raise SystemExit(f"{engine}: JSON Lines and Parquet verdicts differ")
                    extra = f" {tj:>8.1f} {tj / ts:>13.1f}"
                print(f"{engine:>6} {n:>9,} {events:>11,} {ts:>8.1f} {events / ts:>10,.0f} "
                      f"{tb:>7.1f} {ts / tb:>9.1f} {single:>8.1f} {ts / single:>11.1f} "
                      f"{ts / events * 1e6:>11.1f}{extra}", flush=True)
            if len({repr(c) for c in counts.values()}) > 1:
                raise SystemExit(f"the engines' verdict counts differ at {n} traces")
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
