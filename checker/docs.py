"""Render docs/properties.md from the property modules, so each definition is written once.

    python -m tomkit.checker.docs > docs/properties.md

A test fails when the committed document and the modules drift apart.
"""

from __future__ import annotations

import inspect

from tomkit.checker.properties import Option, Property, declared_options, properties

OPTIONS_HEADER = """
## Options

Each option is declared once, with the property that reads it
(`checker/properties/base.py`'s `Option`): the flag of `tomkit check` (and of
`tomkit scan` when the scan decides a property that reads it), the keyword of
`tomkit.check()` (the name), the key of the JSON report's `options`. Giving an option
checks the properties it selects (the table above says which).

| flag | keyword | value | read by | meaning |
|---|---|---|---|---|
"""

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


def _when(p: Property) -> str:
    """When ``tomkit check`` decides ``p``: the default column of the table."""
    flags = [o.flag for o in p.options if o.selects]
    when = ("yes" if p.default
            else "with `--liveness`" if p.liveness
            else "with " + " or ".join(f"`{f}`" for f in flags) if flags
            else "by name or guarantee")
    return when + ("; scoped" if p.scoped else "")


def _option_line(o: Option, readers: list[str]) -> str:
    unit = f" ({o.unit})" if o.unit else ""
    default = "" if o.default is None else f"; default {o.default}"
    needs = "".join(f"; needs `--{n.replace('_', '-')}`" for n in o.needs)
    return (f"| `{o.flag} {o.metavar}` | `{o.name}` | {o.type.__name__}{unit}{default}"
            f"{needs} | {', '.join(readers)} | {o.help} |\n")


def render() -> str:
    out = [HEADER]
    props = properties()
    for p in props.values():
        out.append(f"| [`{p.name}`](#{p.name}) | {_when(p)} | {p.summary} |\n")
    out.append(OPTIONS_HEADER)
    for o, readers in declared_options().values():
        out.append(_option_line(o, readers))
    for p in props.values():
        out.append(f"\n## {p.name}\n\n")
        out.append(inspect.cleandoc(p.doc).strip() + "\n")
        if p.option_names():
            out.append("\nOptions: " + ", ".join(f"`--{n.replace('_', '-')}`"
                                                 for n in p.option_names()) + ".\n")
    return "".join(out)


if __name__ == "__main__":
    print(render(), end="")
