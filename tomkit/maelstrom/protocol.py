"""Maelstrom's node protocol: one JSON object per line on a node's stdin and stdout.

Source: jepsen-io/maelstrom, ``doc/protocol.md``. A message is ``{"src", "dest",
"body"}``; a body has a string ``type``, optionally an integer ``msg_id`` and, in a
reply, ``in_reply_to``. Each node is first sent ``init`` (its ``node_id`` and every
``node_ids``) and must answer ``init_ok``. Errors are bodies of type ``error`` with an
integer ``code`` (the table below; 0-999 are Maelstrom's, custom codes are indefinite)
and an optional ``text``.

A line a node writes that is not such a message is a :class:`NodeProtocolError`
naming the node, the line number of its stdout and what is wrong with it: the harness
never guesses what a node meant.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import orjson

__all__ = ["ERRORS", "Message", "NodeProtocolError", "decode", "dumps_line", "encode",
           "error_body", "is_definite"]


@dataclass(frozen=True)
class ErrorCode:
    code: int
    name: str
    definite: bool


#: Maelstrom's error codes (doc/protocol.md, "Errors"): code -> (name, definite)
ERRORS: dict[int, ErrorCode] = {e.code: e for e in (
    ErrorCode(0, "timeout", False),
    ErrorCode(1, "node-not-found", True),
    ErrorCode(10, "not-supported", True),
    ErrorCode(11, "temporarily-unavailable", True),
    ErrorCode(12, "malformed-request", True),
    ErrorCode(13, "crash", False),
    ErrorCode(14, "abort", True),
    ErrorCode(20, "key-does-not-exist", True),
    ErrorCode(21, "key-already-exists", True),
    ErrorCode(22, "precondition-failed", True),
    ErrorCode(30, "txn-conflict", True),
)}
TIMEOUT, NODE_NOT_FOUND, NOT_SUPPORTED = 0, 1, 10
TEMPORARILY_UNAVAILABLE, MALFORMED, CRASH, ABORT = 11, 12, 13, 14
KEY_DOES_NOT_EXIST, KEY_ALREADY_EXISTS, PRECONDITION_FAILED = 20, 21, 22


def is_definite(code: int) -> bool:
    """A definite error says the operation never happened; custom codes are not."""
    e = ERRORS.get(code)
    return e is not None and e.definite


def error_name(code: int) -> str:
    e = ERRORS.get(code)
    return e.name if e is not None else f"custom-{code}"


class NodeProtocolError(ValueError):
    """A line from a node that is not a Maelstrom message."""

    def __init__(self, node: str, line: int, problem: str, text: bytes | str = b""):
        raw = text if isinstance(text, str) else text.decode("utf-8", "replace")
        shown = raw if len(raw) <= 120 else raw[:117] + "..."
        super().__init__(f"node {node}, stdout line {line}: {problem}"
                         + (f": {shown!r}" if raw else ""))
        self.node, self.line, self.problem = node, line, problem


@dataclass(slots=True)
class Message:
    src: str
    dest: str
    body: dict[str, Any]

    @property
    def type(self) -> str:
        return self.body["type"]

    def to_dict(self) -> dict[str, Any]:
        return {"src": self.src, "dest": self.dest, "body": self.body}


#: a run of digits long enough to be an integer outside 64 bits, which orjson would read
#: as a float (the standard library keeps it exact); spelt out, it runs faster than \d{19}
_LONG_NUMBER = re.compile(rb"\d" * 19)


def dumps_line(obj: Any) -> bytes:
    """``obj`` as one line of JSON, newline included."""
    try:  # orjson is 5-10x faster than the standard library, the harness's main cost
        return orjson.dumps(obj, option=orjson.OPT_APPEND_NEWLINE)
    except TypeError:  # integers outside 64 bits, keys that are not strings
        return (json.dumps(obj, separators=(",", ":")) + "\n").encode()


def encode(msg: Message) -> bytes:
    """One line of a node's stdin."""
    return dumps_line({"src": msg.src, "dest": msg.dest, "body": msg.body})


def _loads(line: bytes) -> Any:
    """orjson where it reads exactly what the standard library reads; the standard
    library for long integers, and for what orjson rejects (NaN, Infinity: the same
    value, or the same error as before)."""
    if _LONG_NUMBER.search(line) is None:
        try:
            return orjson.loads(line)
        except orjson.JSONDecodeError:
            pass
    return json.loads(line)


def decode(line: bytes, node: str, lineno: int) -> Message:
    """Parse one stdout line of ``node``; raises NodeProtocolError naming what is wrong."""
    try:
        obj = _loads(line)
    except (ValueError, UnicodeDecodeError) as e:
        raise NodeProtocolError(node, lineno, f"invalid JSON ({e})", line) from None
    # the well-formed message in one pass (``type(x) is int`` leaves out booleans, and
    # parsed JSON holds no subclasses); anything else is told apart by _reject
    if type(obj) is dict:
        src, dest, body = obj.get("src"), obj.get("dest"), obj.get("body")
        if src == node and type(dest) is str and type(body) is dict:
            t, mid, irt = body.get("type"), body.get("msg_id"), body.get("in_reply_to")
            if (type(t) is str and (mid is None or type(mid) is int)
                    and (irt is None or type(irt) is int)
                    and (t != "error" or type(body.get("code")) is int)):
                return Message(src, dest, body)
    _reject(obj, line, node, lineno)
    return Message(obj["src"], obj["dest"], obj["body"])  # not reached: _reject raised


def _reject(obj: Any, line: bytes, node: str, lineno: int) -> None:
    """Raise the NodeProtocolError that names what is wrong with ``obj``."""
    if not isinstance(obj, dict):
        raise NodeProtocolError(node, lineno, "a message must be a JSON object", line)
    for field in ("src", "dest"):
        if not isinstance(obj.get(field), str):
            raise NodeProtocolError(node, lineno, f"field {field!r} missing or not a string",
                                    line)
    body = obj.get("body")
    if not isinstance(body, dict):
        raise NodeProtocolError(node, lineno, "field 'body' missing or not an object", line)
    if not isinstance(body.get("type"), str):
        raise NodeProtocolError(node, lineno, "field 'body.type' missing or not a string",
                                line)
    for field in ("msg_id", "in_reply_to"):
        v = body.get(field)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
            raise NodeProtocolError(node, lineno, f"field 'body.{field}' is not an integer",
                                    line)
    if obj["src"] != node:
        raise NodeProtocolError(node, lineno, f"src is {obj['src']!r}, not the node's own id",
                                line)
    if body["type"] == "error" and (isinstance(body.get("code"), bool)
                                    or not isinstance(body.get("code"), int)):
        raise NodeProtocolError(node, lineno, "an error body needs an integer 'code'", line)
    raise NodeProtocolError(node, lineno, "not a Maelstrom message", line)


def error_body(code: int, text: str, in_reply_to: int | None) -> dict[str, Any]:
    body: dict[str, Any] = {"type": "error", "code": code, "text": text}
    if in_reply_to is not None:
        body["in_reply_to"] = in_reply_to
    return body
