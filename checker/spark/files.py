"""The files engine: Spark schedules the data set's files, tomkit's own engine checks them.

``tomkit scan --engine files``, the default (``auto``) for paths on the local file system. The
other engines hand every event through Spark's row format: the ``sql`` engine into windows
and joins, the ``arrow`` engine into ``mapInArrow``, whose JVM-side Arrow writer alone costs
5-8 times a bare Spark read (measured). Here events never cross into the JVM, and neither
do the results: the driver lists the files and packs them into groups; Spark runs one task
per group (``files_task.py``), which checks its files with tomkit's engine, writes their
verdict and rejected rows as Parquet parts of the scan's temporary output, and returns per
file a summary (``summary.py``: the report's aggregates) and the hashes of its traces'
keys. The report is the merged summaries: one Spark job in all.

Traces that span files. A first-pass task checks each file on its own, and a file need
not hold whole traces (one log per process is common). So the driver looks for key hashes
that more than one file returned; files that share one are joined into connected sets;
their first-pass parts and summaries are dropped, and a second pass checks each set as
one input (its records merged by trace). A hash collision between two different traces
only joins two files needlessly: checked together, a trace that one file holds whole gets
the same verdict. Data sets written by tomkit keep each trace in one file, and the second
pass is then empty.

Limits: tasks open the files and write the output by local path, so every executor must
see both under the same path (local mode, NFS, a mounted bucket). For ``hdfs://``,
``s3a://`` and other schemes use ``--engine arrow`` (docs/spark.md).
"""

from __future__ import annotations

import os
import urllib.parse

import numpy as np
from pyspark.sql import SparkSession

from tomkit.checker.spark.files_task import DataFile, check_together, iter_groups
from tomkit.checker.spark.read import PARTITIONS, SchemaMismatch, data_files
from tomkit.checker.spark.summary import Summary

__all__ = ["DataFile", "NotLocal", "is_local", "list_files", "plan_groups", "run_files"]

#: a group of files is about this share of the data set per core, for balance
GROUPS_PER_CORE = 4
MIN_GROUP_BYTES = 1 << 20


class NotLocal(ValueError):
    """An input the files engine cannot open by path."""


def is_local(spark: SparkSession, paths: list[str]) -> bool:
    """Are all ``paths`` on the local file system (``file:`` or no scheme)?"""
    jvm = spark.sparkContext._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    for p in paths:
        path = jvm.org.apache.hadoop.fs.Path(p)
        if path.getFileSystem(conf).makeQualified(path).toUri().getScheme() != "file":
            return False
    return True


def list_files(spark: SparkSession, paths: list[str]) -> list[DataFile]:
    """Every data file below ``paths``, skipping names that start with ``_`` or ``.`` (as
    Spark does), with its partition values (``protocol=P/config=C`` below the given root,
    unescaped as Spark does; "" when absent)."""
    out = []
    for root, st, below in data_files(spark, paths):
        scheme = root.toUri().getScheme()
        if scheme != "file":
            raise NotLocal(f"{root.toString()}: the files engine reads local paths only "
                           f"(scheme {scheme}); use --engine arrow")
        part = {}
        for x in below[:-1]:
            k, eq, v = x.partition("=")
            if eq and k in PARTITIONS:
                part[k] = urllib.parse.unquote(v)
        out.append(DataFile(st.getPath().toUri().getPath(), part.get("protocol", ""),
                            part.get("config", ""), int(st.getLen())))
    if not out:
        raise FileNotFoundError(f"{', '.join(paths)}: no data file found")
    return sorted(out, key=lambda f: f.path)


def plan_groups(files: list[DataFile], parallelism: int) -> list[list[int]]:
    """Files (indices) per task: the largest first, packed to about 1/GROUPS_PER_CORE of the
    data per core, so that tasks are even and small files do not each cost a task."""
    total = sum(f.size for f in files)
    target = max(total // max(GROUPS_PER_CORE * parallelism, 1), MIN_GROUP_BYTES)
    groups: list[list[int]] = []
    size = 0
    for i in sorted(range(len(files)), key=lambda i: (-files[i].size, files[i].path)):
        if not groups or size >= target:
            groups.append([])
            size = 0
        groups[-1].append(i)
        size += files[i].size
    return groups


def run_files(spark: SparkSession, files: list[DataFile], root: str | None) -> Summary:
    """Check ``files`` (``list_files``), writing the verdict and rejected parts under
    ``root`` (``verdicts/``, ``rejected/``; None: write nothing), and return the report's
    Summary (module docstring). A Parquet file whose columns do not fit the format stops
    the scan (``SchemaMismatch``), as the other engines' schema check does."""
    sc = spark.sparkContext
    if root is not None:
        for d in ("verdicts", "rejected"):
            os.makedirs(os.path.join(root, d))
    plan = plan_groups(files, sc.defaultParallelism)
    bfiles, bplan = sc.broadcast(files), sc.broadcast(plan)
    sc.setJobDescription(f"tomkit scan: {len(files)} file(s)")
    first = sc.parallelize(range(len(plan)), len(plan)).mapPartitions(
        lambda gs: iter_groups(gs, bplan.value, bfiles.value, root)).collect()
    bad = sorted(m for _, s, _ in first for m in s.mismatches)
    if bad:
        more = f" (and {len(bad) - 1} more file(s))" if len(bad) > 1 else ""
        raise SchemaMismatch(f"{bad[0]}{more}: the Parquet file's columns do not fit "
                             "trace format v1")
    sets = shared(dict((i, h) for i, _, h in first))
    dirty = {i for fis in sets for i in fis}
    summary = Summary()
    for i, s, _ in first:
        if i not in dirty:
            summary.merge(s)
    if sets:
        for i in dirty if root is not None else ():  # checked again, together
            for d in ("verdicts", "rejected"):
                part = os.path.join(root, d, f"part-f{i:06d}.parquet")
                if os.path.exists(part):
                    os.remove(part)
        bsets = sc.broadcast(sets)
        sc.setJobDescription(f"tomkit scan: {len(sets)} set(s) of files that share traces")
        again = sc.parallelize(range(len(sets)), len(sets)).map(
            lambda c: check_together([bfiles.value[i] for i in bsets.value[c]],
                                     f"s{c:06d}", root)).collect()
        for s in again:
            summary.merge(s)
    return summary


def shared(hashes: dict[int, np.ndarray]) -> list[list[int]]:
    """The sets of files (indices) connected by a key hash that more than one file holds."""
    h = np.concatenate([np.zeros(0, np.uint64), *hashes.values()])
    fi = np.concatenate([np.zeros(0, np.int64)] + [np.full(len(v), i, np.int64)
                                                   for i, v in hashes.items()])
    order = np.argsort(h, kind="stable")
    h, fi = h[order], fi[order]
    same = np.flatnonzero(h[1:] == h[:-1])
    pairs = np.unique(np.stack([fi[same], fi[same + 1]], axis=1), axis=0) if len(same) \
        else np.zeros((0, 2), np.int64)
    parent: dict[int, int] = {}

    def find(x: int) -> int:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in pairs.tolist():
        if a != b:
            parent[find(a)] = find(b)
    sets: dict[int, list[int]] = {}
    for x in list(parent):
        sets.setdefault(find(x), []).append(x)
    return sorted(sorted(v) for v in sets.values() if len(v) > 1)
