"""The options of a scan, shared by ``tomkit scan`` and the job's own command line
(``job.py``, for spark-submit). Pure argparse: ``tomkit scan --help`` imports no Spark."""

from __future__ import annotations

import argparse
import os

from tomkit.checker.check_run import add_option_arguments, options_from_args

__all__ = ["ENGINES", "LAUNCHER", "add_arguments", "scan_options", "scanned_options"]

ENGINES = ("files", "arrow", "sql")
#: the script spark-submit runs (``tomkit scan --launcher`` prints its path)
LAUNCHER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "launcher.py")


class _PrintLauncher(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None):
        print(LAUNCHER)
        parser.exit()


def _data_format(text: str) -> str:
    """A value of --format; the report's forms, which other commands' --format names, are
    said to be --output-format's (argparse listed parquet and jsonl only)."""
    if text in ("text", "json"):
        raise argparse.ArgumentTypeError(
            f"{text!r}: a scan's --format names its input's data format (parquet, jsonl); "
            f"for the report as {text} give --output-format {text}")
    return text


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("inputs", nargs="+", metavar="DIR",
                    help="data set directories or files (Parquet or JSON Lines; local, "
                         "hdfs://, s3a://, ...)")
    ap.add_argument("--out", metavar="DIR", help="write verdicts, rejected records and the "
                    "report here (replaced atomically)")
    ap.add_argument("--master", default=None,
                    help="Spark master (default: local[*], or spark-submit's)")
    # --format names the input's data format here (it came first, and scripts give it);
    # the report's form is --output-format, which every command that reports a verdict
    # takes (docs/cli.md, "One JSON shape"); --json is kept as its short form
    ap.add_argument("--format", "--input-format", dest="fmt", type=_data_format,
                    choices=["parquet", "jsonl"],
                    help="input format (default: from the file names)")
    ap.add_argument("--output-format", choices=["text", "json"], default="text",
                    help="the report as text, or as report.json (one JSON object)")
    ap.add_argument("--json", dest="output_format", action="store_const", const="json",
                    help="the same as --output-format json")
    ap.add_argument("--engine", choices=ENGINES, default="files",
                    help="how properties are decided: files (the default: Spark runs "
                         "tomkit's engine on whole files, read and written through pyarrow on "
                         "any store), arrow (the same numpy engine on Spark's rows, in "
                         "mapInArrow; needs pandas), sql (DataFrame windows and joins)")
    ap.add_argument("--spark", action="store_true",
                    help="start Spark even for a small local data set (the files engine "
                         "scans local data sets up to 64 MB in this process, without Spark's "
                         "start)")
    ap.add_argument("--shuffle-partitions", type=int, default=None,
                    help="spark.sql.shuffle.partitions (default: 4 per core in local mode)")
    ap.add_argument("--verbose", action="store_true",
                    help="Spark's own logs and console progress bar (default: errors only, "
                         "and tomkit's progress line)")
    # the options of the properties the scan decides, as each property declares them
    # (checker/properties/base.py's Option; the flags as tomkit check's)
    add_option_arguments(ap, scanned_options())
    ap.add_argument("--launcher", action=_PrintLauncher, nargs=0,
                    help="print the path of the script to give spark-submit, and exit")


def scanned_options() -> list[str]:
    """The options the properties decided by a scan read (``Property.scan``), in the
    order of ``tomkit check``'s flags."""
    from tomkit.checker.properties import declared_options, properties

    read = {n for p in properties().values() if p.scan for n in p.option_names()}
    return [n for n in declared_options() if n in read]


def scan_options(args: argparse.Namespace):
    """The checker Options of a scan's command line (imports no Spark); UsageError (a
    ValueError) naming the flag, as ``tomkit check`` does."""
    return options_from_args(args)
