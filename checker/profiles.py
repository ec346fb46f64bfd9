"""Guarantee profiles: what a system promises, as a named set of properties with scopes.

A protocol engineer knows what their system promises (a replicated log, Totem's extended
virtual synchrony, uniform atomic broadcast) and wants the checker to judge exactly that,
as Elle lets one name a consistency model. A profile is a TOML file::

    name = "replicated-log"
    title = "A replicated log (Raft, Multi-Paxos): ..."
    source = "Ongaro and Ousterhout 2014, sections 5.3-5.4 ..."
    note = "optional: what to keep in mind"
    properties = ["integrity", "total-order-weak", "prefix-order"]

Each entry names a property of ``checker/properties``, with ``@correct`` for its
non-uniform form (``properties/scope.py``). The built-in profiles are the files of
``checker/profiles/``; ``tomkit check --guarantee NAME`` checks one, and
``--guarantee-file FILE`` a user's own. Every report then ends with a table of every
profile whose properties were all checked: satisfied, unknown, or violated with the
property and trace that rule it out, strongest first (more guarantees first).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tomkit.checker.properties import resolve
from tomkit.checker.result import Verdict
from tomkit.traces.settings import read_toml

__all__ = ["Profile", "ProfileError", "ProfileRow", "builtin", "evaluate", "judge", "load",
           "to_check"]

HERE = Path(__file__).resolve().parent / "profiles"
KEYS = {"name", "title", "source", "note", "properties"}


class ProfileError(ValueError):
    """A profile file that cannot be used, with the file and key at fault."""


@dataclass(frozen=True)
class Profile:
    name: str
    title: str
    source: str
    properties: tuple[str, ...]
    note: str = ""
    path: str = ""


def load(path: str | Path) -> Profile:
    """One profile file; raises ProfileError naming the file and the key at fault."""
    path = Path(path)
    doc = read_toml(path, KEYS, ProfileError)
    for key in ("name", "title", "source", "properties"):
        if key not in doc:
            raise ProfileError(f"{path}: missing key {key!r}")
    for key in ("name", "title", "source", "note"):
        if key in doc and not isinstance(doc[key], str):
            raise ProfileError(f"{path}: key {key!r} must be a string")
    props = doc["properties"]
    if not isinstance(props, list) or not props or not all(isinstance(p, str) for p in props):
        raise ProfileError(f"{path}: key 'properties' must be a non-empty list of names")
    for p in props:
        try:
            resolve(p)
        except KeyError as e:
            raise ProfileError(f"{path}: properties: {e.args[0]}") from None
    if len(set(props)) != len(props):
        raise ProfileError(f"{path}: properties: a name is listed twice")
    return Profile(doc["name"], doc["title"], doc["source"], tuple(props),
                   doc.get("note", ""), str(path))


def builtin() -> dict[str, Profile]:
    """The profiles shipped in ``checker/profiles/``, by name."""
    out = {}
    for f in sorted(HERE.glob("*.toml")):
        p = load(f)
        out[p.name] = p
    return out


@dataclass(frozen=True)
class ProfileRow:
    """One profile's verdict over a report: ``verdict`` is "satisfied", "unknown" (no
    property violated, some unknown on some trace) or "violated"; for a violated one,
    the first property that rules it out, a trace where it does and why."""

    profile: Profile
    verdict: str
    property: str = ""
    trace: str = ""
    explanation: str = ""
    violated_traces: int = 0

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"profile": self.profile.name, "title": self.profile.title,
                             "verdict": self.verdict}
        if self.verdict == "violated":
            d.update(property=self.property, trace=self.trace,
                     explanation=self.explanation, violated_traces=self.violated_traces)
        return d


def evaluate(report: Any, profiles: Iterable[Profile]) -> list[ProfileRow]:
    """The rows for every profile whose properties the report checked, strongest first
    (more properties first, then by name). ``report`` is a CheckReport."""
    checked = set(report.properties)
    rows = []
    for prof in profiles:
        if not set(prof.properties) <= checked:
            continue
        bad = [o for o in report.outcomes
               if any(o.verdicts.get(p) == Verdict.VIOLATED for p in prof.properties)]
        if bad:
            o = bad[0]
            name = next(p for p in prof.properties if o.verdicts.get(p) == Verdict.VIOLATED)
            res = o.results.get(name)
            rows.append(ProfileRow(prof, "violated", name, o.trace,
                                   res.explanation if res is not None else "", len(bad)))
            continue
        unknown = any(report.counts[p][Verdict.UNKNOWN] for p in prof.properties)
        rows.append(ProfileRow(prof, "unknown" if unknown else "satisfied"))
    rows.sort(key=lambda r: (-len(r.profile.properties), r.profile.name))
    return rows


def to_check(chosen: Profile, profiles: Iterable[Profile]) -> list[str]:
    """The property names a guarantee run checks: the chosen profile's, then every other
    profile's (for the table), each once."""
    return list(dict.fromkeys([*chosen.properties,
                               *(n for p in profiles for n in p.properties)]))


def judge(report: Any, chosen: Profile | None, profiles: Iterable[Profile]) -> Any:
    """Make ``report`` (a CheckReport) judge ``chosen`` (None: every checked property)
    and end with the table of ``profiles``; returns it."""
    profiles = list(profiles)
    if chosen is not None:
        report.judged = list(chosen.properties)
        report.guarantee = chosen.name
        if chosen not in profiles:
            profiles.append(chosen)
    # no trace read (every record rejected): no profile is satisfied by nothing
    report.profiles = evaluate(report, profiles) if report.outcomes else []
    return report
