"""The default safety properties decided by the single-machine numpy engine, inside Spark.

An alternative to the SQL of ``properties.py`` (``tomkit scan --engine arrow``): the events
are hash-partitioned by trace (``KEY``) once and sorted within each partition by trace,
process and local order; ``mapInArrow`` then hands each partition's Arrow record batches
to :func:`_decide_partition`, which cuts them into tables of whole traces, builds a
``checker.chunk.Chunk`` from each and runs every property's vectorized ``detect``, exactly
as ``checker/engine.py`` does on files. One pass, no joins, no windows.

The same pass settles what the SQL path computes with further joins: the reference
``check`` of every trace detected VIOLATED or EXACT (its witnesses, as ``exact.py``), the
traces rejected for their ``seq`` (the rules and the record named of ``properties.decide``:
the first offending record by file and position), the send-to-delivery latencies of
first deliveries (``report.latency``) and the deliveries' index of latency. Output: one
row per trace, split into the fields of :class:`properties.Decided`.

A trace's key is (protocol, config, trace), a chunk's is one string: each trace of a table
(a run of equal keys, the table being sorted) gets its run number as its chunk id.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from tomkit.checker.properties import EXACT, VIOLATED, Options, properties
from tomkit.checker.spark.exact import RESULT_SCHEMA, check_wanted, local_path
from tomkit.checker.spark.properties import NAMES, Decided
from tomkit.checker.spark.read import KEY

#: rows gathered from a partition's batches before a chunk is decided (whole traces only)
CHUNK_ROWS = 1 << 19
INPUT = [*KEY, "process", "kind", "msg", "deps", "view", "members", "time", "seq", "src",
         "pos", "iol", "real_time", "x_slot", "x_join", "x_rate_max", "x_rate_avg",
         "x_rate_window", "x_rn"]

_EXACT_FIELDS = RESULT_SCHEMA.fields[len(KEY):]  # property verdict clause ... disagreement
OUT_SCHEMA = T.StructType(
    [T.StructField(k, T.StringType()) for k in KEY]
    + [T.StructField("events", T.LongType()), T.StructField("has_send", T.BooleanType())]
    + [T.StructField(n, T.IntegerType()) for n in NAMES]
    + [T.StructField("bad_src", T.StringType()), T.StructField("bad_pos", T.LongType()),
       T.StructField("bad_message", T.StringType()),
       T.StructField("lat", T.ArrayType(T.DoubleType())),
       T.StructField("iol", T.ArrayType(T.DoubleType())),
       T.StructField("exact", T.ArrayType(T.StructType(_EXACT_FIELDS)))])
_ARROW_EXACT = pa.list_(pa.struct([(f.name, pa.string()) for f in _EXACT_FIELDS]))
ARROW_SCHEMA = pa.schema(
    [(k, pa.string()) for k in KEY]
    + [("events", pa.int64()), ("has_send", pa.bool_())]
    + [(n, pa.int32()) for n in NAMES]
    + [("bad_src", pa.string()), ("bad_pos", pa.int64()), ("bad_message", pa.string()),
       ("lat", pa.list_(pa.float64())), ("iol", pa.list_(pa.float64())),
       ("exact", _ARROW_EXACT)])


def decide_arrow(events: DataFrame, fmt: str = "parquet", options: Options = Options()
                 ) -> Decided:
    """The fields of :func:`properties.decide`, computed in one Arrow pass (module
    docstring). ``fmt`` says whether positions are Parquet rows or JSON Lines lines (for
    witnesses). ``Decided.exact`` and ``Decided.deliveries`` carry the reference checks
    and the index-of-latency values, so the caller needs no further pass over the events;
    ``Decided.events`` (the good traces' events) stays lazy."""
    # Spark's Arrow writer is pathologically slow on a list column that is nearly all null
    # (measured: 14 s instead of 1 s for 2 million rows of ``members``), so members cross
    # as empty lists and are null again in Python wherever the event is not a view (where
    # validation made them null)
    cols = [F.coalesce("members", F.array().cast("array<string>")).alias("members")
            if c == "members" else c for c in INPUT]
    # the local order of properties.ORDER: seq (null first, as -1), file, position
    e = events.select(*cols).repartition(*KEY).sortWithinPartitions(
        *KEY, "process", F.coalesce("seq", F.lit(-1)), "src", "pos")
    out = e.mapInArrow(lambda it: _decide_partition(it, fmt, options),
                       OUT_SCHEMA).localCheckpoint()
    good = out.filter(F.col("bad_message").isNull())
    codes = good.select(*KEY, "events", "has_send", *NAMES)
    bad_seq = out.filter(F.col("bad_message").isNotNull()).select(
        *KEY, F.col("bad_src").alias("src"), F.col("bad_pos").alias("pos"),
        F.col("bad_message").alias("message"), F.col("events").alias("records"))
    firsts = good.select("protocol", "config", F.explode("lat").alias("lat"))
    deliveries = good.select("protocol", "config", F.explode("iol").alias("iol"))
    exact = good.select(*KEY, "events", F.explode("exact").alias("x")).select(
        *KEY, "x.*", "events")
    good_events = events.join(F.broadcast(bad_seq.select(*KEY)), KEY, "left_anti")
    return Decided(codes, firsts, bad_seq, good_events, exact=exact, deliveries=deliveries)


def _decide_partition(batches: Iterator[pa.RecordBatch], fmt: str,
                      options: Options = Options()) -> Iterator[pa.RecordBatch]:
    """Gather a sorted partition's batches into tables of whole traces and decide each."""
    pending: list[pa.RecordBatch] = []
    rows = 0
    for b in batches:
        if b.num_rows == 0:
            continue
        pending.extend(_members_back(pa.Table.from_batches([b])).to_batches())
        rows += b.num_rows
        if rows < CHUNK_ROWS:
            continue
        table = pa.Table.from_batches(pending).combine_chunks()
        starts = _run_starts(table, KEY)
        cut = int(starts[-2])  # the last trace may continue in the next batch
        if cut == 0:
            continue  # one huge trace so far: keep gathering
        yield _decide_table(table.slice(0, cut), fmt, options)
        rest = table.slice(cut)
        pending, rows = rest.to_batches(), rest.num_rows
    if pending:
        yield _decide_table(pa.Table.from_batches(pending).combine_chunks(), fmt, options)


def _members_back(table: pa.Table) -> pa.Table:
    """Null members on every event but views (undoing the coalesce of decide_arrow)."""
    i = table.schema.get_field_index("members")
    is_view = pc.fill_null(pc.equal(table.column("kind"), "view"), False)
    col = pc.if_else(is_view, table.column(i), pa.scalar(None, table.schema.field(i).type))
    return table.set_column(i, "members", col)


def _changes(col: pa.Array) -> np.ndarray:
    """Per row after the first: does its value differ from the previous row's (nulls
    equal to each other only)."""
    a, b = col.slice(1), col.slice(0, len(col) - 1)
    ne = pc.fill_null(pc.not_equal(a, b), False)
    ne = pc.or_(ne, pc.not_equal(pc.is_null(a), pc.is_null(b)))
    return ne.to_numpy(zero_copy_only=False)


def _run_starts(table: pa.Table, cols: list[str]) -> np.ndarray:
    """Start offsets of the runs of equal ``cols`` values, plus the end."""
    n = table.num_rows
    brk = np.zeros(max(n - 1, 0), bool)
    for c in cols:
        brk |= _changes(table.column(c).combine_chunks())
    return np.concatenate(([0], np.flatnonzero(brk) + 1, [n])).astype(np.int64)


def _seq_problems(table: pa.Table) -> dict[int, tuple[str, int, str]]:
    """Traces (row index of their start) rejected for seq, with the offending record
    first by (src, pos) and its message: the rules of ``properties.decide``."""
    seq_col = table.column("seq").combine_chunks()
    if seq_col.null_count == len(seq_col):
        return {}
    n = table.num_rows
    p_starts = _run_starts(table, [*KEY, "process"])
    g = np.repeat(np.arange(len(p_starts) - 1), np.diff(p_starts))
    null = seq_col.is_null().to_numpy(zero_copy_only=False)
    seq = seq_col.fill_null(-1).to_numpy()
    n_g = np.diff(p_starts)
    n_seq = np.bincount(g, weights=~null, minlength=len(n_g))
    mixed = null & (n_seq[g] > 0) & (n_seq[g] < n_g[g])
    repeat = np.zeros(n, bool)
    repeat[1:] = (g[1:] == g[:-1]) & (seq[1:] == seq[:-1]) & ~null[1:] & ~null[:-1]
    rows = np.flatnonzero(mixed | repeat)
    if len(rows) == 0:
        return {}
    t_starts = _run_starts(table, KEY)
    proc, src, pos = (table.column(c) for c in ("process", "src", "pos"))
    best: dict[int, tuple[str, int, str]] = {}
    for r in rows:
        ti = int(np.searchsorted(t_starts, r, side="right") - 1)
        s, q = src[int(r)].as_py(), pos[int(r)].as_py()
        if ti in best and (best[ti][0], best[ti][1]) <= (s, q):
            continue
        p = proc[int(r)].as_py()
        msg = (f"process {p} gives seq on some events only" if mixed[r]
               else f"process {p} repeats seq {int(seq[r])}")
        best[ti] = (s, q, msg)
    return best


def _pieces(table: pa.Table, fmt: str):
    """Chunk pieces, one per source file in increasing name order, so that the chunk's row
    order within a process without seq is (src, pos), the local order of the SQL path."""
    from tomkit.checker.chunk import Piece

    enc = pc.dictionary_encode(table.column("src").combine_chunks())
    names = enc.dictionary.to_pylist()
    rank = np.empty(len(names), np.int64)
    rank[np.argsort(np.array(names, dtype=object), kind="stable")] = np.arange(len(names))
    r = rank[enc.indices.to_numpy()]
    order = np.argsort(r, kind="stable")
    t = table.take(pa.array(order)) if len(names) > 1 else table
    r = r[order]
    starts = np.concatenate(([0], np.flatnonzero(r[1:] != r[:-1]) + 1, [len(r)]))
    pos = t.column("pos").to_numpy()
    out = []
    for lo, hi in zip(starts[:-1], starts[1:]):
        part = t.slice(int(lo), int(hi - lo))
        out.append(Piece(part, pos[lo:hi], local_path(part.column("src")[0].as_py()), fmt))
    return out


def _decide_table(table: pa.Table, fmt: str, options: Options = Options()) -> pa.RecordBatch:
    """One output row per trace of a table of whole traces sorted by key and local order."""
    from tomkit.checker.chunk import Chunk

    starts = _run_starts(table, KEY)
    ntr = len(starts) - 1
    sizes = np.diff(starts)
    bad = _seq_problems(table)
    good_tr = np.array([i for i in range(ntr) if i not in bad], np.int64)
    keys = {k: table.column(k).take(pa.array(starts[:-1])).to_pylist() for k in KEY}

    cols: dict[str, list] = {c: [] for c in ARROW_SCHEMA.names}

    def key_cols(tis) -> None:
        for k in KEY:
            cols[k].extend(keys[k][i] for i in tis)

    # rejected traces: no codes, the record to name
    bad_ids = sorted(bad)
    key_cols(bad_ids)
    for i in bad_ids:
        cols["events"].append(int(sizes[i]))
        cols["has_send"].append(None)
        for n in NAMES:
            cols[n].append(None)
        s, q, m = bad[i]
        cols["bad_src"].append(s)
        cols["bad_pos"].append(q)
        cols["bad_message"].append(m)
        for c in ("lat", "iol", "exact"):
            cols[c].append(None)

    if len(good_tr):
        row_tr = np.repeat(np.arange(ntr), sizes)
        if bad:
            keep = np.isin(row_tr, good_tr)
            table = table.filter(pa.array(keep))
            row_tr = row_tr[keep]
        # chunk trace id j = index of the trace among the good ones
        ids = np.searchsorted(good_tr, row_tr).astype(np.int32)
        tcol = pa.DictionaryArray.from_arrays(
            pa.array(ids), pa.array([str(j) for j in range(len(good_tr))], pa.string()))
        table = table.set_column(table.schema.get_field_index("trace"), "trace", tcol)
        chunk = Chunk.build(_pieces(table, fmt))
        # the chunk numbers traces by first appearance of their id: map back to good_tr
        order = np.array([int(x) for x in chunk.trace_names], np.int64)
        props = properties()
        opts = options
        codes = np.stack([props[n].detect(chunk, opts) for n in NAMES], axis=1)
        key_cols(good_tr[order])
        cols["events"].extend(np.diff(chunk.trace_start).tolist())
        cols["has_send"].extend(chunk.trace_has["send"].tolist())
        for k, n in enumerate(NAMES):
            cols[n].extend(codes[:, k].astype(np.int32).tolist())
        for c in ("bad_src", "bad_pos", "bad_message"):
            cols[c].extend([None] * chunk.ntr)
        cols["lat"].extend(_latencies(chunk))
        cols["iol"].extend(_iols(table, chunk, good_tr, order))
        for ti in range(chunk.ntr):
            wanted = {n: int(codes[ti, k]) for k, n in enumerate(NAMES)
                      if int(codes[ti, k]) in (VIOLATED, EXACT)}
            if not wanted:
                cols["exact"].append(None)
                continue
            key = tuple(cols[k][len(cols[k]) - chunk.ntr + ti] for k in KEY)
            res = check_wanted(key, chunk.trace(ti), wanted, options)
            names = [f.name for f in _EXACT_FIELDS]
            cols["exact"].append([dict(zip(names, r[len(KEY):])) for r in res])
    return pa.RecordBatch.from_pydict(cols, schema=ARROW_SCHEMA)


def _latencies(chunk) -> list[list[float]]:
    """Per chunk trace: its send-to-first-delivery latencies (``files_task.latencies``)."""
    from tomkit.checker.spark.files_task import latencies

    lat, bounds = latencies(chunk)
    return [lat[bounds[i]:bounds[i + 1]].tolist() for i in range(chunk.ntr)]


def _iols(table: pa.Table, chunk, good_tr: np.ndarray, order: np.ndarray) -> list[list[float]]:
    """Per chunk trace: the index of latency of each of its deliveries that carries one."""
    iol = table.column("iol").combine_chunks()
    out: list[list[float]] = [[] for _ in range(chunk.ntr)]
    if iol.null_count == len(iol):
        return out
    is_del = pc.equal(table.column("kind").combine_chunks(), "deliver").to_numpy(
        zero_copy_only=False)
    vals = iol.to_numpy(zero_copy_only=False)
    rows = np.flatnonzero(is_del & ~iol.is_null().to_numpy(zero_copy_only=False))
    tr_of_row = table.column("trace").combine_chunks().indices.to_numpy()
    where = np.empty(len(order), np.int64)  # good index -> chunk trace
    where[order] = np.arange(len(order))
    for r in rows:
        out[where[tr_of_row[r]]].append(float(vals[r]))
    return out
