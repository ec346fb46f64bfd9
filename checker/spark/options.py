"""The options of a scan, shared by ``tomkit scan`` and the job's own command line
(``job.py``, for spark-submit). Pure argparse: ``tomkit scan --help`` imports no Spark."""

from __future__ import annotations

import argparse

__all__ = ["ENGINES", "add_arguments"]

ENGINES = ("auto", "files", "arrow", "sql")


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
