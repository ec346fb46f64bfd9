"""``tomkit scan``: the Spark engine from the command line (``job.py`` does the work).

Exit codes: 0 every property holds (unknowns allowed), 1 a property is violated, 2 bad
records were rejected (and nothing violated) or the input does not fit the format.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys

from tomkit.checker.spark.options import add_arguments

__all__ = ["add_parser", "run"]


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
    # pyspark is imported only when a scan runs, so that `tomkit` starts quickly and runs
    # without the `spark` extra
    if not spark_installed():
        print("tomkit scan: needs Spark, which is not installed: "
              "pip install 'tomkit[spark]' (or 'tomkit[all]')", file=sys.stderr)
        return 2
    from tomkit.checker.spark.job import run_args

    return run_args(args)


def spark_installed() -> bool:
    """Whether pyspark (the `spark` extra) can be imported."""
    return importlib.util.find_spec("pyspark") is not None
