"""Trace format v1: schema, readers and writers (JSON Lines and Parquet), generators.

The bottom layer of tomkit: it imports no other part of it.
"""

from tomkit.traces.errors import Location, TraceFormatError
from tomkit.traces.reader import Batch, FileInfo, TraceReader, read_records, read_table
from tomkit.traces.schema import ARROW_SCHEMA, FIELDS, FORMAT_VERSION, KINDS, json_schema
from tomkit.traces.writer import TraceWriter, write_records, write_table

__all__ = [
    "ARROW_SCHEMA",
    "FIELDS",
    "FORMAT_VERSION",
    "KINDS",
    "Batch",
    "FileInfo",
    "Location",
    "TraceFormatError",
    "TraceReader",
    "TraceWriter",
    "json_schema",
    "read_records",
    "read_table",
    "write_records",
    "write_table",
]
