"""tomkit: formal models and conformance checking for totally ordered multicast.

The Python API is what the ``tomkit`` command runs, and returns the result objects the
command prints; each has ``to_dict()`` for plain data:

* :func:`check` decides properties of delivery traces (``tomkit check``): a
  :class:`~tomkit.checker.engine.CheckReport`;
* :func:`simulate` runs a protocol model in the network simulator (``tomkit simulate``):
  a :class:`~tomkit.model.sim.SimResult` with the trace's records;
* :func:`conform` replays recorded traces through a protocol's reference model
  (``tomkit conform``): a :class:`~tomkit.model.conform.ConformReport`, per trace a
  :class:`~tomkit.model.conform.ProcessReport` per process;
* :func:`prove` proves a ToTo-family delivery rule with Z3 for one (n, delta), or
  refutes it (``tomkit prove``): an :class:`~tomkit.fuzz.prove.delivery.prove.Outcome`.

>>> import os, tempfile, tomkit
>>> run = tomkit.simulate("tomp", n=3, messages=30, seed=2)
>>> run.stats["deliveries"], run.stats["undelivered"]
(90, 0)
>>> [r["kind"] for r in run.records[:2]]
['send', 'recv']
>>> folder = tempfile.mkdtemp()
>>> path = os.path.join(folder, "tomp.jsonl")
>>> tomkit.write(path, run.records)
>>> report = tomkit.check(path, liveness=True)
>>> report.to_dict()["verdict"], report.exit_code()
('holds', 0)
>>> tomkit.conform(run.records, "tomp").conforms
True
>>> bad = tomkit.simulate("tomp", n=4, messages=200, rate=500, seed=1, variant="raise-all")
>>> tomkit.write(os.path.join(folder, "bad.jsonl"), bad.records)
>>> tomkit.check(os.path.join(folder, "bad.jsonl")).to_dict()["verdict"]
'violated'
>>> report = tomkit.check(path, guarantee="model-abcast-tomp")
>>> verdicts = {r.profile.name: r.verdict for r in report.profiles}
>>> verdicts["model-abcast-tomp"], verdicts["isis-virtual-synchrony"]
('satisfied', 'unknown')
>>> tomkit.prove("toto", n=3, delta=2).status
'proved'

Everything is imported when first used, so ``import tomkit`` stays quick.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tomkit.checker.engine import CheckReport
    from tomkit.fuzz.prove.delivery.prove import Outcome
    from tomkit.model.conform import ConformReport
    from tomkit.model.sim import SimResult

__all__ = ["UnknownName", "UsageError", "__version__", "check", "conform", "prove",
           "simulate", "write"]


def __getattr__(name: str) -> Any:
    """``__version__``, from the installed distribution, so that pyproject.toml is its one
    source; read when asked (importlib.metadata costs a short command's start-up a few
    hundredths of a second)."""
    if name == "__version__":
        from importlib.metadata import version
        return version("tomkit")
    if name in ("UsageError", "UnknownName"):  # check()'s errors for bad settings
        from tomkit.checker import usage
        return getattr(usage, name)
    raise AttributeError(f"module 'tomkit' has no attribute {name!r}")


def check(*paths: str | os.PathLike, properties: Sequence[str] | None = None,
          liveness: bool = False,
          keep_going: bool = False, merge: bool = False,
          progress: bool = False, scope: str | None = None,
          guarantee: str | None = None, guarantee_file: str | os.PathLike | None = None,
          draw: str | os.PathLike | None = None, html: str | os.PathLike | None = None,
          plot_latency: str | os.PathLike | None = None,
          stream: bool | None = None, **options: Any) -> CheckReport:
    """Check the traces in ``paths`` (JSON Lines, plain or gzip, or Parquet) as ``tomkit
    check`` does, every option of the command under its name with underscores:

    * what: the default safety properties, or the named ``properties`` (``NAME@correct``
      for the non-uniform form), plus agreement, validity and liveness (``liveness``);
      ``scope`` ("uniform" or "correct") for every order and agreement property; or what
      a profile promises, built-in (``guarantee``, a name: ``tomkit check
      --list-guarantees``, or :func:`tomkit.checker.profiles.builtin`) or your own
      (``guarantee_file``, a TOML file: docs/profiles.md); the report then carries the
      table of every profile, ``report.profiles``;
    * ``options``: every option a property declares, by its name (docs/properties.md
      lists them; a property is added when one of its options is given): today
      ``latency_bound`` (``latency``, on the local clocks ``time``); ``realtime_bound``
      (``realtime-latency``, on ``real_time``: 003's bound); ``rate_max``, ``rate_avg``
      with ``rate_window`` (slots) and ``slot`` (seconds) for ``rate`` (003's
      reservation, on ``packet`` records): docs/qos-checking.md. A name no property
      declares is a TypeError;
    * outputs: ``draw`` (a folder: each violated property's witness as an SVG),
      ``html`` (the report as one page), ``plot_latency`` (the latency distribution as
      a PNG; checks latency too). ``report.to_dict()`` is ``--format json``;
      :func:`tomkit.checker.report.to_text` the text report;
    * input: ``keep_going`` (count bad records and check the rest), ``merge`` (all
      files one input), ``progress`` (a progress bar);
    * engine: ``stream`` True checks in one pass, in memory bounded by the processes'
      lag (docs/stream.md; a property that needs the whole trace is a ValueError), False
      never, None (the default) when the input is one long Parquet trace.

    ``paths`` are files or folders (a folder stands for the trace files below it, as for
    ``tomkit scan``), given one by one or as one list.

    Raises :class:`~tomkit.traces.errors.TraceFormatError` on bad input (unless
    ``keep_going``); ``tomkit.UsageError`` (a ValueError) for settings that do not fit,
    among them ``tomkit.UnknownName`` for an unknown property, scope or guarantee profile
    (naming the known ones and the closest spelling, as the command does; also a
    KeyError, as before), no path, ``rate_avg`` without ``rate_window``, a slot,
    window or bound that is not positive, a negative rate, ``properties`` with a
    ``guarantee``, a bad profile file, an output folder that cannot be made, a
    ``realtime_bound`` on traces that log no ``real_time``: the command's exit code 2;
    TypeError for a setting of the wrong type.

    >>> import os, tempfile, tomkit
    >>> path = os.path.join(tempfile.mkdtemp(), "qos.jsonl")
    >>> tomkit.write(path, [
    ...     {"trace": "t", "process": "p", "kind": "send", "msg": "a", "real_time": 0.0},
    ...     {"trace": "t", "process": "p", "kind": "deliver", "msg": "a", "real_time": 0.1},
    ...     {"trace": "t", "process": "q", "kind": "deliver", "msg": "a", "real_time": 0.2},
    ...     *[{"trace": "t", "process": "p", "kind": "packet", "x_slot": 0}] * 3])
    >>> report = tomkit.check(path, properties=["member-liveness"], realtime_bound=0.15,
    ...                       rate_max=2, rate_avg=4, rate_window=2)
    >>> report.to_dict()["traces"][0]["verdicts"]
    {'member-liveness': 'holds', 'realtime-latency': 'violated', 'rate': 'violated'}
    >>> report.outcomes[0].results["rate"].explanation
    'p sends 3 network messages in slot 0, over its reservation of 2 per slot.'
    >>> tomkit.check(path, rate_avg=4)
    Traceback (most recent call last):
    ...
    tomkit.checker.usage.UsageError: rate_avg needs rate_window K (slots)
    """
    from tomkit.checker.check_run import (
        UsageError,
        no_real_time,
        plan,
        prepare_outputs,
        property_options,
        write_outputs,
    )
    from tomkit.checker.check_run import run as run_check

    paths = _paths(paths)
    # a truthy string ("no") would have switched a flag on
    for key, value in (("liveness", liveness), ("keep_going", keep_going), ("merge", merge),
                       ("progress", progress)):
        _typed(key, value, bool)
    if stream is not None:
        _typed("stream", stream, bool)
    for key, value in (("scope", scope), ("guarantee", guarantee)):
        if value is not None:  # (an int failed inside difflib: "'int' object is not
            _typed(key, value, str)  # iterable")
    for key, value in (("guarantee_file", guarantee_file), ("draw", draw), ("html", html),
                       ("plot_latency", plot_latency)):
        if value is not None and not isinstance(value, (str, os.PathLike)):
            raise TypeError(f"{key} must be a file or folder name (str or os.PathLike), "
                            f"got {type(value).__name__} {value!r}")
        if value == "":  # nothing was drawn or written, and nothing said
            raise ValueError(f"{key} is an empty name; give a "
                             f"{'folder' if key == 'draw' else 'file'}, or None")
    if isinstance(properties, str):  # one name, or names separated by commas, as -p takes
        properties = [properties]
    for name in properties or []:
        if not isinstance(name, str):
            raise TypeError(f"properties must be names (str), got {type(name).__name__} "
                            f"{name!r}")
    todo = plan(property_options(**options), properties=properties, liveness=liveness,
                latency=plot_latency is not None, scope=scope, guarantee=guarantee,
                guarantee_file=guarantee_file)
    prepare_outputs(draw=draw, html=html, plot_latency=plot_latency)
    pictures: list[tuple[str, str, str]] = []
    with _hinted():
        report = run_check(paths, todo, keep_going=keep_going, merge=merge,
                           progress=progress, pictures=pictures if draw or html else None,
                           stream=stream)
    write_outputs(report, pictures, draw=draw, html=html, plot_latency=plot_latency)
    problem = no_real_time(report, todo, paths)
    if problem is not None:
        raise UsageError(problem)
    return report


@contextmanager
def _hinted() -> Iterator[None]:
    """A TraceFormatError raised in the block carries, as a note, what its file seems to
    be and what to do (a JSON array, CSV, JSON Lines named .parquet), as the command
    says it (tomkit/cli/sniff.py)."""
    from tomkit.cli.sniff import hint
    from tomkit.traces.errors import TraceFormatError
    from tomkit.traces.interrupt import add_note

    try:
        yield
    except TraceFormatError as e:
        more = hint(e)
        if more:
            add_note(e, more.removeprefix("; "))
        raise


def _typed(name: str, value: Any, kind: type) -> None:
    """TypeError unless ``value`` is a ``kind`` (an int does for a float, a bool for
    neither)."""
    ok = isinstance(value, kind) or (kind is float and isinstance(value, int))
    if isinstance(value, bool) and kind is not bool:
        ok = False
    if not ok:
        hint = (" (e.g. Delay('gamma', 0.001), from tomkit.model.net.links)"
                if kind.__name__ == "Delay" else "")
        raise TypeError(f"{name} must be {'a number' if kind is float else kind.__name__}"
                        f"{hint}, got {type(value).__name__} {value!r}")


def _paths(given: Sequence[Any]) -> list[str | os.PathLike]:
    """check()'s paths: file or folder names, given one by one or as one list."""
    if len(given) == 1 and isinstance(given[0], (list, tuple)):
        given = tuple(given[0])
    if not given:
        raise ValueError("give at least one trace file or folder")
    for p in given:
        if not isinstance(p, (str, os.PathLike)):
            raise TypeError(f"paths must be file or folder names (str or os.PathLike), got "
                            f"{type(p).__name__} {p!r}")
    return list(given)


def simulate(protocol: str = "toto", n: int = 8, **settings: Any) -> SimResult:
    """Simulate ``protocol`` with ``n`` processes. ``settings`` are the fields of
    :class:`~tomkit.model.sim.SimConfig` (messages, rate, source, delay, seed, ...), the
    membership schedule (``crashes``, ``recovers``, ``joins``, ``leaves``: (process,
    time) pairs or the text ``"P@T,P@T"``; ``renegotiations``: (process, time, (avg,
    max)) or ``"P@T=AVG/MAX"``, 003's RN(r); ``partitions``: (time, groups); ``heals``:
    times; docs/membership.md) and the protocol's own options (``delta`` and ``rule`` of
    the ToTo family, ``variant`` of ABCAST and TOMP: ``tomkit simulate --help`` lists
    them). A protocol refuses an event it cannot honour (ValueError, one line), as
    do an unknown protocol (with the closest spelling), ``messages`` below 1 and a
    negative ``seed``."""
    from dataclasses import fields

    from tomkit.cli.parser import closest
    from tomkit.cli.simulate import beyond_memory
    from tomkit.model.net.links import Delay
    from tomkit.model.protocols import protocol as get_protocol
    from tomkit.model.sim import SimConfig
    from tomkit.model.sim import simulate as run

    known = {f.name for f in fields(SimConfig)}
    config = {k: v for k, v in settings.items() if k in known}
    _typed("protocol", protocol, str)
    _typed("n", n, int)
    for key, kind in (("messages", int), ("seed", int), ("rate", float), ("jitter", float),
                      ("detection_delay", float), ("source", str), ("trace_id", str),
                      ("delay", Delay)):
        if key in config:
            _typed(key, config[key], kind)
    # as tomkit simulate says it: numpy's own words name no setting, and a run without
    # messages has no trace (its statistics were nan)
    if config.get("trace_id") == "":  # every record would be refused by the writers
        raise ValueError("trace_id must not be empty")
    if config.get("seed", 0) < 0:
        raise ValueError(f"seed must be >= 0, got {config['seed']}")
    if config.get("messages", 1) < 1:
        raise ValueError(f"messages must be at least 1, got {config['messages']}: a run "
                         "without messages has no trace")
    crash_list = config.get("crashes", ())
    for item in () if isinstance(crash_list, str) else crash_list:  # "P@T,P@T": parsed below
        if not (isinstance(item, (tuple, list)) and len(item) == 2):
            raise TypeError(f"crashes must be (process, time) pairs, such as "
                            f"[('p1', 0.5)], got {item!r}")
    options = dict(config.pop("options", {}))
    options.update({k: v for k, v in settings.items() if k not in known})
    takes = {o.name for o in get_protocol(protocol).options}
    for key in options:  # neither a setting of the run nor an option of the protocol
        if key not in takes:
            raise TypeError(f"simulate() takes no setting {key!r} for {protocol} (settings: "
                            f"{', '.join(sorted(known - {'protocol', 'n', 'options'}))}; "
                            f"{protocol}'s options: {', '.join(sorted(takes)) or 'none'})"
                            f"{closest(key, known | takes)}")
    crashes = any(config.get(k) for k in ("crashes", "leaves", "partitions"))
    too_big = beyond_memory(n, config.get("messages", SimConfig.messages), crashes=crashes,
                            given=f"n = {n}, messages = "
                                  f"{config.get('messages', SimConfig.messages)}")
    if too_big:
        raise ValueError(too_big.replace("simulate fewer (tomkit generate", "simulate "
                                         "fewer (tomkit.model.dataset.generate"))
    return run(SimConfig(protocol=protocol, n=n, options=options, **config))


def conform(records: Iterable[Mapping] | str | os.PathLike, protocol: str,
            **options: Any) -> ConformReport:
    """Replay the traces in ``records`` (records, or a trace file) through the reference
    model of ``protocol`` with its ``options``, as ``tomkit conform`` does: a report per
    trace and process, with ``to_dict()`` (``--format json``) and ``exit_code()``.

    Raises :class:`~tomkit.traces.errors.TraceFormatError` on a bad file or record
    (naming its row), :class:`~tomkit.model.process.ReplayError` on a trace the model
    cannot replay, ValueError for no records, an unknown protocol or an option it does
    not take, TypeError for records that are not records (exit code 2)."""
    from tomkit.model.conform import conform_traces
    from tomkit.model.protocols import protocol as get_protocol
    from tomkit.traces.errors import Location, TraceFormatError
    from tomkit.traces.validate import record_problem

    _typed("protocol", protocol, str)  # (an int was "unknown protocol 5")
    get_protocol(protocol)  # ValueError naming the known ones, even with no records
    if isinstance(records, (str, os.PathLike)):
        from tomkit.traces.reader import read_records

        with _hinted():
            records = read_records(records)
    elif isinstance(records, Mapping) or not isinstance(records, Iterable):
        raise TypeError(f"records must be trace records (dicts) or a file name, got "
                        f"{type(records).__name__}"
                        + (": one record? put it in a list" if isinstance(records, Mapping)
                           else ""))
    else:
        records = list(records)
        for i, r in enumerate(records):  # as a file's records are checked on reading
            problem = record_problem({k: v for k, v in r.items() if v is not None}
                                     if isinstance(r, Mapping) else r)
            if problem is not None:
                raise TraceFormatError(Location("records", row=i), problem[1], problem[0])
    if not records:
        raise ValueError("no records to replay")
    return conform_traces(records, protocol, options)


def prove(rule: str, n: int, delta: int | None = None, *, no_size_limit: bool = False,
          **settings: Any) -> Outcome:
    """Prove a ToTo-family delivery rule (a name, a mutant or ``module:function``) for
    ``n`` processors and ``delta``, as ``tomkit prove`` does; ``settings`` are those of
    :func:`~tomkit.fuzz.prove.delivery.prove.prove_rule` (k, props, crashes, method,
    timeout). ValueError for an unknown rule, n < 2, an n larger than the prover was
    measured to finish (``no_size_limit=True`` runs it anyway, as ``tomkit prove
    --no-size-limit``), or a delta the rule does not accept (or none given to a rule that
    needs one); TypeError for a setting of the wrong type."""
    import inspect
    from math import inf

    from tomkit.fuzz.prove.delivery.prove import allowed_deltas, prove_rule
    from tomkit.fuzz.prove.provers import rule_prover
    from tomkit.model.toto.mutants import resolve_rule

    _typed("rule", rule, str)
    _typed("n", n, int)
    if delta is not None:
        _typed("delta", delta, int)
    takes = [p for p in inspect.signature(prove_rule).parameters
             if p not in ("name", "rule", "n", "delta")]
    unknown = sorted(set(settings) - set(takes))
    if unknown:
        raise TypeError(f"prove() takes no setting {', '.join(unknown)} (it takes "
                        f"{', '.join(takes)})")
    _typed("no_size_limit", no_size_limit, bool)
    if n < 2:
        raise ValueError(f"n must be at least 2 processors, got {n}")
    too_large = None if no_size_limit else \
        rule_prover().too_large(n, "n =", "no_size_limit=True", "timeout=SECONDS")
    if too_large:
        raise ValueError(too_large)
    _check_prove_settings(settings)
    timeout = settings.get("timeout")
    if timeout is not None and not (isinstance(timeout, (int, float)) and 0 < timeout < inf):
        raise ValueError(f"timeout must be a positive, finite number of seconds, got "
                         f"{timeout!r} (None: no bound)")
    fn = resolve_rule(rule)
    deltas = allowed_deltas(fn, n)
    if delta is None and None not in deltas:
        raise ValueError(f"{rule} needs a delta: for n = {n} one of "
                         f"{', '.join(map(str, deltas)) or 'none'}")
    if delta is not None and delta not in deltas and deltas != [None]:
        raise ValueError(f"{rule} does not accept delta = {delta} with n = {n} (it accepts "
                         f"{', '.join(map(str, deltas)) or 'none'})")
    return prove_rule(rule, fn, n, delta, **settings)


def _check_prove_settings(settings: Mapping[str, Any]) -> None:
    """prove()'s settings of the wrong type or outside their choices (an unknown method
    ran the enumeration under the name given)."""
    from tomkit.cli.parser import closest
    from tomkit.fuzz.prove.delivery import QUERIES
    from tomkit.fuzz.prove.delivery.solve import ENCODINGS, SOLVERS

    for key in ("crashes", "minimal", "rank_symmetry"):
        if key in settings:
            _typed(key, settings[key], bool)
    if "k" in settings:
        _typed("k", settings["k"], int)
        if settings["k"] < 1:
            raise ValueError(f"k must be at least 1 message per processor, got "
                             f"{settings['k']}")
    choices = {"method": ("auto", "z3", "enumeration"), "encoding": ENCODINGS,
               "solver": SOLVERS}
    props = settings.get("props")
    if isinstance(props, str):
        raise TypeError(f"props must be a list of property names, got str {props!r}: put "
                        "it in a list")
    for key, values in [*((k, [settings[k]]) for k in choices if k in settings),
                        *([("props", list(props))] if props is not None else [])]:
        known = QUERIES if key == "props" else choices[key]
        for v in values:
            if not isinstance(v, str):
                raise TypeError(f"{key} must be {'names' if key == 'props' else 'a name'} "
                                f"(str), got {type(v).__name__} {v!r}")
            if v not in known:
                raise ValueError(f"unknown {'property' if key == 'props' else key} {v!r}; "
                                 f"known: {', '.join(known)}"
                                 f"{closest(v, known)}")


def write(path: str | os.PathLike, records: Iterable[Mapping]) -> None:
    """Write trace records to ``path`` (.jsonl, .jsonl.gz or .parquet, by its suffix).
    TraceFormatError names the first bad record by row and field; ValueError for no
    records or a suffix that names no format; TypeError when ``records`` is not an
    iterable of dicts (one dict, say)."""
    from tomkit.traces.writer import write_records

    if not isinstance(path, (str, os.PathLike)):  # (Python's "expected str, bytes or
        # os.PathLike object, not int", naming no argument)
        raise TypeError(f"path must be a file name (str or os.PathLike), got "
                        f"{type(path).__name__} {path!r}")
    if isinstance(records, (Mapping, str, bytes)) or not isinstance(records, Iterable):
        raise TypeError(f"records must be an iterable of records (dicts), got "
                        f"{type(records).__name__}"
                        + (": one record? put it in a list" if isinstance(records, Mapping)
                           else ""))
    if os.fspath(path) == "":  # (said ": cannot tell the format", or ": no records")
        raise ValueError("path is an empty name; give a file name (.jsonl, .jsonl.gz or "
                         ".parquet)")
    if os.path.isdir(path):  # (Python's IsADirectoryError, after the records were read)
        raise ValueError(f"{os.fspath(path)}: a folder; give a file name")
    records = list(records)
    if not records:
        raise ValueError(f"{os.fspath(path)}: no records to write (a trace file holds at "
                         "least one; the readers refuse an empty one)")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):  # as the commands make theirs
        try:
            os.makedirs(folder)
        except OSError as e:
            raise ValueError(f"{os.fspath(path)}: cannot make the folder {folder}: "
                             f"{e.strerror}") from None
    write_records(path, records, grouped=True)
