"""What a file that is no trace seems to be, for the line that refuses it.

A newcomer's first file is often a JSON array (``json.dump`` of a list), a CSV export, or
a JSON Lines file named ``.parquet``; the readers then say ``invalid JSON at column 2`` or
``Parquet magic bytes not found``, true but no help. When a file is refused at its first
line, its first bytes say which of these it is, and the command adds what to do.
"""

from __future__ import annotations

import os
import zlib

from tomkit.traces.errors import TraceFormatError

__all__ = ["explained", "hint"]

#: bytes read from the file's start: its first line, in any file of records
HEAD = 4096


def hint(error: TraceFormatError) -> str:
    """``"; it ..."``: what to do with the file ``error`` refused at its start, when its
    first bytes tell what it is instead; ``""`` otherwise."""
    loc = error.location
    if loc.row is not None or loc.line not in (None, 1, 2) or not os.path.isfile(loc.source):
        return ""
    try:
        with open(loc.source, "rb") as f:
            head = f.read(HEAD)
    except OSError:
        return ""
    if head[:2] == b"\x1f\x8b":  # gzip: its text, not its compressed bytes (whose commas
        try:  # read as CSV)
            head = zlib.decompressobj(31).decompress(head, HEAD)
        except zlib.error:
            return ""
    text = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    name = loc.source.lower()
    if text.startswith(b"["):
        return (f"; it holds one JSON array, not JSON Lines (one record per line): "
                f"jq -c '.[]' {loc.source} > run.jsonl makes it one")
    if text.startswith(b"{") and name.endswith((".parquet", ".pq")):
        return "; it reads as JSON Lines: name it .jsonl"
    first = text.split(b"\n", 1)[0]
    if not text.startswith(b"{") and (name.endswith((".csv", ".tsv"))
                                      or first.count(b",") >= 2 or b"\t" in first):
        return (f"; it looks like CSV: tomkit import --mapping MAP.toml {loc.source} --out "
                "run.jsonl turns it into a trace (docs/import.md)")
    return ""


def explained(error: TraceFormatError) -> str:
    """``error``'s line with the :func:`hint`, if any, after it."""
    more = hint(error)
    return f"{str(error).rstrip('.')}{more}" if more else str(error)
