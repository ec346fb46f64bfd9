"""The files engine: Spark schedules the data set's files, tomkit's own engine checks them.

``tomkit scan``'s default engine, on every store (``storage.py``: local disks, HDFS, S3,
GCS, Azure). The other engines hand every event through Spark's row format: the ``sql``
engine into windows and joins, the ``arrow`` engine into ``mapInArrow``, whose JVM-side
Arrow writer alone costs 5-8 times a bare Spark read (measured). Here events never cross
into the JVM, and neither do the results: the driver lists the files (through
``pyarrow.fs``, so no Hadoop connector is needed) and packs them into groups; Spark runs
one task per group (``files_task.py``), which reads its files through ``pyarrow.fs``,
checks them with tomkit's engine, writes their verdict and rejected rows as Parquet parts
of the scan's staging directory (``commit.py``) on the output's store, and returns per
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

On a cluster every executor must reach the inputs and the output under the names the
driver gives: a shared store (HDFS, an object store), or local paths only in local mode or
on a file system mounted alike on every node (NFS).
"""

from __future__ import annotations

import urllib.parse

import numpy as np
import pyarrow.fs as pafs
from pyspark.accumulators import AccumulatorParam
from pyspark.sql import SparkSession

from tomkit.checker.properties import Options
from tomkit.checker.spark.files_task import DataFile, Target, check_together, iter_groups
from tomkit.checker.spark.read import PARTITIONS, SchemaMismatch
from tomkit.checker.spark.storage import Store, store_of
from tomkit.checker.spark.summary import Summary

__all__ = ["IN_PROCESS_BYTES", "DataFile", "in_process", "list_files", "plan_groups",
           "run_files"]

#: a group of files is about this share of the data set per core, for balance
GROUPS_PER_CORE = 4
MIN_GROUP_BYTES = 1 << 20
#: a local data set up to this size is scanned in the calling process, without Spark: a
#: JVM's start, a Python worker's and a job's scheduling cost seconds, while tomkit's
#: engine checks about this much in a second or two (docs/spark.md, "Which engine")
IN_PROCESS_BYTES = 64 << 20


def list_files(roots: list[str], settings: dict[str, str] | None = None) -> list[DataFile]:
    """Every data file below the qualified paths ``roots`` (``storage.qualify``), skipping
    names that start with ``_`` or ``.`` below a root (as Spark does: _SUCCESS,
    _ground_truth.jsonl, .crc), with its partition values (``protocol=P/config=C`` below
    the root, unescaped as Spark does; "" when absent). A missing root is a
    FileNotFoundError."""
    out = []
    stores: dict[tuple[str, str], Store] = {}
    for root in roots:
        st = store_of(root, settings)
        st = stores.setdefault((st.scheme, st.authority), st)
        top = st.path(root)
        info = st.fs.get_file_info(top)
        if info.type == pafs.FileType.NotFound:
            raise FileNotFoundError(f"{root}: no such file or directory")
        infos = [info] if info.type == pafs.FileType.File else [
            i for i in st.fs.get_file_info(pafs.FileSelector(top, recursive=True))
            if i.type == pafs.FileType.File]
        for i in infos:
            below = [x for x in i.path[len(top):].split("/") if x] or [i.base_name]
            if any(x.startswith(("_", ".")) for x in below):
                continue
            part = {}
            for x in below[:-1]:
                k, eq, v = x.partition("=")
                if eq and k in PARTITIONS:
                    part[k] = urllib.parse.unquote(v)
            name = root.rstrip("/") + "/" + "/".join(below) if i.path != top else root
            out.append(DataFile(name, part.get("protocol", ""), part.get("config", ""),
                                int(i.size), st, i.path))
    if not out:
        raise FileNotFoundError(f"{', '.join(roots)}: no data file found")
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


class _Counter:
    """(files, events) checked, as a Spark accumulator counts them, in this process."""

    def __init__(self) -> None:
        self.value = (0, 0)

    def add(self, pair: tuple[int, int]) -> None:
        self.value = (self.value[0] + pair[0], self.value[1] + pair[1])


def in_process(files: list[DataFile]) -> bool:
    """Is the data set small enough, and local, to scan it without Spark?"""
    return all(f.store.scheme in ("", "file") for f in files) and \
        sum(f.size for f in files) <= IN_PROCESS_BYTES


class _Pair(AccumulatorParam):
    """(files, events) checked, summed over the tasks."""

    def zero(self, value):
        return (0, 0)

    def addInPlace(self, a, b):
        return (a[0] + b[0], a[1] + b[1])


def run_files(spark: SparkSession | None, files: list[DataFile], target: Target | None,
              progress=None, options: Options = Options()) -> Summary:
    """Check ``files`` (``list_files``), writing the verdict and rejected parts under
    ``target`` (``verdicts/``, ``rejected/``; None: write nothing), and return the report's
    Summary (module docstring). A Parquet file whose columns do not fit the format stops
    the scan (``SchemaMismatch``), as the other engines' schema check does. ``progress``
    (``progress.Progress``) is told the files and events checked as tasks finish.
    ``spark=None`` runs the same tasks one after another in this process (``in_process``)."""
    if target is not None:
        for d in ("verdicts", "rejected"):
            target.store.fs.create_dir(f"{target.root}/{d}", recursive=True)
    if spark is None:
        plan = plan_groups(files, 1)
        done = _Counter()
        if progress is not None:
            progress.watch(lambda: done.value, len(files))
        first = list(iter_groups(iter(range(len(plan))), plan, files, target, done, options))
        return _merge(None, files, first, target, options)
    sc = spark.sparkContext
    plan = plan_groups(files, sc.defaultParallelism)
    bfiles, bplan = sc.broadcast(files), sc.broadcast(plan)
    done = sc.accumulator((0, 0), _Pair())
    if progress is not None:
        progress.watch(lambda: done.value, len(files))
    sc.setJobDescription(f"tomkit scan: {len(files)} file(s)")
    first = sc.parallelize(range(len(plan)), len(plan)).mapPartitions(
        lambda gs: iter_groups(gs, bplan.value, bfiles.value, target, done, options)).collect()
    return _merge(spark, files, first, target, options)


def _merge(spark: SparkSession | None, files: list[DataFile], first: list, target: Target | None,
           options: Options) -> Summary:
    """The first pass's summaries, and a second pass over the sets of files that share
    traces (module docstring), as Spark tasks or, without ``spark``, here."""
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
        for i in dirty if target is not None else ():  # checked again, together
            for d in ("verdicts", "rejected"):
                part = target.part(d, f"f{i:06d}")
                if target.store.fs.get_file_info(part).type != pafs.FileType.NotFound:
                    target.store.fs.delete_file(part)
        if spark is None:
            again = [check_together([files[i] for i in fis], f"s{c:06d}", target, options)
                     for c, fis in enumerate(sets)]
        else:
            sc = spark.sparkContext
            bfiles, bsets = sc.broadcast(files), sc.broadcast(sets)
            sc.setJobDescription(f"tomkit scan: {len(sets)} set(s) of files that share "
                                 "traces")
            again = sc.parallelize(range(len(sets)), len(sets)).map(
                lambda c: check_together([bfiles.value[i] for i in bsets.value[c]],
                                         f"s{c:06d}", target, options)).collect()
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
