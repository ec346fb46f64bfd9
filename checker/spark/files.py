"""The files engine: Spark schedules the data set's files, tomkit's own engine checks them.

``tomkit scan --engine files``, the default (``auto``) for paths on the local file system. The
other engines hand every event through Spark's row format: the ``sql`` engine into windows
and joins, the ``arrow`` engine into ``mapInArrow``, whose JVM-side Arrow writer alone costs
5-8 times a bare Spark read (measured). Here events never cross into the JVM. The driver
lists the files; Spark runs one task per group of files; each task reads its files with
``traces.reader.TraceReader`` (the reader, validation and error messages of ``tomkit
check``), cuts them into chunks of whole traces and decides them with the vectorized
``detect`` of every property and the reference ``check`` of the flagged traces, exactly
as ``checker/engine.py`` does. Only the results go back to Spark: one row per trace (the
detection codes, witnesses, latencies and index-of-latency values) and one per rejected
record, which the rest of the job (``job.py``) writes and aggregates as for the other
engines.

Traces that span files. A task sees whole files, and a file need not hold whole traces
(one log per process is common), and a task checks each of its files on its own. So every
trace row carries the number of its file, and after the first pass the traces seen in more
than one file are found with one small aggregation; their rows are dropped and the files
that share them are checked again together, restricted to those traces (a second pass, of
one task per connected set of files). Format rejections are per record and come from the
first pass only; a trace's rejection for its ``seq`` is a property of the whole trace and
comes from whichever pass saw it whole. Data sets written by tomkit keep each trace in one
file, and the second pass is then empty.

File-level problems (an unreadable file, a bad header, no records) do not stop the scan:
each is reported as a rejected entry of its file with no line or row. A file that declares
its traces grouped but breaks the promise is checked again as ungrouped.

Limits: tasks open files by local path, so every executor must see the files under the
same path (local mode, NFS, a mounted bucket). For ``hdfs://``, ``s3a://`` and other
schemes use ``--engine arrow`` (docs/spark.md).
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from tomkit.checker.chunk import Piece, _ranges
from tomkit.checker.engine import READ_ROWS, _batches, _decide, _grouped_chunks, _split_by_trace
from tomkit.checker.properties import EXACT, VIOLATED, Options, properties
from tomkit.checker.spark.exact import check_wanted
from tomkit.checker.spark.properties import NAMES, Decided
from tomkit.checker.spark.read import INDEX_OF_LATENCY, KEY, PARTITIONS, data_files
from tomkit.traces.errors import TraceFormatError
from tomkit.traces.reader import TraceReader

TRACE, SEQ, RECORD = "trace", "seq", "record"  # the kinds of output row

_EXACT_STRUCT = T.StructType([T.StructField(n, T.StringType()) for n in (
    "property", "verdict", "clause", "explanation", "witness", "disagreement")])
OUT_SCHEMA = T.StructType(
    [T.StructField(k, T.StringType()) for k in KEY]
    + [T.StructField("rtype", T.StringType()), T.StructField("file", T.IntegerType()),
       T.StructField("events", T.LongType()), T.StructField("has_send", T.BooleanType())]
    + [T.StructField(n, T.IntegerType()) for n in NAMES]
    + [T.StructField("src", T.StringType()), T.StructField("line", T.LongType()),
       T.StructField("row", T.LongType()), T.StructField("field", T.StringType()),
       T.StructField("message", T.StringType()),
       T.StructField("lat", T.ArrayType(T.DoubleType())),
       T.StructField("iol", T.ArrayType(T.DoubleType())),
       T.StructField("exact", T.ArrayType(_EXACT_STRUCT))])
ARROW_SCHEMA = pa.schema(
    [(k, pa.string()) for k in KEY]
    + [("rtype", pa.string()), ("file", pa.int32()), ("events", pa.int64()),
       ("has_send", pa.bool_())]
    + [(n, pa.int32()) for n in NAMES]
    + [("src", pa.string()), ("line", pa.int64()), ("row", pa.int64()),
       ("field", pa.string()), ("message", pa.string()),
       ("lat", pa.list_(pa.float64())), ("iol", pa.list_(pa.float64())),
       ("exact", pa.list_(pa.struct([(f.name, pa.string()) for f in _EXACT_STRUCT])))])

#: a group of files is about this share of the data set per core, for balance
GROUPS_PER_CORE = 4
MIN_GROUP_BYTES = 1 << 20


class NotLocal(ValueError):
    """An input the files engine cannot open by path."""


@dataclass(frozen=True)
class DataFile:
    path: str  # a local path
    protocol: str
    config: str
    size: int


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


# ---- the task ------------------------------------------------------------------------


def check_group(files: list[tuple[int, DataFile]],
                only: set[tuple[str, str, str]] | None = None) -> Iterator[pa.RecordBatch]:
    """Output rows for a group of (index, file): each file on its own (first pass,
    ``only=None``), or the traces ``only`` of all files together (second pass, whose rows
    carry file -1)."""
    if only is None:
        for i, f in files:
            yield from _check_file(f, i)
        return
    held = []
    for _, f in files:
        pieces, _, _ = _read(f, lambda t, f=f: _only(t, f, only))
        held.extend(pieces)
    if held:
        for part in _split_by_trace(held):
            yield _decided_rows(part, files[0][1], -1)


def _only(table: pa.Table, f: DataFile, keys: set[tuple[str, str, str]]) -> np.ndarray:
    ids = pa.array(sorted(t for p, c, t in keys if (p, c) == (f.protocol, f.config)),
                   pa.string())
    col = table.column("trace").combine_chunks()
    if pa.types.is_dictionary(col.type):
        col = col.cast(pa.string())
    return pc.is_in(col, value_set=ids).to_numpy(zero_copy_only=False)


def _read(f: DataFile, keep=None):
    """The file's pieces (optionally filtered rows), the reader, and a file-level error."""
    try:
        reader = TraceReader(f.path, keep_going=True, batch_rows=READ_ROWS, dictionary=True)
        pieces = []
        for piece in _batches(reader, None):
            if keep is not None:
                m = keep(piece.table)
                if not m.any():
                    continue
                piece = Piece(piece.table.filter(pa.array(m)), piece.lines[m], piece.source,
                              piece.fmt)
            pieces.append(piece)
        return pieces, reader, None
    except TraceFormatError as e:
        return [], None, e


def _check_file(f: DataFile, index: int) -> Iterator[pa.RecordBatch]:
    out: list[pa.RecordBatch] = []
    reader = None
    try:
        reader = TraceReader(f.path, keep_going=True, batch_rows=READ_ROWS, dictionary=True)
        if reader.info.grouped:
            try:
                for pieces in _grouped_chunks(_batches(reader, None), f.path):
                    out.append(_decided_rows(pieces, f, index))
            except TraceFormatError as e:
                if "declares its traces grouped" not in e.message:
                    raise
                out, reader = [], None  # the promise is broken: read it again, ungrouped
        if reader is None or not reader.info.grouped:
            pieces, reader, err = _read(f)
            if err is not None:
                raise err
            out = [_decided_rows(part, f, index) for part in _split_by_trace(pieces)]
    except TraceFormatError as e:
        yield _record_rows(f, index, [e])
        return
    yield from out
    if reader.rejected:
        yield _record_rows(f, index, reader.rejected)


def _record_rows(f: DataFile, index: int, errors) -> pa.RecordBatch:
    cols = _empty_cols()
    for e in errors:
        loc = e.location
        _key(cols, f, None)
        cols["rtype"].append(RECORD)
        cols["file"].append(index)
        cols["src"].append(loc.source)
        cols["line"].append(loc.line)
        cols["row"].append(loc.row)
        cols["field"].append(e.field or "")
        cols["message"].append(e.message)
    return _batch(cols)


def _empty_cols() -> dict[str, list]:
    return {c: [] for c in ARROW_SCHEMA.names}


def _key(cols: dict[str, list], f: DataFile, trace: str | None) -> None:
    cols["protocol"].append(f.protocol)
    cols["config"].append(f.config)
    cols["trace"].append(trace)


def _batch(cols: dict[str, list], arrays: dict[str, pa.Array] | None = None) -> pa.RecordBatch:
    """A batch of ARROW_SCHEMA from ready ``arrays`` and Python lists ``cols`` (the
    ``rtype`` list gives the number of rows); any other column is null."""
    n = len(cols["rtype"])
    data = []
    for field in ARROW_SCHEMA:
        if arrays and field.name in arrays:
            data.append(arrays[field.name])
        elif field.name in cols and len(cols[field.name]) == n:
            data.append(pa.array(cols[field.name], field.type))
        else:  # a column this kind of row leaves empty
            data.append(pa.nulls(n, field.type))
    return pa.RecordBatch.from_arrays(data, schema=ARROW_SCHEMA)


def _decided_rows(pieces, f: DataFile, index: int) -> pa.RecordBatch:
    """One row per trace of a chunk of whole traces: rejected for seq, or its codes."""
    props = properties()
    chunk, codes = _decide(pieces, [props[n] for n in NAMES], Options())
    ntr = chunk.ntr
    sizes = np.diff(chunk.trace_start)
    bad = chunk.bad_traces
    good = np.array([ti for ti in range(ntr) if ti not in bad], np.int64)

    cols = _empty_cols()
    for ti in sorted(bad):  # rejected for seq: the record named, all records counted
        e = bad[ti]
        _key(cols, f, chunk.trace_names[ti])
        cols["rtype"].append(SEQ)
        cols["file"].append(index)
        cols["events"].append(int(sizes[ti]))
        cols["src"].append(e.location.source)
        cols["line"].append(e.location.line)
        cols["row"].append(e.location.row)
        cols["field"].append("seq")
        cols["message"].append(e.message)
    seq_rows = _batch(cols) if bad else None

    n = len(good)
    # per-trace Python work only for the few traces flagged for the reference check
    exact: list = [None] * n
    names_x = [x.name for x in _EXACT_STRUCT][1:]
    flagged = (codes[good] == VIOLATED) | (codes[good] == EXACT)
    for j in np.flatnonzero(flagged.any(axis=1)).tolist():
        ti = int(good[j])
        wanted = {name: int(codes[ti, k]) for k, name in enumerate(NAMES) if flagged[j, k]}
        key = (f.protocol, f.config, chunk.trace_names[ti])
        res = check_wanted(key, chunk.trace(ti), wanted)
        exact[j] = [{"property": r[len(KEY)], **dict(zip(names_x, r[len(KEY) + 1:]))}
                    for r in res]
    lat_v, lat_b = latencies(chunk)
    iol_v, iol_b = _iols(pieces, chunk)
    arrays = {
        "protocol": pa.repeat(pa.scalar(f.protocol), n),
        "config": pa.repeat(pa.scalar(f.config), n),
        "trace": pa.array(chunk.trace_names, pa.string()).take(pa.array(good)),
        "rtype": pa.repeat(pa.scalar(TRACE), n),
        "file": pa.array(np.full(n, index, np.int32)),
        "events": pa.array(sizes[good].astype(np.int64)),
        "has_send": pa.array(chunk.trace_has["send"][good]),
        **{name: pa.array(codes[good, k].astype(np.int32)) for k, name in enumerate(NAMES)},
        "lat": _lists(lat_v, lat_b, good),
        "iol": _lists(iol_v, iol_b, good),
        "exact": pa.array(exact, ARROW_SCHEMA.field("exact").type),
    }
    rows = _batch({"rtype": [None] * n}, arrays)
    if seq_rows is None:
        return rows
    return pa.Table.from_batches([seq_rows, rows]).combine_chunks().to_batches()[0]


def latencies(chunk) -> tuple[np.ndarray, np.ndarray]:
    """Per chunk trace (values[bounds[i]:bounds[i+1]]): time of each first delivery minus
    the time of the message's first send, where both are known (``report.latency``)."""
    f = chunk.f_rows
    sr = chunk.send_row[chunk.f_tm] if len(f) else np.zeros(0, np.int64)
    ok = sr >= 0
    f, sr = f[ok], sr[ok]
    lat = chunk.time[f] - chunk.time[sr]
    ok = ~np.isnan(lat)
    lat, ft = lat[ok], chunk.t[f[ok]]
    return lat, np.searchsorted(ft, np.arange(chunk.ntr + 1))


def _iols(pieces, chunk) -> tuple[np.ndarray, np.ndarray]:
    """Per chunk trace: the index of latency of each of its deliveries that carries one."""
    index = {name: i for i, name in enumerate(chunk.trace_names)}
    tis, vals = [], []
    for piece in pieces:
        t = piece.table
        if INDEX_OF_LATENCY not in t.column_names:
            continue
        col = t.column(INDEX_OF_LATENCY)
        if not (pa.types.is_integer(col.type) or pa.types.is_floating(col.type)):
            continue  # not a number: the report has no index of latency for it
        m = pc.and_(pc.fill_null(pc.equal(t.column("kind"), "deliver"), False),
                    pc.is_valid(col)).to_numpy(zero_copy_only=False)
        if not m.any():
            continue
        tr = t.column("trace").combine_chunks()
        enc = tr if pa.types.is_dictionary(tr.type) else pc.dictionary_encode(tr)
        to_ti = np.array([index.get(x, -1) for x in enc.dictionary.to_pylist()], np.int64)
        ti = to_ti[enc.indices.to_numpy(zero_copy_only=False)[m]]
        v = col.combine_chunks().cast(pa.float64()).to_numpy(zero_copy_only=False)[m]
        tis.append(ti)
        vals.append(v)
    if not tis:
        return np.zeros(0), np.zeros(chunk.ntr + 1, np.int64)
    ti, v = np.concatenate(tis), np.concatenate(vals)
    order = np.argsort(ti, kind="stable")
    ti, v = ti[order], v[order]
    return v, np.searchsorted(ti, np.arange(chunk.ntr + 1))


def _lists(values: np.ndarray, bounds: np.ndarray, rows: np.ndarray) -> pa.Array:
    """A list<double> array of ``values[bounds[i]:bounds[i+1]]`` for each i in ``rows``."""
    lo, hi = bounds[rows], bounds[rows + 1]
    lens = hi - lo
    offsets = np.concatenate(([0], np.cumsum(lens))).astype(np.int32)
    flat = values[_ranges(lo.astype(np.int64), lens.astype(np.int64))]
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(flat, pa.float64()))


# ---- the driver -----------------------------------------------------------------------


def decide_files(spark: SparkSession, paths: list[str]) -> tuple[Decided, DataFrame]:
    """The fields of :func:`properties.decide` and the rejected records (src line row field
    message), in one pass over the files plus the second pass for split traces (module
    docstring)."""
    files = list_files(spark, paths)
    parallelism = spark.sparkContext.defaultParallelism
    groups = plan_groups(files, parallelism)
    bfiles = spark.sparkContext.broadcast(files)
    bgroups = spark.sparkContext.broadcast(groups)

    def first(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for b in batches:
            for g in b.column(0).to_pylist():
                yield from check_group([(i, bfiles.value[i]) for i in bgroups.value[g]])

    out = _run(spark, len(groups), first)
    split = _split_traces(out)
    if split:
        comps = _components(split)
        bcomps = spark.sparkContext.broadcast(comps)

        def second(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            for b in batches:
                for c in b.column(0).to_pylist():
                    fis, keys = bcomps.value[c]
                    yield from check_group([(i, bfiles.value[i]) for i in fis], keys)

        keys = spark.createDataFrame([tuple(r[k] for k in KEY) for r in split],
                                     T.StructType([T.StructField(k, T.StringType())
                                                   for k in KEY]))
        again = _run(spark, len(comps), second)
        kept = out.join(F.broadcast(keys), KEY, "left_anti").unionByName(
            out.filter(F.col("rtype") == RECORD))
        out = kept.unionByName(again).localCheckpoint()
    return _decided(out), out.filter(F.col("rtype") == RECORD).select(
        "src", "line", "row", "field", "message")


def _split_traces(out: DataFrame) -> list:
    """Rows (KEY, files) of the traces that more than one file holds. Grouping
    by a 64-bit hash of the key is much cheaper than by the three strings; a collision only
    makes a candidate, which the exact grouping of the candidates then settles."""
    rows = out.filter(F.col("rtype") != RECORD).withColumn("h", F.xxhash64(*KEY))
    cand = rows.groupBy("h").count().filter("count > 1").select("h")
    if cand.isEmpty():
        return []
    return (rows.join(F.broadcast(cand), "h", "left_semi")
            .groupBy(*KEY).agg(F.count(F.lit(1)).alias("n"),
                               F.collect_set("file").alias("files"))
            .filter("n > 1").collect())


def _run(spark: SparkSession, n: int, fn) -> DataFrame:
    ids = spark.range(0, n, numPartitions=max(n, 1)).select(F.col("id").cast("int"))
    return ids.mapInArrow(fn, OUT_SCHEMA).localCheckpoint()


def _components(split) -> list[tuple[list[int], set[tuple[str, str, str]]]]:
    """Files that share split traces, joined into connected sets, with their traces."""
    parent: dict[int, int] = {}

    def find(x: int) -> int:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for r in split:
        gs = r["files"]
        for g in gs[1:]:
            parent[find(g)] = find(gs[0])
    comps: dict[int, tuple[set[int], set]] = {}
    for r in split:
        root = find(r["files"][0])
        gs, keys = comps.setdefault(root, (set(), set()))
        gs.update(r["files"])
        keys.add(tuple(r[k] for k in KEY))
    return [(sorted(gs), keys) for gs, keys in comps.values()]


def _decided(out: DataFrame) -> Decided:
    good = out.filter(F.col("rtype") == TRACE)
    codes = good.select(*KEY, "events", "has_send", *NAMES)
    bad_seq = out.filter(F.col("rtype") == SEQ).select(
        *KEY, "src", F.coalesce("row", "line").alias("pos"), "message",
        F.col("events").alias("records"))
    firsts = good.select("protocol", "config", F.explode("lat").alias("lat"))
    deliveries = good.select("protocol", "config", F.explode("iol").alias("iol"))
    exact = good.select(*KEY, F.explode("exact").alias("x")).select(*KEY, "x.*")
    return Decided(codes, firsts, bad_seq, None, exact=exact, deliveries=deliveries)
