"""The options of a scan, shared by ``tomkit scan`` and the job's own command line
(``job.py``, for spark-submit). Pure argparse: ``tomkit scan --help`` imports no Spark."""

from __future__ import annotations

import argparse
import os

__all__ = ["ENGINES", "LAUNCHER", "add_arguments", "scan_options"]

ENGINES = ("files", "arrow", "sql")
#: the script spark-submit runs (``tomkit scan --launcher`` prints its path)
LAUNCHER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "launcher.py")


class _PrintLauncher(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None):
        print(LAUNCHER)
        parser.exit()


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
    ap.add_argument("--engine", choices=ENGINES, default="files",
                    help="how properties are decided: files (the default: Spark runs "
                         "tomkit's engine on whole files, read and written through pyarrow on "
                         "any store), arrow (the same numpy engine on Spark's rows, in "
                         "mapInArrow; needs pandas), sql (DataFrame windows and joins)")
    ap.add_argument("--shuffle-partitions", type=int, default=None,
                    help="spark.sql.shuffle.partitions (default: 4 per core in local mode)")
    ap.add_argument("--verbose", action="store_true",
                    help="Spark's own logs and console progress bar (default: errors only, "
                         "and tomkit's progress line)")
    # the options-taking properties, as tomkit check takes them (docs/qos-checking.md)
    ap.add_argument("--latency-bound", type=float, metavar="SECONDS",
                    help="bound of realtime-latency when --realtime-bound is not given")
    ap.add_argument("--realtime-bound", type=float, metavar="SECONDS",
                    help="real-time latency bound (realtime-latency, field real_time)")
    ap.add_argument("--slot", type=float, metavar="SECONDS",
                    help="slot length, to place packet records without x_slot (rate)")
    ap.add_argument("--rate-max", type=int, metavar="N", help="packets per slot (rate)")
    ap.add_argument("--rate-avg", type=int, metavar="N",
                    help="packets per --rate-window slots (rate)")
    ap.add_argument("--rate-window", type=int, metavar="K", help="window of --rate-avg, slots")
    ap.add_argument("--launcher", action=_PrintLauncher, nargs=0,
                    help="print the path of the script to give spark-submit, and exit")


def scan_options(args: argparse.Namespace):
    """The checker Options of a scan's command line (imports no Spark)."""
    from tomkit.checker.properties import Options

    return Options(latency_bound=getattr(args, "latency_bound", None),
                   realtime_bound=getattr(args, "realtime_bound", None),
                   slot=getattr(args, "slot", None), rate_max=getattr(args, "rate_max", None),
                   rate_avg=getattr(args, "rate_avg", None),
                   rate_window=getattr(args, "rate_window", None))
