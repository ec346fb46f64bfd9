"""Synthetic trace generators: clean executions, planted faults with ground truth, bulk tables.

The synthetic execution model
-----------------------------
Processes are ``p0 .. p{n-1}``; messages are ``m0 .. m{M-1}``, multicast to every process in
that global order by random senders at increasing times (exponential gaps, mean
``MEAN_GAP``). The system behaves like a sequencer: every process delivers every message in
the global order ``m0, m1, ...``, which is therefore consistent with causality and with
per-sender FIFO order. Process ``p`` delivers ``m`` at
``max(previous delivery at p + tiny, send time of m + delay)`` with the delay uniform in
``[DELAY_MIN, DELAY_MAX]``, so delivery times strictly increase per process and no delivery
is ever later than ``DELAY_MAX`` after its send (``LATENCY_BOUND`` is twice that).
A send's ``deps`` are the latest message its sender had delivered at send time plus the
sender's own previous message (sorted by message number): both are earlier messages.
``recv`` events happen at a uniform time between a message's send and its delivery, so
processes receive in a different order than they deliver (network reordering).

With views every process installs ``v1`` (all members) at time 0 and, at the end, ``v2``.
With a crash, one process ``c`` crashes at a time ``T`` chosen between the sends of
``m{K-2}`` and ``m{K-1}`` (so at least one message of ``v1`` is sent after the crash), having
delivered whatever it delivered before ``T`` (a prefix) and having sent only messages before
``T``. The survivors deliver all of ``m0 .. m{K-1}`` in ``v1``, then install ``v2`` without
``c``; the messages ``m{K} ..`` are sent by survivors after every survivor installed ``v2``
and are delivered in ``v2``. Virtual synchrony thus holds.

Properties
----------
The ground truths name properties of ``tomkit check``; their exact definitions are in
docs/properties.md (this module, the bottom layer, does not import the checker). The tests
check every planted trace with the checker itself.

Faults (``FAULTS``, ``faulty_trace``) plant one violation each with the least collateral
damage; ``FAULT_DESCRIPTIONS`` and the ground truth's ``also_violates`` state exactly which
other properties a planted trace violates.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np
import pyarrow as pa

from tomkit.traces.schema import ARROW_SCHEMA

__all__ = [
    "DELAY_MAX",
    "DELAY_MIN",
    "FAULTS",
    "FAULT_DESCRIPTIONS",
    "LATENCY_BOUND",
    "MEAN_GAP",
    "PROPERTIES",
    "SLOW_FACTOR",
    "bulk_table",
    "clean_trace",
    "clean_traces",
    "faulty_trace",
    "generate_mixed",
]

_T = TypeVar("_T")
# A seed for numpy.random.default_rng: an int, or ints mixed into one seed sequence.
Seed = int | Sequence[int]

MEAN_GAP = 0.01
DELAY_MIN = 0.005
DELAY_MAX = 0.05
LATENCY_BOUND = 2 * DELAY_MAX
SLOW_FACTOR = 10.0
# Strict per-process increase of delivery times; far below any real gap.
_EPS = 1e-6
# Time taken by events that follow another one "immediately" (view install, crash, a
# duplicate or phantom delivery); small against DELAY_MIN so latency stays within bound.
_INSTANT = 1e-4
# Gap forced between two sends that must be concurrent: below DELAY_MIN nobody can have
# delivered the first when the second is sent, so neither lists the other in its deps.
_TIGHT = (0.1, 0.3)

_TABLE_ROWS = 1_000_000

PROPERTIES: tuple[str, ...] = (
    "integrity",
    "total-order-weak",
    "total-order-strong",
    "prefix-order",
    "global-order",
    "causal-order",
    "fifo-order",
    "view-agreement",
    "same-view-delivery",
    "sending-view-delivery",
    "virtual-synchrony",
    "agreement",
    "validity",
    "liveness",
    "latency",
)

FAULTS: dict[str, str] = {
    "duplicate-delivery": "integrity",
    "unsent-delivery": "integrity",
    "swap": "total-order-weak",
    "gap": "total-order-strong",
    "cycle3": "global-order",
    "causal": "causal-order",
    "fifo": "fifo-order",
    "view-mismatch": "virtual-synchrony",
    "wrong-view": "sending-view-delivery",
    "lost": "liveness",
    "slow": "latency",
    "split-view": "view-agreement",
    "uniform": "agreement",
}

FAULT_DESCRIPTIONS: dict[str, str] = {
    "duplicate-delivery": (
        "A correct process p delivers message m a second time right after the first "
        "delivery. Also violates: nothing else."
    ),
    "unsent-delivery": (
        "Every process that delivers m_j delivers, just before it, a message 'ghost0' that "
        "nobody sent (all at the same position, so orders and agreement hold). Also "
        "violates: nothing else. processes = those that deliver the ghost."
    ),
    "swap": (
        "A correct process p delivers two adjacent, concurrent messages of different senders "
        "in swapped order. Also violates: total-order-strong, prefix-order, global-order."
    ),
    "gap": (
        "A correct process q skips message m (the last message of its sender, acknowledged by "
        "nobody) and delivers everything else, including the next message m'. messages = "
        "[m, m']. Also violates: prefix-order, agreement and liveness (q never delivers "
        "m), and virtual-synchrony when "
        "views are on and q installs a view after m's view."
    ),
    "cycle3": (
        "The last three messages a, b, c (concurrent, distinct senders): p delivers a, b; "
        "q delivers b, c; r delivers c, a; every other process delivers a, b. Pairwise "
        "agreement holds, no common sequence exists. Also violates: total-order-strong, "
        "prefix-order, agreement, validity when one of p, q, r sent the message it skips, "
        "liveness, and virtual-synchrony when views are on and a view change follows them."
    ),
    "causal": (
        "Message b lists the concurrent, earlier-sent a (other sender) in its deps, and every "
        "process delivers b before a (b's sender received a before sending b). messages = "
        "[a, b]; processes = those that deliver b. Also violates: nothing else."
    ),
    "fifo": (
        "Two consecutive messages a, b of one sender, b not depending on a, delivered by every "
        "process as b before a. messages = [a, b]; processes = those that deliver b. Also "
        "violates: nothing else (causal order is judged on deps)."
    ),
    "view-mismatch": (
        "Forces views. A correct process q misses the last message m of v1 that the others "
        "deliver in v1, installs v2 and then crashes; the others install v3 without q. Also "
        "violates: nothing else (q crashed, so liveness does not apply to it)."
    ),
    "wrong-view": (
        "Forces views. A correct process q installs v2 just before delivering the last "
        "message m of v1 (sent in v1), which it delivers in v2. Also violates: "
        "same-view-delivery, virtual-synchrony (q's epoch v1 -> v2 lacks m), and "
        "total-order-strong when messages are delivered in v2 after m (with a crash), since "
        "q's deliveries in v2 then follow m and the others' do not."
    ),
    "lost": (
        "A correct process q never delivers the last message m, which everyone else delivers. "
        "Also violates: agreement, validity when q sent m, and virtual-synchrony when "
        "views are on and m's view is followed by a "
        "view change (always with views and no crash)."
    ),
    "split-view": (
        "Forces views. A correct process q installs v1 with a member list that leaves out "
        "another process x, which the others' v1 lists. processes = [q, x]. Also violates: "
        "nothing else."
    ),
    "uniform": (
        "A correct process q sends the last message m, delivers it and crashes; no other "
        "process delivers m. Uniform agreement (Défago et al. 2004) is violated; the "
        "non-uniform form and liveness hold, as only a crashed process delivered m. Also "
        "violates: nothing else."
    ),
    "slow": (
        "A correct process p delivers the last message m SLOW_FACTOR * DELAY_MAX after its "
        "send; every other delivery is within DELAY_MAX (+ tiny). The ground truth has "
        "bound = LATENCY_BOUND. Also violates: nothing else."
    ),
}

_VIEW_FAULTS = frozenset({"view-mismatch", "wrong-view", "split-view"})
# Correct processes and messages a fault needs so that its pattern exists (another
# correct process to disagree with, a pair of messages, ...).
_MIN_CORRECT = {"swap": 2, "gap": 2, "cycle3": 3, "view-mismatch": 2, "lost": 2,
                "split-view": 2, "uniform": 2}
_MIN_MESSAGES = {"swap": 2, "gap": 2, "cycle3": 3, "causal": 2, "fifo": 2}

_GHOST = "ghost0"


# --------------------------------------------------------------------------------------
# One execution: plan (scripts of delivery items per process), schedule (times), render.
# --------------------------------------------------------------------------------------

# Script items, per process, in local order:
#   ("view", e)            install view e
#   ("deliver", i)         deliver message i
#   ("slow", i)            deliver message i SLOW_FACTOR * DELAY_MAX after its send
#   ("dup", i)             deliver message i again, immediately
#   ("ghost",)             deliver the never-sent message, immediately
#   ("view_before", e, i)  install view e just before the normal delivery time of i, then
#                          deliver i
#   ("crash",)             crash (at the process's deadline if it has one)


@dataclass
class _Plan:
    n: int
    m: int
    use_views: bool
    epoch_of: list[int]
    views: list[tuple[str, list[int], int | None]] = field(default_factory=list)
    scripts: list[list[tuple]] = field(default_factory=list)
    allowed: list[set[int]] = field(default_factory=list)
    victim: int | None = None
    cut: int = 0  # K: messages 0..K-1 are sent in v1
    distinct: list[list[int]] = field(default_factory=list)
    tight: list[int] = field(default_factory=list)
    no_ack: set[int] = field(default_factory=set)
    dep_add: tuple[int, int] | None = None
    dep_drop: tuple[int, int] | None = None
    #: (process, view index) -> the members that process's record lists (split-view)
    members_of: dict[tuple[int, int], list[int]] = field(default_factory=dict)


@dataclass
class _Schedule:
    send: np.ndarray
    timed: list[list[tuple[float, tuple]]]
    installs: list[dict[int, float]]


def _pick(rng: np.random.Generator, seq: Sequence[_T]) -> _T:
    return seq[int(rng.integers(len(seq)))]


def _distinct_ok(sets: list[set[int]]) -> bool:
    # Greedy over the nested allowed sets (all processes / survivors) is exact here.
    used: set[int] = set()
    for s in sorted(sets, key=len):
        free = s - used
        if not free:
            return False
        used.add(min(free))
    return True


def _swap_adjacent(script: list[tuple], i: int, j: int) -> None:
    a, b = ("deliver", i), ("deliver", j)
    if a in script and b in script:
        ia, ib = script.index(a), script.index(b)
        script[ia], script[ib] = b, a


def _base_plan(rng: np.random.Generator, n: int, m: int, *, views: bool, crash: bool,
               fault: str | None) -> _Plan:
    if n < 1 or m < 1:
        raise ValueError("need at least one process and one message")
    use_views = views or crash or fault in _VIEW_FAULTS
    victim = None
    cut = m
    if crash:
        if n < 2:
            raise ValueError("crash=True needs at least 2 processes")
        victim = int(rng.integers(n))
        # cycle3 uses the last three messages, which must share a view.
        choices = [*range(1, m - 2), m] if fault == "cycle3" else list(range(1, m + 1))
        cut = _pick(rng, choices)
    everyone = list(range(n))
    correct = [p for p in everyone if p != victim]
    plan = _Plan(n=n, m=m, use_views=use_views, victim=victim, cut=cut,
                 epoch_of=[0 if i < cut else 1 for i in range(m)])
    if use_views:
        plan.views = [("v1", everyone, None), ("v2", correct, victim)]
    # The victim crashes between the sends of m{K-2} and m{K-1}; it may send only before.
    plan.allowed = [set(everyone) if (victim is None or i < cut - 1) else set(correct)
                    for i in range(m)]
    for p in everyone:
        s: list[tuple] = [("view", 0)] if use_views else []
        s += [("deliver", i) for i in range(cut)]
        if p == victim:
            s.append(("crash",))
        else:
            if use_views:
                s.append(("view", 1))
            s += [("deliver", i) for i in range(cut, m)]
        plan.scripts.append(s)
    return plan


def _plant(rng: np.random.Generator, plan: _Plan, fault: str) -> dict:
    """Edit the plan to carry ``fault``; return the ground-truth skeleton (indices)."""
    n, m = plan.n, plan.m
    correct = [p for p in range(n) if p != plan.victim]
    if len(correct) < _MIN_CORRECT.get(fault, 1) or m < _MIN_MESSAGES.get(fault, 1):
        raise ValueError(f"fault {fault!r} needs at least {_MIN_CORRECT.get(fault, 1)} correct "
                         f"processes and {_MIN_MESSAGES.get(fault, 1)} messages")
    ep, allowed, scripts = plan.epoch_of, plan.allowed, plan.scripts
    pairs = [i for i in range(m - 1) if ep[i] == ep[i + 1]]
    truth: dict = {"also": []}

    if fault == "duplicate-delivery":
        p, i = _pick(rng, correct), int(rng.integers(m))
        s = scripts[p]
        s.insert(s.index(("deliver", i)) + 1, ("dup", i))
        truth.update(procs=[p], msgs=[i])
    elif fault == "unsent-delivery":
        j = int(rng.integers(m))
        for s in scripts:
            if ("deliver", j) in s:
                s.insert(s.index(("deliver", j)), ("ghost",))
        truth.update(procs=None, who=("ghost",), msgs=[_GHOST])
    elif fault in ("swap", "causal"):
        cands = [i for i in pairs if _distinct_ok([allowed[i], allowed[i + 1]])]
        if not cands:
            raise ValueError(f"fault {fault!r}: no pair of messages fits")
        i = _pick(rng, cands)
        plan.distinct.append([i, i + 1])
        plan.tight.append(i + 1)
        if fault == "swap":
            p = _pick(rng, correct)
            _swap_adjacent(scripts[p], i, i + 1)
            truth.update(procs=[p], msgs=[i, i + 1],
                         also=["total-order-strong", "global-order"])
        else:
            plan.dep_add = (i + 1, i)
            for s in scripts:
                _swap_adjacent(s, i, i + 1)
            truth.update(procs=None, who=("deliver", i + 1), msgs=[i, i + 1])
    elif fault == "fifo":
        cands = [i for i in pairs if allowed[i] & allowed[i + 1]]
        if not cands:
            raise ValueError("fault 'fifo': no pair of messages fits")
        i = _pick(rng, cands)
        sender = _pick(rng, sorted(allowed[i] & allowed[i + 1]))
        allowed[i], allowed[i + 1] = {sender}, {sender}
        plan.tight.append(i + 1)
        plan.dep_drop = (i + 1, i)
        for s in scripts:
            _swap_adjacent(s, i, i + 1)
        truth.update(procs=None, who=("deliver", i + 1), msgs=[i, i + 1])
    elif fault == "gap":
        # m must be its sender's last message and nobody's dep, or the skip would also
        # break FIFO / causal order at q.
        cands = [(i, s) for i in range(m - 1) for s in sorted(allowed[i])
                 if all(allowed[j] - {s} for j in range(i + 1, m))
                 and any(q != s for q in correct)]
        if not cands:
            raise ValueError("fault 'gap': no message fits")
        i, sender = _pick(rng, cands)
        allowed[i] = {sender}
        for j in range(i + 1, m):
            allowed[j].discard(sender)
        plan.no_ack.add(i)
        q = _pick(rng, [p for p in correct if p != sender])
        scripts[q].remove(("deliver", i))
        truth.update(procs=[q], msgs=[i, i + 1], also=["liveness"], vsync_if=(q, i))
    elif fault == "cycle3":
        a, b, c = m - 3, m - 2, m - 1
        plan.distinct.append([a, b, c])
        plan.tight += [b, c]
        p, q, r = (int(x) for x in rng.choice(correct, 3, replace=False))
        for x, s in enumerate(scripts):
            if x == q:
                s.remove(("deliver", a))
            elif x == r:
                s.remove(("deliver", b))
                _swap_adjacent(s, a, c)
            elif ("deliver", c) in s:
                s.remove(("deliver", c))
        truth.update(procs=[p, q, r], msgs=[a, b, c],
                     also=["total-order-strong", "liveness"], vsync_if=(p, a))
    elif fault == "view-mismatch":
        q, i = _pick(rng, correct), plan.cut - 1
        s = scripts[q]
        s.remove(("deliver", i))
        del s[s.index(("view", 1)) + 1:]
        s.append(("crash",))
        for j in range(plan.cut, m):
            allowed[j].discard(q)
        for p in correct:
            if p != q:
                scripts[p].append(("view", 2))
        plan.views.append(("v3", [p for p in plan.views[1][1] if p != q], q))
        truth.update(procs=[q], msgs=[i])
    elif fault == "wrong-view":
        q, i = _pick(rng, correct), plan.cut - 1
        s = scripts[q]
        s.remove(("view", 1))
        s[s.index(("deliver", i))] = ("view_before", 1, i)
        truth.update(procs=[q], msgs=[i])
        if plan.cut < m:
            # q's deliveries in v2 now follow m, the others' do not: the per-view strong
            # order (same predecessor within a view) breaks at the first message of v2
            truth["also"].append("total-order-strong")
    elif fault == "lost":
        q = _pick(rng, correct)
        scripts[q].remove(("deliver", m - 1))
        truth.update(procs=[q], msgs=[m - 1], vsync_if=(q, m - 1))
    elif fault == "split-view":
        # q's record of v1 leaves out another process x: one view id, two member sets
        q = _pick(rng, correct)
        x = _pick(rng, [p for p in range(n) if p != q])
        plan.members_of[(q, 0)] = [p for p in plan.views[0][1] if p != x]
        truth.update(procs=[q, x], msgs=[])
    elif fault == "uniform":
        # q sends the last message, delivers it and crashes; nobody else delivers it
        q = _pick(rng, correct)
        allowed[m - 1] = {q}
        for p in range(n):
            if p != q and ("deliver", m - 1) in scripts[p]:
                scripts[p].remove(("deliver", m - 1))
        # it crashes right after, before any later view: no view change shows the loss
        s = scripts[q]
        del s[s.index(("deliver", m - 1)) + 1:]
        s.append(("crash",))
        truth.update(procs=[q], msgs=[m - 1])
    elif fault == "slow":
        p = _pick(rng, correct)
        s = scripts[p]
        s[s.index(("deliver", m - 1))] = ("slow", m - 1)
        truth.update(procs=[p], msgs=[m - 1], bound=LATENCY_BOUND)
    else:
        raise ValueError(f"unknown fault {fault!r}; known: {', '.join(FAULTS)}")
    return truth


def _draw_senders(rng: np.random.Generator, plan: _Plan) -> list[int]:
    senders = [_pick(rng, sorted(a)) for a in plan.allowed]
    for group in plan.distinct:
        used: set[int] = set()
        for i in sorted(group, key=lambda i: len(plan.allowed[i])):
            if senders[i] in used:
                senders[i] = _pick(rng, sorted(plan.allowed[i] - used))
            used.add(senders[i])
    return senders


def _schedule(plan: _Plan, gaps: np.ndarray, delays: np.ndarray, senders: list[int],
              deadline: dict[int, float]) -> _Schedule:
    """Give every script item a time; sends of view e start after all installed view e."""
    n, m = plan.n, plan.m
    send = np.full(m, np.nan)
    timed: list[list[tuple[float, tuple]]] = [[] for _ in range(n)]
    pos = [0] * n
    prev = [0.0] * n
    crashed_at: dict[int, float] = {}
    n_rounds = max(1, len(plan.views))
    installs: list[dict[int, float]] = [{} for _ in range(n_rounds)]

    def own_sends_before(p: int, e: int) -> float:
        ts = [send[j] for j in range(m) if senders[j] == p and plan.epoch_of[j] < e]
        return max(ts, default=0.0)

    def deliver_time(p: int, i: int) -> float:
        return max(prev[p] + _EPS, send[i] + delays[p, i])

    def install_time(p: int, e: int) -> float:
        if e == 0:
            return 0.0
        trig = plan.views[e][2]
        lo = max(prev[p], own_sends_before(p, e), crashed_at.get(trig, 0.0) if trig is not None
                 else 0.0)
        return lo + _INSTANT

    def ready(p: int, item: tuple, rnd: int) -> bool:
        kind = item[0]
        if kind in ("deliver", "slow", "view_before") and np.isnan(send[item[-1]]):
            return False
        if kind in ("view", "view_before"):
            e = item[1]
            trig = plan.views[e][2]
            if e > rnd + 1 or (trig is not None and trig not in crashed_at):
                return False
        return True

    def advance(p: int, rnd: int) -> bool:
        moved = False
        script = plan.scripts[p]
        while pos[p] < len(script) and ready(p, script[pos[p]], rnd):
            item = script[pos[p]]
            kind = item[0]
            out: list[tuple[float, tuple]]
            if kind == "deliver":
                out = [(deliver_time(p, item[1]), item)]
            elif kind == "slow":
                i = item[1]
                out = [(max(prev[p] + _EPS, send[i] + SLOW_FACTOR * DELAY_MAX), item)]
            elif kind in ("dup", "ghost"):
                out = [(prev[p] + _INSTANT, item)]
            elif kind == "view":
                out = [(install_time(p, item[1]), item)]
            elif kind == "view_before":
                e, i = item[1], item[2]
                t = deliver_time(p, i)
                lo = max(install_time(p, e) - _INSTANT, send[i])
                out = [((lo + t) / 2, ("view", e)), (t, ("deliver", i))]
            else:  # crash
                t = deadline.get(p, prev[p] + _INSTANT)
                crashed_at[p] = t
                out = [(t, item)]
            if p in deadline and kind != "crash" and out[-1][0] >= deadline[p]:
                # Crashed before this event: drop the rest up to the crash.
                pos[p] = script.index(("crash",))
                moved = True
                continue
            for t, it in out:
                timed[p].append((t, it))
                if it[0] == "view":
                    installs[it[1]][p] = t
                prev[p] = t
            pos[p] += 1
            moved = True
        return moved

    for rnd in range(n_rounds):
        idx = [i for i in range(m) if plan.epoch_of[i] == rnd]
        if idx:
            start = 0.0 if rnd == 0 else max(installs[rnd].values())
            send[idx] = start + np.cumsum(gaps[idx])
        while any([advance(p, rnd) for p in range(n)]):
            pass
    assert all(pos[p] == len(plan.scripts[p]) for p in range(n)), "schedule stalled"
    return _Schedule(send=send, timed=timed, installs=installs)


def _execute(trace_id: str, rng: np.random.Generator, *, n: int, m: int, views: bool,
             crash: bool, recv: bool, deps: bool, times: bool,
             fault: str | None) -> tuple[list[dict], dict | None]:
    plan = _base_plan(rng, n, m, views=views, crash=crash, fault=fault)
    skel = _plant(rng, plan, fault) if fault is not None else None
    senders = _draw_senders(rng, plan)

    gaps = rng.exponential(MEAN_GAP, m)
    for i in plan.tight:
        gaps[i] = rng.uniform(*_TIGHT) * DELAY_MIN
    deadline: dict[int, float] = {}
    if plan.victim is not None:
        k = plan.cut
        sends0 = np.cumsum(gaps[:k])
        lo = sends0[k - 2] if k >= 2 else 0.0
        deadline[plan.victim] = float(lo + rng.uniform(0.2, 0.8) * (sends0[k - 1] - lo))
    delays = rng.uniform(DELAY_MIN, DELAY_MAX, (n, m))
    sched = _schedule(plan, gaps, delays, senders, deadline)
    send = sched.send

    msg = [f"m{i}" for i in range(m)]
    proc = [f"p{i}" for i in range(n)]

    # deps: latest delivery at the sender before the send, plus the sender's previous message.
    dep_of: list[list[int]] = []
    last_own: dict[int, int] = {}
    # each process's script is in time order: the search for the latest delivery before
    # a send starts at the send's place (found by bisection), not at the script's end,
    # which made a trace of m messages cost m^2 / n steps (10,000 messages: 6 s)
    script_times = [[t for t, _ in sched.timed[p]] for p in range(n)]
    for i in range(m):
        s = senders[i]
        d: set[int] = set()
        timed = sched.timed[s]
        for k in range(bisect_left(script_times[s], send[i]) - 1, -1, -1):
            it = timed[k][1]
            if it[0] in ("deliver", "slow", "dup") and it[1] not in plan.no_ack:
                d.add(it[1])
                break
        if s in last_own and last_own[s] not in plan.no_ack:
            d.add(last_own[s])
        last_own[s] = i
        dep_of.append(sorted(d))
    if plan.dep_add is not None:
        b, a = plan.dep_add
        dep_of[b] = sorted({*dep_of[b], a})
    if plan.dep_drop is not None:
        b, a = plan.dep_drop
        dep_of[b] = [x for x in dep_of[b] if x != a]

    # Per-process events as (time, record); the script items are already in time order.
    events: list[list[tuple[float, int, dict]]] = [[] for _ in range(n)]

    def rec(p: int, kind: str, **kw: object) -> dict:
        return {"trace": trace_id, "process": proc[p], "kind": kind, **kw}

    for i in range(m):
        r = rec(senders[i], "send", msg=msg[i])
        if deps:
            r["deps"] = [msg[j] for j in dep_of[i]]
        events[senders[i]].append((float(send[i]), 0, r))
    for p in range(n):
        delivered: dict[int, float] = {}
        for k, (t, it) in enumerate(sched.timed[p]):
            kind = it[0]
            if kind == "view":
                name, members, _ = plan.views[it[1]]
                members = plan.members_of.get((p, it[1]), members)
                r = rec(p, "view", view=name, members=[proc[x] for x in members])
            elif kind == "crash":
                r = rec(p, "crash")
            elif kind == "ghost":
                r = rec(p, "deliver", msg=_GHOST)
            else:
                r = rec(p, "deliver", msg=msg[it[1]])
                delivered.setdefault(it[1], t)
            events[p].append((t, 1 + k, r))
        if recv:
            for i, t in delivered.items():
                lo = send[i]
                if plan.dep_add == (i + 1, i) and senders[i + 1] == p:
                    # b's sender acknowledges a, so it must have received a before sending b.
                    t = send[i + 1]
                u = rng.uniform(0.05, 0.95)
                events[p].append((float(lo + u * (t - lo)), 0, rec(p, "recv", msg=msg[i])))

    merged: list[tuple[float, int, int, dict]] = []
    for p in range(n):
        events[p].sort(key=lambda e: (e[0], e[1]))
        merged += [(t, p, k, r) for k, (t, _, r) in enumerate(events[p])]
    merged.sort(key=lambda e: (e[0], e[1], e[2]))
    records = []
    for t, _, _, r in merged:
        if times:
            r["time"] = float(round(t, 9))
        records.append(r)

    if skel is None:
        return records, None
    return records, _truth(trace_id, fault, skel, plan, sched, proc, msg, senders)


def _own_undelivered(sched: _Schedule, senders: list[int]) -> bool:
    """Whether a process that never crashes sent a message it never delivers (validity:
    Défago, Schiper and Urbán 2004, section 2.2), read off the schedule."""
    for p, items in enumerate(sched.timed):
        if any(it[0] == "crash" for _, it in items):
            continue
        got = {it[-1] for _, it in items
               if it[0] in ("deliver", "slow", "dup", "view_before")}
        if any(s == p and i not in got for i, s in enumerate(senders)):
            return True
    return False


#: the properties a fault's pattern always breaks beside its own (the descriptions say why)
_ALSO: dict[str, tuple[str, ...]] = {
    "swap": ("prefix-order",),
    "gap": ("prefix-order", "agreement"),
    "cycle3": ("prefix-order", "agreement"),
    "lost": ("agreement",),
    "wrong-view": ("same-view-delivery", "virtual-synchrony"),
}


def _truth(trace_id: str, fault: str, skel: dict, plan: _Plan, sched: _Schedule,
           proc: list[str], msg: list[str], senders: list[int]) -> dict:
    also = list(skel["also"]) + list(_ALSO.get(fault, ()))
    if _own_undelivered(sched, senders):
        also.append("validity")
    if "vsync_if" in skel and plan.use_views:
        p, i = skel["vsync_if"]
        nxt = plan.epoch_of[i] + 1
        # A skipped message only breaks virtual synchrony if a view change follows it.
        if nxt < len(sched.installs) and p in sched.installs[nxt]:
            also.append("virtual-synchrony")
    msgs = [x if isinstance(x, str) else msg[x] for x in skel["msgs"]]
    procs = skel["procs"]
    if procs is None:
        # Every process that delivers the planted message shows the pattern (a crashed
        # process may not have got that far).
        who = skel["who"]
        procs = [p for p in range(plan.n) if any(it == who for _, it in sched.timed[p])]
    truth = {
        "trace": trace_id,
        "fault": fault,
        "property": FAULTS[fault],
        "processes": [proc[p] for p in procs],
        "messages": msgs,
        "also_violates": [x for x in PROPERTIES if x in also],
    }
    if "bound" in skel:
        truth["bound"] = skel["bound"]
    return truth


# --------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------


def clean_trace(trace_id: str, *, n_processes: int = 4, n_messages: int = 20, seed: Seed = 0,
                views: bool = False, crash: bool = False, recv: bool = True, deps: bool = True,
                times: bool = True) -> list[dict]:
    """Records of one correct execution (see the module docstring), merged by time.

    ``crash`` implies ``views``. ``recv``/``deps``/``times`` switch those fields off.
    """
    rng = np.random.default_rng(seed)
    records, _ = _execute(trace_id, rng, n=n_processes, m=n_messages, views=views,
                          crash=crash, recv=recv, deps=deps, times=times, fault=None)
    return records


def clean_traces(n_traces: int, *, n_processes: int = 4, n_messages: int = 20, seed: int = 0,
                 **kw: bool) -> Iterator[dict]:
    """Records of traces ``t0, t1, ...``, each contiguous; trace k uses seed ``[seed, k]``."""
    for k in range(n_traces):
        yield from clean_trace(f"t{k}", n_processes=n_processes, n_messages=n_messages,
                               seed=[seed, k], **kw)


def faulty_trace(trace_id: str, fault: str, *, seed: Seed = 0,
                 **clean_kw: object) -> tuple[list[dict], dict]:
    """One execution carrying the planted ``fault``, and its ground truth.

    ``clean_kw`` are ``clean_trace``'s options. The ground truth is
    ``{"trace", "fault", "property", "processes", "messages", "also_violates"}`` (plus
    ``"bound"`` for "slow"): ``also_violates`` lists, for this very trace, every property
    other than ``property`` that it violates (see ``FAULT_DESCRIPTIONS``); all the others
    hold. Raises ValueError for an unknown fault or one that cannot fit the options (too
    few correct processes or messages).
    """
    if fault not in FAULTS:
        raise ValueError(f"unknown fault {fault!r}; known: {', '.join(FAULTS)}")
    opts = {"n_processes": 4, "n_messages": 20, "views": False, "crash": False,
            "recv": True, "deps": True, "times": True}
    unknown = set(clean_kw) - set(opts)
    if unknown:
        raise TypeError(f"unexpected options: {sorted(unknown)}")
    opts.update(clean_kw)
    if fault == "slow" and not opts["times"]:
        raise ValueError("fault 'slow' needs times=True: latency is not observable without")
    if fault == "causal" and not opts["deps"]:
        raise ValueError("fault 'causal' needs deps=True: causal order is judged on deps")
    base = [seed] if isinstance(seed, int) else list(seed)
    rng = np.random.default_rng([*base, 1 + list(FAULTS).index(fault)])
    records, truth = _execute(
        trace_id, rng, n=int(opts["n_processes"]), m=int(opts["n_messages"]),
        views=bool(opts["views"]), crash=bool(opts["crash"]), recv=bool(opts["recv"]),
        deps=bool(opts["deps"]), times=bool(opts["times"]), fault=fault)
    assert truth is not None
    return records, truth


def generate_mixed(n_traces: int, *, faulty: float = 0.1, seed: int = 0, n_processes: int = 4,
                   n_messages: int = 20, **kw: bool) -> tuple[list[dict], list[dict]]:
    """A data set of traces ``t0..``: about ``faulty * n_traces`` of them (chosen at random)
    carry one planted fault each, taking FAULTS round-robin (skipping faults that do not
    fit the options). Returns (records, ground truths in trace order)."""
    rng = np.random.default_rng(seed)
    n_bad = min(n_traces, int(round(faulty * n_traces)))
    bad = set(rng.choice(n_traces, n_bad, replace=False).tolist()) if n_bad else set()
    names = list(FAULTS)
    nxt = int(rng.integers(len(names)))
    records: list[dict] = []
    truths: list[dict] = []
    for k in range(n_traces):
        tid = f"t{k}"
        if k not in bad:
            records += clean_trace(tid, n_processes=n_processes, n_messages=n_messages,
                                   seed=[seed, k], **kw)
            continue
        for attempt in range(len(names)):
            fault = names[(nxt + attempt) % len(names)]
            try:
                recs, truth = faulty_trace(tid, fault, seed=[seed, k],
                                           n_processes=n_processes, n_messages=n_messages, **kw)
            except ValueError:
                continue
            nxt = (nxt + attempt + 1) % len(names)
            break
        else:
            raise ValueError("no fault fits these options")
        records += recs
        truths.append(truth)
    return records, truths


faulty_trace.__doc__ = (faulty_trace.__doc__ or "") + "\n    Faults:\n\n" + "".join(
    f"    {name} ({FAULTS[name]}): {text}\n" for name, text in FAULT_DESCRIPTIONS.items())


# --------------------------------------------------------------------------------------
# Bulk generation (vectorized)
# --------------------------------------------------------------------------------------


def bulk_table(n_traces: int, *, n_processes: int = 8, n_messages: int = 100,
               seed: int = 0) -> Iterator[pa.Table]:
    """Clean traces ``t0..`` as Arrow tables (``ARROW_SCHEMA``) of about 1M rows each.

    Same model as ``clean_trace`` without views, crashes and recv: per trace ``M`` sends
    (with deps) and ``n * M`` deliveries with times, merged by time; whole traces per
    table, in order. Table ``b`` draws from seed ``[seed, b]``.
    """
    n, m = n_processes, n_messages
    if n < 1 or m < 1:
        raise ValueError("need at least one process and one message")
    per_table = max(1, _TABLE_ROWS // (m * (n + 1)))
    names = _BulkNames(n, m)
    for b, start in enumerate(range(0, n_traces, per_table)):
        count = min(per_table, n_traces - start)
        yield _bulk_batch(np.random.default_rng([seed, b]), start, count, n, m, names)


class _BulkNames:
    def __init__(self, n: int, m: int) -> None:
        self.msg = pa.array([f"m{i}" for i in range(m)], pa.string())
        self.proc = pa.array([f"p{i}" for i in range(n)], pa.string())
        self.kind = pa.array(["send", "deliver"], pa.string())


def _bulk_batch(rng: np.random.Generator, start: int, count: int, n: int, m: int,
                names: _BulkNames) -> pa.Table:
    t_idx = np.arange(count)
    send = np.cumsum(rng.exponential(MEAN_GAP, (count, m)), axis=1)
    senders = rng.integers(0, n, (count, m))
    delays = rng.uniform(DELAY_MIN, DELAY_MAX, (count, n, m))
    # t_k = max(t_{k-1} + eps, a_k)  <=>  t_k = max_{j<=k}(a_j - eps*j) + eps*k
    ramp = np.arange(m) * _EPS
    deliv = np.maximum.accumulate(send[:, None, :] + delays - ramp, axis=2) + ramp

    # Latest delivery at the sender before the send: deliveries at a process are increasing,
    # so it is the count of them earlier than the send, minus one.
    latest = np.empty((count, m), np.int64)
    for s in range(n):
        mine = senders == s
        below = deliv[:, s, None, :] < send[:, :, None]  # (count, m, m)
        latest[mine] = below.sum(axis=2)[mine] - 1
    own_prev = np.full((count, m), -1, np.int64)
    last = np.full((count, n), -1, np.int64)
    for i in range(m):
        own_prev[:, i] = last[t_idx, senders[:, i]]
        last[t_idx, senders[:, i]] = i
    both = (latest >= 0) & (own_prev >= 0)
    dep0 = np.where(both, np.minimum(latest, own_prev), np.maximum(latest, own_prev))
    dep1 = np.where(both & (latest != own_prev), np.maximum(latest, own_prev), -1)

    # Rows per trace: m sends, then n*m deliveries; then sorted by time within the trace.
    per = m * (n + 1)
    time = np.concatenate([send, deliv.reshape(count, n * m)], axis=1)
    proc = np.concatenate([senders, np.broadcast_to(np.repeat(np.arange(n), m), (count, n * m))],
                          axis=1)
    msgi = np.broadcast_to(np.concatenate([np.arange(m), np.tile(np.arange(m), n)]),
                           (count, per))
    pad = np.full((count, n * m), -1, np.int64)
    d0 = np.concatenate([dep0, pad], axis=1)
    d1 = np.concatenate([dep1, pad], axis=1)
    order = np.argsort(time, axis=1, kind="stable")
    time = np.take_along_axis(time, order, 1).ravel()
    proc = np.take_along_axis(proc, order, 1).ravel()
    msgi = np.take_along_axis(msgi, order, 1).ravel()
    is_send = (order < m).ravel()
    d0 = np.take_along_axis(d0, order, 1).ravel()
    d1 = np.take_along_axis(d1, order, 1).ravel()

    counts = (d0 >= 0).astype(np.int32) + (d1 >= 0).astype(np.int32)
    offsets = np.zeros(count * per + 1, np.int32)
    np.cumsum(counts, out=offsets[1:])
    flat = np.stack([d0, d1], axis=1).ravel()
    values = names.msg.take(pa.array(flat[flat >= 0]))
    deps = pa.ListArray.from_arrays(pa.array(offsets), values, mask=pa.array(~is_send))

    trace_names = pa.array([f"t{k}" for k in range(start, start + count)], pa.string())
    rows = count * per
    arrays = [
        trace_names.take(pa.array(np.repeat(t_idx, per))),
        names.proc.take(pa.array(proc)),
        names.kind.take(pa.array((~is_send).astype(np.int8))),
        names.msg.take(pa.array(msgi)),
        deps,
        pa.nulls(rows, pa.string()),
        pa.nulls(rows, pa.list_(pa.string())),
        pa.array(time, pa.float64()),
        pa.nulls(rows, pa.int64()),
        pa.nulls(rows, pa.float64()),  # real_time
    ]
    return pa.Table.from_arrays(arrays, schema=ARROW_SCHEMA)
