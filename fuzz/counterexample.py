"""Counterexamples people can read: a DAG, two views of it, and what a rule did at each.

A :class:`Counterexample` comes from ``tomkit prove`` (a Z3 witness, :func:`from_witness`,
or an enumeration find, :func:`from_found`) and, later, from the stateful fuzzer. Every
one is *replayed concretely* (:func:`replay`): the rule runs on a
:class:`~tomkit.model.toto.dag.DagView` of each view through
:class:`~tomkit.model.toto.vocab.ConcreteRuleView`; :func:`validate` raises
:class:`ReplayMismatch` unless the replay reproduces the violation (and, for a Z3
witness, Z3's claimed deliveries), so the symbolic encoding is checked on every answer.

Outputs:

* :func:`to_trace`: a v1 trace on which ``tomkit check`` fails. The messages are sent by
  their processors; two observer processes, named ``V1`` and ``V2`` after the views,
  receive their view and deliver what the rule delivered there, then receive the rest
  of the DAG and the Crash events (and Crash(q) of every processor still unseen, so the
  default rule can fire) and go on with the model (``model.rules.drain``);
* :func:`to_svg`: a space-time diagram, one lane per processor, messages at their
  causal depth, the two views as shaded cuts (``checker/spacetime.py``); what
  ``tomkit prove`` writes;
* :func:`to_dot` / :func:`render`: the same DAG for Graphviz (clusters as lanes,
  candidates highlighted, each view marked by colour);
* :func:`explain`: per view the candidates, nvt and votes tables, Win and Future values,
  the sources, which clause fired and what was delivered.

:func:`shrink` greedily removes messages and Crash events while the violation persists,
so a counterexample shows only what matters.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, replace
from graphlib import TopologicalSorter
from typing import Any

from tomkit.checker import spacetime
from tomkit.checker.spacetime import Arrow, Cut, Event
from tomkit.fuzz.prove.delivery import enumerate as en
from tomkit.model.toto.dag import DagView, Message
from tomkit.model.toto.mutants import resolve_rule
from tomkit.model.toto.rules import Params, Rule, drain
from tomkit.model.toto.vocab import (
    WIN_BOTTOM,
    ConcreteRuleView,
    Delivery,
    future_has,
    is_generalized_source,
    is_source,
    win,
)

__all__ = ["Counterexample", "ReplayMismatch", "explain", "from_found", "from_witness",
           "render", "replay", "shrink", "to_dot", "to_svg", "to_trace", "validate"]


class ReplayMismatch(AssertionError):
    """The concrete rule does not reproduce a counterexample: the symbolic encoding (or
    the counterexample) is wrong."""


@dataclass(frozen=True)
class CxView:
    """A view: the messages seen and the Crash(q) events received."""

    messages: tuple[str, ...]
    crashed: tuple[str, ...] = ()

    def as_enum(self) -> en.View:
        return en.View(frozenset(self.messages), frozenset(self.crashed))


@dataclass(frozen=True)
class Counterexample:
    """One violation of ``property`` by ``rule`` (with ``delta``) on ``n`` processors.

    ``messages`` are (id, sender, deps) in a causal order; ``delivered[i]`` is what the
    rule delivered at ``views[i]`` (lexicographic order), ``ends[i]`` whether that ends
    the activation, ``clauses[i]`` the clause that fired. ``method`` says who found it
    ("z3", "enumeration" or "fuzz")."""

    rule: str
    n: int
    delta: int | None
    property: str
    processors: tuple[str, ...]
    messages: tuple[tuple[str, str, tuple[str, ...]], ...]
    views: tuple[CxView, CxView]
    delivered: tuple[tuple[str, ...], tuple[str, ...]]
    ends: tuple[bool, bool] = (True, True)
    clauses: tuple[str | None, str | None] = (None, None)
    method: str = "z3"

    def size(self) -> tuple[int, int]:
        """(messages, causal edges between messages of different processors): the two
        numbers ``tomkit prove`` minimises (``fuzz/prove/delivery/minimal.py``)."""
        sender = {i: s for i, s, _ in self.messages}
        return len(self.messages), sum(1 for _, s, deps in self.messages for d in deps
                                       if sender[d] != s)

    def dag_messages(self) -> list[Message]:
        return [Message(i, s, tuple(d)) for i, s, d in self.messages]

    def params(self) -> Params:
        return Params(self.delta)


def from_witness(w: Any, rule: str, delta: int | None) -> Counterexample:
    """From a ``checker.prove.solve.Witness``."""
    return Counterexample(
        rule=rule, n=w.n, delta=delta, property=w.property, processors=w.processors,
        messages=tuple((i, s, tuple(d)) for i, s, d in w.messages),
        views=tuple(CxView(v.messages, v.crashed) for v in w.views),  # type: ignore[arg-type]
        delivered=(w.views[0].delivered, w.views[1].delivered),
        ends=(w.views[0].ends_activation, w.views[1].ends_activation),
        clauses=(w.views[0].clause, w.views[1].clause), method="z3")


def from_found(f: en.Found, rule: str, delta: int | None) -> Counterexample:
    """From an enumeration find (``fuzz.enumerate.Found``)."""
    ids = {m.id for m in f.messages}
    views = tuple(CxView(tuple(i for i in ids_sorted(f.messages) if i in v.messages),
                         tuple(sorted(v.crashed))) for v in f.views)
    assert all(set(v.messages) <= ids for v in views)
    return Counterexample(
        rule=rule, n=len(f.processors), delta=delta, property=f.property,
        processors=f.processors, messages=tuple((m.id, m.sender, m.deps) for m in f.messages),
        views=views,  # type: ignore[arg-type]
        delivered=(f.deliveries[0].messages, f.deliveries[1].messages),
        ends=(f.deliveries[0].ends_activation, f.deliveries[1].ends_activation),
        clauses=(f.deliveries[0].clause, f.deliveries[1].clause), method="enumeration")


def ids_sorted(msgs: Any) -> list[str]:
    return [m.id for m in msgs]


# ------------------------------------------------------------------------------ replay


def _dag_at(cx: Counterexample, view: CxView) -> DagView:
    g = DagView(cx.processors)
    for m in cx.dag_messages():
        if m.id in view.messages:
            g.insert(m)
    for q in view.crashed:
        g.crash(q)
    return g


def replay(cx: Counterexample, rule: Rule | None = None
           ) -> tuple[Delivery | None, Delivery | None]:
    """What the concrete rule delivers at each view."""
    rule = rule or resolve_rule(cx.rule)
    return tuple(rule(ConcreteRuleView(_dag_at(cx, v)), cx.params())  # type: ignore[return-value]
                 for v in cx.views)


def _violated(cx: Counterexample, rule: Rule) -> tuple[bool, tuple[Delivery | None, ...]]:
    try:
        d1, d2 = replay(cx, rule)
    except ValueError:  # not a valid DAG or view any more (shrink)
        return False, (None, None)
    cands = _dag_at(cx, cx.views[0]).candidates()
    return en.violates(cx.property, cx.views[0].as_enum(), d1, cands,
                       cx.views[1].as_enum(), d2), (d1, d2)


def validate(cx: Counterexample, rule: Rule | None = None) -> tuple[Delivery, Delivery]:
    """Replay ``cx`` concretely; raise :class:`ReplayMismatch` unless the rule violates
    the property there and delivers what ``cx`` says. Returns the two deliveries."""
    rule = rule or resolve_rule(cx.rule)
    ok, (d1, d2) = _violated(cx, rule)
    if not ok or d1 is None or d2 is None:
        raise ReplayMismatch(f"{cx.rule} (delta {cx.delta}) does not violate {cx.property} "
                             f"when replayed: {d1} / {d2}; counterexample {cx}")
    for i, d in enumerate((d1, d2)):
        if (d.messages != tuple(cx.delivered[i]) or d.ends_activation != cx.ends[i]
                or (cx.clauses[i] is not None and d.clause != cx.clauses[i])):
            raise ReplayMismatch(f"view V{i + 1}: the concrete rule delivers {d}, the "
                                 f"counterexample says {cx.delivered[i]} ({cx.clauses[i]})")
    return d1, d2


def shrink(cx: Counterexample, rule: Rule | None = None) -> Counterexample:
    """Greedily drop Crash events, then messages (from one view, or from the DAG when
    nothing follows them), while the concrete replay still violates the property.
    The result is validated and carries the replayed deliveries."""
    rule = rule or resolve_rule(cx.rule)
    ok, _ = _violated(cx, rule)
    if not ok:
        raise ReplayMismatch(f"cannot shrink: {cx} does not replay")

    def candidates(c: Counterexample) -> list[Counterexample]:
        out = []
        for i in (0, 1):
            for q in c.views[i].crashed:
                vs = list(c.views)
                vs[i] = CxView(vs[i].messages, tuple(x for x in vs[i].crashed if x != q))
                out.append(replace(c, views=tuple(vs)))
        followed = {d for _, _, deps in c.messages for d in deps}
        for mid, _, _ in reversed(c.messages):
            if mid not in followed:
                msgs = tuple(m for m in c.messages if m[0] != mid)
                vs = tuple(CxView(tuple(x for x in v.messages if x != mid), v.crashed)
                           for v in c.views)
                out.append(replace(c, messages=msgs, views=vs))
            for i in (0, 1):
                v = c.views[i]
                inside = {d for m in c.messages if m[0] in v.messages and m[0] != mid
                          for d in m[2]}
                if mid in v.messages and mid not in inside:
                    vs = list(c.views)
                    vs[i] = CxView(tuple(x for x in v.messages if x != mid), v.crashed)
                    out.append(replace(c, views=tuple(vs)))
        return out

    changed = True
    while changed:
        changed = False
        for c in candidates(cx):
            ok, _ = _violated(c, rule)
            if ok:
                cx, changed = c, True
                break
    _, (d1, d2) = _violated(cx, rule)
    assert d1 is not None and d2 is not None
    cx = replace(cx, delivered=(d1.messages, d2.messages),
                 ends=(d1.ends_activation, d2.ends_activation), clauses=(d1.clause, d2.clause))
    validate(cx, rule)
    return cx


# ------------------------------------------------------------------------------- trace


def trace_records(cx: Counterexample, rule: Rule | None = None,
                  trace_id: str | None = None) -> list[dict]:
    """The v1 records of :func:`to_trace` (see the module docstring)."""
    rule = rule or resolve_rule(cx.rule)
    tid = trace_id or f"prove-{cx.rule.replace(':', '.')}-n{cx.n}-d{cx.delta}"
    msgs = cx.dag_messages()
    crashed = sorted(set(cx.views[0].crashed) | set(cx.views[1].crashed))
    recs: list[dict] = []
    clock = [0.0]

    def rec(proc: str, kind: str, **kw: Any) -> None:
        clock[0] += 0.001
        recs.append({"trace": tid, "process": proc, "kind": kind, "time": clock[0], **kw})

    heard = {m.sender for m in msgs} | set(crashed)
    # processors never heard from crash at the end, so that the default rule can fire
    late = sorted(set(cx.processors) - heard)
    for m in msgs:
        rec(m.sender, "send", msg=m.id, deps=list(m.deps))
    for q in [*crashed, *late]:
        rec(q, "crash")
    for i, (view, name) in enumerate(zip(cx.views, ("V1", "V2"))):
        g = _dag_at(cx, CxView((), ()))
        for m in msgs:
            if m.id in view.messages:
                g.insert(m)
                rec(name, "recv", msg=m.id)
        for q in view.crashed:
            g.crash(q)
        d = rule(ConcreteRuleView(g), cx.params())
        if d is None or d.messages != tuple(cx.delivered[i]):
            raise ReplayMismatch(f"{name}: the rule delivers {d}, not {cx.delivered[i]}")
        for mid in d.messages:
            rec(name, "deliver", msg=mid, x_view=name, x_clause=d.clause)
        g.deliver(d.messages, end_activation=d.ends_activation)
        drained: list = []
        try:
            drained += drain(g, rule, cx.params())
            for m in msgs:
                if m.id not in view.messages:
                    g.insert(m)
                    rec(name, "recv", msg=m.id)
                drained += drain(g, rule, cx.params())
            for q in [*crashed, *late]:
                if q not in g.defunc:
                    g.crash(q)
                    drained += drain(g, rule, cx.params())
        except ValueError:
            # the broken rule also misbehaves after the views (e.g. an empty delivery);
            # the violation is already in the trace, so the observer stops here
            pass
        for a in drained:
            for mid in a.delivery.messages:
                rec(name, "deliver", msg=mid, x_clause=a.delivery.clause)
    for i, r in enumerate(recs):
        r["seq"] = sum(1 for x in recs[:i] if x["process"] == r["process"])
    return recs


def to_trace(cx: Counterexample, path: str | os.PathLike, rule: Rule | None = None) -> int:
    """Write :func:`trace_records` to ``path`` (.jsonl, .jsonl.gz or .parquet); returns
    the number of records."""
    from tomkit.traces.writer import write_records

    return write_records(path, trace_records(cx, rule))


# --------------------------------------------------------------------------------- dot

_COLOURS = {(True, False): "#1f77b4", (False, True): "#d62728", (True, True): "#7b3294",
            (False, False): "#999999"}


def to_dot(cx: Counterexample) -> str:
    """Graphviz DOT: one lane (cluster) per processor, messages in sending order along
    it, ACK edges from a message to the one that follows it. Border colour: blue in V1
    only, red in V2 only, purple in both; candidates are filled (yellow), delivered ones
    say at which view; processors whose Crash(q) a view received are noted on the lane."""
    msgs = cx.dag_messages()
    g = DagView(cx.processors)
    for m in msgs:
        g.insert(m)
    cands = set(g.candidates())
    voters = {q: v for q, v in zip(cx.processors, g.voters()) if v is not None}
    lines = ["digraph counterexample {", "  rankdir=LR;",
             '  node [shape=box, style="rounded", fontname="Helvetica", fontsize=10];',
             '  edge [color="#555555", arrowsize=0.6];',
             f'  label="{_dot(_title(cx))}"; labelloc=t; fontname="Helvetica";']
    for q in cx.processors:
        notes = [f"Crash({q}) in {name}" for name, v in zip(("V1", "V2"), cx.views)
                 if q in v.crashed]
        lab = q + (" (" + ", ".join(notes) + ")" if notes else "")
        lines.append(f'  subgraph "cluster_{q}" {{ label="{_dot(lab)}"; style=dashed; '
                     f'color="#bbbbbb";')
        chain = [m for m in msgs if m.sender == q]
        if not chain:
            lines.append(f'    "{q}.none" [label="(no message)", shape=plaintext];')
        for m in chain:
            inv = (m.id in cx.views[0].messages, m.id in cx.views[1].messages)
            label = [m.id]
            if m.id in cands:
                label.append("candidate")
            if voters.get(q) == m.id:
                voted = sorted(c for c in cands if g.follows(m.id, c))
                label.append("votes " + ",".join(voted))
            for i, name in enumerate(("V1", "V2")):
                if m.id in cx.delivered[i]:
                    label.append(f"delivered at {name}")
            seen = [n for n, x in zip(("V1", "V2"), inv) if x]
            label.append("in " + "+".join(seen) if seen else "in neither view")
            style = '"rounded,filled"' if m.id in cands else '"rounded"'
            fill = ', fillcolor="#fff3b0"' if m.id in cands else ""
            lines.append(f'    "{m.id}" [label="{_dot(chr(10).join(label))}", style={style}'
                         f'{fill}, color="{_COLOURS[inv]}", penwidth=2];')
        lines.append("  }")
    for m in msgs:
        for d in m.deps:
            lines.append(f'  "{d}" -> "{m.id}";')
    lines.append('  legend [shape=plaintext, label="border: blue = V1 only, red = V2 only, '
                 'purple = both, grey = neither; yellow = candidate"];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def to_svg(cx: Counterexample) -> str:
    """The DAG as a space-time diagram (``checker/spacetime.py``): one lane per
    processor, its messages in sending order at their causal depth, an arrow from each
    message to every message of another processor that follows it directly (its ACKs),
    and the two views as shaded cuts (V1 blue, V2 red). A candidate is filled yellow;
    notes say where a message was delivered and which view received Crash(q)."""
    msgs = cx.dag_messages()
    g = DagView(cx.processors)
    for m in msgs:
        g.insert(m)
    cands = set(g.candidates())
    lane = {q: r for r, q in enumerate(cx.processors)}
    sender = {m.id: m.sender for m in msgs}
    deps = {m.id: m.deps for m in msgs}
    depth: dict[str, int] = {}
    for mid in TopologicalSorter(deps).static_order():
        depth[mid] = 1 + max((depth[d] for d in deps[mid]), default=-1)
    events, arrows = [], []
    for m in msgs:
        notes = tuple(f"delivered at {name}" for i, name in enumerate(("V1", "V2"))
                      if m.id in cx.delivered[i])
        events.append(Event(m.id, lane[m.sender], depth[m.id], m.id, notes,
                            "#fff3b0" if m.id in cands else "#ffffff"))
        arrows += [Arrow(d, m.id) for d in m.deps if sender[d] != m.sender]
    last = max(depth.values(), default=-1) + 1
    frontiers = []
    for i, v in enumerate(cx.views):
        front: list[float | None] = [None] * len(cx.processors)
        for mid in v.messages:
            r = lane[sender[mid]]
            front[r] = max(depth[mid], front[r] if front[r] is not None else -1)
        for q in v.crashed:
            front[lane[q]] = last
            ev = f"Crash({q})"
            if not any(e.id == ev for e in events):
                which = " and ".join(n for n, w in zip(("V1", "V2"), cx.views)
                                     if q in w.crashed)
                events.append(Event(ev, lane[q], last, ev, (f"in {which}",), cross=True))
        frontiers.append(Cut(("V1", "V2")[i], tuple(front), ("#1f77b4", "#d62728")[i]))
    legend = ["shaded: what a view has seen (V1 blue, V2 red); yellow: a candidate; "
              "arrow a -> b: b's sender had a (b follows a)",
              f"V1 delivers {list(cx.delivered[0])}; V2 delivers {list(cx.delivered[1])}"]
    return spacetime.svg(cx.processors, events, arrows, frontiers, _title(cx), legend)


def _dot(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _title(cx: Counterexample) -> str:
    return (f"{cx.rule} n={cx.n} delta={cx.delta}: {cx.property} violated ({cx.method}); "
            f"V1 delivers {list(cx.delivered[0])}, V2 delivers {list(cx.delivered[1])}")


def render(cx: Counterexample, path: str | os.PathLike) -> str:
    """Write the DOT next to ``path`` (same name, .dot) and render ``path`` (.svg or
    .png, by its suffix) with Graphviz ``dot``. Returns the picture's path."""
    path = os.fspath(path)
    fmt = path.rsplit(".", 1)[-1].lower()
    if fmt not in ("svg", "png"):
        raise ValueError(f"{path}: expected a .svg or .png file name")
    exe = shutil.which("dot")
    if exe is None:
        raise RuntimeError("Graphviz 'dot' is not on PATH")
    dot_path = path[: -len(fmt)] + "dot"
    with open(dot_path, "w") as f:
        f.write(to_dot(cx))
    subprocess.run([exe, f"-T{fmt}", "-o", path, dot_path], check=True,
                   capture_output=True)
    return path


# ----------------------------------------------------------------------------- explain


def explain(cx: Counterexample, rule: Rule | None = None) -> str:
    """A short text: the DAG, then per view its candidates, the nvt and votes tables,
    Win and Future, the sources, and what the rule delivered (recomputed concretely)."""
    rule = rule or resolve_rule(cx.rule)
    d1, d2 = validate(cx, rule)
    delta = cx.delta
    out = [_title(cx), "", "DAG (message: ACKs):"]
    out += [f"  {i} from {s}: {', '.join(d) if d else '-'}" for i, s, d in cx.messages]
    for name, view, d in zip(("V1", "V2"), cx.views, (d1, d2)):
        g = _dag_at(cx, view)
        v = ConcreteRuleView(g)
        cands = list(g.candidates())
        out += ["", f"{name}: sees {', '.join(view.messages) or 'nothing'}"
                + (f"; Crash({', '.join(view.crashed)})" if view.crashed else ""),
                f"  NTail(G) = {v.ntail_g}, u = {v.u}; candidates: {', '.join(cands)}"]
        for c in cands:
            vv = "".join({1: "1", 0: "0", None: "*"}[x] for x in g.vv(c))
            out.append(f"  {c}: VV = {vv}  nvt = {v.nvt(c)}  NTail = {v.ntail(c)}")
        if delta is not None and len(cands) > 1:
            out.append("  votes(a,b) / Win(a,b) / 1 in Future(a,b), row a, column b:")
            for a in cands:
                row = []
                for b in cands:
                    if a == b:
                        row.append("      -      ")
                        continue
                    w = win(v, a, b, delta)
                    row.append(f"{v.votes(a, b)}/{'X' if w == WIN_BOTTOM else w}/"
                               f"{'y' if future_has(v, a, b, 1, delta) else 'n'}".center(13))
                out.append(f"    {a:>6} " + " ".join(row))
        if delta is not None:
            src = [c for c in cands if is_source(v, c, delta)]
            gsrc = [c for c in cands if is_generalized_source(v, c, delta)]
            out.append(f"  sources S = {src or '{}'}; generalized sources = {gsrc or '{}'}")
        out.append(f"  rule fires clause '{d.clause}' and delivers {list(d.messages)}"
                   + ("" if d.ends_activation else " (activation stays open)"))
    out.append("")
    out.append(_verdict(cx, d1, d2))
    return "\n".join(out) + "\n"


def _verdict(cx: Counterexample, d1: Delivery, d2: Delivery) -> str:
    a, b = list(d1.messages), list(d2.messages)
    nested = "V1 is contained in V2; " if en.nested(cx.views[0].as_enum(),
                                                    cx.views[1].as_enum()) else ""
    if en.order_conflict(d1, d2):
        return (f"{nested}a process at V1 delivers {a} and one at V2 delivers {b}: neither "
                "sequence is a prefix of the other, so the two deliver in different orders.")
    return (f"{nested}a process at V1 delivers {a}, one at V2 {b}: both end the activation "
            "with different sets, so their next activations start from different DAGs.")


def counterexample_files(cx: Counterexample, out_dir: str | os.PathLike, stem: str,
                         rule: Rule | None = None) -> dict[str, str]:
    """Write trace (.jsonl), .dot, .svg and .txt for ``cx`` into ``out_dir``."""
    os.makedirs(out_dir, exist_ok=True)
    base = os.path.join(os.fspath(out_dir), stem)
    files = {"trace": base + ".jsonl", "svg": base + ".svg", "dot": base + ".dot",
             "txt": base + ".txt"}
    if os.path.exists(files["trace"]):
        os.remove(files["trace"])
    to_trace(cx, files["trace"], rule)
    with open(files["svg"], "w") as f:
        f.write(to_svg(cx))
    with open(files["dot"], "w") as f:
        f.write(to_dot(cx))
    with open(files["txt"], "w") as f:
        f.write(explain(cx, rule))
    return files


RuleFn = Callable[[Any], Any]
