"""Bounded model checking of ABCAST and TOMP from the initial state: a shortest run,
made of the transitions of ``timestamps.py``, after which two hosts' deliveries break
total order. It refutes the broken variants with a *reachable* counterexample (an
inductive step's counterexample may start from a state no run reaches).

A step is one input of the model, composed from the transitions (``macro``):
``multicast``; ``data``, a reception followed at once by the emitter's collection of its
ack; ``final``, a validation message. Each is followed by the deliveries the model
makes within that input (``AbcastProcess`` delivers eagerly; ``deliver-ud`` delivers on
data too), so the run and the model agree step for step. Collecting acks at once loses
no run: a collected ack only brings the decision nearer, and the validation messages
are received by steps of their own whenever the run chooses. Every slot is a message
(senders symbolic, identifiers 1, 2, ... per sender in slot order), and each source's
data is received in sequence (TOMP's own rule; for ABCAST it keeps the run possible on
the simulator's FIFO links (model/sim.py) rather than an artefact of reordering).

The target (``violation``) is what ``tomkit check`` calls total-order-strong: host a
delivers x before y, and host b delivers y without x before it (b delivering y before
x, the weak form, is a case of it). Depths are tried upwards from a lower bound on any
violating run (``min_steps``: unless dl is skipped, both messages must be decided, so
every host received both), so the first run found is a shortest one.

Partial-order reduction: steps of different hosts commute unless one is a reception
that can decide the message of the other's validation message (``independent``); of
two adjacent independent steps the run takes the one listed first, which keeps one
representative of every class of equivalent runs (the lexicographically least), hence
every reachable final state. Numbers are bit-vectors with proved ranges (``bounds``):
Z3 bit-blasts each depth to SAT, seconds of solving at n = 8 where unbounded integers
took minutes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import z3

from tomkit.fuzz.prove.timestamps.state import (
    DONE,
    LABELS,
    Spec,
    SymState,
    and_,
    deliver_all,
    fresh_state,
    implies,
    init,
    or_,
    successor,
)

__all__ = ["BmcResult", "HostSnapshot", "Run", "RunStep", "Snapshot", "actions", "bmc",
           "bounds", "independent", "macro", "min_steps", "violation", "width"]


@dataclass(frozen=True)
class RunStep:
    """One input of the model (``kind``: multicast, data, final) at ``host`` (the sender
    for multicast), for message ``msg``, and the deliveries it caused there, in order.
    ``data`` includes the emitter's collection of the ack (module docstring)."""

    kind: str
    host: int
    msg: str
    delivered: tuple[str, ...] = ()

    def __str__(self) -> str:
        what = {"multicast": f"p{self.host} multicasts {self.msg}",
                "data": f"p{self.host} receives {self.msg} (the emitter collects its ack)",
                "final": f"p{self.host} receives the final timestamp of {self.msg}"}
        out = what[self.kind]
        return out + (f" and delivers {', '.join(self.delivered)}" if self.delivered else "")


@dataclass(frozen=True)
class HostSnapshot:
    """What Z3 says one host holds after a step: counter, TOMP next_mid (for the hosts
    that send a message of the run), and per message it received (label, timestamp
    ``(counter, host)``)."""

    counter: int
    next_mid: dict[int, int]
    entries: dict[str, tuple[str, tuple[int, int]]]


@dataclass(frozen=True)
class Snapshot:
    """The hosts after a step, and per decided message its validation message: final
    timestamp and, TOMP, min_next_mid and max_next_ts (for the hosts that send a message
    of the run)."""

    hosts: tuple[HostSnapshot, ...]
    finals: dict[str, tuple[tuple[int, int], dict[int, int], dict[int, tuple[int, int]]]]


@dataclass(frozen=True)
class Run:
    """A run from the initial state, as plain data: messages (id, sender, identifier),
    the steps, the state after each step (to replay against), and the violation: host
    ``a`` delivers ``x`` before ``y``, host ``b`` delivers ``y`` without ``x`` before."""

    protocol: str
    variant: str | None
    n: int
    messages: tuple[tuple[str, int, int], ...]
    steps: tuple[RunStep, ...]
    snapshots: tuple[Snapshot, ...]
    violation: tuple[int, int, str, str]

    @property
    def name(self) -> str:
        return self.protocol + (f"[{self.variant}]" if self.variant else "")


@dataclass
class BmcResult:
    """``run`` is None when no violation exists within ``depth`` steps (or, with
    ``status`` unknown, when Z3 gave up)."""

    status: str  # counterexample | none | unknown
    depth: int
    seconds: float
    run: Run | None = None
    reason: str = ""
    per_depth: list[tuple[int, float]] = field(default_factory=list)


def min_steps(spec: Spec) -> int:
    """A lower bound on the length of any violating run (module docstring): 2 multicasts
    and either 3 receptions (``deliver-ud``) or 2n receptions and 3 validation
    messages."""
    if spec.variant == "deliver-ud":
        return 5
    return 2 * spec.n + 5


def violation(s: SymState) -> Any:
    """Some hosts a != b and messages x != y: a delivered x before y, b delivered y and
    not x before it."""
    out = []
    for a in s.hosts:
        for b in s.hosts:
            if a == b:
                continue
            for x in s.slots:
                for y in s.slots:
                    if x == y:
                        continue
                    out.append(and_(s.st[a][x] == DONE, s.st[a][y] == DONE,
                                    s.dpos[a][x] < s.dpos[a][y], s.st[b][y] == DONE,
                                    or_(s.st[b][x] != DONE, s.dpos[b][y] < s.dpos[b][x])))
    return or_(*out)


def _flat(s: SymState) -> list[Any]:
    """The variables that change from step to step."""
    out = list(s.bc) + list(s.sent) + list(s.c) + [v for r in s.nm for v in r]
    for rows in (s.st, s.tc, s.ti, s.frcv, s.acol, s.dpos):
        out += [v for r in rows for v in r]
    return out + list(s.ndel)


def _once(s: SymState) -> list[Any]:
    """The variables written once, when j receives m (its proposal and TOMP's copy of
    next_mid), and read only after: one constant for the whole run, not one per step."""
    return [v for r in s.pc for v in r] + [v for r in s.anm for w in r for v in w]


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, z3.ExprRef) and isinstance(b, z3.ExprRef):
        return z3.eq(a, b)
    return a is b


def actions(spec: Spec) -> list[tuple[str, int, int]]:
    """Every step as (kind, host, slot): one Boolean per step each."""
    out = [("multicast", 0, m) for m in range(spec.slots)]
    for k in ("data", "final"):
        out += [(k, g, m) for g in range(spec.n) for m in range(spec.slots)]
    return out


def macro(s: SymState, kind: str, g: int, m: int) -> tuple[Any, SymState]:
    """One input of the model as transitions of ``timestamps.py``: a data reception with
    the ack's collection, a validation message, each followed by the deliveries the
    model makes at once (``deliver-ud`` delivers on data too)."""
    if kind == "multicast":
        return successor(s, "multicast", x=m)
    if kind == "data":
        g1, t = successor(s, "data", g, m)
        g2, t = successor(t, "ack", x=m, j=g)
        # each source's data in sequence (slots are in identifier order per sender):
        # TOMP's own guard; for ABCAST, runs of FIFO links, not artefacts of reordering
        inseq = [implies(s.snd[o] == s.snd[m], s.rcv(g, o)) for o in range(m)]
        guard = and_(g1, g2, *inseq)
    else:
        guard, t = successor(s, "final", g, m)
    return guard, deliver_all(t, g)


def independent(a: tuple[str, int, int], b: tuple[str, int, int]) -> bool:
    """Two steps that commute from every state where one follows the other: different
    hosts, and not a reception that may complete the decision of the message whose
    validation message the other receives. Multicasts are taken as dependent on all
    (their senders are symbolic)."""
    if a[0] == "multicast" or b[0] == "multicast" or a[1] == b[1]:
        return False
    if {a[0], b[0]} == {"data", "final"} and a[2] == b[2]:
        return False
    return True


def _step(spec: Spec, s: SymState, t: int, ids: tuple[list[Any], list[Any]],
          prev: list[Any] | None, w: int) -> tuple[list[Any], SymState, list[Any]]:
    """Constraints making a fresh state the successor of ``s`` by exactly one step. One
    Boolean per concrete step (rather than integers naming one) keeps every variable's
    next value a choice among the few steps that write it. Partial-order reduction:
    of two adjacent independent steps, the one listed first in ``actions`` comes first,
    which every run has an equivalent of (its lexicographically least reordering), so
    no violating final state is lost."""
    acts = actions(spec)
    chosen = [z3.Bool(f"a{t}.{k}.{g}.{m}") for k, g, m in acts]
    nxt = fresh_state(spec, f"t{t + 1}", used=True, ids=ids, width=w)
    nxt.pc, nxt.anm = s.pc, s.anm
    old, once = _flat(s), _once(s)
    writes: list[list[tuple[Any, Any]]] = [[] for _ in old]
    cs: list[Any] = [z3.PbEq([(b, 1) for b in chosen], 1)]
    for b, (k, g, m) in zip(chosen, acts):
        guard, post = macro(s, k, g, m)
        cs.append(z3.Implies(b, guard) if guard is not True else True)
        for pos, v in enumerate(_flat(post)):
            if not _same(v, old[pos]):
                writes[pos].append((b, v))
        for pos, v in enumerate(_once(post)):
            if not _same(v, once[pos]):
                cs.append(z3.Implies(b, once[pos] == v))
    for pos, new in enumerate(_flat(nxt)):
        expr = old[pos]
        for b, v in writes[pos]:
            expr = z3.If(b, v, expr)
        cs.append(new == expr)
    if prev is not None:
        for i, a in enumerate(acts):
            for k in range(i):
                if independent(a, acts[k]):
                    cs.append(z3.Not(z3.And(prev[i], chosen[k])))
    return cs, nxt, chosen


def bounds(s: SymState, first: bool) -> list[Any]:
    """Ranges of a state's integers that every run respects (the bit-blasted solver
    needs bounded integers). Counters and proposals never exceed the number of
    receptions so far, n * M (a reception adds one, a raise copies a proposal, itself a
    counter plus one); TOMP's raised timestamps add at most max_next_ts's one and Delta
    < M. ``first``: also the run's constants (identifiers, proposals, ack copies)."""
    n, M = s.n, s.spec.slots
    top = n * M + M

    def rng(xs: Any, lo: int, hi: int) -> list[Any]:
        return [z3.And(x >= lo, x <= hi) for x in xs]

    out = (rng(s.sent, 0, M) + rng(s.c, 0, n * M) + rng(s.ndel, 0, M)
           + rng([x for r in s.nm for x in r], 1, M + 1)
           + rng([x for r in s.st for x in r], 0, 3)
           + rng([x for r in s.tc for x in r], 0, top)
           + rng([x for r in s.ti for x in r], 0, n - 1)
           + rng([x for r in s.dpos for x in r], 0, M))
    if first:
        out += (rng(s.sq, 1, M) + rng([x for r in s.pc for x in r], 0, n * M)
                + rng([x for r in s.anm for w in r for x in w], 1, M + 1))
    return out


def width(spec: Spec) -> int:
    """Bits of the run's numbers: signed, room for every bound and a difference."""
    return 2 + (2 * (spec.n * spec.slots + spec.slots + 1)).bit_length()


def _solver(seconds: float | None) -> z3.Solver:
    """The numbers are bit-vectors in their ranges (``bounds``), so Z3 bit-blasts the
    whole run to SAT; unbounded integers took it minutes at n = 8. A tactic ignores the
    solver's timeout parameter: ``TryFor`` bounds it."""
    t = z3.Then("simplify", "propagate-values", "solve-eqs", "bit-blast", "sat")
    if seconds is not None:
        t = z3.TryFor(t, max(1, int(seconds * 1000)))
    return t.solver()


def bmc(protocol: str, n: int, variant: str | None, slots: int = 2,
        max_steps: int | None = None, timeout: float | None = None) -> BmcResult:
    """Search a shortest violating run with ``slots`` messages, up to ``max_steps``
    (default: ``min_steps + 6``). ``timeout`` bounds the whole search (seconds)."""
    spec = Spec(protocol, n, slots, variant, order=True)
    lo = min_steps(spec)
    hi = lo + 6 if max_steps is None else max_steps  # below lo: none, by the bound
    t0 = time.perf_counter()
    w = width(spec)
    s0 = fresh_state(spec, "t0", used=True, width=w)
    ids = (s0.snd, s0.sq)
    cs: list[Any] = [init(s0), *bounds(s0, True)]
    one, zero = z3.BitVecVal(1, w), z3.BitVecVal(0, w)
    for m in s0.slots:
        cs.append(z3.And(s0.snd[m] >= 0, s0.snd[m] < n))
        # identifiers 1, 2, ... per sender, in slot order (3.2.2.1)
        same = [z3.If(s0.snd[o] == s0.snd[m], one, zero) for o in range(m)]
        cs.append(s0.sq[m] == sum(same, one))
    states: list[SymState] = [s0]
    acts: list[list[Any]] = []
    out = BmcResult("none", hi, 0.0)
    for t in range(hi):
        left = None if timeout is None else timeout - (time.perf_counter() - t0)
        if left is not None and left <= 0:
            out.status, out.reason, out.depth = "unknown", "timeout", t
            break
        step, nxt, act = _step(spec, states[-1], t, ids, acts[-1] if acts else None, w)
        cs += step + bounds(nxt, False)
        states.append(nxt)
        acts.append(act)
        if t + 1 < lo:
            continue
        left = None if timeout is None else timeout - (time.perf_counter() - t0)
        if left is not None and left <= 0:
            out.status, out.reason, out.depth = "unknown", "timeout", t + 1
            break
        solver = _solver(left)
        t1 = time.perf_counter()
        solver.add(cs)
        solver.add(violation(nxt))
        r = solver.check()
        out.per_depth.append((t + 1, time.perf_counter() - t1))
        if r == z3.sat:
            out.status, out.depth = "counterexample", t + 1
            out.run = _extract(spec, solver.model(), states, acts)
            break
        if r == z3.unknown:
            why = solver.reason_unknown()
            late = timeout is not None and time.perf_counter() - t0 >= timeout
            out.status, out.depth = "unknown", t + 1
            out.reason = "timeout" if late or "cancel" in why.lower() else why
            break
    out.seconds = time.perf_counter() - t0
    return out


def _extract(spec: Spec, model: z3.ModelRef, states: list[SymState],
             acts: list[list[Any]]) -> Run:
    def v(x: Any) -> Any:
        if isinstance(x, (bool, int)):
            return x
        r = model.eval(x, model_completion=True)
        return z3.is_true(r) if z3.is_bool(r) else r.as_signed_long()

    s0 = states[0]
    senders = [v(s0.snd[m]) for m in s0.slots]
    seqs = [v(s0.sq[m]) for m in s0.slots]
    mids = [f"p{k}.{q}" for k, q in zip(senders, seqs)]
    steps = []
    table = actions(spec)
    for t, chosen in enumerate(acts):
        k, g, m = next(a for b, a in zip(chosen, table) if v(b))
        pre, post = states[t], states[t + 1]
        new = [o for o in post.slots if v(post.st[g][o]) == DONE and v(pre.st[g][o]) != DONE]
        new.sort(key=lambda o: v(post.dpos[g][o]))
        steps.append(RunStep(k, senders[m] if k == "multicast" else g, mids[m],
                             tuple(mids[o] for o in new)))
    snaps = []
    for s in states[1:]:
        hosts = []
        for h in s.hosts:
            entries = {}
            for m in s.slots:
                lab = v(s.st[h][m])
                if lab:
                    entries[mids[m]] = (LABELS[lab], (v(s.tc[h][m]), v(s.ti[h][m])))
            nxt = {senders[m]: v(x) for m, x in enumerate(s.nm[h])}
            hosts.append(HostSnapshot(v(s.c[h]), nxt, entries))
        finals = {}
        for m in s.slots:
            if v(s.decided(m)):
                f = s.final(m)
                mnm = {senders[b]: v(x) for b, x in enumerate(s.min_next_mid(m))
                       } if spec.tomp else {}
                mnt = {senders[b]: (v(c), v(i)) for b, (c, i) in enumerate(s.max_next_ts(m))
                       } if spec.tomp else {}
                finals[mids[m]] = ((v(f[0]), v(f[1])), mnm, mnt)
        snaps.append(Snapshot(tuple(hosts), finals))
    last = states[-1]
    found = None
    for a in last.hosts:
        for b in last.hosts:
            for x in last.slots:
                for y in last.slots:
                    if a != b and x != y and found is None and v(and_(
                            last.st[a][x] == DONE, last.st[a][y] == DONE,
                            last.dpos[a][x] < last.dpos[a][y], last.st[b][y] == DONE,
                            or_(last.st[b][x] != DONE,
                                last.dpos[b][y] < last.dpos[b][x]))):
                        found = (a, b, mids[x], mids[y])
    assert found is not None, "the model satisfies the violation"
    return Run(spec.protocol, spec.variant, spec.n,
               tuple(zip(mids, senders, seqs)), tuple(steps), tuple(snaps), found)
