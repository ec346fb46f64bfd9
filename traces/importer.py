"""Third-party logs into v1 traces, by a mapping file and no code.

A protocol engineer has logs already: JSON Lines from a service, CSV from a test
harness, or text lines with a regular expression per event, as ShiViz reads them (Beschastnikh
et al., "Debugging distributed systems", CACM 2016: one regular expression with named
groups per log, one file per host or interleaved). A mapping (TOML) says how a line
becomes a record:

    format = "regex"                      # jsonl | csv | regex
    regex = '^(?<time>\\S+) (?<host>\\w+) (?<event>SEND|DELIVER) (?<id>\\S+)$'
    trace = "run-1"                       # a constant trace id ...
    [fields]                              # v1 field = the log's field (or named group)
    process = "host"
    kind = "event"
    msg = "id"
    time = "time"
    [kinds]                               # the log's values -> v1 kinds
    SEND = "send"
    DELIVER = "deliver"
    [time]
    format = "iso"                        # number | ms | us | ns | iso | a strptime format

More keys: ``trace`` may instead be mapped in ``[fields]``; ``process`` may come from
the file name (``[file] process = 'node-(\\w+)\\.log'``, its first group, or its
named group ``process``); ``list_separator`` splits ``deps`` and ``members`` given as
text (default ","); ``skip`` is a list of regular expressions for lines that are not
events (headers, banners): they are counted, not read; ``extensions = true`` keeps
every field the mapping does not name as an ``x_<name>`` extension field; ``[csv]``
takes ``delimiter`` and ``header`` (default true: the first row names the columns, else
``columns = [...]``).

Every line is read, skipped by a ``skip`` pattern or blank, or rejected with its file,
line and field (:class:`~tomkit.traces.errors.TraceFormatError`); nothing is dropped
without a count. Each process's records keep the order of its lines, files taken in
the order given; ``seq`` is written so that order survives any merge.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from tomkit.traces.errors import Location, TraceFormatError
from tomkit.traces.settings import closest, read_toml
from tomkit.traces.validate import record_problem

__all__ = ["ImportStats", "LiveImport", "Mapping", "MappingError", "file_process", "import_logs",
           "load_mapping"]

FORMATS = ("jsonl", "csv", "regex")
V1_FIELDS = ("trace", "process", "kind", "msg", "deps", "view", "members", "time")
TOP_KEYS = {"format", "regex", "trace", "fields", "kinds", "time", "file", "skip",
            "list_separator", "extensions", "csv"}
TIME_FORMATS = ("number", "ms", "us", "ns", "iso")
_SCALE = {"number": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
#: bytes that are not UTF-8, as the surrogateescape decoding keeps them
_UNDECODED = re.compile("[\udc80-\udcff]")


class MappingError(ValueError):
    """A mapping that cannot be used, with its file and key."""


@dataclass(frozen=True)
class Mapping:
    path: str
    format: str
    fields: dict[str, str]
    kinds: dict[str, str]
    trace: str | None = None
    regex: re.Pattern | None = None
    time_format: str = "number"
    file_process: re.Pattern | None = None
    skip: tuple[re.Pattern, ...] = ()
    list_separator: str = ","
    extensions: bool = False
    csv_delimiter: str = ","
    csv_header: bool = True
    csv_columns: tuple[str, ...] = ()


def _regex(text: str, path: str, key: str) -> re.Pattern:
    # ShiViz and Java write named groups as (?<name>...); Python as (?P<name>...)
    text = re.sub(r"\(\?<(?=[A-Za-z_])", "(?P<", text)
    try:
        return re.compile(text)
    except re.error as e:
        raise MappingError(f"{path}: {key}: not a regular expression: {e}") from None


def load_mapping(path: str | os.PathLike) -> Mapping:
    """Read and check a mapping file; MappingError names the file and the key."""
    path = os.fspath(path)
    doc = read_toml(path, TOP_KEYS, MappingError)
    fmt = doc.get("format")
    if fmt not in FORMATS:
        raise MappingError(f"{path}: format must be one of {', '.join(FORMATS)}, not {fmt!r}"
                           + closest(fmt, FORMATS))
    fields = doc.get("fields", {})
    if not isinstance(fields, dict) or not all(isinstance(v, str) for v in fields.values()):
        raise MappingError(f"{path}: [fields] maps v1 fields to the log's field names")
    bad = sorted(set(fields) - set(V1_FIELDS))
    if bad:
        raise MappingError(f"{path}: fields: {bad[0]!r} is not a v1 field (one of "
                           f"{', '.join(V1_FIELDS)}; seq is written by the importer)"
                           + closest(bad[0], V1_FIELDS))
    kinds = doc.get("kinds", {})
    from tomkit.traces.schema import KINDS

    for k, v in kinds.items():
        if v not in KINDS:
            raise MappingError(f"{path}: kinds: {k!r} maps to {v!r}, not a kind "
                               f"({', '.join(KINDS)})" + closest(v, KINDS))
    if "kind" not in fields:
        raise MappingError(f"{path}: fields: 'kind' must be mapped")
    file_cfg = doc.get("file", {})
    if "process" not in fields and "process" not in file_cfg:
        raise MappingError(f"{path}: the process comes from [fields] process or from "
                           "[file] process (a pattern on the file name)")
    trace = doc.get("trace")
    if trace is None and "trace" not in fields:
        raise MappingError(f"{path}: give a constant 'trace' or map it in [fields]")
    if trace is not None and (not isinstance(trace, str) or not trace):
        raise MappingError(f"{path}: trace must be a non-empty string")
    regex = None
    if fmt == "regex":
        if not isinstance(doc.get("regex"), str):
            raise MappingError(f"{path}: format 'regex' needs a 'regex'")
        regex = _regex(doc["regex"], path, "regex")
        missing = sorted(set(fields.values()) - set(regex.groupindex))
        if missing:
            raise MappingError(f"{path}: fields: the regex has no group named {missing[0]!r}")
    time_cfg = doc.get("time", {})
    time_format = time_cfg.get("format", "number") if isinstance(time_cfg, dict) else None
    if not isinstance(time_format, str):
        raise MappingError(f"{path}: [time] format must be a string")
    if time_format not in TIME_FORMATS and "%" not in time_format:
        raise MappingError(f"{path}: time: format {time_format!r} is not one of "
                           f"{', '.join(TIME_FORMATS)} or a strptime format")
    file_process = None
    if "process" in file_cfg:
        file_process = _regex(file_cfg["process"], path, "file.process")
    skip = tuple(_regex(s, path, "skip") for s in doc.get("skip", []))
    csv_cfg = doc.get("csv", {})
    return Mapping(path, fmt, dict(fields), dict(kinds), trace, regex, time_format,
                   file_process, skip, doc.get("list_separator", ","),
                   bool(doc.get("extensions", False)), csv_cfg.get("delimiter", ","),
                   bool(csv_cfg.get("header", True)), tuple(csv_cfg.get("columns", ())))


@dataclass
class ImportStats:
    """Lines read per outcome; read == records + rejected + skipped + blank."""

    read: int = 0
    records: int = 0
    skipped: int = 0
    blank: int = 0
    rejected: list[TraceFormatError] = field(default_factory=list)


def _rows(m: Mapping, path: str, stats: ImportStats) -> Iterator[tuple[int, dict]]:
    """(line, the log's fields) of one file; raises or counts what is not an event."""
    with open(path, "rb") as f:
        data = f.read()
    text = data.decode("utf-8", errors="surrogateescape")
    lines = text.splitlines()
    if m.format == "csv":
        columns = list(m.csv_columns) if not m.csv_header else None
        for line, row in _csv_rows(m, text, 0, columns, stats):
            if None not in row:  # not the header
                yield line, row
        return
    for i, raw in enumerate(lines, 1):
        row = _text_row(m, raw, stats)
        if row is not None:
            yield i, row


def _csv_rows(m: Mapping, text: str, before: int, columns: list[str] | None,
              stats: ImportStats) -> Iterator[tuple[int, dict]]:
    """(line, fields) of CSV ``text`` whose first line is line ``before + 1``; ``columns``
    None: its first row is the header (then yielded as ``(line, None)`` for a caller
    that keeps it)."""
    reader = csv.reader(io.StringIO(text), delimiter=m.csv_delimiter)
    if columns is None:
        try:
            columns = next(reader)
        except StopIteration:
            return
        stats.read += 1
        stats.skipped += 1  # the header row
        yield before + reader.line_num, {None: columns}
    for row in reader:
        stats.read += 1
        line = before + reader.line_num
        if not any(x.strip() for x in row):
            stats.blank += 1
            continue
        if len(row) != len(columns):
            yield line, {"": f"{len(row)} columns, the header has {len(columns)}"}
            continue
        if any(_UNDECODED.search(x) for x in row):
            yield line, {"": "not valid UTF-8"}
            continue
        yield line, dict(zip(columns, row))


def _text_row(m: Mapping, raw: str, stats: ImportStats) -> dict | None:
    """The log's fields of one line of a jsonl or regex log (``{"": problem}`` for a bad
    line); None for a blank line or one the mapping skips (counted)."""
    stats.read += 1
    if not raw.strip():
        stats.blank += 1
        return None
    if any(p.search(raw) for p in m.skip):
        stats.skipped += 1
        return None
    if _UNDECODED.search(raw):
        return {"": "not valid UTF-8"}
    if m.format == "jsonl":
        try:
            obj = json.loads(raw)
        except (ValueError, RecursionError) as e:
            return {"": f"invalid JSON: {e}"}
        if not isinstance(obj, dict):
            return {"": "not a JSON object"}
        return obj
    assert m.regex is not None
    match = m.regex.search(raw)
    if match is None:
        return {"": "the line does not match the mapping's regex"}
    return {k: v for k, v in match.groupdict().items() if v is not None}


def _time(value: Any, fmt: str) -> float:
    if fmt in _SCALE:
        if isinstance(value, bool):
            raise ValueError("a boolean is not a time")
        return float(value) * _SCALE[fmt]
    text = str(value)
    if fmt == "iso":
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    return datetime.strptime(text, fmt).timestamp()


def _record(m: Mapping, row: dict, process: str | None) -> tuple[dict | None, tuple]:
    """The v1 record of one log row, or (None, (field, problem))."""
    if "" in row:
        return None, (None, row[""])
    rec: dict[str, Any] = {}
    if m.trace is not None:
        rec["trace"] = m.trace
    if process is not None:
        rec["process"] = process
    for v1, src in m.fields.items():
        if src not in row or row[src] in (None, ""):
            continue
        value = row[src]
        if v1 == "kind":
            text = str(value)
            if m.kinds:
                if text not in m.kinds:
                    return None, ("kind", f"{text!r} is not one of the mapped kinds "
                                          f"({', '.join(m.kinds)})")
                text = m.kinds[text]
            value = text
        elif v1 == "time":
            try:
                value = _time(value, m.time_format)
            except (ValueError, OverflowError, TypeError) as e:
                return None, ("time", f"{value!r} is not a time in format "
                                      f"{m.time_format!r}: {e}")
        elif v1 in ("deps", "members"):
            if isinstance(value, str):
                value = [x.strip() for x in value.split(m.list_separator) if x.strip()]
        else:
            value = value if isinstance(value, str) else json.dumps(value)
        rec[v1] = value
    if rec.get("kind") != "view":
        rec.pop("members", None)
        rec.pop("view", None)
    if rec.get("kind") != "send":
        rec.pop("deps", None)
    if rec.get("kind") not in ("send", "recv", "deliver"):
        rec.pop("msg", None)
    if m.extensions:
        named = set(m.fields.values())
        for k, v in row.items():
            if k not in named:
                rec["x_" + re.sub(r"\W", "_", str(k))] = v
    problem = record_problem(rec)
    if problem is not None:
        return None, problem
    return rec, ()


def file_process(m: Mapping, path: str) -> str | None:
    """The process a file's name gives (``[file] process``), None without that key."""
    if m.file_process is None:
        return None
    match = m.file_process.search(os.path.basename(path))
    if match is None:
        raise TraceFormatError(Location(path), "the file name does not match the "
                               "mapping's [file] process pattern", "process")
    return match.groupdict().get("process") or match.group(1 if match.re.groups else 0)


class LiveImport:
    """The importer over one log that is still being written (``tomkit watch --mapping``):
    complete lines in, the v1 records :func:`import_logs` makes of them out, ``seq``
    counted on from ``seq`` (shared by the logs of one import, so that a process's
    records are numbered in the order they are read: import_logs' order when each
    process's records come from one file, or from one interleaved log)."""

    def __init__(self, mapping: Mapping, path: str, seq: dict[tuple[str, str], int]) -> None:
        self.m, self.path, self.seq = mapping, path, seq
        self.process = file_process(mapping, path)
        #: a CSV log's columns once its header row is read (kept across reads)
        self.columns: list[str] | None = (None if mapping.csv_header else
                                          list(mapping.csv_columns))

    def cut(self, data: bytes) -> int:
        """How many bytes of ``data`` are complete records: up to its last newline, in a
        CSV log the last one outside a quoted field (a quoted field may hold newlines)."""
        if self.m.format != "csv" or b'"' not in data:
            return data.rfind(b"\n") + 1
        arr = np.frombuffer(data, np.uint8)
        nl = np.flatnonzero(arr == 10)
        # the quotes before each newline: an even count closes every quoted field
        quotes = np.cumsum(arr == 34)[nl]
        closed = nl[quotes % 2 == 0]
        return int(closed[-1]) + 1 if len(closed) else 0

    def records(self, data: bytes, first_line: int, stats: ImportStats, *,
                keep_going: bool) -> tuple[list[dict], list[int], int]:
        """The records of complete lines ``data`` (line ``first_line`` first), their lines,
        and the number of lines read. A bad line raises TraceFormatError naming the file,
        line and field, or with ``keep_going`` is added to ``stats.rejected``."""
        text = data.decode("utf-8", errors="surrogateescape")
        lines = text.splitlines()
        if self.m.format == "csv":
            rows = []
            for line, row in _csv_rows(self.m, text, first_line - 1, self.columns, stats):
                if None in row:
                    self.columns = row[None]
                else:
                    rows.append((line, row))
        else:
            rows = [(first_line + i, row) for i, raw in enumerate(lines)
                    if (row := _text_row(self.m, raw, stats)) is not None]
        records, at = [], []
        for line, row in rows:
            rec, problem = _record(self.m, row, self.process)
            if rec is None:
                err = TraceFormatError(Location(self.path, line=line), problem[1], problem[0])
                if not keep_going:
                    raise err
                stats.rejected.append(err)
                continue
            key = (rec["trace"], rec["process"])
            rec["seq"] = self.seq.get(key, 0)
            self.seq[key] = rec["seq"] + 1
            records.append(rec)
            at.append(line)
            stats.records += 1
        return records, at, len(lines)


def import_logs(mapping: Mapping, paths: Sequence[str | os.PathLike], *,
                keep_going: bool = False) -> tuple[list[dict], ImportStats]:
    """The v1 records of the logs ``paths`` (in order) and the counts. Raises
    TraceFormatError at the first bad line unless ``keep_going``."""
    stats = ImportStats()
    records: list[dict] = []
    seq: dict[tuple[str, str], int] = {}
    for p in paths:
        path = os.fspath(p)
        process = file_process(mapping, path)
        for line, row in _rows(mapping, path, stats):
            rec, problem = _record(mapping, row, process)
            if rec is None:
                err = TraceFormatError(Location(path, line=line), problem[1], problem[0])
                if not keep_going:
                    raise err
                stats.rejected.append(err)
                continue
            key = (rec["trace"], rec["process"])
            rec["seq"] = seq.get(key, 0)
            seq[key] = rec["seq"] + 1
            records.append(rec)
            stats.records += 1
    return records, stats
