"""Trace format v1: the fields, their Arrow types and the shipped JSON Schema.

One record is one event. The JSON Schema in ``schema/trace-v1.json`` is the
normative definition; the Arrow schema below is the same thing in columnar
form (Parquet files and the fast JSON Lines path use it), and the tests check
that the two agree.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources

import pyarrow as pa

FORMAT_NAME = "tomkit-trace"
FORMAT_VERSION = 1


def report_stamp() -> dict[str, object]:
    """The first keys of every report's plain data (``to_dict()``, ``--format json``):
    the tomkit that wrote it and the trace format's version (docs/cli.md, "One JSON
    shape"). The version is read when asked (importlib.metadata costs a short command's
    start-up)."""
    from importlib.metadata import version

    return {"tomkit": version("tomkit"), "format_version": FORMAT_VERSION}

#: ``packet``: one network message (a datagram, an FEC block member) sent by ``process``
#: at ``time``/``real_time``; read by the rate property (checker/properties/rate.py),
#: ignored by every other property. ``negotiate``: ``process`` declares the reservation
#: it holds from slot ``x_slot`` on (003 section 2.1's join(r) or RN(r); the network's
#: reservation in ``x_rate_max`` per slot and ``x_rate_avg`` per ``x_rate_window``
#: slots, the application's in ``x_max``, ``x_avg``; :data:`NEGOTIATE_FIELDS`), read by
#: the rate property. Kinds differ in their first letter (checker/chunk.py).
KINDS: tuple[str, ...] = ("send", "recv", "deliver", "view", "crash", "join", "leave",
                          "packet", "negotiate")

#: the extension fields of a ``negotiate`` record: name -> (JSON type, minimum); x_slot is
#: required, and x_rate_max or x_rate_avg with x_rate_window. The JSON Schema's ``kind``
#: says the same; checker/properties/rate.py reports a record that breaks them by file,
#: line and field (other properties ignore the kind).
NEGOTIATE_FIELDS: dict[str, tuple[str, int]] = {
    "x_slot": ("integer", 0),
    "x_rate_max": ("number", 0),
    "x_rate_avg": ("number", 0),
    "x_rate_window": ("integer", 1),
}
MSG_KINDS = frozenset({"send", "recv", "deliver"})

FIELDS: tuple[str, ...] = (
    "trace", "process", "kind", "msg", "deps", "view", "members", "time", "seq", "real_time",
)
REQUIRED = ("trace", "process", "kind")
EXTENSION_PREFIX = "x_"

ARROW_SCHEMA = pa.schema(
    [
        pa.field("trace", pa.string(), nullable=False),
        pa.field("process", pa.string(), nullable=False),
        pa.field("kind", pa.string(), nullable=False),
        pa.field("msg", pa.string()),
        pa.field("deps", pa.list_(pa.string())),
        pa.field("view", pa.string()),
        pa.field("members", pa.list_(pa.string())),
        pa.field("time", pa.float64()),
        pa.field("seq", pa.int64()),
        # optional: real (global) time in seconds, beside the local clock ``time``; the
        # real-time latency bound of Bar-Joseph, Keidar, Anker and Lynch reads it
        pa.field("real_time", pa.float64()),
    ]
)

# JSON Lines: an optional first line naming the format; Parquet: file metadata.
# `grouped` promises that each trace's records are contiguous in the file, which
# lets a reader finish a trace as soon as the next one starts.
HEADER_KEY = "format"
META_FORMAT = b"tomkit.format"
META_VERSION = b"tomkit.version"
META_GROUPED = b"tomkit.grouped"


def header_record(grouped: bool) -> dict:
    return {HEADER_KEY: FORMAT_NAME, "version": FORMAT_VERSION, "grouped": grouped}


def parquet_metadata(grouped: bool) -> dict[bytes, bytes]:
    return {
        META_FORMAT: FORMAT_NAME.encode(),
        META_VERSION: str(FORMAT_VERSION).encode(),
        META_GROUPED: b"true" if grouped else b"false",
    }


@lru_cache(maxsize=1)
def json_schema() -> dict:
    """The shipped JSON Schema of one event record."""
    text = resources.files("tomkit.traces").joinpath("schema/trace-v1.json").read_text()
    return json.loads(text)
