"""What every property is made of (its options, its record in the registry) and the
helpers their vectorized ``detect`` functions share; ``properties/__init__.py`` holds the
registry itself."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from tomkit.checker.chunk import Chunk
from tomkit.checker.properties.scope import SCOPES, UNIFORM, in_scope, rescope
from tomkit.checker.result import Result
from tomkit.checker.trace import Trace

HOLDS, UNKNOWN, VIOLATED, EXACT = 0, 1, 2, 3


@dataclass(frozen=True)
class Options:
    latency_bound: float | None = None
    #: who is judged by the order and agreement properties: "uniform" (every process,
    #: the default) or "correct" (no crash record); see properties/scope.py
    scope: str = "uniform"
    #: the real-time latency bound (realtime_latency.py; else latency_bound is used)
    realtime_bound: float | None = None
    #: the rate check (rate.py): slot length in seconds, packets per slot, packets per
    #: window of rate_window slots
    slot: float | None = None
    rate_max: int | None = None
    rate_avg: int | None = None
    rate_window: int | None = None


@dataclass(frozen=True)
class Property:
    name: str
    summary: str
    default: bool  # checked when the user names no property
    check: Callable[[Trace, Options], Result]
    detect: Callable[[Chunk, Options], np.ndarray]
    doc: str
    # why a trace that detect calls UNKNOWN is unknown (the same words check() uses)
    reason: Callable[[Chunk, int, Options], str] | None = None
    #: an order property read through properties/scope.py (uniform or correct)
    scoped: bool = False


def with_scope(prop: Property, scope: str) -> Property:
    """``prop`` judged in ``scope`` whatever the options say; named ``NAME@correct`` for
    the correct-process form (the uniform form keeps its name)."""
    if scope not in SCOPES:
        raise KeyError(f"unknown scope {scope!r}; known: {', '.join(SCOPES)}")
    if not prop.scoped:
        raise KeyError(f"{prop.name} has no scope: it judges each process alone or the "
                       "trace as a whole")
    check, detect = prop.check, prop.detect

    def check_in(trace: Trace, options: Options) -> Result:
        res = check(trace, replace(options, scope=scope))
        res.property = name
        return res

    def detect_in(chunk: Chunk, options: Options) -> np.ndarray:
        return detect(chunk, replace(options, scope=scope))

    base = prop.name.split("@")[0]
    name = base if scope == UNIFORM else f"{base}@{scope}"
    return Property(name, prop.summary, prop.default, check_in, detect_in, prop.doc,
                    prop.reason, True)


def scoped(prop: Property) -> Property:
    """``prop`` (universal over processes: every pair, every process) judged in the
    scope of its options (properties/scope.py)."""
    check, detect = prop.check, prop.detect

    def check_scoped(trace: Trace, options: Options) -> Result:
        return check(in_scope(trace, options.scope), options)

    def detect_scoped(chunk: Chunk, options: Options) -> np.ndarray:
        return rescope(chunk, detect(chunk, options), options.scope, EXACT)

    return Property(prop.name, prop.summary, prop.default, check_scoped, detect_scoped,
                    prop.doc, prop.reason, True)


def per_trace(chunk: Chunk, rows_t: np.ndarray) -> np.ndarray:
    """A boolean per trace: does any of the given rows' traces appear."""
    out = np.zeros(chunk.ntr, bool)
    out[rows_t] = True
    return out


def verdicts(chunk: Chunk, violated: np.ndarray, unknown: np.ndarray | None = None,
             exact: np.ndarray | None = None) -> np.ndarray:
    """Combine boolean per-trace arrays into detect codes (violated wins)."""
    codes = np.zeros(chunk.ntr, np.int8)
    if unknown is not None:
        codes[unknown] = UNKNOWN
    if exact is not None:
        codes[exact] = EXACT
    codes[violated] = VIOLATED
    return codes
