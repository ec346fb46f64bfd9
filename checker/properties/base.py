"""What every property is made of (its record in the registry, the options it declares,
the values of those options for a run) and the helpers their vectorized ``detect``
functions share; ``properties/__init__.py`` holds the registry itself."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from tomkit.checker.chunk import Chunk
from tomkit.checker.properties.scope import SCOPES, UNIFORM, in_scope, rescope
from tomkit.checker.result import Result
from tomkit.checker.trace import Trace
from tomkit.checker.usage import UnknownName, unknown_name

if TYPE_CHECKING:
    from tomkit.checker.stream.clean import Clean

HOLDS, UNKNOWN, VIOLATED, EXACT = 0, 1, 2, 3


def positive(value: Any) -> str | None:
    """A validation of :class:`Option`: the value must be above zero (NaN is not) and
    finite (a bound of inf judged nothing, and said nothing of it)."""
    if not value > 0:
        return f"must be positive, got {value}"
    return None if value < math.inf else \
        f"must be a finite number, got {value} (leave the option out: no bound)"


def not_negative(value: Any) -> str | None:
    """A validation of :class:`Option`: the value must be zero or more."""
    return None if value >= 0 else f"must be >= 0, got {value}"


@dataclass(frozen=True)
class Option:
    """A setting of a property, declared once with the property (``Property.options``);
    everything else derives from this declaration: the keyword of :class:`Options` and of
    ``tomkit.check()``, the flag ``--name-with-dashes`` of ``tomkit check`` and ``tomkit
    scan`` (and of the Spark job), the key of the JSON report's ``options``, and the line
    of docs/properties.md (``checker/check_run.py`` and ``checker/docs.py`` read it)."""

    name: str
    type: type
    help: str
    #: the value's name on the command line (SECONDS, N, K)
    metavar: str = "VALUE"
    #: what the value counts (seconds, packet records, slots), for messages and docs
    unit: str = ""
    #: None: not given (the property then says what is missing)
    default: Any = None
    #: why a given value is refused ("must be positive"), or None when it is fine
    validate: Callable[[Any], str | None] | None = None
    #: options that must be given with this one
    needs: tuple[str, ...] = ()
    #: giving the option checks its property too (``tomkit check --rate-max 3`` checks
    #: rate without ``-p rate``)
    selects: bool = True

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


#: every option a registered property declares, by name (filled by the registry,
#: ``properties/__init__.py``: :func:`declare`)
DECLARED: dict[str, Option] = {}


def declare(option: Option, owner: str) -> None:
    """Make ``option`` known to :class:`Options`; an option declared twice must be the
    same declaration (one property owns it, others may read it)."""
    have = DECLARED.get(option.name)
    if have is not None and have != option:
        raise ValueError(f"property {owner} declares option {option.name}, already "
                         "declared differently by another property")
    DECLARED[option.name] = option


class Options:
    """The values of the properties' options for one run, and the scope of the order and
    agreement properties ("uniform": every process, the default; "correct": the processes
    with no crash record; properties/scope.py). An option not given reads as its declared
    default; a name no registered property declares is refused (TypeError, as a keyword
    argument would be). Immutable, hashable and picklable (the Spark job ships it)."""

    __slots__ = ("scope", "_values")

    def __init__(self, scope: str = "uniform", **values: Any) -> None:
        unknown = sorted(set(values) - set(DECLARED))
        if unknown:
            raise TypeError(f"unknown option {', '.join(unknown)}; known: "
                            f"{', '.join(DECLARED) or 'none'}")
        object.__setattr__(self, "scope", scope)
        object.__setattr__(self, "_values", {k: v for k, v in values.items()
                                             if v != DECLARED[k].default})

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # pickle and copy probe for hooks before __init__
            raise AttributeError(name)
        values = object.__getattribute__(self, "_values")
        if name in values:
            return values[name]
        if name in DECLARED:
            return DECLARED[name].default
        raise AttributeError(f"unknown option {name}; known: {', '.join(DECLARED)}")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Options are immutable: use replace()")

    def given(self) -> dict[str, Any]:
        """The options given a value other than their default."""
        return dict(self._values)

    def as_dict(self) -> dict[str, Any]:
        """Every declared option with its value, and the scope (the JSON report's
        ``options``)."""
        return {**{n: getattr(self, n) for n in DECLARED}, "scope": self.scope}

    def replace(self, **changes: Any) -> Options:
        scope = changes.pop("scope", self.scope)
        return Options(scope, **{**self._values, **changes})

    def _key(self) -> tuple:
        return self.scope, tuple(sorted(self._values.items()))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Options) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __reduce__(self) -> tuple:
        return _options, (self.scope, self._values)

    def __repr__(self) -> str:
        given = "".join(f", {k}={v!r}" for k, v in self._values.items())
        return f"Options(scope={self.scope!r}{given})"


def _options(scope: str, values: dict[str, Any]) -> Options:
    return Options(scope, **values)


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
    #: the settings it takes, declared here and nowhere else (:class:`Option`)
    options: tuple[Option, ...] = ()
    #: options declared by another property that this one reads too (realtime-latency
    #: falls back on latency's bound)
    reads: tuple[str, ...] = ()
    #: checked with ``--liveness`` (``liveness=True`` of ``tomkit.check()``): judged at
    #: the end of a trace, which a trace cut before the system drained would fail
    liveness: bool = False
    #: judged at the end of a trace like a liveness property, but not one of the
    #: ``--liveness`` set: named, or through a profile (member-liveness, which serves the
    #: protocols agreement and liveness do not fit); a violation found on a trace's
    #: prefix may be undone by a later record, so ``tomkit watch`` keeps it pending
    #: until the trace ends
    at_end: bool = False
    #: decided by ``tomkit scan`` (``checker/spark/``); the Spark SQL engine decides it by
    #: its DataFrame form or hands every trace to the exact check
    #: (``checker/spark/properties.py``: ``SQL_FORMS``, ``BY_EXACT_CHECK``)
    scan: bool = True
    #: the single-pass checker's decider (checker/stream/): the verdict on a trace its
    #: canonical-sequence pass found clean, from what that pass knows (stream/clean.py);
    #: None: the property needs the whole trace, and the single pass does not take it.
    #: The decider may return None for a trace: its verdict needs the whole trace after
    #: all (a liveness violation's witness), which the whole-trace engine then decides
    stream: Callable[[Clean, Options], Result | None] | None = None
    #: whether its exact check on the records a broken trace still holds (everything
    #: after a prefix every process delivered alike, checker/stream/reduced.py) gives
    #: the whole trace's verdict; False: such a trace goes to the whole-trace engine
    #: (a property with a ``clock`` is combined there with the prefix's latencies)
    held: bool = True
    #: a latency bound: the clock the single pass measures send-to-delivery latency on
    #: for this property's stream decider ("time", "real_time"), and the run's bound
    #: (``tomkit watch`` prints the violation once a latency exceeds it: the largest
    #: latency only grows)
    clock: str | None = None
    bound: Callable[[Options], float | None] | None = None

    def final(self) -> bool:
        """Whether its verdict waits for the end of the trace (``liveness``, ``at_end``):
        a trace cut before the system drained may fail it."""
        return self.liveness or self.at_end

    def option_names(self) -> tuple[str, ...]:
        """The options this property reads: its own, then those it borrows."""
        return (*(o.name for o in self.options), *self.reads)

    def needs_bound(self) -> bool:
        """Whether it judges against a bound the user gives: an option of its own with no
        default that selects it (latency's ``--latency-bound``, rate's ``--rate-max``)."""
        return any(o.default is None and o.selects for o in self.options)

    def safety(self) -> bool:
        """Whether it judges what the records show, on any prefix, with nothing to give:
        neither judged at the end of a trace nor against a bound."""
        return not (self.final() or self.needs_bound())


def with_scope(prop: Property, scope: str) -> Property:
    """``prop`` judged in ``scope`` whatever the options say; named ``NAME@correct`` for
    the correct-process form (the uniform form keeps its name)."""
    if scope not in SCOPES:
        raise unknown_name("scope", scope, list(SCOPES))
    if not prop.scoped:
        raise UnknownName(f"{prop.name} has no scope: it judges each process alone or the "
                          "trace as a whole")
    check, detect = prop.check, prop.detect

    def check_in(trace: Trace, options: Options) -> Result:
        res = check(trace, options.replace(scope=scope))
        res.property = name
        return res

    def detect_in(chunk: Chunk, options: Options) -> np.ndarray:
        return detect(chunk, options.replace(scope=scope))

    stream_in = None
    if prop.stream is not None:
        stream = prop.stream

        def stream_in(clean: Clean, options: Options) -> Result | None:
            res = stream(clean, options.replace(scope=scope))
            if res is not None:
                res.property = name
            return res

    base = prop.name.split("@")[0]
    name = base if scope == UNIFORM else f"{base}@{scope}"
    return replace(prop, name=name, check=check_in, detect=detect_in, stream=stream_in)


def scoped(prop: Property) -> Property:
    """``prop`` (universal over processes: every pair, every process) judged in the
    scope of its options (properties/scope.py)."""
    check, detect = prop.check, prop.detect

    def check_scoped(trace: Trace, options: Options) -> Result:
        return check(in_scope(trace, options.scope), options)

    def detect_scoped(chunk: Chunk, options: Options) -> np.ndarray:
        return rescope(chunk, detect(chunk, options), options.scope, EXACT)

    return replace(prop, check=check_scoped, detect=detect_scoped, scoped=True)


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
