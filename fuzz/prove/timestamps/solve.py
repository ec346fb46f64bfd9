"""The queries that prove ABCAST and TOMP safe (004 sections 2 and 3.2) for n hosts, or
refute a broken variant with a run.

For n hosts and the invariant I of ``ts_invariant.py`` (each query unsat = proved):

``base``
    the initial state violates I;
``step:<kind>`` (multicast, data, ack, final, deliver)
    a state satisfying I and a transition of that kind lead to a state violating I, or
    lower some bound LB(j, m) (``bounds-grow``);
``safety``
    a state satisfies I and not ``no-smaller-final``;
``order``
    a state satisfies I, h delivers x, and h has delivered a message whose final
    timestamp is not below F(x) (``ascending``).

Proved base and steps make I hold in every reachable state; safety then says that no
message can later get a final timestamp smaller than one already delivered, and order
that each host delivers in increasing final timestamp order; with safety after the
delivery (every message h has not delivered ends above F(x)), total order without gaps
follows (``ts_invariant.py``). A sat step query is a counterexample to induction
(CTI): the conjuncts it breaks are reported, but its state may be unreachable, so a
broken variant is refuted by bounded model checking from the initial state
(``ts_bmc.py``), whose run is replayed on the model (``ts_replay.py``).

Why three message slots suffice for the step (as docs/prove.md argues for the ToTo
activation): every conjunct of I, ``bounds-grow`` and the safety property is universal
over messages with at most two message variables per instance, and hosts are all
there (n is fixed). A transition acts on one message x; its guard asks things of x and
of the hosts' variables, and, for delivery, something of *every* queued message
(nothing queued comes first), which stays true on a subset of the messages; its effect
on the hosts' variables depends on x only, and its effect on any message m on m, x and
the hosts only (TOMP's anticipation raises m from x's vectors). So if a state with any
number of messages satisfies I and a transition breaks an instance on messages m, m',
the same state restricted to {x, m, m'} satisfies I (a universal formula holds on a
subset), the transition is enabled there and breaks the same instance. Slots carry a
``used`` flag, so states with fewer than three messages are covered too; counters and
identifiers are unbounded integers, so "any state" means any values, not small ones.
By symmetry of the slots, x is slot 0. The base case and the safety query have no
transition, and order speaks of x and one more message, so two slots suffice (the same
restriction argument; 4-5 times faster than three at n = 7). Each proof is for one n:
the number of hosts is not symbolic.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import z3

from tomkit.fuzz.prove.timestamps.bmc import BmcResult, bmc
from tomkit.fuzz.prove.timestamps.invariant import ascending, bounds_grow, invariant, safety
from tomkit.fuzz.prove.timestamps.replay import validate
from tomkit.fuzz.prove.timestamps.state import (
    KINDS,
    Spec,
    SymState,
    and_,
    fresh_state,
    init,
    not_,
    successor,
)

__all__ = ["STATE_SLOTS", "STEP_SLOTS", "QueryResult", "TsOutcome", "prove_protocol", "query_base",
           "query_order", "query_safety", "query_step"]

#: message slots of the inductive step, and of the base case and safety (module docstring)
STEP_SLOTS = 3
STATE_SLOTS = 2


@dataclass
class QueryResult:
    """One query: proved, failed (with the conjuncts the counterexample breaks; for a
    step also ``enabled``, whether the transition can fire from I at all), unknown."""

    name: str
    status: str
    seconds: float
    broken: tuple[str, ...] = ()
    reason: str = ""

    def text(self) -> str:
        extra = f" [{', '.join(self.broken)}]" if self.broken else ""
        extra += f" ({self.reason})" if self.reason else ""
        return f"{self.name} {self.status} {self.seconds:.1f}s{extra}"


@dataclass
class TsOutcome:
    """The verdict for one protocol, variant and n."""

    protocol: str
    variant: str | None
    n: int
    status: str  # proved | counterexample | unknown
    seconds: float
    queries: list[QueryResult] = field(default_factory=list)
    search: BmcResult | None = None
    note: str = ""
    #: what ``--out`` got: the refuting run as a trace and its text
    files: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.protocol + (f"[{self.variant}]" if self.variant else "")

    def to_dict(self) -> dict[str, Any]:
        """The outcome as plain data (``tomkit prove --format json``): the queries, and the
        bounded search's refuting run as its violation and size. ``status`` is
        ``verdict``'s old name (docs/api.md)."""
        b = self.search
        run = None if b is None else b.run
        return {
            "verdict": self.status, "protocol": self.protocol, "variant": self.variant,
            "n": self.n, "status": self.status, "seconds": self.seconds, "note": self.note,
            "queries": [{"name": q.name, "verdict": q.status, "seconds": q.seconds,
                         "broken": list(q.broken), "reason": q.reason}
                        for q in self.queries],
            "search": None if b is None else {
                "verdict": b.status, "depth": b.depth, "seconds": b.seconds,
                "reason": b.reason,
                "violation": None if run is None else {
                    "explanation": _violation_text(run.violation),
                    "steps": len(run.steps), "messages": len(run.messages)}},
            "files": dict(self.files),
        }

    def line(self) -> str:
        qs = ", ".join(q.text() for q in self.queries)
        out = f"{self.name} n={self.n}: {self.status}  {self.seconds:.1f}s  ({qs})"
        if self.search is not None:
            b = self.search
            out += (f"  bmc: {b.depth}-step run in {b.seconds:.1f}s" if b.run is not None
                    else f"  bmc: {b.status} within {b.depth} steps in {b.seconds:.1f}s")
        return out + (f"  [{self.note}]" if self.note else "")


def _violation_text(violation: tuple[int, int, str, str]) -> str:
    a, b, x, y = violation
    return f"p{a} delivers {x} before {y}; p{b} delivers {y} without {x} before it"


def _solve(constraints: list[Any], timeout: float | None) -> tuple[Any, Any, str]:
    s = z3.Solver()
    if timeout is not None:
        s.set("timeout", max(1, int(timeout * 1000)))
    s.add(constraints)
    r = s.check()
    return r, (s.model() if r == z3.sat else None), (s.reason_unknown() if r == z3.unknown
                                                     else "")


def _violated(model: Any, named: list[tuple[str, Any]]) -> tuple[str, ...]:
    return tuple(name for name, f in named
                 if not z3.is_true(model.eval(f if not isinstance(f, bool)
                                              else z3.BoolVal(f), model_completion=True)))


def _conclude(name: str, t0: float, r: Any, model: Any, reason: str,
              named: list[tuple[str, Any]]) -> QueryResult:
    secs = time.perf_counter() - t0
    if r == z3.unsat:
        return QueryResult(name, "proved", secs)
    if r == z3.unknown:
        return QueryResult(name, "unknown", secs, reason=reason)
    return QueryResult(name, "failed", secs, broken=_violated(model, named))


def query_base(spec: Spec, timeout: float | None = None) -> QueryResult:
    """Init => I (unsat of Init /\\ not I = proved)."""
    t0 = time.perf_counter()
    s = fresh_state(spec, "s")
    inv = invariant(s)
    r, model, why = _solve([init(s), not_(and_(*[f for _, f in inv]))], timeout)
    return _conclude("base", t0, r, model, why, inv)


def query_safety(spec: Spec, timeout: float | None = None) -> QueryResult:
    """I => no-smaller-final."""
    t0 = time.perf_counter()
    s = fresh_state(spec, "s")
    inv = invariant(s)
    r, model, why = _solve([*(f for _, f in inv), not_(safety(s))], timeout)
    return _conclude("safety", t0, r, model, why, [("no-smaller-final", safety(s))])


def _transition(spec: Spec, kind: str) -> tuple[SymState, Any, SymState, list[Any], Any]:
    """A pre-state, the guard, the post-state, the range of the transition's parameters
    and its host: x is slot 0 (slots are symmetric), the hosts are symbolic."""
    s = fresh_state(spec, "s")
    h, j = z3.Int("act.h"), z3.Int("act.j")
    guard, t = successor(s, kind, h=h, x=0, j=j)
    return s, guard, t, [h >= 0, h < spec.n, j >= 0, j < spec.n], h


def query_order(spec: Spec, timeout: float | None = None) -> QueryResult:
    """I /\\ h delivers x => every message h delivered has a final timestamp below
    F(x)."""
    t0 = time.perf_counter()
    s, guard, _, ranges, h = _transition(spec, "deliver")
    inv = invariant(s)
    asc = ascending(s, h, 0)
    r, model, why = _solve([*ranges, *(f for _, f in inv), guard, not_(asc)], timeout)
    return _conclude("order", t0, r, model, why, [("ascending", asc)])


def query_step(spec: Spec, kind: str, timeout: float | None = None) -> QueryResult:
    """I /\\ guard => I' /\\ bounds-grow, for one kind of transition; a failed query
    whose transition cannot fire from I at all says so (``vacuous``)."""
    t0 = time.perf_counter()
    s, guard, t, ranges, _ = _transition(spec, kind)
    pre = [f for _, f in invariant(s)]
    post = invariant(t) + [("bounds-grow", bounds_grow(s, t))]
    r, model, why = _solve([*ranges, *pre, guard, not_(and_(*[f for _, f in post]))],
                           timeout)
    out = _conclude(f"{kind}", t0, r, model, why, post)
    if out.status == "proved":
        # a transition that never fires from I would make the step vacuous
        r2, _, _ = _solve([*ranges, *pre, guard], timeout)
        if r2 == z3.unsat:
            out.status, out.reason = "unknown", "vacuous: never enabled"
        elif r2 == z3.unknown:
            out.status, out.reason = "unknown", "enabledness unknown"
        out.seconds = time.perf_counter() - t0
    return out


def prove_protocol(protocol: str, n: int, variant: str | None = None,
                   timeout: float | None = None, search: bool = True,
                   max_steps: int | None = None) -> TsOutcome:
    """Decide base, every step, safety and order for ``n`` hosts. When a query fails and
    ``search`` is set, look for a violating run by bounded model checking (two messages,
    up to ``max_steps``), and replay it on the model (``ts_replay.validate``: a run the
    model does not reproduce raises ReplayMismatch, an internal error)."""
    t0 = time.perf_counter()
    spec = Spec(protocol, n, STEP_SLOTS, variant)
    small = Spec(protocol, n, STATE_SLOTS, variant)
    out = TsOutcome(protocol, variant, n, "proved", 0.0)
    out.queries.append(query_base(small, timeout))
    for kind in KINDS:
        out.queries.append(query_step(spec, kind, timeout))
    out.queries.append(query_safety(small, timeout))
    out.queries.append(query_order(small, timeout))
    statuses = {q.status for q in out.queries}
    if "failed" in statuses:
        out.status = "unknown"
        failed = [q for q in out.queries if q.status == "failed"]
        steps = [q for q in failed if q.name in KINDS]
        notes = ["not inductive: " + "; ".join(
            f"{q.name} breaks {', '.join(q.broken)}" for q in steps)] if steps else []
        notes += [f"{q.name} fails ({', '.join(q.broken)})" for q in failed
                  if q.name not in KINDS]
        out.note = "; ".join(notes)
        if search:
            out.search = bmc(protocol, n, variant, max_steps=max_steps, timeout=timeout)
            if out.search.run is not None:
                validate(out.search.run)  # raises ReplayMismatch unless the model agrees
                out.status = "counterexample"
    elif "unknown" in statuses:
        out.status = "unknown"
    out.seconds = time.perf_counter() - t0
    return out
