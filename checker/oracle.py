"""The registry's properties as the oracle of a run held in memory: the fuzzers and the
experiment runners judge a simulated run's records by the same definitions ``tomkit
check`` uses (``checker/properties/``), never by a second definition of their own; what a
model promises is the guarantee profile it names (``checker/profiles/model-*.toml``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from tomkit.checker.profiles import builtin
from tomkit.checker.properties import Options, resolve
from tomkit.checker.result import Result, Verdict
from tomkit.checker.trace import Trace

__all__ = ["promised", "violations"]


def promised(profile: str) -> tuple[str, ...]:
    """The properties of the built-in profile ``profile`` (a model's ``Protocol.profile``);
    KeyError naming the known profiles."""
    profiles = builtin()
    if profile not in profiles:
        raise KeyError(f"unknown guarantee profile {profile!r}; known: {', '.join(profiles)}")
    return profiles[profile].properties


def violations(records: Sequence[Mapping], names: Iterable[str],
               options: Options = Options()) -> list[Result]:
    """The results of the properties ``names`` (``NAME@correct`` for a scope) that the run
    ``records`` (one trace) violates, in the order named."""
    names = list(names)
    if not records or not names:
        return []
    trace = Trace.from_records(records)
    out = []
    for name in names:
        res = resolve(name).check(trace, options)
        if res.verdict == Verdict.VIOLATED:
            out.append(res)
    return out
