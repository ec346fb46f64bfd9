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
from dataclasses import dataclass
from typing import Any

__all__ = ["ERRORS", "Message", "NodeProtocolError", "decode", "encode", "error_body",
           "is_definite"]


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


def encode(msg: Message) -> bytes:
    """One line of a node's stdin."""
    return (json.dumps({"src": msg.src, "dest": msg.dest, "body": msg.body},
                       separators=(",", ":")) + "\n").encode()


def decode(line: bytes, node: str, lineno: int) -> Message:
    """Parse one stdout line of ``node``; raises NodeProtocolError naming what is wrong."""
    try:
        obj = json.loads(line)
    except (ValueError, UnicodeDecodeError) as e:
        raise NodeProtocolError(node, lineno, f"invalid JSON ({e})", line) from None
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
    return Message(obj["src"], obj["dest"], body)


def error_body(code: int, text: str, in_reply_to: int | None) -> dict[str, Any]:
    body: dict[str, Any] = {"type": "error", "code": code, "text": text}
    if in_reply_to is not None:
        body["in_reply_to"] = in_reply_to
    return body
