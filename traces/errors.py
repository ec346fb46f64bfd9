"""Errors for bad trace input: each names the file, the line (or row) and the field."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Location:
    """Where a record came from: a JSON Lines line (1-based) or a Parquet row (0-based)."""

    source: str
    line: int | None = None  # JSON Lines: 1-based line number
    row: int | None = None  # Parquet: 0-based row index in the file

    def __str__(self) -> str:
        if self.line is not None:
            return f"{self.source}:{self.line}"
        if self.row is not None:
            return f"{self.source}: row {self.row}"
        return self.source


class TraceFormatError(ValueError):
    """A record, or a whole file, that does not follow the trace format."""

    def __init__(self, location: Location, message: str, field: str | None = None):
        self.location = location
        self.field = field
        self.message = message
        where = str(location)
        what = f"field '{field}': {message}" if field else message
        super().__init__(f"{where}: {what}")

    def to_dict(self) -> dict:
        return {
            "source": self.location.source,
            "line": self.location.line,
            "row": self.location.row,
            "field": self.field,
            "message": self.message,
        }


class ColumnError(TraceFormatError):
    """A Parquet file whose columns do not fit the format (missing, unknown, of a wrong
    type): the whole file is unusable, so a data-set scan stops on it (``tomkit scan``)."""
