"""When ``tomkit check`` takes the single pass by itself: a long trace.

The whole-trace engine is the faster one on many short traces (it decides thousands of
traces per chunk with one vectorized pass); the single pass wins on one long trace,
whose whole-trace memory grows about 540 bytes an event. The switch reads only a
Parquet file's metadata and its first row group's ``trace`` column: at least
``STREAM_ROWS`` records, and one trace filling that first row group. JSON Lines input
takes the single pass with ``--stream`` (docs/stream.md).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ...traces.reader import detect_format

__all__ = ["STREAM_ROWS", "long_input"]

#: records in a file from which one trace is checked in one pass (docs/stream.md: at
#: 2 million events the whole-trace engine needs about 1 GB)
STREAM_ROWS = 2_000_000


def long_input(paths: Sequence[str | os.PathLike]) -> bool:
    """Whether some file holds one long trace (module docstring)."""
    for path in paths:
        if detect_format(str(path)) != "parquet":
            continue
        try:
            f = pq.ParquetFile(path)
            if f.metadata.num_rows < STREAM_ROWS or f.metadata.num_row_groups == 0:
                continue
            traces = f.read_row_group(0, columns=["trace"]).column("trace")
            if pc.count_distinct(traces).as_py() == 1:
                return True
        except (OSError, ValueError, KeyError, pa.ArrowException):
            # UnicodeDecodeError is a ValueError; the reader names the file's problem
            continue
    return False
