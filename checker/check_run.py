"""One run of the checker from its settings, as ``tomkit check`` and ``tomkit.check()``
take them; and the options of the properties, as each property declares them
(``Property.options``: ``latency``, ``realtime-latency`` and ``rate`` today;
docs/properties.md), which ``tomkit scan`` and its spark-submit job take too.

One definition for every way in, so that the command line, the scan and the Python API
accept the same settings and refuse the same bad ones, each naming the setting as its
caller spells it (``--rate-window`` on a command line, ``rate_window`` in Python).
Imports nothing heavy (no Spark, no matplotlib) until a run asks for it.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tomkit.checker.usage import UsageError, unknown_name

if TYPE_CHECKING:
    from tomkit.checker.engine import CheckReport
    from tomkit.checker.profiles import Profile
    from tomkit.checker.properties import Options, Property

__all__ = ["MAX_PICTURES", "Plan", "UsageError", "add_option_arguments",
           "no_real_time", "options_from_args", "plan", "property_options", "run",
           "write_outputs"]

#: witness pictures drawn per run at most (a data set with thousands of violations would
#: otherwise write thousands of files)
MAX_PICTURES = 100


def _name(key: str, cli: bool) -> str:
    return "--" + key.replace("_", "-") if cli else key


def add_option_arguments(ap: argparse.ArgumentParser,
                         names: Iterable[str] | None = None) -> None:
    """A flag for every option the registered properties declare (``names``: only these),
    each saying which properties read it."""
    from tomkit.checker.properties import declared_options

    g = ap.add_argument_group("property options (each property declares its own; "
                              "docs/properties.md)")
    for name, (o, readers) in declared_options().items():
        if names is None or name in names:
            g.add_argument(o.flag, type=o.type, metavar=o.metavar, default=None,
                           help=f"{o.help} [{', '.join(readers)}]")


def property_options(*, scope: str = "uniform", cli: bool = False,
                     **values: Any) -> Options:
    """The checker's :class:`~tomkit.checker.properties.Options` from the options given
    (None: not given), after the checks their declarations ask for
    (``checker/properties/base.py``'s ``Option``: ``validate``, ``needs``). UsageError
    names the setting (as a flag when ``cli``); TypeError an option no property
    declares."""
    from tomkit.checker.properties import Options, declared_options

    declared = {n: o for n, (o, _) in declared_options().items()}
    unknown = sorted(set(values) - set(declared))
    if unknown:
        raise TypeError(f"unknown option {', '.join(unknown)}; the properties take "
                        f"{', '.join(declared)}")
    given = {n: v for n, v in values.items() if v is not None}
    for name, value in given.items():
        o = declared[name]
        if not of_type(value, o.type):
            kind = f"a number of {o.unit or 'units'}" if o.type is float else \
                f"an {o.type.__name__}" if o.type is int else f"a {o.type.__name__}"
            raise TypeError(f"{_name(name, cli)} must be {kind}, got "
                            f"{type(value).__name__} {value!r}")
        for other in o.needs:
            if other not in given:
                need = declared[other]
                raise UsageError(f"{_name(name, cli)} needs {_name(other, cli)} "
                                 f"{need.metavar} ({need.unit})")
        problem = o.validate(value) if o.validate is not None else None
        if problem:
            raise UsageError(f"{_name(name, cli)} {problem}")
    return Options(scope, **given)


def of_type(value: Any, kind: type) -> bool:
    """Whether ``value`` is a ``kind`` (an int does for a float, a bool for neither)."""
    if isinstance(value, bool):
        return kind is bool
    return isinstance(value, kind) or (kind is float and isinstance(value, int))


def options_from_args(args: argparse.Namespace) -> Options:
    """:func:`property_options` of parsed command-line arguments (a flag not declared
    there counts as not given)."""
    from tomkit.checker.properties import declared_options

    return property_options(cli=True, **{name: getattr(args, name, None)
                                         for name in declared_options()})


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
    if properties and not names:
        raise UsageError(f"{'--property' if cli else 'properties'} "
                         f"{', '.join(map(repr, properties))} names no property")
    chosen = None
    if guarantee is not None and guarantee_file is not None:
        raise UsageError(f"give {_name('guarantee', cli)} or {_name('guarantee_file', cli)}, "
                         "not both")
    if guarantee is not None:
        chosen = profiles.get(guarantee)
        if chosen is None:
            raise unknown_name("guarantee", guarantee, list(profiles))
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
        pictures: list[tuple[str, str, str]] | None = None,
        stream: bool | None = None) -> CheckReport:
    """Check ``paths`` as ``p`` says and judge its profile; with a ``pictures`` list, each
    violated property's witness is drawn into it as (trace, property, SVG), the first
    :data:`MAX_PICTURES`. A directory stands for the trace files below it
    (:func:`~tomkit.traces.reader.trace_files`). Raises TraceFormatError on bad input
    unless ``keep_going``. ``stream``: True checks in one pass (checker/stream/;
    UsageError when a property needs the whole trace), None lets
    :func:`~tomkit.checker.stream.choose.long_input` decide, False never."""
    from tomkit.checker.engine import check_paths
    from tomkit.checker.profiles import judge
    from tomkit.checker.stream.choose import long_input
    from tomkit.checker.stream.driver import check_stream, not_streamed
    from tomkit.traces.reader import trace_files

    draw: Callable[[Any, Any], None] | None = None
    if pictures is not None:
        from tomkit.checker.pictures import witness_svg

        def draw(trace, result) -> None:
            if len(pictures) < MAX_PICTURES:
                pictures.append((trace.id, result.property, witness_svg(trace, result)))
    files = trace_files(paths)
    missing = not_streamed(p.properties)
    if stream and missing:
        raise UsageError(f"--stream: the single-pass checker does not decide "
                         f"{', '.join(missing)} (they need the whole trace)")
    if stream is None:
        stream = not missing and long_input(files)
    engine = check_stream if stream else check_paths
    report = engine(list(files), p.properties, p.options, keep_going=keep_going,
                    merge=merge, progress=progress, on_violation=draw)
    return judge(report, p.chosen, p.profiles.values())


#: the suffixes --plot-latency draws (matplotlib's Agg formats most people open)
PLOT_FORMATS = ("png", "svg", "pdf", "jpg", "jpeg")


def prepare_outputs(*, draw: str | os.PathLike | None = None,
                    html: str | os.PathLike | None = None,
                    plot_latency: str | os.PathLike | None = None,
                    cli: bool = False) -> None:
    """Make the folders the outputs go to before the traces are checked, so that one that
    cannot be made is a UsageError now rather than a traceback after the check."""
    folders = [(_name("draw", cli), draw, os.fspath(draw) if draw else None)]
    for key, path in (("html", html), ("plot_latency", plot_latency)):
        if path:
            folders.append((_name(key, cli), path, os.path.dirname(os.path.abspath(path))))
    for name, given, folder in folders:
        if not folder:
            continue
        if given is draw and os.path.isfile(folder):  # not "cannot make ...: File exists"
            raise UsageError(f"{name} {os.fspath(given)}: a file; {name} takes a folder")
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as e:
            raise UsageError(f"{name} {os.fspath(given)}: cannot make the folder {folder}: "
                             f"{e.strerror}") from None
    for key, path in (("html", html), ("plot_latency", plot_latency)):
        if path and os.path.isdir(path):
            raise UsageError(f"{_name(key, cli)} {os.fspath(path)}: a folder; give a file "
                             "name")
    if plot_latency:
        # matplotlib picks the format by the suffix (PNG without one), and refuses an
        # unknown one only when it draws, after the check
        suffix = os.path.splitext(os.fspath(plot_latency))[1].lstrip(".").lower()
        if suffix and suffix not in PLOT_FORMATS:
            raise UsageError(f"{_name('plot_latency', cli)} {os.fspath(plot_latency)}: "
                             f"cannot draw .{suffix}; use "
                             f"{', '.join('.' + f for f in PLOT_FORMATS)}")


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
