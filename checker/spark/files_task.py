"""The files engine's task: check files with tomkit's engine, write what they give.

A task (``files.py`` runs one per group of files) reads each file with
``traces.reader.TraceReader`` (the reader, validation and messages of ``tomkit check``):
a local file where it is, a file of a remote store (``storage.py``) from a copy in the
task's scratch directory (Spark's local directory), which it deletes when done; records,
witnesses and errors name the file as the scan's input does (``s3://b/k``, not the copy).
The task
cuts it into chunks of whole traces, decides them with the vectorized ``detect`` of every
property and the reference ``check`` of the flagged traces, as ``checker/engine.py`` does,
and writes the results itself, as Parquet parts of the scan's temporary output (nothing
but a small summary goes back through Spark):

(through ``pyarrow.fs``, on any store):

* ``verdicts/part-<name>.parquet``: one row per trace and property (``VERDICT_SCHEMA``,
  the columns ``job.verdict_rows`` gives the other engines);
* ``rejected/part-<name>.parquet``: the records rejected one by one, and one row per trace
  rejected for its ``seq`` (``REJECTED_SCHEMA``);

and returns, per file, the report's aggregates (``summary.Summary``) and the 64-bit hashes
of its traces' keys, from which the driver sees whether two files share a trace.

File-level problems (an unreadable file, a bad header, no records) are rejected entries of
their file with no line or row; a Parquet file whose columns do not fit the format is a
``Summary.mismatches`` entry (the scan stops); a file that declares its traces grouped and
breaks the promise is read again as ungrouped, its part written anew.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import posixpath
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from tomkit.checker.chunk import concat_ranges
from tomkit.checker.engine import (
    READ_ROWS,
    decide_chunk,
    grouped_chunks,
    read_pieces,
    split_by_trace,
)
from tomkit.checker.properties import EXACT, HOLDS, UNKNOWN, VIOLATED, Options, properties
from tomkit.checker.spark.exact import check_wanted
from tomkit.checker.spark.properties import NAMES, unknown_reason
from tomkit.checker.spark.read import INDEX_OF_LATENCY
from tomkit.checker.spark.storage import Store
from tomkit.checker.spark.summary import Summary
from tomkit.traces.errors import ColumnError, Location, TraceFormatError
from tomkit.traces.reader import TraceReader

VERDICT_SCHEMA = pa.schema(
    [(k, pa.string()) for k in ("protocol", "config", "trace", "property", "verdict",
                                "clause", "explanation", "witness")] + [("events", pa.int64())])
REJECTED_SCHEMA = pa.schema([("src", pa.string()), ("line", pa.int64()), ("row", pa.int64()),
                             ("field", pa.string()), ("message", pa.string())])
_P = len(NAMES)
# an UNKNOWN detection's explanation, by property and whether the trace has sends
def _reasons(options: Options) -> list[str]:
    """Why a cell the detection calls UNKNOWN is unknown, by (property, has_send)."""
    return [unknown_reason(n, {"send": s}, options) for n in NAMES for s in (False, True)]


_REASONS = _reasons(Options())


@dataclass(frozen=True)
class DataFile:
    path: str  # as records and reports name it: a local path, or a URI (s3://b/k)
    protocol: str
    config: str
    size: int
    store: Store  # where it lives
    fs_path: str  # its path in store.fs


@dataclass(frozen=True)
class Target:
    """Where a scan's tasks write: the staging directory ``root`` (a path of ``store``)."""

    store: Store
    root: str

    def part(self, table: str, name: str) -> str:
        return f"{self.root}/{table}/part-{name}.parquet"


class Parts:
    """The Parquet parts one file (or one set of files) writes under a scan's staging
    directory (``target``; None: the report only, nothing is written)."""

    def __init__(self, target: Target | None, name: str):
        self.target = target
        self.paths = None if target is None else {
            d: target.part(d, name) for d in ("verdicts", "rejected")}
        self.writer: pq.ParquetWriter | None = None
        self.rejected: list[dict] = []

    def verdicts(self, table: pa.Table) -> None:
        if self.paths is None or not table.num_rows:
            return
        if self.writer is None:
            self.writer = pq.ParquetWriter(self.paths["verdicts"], VERDICT_SCHEMA,
                                           filesystem=self.target.store.fs)
        self.writer.write_table(table)

    def discard(self) -> None:
        """Forget what was written (the file is read again)."""
        if self.writer is not None:
            self.writer.close()
            self.target.store.fs.delete_file(self.paths["verdicts"])
            self.writer = None
        self.rejected = []

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        if self.paths is not None and self.rejected:
            pq.write_table(pa.Table.from_pylist(self.rejected, REJECTED_SCHEMA),
                           self.paths["rejected"], filesystem=self.target.store.fs)


def scratch_dir() -> str:
    """Spark's local directory of this executor (where it spills), else the temp dir."""
    dirs = os.environ.get("SPARK_LOCAL_DIRS", "")
    return dirs.split(",")[0] if dirs else tempfile.gettempdir()


@contextmanager
def opened(f: DataFile) -> Iterator[str]:
    """A local path to read ``f`` by: its own, or a copy of a remote file in the scratch
    directory (kept for the duration, with the file's name, whose suffix gives the
    format). A file that cannot be copied is a TraceFormatError of the file."""
    if f.store.local:
        yield f.fs_path
        return
    d = tempfile.mkdtemp(prefix="tomkit-scan-", dir=scratch_dir())
    try:
        local = os.path.join(d, posixpath.basename(f.fs_path))
        try:
            pafs.copy_files(f.fs_path, local, source_filesystem=f.store.fs,
                            destination_filesystem=pafs.LocalFileSystem())
        except (OSError, pa.ArrowException) as e:
            raise TraceFormatError(Location(f.path), f"cannot read: {e}") from None
        yield local
    finally:
        shutil.rmtree(d, ignore_errors=True)


def renamed(e: TraceFormatError, local: str, name: str) -> TraceFormatError:
    """``e`` naming the file ``name`` instead of its local copy ``local``."""
    if local == name:
        return e
    loc = Location(name, e.location.line, e.location.row) \
        if e.location.source == local else e.location
    out = type(e)(loc, e.message.replace(local, name), e.field)
    return out


def _pieces(reader: TraceReader, name: str):
    """The reader's pieces, named after the file as the scan's input names it."""
    for p in read_pieces(reader):
        yield p if p.source == name else dataclasses.replace(p, source=name)


# ---- the two passes --------------------------------------------------------------------


def check_file(f: DataFile, index: int, target: Target | None,
               options: Options = Options()) -> tuple[Summary, np.ndarray]:
    """First pass: one file on its own, written as part ``f<index>``; its Summary and the
    hashes of its traces' keys."""
    parts = Parts(target, f"f{index:06d}")
    summary = Summary()
    names: list[str] = []
    local = f.path
    try:
        with opened(f) as local:
            reader = TraceReader(local, keep_going=True, batch_rows=READ_ROWS,
                                 dictionary=True)
            if reader.info.grouped:
                try:
                    for pieces in grouped_chunks(_pieces(reader, f.path), f.path):
                        names += _chunk(pieces, f, summary, parts, options)
                except TraceFormatError as e:
                    if "declares its traces grouped" not in e.message:
                        raise
                    # the promise is broken: read it again, ungrouped
                    parts.discard()
                    summary, names, reader = Summary(), [], None
            if reader is None or not reader.info.grouped:
                pieces, reader = _read(f, local)
                for part in split_by_trace(pieces):
                    names += _chunk(part, f, summary, parts, options)
            _rejected([renamed(e, local, f.path) for e in reader.rejected], summary, parts)
    except ColumnError as e:  # raised on opening: nothing was written
        return Summary(mismatches=[str(renamed(e, local, f.path))]), np.zeros(0, np.uint64)
    except TraceFormatError as e:
        parts.discard()
        summary = Summary()
        _rejected([renamed(e, local, f.path)], summary, parts)
        names = []
    parts.close()
    return summary, key_hashes(f, names)


def check_together(files: list[DataFile], name: str, target: Target | None,
                   options: Options = Options()) -> Summary:
    """Second pass: files that share traces, as one input (their records merged by trace),
    written as part ``name``."""
    parts = Parts(target, name)
    summary = Summary()
    held = []
    for f in files:
        local = f.path
        try:
            with opened(f) as local:
                pieces, reader = _read(f, local)
        except TraceFormatError as e:  # changed since the first pass read it
            _rejected([renamed(e, local, f.path)], summary, parts)
            continue
        held.extend(pieces)
        _rejected([renamed(e, local, f.path) for e in reader.rejected], summary, parts)
    for part in split_by_trace(held):
        _chunk(part, files[0], summary, parts, options)
    parts.close()
    return summary


def _read(f: DataFile, local: str):
    """All of a file's pieces (read whole: its traces may interleave) and its reader."""
    reader = TraceReader(local, keep_going=True, batch_rows=READ_ROWS, dictionary=True)
    return list(_pieces(reader, f.path)), reader


def key_hashes(f: DataFile, traces: list[str]) -> np.ndarray:
    """64-bit hashes of the keys (protocol, config, trace) of a file's traces: the same on
    every executor (unlike Python's ``hash``), so that the driver sees which files may
    share a trace without a Spark job (``files.py``)."""
    pre = f"{f.protocol}\x1f{f.config}\x1f".encode()
    return np.frombuffer(b"".join(hashlib.blake2b(pre + t.encode(), digest_size=8).digest()
                                  for t in traces), np.uint64)


def _rejected(errors, summary: Summary, parts: Parts) -> None:
    rows = [{"src": e.location.source, "line": e.location.line, "row": e.location.row,
             "field": e.field or "", "message": e.message} for e in errors]
    summary.rejected += len(rows)
    parts.rejected.extend(rows)
    summary.add_listed(rows)


# ---- one chunk of whole traces -------------------------------------------------------------


def _chunk(pieces, f: DataFile, summary: Summary, parts: Parts,
           options: Options = Options()) -> list[str]:
    """Decide a chunk of whole traces: its verdict rows to ``parts``, its share of the
    report to ``summary``; the names of its traces."""
    chunk, codes = decide_chunk(pieces, [properties()[n] for n in NAMES], options)
    reasons = _REASONS if options == Options() else _reasons(options)
    sizes = np.diff(chunk.trace_start)
    bad = chunk.bad_traces
    seq = []
    for ti in sorted(bad):  # rejected for seq: the record named, all records counted
        loc = bad[ti].location
        # the other engines know a Parquet row, not a JSON Lines line, for these
        seq.append({"src": loc.source, "line": None, "row": loc.row, "field": "seq",
                    "message": bad[ti].message})
        summary.seq_traces += 1
        summary.seq_records += int(sizes[ti])
    parts.rejected.extend(seq)
    summary.add_listed(seq)

    good = np.delete(np.arange(chunk.ntr, dtype=np.int64), sorted(bad))
    n = len(good)
    names = [chunk.trace_names[ti] for ti in good.tolist()]
    group = summary.group(f.protocol, f.config)
    group.traces += n
    group.events += int(sizes[good].sum())
    cg = codes[good]
    for k, name in enumerate(NAMES):
        c = group.counts[name]
        c["holds"] += int(np.count_nonzero(cg[:, k] == HOLDS))
        c["unknown"] += int(np.count_nonzero(cg[:, k] == UNKNOWN))
    # verdict, clause, explanation and witness of every (trace, property) cell, trace-major:
    # vectorized from the codes, with Python only for the few cells the reference check
    # decided (flagged)
    verdict = np.where(cg == HOLDS, 0, 1).astype(np.int32).ravel()  # holds / unknown
    has_send = chunk.trace_has["send"][good]
    expl = np.where(cg == UNKNOWN, np.arange(_P) * 2 + has_send[:, None], -1).ravel()
    clause = np.full(n * _P, -1, np.int32)
    witness = np.full(n * _P, -1, np.int32)
    texts: list[str | None] = []  # the flagged cells' strings, by index after _REASONS
    flagged = (cg == VIOLATED) | (cg == EXACT)
    for j in np.flatnonzero(flagged.any(axis=1)).tolist():
        ti = int(good[j])
        wanted = {name: int(cg[j, k]) for k, name in enumerate(NAMES) if flagged[j, k]}
        key = (f.protocol, f.config, names[j])
        for r in check_wanted(key, chunk.trace(ti), wanted, options):
            prop, v, cl, ex, wit, disagreement = r[3:]
            cell = j * _P + NAMES.index(prop)
            group.counts[prop][v] += 1
            verdict[cell] = ("holds", "unknown", "violated").index(v)
            for arr, text in ((clause, cl), (expl, ex), (witness, wit)):
                if text is not None:
                    arr[cell] = len(reasons) + len(texts)
                    texts.append(text)
            if v == "violated":
                summary.add_example(prop, key, ex)
            if disagreement:
                summary.disagreements.append(f"{prop} on trace {key[2]}: {disagreement}")
    group.add_latencies(_flat(*latencies(chunk), good))
    group.add_iol(_flat(*_iols(pieces, chunk), good))
    if parts.paths is not None and n:
        dictionary = pa.array(reasons + texts, pa.string())
        parts.verdicts(pa.table({
            "protocol": pa.repeat(pa.scalar(f.protocol), n * _P),
            "config": pa.repeat(pa.scalar(f.config), n * _P),
            "trace": pa.array(names, pa.string()).take(pa.array(np.repeat(np.arange(n), _P))),
            "property": pa.array(NAMES, pa.string()).take(pa.array(np.tile(np.arange(_P), n))),
            "verdict": pa.array(["holds", "unknown", "violated"]).take(pa.array(verdict)),
            "clause": _strings(clause, dictionary),
            "explanation": _strings(expl, dictionary),
            "witness": _strings(witness, dictionary),
            "events": pa.array(np.repeat(sizes[good].astype(np.int64), _P)),
        }, schema=VERDICT_SCHEMA))
    return names + [chunk.trace_names[ti] for ti in sorted(bad)]


def _strings(index: np.ndarray, dictionary: pa.Array) -> pa.Array:
    """``dictionary[index]``, null where the index is -1."""
    return dictionary.take(pa.array(index, mask=index < 0))


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


def _flat(values: np.ndarray, bounds: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``values[bounds[i]:bounds[i+1]]`` for each i in ``rows``, concatenated."""
    lo, hi = bounds[rows], bounds[rows + 1]
    return values[concat_ranges(lo.astype(np.int64), (hi - lo).astype(np.int64))]


def iter_groups(groups: Iterator[int], plan: list[list[int]], files: list[DataFile],
                target: Target | None, done=None, options: Options = Options(),
                ) -> Iterator[tuple[int, Summary, np.ndarray]]:
    """A first-pass task: (file index, Summary, hashes) for each file of its groups;
    ``done``: a Spark accumulator of (files, events) checked, for the progress line."""
    for g in groups:
        for i in plan[g]:
            summary, hashes = check_file(files[i], i, target, options)
            if done is not None:
                done.add((1, sum(gr.events for gr in summary.groups.values())))
            yield i, summary, hashes
