"""JSON Lines traces: streaming reader (fast and exact paths) and writer.

File layout
-----------
One JSON object per line, UTF-8, ``\\n`` line ends (``\\r\\n`` is accepted).
Line 1 may be the header ``{"format": "tomkit-trace", "version": 1,
"grouped": ...}``; a header anywhere else is an ordinary (bad) record. A UTF-8
byte-order mark at the very start is skipped. Blank lines (only spaces, tabs,
``\\r``) are allowed and skipped, but they count for line numbers, so every
record is reported under the line number an editor shows. Files ending in
``.gz``, or starting with the gzip magic bytes, are read as gzip (also
multi-member gzip, as written by :class:`JsonlSink`).

Reading
-------
The file is read in blocks of a few MB cut at the last newline (gzip is
inflated with :mod:`zlib` as it is read, so nothing is ever held whole). Three
threads form a pipeline: one reads (and inflates) blocks and scans them
(newlines, UTF-8, ``null``), one parses them with pyarrow, and the caller's
thread runs the vectorized checks; all three spend their time in C code that
releases the GIL, so the checks of one block overlap the parse of the next.

*Fast path*: a block is parsed with :func:`pyarrow.json.read_json` against the
Arrow schema, then checked with vectorized rules
(:func:`tomkit.traces.validate.fast_table_ok`). Its rows get exact line numbers
only if there is one object per non-empty line; that is known from the block's
shape: every line is empty or ends in ``}`` (or ``}\\r``) and the parser
returned one row per non-empty line. (A line ending in ``}`` is the end of a
top-level object unless an extension field holds an object, and such blocks
are not taken by the fast path anyway.) Newline positions are found once per
block with numpy, which also gives the line numbers.

*Exact path*: the same block, line by line, with :mod:`json` and
:func:`tomkit.traces.validate.record_problem`. It is the only source of error
messages. A block takes it when anything is unusual: the parser fails, a
vectorized rule fails, lines of only spaces, whitespace around records, a ``null``
literal anywhere in the block (pyarrow cannot tell ``"msg": null``, which the
schema rejects, from an absent field), extension fields holding objects,
arrays, timestamps or mixed types. So the fast path only ever accepts blocks
the exact path accepts too, and gives the same values; the tests check this on
random corrupted files.

The exact path rejects, beyond the JSON Schema: invalid UTF-8, unpaired
surrogate escapes, NaN/Infinity literals, duplicate keys, and numbers out of
the range of int64 (``seq``) or float64.

Writing
-------
:class:`JsonlSink` writes the header and then whole lines. Tables are encoded
column by column with ``pyarrow.compute`` string kernels (:func:`encode_table`),
records one by one with :mod:`json`; both give the same canonical bytes (floats
as Python's ``repr``, strings escaped as ``json.dumps(ensure_ascii=False)``
does), which the tests check.
"""

from __future__ import annotations

import io
import json
import os
import queue
import re
import sys
import threading
import zlib
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from tomkit.traces.errors import Location, TraceFormatError
from tomkit.traces.interrupt import uninterrupted
from tomkit.traces.schema import (
    ARROW_SCHEMA,
    FIELDS,
    FORMAT_NAME,
    FORMAT_VERSION,
    HEADER_KEY,
    header_record,
)
from tomkit.traces.validate import (
    fast_table_ok,
    is_json_field,
    normalize,
    record_problem,
    records_to_table,
    table_to_records,
)

_FIELD_SET = frozenset(FIELDS)

GZIP_MAGIC = b"\x1f\x8b"
BOM = b"\xef\xbb\xbf"

# Small blocks keep the pipeline full; pyarrow needs about 2 chunks per core.
DEFAULT_BLOCK_BYTES = max(4 << 20, (2 << 20) * pa.cpu_count())
# pyarrow's own chunk size inside one block: the unit of its thread parallelism
PARSE_BLOCK_SIZE = 1 << 20
_READ_CHUNK = 1 << 20  # compressed bytes per read from a .gz file
_INFLATE_MAX = 8 << 20  # cap on inflated bytes per zlib call (gzip bombs)
GZIP_LEVEL = 6
ENCODE_ROWS = 1 << 17  # rows per vectorized encoding step of the writer

_PARSE_OPTIONS = pj.ParseOptions(explicit_schema=ARROW_SCHEMA, unexpected_field_behavior="infer")


def is_gzip_path(path: str | os.PathLike) -> bool:
    return os.fspath(path).endswith(".gz")


# --------------------------------------------------------------------------
# Raw byte streams
# --------------------------------------------------------------------------


class _Truncated(Exception):
    """The gzip stream ended before its end marker."""


class _Corrupt(Exception):
    """The gzip stream is not valid gzip data."""


#: the longest line read: a trace record is a few hundred bytes, so a line of hundreds
#: of MB without its end is no record (binary data, one JSON document), and reading on
#: held it whole in memory until the OOM killer came
MAX_LINE_BYTES = 256 << 20


class _LineTooLong(Exception):
    """A line went on past MAX_LINE_BYTES."""


def _plain_chunks(f: BinaryIO, size: int) -> Iterator[bytes]:
    while True:
        chunk = f.read(size)
        if not chunk:
            return
        yield chunk


class _BadMember:
    """A gzip member whose inflated data fails its checksum (with --keep-going, whose
    lines are rejected rather than read)."""

    def __init__(self, data: bytes, reason: str):
        self.data = data
        self.reason = reason


#: inflated bytes of one gzip member held back, with --keep-going, until its checksum
#: is known; a larger member is read as it comes, and a bad checksum then stops the file
HOLD_MEMBER_BYTES = 256 << 20


def _member_end(comp: bytes) -> tuple[int, bytes] | None:
    """The length of the gzip member at the start of ``comp`` (header, deflate data,
    8-byte trailer) and its inflated data, or None when they cannot be told (RFC 1952,
    section 2.3)."""
    if len(comp) < 10 or comp[:2] != b"\x1f\x8b":
        return None
    flags, at = comp[3], 10
    if flags & 4:  # FEXTRA
        if len(comp) < at + 2:
            return None
        at += 2 + int.from_bytes(comp[at:at + 2], "little")
    for bit in (8, 16):  # FNAME, FCOMMENT: zero-terminated
        if flags & bit:
            end = comp.find(b"\0", at)
            if end < 0:
                return None
            at = end + 1
    if flags & 2:  # FHCRC
        at += 2
    d = zlib.decompressobj(-15)
    data = comp[at:]
    out: list[bytes] = []
    size = 0
    try:
        while True:  # inflate in bounded pieces, to find the end
            out.append(d.decompress(data, _INFLATE_MAX))
            size += len(out[-1])
            if d.eof:
                break
            data = d.unconsumed_tail
            if not data or size > HOLD_MEMBER_BYTES:
                return None
    except zlib.error:
        return None
    end = len(comp) - len(d.unused_data) + 8
    return (end, b"".join(out)) if end <= len(comp) else None


def _gzip_chunks(f: BinaryIO, hold: bool = False) -> Iterator[bytes | _BadMember]:
    """Inflate a (multi-member) gzip stream; _Truncated after the last good byte.

    zlib rather than the gzip module: on a truncated file, gzip.GzipFile may
    drop the data inflated in the failing read, and we want every complete
    line before the break. With ``hold`` (--keep-going), each member's data is held
    until its checksum is known: a member that fails it comes as one _BadMember, and
    reading goes on with the next member.
    """
    d = zlib.decompressobj(31)
    pending = b""
    held: list[bytes] = []
    held_size = 0
    member_comp: list[bytes] | None = [] if hold else None  # the member's compressed bytes
    fresh = False  # d has read nothing since a bad member
    while True:
        comp = pending or f.read(_READ_CHUNK)
        pending = b""
        if not comp:
            break
        if member_comp is not None:
            member_comp.append(comp)
        while comp:
            try:
                out = d.decompress(comp, _INFLATE_MAX)
            except zlib.error as e:
                if member_comp is None or "check" not in str(e):
                    raise _Corrupt(str(e)) from None
                # the member's deflate data read, its checksum wrong: skip to the next
                whole = b"".join(member_comp)
                found = _member_end(whole)
                if found is None:
                    raise _Corrupt(str(e)) from None
                end, data = found
                yield _BadMember(data, str(e).split(": ")[-1])
                held, held_size = [], 0
                d = zlib.decompressobj(31)
                rest = whole[end:]
                member_comp = [rest] if rest else []
                comp = rest
                fresh = not rest  # at a member boundary: the file may end here
                continue
            fresh = False
            if out:
                if member_comp is not None:
                    held.append(out)
                    held_size += len(out)
                    if held_size > HOLD_MEMBER_BYTES:  # too large to hold: read it as is
                        yield from held
                        held, held_size, member_comp = [], 0, None
                else:
                    yield out
            comp = d.unconsumed_tail
        if d.eof:
            if held:
                yield from held
                held, held_size = [], 0
            rest = d.unused_data or f.read(_READ_CHUNK)
            if not rest:
                return
            if rest[:1] == b"\0":
                # zero padding after the last member, as the gzip tool allows
                while rest:
                    if rest.strip(b"\0"):
                        raise _Corrupt("trailing garbage after the gzip data")
                    rest = f.read(_READ_CHUNK)
                return
            if not GZIP_MAGIC.startswith(rest[:2]):
                raise _Corrupt("trailing garbage after the gzip data")
            d = zlib.decompressobj(31)
            pending = rest
            if hold:
                member_comp = []
    if held:  # a truncated member: what it held is read, up to the break
        yield from held
    if not d.eof and not fresh:
        raise _Truncated()


def _open(path: str, source: str) -> BinaryIO:
    try:
        return open(path, "rb")
    except FileNotFoundError:
        raise TraceFormatError(Location(source), "file not found") from None
    except IsADirectoryError:
        raise TraceFormatError(Location(source), "is a directory, not a trace file") from None
    except OSError as e:
        raise TraceFormatError(Location(source), f"cannot open: {e.strerror or e}") from None


def _sniff_gzip(path: str, source: str) -> bool:
    with _open(path, source) as f:
        magic = f.read(4)
        parquet = magic == b"PAR1" and f.seek(0, os.SEEK_END) >= 12 and \
            f.seek(-4, os.SEEK_END) >= 0 and f.read(4) == b"PAR1"
    if parquet:  # Parquet's magic at both ends: the name, not line 1, is what is wrong
        raise TraceFormatError(Location(source), "a Parquet file (PAR1 at both ends) with a "
                               "JSON Lines name: name it .parquet")
    magic = magic[:2]
    if is_gzip_path(path):
        if magic != GZIP_MAGIC:
            if not magic:
                raise TraceFormatError(Location(source), "empty file: no records")
            raise TraceFormatError(
                Location(source),
                "not gzip data: the name ends in .gz but the file does not start "
                "with the gzip magic bytes",
            )
        return True
    return magic == GZIP_MAGIC


# --------------------------------------------------------------------------
# Blocks
# --------------------------------------------------------------------------


class _Block:
    """Complete lines: data ends with b"\\n"; nl holds the newline offsets."""

    __slots__ = ("data", "nl", "has_null", "utf8_ok", "first_line", "parsed", "rows")

    def __init__(self, data: bytearray, first_line: int):
        self.data = data
        self.first_line = first_line
        self.nl = np.flatnonzero(np.frombuffer(data, np.uint8) == 10)
        # "null" is rare in valid traces; memchr for "u" first keeps it cheap
        self.has_null = data.find(b"u") >= 0 and data.find(b"null") >= 0
        # pyarrow.json does not check UTF-8 in string columns; isascii is very cheap
        self.utf8_ok = data.isascii() or _is_utf8(data)
        self.parsed: pa.Table | None = None
        self.rows: np.ndarray | None = None  # record lines, 0-based in the block


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


class _TruncatedAt:
    def __init__(self, lines_read: int):
        self.lines_read = lines_read


def _plain_pieces(f: BinaryIO, block_bytes: int) -> Iterator[bytearray]:
    """Whole lines in buffers of about block_bytes; the last may lack its newline.

    readinto a fresh buffer that starts with the previous buffer's partial last
    line, so that no block is ever copied.
    """
    left = b""
    while True:
        # a line longer than a block makes the next read as large as what is held
        buf = bytearray(len(left) + max(block_bytes, len(left)))
        buf[: len(left)] = left
        n = f.readinto(memoryview(buf)[len(left):])
        total = len(left) + n
        if n == 0:
            del buf[total:]
            if buf:
                yield buf
            return
        cut = buf.rfind(b"\n", 0, total) + 1
        if cut == 0:  # no newline yet: read on
            if total > MAX_LINE_BYTES:
                raise _LineTooLong
            left = bytes(buf[:total])
            continue
        left = bytes(buf[cut:total])
        del buf[cut:]
        yield buf


class _BadLines:
    """Lines of a gzip member that failed its checksum: counted and rejected, not read."""

    def __init__(self, count: int, reason: str):
        self.count = count
        self.reason = reason


def _gzip_pieces(f: BinaryIO, block_bytes: int,
                 hold: bool = False) -> Iterator[bytearray | _BadLines]:
    """As _plain_pieces, from inflated gzip data; _Truncated after the last whole line.
    With ``hold``, the lines of a member that fails its checksum come as _BadLines (a
    line that straddles the member's start or end counts with it)."""
    pieces: list[bytes] = []
    size = 0
    want = block_bytes
    try:
        for chunk in _gzip_chunks(f, hold):
            if isinstance(chunk, _BadMember):
                buf = bytearray().join(pieces)
                cut = buf.rfind(b"\n") + 1
                if cut:
                    yield bytearray(buf[:cut])
                bad = bytes(buf[cut:]) + chunk.data
                lines = bad.count(b"\n") + (0 if bad.endswith(b"\n") or not bad else 1)
                yield _BadLines(lines, chunk.reason)
                pieces, size, want = [], 0, block_bytes
                continue
            pieces.append(chunk)
            size += len(chunk)
            if size < want:
                continue
            buf = bytearray().join(pieces)
            cut = buf.rfind(b"\n") + 1
            if cut == 0:  # no newline yet: read on, as much again
                if size > MAX_LINE_BYTES:
                    raise _LineTooLong
                pieces, want = [bytes(buf)], 2 * size
                continue
            left = bytes(buf[cut:])
            del buf[cut:]
            pieces, size, want = ([left] if left else []), len(left), block_bytes
            yield buf
    except _Truncated:
        buf = bytearray().join(pieces)
        del buf[buf.rfind(b"\n") + 1:]
        if buf:
            yield buf
        raise
    buf = bytearray().join(pieces)
    if buf:
        yield buf


class _RejectedLines:
    """Lines first_line .. first_line + count - 1, rejected for ``reason``."""

    def __init__(self, first_line: int, count: int, reason: str):
        self.first_line = first_line
        self.count = count
        self.reason = reason


def _blocks(pieces: Iterator[bytearray | _BadLines],
            skip_header: bool) -> Iterator[_Block | _TruncatedAt | _RejectedLines]:
    """Number the lines (from 1), drop BOM and header, end every block with a newline."""
    line = 1
    first = True
    try:
        for buf in pieces:
            if isinstance(buf, _BadLines):
                if buf.count:
                    yield _RejectedLines(line, buf.count, buf.reason)
                line += buf.count
                first = False
                continue
            if first:
                first = False
                start = len(BOM) if buf.startswith(BOM) else 0
                if skip_header:
                    end = buf.find(b"\n", start)
                    start = len(buf) if end < 0 else end + 1
                    line += 1
                if start:
                    del buf[:start]
            if not buf:
                continue
            if not buf.endswith(b"\n"):
                buf += b"\n"  # the file's last line had no newline
            block = _Block(buf, line)
            line += len(block.nl)
            yield block
    except _Truncated:
        yield _TruncatedAt(line - 1)


def prefetch(make: Callable[[], Iterator[Any]], depth: int = 2) -> Iterator[Any]:
    """Run an iterator in a background thread, `depth` items ahead."""
    q: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(item: tuple) -> bool:
        while not stop.is_set():
            try:
                q.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def run() -> None:
        it = None
        try:
            it = make()
            for item in it:
                if not put(("item", item)):
                    return
            put(("end", None))
        except BaseException as e:  # handed to the consumer, which re-raises
            put(("error", e))
        finally:
            close = getattr(it, "close", None)
            if close is not None:
                close()

    thread = threading.Thread(target=run, name="tomkit-trace-prefetch", daemon=True)
    thread.start()
    try:
        while True:
            tag, value = q.get()
            if tag == "item":
                yield value
            elif tag == "end":
                return
            else:
                raise value
    finally:
        stop.set()
        thread.join()


# --------------------------------------------------------------------------
# Exact path: one line
# --------------------------------------------------------------------------


class _Duplicate(Exception):
    def __init__(self, key: str):
        self.key = key


class _BadConstant(Exception):
    pass


class _OutOfRange(Exception):
    pass


class _HugeInt(Exception):
    """An integer literal with more digits than Python converts (4300 by default)."""


#: integer literals longer than this are refused (Python's int() refuses 4300 digits and
#: more; no field of the format holds a number near that)
MAX_INT_DIGITS = 4000


def _int(text: str) -> int:
    if len(text) > MAX_INT_DIGITS:
        raise _HugeInt(len(text.lstrip("-")))
    return int(text)


class _BigInt:
    """Stands in for an integer literal that _int refuses (to find its field)."""

    def __init__(self, text: str):
        self.text = text


def _locate_int(text: str) -> Any:
    return _BigInt(text) if len(text) > MAX_INT_DIGITS else 0


class _Big:
    """Stands in for a float literal too large for a float64 (to find its field)."""

    def __init__(self, text: str):
        self.text = text


def _pairs(pairs: list[tuple[str, Any]]) -> dict:
    d = dict(pairs)
    if len(d) != len(pairs):
        seen = set()
        for k, _ in pairs:
            if k in seen:
                raise _Duplicate(k)
            seen.add(k)
    return d


def _no_constant(name: str) -> Any:
    raise _BadConstant(name)


def _float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise _OutOfRange(text)
    return value


_DECODER = json.JSONDecoder(
    object_pairs_hook=_pairs, parse_constant=_no_constant, parse_float=_float,
    parse_int=_int
)
_LOCATOR = json.JSONDecoder(
    object_pairs_hook=_pairs, parse_constant=_no_constant, parse_float=_Big,
    parse_int=_int
)
_INT_LOCATOR = json.JSONDecoder(
    object_pairs_hook=_pairs, parse_constant=_no_constant, parse_float=_Big,
    parse_int=_locate_int
)
#: a key followed by the opening of a value
_KEY_OPEN_RE = re.compile(r'"((?:[^"\\]|\\.)*)"\s*:\s*[\[{]')
_CONSTANT_RE = re.compile(r'"(?:[^"\\]|\\.)*"|(-?Infinity|NaN)')
_SURROGATE_RE = re.compile(r"\\u[dD][89a-fA-F]")


def _deep_field(text: str) -> str | None:
    """The top-level key whose value nests too deeply: the first key whose value opens
    a bracket (the record's own deps and members nest one level only)."""
    body = text.lstrip()[1:] if text.lstrip().startswith("{") else text
    depth = 0
    for m in _KEY_OPEN_RE.finditer(body):
        # the key is top-level when no bracket before it is still open
        before = body[:m.start()]
        depth = before.count("[") + before.count("{") - before.count("]") - before.count("}")
        if depth == 0:
            rest = body[m.end():m.end() + 64]
            if rest.count("[") + rest.count("{") > 2 or rest[:1] in "[{":
                return m.group(1)
    return None


def _cut_short(text: str, e: json.JSONDecodeError) -> tuple[str, str] | None:
    """A record whose line ends before the record does (a writer stopped mid-write, kill
    -9: ``python -m tomkit.record --watch``'s live file), said with the top-level field
    it ends in or after; None for other bad JSON. (json named only the column of an
    unterminated string, or "Expecting value" at the line's end.)"""
    body = text.rstrip()
    if not body.startswith("{") or not (e.msg.startswith("Unterminated string")
                                        or e.pos >= len(body)):
        return None
    key, in_value, value_at = None, False, 0
    depth, i, n = 0, 0, len(body)
    while i < n:  # the top-level keys, and whether a value of the last one is complete
        c = body[i]
        if c == '"':
            end = i + 1
            while end < n and body[end] != '"':
                end += 2 if body[end] == "\\" else 1
            if end >= n:
                break  # the string the line ends in
            if depth == 1 and body[end + 1:].lstrip().startswith(":"):
                key, in_value = body[i + 1:end], True
                i = value_at = body.index(":", end) + 1
                continue
            i = end + 1
            continue
        if c in "[{":
            depth += 1
        elif c in "]}":
            depth -= 1
        elif c == "," and depth == 1:
            in_value = False
        i += 1
    if key is None:
        return None
    if in_value:  # a value that is whole ("kind": "crash" and no closing brace)
        try:
            json.loads(body[body.rindex(":", 0, value_at) + 1:])
            in_value = False
        except (ValueError, RecursionError):
            pass
    where = "inside this field's value" if in_value else "after this field"
    return key, (f"the record ends {where}, mid-way: a line cut short (its writer "
                 "stopped mid-write, as kill -9 leaves it), or a record spread over "
                 "several lines")


def _contains_big(value: Any) -> bool:
    if isinstance(value, (_Big, _BigInt)):
        return True
    if isinstance(value, list):
        return any(_contains_big(v) for v in value)
    if isinstance(value, dict):
        return any(_contains_big(v) for v in value.values())
    return False


def decode_line(raw: bytes) -> tuple[Any, tuple[str | None, str] | None]:
    """Decode one line: (object, None) or (None, (field, message))."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        return None, (None, f"invalid UTF-8 at column {e.start + 1}")
    try:
        obj = _DECODER.decode(text)
    except json.JSONDecodeError as e:
        return None, (_cut_short(text, e) or
                      (None, f"invalid JSON at column {e.colno}: {e.msg}"))
    except _Duplicate as e:
        return None, (e.key, "appears more than once in the record")
    except _BadConstant as e:
        col = next(
            (m.start(1) + 1 for m in _CONSTANT_RE.finditer(text) if m.group(1)), 0
        )
        return None, (
            None,
            f"invalid JSON at column {col}: {e.args[0]} is not a JSON value",
        )
    except _OutOfRange as e:
        field = None
        try:
            located = _LOCATOR.decode(text)
        except (ValueError, _Duplicate, _BadConstant, RecursionError):
            located = None
        if isinstance(located, dict):
            field = next((k for k, v in located.items() if _contains_big(v)), None)
        return None, (field, f"number {e.args[0]} is out of range of a 64-bit float")
    except _HugeInt as e:
        field = None
        try:
            located = _INT_LOCATOR.decode(text)
        except (ValueError, _Duplicate, _BadConstant, _OutOfRange, RecursionError):
            located = None
        if isinstance(located, dict):
            field = next((k for k, v in located.items() if _contains_big(v)), None)
        return None, (field, f"an integer of {e.args[0]} digits is out of range "
                             f"(at most {MAX_INT_DIGITS} digits are read)")
    except RecursionError:
        return None, (_deep_field(text), "invalid JSON: nested too deeply (Python's "
                                         f"limit of {sys.getrecursionlimit()} levels)")
    if "\\u" in text and _SURROGATE_RE.search(text):
        problem = _surrogate_problem(obj)
        if problem is not None:
            return None, problem
    return obj, None


def _surrogate_problem(obj: Any) -> tuple[str | None, str] | None:
    def bad(value: Any) -> bool:
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False

    if not bad(obj):
        return None
    field = None
    if isinstance(obj, dict):
        field = next((k for k, v in obj.items() if bad(k) or bad(v)), None)
    return field, "string with an unpaired surrogate escape (not valid Unicode)"


def check_line(raw: bytes) -> tuple[dict | None, tuple[str | None, str] | None]:
    """Decode and validate one non-blank line: (record, None) or (None, problem)."""
    obj, problem = decode_line(raw)
    if problem is None:
        problem = record_problem(obj)
    if problem is not None:
        return None, problem
    return normalize(obj), None


def is_blank(raw: bytes) -> bool:
    return not raw.strip(b" \t\r")


def _exact_block(
    block: _Block, source: str, keep_going: bool, rejected: list[TraceFormatError]
) -> tuple[pa.Table, np.ndarray]:
    records: list[dict] = []
    lines: list[int] = []
    for i, raw in enumerate(block.data.split(b"\n")[:-1]):
        if is_blank(raw):
            continue
        lineno = block.first_line + i
        rec, problem = check_line(raw)
        if problem is not None:
            err = TraceFormatError(Location(source, line=lineno), problem[1], problem[0])
            if not keep_going:
                raise err
            rejected.append(err)
            continue
        records.append(rec)
        lines.append(lineno)
    return records_to_table(records), np.asarray(lines, dtype=np.int64)


# --------------------------------------------------------------------------
# Fast path: one block
# --------------------------------------------------------------------------


def _record_lines(block: _Block) -> np.ndarray | None:
    """0-based lines of the block that hold a record, if the fast path can number them.

    It can if every line is empty or ends in "}" (before an optional "\\r"):
    then, unless an extension field holds an object (such blocks go to the
    exact path anyway), each non-empty line ends at the end of a top-level
    object, and one row per non-empty line means one object per line.
    """
    nl = block.nl
    if not len(nl):
        return None
    arr = np.frombuffer(block.data, np.uint8)
    if nl[0] > 0:
        before = arr[nl - 1]
        if (before == 125).all():  # "}": the usual case
            return np.arange(len(nl), dtype=np.int64)
    # empty lines or "\r\n": look closer
    starts = np.empty_like(nl)
    starts[0] = 0
    starts[1:] = nl[:-1] + 1
    length = nl - starts
    last = np.where(length > 0, arr[np.maximum(nl - 1, 0)], 10)
    cr = last == 13
    if cr.any():
        last[cr] = np.where(length[cr] > 1, arr[np.maximum(nl[cr] - 2, 0)], 10)
    record = last != 10
    if not (last[record] == 125).all():
        return None
    return np.flatnonzero(record).astype(np.int64)


#: opening brackets one line may hold and still go to pyarrow's parser. A record nests
#: two levels (the object, its deps or members list); pyarrow's parser recurses once per
#: level, so thousands of nested arrays in an extension field overflow its stack (a
#: segmentation fault) or take seconds. Lines with more go to the exact path, whose
#: decoder stops at Python's recursion limit with a clear error.
MAX_FAST_OPENS = 64


#: every byte but the opening brackets and the newline, for bytes.translate's delete
_NOT_OPENING = bytes(b for b in range(256) if b not in b"[{\n")


def _shallow(block: _Block) -> bool:
    """Whether every line of the block has at most MAX_FAST_OPENS opening brackets (an
    upper bound on its nesting depth: brackets inside strings only count too many)."""
    data = block.data
    if data.count(b"[") + data.count(b"{") <= MAX_FAST_OPENS:  # C loops, no arrays
        return True
    # a record has one "{" and at most a "[" or two: keep only those and the newlines
    # (one C pass; a few bytes a line), then the longest run between newlines is the
    # most openings on one line (the block ends with a newline)
    kept = np.frombuffer(data.translate(None, _NOT_OPENING), np.uint8)
    nl = np.flatnonzero(kept == 10)
    return int((np.diff(nl, prepend=-1) - 1).max(initial=0)) <= MAX_FAST_OPENS


def _parse_block(block: _Block) -> pa.Table | None:
    """pyarrow's parse of a block, if the block can take the fast path at all."""
    if block.has_null or not block.utf8_ok or not _shallow(block):
        return None
    block.rows = _record_lines(block)
    if block.rows is None:
        return None
    # pyarrow skips a byte-order mark at the start of its input; mid-file it is an error
    if block.data.startswith(BOM):
        return None
    size = PARSE_BLOCK_SIZE
    while True:
        try:
            table = pj.read_json(
                pa.BufferReader(pa.py_buffer(block.data)),
                read_options=pj.ReadOptions(use_threads=True, block_size=size),
                parse_options=_PARSE_OPTIONS,
            )
            break
        except pa.ArrowInvalid as e:
            # a line longer than pyarrow's chunk: parse the block as one chunk
            if "straddl" in str(e) and size < len(block.data):
                size = len(block.data) + 1
                continue
            return None
        except (pa.ArrowNotImplementedError, UnicodeDecodeError):
            return None
    return table if table.num_rows == len(block.rows) else None


def _fast_block(block: _Block, table: pa.Table | None) -> pa.Table | None:
    """The block's checked table from the fast path, or None: use the exact path."""
    if table is None or not fast_table_ok(table):
        return None
    schema = pa.schema(list(ARROW_SCHEMA) + list(table.schema)[len(ARROW_SCHEMA):])
    return pa.Table.from_arrays(table.columns, schema=schema)


def parse_lines(data: bytes, first_line: int, source: str, *, keep_going: bool,
                rejected: list[TraceFormatError]) -> tuple[pa.Table, np.ndarray]:
    """Complete lines (``data`` ends with a newline; line ``first_line`` first) of
    ``source``, checked as the reader checks a block: its records and their line numbers
    (``tomkit watch`` reads growing files with it, checker/stream/follow.py)."""
    block = _Block(bytearray(data), first_line)
    table = _fast_block(block, _parse_block(block))
    if table is not None:
        return table, block.first_line + block.rows
    return _exact_block(block, source, keep_going, rejected)


def header_line(raw: bytes, source: str) -> bool | None | str:
    """Line 1 of a file: its ``grouped`` flag when it is the header, else ``"record"``.
    Raises TraceFormatError for a bad header."""
    try:
        obj = json.loads(raw)
    except (ValueError, RecursionError):
        return "record"
    if isinstance(obj, dict) and HEADER_KEY in obj:
        return _check_header(obj, source)
    return "record"


# --------------------------------------------------------------------------
# Reader
# --------------------------------------------------------------------------


def _check_header(obj: dict, source: str) -> bool | None:
    loc = Location(source, line=1)
    fmt = obj.get(HEADER_KEY)
    if fmt != FORMAT_NAME:
        raise TraceFormatError(
            loc,
            f"not a tomkit trace: the header names format {json.dumps(fmt)}, "
            f"expected \"{FORMAT_NAME}\"",
            HEADER_KEY,
        )
    if "version" not in obj:
        raise TraceFormatError(loc, "the header has no format version", "version")
    version = obj["version"]
    if type(version) is not int or version != FORMAT_VERSION:
        raise TraceFormatError(
            loc,
            f"unsupported format version {json.dumps(version)}: this reader reads "
            f"version {FORMAT_VERSION}",
            "version",
        )
    grouped = obj.get("grouped")
    if "grouped" in obj and type(grouped) is not bool:
        raise TraceFormatError(
            loc, f"expected true or false, got {json.dumps(grouped)}", "grouped"
        )
    for key in obj:
        if key not in (HEADER_KEY, "version", "grouped"):
            raise TraceFormatError(loc, "unknown header field", key)
    return grouped


class JsonlSource:
    """One JSON Lines file: the header is read on construction."""

    fmt = "jsonl"

    def __init__(self, path: str, source: str, *, block_bytes: int | None = None):
        self.path = path
        self.source = source
        self.block_bytes = block_bytes or DEFAULT_BLOCK_BYTES
        self.compressed = _sniff_gzip(path, source)
        self.version = FORMAT_VERSION
        self.grouped: bool | None = None
        self.has_header = False
        self._peek()

    def _chunks(self, f: BinaryIO, size: int | None = None) -> Iterator[bytes]:
        if self.compressed:
            return _gzip_chunks(f)
        return _plain_chunks(f, size or self.block_bytes)

    def _peek(self) -> None:
        """Read line 1 to find the header; fail early on a file with no records."""
        head = b""
        at_eof = False
        with _open(self.path, self.source) as f:
            chunks = self._chunks(f, 1 << 16)
            try:
                while b"\n" not in head and len(head) < (1 << 20):
                    chunk = next(chunks, None)
                    if chunk is None:
                        at_eof = True
                        break
                    head += chunk
                if not at_eof and len(head) < (1 << 16):
                    # small files: look at all of it for the "no records" check
                    more = next(chunks, None)
                    if more is None:
                        at_eof = True
                    else:
                        head += more
            except _Truncated:
                pass  # reported, with the lines before it, while iterating
            except _Corrupt as e:
                if b"\n" not in head:
                    raise TraceFormatError(
                        Location(self.source), f"corrupt gzip data: {e}"
                    ) from None
                # after the first line: reported (or read past) while iterating
        if head.startswith(BOM):
            head = head[len(BOM):]
        end = head.find(b"\n")
        first = head if end < 0 else head[:end]
        rest = b"" if end < 0 else head[end + 1:]
        if first.lstrip().startswith(b"{") and b'"format"' in first:
            try:
                obj = json.loads(first)
            except (ValueError, RecursionError):  # not a header: the reader reports it
                obj = None
            if isinstance(obj, dict) and HEADER_KEY in obj:
                self.grouped = _check_header(obj, self.source)
                self.has_header = True
        if at_eof:
            body = rest if self.has_header else head
            if is_blank(body.replace(b"\n", b"")):
                what = "only a header" if self.has_header else "empty file"
                raise TraceFormatError(Location(self.source), f"{what}: no records")

    def batches(
        self, *, keep_going: bool, rejected: list[TraceFormatError], background: bool = True
    ) -> Iterator[tuple[pa.Table, np.ndarray]]:
        def read() -> Iterator[_Block | _TruncatedAt | _RejectedLines]:
            with _open(self.path, self.source) as f:
                if self.compressed:
                    pieces = _gzip_pieces(f, self.block_bytes, hold=keep_going)
                else:
                    pieces = _plain_pieces(f, self.block_bytes)
                yield from _blocks(pieces, self.has_header)

        def parse(blocks: Iterator[_Block | _TruncatedAt | _RejectedLines]
                  ) -> Iterator[_Block | _TruncatedAt | _RejectedLines]:
            for item in blocks:
                if isinstance(item, _Block):
                    item.parsed = _parse_block(item)
                yield item

        # three stages in three threads: read (and inflate), parse, check; all
        # three spend most of their time in C code that releases the GIL
        if background:
            items = prefetch(lambda: parse(prefetch(read)))
        else:
            items = parse(read())
        try:
            for item in items:
                if isinstance(item, _RejectedLines):
                    rejected.extend(
                        TraceFormatError(Location(self.source, line=item.first_line + k),
                                         f"the gzip member holding this line fails its "
                                         f"checksum ({item.reason}): not read")
                        for k in range(item.count))
                    continue
                if isinstance(item, _TruncatedAt):
                    n = item.lines_read
                    err = TraceFormatError(
                        Location(self.source, line=n + 1),
                        f"the file is truncated: the gzip data ends unexpectedly after "
                        f"line {n}, the last line read completely",
                    )
                    if not keep_going:
                        raise err
                    rejected.append(err)
                    return
                table = _fast_block(item, item.parsed)
                item.parsed = None
                if table is not None:
                    lines = item.first_line + item.rows
                    yield table, lines
                else:
                    table, lines = _exact_block(item, self.source, keep_going, rejected)
                    if table.num_rows:
                        yield table, lines
        except _Corrupt as e:
            raise TraceFormatError(Location(self.source), f"corrupt gzip data: {e}") from None
        except _LineTooLong:
            raise TraceFormatError(
                Location(self.source),
                f"a line longer than {MAX_LINE_BYTES >> 20} MB, with no end: no trace "
                "record (binary data, or one JSON document?)") from None
        except OSError as e:
            raise TraceFormatError(Location(self.source), f"read error: {e}") from None
        finally:
            close = getattr(items, "close", None)
            if close is not None:
                close()


# --------------------------------------------------------------------------
# Writer
# --------------------------------------------------------------------------

_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def encode_record(rec: dict) -> str:
    return _ENCODER.encode(rec)


_FAST_ENCODE_TYPES = (pa.types.is_string, pa.types.is_large_string, pa.types.is_boolean,
                      pa.types.is_integer, pa.types.is_floating, pa.types.is_null)


def _string_bytes(col: pa.Array) -> np.ndarray:
    """The bytes of a string array's values (all of them, in one view)."""
    bufs = col.buffers()
    if bufs[2] is None or len(col) == 0:
        return np.zeros(0, np.uint8)
    off = np.frombuffer(bufs[1], np.int32, count=len(col) + 1, offset=4 * col.offset)
    return np.frombuffer(bufs[2], np.uint8)[int(off[0]):int(off[-1])]


def _json_strings(col: pa.Array, prefix: str = "", suffix: str = "") -> pa.Array:
    """prefix + JSON string literal + suffix, as json.dumps(ensure_ascii=False) writes it."""
    data = _string_bytes(col)
    if (data < 0x20).any():  # control characters: let the json module escape them
        lit = pa.array(
            [None if v is None else json.encoder.encode_basestring(v) for v in col.to_pylist()],
            pa.string(),
        )
        return pc.binary_join_element_wise(prefix, lit, suffix, "")
    if ((data == 0x22) | (data == 0x5C)).any():  # '"' or backslash
        col = pc.replace_substring(pc.replace_substring(col, "\\", "\\\\"), '"', '\\"')
    return pc.binary_join_element_wise(prefix + '"', col, '"' + suffix, "")


def float_reprs(col: pa.Array) -> pa.Array:
    """Python's repr of each float (null stays null), exactly as json.dumps writes it.

    Both repr and Arrow's cast to string write the shortest digits that read back as
    the same float; they differ only in form: repr writes an integral value with
    ``.0`` and uses an exponent below 1e-4 and from 1e16 on, Arrow from about 1e10 on.
    Arrow casts every value (in C++); repr is asked for integral values and those
    outside [1e-4, 1e9) only (tested on many floats)."""
    col = col.cast(pa.float64())
    text = pc.cast(col, pa.string())
    a = col.to_numpy(zero_copy_only=False)  # nulls as NaN
    with np.errstate(invalid="ignore"):
        mag = np.abs(a)
        plain = (mag >= 1e-4) & (mag < 1e9) & (a != np.floor(a))
    if plain.all():
        return text
    odd = ~plain
    fixed = [None if v is None else repr(v) for v in col.filter(pa.array(odd)).to_pylist()]
    return pc.replace_with_mask(text, pa.array(odd), pa.array(fixed, pa.string()))


def _fragment(field: pa.Field, col: pa.Array, lead: str = "") -> pa.Array | None:
    """lead + '"name":value' per row (null where the value is null), or None if not
    done here."""
    t = col.type
    key = lead + json.dumps(field.name, ensure_ascii=False) + ":"
    if is_json_field(field):
        values = pa.array(
            [None if v is None else encode_record(json.loads(v)) for v in col.to_pylist()],
            pa.string(),
        )
        return pc.binary_join_element_wise(key, values, "")
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return _json_strings(col.cast(pa.string()), key)
    if pa.types.is_boolean(t):
        return pc.if_else(col, key + "true", key + "false")
    if pa.types.is_integer(t):
        return pc.binary_join_element_wise(key, col.cast(pa.string()), "")
    if pa.types.is_floating(t):
        return pc.binary_join_element_wise(key, float_reprs(col), "")
    if pa.types.is_list(t) and pa.types.is_string(t.value_type):
        items = _json_strings(col.flatten())
        lists = pa.ListArray.from_arrays(
            pc.subtract(col.offsets, col.offsets[0]), items, mask=col.is_null()
        )
        return pc.binary_join_element_wise(key + "[", pc.binary_join(lists, ","), "]", "")
    return None


def encode_table(table: pa.Table) -> Iterator[pa.Buffer | bytes]:
    """Canonical JSON Lines of a checked table, vectorized; each piece ends in a newline.

    Gives the same bytes as encode_record on each row's record (the tests check
    it); falls back to that for extension columns of other Arrow types.
    """
    names = [n for n in FIELDS] + sorted(n for n in table.column_names if n not in FIELDS)
    for f in table.schema:
        if f.name not in FIELDS and not any(is_t(f.type) for is_t in _FAST_ENCODE_TYPES):
            for rec in table_to_records(table):
                yield (encode_record(_canonical(rec)) + "\n").encode("utf-8")
            return
    for batch in table.to_batches(max_chunksize=ENCODE_ROWS):
        parts = []
        for name in names:
            i = batch.schema.get_field_index(name)
            if i < 0 or pa.types.is_null(batch.schema.field(i).type):
                continue
            col = batch.column(i)
            if col.null_count == len(col):
                continue
            # each fragment brings its comma, the first (trace, never null in a checked
            # table) the opening brace: one join makes the lines, nulls skipped
            lead = "," if parts else "{"
            fragment = _fragment(batch.schema.field(i), col, lead)
            assert fragment is not None
            if not parts:
                assert fragment.null_count == 0
            parts.append(fragment)
        lines = pc.binary_join_element_wise(*parts, "}\n", "", null_handling="skip")
        offsets = np.frombuffer(
            lines.buffers()[1], np.int32, count=len(lines) + 1, offset=4 * lines.offset
        )
        yield lines.buffers()[2][int(offsets[0]):int(offsets[-1])]


def _canonical(rec: dict) -> dict:
    """FIELDS order, then extension keys sorted by name."""
    out = {k: rec[k] for k in FIELDS if k in rec}
    if len(out) != len(rec):
        for k in sorted(k for k in rec if k not in _FIELD_SET):
            out[k] = rec[k]
    return out


def _header_line(grouped: bool, *, padded: bool = False) -> bytes:
    text = _ENCODER.encode(header_record(grouped))
    if padded and grouped:
        # same length as the "false" variant, so it can be rewritten in place
        text = text.replace('"grouped":true', '"grouped": true')
    return text.encode() + b"\n"


class JsonlSink:
    """Write header and lines; gzip if asked. Buffer-free apart from ~1 MB.

    With ``grouped=None`` the header is written as ``"grouped":false`` and
    rewritten in place on close when the records turned out to be grouped: a
    plain file is patched at offset 0; a gzip file has its header in a first
    gzip member stored uncompressed, whose size does not depend on the value.
    """

    def __init__(self, path: str, *, compressed: bool, grouped: bool | None):
        self.path = path
        self.compressed = compressed
        self.grouped = grouped
        self.f: BinaryIO = open(path, "wb")
        self._buf: list[str] = []
        self._buf_len = 0
        self._header_len = 0
        self._z = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 31) if compressed else None
        line = _header_line(bool(grouped), padded=grouped is None)
        if compressed and grouped is None:
            self._raw_write(self._stored_member(line))
        elif compressed:
            self._raw_write(self._z.compress(line))
        else:
            self._raw_write(line)
        self._header_len = len(line)

    @staticmethod
    def _stored_member(data: bytes) -> bytes:
        z = zlib.compressobj(0, zlib.DEFLATED, 31)
        return z.compress(data) + z.flush()

    def _raw_write(self, data: bytes) -> None:
        if data:
            self.f.write(data)

    def write_encoded(self, data: pa.Buffer | bytes) -> None:
        """Write bytes of whole lines (from encode_table)."""
        with uninterrupted():  # whole lines, and the compressor's state kept with them
            self._flush()
            self._raw_write(self._z.compress(data) if self._z else data)

    def write_lines(self, lines: list[str]) -> None:
        self._buf.extend(lines)
        self._buf_len += sum(map(len, lines))
        if self._buf_len >= (1 << 20):
            self._flush()

    def _flush(self) -> None:
        if not self._buf:
            return
        with uninterrupted():
            data = ("\n".join(self._buf) + "\n").encode("utf-8")
            self._buf, self._buf_len = [], 0
            self._raw_write(self._z.compress(data) if self._z else data)

    def close(self, grouped: bool) -> None:
        with uninterrupted():
            self._close(grouped)

    def _close(self, grouped: bool) -> None:
        try:
            self._flush()
            if self._z is not None:
                self._raw_write(self._z.flush())
            if self.grouped is None and grouped and self.f.seekable():
                line = _header_line(True, padded=True)
                self.f.seek(0)
                self.f.write(self._stored_member(line) if self.compressed else line)
        finally:
            self.f.close()


def read_lines_exact(path: str, source: str) -> Iterator[tuple[int, dict | None, Any]]:
    """Every line through the exact path only: (line, record, problem). For tests.

    Yields (line, None, (field, message)) for bad lines and skips blank lines
    and the header; a truncated gzip file yields a final problem.
    """
    src = JsonlSource(path, source)
    with _open(path, source) as f:
        data = io.BytesIO()
        try:
            for chunk in src._chunks(f):
                data.write(chunk)
            truncated = False
        except _Truncated:
            truncated = True
    raw = data.getvalue()
    if raw.startswith(BOM):
        raw = raw[len(BOM):]
    lines = raw.split(b"\n")
    if truncated:
        lines = lines[:-1]
    elif lines and lines[-1] == b"":
        lines = lines[:-1]
    for i, line in enumerate(lines):
        if (i == 0 and src.has_header) or is_blank(line):
            continue
        rec, problem = check_line(line)
        yield i + 1, rec, problem
    if truncated:
        yield len(lines) + 1, None, (None, "truncated")
