"""The reference checks on the few traces that need them: witnesses and unsettled verdicts.

A trace whose detection code is VIOLATED (for its witness) or EXACT (not settled by the
SQL test: weak total order and global order outside the order-consistency filter) is
checked by the property's reference ``check`` from ``checker/properties``, exactly as
the single-machine engine does (``engine._record``), and the two must agree on a
violation. Violations are rare, so this is cheap: the events of flagged traces only are
taken trace by trace from the partitions that hold them (an RDD ``mapPartitions``, which
needs neither pandas nor Arrow UDFs) and checked on the executors, which therefore need
tomkit importable (docs/spark.md).
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterable, Iterator

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from tomkit.checker.properties import EXACT, VIOLATED, Options, properties
from tomkit.checker.spark.read import KEY

RESULT_SCHEMA = T.StructType([
    T.StructField("protocol", T.StringType()), T.StructField("config", T.StringType()),
    T.StructField("trace", T.StringType()), T.StructField("property", T.StringType()),
    T.StructField("verdict", T.StringType()), T.StructField("clause", T.StringType()),
    T.StructField("explanation", T.StringType()), T.StructField("witness", T.StringType()),
    T.StructField("disagreement", T.StringType()),
])
#: run_exact's rows: RESULT_SCHEMA and the trace's events (the verdict rows' count)
ROWS_SCHEMA = T.StructType([*RESULT_SCHEMA.fields, T.StructField("events", T.LongType())])
COLUMNS = ["process", "kind", "msg", "deps", "view", "members", "time", "seq", "src", "pos",
           "real_time", "x_slot", "x_join", "x_rate_max", "x_rate_avg", "x_rate_window",
           "x_rn"]


def local_path(src: str) -> str:
    """A file URI as people write it: file:/a/b -> /a/b (other schemes kept)."""
    if src.startswith("file://"):
        return src[len("file://"):]
    if src.startswith("file:"):
        return src[len("file:"):]
    return src


def check_trace(key: tuple, rows: Iterable[tuple], wanted: dict[str, int],
                fmt: str, options: Options = Options()) -> list[tuple]:
    """Build the trace from its rows and run the reference check of every wanted property."""
    from tomkit.checker.trace import Ev, Trace
    from tomkit.traces.errors import Location

    per: dict[str, list[tuple]] = {}
    for r in rows:
        per.setdefault(r[0], []).append(r)
    events: dict[str, list[Ev]] = {}
    for p, lst in per.items():
        lst.sort(key=lambda r: (-1 if r[7] is None else r[7], r[8], r[9]))
        evs = []
        for (proc, kind, msg, deps, view, members, time, _seq, src, pos, rt, slot, jn,
             rmax, ravg, rwin, rn) in lst:
            path = local_path(src)
            loc = Location(path, row=pos) if fmt == "parquet" else Location(path, line=pos)
            evs.append(Ev(proc, kind, msg,
                          tuple(deps) if deps is not None and kind == "send" else None,
                          view, tuple(members) if members is not None else None, time, loc,
                          rt, None if slot is None else math.floor(slot), jn is True,
                          reserve=(rmax, ravg, rwin, rn is True) if kind == "negotiate"
                          else None))
        events[p] = evs
    return check_wanted(key, Trace(key[2], events), wanted, options)


def check_wanted(key: tuple, trace, wanted: dict[str, int],
                 options: Options = Options()) -> list[tuple]:
    """Run the reference check of every wanted property on one trace: RESULT_SCHEMA rows,
    with a disagreement when the detection said violated and the check does not."""
    props = properties()
    out = []
    for name, code in wanted.items():
        res = props[name].check(trace, options)
        bad = None
        if code == VIOLATED and str(res.verdict) != "violated":
            bad = f"detect says violated, check says {res.verdict}"
        wit = json.dumps([w.to_dict() for w in res.witness]) if res.witness else None
        out.append((*key, name, str(res.verdict), res.clause, res.explanation or None, wit,
                    bad))
    return out


def run_exact(spark: SparkSession, events: DataFrame, codes: DataFrame, names: list[str],
              fmt: str, options: Options = Options()) -> DataFrame:
    """Results of the reference checks for the flagged (trace, property) pairs: those whose
    code in ``codes`` (KEY and a code column per name of ``names``) is VIOLATED or EXACT,
    as ROWS_SCHEMA (with the trace's events: the rows of ``events`` it has).
    ``events`` (KEY and COLUMNS) and ``codes`` are partitioned by trace alike, so the join
    keeps every trace in one partition: each partition's rows are sorted by trace and
    checked trace by trace as they come (no shuffle, and no list of flagged traces on the
    driver)."""
    flagged = codes.filter(" or ".join(f"`{n}` >= {VIOLATED}" for n in names)) \
        .select(*KEY, *(F.col(n).alias(f"_code{i}") for i, n in enumerate(names)))
    rows = events.join(flagged, KEY).sortWithinPartitions(*KEY).select(
        *KEY, *COLUMNS, *(f"_code{i}" for i in range(len(names))))
    k, c = len(KEY), len(COLUMNS)

    def per_partition(it: Iterator) -> Iterator[tuple]:
        for key, group in itertools.groupby(it, key=lambda r: tuple(r[:k])):
            rs = [tuple(r) for r in group]
            wanted = {n: code for n, code in zip(names, rs[0][k + c:])
                      if code in (VIOLATED, EXACT)}
            for r in check_trace(key, [r[k:k + c] for r in rs], wanted, fmt, options):
                yield (*r, len(rs))

    return spark.createDataFrame(rows.rdd.mapPartitions(per_partition), ROWS_SCHEMA)
