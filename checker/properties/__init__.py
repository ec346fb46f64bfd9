"""The registry of properties: one definition per property, read by every engine.

Each property module holds the exact definition and its source in its
docstring, a reference ``check(trace, options)`` that decides one trace and
finds a minimal witness, and a vectorized ``detect(chunk, options)`` that
decides every trace of a chunk at once. ``detect`` returns, per trace, one
of HOLDS, UNKNOWN, VIOLATED or EXACT; EXACT means "not settled cheaply: ask
the reference check". A trace ``detect`` calls VIOLATED is always handed to
``check`` for its witness, and the engine insists the two agree.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from tomkit.checker.chunk import Chunk
from tomkit.checker.result import Result
from tomkit.checker.trace import Trace

HOLDS, UNKNOWN, VIOLATED, EXACT = 0, 1, 2, 3


@dataclass(frozen=True)
class Options:
    latency_bound: float | None = None


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


def _registry() -> dict[str, Property]:
    from tomkit.checker.properties import (
        causal,
        fifo,
        global_order,
        integrity,
        latency,
        liveness,
        total_order,
        virtual_synchrony,
    )

    props = [
        integrity.PROPERTY,
        total_order.WEAK,
        total_order.STRONG,
        global_order.PROPERTY,
        causal.PROPERTY,
        fifo.PROPERTY,
        virtual_synchrony.PROPERTY,
        liveness.PROPERTY,
        latency.PROPERTY,
    ]
    return {p.name: p for p in props}


PROPERTIES: dict[str, Property] = {}


def properties() -> dict[str, Property]:
    """All properties by name, in report order."""
    if not PROPERTIES:
        PROPERTIES.update(_registry())
    return PROPERTIES


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
