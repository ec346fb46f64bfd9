"""tomkit: formal models and conformance checking for totally ordered multicast.

The Python API is what the ``tomkit`` command runs, and returns the result objects the
command prints; each has ``to_dict()`` for plain data:

* :func:`check` decides properties of delivery traces (``tomkit check``): a
  :class:`~tomkit.checker.engine.CheckReport`;
* :func:`simulate` runs a protocol model in the network simulator (``tomkit simulate``):
  a :class:`~tomkit.model.sim.SimResult` with the trace's records;
* :func:`conform` replays a recorded trace through a protocol's reference model
  (``tomkit conform``): a :class:`~tomkit.model.conform.ProcessReport` per process;
* :func:`prove` proves a ToTo-family delivery rule with Z3 for one (n, delta), or
  refutes it (``tomkit prove``): an :class:`~tomkit.fuzz.prove.rules.Outcome`.

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
>>> all(not r.differences for r in tomkit.conform(run.records, "tomp").values())
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
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tomkit.checker.engine import CheckReport
    from tomkit.fuzz.prove.rules import Outcome
    from tomkit.model.conform import ProcessReport
    from tomkit.model.sim import SimResult

__version__ = "0.1.0"
__all__ = ["__version__", "check", "conform", "prove", "simulate", "write"]


def check(*paths: str | os.PathLike, properties: Sequence[str] | None = None,
          liveness: bool = False, latency_bound: float | None = None,
          keep_going: bool = False, merge: bool = False,
          progress: bool = False, scope: str | None = None,
          guarantee: str | None = None) -> CheckReport:
    """Check the traces in ``paths`` (JSON Lines, plain or gzip, or Parquet) as ``tomkit
    check`` does: the default safety properties, or the named ``properties``
    (``NAME@correct`` for the non-uniform form), plus liveness and a latency bound when
    asked; ``scope`` ("uniform" or "correct") for every order and agreement property;
    or what the built-in profile ``guarantee`` promises (the report then carries the
    table of every profile, ``report.profiles``). Raises
    :class:`~tomkit.traces.errors.TraceFormatError` on bad input (unless
    ``keep_going``), KeyError for an unknown property or profile."""
    from tomkit.checker.engine import check_paths, select
    from tomkit.checker.profiles import builtin, judge, to_check
    from tomkit.checker.properties import Options

    options = Options(latency_bound=latency_bound)
    profiles = builtin()
    chosen = None
    if guarantee is not None:
        if guarantee not in profiles:
            raise KeyError(f"unknown guarantee {guarantee!r}; known: {', '.join(profiles)}")
        chosen = profiles[guarantee]
        properties = to_check(chosen, profiles.values())
    props = select(properties, options, liveness=liveness,
                   latency=latency_bound is not None, scope=scope)
    report = check_paths(list(paths), props, options, keep_going=keep_going, merge=merge,
                         progress=progress)
    return judge(report, chosen, profiles.values())


def simulate(protocol: str = "toto", n: int = 8, **settings: Any) -> SimResult:
    """Simulate ``protocol`` with ``n`` processes. ``settings`` are the fields of
    :class:`~tomkit.model.sim.SimConfig` (messages, rate, source, delay, crashes, seed,
    ...) and the protocol's own options (``delta`` and ``rule`` of the ToTo family,
    ``variant`` of ABCAST and TOMP: ``tomkit simulate --help`` lists them)."""
    from dataclasses import fields

    from tomkit.model.sim import SimConfig
    from tomkit.model.sim import simulate as run

    known = {f.name for f in fields(SimConfig)}
    config = {k: v for k, v in settings.items() if k in known}
    options = dict(config.pop("options", {}))
    options.update({k: v for k, v in settings.items() if k not in known})
    return run(SimConfig(protocol=protocol, n=n, options=options, **config))


def conform(records: Iterable[Mapping] | str | os.PathLike, protocol: str,
            **options: Any) -> dict[str, ProcessReport]:
    """Replay one trace (its records, or a file holding one trace) through the reference
    model of ``protocol`` with its ``options``; a report per process."""
    from tomkit.model.conform import replay

    if isinstance(records, (str, os.PathLike)):
        from tomkit.traces.reader import read_records

        records = read_records(records)
    return replay(records, protocol, options)


def prove(rule: str, n: int, delta: int | None = None, **settings: Any) -> Outcome:
    """Prove a ToTo-family delivery rule (a name, a mutant or ``module:function``) for
    ``n`` processors and ``delta``, as ``tomkit prove`` does; ``settings`` are those of
    :func:`~tomkit.fuzz.prove.rules.prove_rule` (k, props, crashes, method, timeout)."""
    from tomkit.fuzz.prove.rules import prove_rule
    from tomkit.model.mutants import resolve_rule

    return prove_rule(rule, resolve_rule(rule), n, delta, **settings)


def write(path: str | os.PathLike, records: Iterable[Mapping]) -> None:
    """Write trace records to ``path`` (.jsonl, .jsonl.gz or .parquet, by its suffix)."""
    from tomkit.traces.writer import write_records

    write_records(path, list(records), grouped=True)
