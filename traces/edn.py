"""A reader of EDN, the subset Jepsen and Maelstrom histories are written in.

EDN (extensible data notation, edn-format/edn's README) is Clojure's data syntax; a
Jepsen history (``history.edn``) holds one map per line, e.g. ``{:index 3, :time 4650,
:type :ok, :process 0, :f :poll, :value [[:poll {"56" [[4 5] [5 6]]}]]}``. This reader
takes nil, true, false, integers (``N`` suffix too), floats (``M`` too), strings with
their escapes, characters, keywords, symbols, vectors, lists, maps, sets, ``#_``
discards, comments and tagged values; a tag (``#inst``, ``#jepsen.history.Op``) is read
as the value it tags. Keywords come back as :class:`Keyword` (a ``str`` of the name
without its colon), symbols as :class:`Symbol`, vectors and lists as ``list``, sets as
``frozenset`` and maps as ``dict`` (a vector or list used as a map key or set member as
a ``tuple``).

Why not the ``edn_format`` package: its parser is too slow for histories of a hundred
thousand lines (docs/maelstrom.md has the figures; bench/maelstrom_bench.py measures
both); this reader, a regular-expression tokenizer and a small recursive descent, is
cross-checked against ``edn_format`` on generated values by Hypothesis
(tests/traces/test_edn.py).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["EdnError", "Keyword", "Symbol", "loads"]


class Keyword(str):
    """An EDN keyword, by its name without the colon (``:type`` -> ``Keyword("type")``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f":{str.__str__(self)}"


class Symbol(str):
    __slots__ = ()


class EdnError(ValueError):
    """Text that is not EDN; ``column`` is 1-based."""

    def __init__(self, problem: str, column: int):
        super().__init__(f"column {column}: {problem}")
        self.problem, self.column = problem, column


_TOKEN = re.compile(r"""
    (?P<ws>[\s,]+|;[^\n]*)
  | (?P<str>"(?:[^"\\]|\\.)*")
  | (?P<open>\#\{|[\[{(])
  | (?P<close>[\]})])
  | (?P<discard>\#_)
  | (?P<tag>\#[A-Za-z][^\s,\[\]{}()"\\;]*)
  | (?P<char>\\(?:newline|space|tab|return|formfeed|backspace|u[0-9a-fA-F]{4}|[^\s,]))
  | (?P<atom>[^\s,\[\]{}()"\\;\#][^\s,\[\]{}()"\\;]*)
""", re.X | re.S)
_INT = re.compile(r"[+-]?\d+N?\Z")
_FLOAT = re.compile(r"[+-]?\d+(?:\.\d*)?(?:[eE][+-]?\d+)?M?\Z")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", '"': '"', "\\": "\\",
            "/": "/"}
_CHARS = {"newline": "\n", "space": " ", "tab": "\t", "return": "\r", "formfeed": "\f",
          "backspace": "\b"}
_STR_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|.)", re.S)
_CLOSE = {"[": "]", "(": ")", "{": "}", "#{": "}"}


def _unescape(m: re.Match) -> str:
    e = m.group(1)
    if e[0] == "u":
        return chr(int(e[1:], 16))
    if e not in _ESCAPES:
        raise ValueError(f"unknown escape \\{e}")
    return _ESCAPES[e]


def _atom(text: str, col: int) -> Any:
    if text == "nil":
        return None
    if text == "true":
        return True
    if text == "false":
        return False
    if text[0] == ":":
        if len(text) == 1:
            raise EdnError("a keyword needs a name", col)
        return Keyword(text[1:])
    if text[0].isdigit() or (len(text) > 1 and text[0] in "+-" and text[1].isdigit()):
        if _INT.match(text):
            return int(text.rstrip("N"))
        if _FLOAT.match(text):
            return float(text.rstrip("M"))
        raise EdnError(f"not a number: {text!r}", col)
    return Symbol(text)


def _hashable(v: Any) -> Any:
    if isinstance(v, list):
        return tuple(_hashable(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted(((_hashable(k), _hashable(x)) for k, x in v.items()), key=repr))
    return v


def loads(text: str) -> Any:
    """The one EDN value in ``text``; raises EdnError (with the column) on anything else."""
    tokens = []
    pos = 0
    n = len(text)
    while pos < n:
        m = _TOKEN.match(text, pos)
        if m is None:
            raise EdnError(f"unexpected {text[pos]!r}", pos + 1)
        kind = m.lastgroup
        if kind != "ws":
            tokens.append((kind, m.group(), pos + 1))
        pos = m.end()
    if not tokens:
        raise EdnError("no value", 1)
    value, i = _value(tokens, 0)
    if i != len(tokens):
        raise EdnError(f"more after the value: {tokens[i][1]!r}", tokens[i][2])
    return value


def _value(tokens: list[tuple[str, str, int]], i: int) -> tuple[Any, int]:
    if i >= len(tokens):
        raise EdnError("the text ends inside a value", tokens[-1][2] if tokens else 1)
    kind, text, col = tokens[i]
    if kind == "atom":
        return _atom(text, col), i + 1
    if kind == "str":
        try:
            return _STR_ESCAPE.sub(_unescape, text[1:-1]), i + 1
        except ValueError as e:
            raise EdnError(str(e), col) from None
    if kind == "char":
        c = text[1:]
        if c in _CHARS:
            return _CHARS[c], i + 1
        return (chr(int(c[1:], 16)) if len(c) == 5 and c[0] == "u" else c), i + 1
    if kind == "tag":
        return _value(tokens, i + 1)
    if kind == "discard":
        _, j = _value(tokens, i + 1)
        return _value(tokens, j)
    if kind == "close":
        raise EdnError(f"unexpected {text!r}", col)
    close = _CLOSE[text]
    items: list[Any] = []
    j = i + 1
    while True:
        if j >= len(tokens):
            raise EdnError(f"{text!r} is never closed", col)
        k2, t2, c2 = tokens[j]
        if k2 == "close":
            if t2 != close:
                raise EdnError(f"{text!r} closed by {t2!r}", c2)
            j += 1
            break
        if k2 == "discard":
            _, j = _value(tokens, j + 1)
            continue
        v, j = _value(tokens, j)
        items.append(v)
    if text == "{":
        if len(items) % 2:
            raise EdnError("a map needs an even number of forms", col)
        return {_hashable(items[a]): items[a + 1] for a in range(0, len(items), 2)}, j
    if text == "#{":
        return frozenset(_hashable(x) for x in items), j
    return items, j
