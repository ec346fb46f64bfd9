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

from tomkit.checker.properties.base import (
    EXACT,
    HOLDS,
    UNKNOWN,
    VIOLATED,
    Options,
    Property,
    per_trace,
    scoped,
    verdicts,
    with_scope,
)

__all__ = ["EXACT", "HOLDS", "PROPERTIES", "UNKNOWN", "VIOLATED", "Options", "Property",
           "per_trace", "properties", "resolve", "scoped", "verdicts", "with_scope"]


def resolve(name: str) -> Property:
    """A property by name; ``NAME@uniform`` or ``NAME@correct`` picks its scope
    (properties/scope.py). Raises KeyError naming the known ones."""
    props = properties()
    base, sep, scope = name.partition("@")
    if base not in props:
        raise KeyError(f"unknown property {base}; known: {', '.join(props)}")
    return with_scope(props[base], scope) if sep else props[base]


def _registry() -> dict[str, Property]:
    from tomkit.checker.properties import (
        agreement,
        causal,
        fifo,
        global_order,
        integrity,
        latency,
        liveness,
        member_liveness,
        prefix_order,
        rate,
        realtime_latency,
        total_order,
        views,
        virtual_synchrony,
    )

    props = [
        integrity.PROPERTY,
        scoped(total_order.WEAK),
        scoped(total_order.STRONG),
        scoped(prefix_order.PROPERTY),
        scoped(global_order.PROPERTY),
        scoped(causal.PROPERTY),
        scoped(fifo.PROPERTY),
        views.VIEW_AGREEMENT,
        scoped(views.SAME_VIEW),
        scoped(views.SENDING_VIEW),
        scoped(virtual_synchrony.PROPERTY),
        agreement.AGREEMENT,
        agreement.VALIDITY,
        liveness.PROPERTY,
        latency.PROPERTY,
        member_liveness.PROPERTY,
        realtime_latency.PROPERTY,
        rate.PROPERTY,
    ]
    return {p.name: p for p in props}


PROPERTIES: dict[str, Property] = {}


def properties() -> dict[str, Property]:
    """All properties by name, in report order."""
    if not PROPERTIES:
        PROPERTIES.update(_registry())
    return PROPERTIES


