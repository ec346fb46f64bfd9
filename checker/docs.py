"""Render docs/properties.md from the property modules, so each definition is written once.

    python -m tomkit.checker.docs > docs/properties.md

A test fails when the committed document and the modules drift apart.
"""

from __future__ import annotations

import inspect

from tomkit.checker.properties import properties

HEADER = """# The properties `tomkit check` decides

Generated from the docstrings of `checker/properties/*.py` by
`python -m tomkit.checker.docs`; edit those, not this file.

Every property gives, per trace, one verdict: **holds**, **violated** (with a
minimal witness: the fewest events that show it, each with its file and line or
row) or **unknown** (with the reason, e.g. the trace does not log what the
property needs). Nothing passes silently.

Conventions shared by all properties:

- A process's events are in its local order: by `seq` when the process gives
  it, else in record order.
- Order properties read each process's *first* delivery of each message; a
  repeated delivery is an integrity violation, not a second order fact.
- A trace without view events has every process connected to every other.
- Scope (Défago, Schiper and Urbán 2004, section 2.2): a *scoped* property is judged
  for every process, crashed ones included (uniform, the default), or, as
  `NAME@correct` or with `--scope correct`, for the processes that log no `crash`
  (the non-uniform form). A process that logs `leave` is judged up to its leave.
  See `checker/properties/scope.py`.
- Membership (Chockler, Keidar and Vitenberg 2001, section 4): a process owes nothing
  for views it was not a member of (prefix-order, agreement, validity).
- Guarantee profiles (`checker/profiles/*.toml`, `tomkit check --guarantee NAME`)
  name the sets of properties systems promise; see docs/profiles.md.
- Each check runs in O(E log E) or better for E events of a trace: the
  vectorized engine decides all traces of a chunk with array operations
  (sorts, direct-addressed tables, a bounded relaxation for order
  consistency); the exact per-trace checks run only on traces found
  violated, to build the witness. The global-order witness search is the one
  super-linear step (a BFS per message of a cyclic component, only when
  the trace is already known to be cyclic).

| property | default | in short |
|---|---|---|
"""


def render() -> str:
    out = [HEADER]
    props = properties()
    for p in props.values():
        default = ("yes" if p.default
                   else "with `--liveness`" if p.name in ("liveness", "agreement", "validity")
                   else "with `--latency-bound`" if p.name == "latency"
                   else "with `--realtime-bound`" if p.name == "realtime-latency"
                   else "with `--rate-max` or `--rate-avg`" if p.name == "rate"
                   else "by name or guarantee")
        if p.scoped:
            default += "; scoped"
        out.append(f"| [`{p.name}`](#{p.name}) | {default} | {p.summary} |\n")
    for p in props.values():
        out.append(f"\n## {p.name}\n\n")
        out.append(inspect.cleandoc(p.doc).strip() + "\n")
    return "".join(out)


if __name__ == "__main__":
    print(render(), end="")
