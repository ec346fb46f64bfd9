"""Trace format v1: schema, readers and writers (JSON Lines and Parquet), generators.

The bottom layer of tomkit: it imports no other part of it.
"""

from tomkit.traces.errors import Location, TraceFormatError
from tomkit.traces.schema import ARROW_SCHEMA, FIELDS, FORMAT_VERSION, KINDS, json_schema

__all__ = [
    "ARROW_SCHEMA",
    "FIELDS",
    "FORMAT_VERSION",
    "KINDS",
    "Location",
    "TraceFormatError",
    "json_schema",
]
