"""Reading TLA+ values as TLC prints them in states and error traces.

TLC prints a state as ``/\\ var = value`` lines, with values in TLA+ syntax:

=========================  ====================================  ===================
TLA+                       example                               Python
=========================  ====================================  ===================
integer, boolean           ``-3``, ``TRUE``                      ``int``, ``bool``
string                     ``"ud"``                              ``str``
model value                ``p1``                                :class:`ModelValue`
sequence / tuple           ``<<1, <<2, 3>>>>``                   ``tuple``
set                        ``{1, 2}``                            ``frozenset``
record                     ``[kind |-> "ack", ts |-> <<1, 2>>]`` :class:`Record`
function                   ``(1 :> "a" @@ 2 :> "b")``            :class:`Function`
interval                   ``1..3``                              ``frozenset``
=========================  ====================================  ===================

A function whose domain is ``1..n`` is printed by TLC as a sequence, so
``delivered = <<<<>>, <<>>>>`` reads as a tuple of two tuples. Records and
functions are hashable ``dict`` subclasses (so that sets of them work); do
not mutate them. The parser is a small recursive-descent one over a token
stream; a malformed value raises :class:`TlaValueError` naming the offset.
:func:`parse_state` with ``strict=False`` keeps a value it cannot read (TLC
may print values such as ``SUBSET {1}`` or ``[{1} -> {2}]`` that are not in the
table) as a :class:`RawValue` holding TLC's text, so that any spec's
counterexample can still be shown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

__all__ = ["Function", "ModelValue", "RawValue", "Record", "TlaValueError", "format_value",
           "parse_state", "parse_value", "split_state"]


class TlaValueError(ValueError):
    """A value TLC printed that this parser cannot read."""


@dataclass(frozen=True)
class ModelValue:
    """A TLC model value (an uninterpreted constant such as ``p1``)."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class RawValue:
    """A value kept as the text TLC printed, because the parser does not read its form."""

    text: str

    def __str__(self) -> str:
        return self.text


class _FrozenDict(dict):
    def __hash__(self) -> int:  # type: ignore[override]
        return hash((type(self).__name__, frozenset(self.items())))


class Record(_FrozenDict):
    """A TLA+ record ``[field |-> value, ...]``: field name to value."""


class Function(_FrozenDict):
    """A TLA+ function printed as ``(k1 :> v1 @@ k2 :> v2)``: argument to value."""


_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<str>"(?:[^"\\]|\\.)*")
  | (?P<int>-?\d+)
  | (?P<sym><<|>>|\|->|:>|@@|\.\.|[{}\[\](),])
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
""", re.VERBOSE)

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", '"': '"', "\\": "\\"}


def _tokens(text: str) -> list[tuple[str, str, int]]:
    out = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise TlaValueError(f"unexpected character {text[pos]!r} at offset {pos} in "
                                f"{_excerpt(text, pos)}")
        kind = m.lastgroup
        if kind != "ws":
            out.append((kind, m.group(), pos))
        pos = m.end()
    return out


def _excerpt(text: str, pos: int) -> str:
    lo = max(0, pos - 20)
    return repr(text[lo:pos + 20])


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.toks = _tokens(text)
        self.i = 0

    def peek(self) -> tuple[str, str, int] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, want: str | None = None) -> tuple[str, str, int]:
        tok = self.peek()
        if tok is None:
            raise TlaValueError(f"value ends early: {self.text!r}")
        if want is not None and tok[1] != want:
            raise TlaValueError(f"expected {want!r} at offset {tok[2]}, found {tok[1]!r} in "
                                f"{_excerpt(self.text, tok[2])}")
        self.i += 1
        return tok

    def at(self, sym: str) -> bool:
        tok = self.peek()
        return tok is not None and tok[1] == sym and tok[0] in ("sym",)

    def value(self) -> Any:
        kind, text, pos = self.take()
        if kind == "int":
            if self.at(".."):  # an interval a..b, as TLC prints 1..3
                self.take()
                hi_kind, hi, hi_pos = self.take()
                if hi_kind != "int":
                    raise TlaValueError(f"expected an integer after '..' at offset {hi_pos} in "
                                        f"{_excerpt(self.text, hi_pos)}")
                return frozenset(range(int(text), int(hi) + 1))
            return int(text)
        if kind == "str":
            return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), text[1:-1])
        if kind == "name":
            if text == "TRUE":
                return True
            if text == "FALSE":
                return False
            return ModelValue(text)
        if text == "<<":
            return tuple(self.items(">>"))
        if text == "{":
            return frozenset(self.items("}"))
        if text == "[":
            return self.record()
        if text == "(":
            return self.function()
        raise TlaValueError(f"unexpected {text!r} at offset {pos} in {_excerpt(self.text, pos)}")

    def items(self, close: str) -> list[Any]:
        out: list[Any] = []
        if self.at(close):
            self.take()
            return out
        while True:
            out.append(self.value())
            if self.at(","):
                self.take()
                continue
            self.take(close)
            return out

    def record(self) -> Record:
        rec = Record()
        while True:
            kind, name, pos = self.take()
            if kind != "name":
                raise TlaValueError(f"expected a field name at offset {pos} in "
                                    f"{_excerpt(self.text, pos)}")
            self.take("|->")
            dict.__setitem__(rec, name, self.value())
            if self.at(","):
                self.take()
                continue
            self.take("]")
            return rec

    def function(self) -> Function | Any:
        first = self.value()
        if self.at(")"):  # a parenthesised value
            self.take()
            return first
        fun = Function()
        key = first
        while True:
            self.take(":>")
            dict.__setitem__(fun, key, self.value())
            if self.at("@@"):
                self.take()
                key = self.value()
                continue
            self.take(")")
            return fun


def parse_value(text: str) -> Any:
    """One TLA+ value, e.g. ``parse_value('<<1, "a">>') == (1, "a")``."""
    p = _Parser(text)
    v = p.value()
    if p.peek() is not None:
        tok = p.peek()
        raise TlaValueError(f"unexpected {tok[1]!r} after the value at offset {tok[2]} in "
                            f"{_excerpt(text, tok[2])}")
    return v


_VAR_LINE = re.compile(r"^(?:/\\ )?([A-Za-z_][A-Za-z0-9_]*) = ", re.MULTILINE)


def split_state(text: str) -> dict[str, str]:
    """The variables of one state printed as ``/\\ x = 1`` lines, each with the text of its
    value as TLC printed it (values may span lines)."""
    heads = list(_VAR_LINE.finditer(text))
    if not heads and text.strip():
        raise TlaValueError(f"no 'var = value' line in state {text[:60]!r}")
    out: dict[str, str] = {}
    for k, m in enumerate(heads):
        end = heads[k + 1].start() if k + 1 < len(heads) else len(text)
        out[m.group(1)] = text[m.end():end].strip()
    return out


def parse_state(text: str, strict: bool = True) -> dict[str, Any]:
    """The variables of one state (see :func:`split_state`), parsed. ``strict=False`` keeps
    a value the parser cannot read as a :class:`RawValue` instead of raising."""
    out: dict[str, Any] = {}
    for name, value in split_state(text).items():
        try:
            out[name] = parse_value(value)
        except TlaValueError as e:
            if strict:
                raise TlaValueError(f"variable {name}: {e}") from None
            out[name] = RawValue(" ".join(value.split()))
    return out


def format_value(v: Any) -> str:
    """Print a parsed value back in TLA+ syntax (sets and functions in sorted order)."""
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, (ModelValue, RawValue)):
        return str(v)
    if isinstance(v, tuple):
        return "<<" + ", ".join(format_value(x) for x in v) + ">>"
    if isinstance(v, frozenset):
        return "{" + ", ".join(sorted(format_value(x) for x in v)) + "}"
    if isinstance(v, Record):
        return "[" + ", ".join(f"{k} |-> {format_value(x)}" for k, x in v.items()) + "]"
    if isinstance(v, Function):
        parts = sorted(f"{format_value(k)} :> {format_value(x)}" for k, x in v.items())
        return "(" + " @@ ".join(parts) + ")"
    raise TypeError(f"not a TLA+ value: {v!r}")
