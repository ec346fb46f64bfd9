"""The streaming check: files in, one verdict per trace and property out.

Records stream from the readers in batches; whole traces are gathered into
chunks of about ``CHUNK_ROWS`` events and each chunk is decided by every
property's vectorized ``detect``. Traces found violated (or not settled
cheaply) go to the properties' exact per-trace checks for their witnesses.

When is a trace complete? A file that declares ``grouped`` (tomkit's
writers do) keeps each trace's records together, so a trace is complete
when the next one starts, and memory holds one chunk. Any other file, or
several files given with ``merge`` (e.g. one log per process), may
interleave traces anywhere, so its traces are complete only at the end:
their records are held in columnar form until then (far smaller than the
text, but proportional to the input).
"""

from __future__ import annotations

import os
import sys
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tomkit.checker.chunk import Chunk, Piece, encode_strings, group_starts
from tomkit.checker.properties import (
    EXACT,
    HOLDS,
    UNKNOWN,
    VIOLATED,
    Options,
    Property,
    properties,
    resolve,
    with_scope,
)
from tomkit.checker.result import Result, Verdict
from tomkit.checker.trace import Trace
from tomkit.traces.errors import Location, TraceFormatError
from tomkit.traces.reader import TraceReader

#: a quarter of a million records: the pages a chunk's arrays touch cost system time on
#: first use, and a chunk of a million (205 MB of arrays, up to four alive with two
#: workers) touched twice as many at no gain in user time (docs/check-speed.md)
CHUNK_ROWS = 1 << 18
READ_ROWS = 1 << 18  # records per batch from the readers


class EngineDisagreement(AssertionError):
    """The vectorized detection and the exact check gave different verdicts: a tomkit bug."""


@dataclass
class FileStats:
    source: str
    fmt: str
    accepted: int = 0
    rejected: int = 0
    grouped: bool | None = None


@dataclass
class TraceOutcome:
    """The verdicts of one trace, with full results where there is something to say."""

    trace: str
    sources: list[str]
    events: int
    verdicts: dict[str, Verdict]
    results: dict[str, Result]  # violated ones (with witness) and unknown ones (with reason)


@dataclass
class CheckReport:
    properties: list[str]
    options: Options
    files: list[FileStats] = field(default_factory=list)
    rejected: list[TraceFormatError] = field(default_factory=list)
    outcomes: list[TraceOutcome] = field(default_factory=list)
    counts: dict[str, Counter] = field(default_factory=dict)
    latencies: list[np.ndarray] = field(default_factory=list)
    latency_by_process: dict[str, list[float]] = field(default_factory=dict)  # count, sum, max
    slowest: list[tuple[float, str, str, str]] = field(default_factory=list)
    #: the properties the verdict and exit code judge (None: all checked); a guarantee
    #: profile checks the others only to fill the profile table (checker/profiles.py)
    judged: list[str] | None = None
    #: the profile rows of the report's last table, filled by the caller
    profiles: list = field(default_factory=list)
    #: the name of the guarantee profile judged, if any
    guarantee: str | None = None

    @property
    def n_rejected(self) -> int:
        return sum(f.rejected for f in self.files)

    @property
    def n_accepted(self) -> int:
        return sum(f.accepted for f in self.files)

    @property
    def violated(self) -> bool:
        judged = self.properties if self.judged is None else self.judged
        return any(self.counts[n][Verdict.VIOLATED] for n in judged if n in self.counts)

    def to_dict(self) -> dict:
        """The report as plain data, as ``tomkit check --format json`` prints it."""
        from tomkit.checker.report import to_dict

        return to_dict(self)

    def exit_code(self) -> int:
        """1 when a property is violated, else 2 when records were rejected, else 0."""
        if self.violated:
            return 1
        return 2 if self.n_rejected else 0


def select(names: Iterable[str] | None, options: Options, liveness: bool = False,
           latency: bool = False, scope: str | None = None) -> list[Property]:
    """The properties to check: the named ones (``NAME@correct`` for a scope), else the
    defaults, plus those checked with ``liveness`` (agreement, validity, liveness), latency
    when a plot asks for it (``latency``), and every property one of whose selecting
    options is given (``--latency-bound``, ``--rate-max`` ...: the options' declarations,
    ``checker/properties/base.py``). ``scope`` judges every property that has one in that
    scope."""
    props = properties()
    if names:
        chosen = [resolve(n) for n in dict.fromkeys(names)]
    else:
        chosen = [p for p in props.values() if p.default]
    have = {p.name for p in chosen}
    given = options.given()
    for p in props.values():
        if p.name not in have and ((liveness and p.liveness)
                                   or (latency and p.name == "latency")
                                   or any(o.selects and o.name in given for o in p.options)):
            chosen.append(p)
    if scope is not None:  # a scope named with the property (NAME@uniform) stays its own
        # (``--scope correct -p total-order-weak@uniform`` judged it @correct, silently)
        named = {resolve(n).name for n in names or () if "@" in n}
        chosen = [with_scope(p, scope) if p.scoped and "@" not in p.name
                  and p.name not in named else p for p in chosen]
    return chosen


def check_paths(paths: list[str | os.PathLike], props: list[Property],
                options: Options = Options(), *, keep_going: bool = False,
                merge: bool = False, progress: bool = False,
                workers: int | None = None,
                on_violation: Callable[[Trace, Result], None] | None = None) -> CheckReport:
    """Check every trace of the given files. Raises TraceFormatError on bad input unless
    ``keep_going``, in which case bad records are counted and listed in the report.
    ``on_violation(trace, result)`` is called for every violated property of a trace
    (to draw its witness: ``checker/pictures.py``).

    The calling thread reads and records results in input order; ``workers`` threads
    (default: one per core, at most 4) build chunks and run the detectors, whose numpy
    and Arrow work releases the GIL."""
    report = CheckReport([p.name for p in props], options)
    report.counts = {p.name: Counter() for p in props}
    bar = _progress(progress)
    workers = workers or min(4, os.cpu_count() or 1)
    held: list[Piece] = []
    with ThreadPoolExecutor(workers) as pool:
        inflight: deque[Future] = deque()

        def submit(pieces: list[Piece]) -> None:
            inflight.append(pool.submit(decide_chunk, pieces, props, options))
            while len(inflight) > workers:
                _record(*inflight.popleft().result(), props, options, report, keep_going,
                        on_violation)

        for path in paths:
            reader = TraceReader(path, keep_going=keep_going, batch_rows=READ_ROWS,
                                 dictionary=True)
            stats = FileStats(str(path), reader.info.fmt, grouped=reader.info.grouped)
            report.files.append(stats)
            stream = read_pieces(reader, bar)
            regrouped: list[TraceFormatError] = []
            if reader.info.grouped and not merge:
                for chunk_pieces in grouped_chunks(stream, str(path),
                                                   regrouped if keep_going else None):
                    submit(chunk_pieces)
            else:
                pieces = list(stream)
                if merge:
                    held.extend(pieces)
                else:
                    for part in split_by_trace(pieces):
                        submit(part)
            # += because rejected traces (found while checking) move their records from
            # accepted to rejected
            stats.accepted += reader.accepted - len(regrouped)
            stats.rejected += len(reader.rejected) + len(regrouped)
            report.rejected.extend(reader.rejected)
            report.rejected.extend(regrouped)
        for part in split_by_trace(held):
            submit(part)
        while inflight:
            _record(*inflight.popleft().result(), props, options, report, keep_going,
                        on_violation)
    if bar is not None:
        bar.close()
    return report


def _progress(enabled: bool):
    if not enabled or not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    return tqdm(unit=" events", unit_scale=True, file=sys.stderr, desc="checking")


def read_pieces(reader: TraceReader, bar=None) -> Iterator[Piece]:
    """A reader's non-empty batches as pieces, their string columns encoded for the chunks
    (``bar``: a tqdm progress bar to advance, or None)."""
    for b in reader:
        if bar is not None:
            bar.update(b.table.num_rows)
        if b.table.num_rows:
            yield Piece(encode_strings(b.table), b.lines, b.source, b.fmt)


def grouped_chunks(stream: Iterator[Piece], source: str,
                   rejected: list[TraceFormatError] | None = None) -> Iterator[list[Piece]]:
    """Cut a grouped file's batches into chunks of whole traces; a trace that appears
    again after another started breaks the file's promise and is bad input. With
    ``rejected`` (keep going), each record of such a run is reported there, one error
    per record, and dropped; every other record is checked."""
    done: set[str] = set()
    pending: list[Piece] = []  # complete traces
    rows = 0
    open_parts: list[Piece] = []  # the trace still being read
    open_id: str | None = None
    for piece in stream:
        col = piece.table.column("trace").combine_chunks()
        enc = col if pa.types.is_dictionary(col.type) else pc.dictionary_encode(col)
        ids = enc.dictionary.to_pylist()
        codes = enc.indices.to_numpy()
        starts = group_starts(codes)
        run_ids = [ids[codes[s]] for s in starts[:-1]]
        here: set[str] = set()  # ids of the runs before k in this piece (a set: a piece has
        again: list[int] = []  # thousands of runs, a list scan is quadratic)
        for k, tid in enumerate(run_ids):
            if tid in done or (k > 0 and tid == open_id) or tid in here:
                if rejected is None:
                    raise TraceFormatError(_loc(piece, int(starts[k])),
                                           f"trace {tid!r} appears again after other "
                                           "traces, but the file declares its traces "
                                           "grouped", "trace")
                again.append(k)
            here.add(tid)
        if again:
            assert rejected is not None
            keep = np.ones(piece.table.num_rows, bool)
            for k in again:
                lo, hi = int(starts[k]), int(starts[k + 1])
                keep[lo:hi] = False
                rejected.extend(
                    TraceFormatError(_loc(piece, i), f"trace {run_ids[k]!r} appears again "
                                     "after other traces, but the file declares its traces "
                                     "grouped", "trace") for i in range(lo, hi))
            if not keep.any():
                continue
            idx = np.flatnonzero(keep)
            piece = Piece(piece.table.take(pa.array(idx)), piece.lines[idx], piece.source,
                          piece.fmt)
            col = piece.table.column("trace").combine_chunks()
            enc = col if pa.types.is_dictionary(col.type) else pc.dictionary_encode(col)
            ids = enc.dictionary.to_pylist()
            codes = enc.indices.to_numpy()
            starts = group_starts(codes)
            run_ids = [ids[codes[s]] for s in starts[:-1]]
        # the first run may continue the open trace; the last run stays open
        first_new = 1 if run_ids[0] == open_id else 0
        if first_new:
            open_parts.append(_slice(piece, 0, int(starts[1])))
        if len(run_ids) > first_new:
            if open_id is not None:
                done.add(open_id)
            pending.extend(open_parts)
            done.update(run_ids[first_new:-1])
            lo, hi = int(starts[first_new]), int(starts[-2])
            if hi > lo:
                pending.append(_slice(piece, lo, hi))
            open_id, open_parts = run_ids[-1], [_slice(piece, hi, int(starts[-1]))]
        rows = sum(p.table.num_rows for p in pending)
        if rows >= CHUNK_ROWS:
            yield pending
            pending = []
    pending.extend(open_parts)
    if pending:
        yield pending


def split_by_trace(pieces: list[Piece]) -> Iterator[list[Piece]]:
    """Regroup pieces whose traces interleave into chunks of whole traces."""
    if not pieces:
        return
    total = sum(p.table.num_rows for p in pieces)
    if total <= CHUNK_ROWS:
        yield pieces
        return
    col = pa.chunked_array([p.table.column("trace").combine_chunks().cast(pa.string())
                            for p in pieces])
    enc = pc.dictionary_encode(col).combine_chunks()
    codes = enc.indices.to_numpy()
    sizes = np.bincount(codes)
    bounds = np.cumsum(sizes) // CHUNK_ROWS  # consecutive trace codes, about CHUNK_ROWS each
    offsets = np.cumsum([0] + [p.table.num_rows for p in pieces])
    for b in np.unique(bounds):
        wanted = np.flatnonzero(bounds == b)
        mask_all = np.isin(codes, wanted)
        out = []
        for i, p in enumerate(pieces):
            m = mask_all[offsets[i]:offsets[i + 1]]
            if m.any():
                out.append(Piece(p.table.filter(pa.array(m)), p.lines[m], p.source, p.fmt))
        yield out


def _slice(piece: Piece, lo: int, hi: int) -> Piece:
    return Piece(piece.table.slice(lo, hi - lo), piece.lines[lo:hi], piece.source, piece.fmt)


def _loc(piece: Piece, i: int) -> Location:
    n = int(piece.lines[i])
    return Location(piece.source, row=n) if piece.fmt == "parquet" else Location(piece.source,
                                                                                 line=n)


def decide_chunk(pieces: list[Piece], props: list[Property],
            options: Options) -> tuple[Chunk, np.ndarray]:
    """Build a chunk and run every detector on it: the chunk and its detection codes
    (trace x property). The engine runs it in a worker thread; the Spark files engine's
    tasks call it directly."""
    chunk = Chunk.build(pieces)
    codes = np.stack([p.detect(chunk, options) for p in props], axis=1) if props else \
        np.zeros((chunk.ntr, 0), np.int8)
    return chunk, codes


def _record(chunk: Chunk, codes: np.ndarray, props: list[Property], options: Options,
            report: CheckReport, keep_going: bool,
            on_violation: Callable[[Trace, Result], None] | None = None) -> None:
    """Turn a decided chunk into trace outcomes: exact checks and witnesses where needed."""
    if chunk.bad_traces and not keep_going:
        raise chunk.bad_traces[min(chunk.bad_traces)]  # the trace that appears first
    if "latencies" in chunk.cache:
        report.latencies.append(chunk.cache["latencies"])
        for proc, (k, total, top) in chunk.cache["latency_by_process"].items():
            acc = report.latency_by_process.setdefault(proc, [0, 0.0, float("-inf")])
            acc[0] += k
            acc[1] += total
            acc[2] = max(acc[2], top)
        report.slowest = sorted(report.slowest + chunk.cache["slowest"], reverse=True)[:5]
    sizes = np.diff(chunk.trace_start)
    single = sorted(set(chunk.sources)) if len(set(chunk.sources)) == 1 else None
    for ti in range(chunk.ntr):
        if ti in chunk.bad_traces:
            err = chunk.bad_traces[ti]
            report.rejected.append(err)
            _file_stats(report, err.location.source).rejected += int(sizes[ti])
            _file_stats(report, err.location.source).accepted -= int(sizes[ti])
            continue
        row = codes[ti]
        verdicts: dict[str, Verdict] = {}
        results: dict[str, Result] = {}
        trace = None
        for k, prop in enumerate(props):
            code = int(row[k])
            if code in (VIOLATED, EXACT):
                trace = trace or chunk.trace(ti)
                res = prop.check(trace, options)
                if code == VIOLATED and res.verdict != Verdict.VIOLATED:
                    raise EngineDisagreement(
                        f"{prop.name} on trace {trace.id}: detect says violated, "
                        f"check says {res.verdict}")
                verdict = res.verdict
                if verdict != Verdict.HOLDS:
                    results[prop.name] = res
                if verdict == Verdict.VIOLATED and on_violation is not None:
                    on_violation(trace, res)
            elif code == UNKNOWN:
                verdict = Verdict.UNKNOWN
                reason = prop.reason(chunk, ti, options) if prop.reason else "not decidable"
                results[prop.name] = Result(prop.name, chunk.trace_names[ti], verdict,
                                            explanation=reason)
            else:
                assert code == HOLDS
                verdict = Verdict.HOLDS
            verdicts[prop.name] = verdict
            report.counts[prop.name][verdict] += 1
        srcs = single
        if srcs is None:
            lo, hi = chunk.trace_start[ti], chunk.trace_start[ti + 1]
            srcs = sorted({chunk.sources[s] for s in np.unique(chunk.src[lo:hi])})
        report.outcomes.append(TraceOutcome(chunk.trace_names[ti], srcs, int(sizes[ti]),
                                            verdicts, results))


def _file_stats(report: CheckReport, source: str) -> FileStats:
    return next(f for f in report.files if f.source == source)
