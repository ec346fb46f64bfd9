"""Evaluate TLA+ expressions on each state of a counterexample, by replaying it in TLC.

An expression over a spec's variables (a trace map's ``deliveries``, a
config's ``ALIAS``) can use any operator of the spec, so only TLC can
evaluate it. As TLC's trace explorer does, tomkit writes a module that
``EXTENDS`` the spec and whose only behaviour is the counterexample:

* ``TomkitState(i)`` is the i-th state, written back from the values TLC
  printed (functions as ``[k \\in D |-> CASE ...]``, so the module needs no
  operator beyond the spec's own: ``:>`` and ``@@`` would need TLC's module,
  whose names might clash with the spec's);
* ``TomkitInit`` and ``TomkitNext`` step ``tomkit_pos`` through the states and
  set every variable from them, and ``tomkit_out`` to the expressions
  (primed in ``TomkitNext``, so they are evaluated in the state just set);
* the invariant ``TomkitNotLast`` fails at the last state, so TLC prints the
  whole behaviour with ``tomkit_out`` in every state.

The config keeps the user's CONSTANT sections (the spec's constants and
model values mean the same); each model value that occurs in a state is
declared as a constant ``TomkitMVk`` bound to that model value.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tomkit.fuzz.tlc.config import constant_sections
from tomkit.fuzz.tlc.runner import (
    TlcState,
    find_jar,
    find_java,
    interpret,
    parse_output,
)
from tomkit.fuzz.tlc.values import Function, ModelValue, RawValue, Record

__all__ = ["ReplayError", "evaluate_on_behaviour", "replay_module"]

MODULE = "TomkitReplay"


class ReplayError(RuntimeError):
    """TLC could not evaluate the expressions on the behaviour (its message, located)."""


def _string(s: str) -> str:
    out = s.replace("\\", "\\\\").replace('"', '\\"')
    for ch, esc in (("\n", "\\n"), ("\t", "\\t"), ("\r", "\\r"), ("\f", "\\f")):
        out = out.replace(ch, esc)
    return f'"{out}"'


class _Writer:
    """TLA+ source for parsed values; collects the model values it meets."""

    def __init__(self) -> None:
        self.model_values: dict[str, str] = {}  # model value name -> constant name

    def expr(self, v: Any, depth: int = 0) -> str:
        if isinstance(v, bool):
            return "TRUE" if v else "FALSE"
        if isinstance(v, int):
            return str(v)
        if isinstance(v, str):
            return _string(v)
        if isinstance(v, ModelValue):
            return self.model_values.setdefault(v.name, f"TomkitMV{len(self.model_values) + 1}")
        if isinstance(v, RawValue):
            return f"({v.text})"
        if isinstance(v, tuple):
            return "<<" + ", ".join(self.expr(x, depth) for x in v) + ">>"
        if isinstance(v, frozenset):
            return "{" + ", ".join(sorted(self.expr(x, depth) for x in v)) + "}"
        if isinstance(v, Record):
            return "[" + ", ".join(f"{k} |-> {self.expr(x, depth)}" for k, x in v.items()) + "]"
        if isinstance(v, Function):
            k = f"tomkit_k{depth}"
            keys = [(self.expr(a, depth + 1), self.expr(b, depth + 1)) for a, b in v.items()]
            dom = "{" + ", ".join(a for a, _ in keys) + "}"
            arms = " [] ".join(f"{k} = {a} -> {b}" for a, b in keys)
            return f"[{k} \\in {dom} |-> CASE {arms}]"
        raise TypeError(f"not a TLA+ value: {v!r}")


def replay_module(root: str, behaviour: Sequence[TlcState], exprs: dict[str, str],
                  user_constants: str) -> tuple[str, str, dict[int, str]]:
    """The module text, its config text, and which line of the module holds which
    expression (to point TLC's messages at the user's expression)."""
    w = _Writer()
    names = list(behaviour[0].values)
    lines = [f"---- MODULE {MODULE} ----", f"EXTENDS {root}"]
    body: list[str] = []
    n = len(behaviour)
    for i, st in enumerate(behaviour, 1):
        rec = ", ".join(f"{v} |-> {w.expr(st.values[v])}" for v in names)
        arm = f'i = "s{i}" -> [{rec}]'
        body.append(("TomkitState(i) == CASE " if i == 1 else "    [] ") + arm)
    body.append("TomkitSucc(i) == CASE " + " [] ".join(
        f'i = "s{i}" -> "s{i + 1}"' for i in range(1, n)) if n > 1 else
        'TomkitSucc(i) == i')
    if w.model_values:
        lines.append("CONSTANTS " + ", ".join(w.model_values.values()))
    lines.append("VARIABLES tomkit_pos, tomkit_out")
    lines.extend(body)
    where: dict[int, str] = {}
    for key, e in exprs.items():
        text = f"TomkitExpr_{key} == {e}"
        for k in range(text.count("\n") + 1):
            where[len(lines) + 1 + k] = key
        lines.append(text)
    lines.append("TomkitOut == [" + ", ".join(f"{k} |-> TomkitExpr_{k}" for k in exprs) + "]")
    lines.append('TomkitInit == /\\ tomkit_pos = "s1"')
    lines.extend(f'              /\\ {v} = TomkitState("s1").{v}' for v in names)
    lines.append("              /\\ tomkit_out = TomkitOut")
    lines.append(f'TomkitNext == /\\ tomkit_pos # "s{n}"')
    lines.append("              /\\ tomkit_pos' = TomkitSucc(tomkit_pos)")
    lines.extend(f"              /\\ {v}' = TomkitState(tomkit_pos').{v}" for v in names)
    lines.append("              /\\ tomkit_out' = TomkitOut'")
    lines.append(f'TomkitNotLast == tomkit_pos # "s{n}"')
    lines.append("====")
    cfg = [user_constants]
    if w.model_values:
        cfg.append("CONSTANTS " + " ".join(f"{c} = {mv}" for mv, c in w.model_values.items()))
    cfg.append("INIT TomkitInit\nNEXT TomkitNext\nINVARIANT TomkitNotLast")
    return "\n".join(lines) + "\n", "\n".join(cfg) + "\n", where


_LOC = re.compile(rf"line (\d+), col \d+ to line \d+, col \d+ of module {MODULE}")


def _locate(text: str, where: dict[int, str], what: str) -> str:
    def name(m: re.Match) -> str:
        key = where.get(int(m.group(1)))
        return m.group(0) + (f" (the {what} {key})" if key else "")
    return _LOC.sub(name, text)


def evaluate_on_behaviour(spec: str | os.PathLike, cfg_text: str,
                          behaviour: Sequence[TlcState], exprs: dict[str, str], *,
                          library: Sequence[str | os.PathLike] = (), what: str = "expression",
                          timeout: float | None = 120) -> list[dict[str, Any]]:
    """The value of each expression at each state of ``behaviour`` (one dict per state).
    ``spec`` is the root module the behaviour comes from, ``cfg_text`` its config (its
    CONSTANT sections are reused), ``library`` the module path it was checked with.
    ``what`` names the expressions in error messages."""
    spec = Path(spec).resolve()
    if not behaviour:
        return []
    if not behaviour[0].values:
        raise ReplayError("the behaviour has no variables to replay")
    module, cfg, where = replay_module(spec.stem, behaviour, exprs, constant_sections(cfg_text))
    java, jar = find_java(), find_jar()
    with tempfile.TemporaryDirectory(prefix="tomkit-replay-") as tmp:
        tmpdir = Path(tmp)
        (tmpdir / f"{MODULE}.tla").write_text(module)
        (tmpdir / f"{MODULE}.cfg").write_text(cfg)
        lib = os.pathsep.join([str(spec.parent), *map(str, library)])
        cmd = [java, "-XX:+UseParallelGC", f"-Djava.io.tmpdir={tmpdir}", f"-DTLA-Library={lib}",
               "-cp", str(jar), "tlc2.TLC", "-tool", "-metadir", str(tmpdir / "states"),
               "-workers", "1", "-config", f"{MODULE}.cfg", f"{MODULE}.tla"]
        try:
            out = subprocess.run(cmd, cwd=tmpdir, capture_output=True, text=True,
                                 timeout=timeout)
        except subprocess.TimeoutExpired:
            raise ReplayError(f"TLC did not evaluate the {what} within {timeout:g} s") from None
    res = interpret(parse_output(out.stdout.splitlines(keepends=True)))
    if res.status != "violation" or res.violated != "TomkitNotLast":
        errors = "\n".join(e.strip() for e in res.errors) or "TLC stopped without the replay"
        errors = "\n".join(x for x in errors.splitlines()
                           if not x.startswith(("Parsing file", "Semantic processing")))
        if "Level error" in errors:
            errors += ("\n(a primed variable or an action in the expression: the replay "
                       "evaluates it on one state at a time)")
        raise ReplayError(f"TLC could not evaluate the {what} on the counterexample:\n"
                          + _locate(errors.strip(), where, what))
    if len(res.behaviour) != len(behaviour):
        raise ReplayError(f"the replay has {len(res.behaviour)} states, the counterexample "
                          f"{len(behaviour)}")
    values = []
    for st in res.behaviour:
        outv = st.values.get("tomkit_out")
        if not isinstance(outv, Record):
            raise ReplayError(f"state {st.index} of the replay: tomkit_out is {outv!r}")
        values.append(dict(outv))
    return values
