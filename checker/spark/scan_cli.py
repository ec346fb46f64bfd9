"""``tomkit scan``: the Spark engine from the command line (``job.py`` does the work).

``tomkit/cli.py`` wires :func:`add_parser` and :func:`run` in. Exit codes: 0 every
property holds (unknowns allowed), 1 a property is violated, 2 bad records were rejected
(and nothing violated) or the input does not fit the format.
"""

from __future__ import annotations

import argparse

__all__ = ["ENGINES", "add_arguments", "add_parser", "run"]

ENGINES = ("auto", "files", "arrow", "sql")  # (job.scan; here, so --help needs no Spark)


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("inputs", nargs="+", metavar="DIR",
                    help="data set directories or files (Parquet or JSON Lines; local, "
                         "hdfs://, s3a://, ...)")
    ap.add_argument("--out", metavar="DIR", help="write verdicts, rejected records and the "
                    "report here (replaced atomically)")
    ap.add_argument("--master", default=None,
                    help="Spark master (default: local[*], or spark-submit's)")
    ap.add_argument("--format", dest="fmt", choices=["parquet", "jsonl"],
                    help="input format (default: from the file names)")
    ap.add_argument("--json", action="store_true", help="print report.json instead of text")
    ap.add_argument("--engine", choices=ENGINES, default="auto",
                    help="how properties are decided: files (Spark runs tomkit's engine on "
                         "whole files; local or shared file systems only), arrow (the same "
                         "numpy engine on Spark's rows, in mapInArrow; any storage, needs "
                         "pandas), sql (DataFrame windows and joins); default auto: files when "
                         "the inputs and --out are local paths, else arrow")
    ap.add_argument("--shuffle-partitions", type=int, default=None,
                    help="spark.sql.shuffle.partitions (default: 4 per core in local mode)")


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    s = subparsers.add_parser(
        "scan", help="check a whole trace data set with Spark (local or cluster)",
        description="Decide every default safety property for every trace of a data set "
        "with Spark: local[*] on this machine, or a cluster with --master or spark-submit "
        "(see docs/spark.md). Writes one verdict per trace and property, the rejected "
        "records, and an aggregate report per protocol and configuration.")
    add_arguments(s)
    s.set_defaults(func=run)
    return s


def run(args: argparse.Namespace) -> int:
    # pyspark is imported only when a scan runs, so that `tomkit` starts quickly
    from tomkit.checker.spark.job import run_args

    return run_args(args)
