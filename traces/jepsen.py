"""Jepsen and Maelstrom histories into v1 traces: the kafka (queue) and list-append
workloads.

A history is a list of operations, each an ``invoke`` and its completion (``ok``,
``fail``: it did not happen, ``info``: it may have), by a ``process`` that does one at
a time (Kingsbury's Jepsen, ``jepsen.history``). Files: ``history.edn`` (one EDN map
per line, read by :mod:`~tomkit.traces.edn`), a JSON array (``.json``) or JSON Lines
(``.jsonl``, such as ``tomkit run`` writes).

* kafka (Jepsen's ``jepsen.tests.kafka``, Maelstrom's kafka workload): ``:send`` and
  ``:poll`` (and ``:txn`` of both) carry micro-operations ``[:send key value]``,
  completed as ``[:send key [offset value]]``, and ``[:poll {key [[offset value] ...]}]``;
  ``tomkit run``'s own ``send`` and ``poll`` are the same. One trace per key
  (``NAME/key``); a ``send`` record per send that may have happened (with ``x_offset``
  when acknowledged), a ``deliver`` with ``x_offset`` per polled message; each process
  is one reader run, and ``:assign``, ``:subscribe`` and ``list_committed_offsets``
  start a new one (``p3~2``), as does a process that crashed (Jepsen then uses a new
  process id anyway). Judged by ``log-offsets`` and ``integrity``.
* list-append (Elle's ``:txn`` of ``[:append key value]`` and ``[:r key list]``): one
  trace per key; a ``send`` per append that may have happened; each completed read is
  its own process (``p3.r17``: process 3's read in op 17) delivering the list it saw, in
  order, with ``x_offset`` its position. Judged by ``prefix-order`` (every read a prefix
  of one order: Elle's incompatible order), ``integrity`` (a value read that was never
  appended; one appended twice) and ``log-offsets``.

Every record carries ``x_op`` (the operation's position among the client operations)
and ``x_line`` (the line of the history it came from). Nemesis operations (process
``:nemesis``) are counted, not read; so are operations of
other functions (``:crash``, ``:debug-topic-partitions``). A line that is not an
operation is an error naming file, line and field.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .edn import EdnError, Keyword, loads
from .errors import Location, TraceFormatError

__all__ = ["WORKLOADS", "HistoryStats", "import_history", "read_history"]

WORKLOADS = ("kafka", "list-append")
TYPES = ("invoke", "ok", "fail", "info")
KAFKA_FS = {"send", "poll", "txn", "assign", "subscribe", "list_committed_offsets",
            "commit_offsets"}


@dataclass
class HistoryStats:
    ops: int = 0
    nemesis: int = 0
    other: dict[str, int] = field(default_factory=dict)
    records: int = 0
    workload: str = ""
    keys: int = 0


@dataclass
class _Op:
    process: Any
    f: str
    value: Any
    type: str
    location: Location
    index: int
    time: float | None
    result: Any = None
    done: str = "invoke"
    done_time: float | None = None


def _plain(v: Any) -> Any:
    """EDN or JSON values with keywords as their names (strings)."""
    if isinstance(v, Keyword):
        return str.__str__(v)
    if isinstance(v, dict):
        return {_plain(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, frozenset):
        return sorted((_plain(x) for x in v), key=repr)
    return v


def _lines(path: str) -> Iterator[tuple[int, Any]]:
    name = os.fspath(path)
    if name.endswith(".json"):
        with open(name) as f:
            try:
                data = json.load(f)
            except ValueError as e:
                raise TraceFormatError(Location(name, line=getattr(e, "lineno", None)),
                                       f"not JSON: {e}") from None
        if not isinstance(data, list):
            raise TraceFormatError(Location(name, line=1), "a JSON history is an array of "
                                   "operations")
        for i, op in enumerate(data):
            yield i + 1, op  # the operation's position stands in for its line
        return
    edn = not name.endswith(".jsonl")
    with open(name, errors="surrogateescape") as f:
        for n, line in enumerate(f, 1):
            text = line.strip()
            if not text or text.startswith(";"):
                continue
            try:
                yield n, _plain(loads(text)) if edn else json.loads(text)
            except EdnError as e:
                raise TraceFormatError(Location(name, line=n), f"not EDN: {e}") from None
            except ValueError as e:
                raise TraceFormatError(Location(name, line=n), f"not JSON: {e}") from None


def read_history(path: str | os.PathLike) -> tuple[list[_Op], HistoryStats]:
    """The client operations of a history, invocations paired with their completions."""
    name = os.fspath(path)
    stats = HistoryStats()
    ops: list[_Op] = []
    pending: dict[Any, _Op] = {}
    for n, raw in _lines(name):
        loc = Location(name, line=n)
        if not isinstance(raw, dict):
            raise TraceFormatError(loc, "an operation is a map")
        for key in ("type", "f", "process"):
            if key not in raw:
                raise TraceFormatError(loc, f"operation without {key}", key)
        typ, f, proc = raw["type"], raw["f"], raw["process"]
        if proc == "nemesis":
            stats.nemesis += 1
            continue
        if typ not in TYPES:
            raise TraceFormatError(loc, f"type {typ!r} is not one of {', '.join(TYPES)}",
                                   "type")
        if not isinstance(f, str):
            raise TraceFormatError(loc, f"f {f!r} is not a name", "f")
        if isinstance(proc, bool) or not isinstance(proc, (int, str)):
            raise TraceFormatError(loc, f"process {proc!r} is not a number or name", "process")
        t = raw.get("time")
        t = float(t) / 1e9 if isinstance(t, (int, float)) and not isinstance(t, bool) else None
        if typ == "invoke":
            if proc in pending:
                raise TraceFormatError(loc, f"process {proc} invokes again before its "
                                       f"operation at {pending[proc].location} completed",
                                       "process")
            op = _Op(proc, f, raw.get("value"), typ, loc, len(ops), t)
            pending[proc] = op
            ops.append(op)
            stats.ops += 1
        else:
            op = pending.pop(proc, None)
            if op is None:
                raise TraceFormatError(loc, f"process {proc} completes an operation it never "
                                       "invoked", "process")
            if op.f != f:
                raise TraceFormatError(loc, f"process {proc} invoked {op.f} and completes "
                                       f"{f}", "f")
            op.done, op.result, op.done_time = typ, raw.get("value"), t
    return ops, stats


def _guess(ops: list[_Op]) -> str:
    fs = {op.f for op in ops}
    if fs & {"send", "poll", "assign", "subscribe"}:
        return "kafka"
    for op in ops:
        if op.f == "txn" and isinstance(op.value, list):
            for mop in op.value:
                if isinstance(mop, list) and mop and mop[0] in ("append", "r"):
                    return "list-append"
                if isinstance(mop, list) and mop and mop[0] in ("send", "poll"):
                    return "kafka"
    raise TraceFormatError(Location(ops[0].location.source if ops else "<history>", line=1),
                           "cannot tell the workload (kafka or list-append); name it")


def _who(process: Any) -> str:
    """A Jepsen process as a v1 process name: p3 for process 3."""
    return f"p{process}" if isinstance(process, int) else str(process)


def _msg(v: Any) -> str:
    if isinstance(v, int) and not isinstance(v, bool):
        return str(v)
    return "json:" + json.dumps(v, sort_keys=True)


def _mops(op: _Op, value: Any) -> list[list[Any]]:
    """The micro-operations of a kafka op's value (tomkit run's send/poll have their own
    shapes: [key, value] / {key: from} invoked, [key, offset] / {key: pairs} completed)."""
    if op.f in ("send", "poll") and value is not None and not (
            isinstance(value, list) and value and isinstance(value[0], list)):
        if op.f == "send" and isinstance(value, list) and len(value) == 2:
            return [["send", value[0], value[1]]]
        if op.f == "poll" and isinstance(value, dict):
            return [["poll", value]]
    if not isinstance(value, list):
        return []
    return [m for m in value if isinstance(m, list) and m]


def _kafka(ops: list[_Op], name: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    run: dict[Any, int] = {}

    def session(p: Any) -> str:
        k = run.get(p, 0)
        return _who(p) if k == 0 else f"{_who(p)}~{k + 1}"

    for op in ops:
        who = session(op.process)
        base = {"time": op.time, "x_op": op.index, "x_line": op.location.line}
        if op.f in ("send", "txn", "poll") and op.done != "fail":
            sent = _mops(op, op.value) if op.done != "ok" else _mops(op, op.result)
            if op.f == "send" and op.done == "ok" and len(sent) == 1 and not isinstance(
                    sent[0][2], list):
                # tomkit run's send: completed value [key, offset]
                (_, k, off), = sent
                v = _mops(op, op.value)[0][2]
                sent = [["send", k, [off, v]]]
            for m in sent:
                if m[0] == "send" and len(m) == 3:
                    k, v = m[1], m[2]
                    rec = {"trace": f"{name}/{k}", "process": who, "kind": "send", **base}
                    if op.done == "ok" and isinstance(v, list) and len(v) == 2:
                        rec["msg"], rec["x_offset"] = _msg(v[1]), v[0]
                    else:
                        rec["msg"] = _msg(v)
                    out.append(rec)
                elif m[0] == "poll" and op.done == "ok" and len(m) == 2 and isinstance(
                        m[1], dict):
                    for k, pairs in sorted(m[1].items(), key=lambda x: str(x[0])):
                        for pair in pairs or []:
                            if not (isinstance(pair, list) and len(pair) == 2):
                                raise TraceFormatError(op.location, f"a poll of key {k} "
                                                       f"returns {pair!r}, not [offset "
                                                       "message]", "value")
                            out.append({"trace": f"{name}/{k}", "process": who,
                                        "kind": "deliver", "msg": _msg(pair[1]),
                                        "x_offset": pair[0], **base})
        if op.f in ("assign", "subscribe", "list_committed_offsets") or op.done == "info":
            run[op.process] = run.get(op.process, 0) + 1
    return out


def _list_append(ops: list[_Op], name: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for op in ops:
        if op.f != "txn" or op.done == "fail":
            continue
        value = op.result if op.done == "ok" else op.value
        for m in value or []:
            if not (isinstance(m, list) and len(m) == 3):
                raise TraceFormatError(op.location, f"micro-operation {m!r} is not [f key "
                                       "value]", "value")
            f, k, v = m
            base = {"trace": f"{name}/{k}", "time": op.time, "x_op": op.index,
                    "x_line": op.location.line}
            if f == "append":
                out.append({**base, "process": _who(op.process), "kind": "send",
                            "msg": _msg(v)})
            elif f == "r" and op.done == "ok" and v is not None:
                if not isinstance(v, list):
                    raise TraceFormatError(op.location, f"a read of key {k} gives {v!r}, not "
                                           "a list", "value")
                reader = f"{_who(op.process)}.r{op.index}"
                out += [{**base, "process": reader, "kind": "deliver", "msg": _msg(x),
                         "x_offset": i} for i, x in enumerate(v)]
    return out


def import_history(path: str | os.PathLike, workload: str | None = None,
                   name: str | None = None) -> tuple[list[dict[str, Any]], HistoryStats]:
    """The v1 records of the history at ``path`` (module docstring), one trace per key,
    grouped; ``workload`` is kafka or list-append (guessed when None)."""
    ops, stats = read_history(path)
    if workload is not None and workload not in WORKLOADS:
        raise ValueError(f"unknown workload {workload!r}; known: {', '.join(WORKLOADS)}")
    if not ops:
        raise TraceFormatError(Location(os.fspath(path), line=1), "no client operations")
    stats.workload = workload or _guess(ops)
    base = name or os.path.basename(os.fspath(path)).split(".")[0]
    records = (_kafka if stats.workload == "kafka" else _list_append)(ops, base)
    known = KAFKA_FS if stats.workload == "kafka" else {"txn"}
    for op in ops:
        if op.f not in known:
            stats.other[op.f] = stats.other.get(op.f, 0) + 1
    for r in records:
        if r["time"] is None:
            del r["time"]
    records.sort(key=lambda r: r["trace"])  # grouped, each trace in history order
    stats.records = len(records)
    stats.keys = len({r["trace"] for r in records})
    return records, stats
