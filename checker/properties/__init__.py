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

from importlib.metadata import entry_points

from tomkit.checker.properties import (
    agreement,
    causal,
    fifo,
    global_order,
    integrity,
    latency,
    liveness,
    log_offsets,
    member_liveness,
    prefix_order,
    rate,
    realtime_latency,
    total_order,
    view_sequence,
    views,
    virtual_synchrony,
)
from tomkit.checker.properties.base import (
    DECLARED,
    EXACT,
    HOLDS,
    UNKNOWN,
    VIOLATED,
    Option,
    Options,
    Property,
    declare,
    per_trace,
    positive,
    scoped,
    verdicts,
    with_scope,
)
from tomkit.checker.usage import UnknownName, UsageError, unknown_name

__all__ = ["ENTRY_POINTS", "EXACT", "HOLDS", "PROPERTIES", "UNKNOWN", "VIOLATED", "Option",
           "Options", "Property", "declared_options", "per_trace", "positive", "properties",
           "register", "resolve", "scoped", "unregister", "verdicts", "with_scope", "UnknownName",
           "UsageError"]

#: the entry-point group of property plugins: each entry names a Property (or a module
#: with ``PROPERTY``), registered after the built-in ones
ENTRY_POINTS = "tomkit.properties"

#: every property by name, in report order
PROPERTIES: dict[str, Property] = {}


def register(prop: Property) -> Property:
    """Add ``prop`` to the registry, after those there: the engines, the Spark scan (a
    property it decides needs a Spark form: checker/spark/properties.py), the fuzzers,
    the profiles, the docs, and, from its declared options, the flags of ``tomkit check``
    and ``tomkit scan``, the keywords of ``tomkit.check()`` and the JSON report's
    ``options``. ValueError for a name already taken or an option declared differently
    by another property."""
    if prop.name in PROPERTIES:
        raise ValueError(f"a property named {prop.name} is already registered")
    if "@" in prop.name:
        raise ValueError(f"{prop.name}: '@' is reserved for scopes (NAME@correct)")
    for name in prop.reads:
        if name not in DECLARED and all(o.name != name for o in prop.options):
            raise ValueError(f"property {prop.name} reads option {name}, which no "
                             "registered property declares")
    for o in prop.options:  # all checked before any is declared
        if DECLARED.get(o.name, o) != o:
            raise ValueError(f"property {prop.name} declares option {o.name}, already "
                             "declared differently by another property")
    for o in prop.options:
        declare(o, prop.name)
    PROPERTIES[prop.name] = prop
    return prop


def unregister(name: str) -> Property:
    """Remove a property registered by :func:`register` (and the options only it
    declares); KeyError when there is none of that name."""
    prop = PROPERTIES.pop(name)
    still = {o.name for p in PROPERTIES.values() for o in p.options}
    for o in prop.options:
        if o.name not in still:
            DECLARED.pop(o.name, None)
    return prop


def declared_options() -> dict[str, tuple[Option, list[str]]]:
    """Every option any registered property declares, in registry order, with the
    properties that read it (the declaring one first)."""
    out: dict[str, tuple[Option, list[str]]] = {}
    for p in PROPERTIES.values():
        for o in p.options:
            out.setdefault(o.name, (o, []))[1].append(p.name)
    for p in PROPERTIES.values():
        for n in p.reads:
            if p.name not in out[n][1]:
                out[n][1].append(p.name)
    return out


def properties() -> dict[str, Property]:
    """All properties by name, in report order."""
    return PROPERTIES


def resolve(name: str) -> Property:
    """A property by name; ``NAME@uniform`` or ``NAME@correct`` picks its scope
    (properties/scope.py). Raises KeyError naming the known ones."""
    base, sep, scope = name.partition("@")
    if base not in PROPERTIES:
        raise unknown_name("property", base, list(PROPERTIES), shown=base)
    return with_scope(PROPERTIES[base], scope) if sep else PROPERTIES[base]


def _plugins() -> list[Property]:
    out = []
    for ep in entry_points(group=ENTRY_POINTS):
        obj = ep.load()
        prop = getattr(obj, "PROPERTY", obj)
        if not isinstance(prop, Property):
            raise TypeError(f"entry point {ep.name} = {ep.value} of {ENTRY_POINTS} names "
                            "no Property (a module's PROPERTY, or a Property)")
        out.append(prop)
    return out


for _prop in (
    integrity.PROPERTY,
    scoped(total_order.WEAK),
    scoped(total_order.STRONG),
    scoped(prefix_order.PROPERTY),
    scoped(global_order.PROPERTY),
    scoped(causal.PROPERTY),
    scoped(fifo.PROPERTY),
    views.VIEW_AGREEMENT,
    view_sequence.PROPERTY,
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
    log_offsets.PROPERTY,
    *_plugins(),
):
    register(_prop)
