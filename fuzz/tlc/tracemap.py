"""Which TLA+ expressions of a user's spec give the events of a v1 trace.

A spec of a broadcast protocol has its own variable names; a *trace map*
names, once, the expressions (over the spec's variables, constants and
operators) that say what :mod:`~tomkit.fuzz.tlc.trace` needs at each state:

``deliveries`` (required)
    a function from each process to the sequence of messages it has
    delivered so far (a tuple when the processes are ``1..n``);
``sends`` (optional)
    the messages broadcast so far: a function from each process to the set
    (or sequence) of messages it has broadcast, or a set of pairs
    ``<<sender, k>>``;
``views`` (optional)
    a function from each process to its current view, a record
    ``[id |-> ..., members |-> {...}]``.

It is given either as a TOML file (``tomkit tlc SPEC --trace-map MAP.toml``)::

    deliveries = 'log'
    sends = '[n \\in Node |-> {m \\in submitted : m[1] = n}]'
    [properties]            # optional: the checker property each TLA+ one states
    SameOrder = "total-order-weak"

(TLA+ in single quotes: TOML's literal strings keep the backslashes), or as
the name of an operator the user adds to the spec, in the way TLC's trace
exploration adds an ``ALIAS``: ``--trace-map TraceMap`` with
``TraceMap == [deliveries |-> log, sends |-> ...]``.

Without a map, tomkit's own convention applies when the spec has it: the
variables ``delivered`` and ``broadcast`` (specs/TotalOrderBroadcast).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["FIELDS", "TOMKIT_MAP", "TraceMap", "TraceMapError", "load_trace_map"]

FIELDS = ("deliveries", "sends", "views")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class TraceMapError(ValueError):
    """A trace map that cannot be used (the message names the file, line and key)."""


@dataclass
class TraceMap:
    """The expressions that give a trace, and where they come from."""

    exprs: dict[str, str]  # field -> TLA+ expression (fields of FIELDS)
    source: str  # for messages: the file, the operator, or tomkit's convention
    operator: str | None = None  # the operator form: one record with the fields
    properties: dict[str, str] = field(default_factory=dict)  # TLA+ name -> checker name

    def variables_only(self, variables: set[str]) -> bool:
        """Whether every expression is one of the state's variables (no replay needed)."""
        return self.operator is None and all(e in variables for e in self.exprs.values())


#: tomkit's own specs: the variables of specs/TotalOrderBroadcast
TOMKIT_MAP = TraceMap({"deliveries": "delivered", "sends": "broadcast"},
                      "tomkit's convention (variables delivered and broadcast)")


def _line_of(text: str, key: str) -> str:
    for i, line in enumerate(text.splitlines(), 1):
        if re.match(rf"\s*{re.escape(key)}\s*=", line):
            return f"line {i}"
    return "line ?"


def load_trace_map(arg: str) -> TraceMap:
    """A map from a TOML file, or from an operator's name (an identifier that is not a
    file). Raises :class:`TraceMapError` naming file, line and key."""
    path = Path(arg)
    if not path.is_file():
        if _IDENT.fullmatch(arg):
            return TraceMap({}, f"operator {arg}", operator=arg)
        raise TraceMapError(f"--trace-map {arg}: no such file (and not an operator name)")
    text = path.read_text()
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        hint = (" (write TLA+ in single quotes, TOML's literal strings, so that its "
                "backslashes stay as they are)" if "\\" in str(e) or "escape" in str(e) else "")
        raise TraceMapError(f"{path}: {e}{hint}") from None
    exprs: dict[str, str] = {}
    props: dict[str, str] = {}
    for key, value in doc.items():
        where = f"{path}: {_line_of(text, key)}: {key}"
        if key == "properties":
            if not isinstance(value, dict):
                raise TraceMapError(f"{where}: a table [properties] of TLA+ property = "
                                    "checker property")
            props = _properties(path, text, value)
        elif key in FIELDS:
            if not isinstance(value, str) or not value.strip():
                raise TraceMapError(f"{where}: a TLA+ expression in quotes, not {value!r}")
            exprs[key] = value.strip()
        else:
            raise TraceMapError(f"{where}: unknown key (known: {', '.join(FIELDS)}, "
                                "[properties])")
    if "deliveries" not in exprs:
        raise TraceMapError(f"{path}: no 'deliveries' (the expression giving each process's "
                            "delivery sequence is required)")
    return TraceMap(exprs, str(path), properties=props)


def _properties(path: Path, text: str, table: dict) -> dict[str, str]:
    from tomkit.checker.properties import properties

    known = list(properties())
    out = {}
    for name, checker in table.items():
        if checker not in known:
            raise TraceMapError(f"{path}: {_line_of(text, name)}: properties.{name}: "
                                f"{checker!r} is no property of tomkit check (one of "
                                f"{', '.join(known)})")
        out[name] = checker
    return out
