"""The verdict of a run, as text for people and JSON for machines.

Each tomkit property is named beside the workload's word for its violations in
Maelstrom's vocabulary (docs/maelstrom.md has the table), then every anomaly the
workload found beyond the trace, the faults the harness recorded, and the commands that
take the trace further (``tomkit check`` with ``--html`` and ``--draw``).
"""

from __future__ import annotations

import json

from .harness import RunResult
from .workloads import WORKLOADS

__all__ = ["to_json", "to_text"]

SHOWN = 10


def to_text(result: RunResult) -> str:
    cfg = result.config
    vocab = WORKLOADS[cfg.workload].vocabulary
    s = result.stats
    lines = [f"run {cfg.workload}  seed {cfg.seed}  [{result.out}]",
             f"  {s['ops']} operations ({s['ok']} ok, {s['fail']} fail, {s['info']} info) in "
             f"{s['elapsed']:.1f} s; {s['messages']} messages ({s['node_messages']} between "
             f"nodes, {s['dropped']} dropped)"]
    if result.nemesis:
        lines.append("  nemesis: " + "; ".join(
            f"{e['time']:.2f}s {e['action']} {e['fault']}"
            + (f" {','.join(e['nodes'])}" if e.get("nodes") else "")
            + (" " + " | ".join(",".join(g) for g in e["groups"]) if e.get("groups") else "")
            for e in result.nemesis[:SHOWN]) + (" ..." if len(result.nemesis) > SHOWN else ""))
    for name, verdict in result.verdicts.items():
        word = vocab.get(name.split("@")[0])
        extra = f"  ({word})" if word and verdict == "violated" else ""
        lines.append(f"  {name:<20} {verdict.upper()}{extra}")
        if name in result.explanations and verdict != "holds":
            lines.append(f"      {result.explanations[name]}")
    for a in result.anomalies[:SHOWN]:
        lines.append(f"  anomaly: {a.name} [{a.property}]  {a.text}")
    if len(result.anomalies) > SHOWN:
        lines.append(f"  ... and {len(result.anomalies) - SHOWN} more anomalies")
    for f in result.faults[:SHOWN]:
        lines.append(f"  fault: {f}")
    if len(result.faults) > SHOWN:
        lines.append(f"  ... and {len(result.faults) - SHOWN} more faults")
    props = f" -p {','.join(result.verdicts)}" if result.verdicts else ""
    lines.append(f"  trace: tomkit check {result.trace}{props} --html "
                 f"{result.out / 'report.html'}")
    lines.append("verdict: " + ("valid" if result.valid else "INVALID"))
    return "\n".join(lines) + "\n"


def to_json(result: RunResult) -> str:
    return json.dumps(result.to_dict(), indent=2) + "\n"
