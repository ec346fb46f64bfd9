"""What ``tomkit tlc`` makes of a TLC run besides its result, and the files it writes.

Everything goes under one output folder (``--out``, default ``tlc-out/``):

* ``<config>.tlc.log``: TLC's own output, whatever the outcome;
* ``<config>.cex.jsonl``: on a violation, the counterexample as a v1 trace
  (:mod:`~tomkit.fuzz.tlc.trace`), when a trace map applies: the user's
  (:mod:`~tomkit.fuzz.tlc.tracemap`), or tomkit's convention when the spec
  has a ``delivered`` variable. Otherwise no trace is written and the
  report says why; the violation is reported all the same.

A config's ``ALIAS`` that the jar cannot read is applied here: its value at
each state of the counterexample, evaluated by a replay
(:mod:`~tomkit.fuzz.tlc.replay`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tomkit.fuzz.tlc.replay import ReplayError, evaluate_on_behaviour
from tomkit.fuzz.tlc.runner import TlcError, TlcResult, TlcSetupError
from tomkit.fuzz.tlc.trace import (
    Confirmation,
    TraceConversionError,
    check_counterexample,
    mapped_records,
    trace_id,
    write_records_file,
)
from tomkit.fuzz.tlc.tracemap import FIELDS, TOMKIT_MAP, TraceMap
from tomkit.fuzz.tlc.values import Record, format_value

__all__ = ["RunOutputs", "counterexample_outputs", "default_paths", "write_log"]


@dataclass
class RunOutputs:
    """The files written for one run and what became of the counterexample."""

    log_path: str | None = None
    trace_path: str | None = None
    trace_records: int = 0
    trace_source: str | None = None  # which trace map gave the trace
    trace_note: str | None = None  # why there is no trace
    confirmation: Confirmation | None = None
    alias_values: list[Any] | None = None  # the ALIAS at each state
    alias_note: str | None = None  # why the ALIAS could not be shown


def default_paths(out_dir: str | os.PathLike, result_config: str) -> tuple[Path, Path]:
    """The log and trace paths of a run under ``out_dir``, named after the config."""
    stem = Path(result_config).stem
    return Path(out_dir) / f"{stem}.tlc.log", Path(out_dir) / f"{stem}.cex.jsonl"


def write_log(result: TlcResult, path: str | os.PathLike) -> str:
    """Write TLC's output of ``result`` to ``path`` (folders created); returns the path."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text("".join(result.output))
    return str(path)


def _evaluate(result: TlcResult, exprs: dict[str, str], what: str,
              timeout: float | None) -> list[dict[str, Any]]:
    assert result.spec is not None and result.config is not None
    return evaluate_on_behaviour(result.spec, Path(result.config).read_text(), result.behaviour,
                                 exprs, library=result.library, what=what, timeout=timeout)


def _mapped_values(result: TlcResult, tmap: TraceMap,
                   timeout: float | None) -> list[dict[str, Any]]:
    variables = set(result.behaviour[0].values)
    if tmap.variables_only(variables):
        return [{k: st.values[e] for k, e in tmap.exprs.items()} for st in result.behaviour]
    if tmap.operator is not None:
        out = []
        for row in _evaluate(result, {"map": tmap.operator}, "trace map", timeout):
            rec = row["map"]
            if not isinstance(rec, Record) or "deliveries" not in rec:
                raise TraceConversionError(
                    f"{tmap.source} is {format_value(rec)[:80]}, not a record with the field "
                    "deliveries (and optionally sends, views)")
            unknown = set(rec) - set(FIELDS)
            if unknown:
                raise TraceConversionError(f"{tmap.source} has unknown fields "
                                           f"{', '.join(sorted(unknown))} (known: "
                                           f"{', '.join(FIELDS)})")
            out.append(dict(rec))
        return out
    return _evaluate(result, tmap.exprs, "trace map", timeout)


def counterexample_outputs(result: TlcResult, trace_path: str | os.PathLike,
                           trace_map: TraceMap | None = None, check: bool = True,
                           timeout: float | None = 120) -> RunOutputs:
    """The ALIAS values and the v1 trace of a violation (written to ``trace_path``, then
    checked by ``tomkit check`` unless ``check`` is false). Never raises for what a spec
    or a map lacks: the reason goes in ``trace_note`` / ``alias_note``."""
    out = RunOutputs()
    if result.status != "violation" or not result.behaviour:
        return out
    if result.alias:
        try:
            rows = _evaluate(result, {"alias": result.alias}, "ALIAS", timeout)
            out.alias_values = [r["alias"] for r in rows]
        except (ReplayError, TlcSetupError, TlcError) as e:
            out.alias_note = f"ALIAS {result.alias} not shown: {e}"
    tmap = trace_map
    variables = set(result.behaviour[0].values)
    if tmap is None:
        if "delivered" not in variables:
            out.trace_note = (
                "no v1 trace: the spec has no variable 'delivered' (tomkit's convention); "
                "for a broadcast spec, say which expressions give the delivery sequences "
                "with --trace-map (docs/tlc.md)")
            return out
        tmap = TraceMap({k: v for k, v in TOMKIT_MAP.exprs.items() if v in variables},
                        TOMKIT_MAP.source)
    try:
        values = _mapped_values(result, tmap, timeout)
        records = mapped_records(result.behaviour, values, trace_id(result))
        Path(trace_path).parent.mkdir(parents=True, exist_ok=True)
        out.trace_records = write_records_file(records, trace_path)
    except (ReplayError, TraceConversionError, TlcSetupError, TlcError, OSError) as e:
        out.trace_note = f"no v1 trace: from {tmap.source}: {e}"
        return out
    out.trace_path, out.trace_source = str(trace_path), tmap.source
    if check:
        out.confirmation = check_counterexample(trace_path, result.violated, tmap.properties)
    return out
