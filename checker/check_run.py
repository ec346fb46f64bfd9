"""One run of the checker from its settings, as ``tomkit check`` and ``tomkit.check()``
take them; and the options of the properties that take options (``latency``,
``realtime-latency`` and ``rate``: docs/qos-checking.md), which ``tomkit scan`` and its
spark-submit job take too.

One definition for every way in, so that the command line, the scan and the Python API
accept the same settings and refuse the same bad ones, each naming the setting as its
caller spells it (``--rate-window`` on a command line, ``rate_window`` in Python).
Imports nothing heavy (no Spark, no matplotlib) until a run asks for it.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tomkit.checker.engine import CheckReport
    from tomkit.checker.profiles import Profile
    from tomkit.checker.properties import Options, Property

__all__ = ["MAX_PICTURES", "OPTION_FLAGS", "Plan", "UsageError", "add_option_arguments",
           "no_real_time", "options_from_args", "plan", "property_options", "run",
           "write_outputs"]

#: witness pictures drawn per run at most (a data set with thousands of violations would
#: otherwise write thousands of files)
MAX_PICTURES = 100

#: the options of the options-taking properties: name (the flag with dashes, the keyword
#: of tomkit.check()), type, metavar, help
OPTION_FLAGS: tuple[tuple[str, type, str, str], ...] = (
    ("latency_bound", float, "SECONDS",
     "check every send-to-delivery latency against this bound"),
    # the QoS-preserving multicast of Bar-Joseph, Keidar, Anker and Lynch
    ("realtime_bound", float, "SECONDS",
     "check every send-to-delivery time in real time (the real_time field) against this "
     "bound (realtime-latency)"),
    ("slot", float, "SECONDS", "slot length, to place packet records without x_slot (rate)"),
    ("rate_max", int, "N", "check at most N packet records per process and slot (rate)"),
    ("rate_avg", int, "N", "check at most N packet records per process in any "
     "--rate-window consecutive slots (rate)"),
    ("rate_window", int, "K", "window of --rate-avg, slots"),
    ("liveness_reading", str, "READING",
     "member-liveness: a joiner is owed the messages sent after its join by 'real-time' "
     "(003 Definition 2.1, the default) or by 'slot' (its join slot <= the send's)"),
)


class UsageError(ValueError):
    """Settings that do not fit together, or a value out of range (``tomkit check``: exit
    code 2 with the message)."""


def _name(key: str, cli: bool) -> str:
    return "--" + key.replace("_", "-") if cli else key


def add_option_arguments(ap: argparse.ArgumentParser,
                         help: Mapping[str, str] | None = None) -> None:
    """The flags of :data:`OPTION_FLAGS` (``help`` overrides a flag's help text)."""
    for name, typ, metavar, text in OPTION_FLAGS:
        ap.add_argument(_name(name, True), type=typ, metavar=metavar,
                        help=(help or {}).get(name, text))


def property_options(*, latency_bound: float | None = None,
                     realtime_bound: float | None = None, slot: float | None = None,
                     rate_max: int | None = None, rate_avg: int | None = None,
                     rate_window: int | None = None, scope: str = "uniform",
                     liveness_reading: str | None = None, cli: bool = False) -> Options:
    """The checker's :class:`~tomkit.checker.properties.Options`, after the checks every
    caller shares: an average rate needs its window; the slot, the window and the
    real-time bound are positive. UsageError names the setting (as a flag when ``cli``)."""
    from tomkit.checker.properties import Options
    from tomkit.checker.properties.member_liveness import READINGS

    if rate_avg is not None and rate_window is None:
        raise UsageError(f"{_name('rate_avg', cli)} needs {_name('rate_window', cli)} K "
                         "(slots)")
    for key, value in (("slot", slot), ("rate_window", rate_window),
                       ("realtime_bound", realtime_bound)):
        if value is not None and not value > 0:
            raise UsageError(f"{_name(key, cli)} must be positive")
    if liveness_reading is None:
        liveness_reading = READINGS[0]
    elif liveness_reading not in READINGS:
        raise UsageError(f"{_name('liveness_reading', cli)} must be one of "
                         f"{', '.join(READINGS)}, got {liveness_reading!r}")
    return Options(latency_bound=latency_bound, scope=scope, realtime_bound=realtime_bound,
                   slot=slot, rate_max=rate_max, rate_avg=rate_avg, rate_window=rate_window,
                   liveness_reading=liveness_reading)


def options_from_args(args: argparse.Namespace) -> Options:
    """:func:`property_options` of parsed command-line arguments (a flag not declared
    there counts as not given)."""
    return property_options(cli=True, **{name: getattr(args, name, None)
                                         for name, *_ in OPTION_FLAGS})


@dataclass
class Plan:
    """What to check: the properties, their options, the profile judged (None: the
    properties themselves) and every profile known (for the report's table)."""

    properties: list[Property]
    options: Options
    chosen: Profile | None
    profiles: dict[str, Profile]
    #: realtime-latency was asked for by bound or by name (no_real_time)
    realtime_asked: bool = False


def plan(options: Options, *, properties: Sequence[str] | None = None,
         liveness: bool = False, latency: bool = False, scope: str | None = None,
         guarantee: str | None = None, guarantee_file: str | os.PathLike | None = None,
         cli: bool = False) -> Plan:
    """The properties a run checks (``tomkit check``'s rules): the named ones, else the
    defaults, with liveness, latency (``latency``: asked for by a plot) and the options'
    properties; or, with a ``guarantee`` (a built-in profile's name) or a
    ``guarantee_file`` (a TOML profile, docs/profiles.md), what the profile promises and
    what every profile's table needs. KeyError for an unknown property or profile;
    :class:`~tomkit.checker.profiles.ProfileError` for a bad profile file; UsageError for
    settings that do not mix."""
    from tomkit.checker.engine import select
    from tomkit.checker.profiles import builtin, load, to_check

    profiles = builtin()
    names = [n for item in properties or [] for n in item.split(",") if n]
    chosen = None
    if guarantee is not None and guarantee_file is not None:
        raise UsageError(f"give {_name('guarantee', cli)} or {_name('guarantee_file', cli)}, "
                         "not both")
    if guarantee is not None:
        chosen = profiles.get(guarantee)
        if chosen is None:
            raise KeyError(f"unknown guarantee {guarantee!r}; known: {', '.join(profiles)}")
    elif guarantee_file is not None:
        chosen = load(guarantee_file)
        profiles = {**profiles, chosen.name: chosen}
    if chosen is not None:
        if names or scope:
            raise UsageError(f"{'--property' if cli else 'properties'} and "
                             f"{_name('scope', cli)} do not mix "
                             "with a guarantee: the profile names the properties and their "
                             "scopes")
        # the chosen profile is judged; every profile's properties are checked for the table
        names = to_check(chosen, profiles.values())
    props = select(names, options, liveness=liveness, latency=latency, scope=scope)
    asked = options.realtime_bound is not None or (
        chosen is None and any(n.split("@")[0] == "realtime-latency" for n in names))
    return Plan(props, options, chosen, profiles, asked)


def run(paths: Sequence[str | os.PathLike], p: Plan, *, keep_going: bool = False,
        merge: bool = False, progress: bool = False,
        pictures: list[tuple[str, str, str]] | None = None) -> CheckReport:
    """Check ``paths`` as ``p`` says and judge its profile; with a ``pictures`` list, each
    violated property's witness is drawn into it as (trace, property, SVG), the first
    :data:`MAX_PICTURES`. Raises TraceFormatError on bad input unless ``keep_going``."""
    from tomkit.checker.engine import check_paths
    from tomkit.checker.profiles import judge

    draw: Callable[[Any, Any], None] | None = None
    if pictures is not None:
        from tomkit.checker.pictures import witness_svg

        def draw(trace, result) -> None:
            if len(pictures) < MAX_PICTURES:
                pictures.append((trace.id, result.property, witness_svg(trace, result)))
    report = check_paths(list(paths), p.properties, p.options, keep_going=keep_going,
                         merge=merge, progress=progress, on_violation=draw)
    return judge(report, p.chosen, p.profiles.values())


def write_outputs(report: CheckReport, pictures: list[tuple[str, str, str]], *,
                  draw: str | os.PathLike | None = None,
                  html: str | os.PathLike | None = None,
                  plot_latency: str | os.PathLike | None = None) -> list[str]:
    """The pictures into ``draw`` (DIR/TRACE--PROPERTY.svg), the HTML page ``html`` and
    the latency plot ``plot_latency`` (PNG) that were asked for; what was written, one
    line each (``tomkit check`` prints them on stderr)."""
    said = []
    if draw:
        os.makedirs(draw, exist_ok=True)
        for trace_id, prop, svg in pictures:
            name = re.sub(r"[^A-Za-z0-9_.@-]", "_", f"{trace_id}--{prop}") + ".svg"
            with open(os.path.join(draw, name), "w") as f:
                f.write(svg)
        said.append(f"{len(pictures)} witness picture(s) drawn in {draw}")
    if html:
        from tomkit.checker.html_report import render

        with open(html, "w") as f:
            f.write(render(report, pictures))
        said.append(f"report written to {html}")
    if plot_latency:
        from tomkit.checker.report import plot_latency as plot

        if plot(report, str(plot_latency)):
            said.append(f"latency distribution drawn in {plot_latency}")
        else:
            said.append("no latency to draw (needs timed sends and deliveries)")
    return said


def no_real_time(report: CheckReport, p: Plan,
                 paths: Sequence[str | os.PathLike], cli: bool = False) -> str | None:
    """When realtime-latency was asked for and no trace could measure it (no
    ``real_time`` anywhere): the message saying so, a usage error of ``tomkit check``
    (exit 2); else None."""
    from tomkit.checker.properties.realtime_latency import NAME, NO_REAL_TIME
    from tomkit.checker.result import Verdict

    if not p.realtime_asked:
        return None
    counts = report.counts.get(NAME)
    if not counts or counts[Verdict.HOLDS] or counts[Verdict.VIOLATED]:
        return None
    if not all(o.results[NAME].explanation == NO_REAL_TIME
               for o in report.outcomes if NAME in o.results):
        return None
    return (f"realtime-latency: no trace in {', '.join(map(str, paths))} logs real_time on "
            f"a send and its delivery, so real-time latency cannot be checked "
            f"({_name('latency_bound', cli)} checks the local clocks, field time)")
