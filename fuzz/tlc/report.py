"""What ``tomkit tlc`` prints of a TLC run: the counts, the violated property, the
behaviour (states with the variables each step changed marked, as TLC's Toolbox
highlights them), the counterexample trace and the trace checker's word on it."""

from __future__ import annotations

from typing import Any

from tomkit.fuzz.tlc.outputs import RunOutputs
from tomkit.fuzz.tlc.runner import TlcResult, TlcState
from tomkit.fuzz.tlc.values import Record, format_value

__all__ = ["behaviour_doc", "behaviour_lines", "render"]


def _shown(st: TlcState, alias: Any | None) -> tuple[dict[str, Any], dict[str, str]]:
    """What a state shows: its variables (values, TLC's text), or its alias's fields."""
    if alias is None:
        return st.values, st.texts or {k: format_value(v) for k, v in st.values.items()}
    fields = dict(alias) if isinstance(alias, Record) else {"alias": alias}
    return fields, {k: format_value(v) for k, v in fields.items()}


def behaviour_doc(result: TlcResult, alias_values: list[Any] | None = None) -> list[dict]:
    """The behaviour as data: per state its number, action, location, the values shown
    (TLA+ text) and the names the step changed."""
    out, prev = [], None
    for i, st in enumerate(result.behaviour):
        values, texts = _shown(st, alias_values[i] if alias_values else None)
        changed = [] if prev is None else [k for k in values if prev.get(k) != values[k]]
        out.append({"state": st.index, "action": st.action, "location": st.location,
                    "values": texts, "changed": changed})
        prev = values
    return out


def behaviour_lines(result: TlcResult, alias_values: list[Any] | None = None,
                    diff: bool = False) -> list[str]:
    """TLC's error-trace layout, with ``*`` before each value the step changed; ``diff``
    shows only those after the first state (as TLC's -difftrace)."""
    lines = []
    for doc in behaviour_doc(result, alias_values):
        where = f" {doc['location']}" if doc["location"] else ""
        lines.append(f"{doc['state']}: <{doc['action']}{where}>")
        for name, text in doc["values"].items():
            mark = "*" if name in doc["changed"] else " "
            if diff and doc["state"] != result.behaviour[0].index and mark == " ":
                continue
            head = f" {mark} /\\ {name} = "
            body = text.splitlines() or [""]
            lines.append(head + body[0])
            lines.extend(" " * len(head) + b.strip() for b in body[1:])
    return lines


def render(result: TlcResult, outputs: RunOutputs | None = None, diff: bool = False) -> str:
    """The text report of a run."""
    outputs = outputs or RunOutputs()
    lines = [f"tomkit tlc: {result.spec} with {result.config} (TLC {result.version})"]
    lines.extend(f"config: {n}" for n in result.notes)
    lines.append(result.summary())
    if result.status == "violation" and result.behaviour:
        shown = "the ALIAS " + str(result.alias) if outputs.alias_values else "the variables"
        lines.append(f"behaviour ({len(result.behaviour)} states, {shown}; * marks what the "
                     "step changed):")
        lines.extend("  " + s for s in behaviour_lines(result, outputs.alias_values, diff))
        if result.loops_to is not None:
            lines.append(f"  ... then loops back to state {result.loops_to} forever")
    if outputs.alias_note:
        lines.append(outputs.alias_note)
    if outputs.trace_path is not None:
        lines.append(f"v1 trace ({outputs.trace_records} events, from {outputs.trace_source}) "
                     f"written to {outputs.trace_path}")
    elif outputs.trace_note:
        lines.append(outputs.trace_note)
    conf = outputs.confirmation
    if conf is not None:
        if conf.confirmed:
            lines.append(f"tomkit check on it: {conf.property} violated: {conf.explanation}")
        elif conf.property is None:
            lines.append(f"tomkit check on it: no checker property is known to state "
                         f"{result.violated}; violated: {', '.join(conf.violated) or 'none'}")
        else:
            lines.append(f"tomkit check on it: {conf.property} NOT violated "
                         f"(violated: {', '.join(conf.violated) or 'none'})")
            if result.violated == "StrongTotalOrder":
                lines.append("  (the prefix form fails as soon as two delivery sequences "
                             "diverge, before a finite trace shows an inversion or a gap; "
                             "check GapFreeTotalOrder for a trace-checkable counterexample)")
    if outputs.log_path:
        lines.append(f"TLC's output: {outputs.log_path}")
    return "\n".join(lines)
