"""``tomkit scan``: the Spark engine from the command line (``job.py`` does the work).

Exit codes: 0 every property holds (unknowns allowed), 1 a property is violated, 2 bad
records were rejected (and nothing violated) or the input does not fit the format.
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import os
import sys
import urllib.parse

from tomkit.checker.spark.options import add_arguments

from .children import children, end_new

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
    bad = _bad_numbers(args) or _missing_local_input(args.inputs) or \
        _bad_out(getattr(args, "out", None), args.inputs)
    if bad:  # said now, not after a JVM has started
        print(f"tomkit scan: {bad}", file=sys.stderr)
        return 2
    from tomkit.traces.interrupt import add_note

    before = children()
    quiet = _QuietStop()
    logging.getLogger().addFilter(quiet)
    try:
        from tomkit.checker.spark.job import run_args

        return run_args(args)
    except KeyboardInterrupt as e:  # Ctrl-C or SIGTERM: --out is replaced only by a
        # complete result (checker/spark/commit.py), so what is there was there before
        if end_new(before):  # the JVM this scan started (module docstring of children)
            add_note(e, "Spark's JVM, started by this scan, was stopped")
        out = getattr(args, "out", None)
        if out:
            was = "left as it was" if os.path.exists(out) else "not made"
            add_note(e, f"{out} {was}: a scan replaces it only once complete")
        raise
    finally:
        logging.getLogger().removeFilter(quiet)


class _QuietStop(logging.Filter):
    """py4j logs a KeyboardInterrupt in a call to the JVM with its traceback, on the root
    logger (``logging.exception``): the command says the stop in one line itself."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != "KeyboardInterrupt while sending command."


def _bad_numbers(args: argparse.Namespace) -> str | None:
    """--shuffle-partitions 0 or -3 was taken: ignored by a scan in this process, a JVM's
    error after Spark's start in one with Spark."""
    if args.shuffle_partitions is not None and args.shuffle_partitions < 1:
        return f"--shuffle-partitions must be at least 1, got {args.shuffle_partitions}"
    return None


#: the names of trace files a scan reads (checker/spark/read.py's format_of)
SUFFIXES = (".parquet", ".pq", ".jsonl", ".json", ".ndjson", ".jsonl.gz", ".json.gz",
            ".ndjson.gz")


def _missing_local_input(inputs: list[str]) -> str | None:
    """A local input (no URL scheme, no Hadoop configuration that could make a bare path
    another file system's) that does not exist, or a local folder without one trace file
    below it (names starting with _ or . skipped, as Spark skips them); else None."""
    if any(os.environ.get(v) for v in ("HADOOP_CONF_DIR", "YARN_CONF_DIR")):
        return None
    for given in inputs:
        scheme = urllib.parse.urlsplit(given).scheme
        if scheme not in ("", "file"):
            continue
        path = urllib.parse.urlsplit(given).path if scheme else given
        if not os.path.exists(path):
            return f"{given}: no such file or folder"
        if os.path.isdir(path) and not any(
                f.lower().endswith(SUFFIXES) and not f.startswith(("_", "."))
                for top, dirs, files in os.walk(path)
                for f in files
                if not any(part.startswith(("_", "."))
                           for part in os.path.relpath(top, path).split(os.sep)
                           if part != ".")):
            return (f"{given}: no trace file (.parquet, .jsonl, ...) below it (names "
                    "starting with _ or . are skipped)")
    return None


#: files a scan's --out holds (checker/spark/job.py): a folder with one of them is a
#: scan's own, which a new scan may replace
SCAN_FILES = ("_SUCCESS", "report.json", "report.txt")


def _bad_out(out: str | None, inputs: list[str]) -> str | None:
    """A local --out the scan must not replace whole: a file (a trace, say), a folder of
    the user's own files, or one that holds an input (they were replaced, with no word);
    or a folder inside an input (the next scan of it read the verdicts as traces)."""
    if out == "":  # an unset shell variable (said "holds the input data" of the folder here)
        return "--out '': an empty name; give a folder"
    if out is None or urllib.parse.urlsplit(out).scheme not in ("", "file"):
        return None
    path = urllib.parse.urlsplit(out).path if "://" in out else out
    if os.path.isfile(path):
        return f"--out {out}: a file; --out takes a folder, which is replaced whole"
    here = os.path.realpath(path)
    for given in inputs:
        if urllib.parse.urlsplit(given).scheme in ("", "file"):
            source = os.path.realpath(urllib.parse.urlsplit(given).path
                                      if "://" in given else given)
            if source == here or source.startswith(here + os.sep):
                return (f"--out {out}: holds the input {given}, which it would replace; "
                        "give another folder")
            if here.startswith(source + os.sep):
                return (f"--out {out}: inside the input {given}, whose next scan would "
                        "read the verdicts as traces; give a folder outside it")
    if os.path.isdir(path) and os.listdir(path) and \
            not any(os.path.exists(os.path.join(path, f)) for f in SCAN_FILES):
        return (f"--out {out}: a folder that tomkit scan did not write (no report.json); "
                "it would be replaced whole: give a new folder")
    return None


def spark_installed() -> bool:
    """Whether pyspark (the `spark` extra) can be imported."""
    return importlib.util.find_spec("pyspark") is not None
