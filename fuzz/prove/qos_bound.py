"""The latency bound of the QoS-preserving totally ordered multicast, proved with Z3.

Bar-Joseph, Keidar, Anker and Lynch (OPODIS 2000, section 4, Figures 3 and 4) bound the
time from mcast(m) to every delivery of m by Delta + delta + epsilon in real time without
failures and by Delta + delta + 2 epsilon with failures, for any number of processes.
This module states the slot's delivery as the protocol runs it (the reading aid's
section 2.2, docs/qos.md "The latency bounds") over symbolic reals and asks Z3 for a
message whose latency exceeds the bound: unsat is a proof, for that n.

The encoding, for n processes and one slot s = 1 (any slot is the same up to a shift):

* clocks: C_p(t) = t + o_p with |o_p| <= epsilon / 2 (two clocks differ by at most
  epsilon, the convention the figures' "Delta+delta+epsilon" fixes); Delta > 0,
  delta >= 0, epsilon >= 0 are symbolic too, so one query covers every value;
* sender i sends m at local a_i in [s Delta, (s+1) Delta): real a_i - o_i;
* every process k ends the slot at local (s+1) Delta (FEC-end-slot): its last block,
  which carries EOS(k, s), leaves at real (s+1) Delta - o_k and reaches j after a delay
  d_kj in [0, delta] (FIFO: every earlier packet of k is there by then; the block is
  rebuilt by the time its last packet arrives); j's own EOS is at once (d_jj = 0);
* at most f processes crash (f = 0 or 1 here; the bound does not depend on f); a crashed
  k's last block may or may not arrive (``got``); j times k out at local
  (s+1) Delta + delta + epsilon, real T_j = (s+1) Delta + delta + epsilon - o_j, and a
  block due exactly at the deadline is taken (docs/qos.md); a block after it is dropped;
* j delivers slot s in index order: done_0 = the completion of slot s-1 (the induction
  hypothesis: without crashes by the last EOS arrival, real s Delta + epsilon/2 + delta;
  with one, by j's timeout, real s Delta + delta + epsilon - o_j), and for k = 1..n,
  done_k = max(done_{k-1}, ready_k), ready_k = EOS arrival or T_j; every message of i is
  delivered by done_i. (A crashed process is dropped from later slots; waiting for it
  with a timeout, as here, is the slower case.)

Query: some correct j and sender i with done_i(j) - (a_i - o_i) > B. A maximum exceeds B
exactly when one of its terms does, so the query is the disjunction, over j, i and
k <= i, of ready_k(j) - (a_i - o_i) > B (and of done_0(j) - ...): no nested maxima, which
keeps Z3 fast at n = 16; each disjunct is asked on its own, incrementally on the same
constraints. The linear real arithmetic is decided exactly. With B the paper's bound it
is unsat (proved); with B one epsilon smaller it is sat, and the counterexample
(maximised by ``z3.Optimize`` up to n = 4) at the reading aid's Delta = 100 ms,
delta = 50 ms, epsilon = 10 ms, is written as a trace (``real_time`` and local ``time``
on every record) that ``tomkit check --realtime-bound B`` (or ``-p realtime-latency
--latency-bound B``) rejects. Its local times keep within
Delta + delta + epsilon: the local-clock ``latency`` property passes it, which is why the
checker reads real time.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import z3

from tomkit.fuzz.prove.base import Prover, ProveUsageError, n_range
from tomkit.model.process import Option

__all__ = ["PROVER", "BoundOutcome", "bound_terms", "prove_bound", "refute_bound", "prove_qos"]

SLOT = 1  # the slot proved (s); slot s-1's completion is the induction hypothesis
TIGHT = {"Delta": 0.1, "delta": 0.05, "epsilon": 0.01}  # the reading aid's numbers
OPTIMIZE_UP_TO = 4  # refutations up to this n are maximised (the tight case), then any


@dataclass
class Model:
    """The symbolic slot: parameters, clocks, delays, sends, crashes and latencies."""

    n: int
    crashes: int
    Delta: Any
    delta: Any
    eps: Any
    constraints: list
    latency: dict  # (receiver j, sender i) -> latency expression
    offsets: list
    sends: list
    crashed: list
    got: dict
    done: dict  # (j, i) -> delivery bound expression (real time)
    ready: dict  # (j, k) -> when j may pass k's turn (k = -1: slot s-1 done)


def bound_terms(crashes: int) -> tuple[int, int, int]:
    """The paper's bound as coefficients of (Delta, delta, epsilon)."""
    return (1, 1, 2 if crashes else 1)


def _max(a: Any, b: Any) -> Any:
    return z3.If(a >= b, a, b)


def encode(n: int, crashes: int, params: dict[str, float] | None = None) -> Model:
    """The slot of the module docstring for ``n`` processes and at most ``crashes``
    crashes; ``params`` fixes Delta, delta, epsilon (else they are symbolic)."""
    if n < 2:
        raise ValueError("the bound needs at least 2 processes")
    if crashes not in (0, 1):
        raise ValueError("crashes must be 0 or 1")
    R = z3.Real
    if params is None:
        Delta, delta, eps = R("Delta"), R("delta"), R("epsilon")
        cs = [Delta > 0, delta >= 0, eps >= 0]
    else:
        Delta, delta, eps = (z3.RealVal(str(params[k])) for k in ("Delta", "delta", "epsilon"))
        cs = []
    s = SLOT
    o = [R(f"o_{k}") for k in range(n)]
    cs += [z3.And(ok >= -eps / 2, ok <= eps / 2) for ok in o]
    a = [R(f"a_{i}") for i in range(n)]
    cs += [z3.And(ai >= s * Delta, ai < (s + 1) * Delta) for ai in a]
    crashed = [z3.Bool(f"crashed_{k}") for k in range(n)]
    cs.append(z3.AtMost(*crashed, crashes) if crashes else z3.Not(z3.Or(*crashed)))
    got: dict = {}
    done: dict = {}
    latency: dict = {}
    ready_of: dict = {}
    for j in range(n):
        T = (s + 1) * Delta + delta + eps - o[j]  # j's timeout, real time
        prev = R(f"prev_{j}")  # completion of slot s-1 at j (induction hypothesis)
        cs += [prev <= (s * Delta + delta + eps - o[j] if crashes
                        else s * Delta + delta + eps / 2)]
        cur = prev
        ready_of[(j, -1)] = prev
        for k in range(n):
            if k == j:
                arrival = (s + 1) * Delta - o[j]
            else:
                d = R(f"d_{k}_{j}")
                cs += [d >= 0, d <= delta]
                arrival = (s + 1) * Delta - o[k] + d
            g = z3.Bool(f"got_{k}_{j}")
            got[(k, j)] = g
            cs.append(z3.Implies(z3.Not(crashed[k]), g))  # a correct k's block arrives
            ready = z3.If(z3.And(g, arrival <= T), arrival, T)
            ready_of[(j, k)] = ready
            cur = _max(cur, ready)
            done[(j, k)] = cur
            latency[(j, k)] = cur - (a[k] - o[k])
    return Model(n, crashes, Delta, delta, eps, cs, latency, o, a, crashed, got, done,
                 ready_of)


def _bound(m: Model, less: int = 0) -> Any:
    c = bound_terms(m.crashes)
    return c[0] * m.Delta + c[1] * m.delta + (c[2] - less) * m.eps


def _violation(m: Model, bound: Any) -> Any:
    """Some correct receiver j delivers some sender i's message later than ``bound``
    after its send: done_i(j) is the maximum of ready_k(j), k <= i, and of done_0(j)."""
    out = []
    for j in range(m.n):
        for i in range(m.n):
            send = m.sends[i] - m.offsets[i]
            terms = [m.ready[(j, k)] - send > bound for k in range(-1, i + 1)]
            out.append(z3.And(z3.Not(m.crashed[j]), z3.Or(*terms)))
    return z3.Or(*out)


@dataclass
class BoundOutcome:
    """The verdict for one n and crash count."""

    n: int
    crashes: int
    status: str  # proved | counterexample | unknown
    seconds: float
    bound: str
    refuted: dict | None = None  # the counterexample of the bound one epsilon smaller
    files: dict = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The outcome as plain data (``tomkit prove --format json``); ``status`` is
        ``verdict``'s old name (docs/api.md)."""
        return {"verdict": self.status, "n": self.n, "crashes": self.crashes,
                "bound": self.bound, "status": self.status, "seconds": self.seconds,
                "refuted": self.refuted, "files": dict(self.files)}

    def line(self) -> str:
        out = (f"qos n={self.n} crashes<={self.crashes}: latency <= {self.bound} "
               f"{self.status}  {self.seconds:.1f}s")
        if self.refuted is not None:
            r = self.refuted
            out += (f"  (one epsilon smaller refuted: p{r['receiver']} delivers "
                    f"{r['msg']} {r['latency'] * 1000:.3f} ms after its send, "
                    f"{r['seconds']:.1f}s)")
        return out


def _text(crashes: int, less: int = 0) -> str:
    c = bound_terms(crashes)[2] - less
    return "Delta + delta" + ("" if c == 0 else " + epsilon" if c == 1 else f" + {c} epsilon")


def prove_bound(n: int, crashes: int = 1, timeout: float | None = None,
                less: int = 0, method: str = "split") -> tuple[str, float]:
    """Whether every latency is within the paper's bound (``less`` epsilons smaller), for
    all Delta, delta, epsilon: ('proved' | 'counterexample' | 'unknown', seconds).
    ``method``: "split" asks each disjunct of the violation on its own (the default);
    "whole" asks the disjunction at once (the baseline of bench/qos_bound_bench.py)."""
    t0 = time.perf_counter()
    m = encode(n, crashes)
    s = z3.Solver()
    if timeout is not None:
        s.set("timeout", max(1, int(timeout * 1000)))
    s.add(m.constraints)
    bound = _bound(m, less)
    if method == "whole":
        s.add(_violation(m, bound))
        r = s.check()
        status = "proved" if r == z3.unsat else "counterexample" if r == z3.sat else "unknown"
        return status, time.perf_counter() - t0
    if method != "split":
        raise ValueError(f"method must be split or whole, not {method!r}")
    # the violation is a disjunction: each disjunct is its own (small) query on the same
    # constraints, incrementally; all unsat is the disjunction unsat
    status = "proved"
    for j, i, k in _terms(n):
        s.push()
        s.add(z3.Not(m.crashed[j]), m.ready[(j, k)] - (m.sends[i] - m.offsets[i]) > bound)
        r = s.check()
        s.pop()
        if r == z3.sat:
            return "counterexample", time.perf_counter() - t0
        if r != z3.unsat:
            status = "unknown"
    return status, time.perf_counter() - t0


def _terms(n: int) -> list[tuple[int, int, int]]:
    """(receiver j, sender i, turn k <= i; k = -1: slot s-1) of the violation."""
    return [(j, i, k) for j in range(n) for i in range(n) for k in range(-1, i + 1)]


def _val(model: Any, e: Any) -> float:
    v = model.eval(e, model_completion=True)
    return float(v.as_fraction()) if z3.is_rational_value(v) else float(v.as_decimal(12)
                                                                          .rstrip("?"))


def refute_bound(n: int, crashes: int = 1, params: dict[str, float] | None = None,
                 timeout: float | None = None) -> dict | None:
    """A run whose latency exceeds the bound one epsilon smaller, at ``params`` (default
    the reading aid's), its worst latency maximised; None if there is none. The run is
    returned with its trace records."""
    t0 = time.perf_counter()
    params = params or TIGHT
    m = encode(n, crashes, params)
    smaller = _bound(m, less=1)
    if n > OPTIMIZE_UP_TO:  # any run over the smaller bound (Optimize is slow at large n)
        s = z3.Solver()
        if timeout is not None:
            s.set("timeout", max(1, int(timeout * 1000)))
        s.add(m.constraints)
        s.add(_violation(m, smaller))
        if s.check() != z3.sat:
            return None
        model = s.model()
        j, i = max(((j, i) for j in range(n) for i in range(n)
                    if not z3.is_true(model.eval(m.crashed[j], model_completion=True))),
                   key=lambda ji: _val(model, m.latency[ji]))
        return _run(m, model, j, i, params, time.perf_counter() - t0)
    # the worst run: a (correct receiver, sender) pair and its latency, maximised
    opt = z3.Optimize()
    if timeout is not None:
        opt.set("timeout", max(1, int(timeout * 1000)))
    opt.add(m.constraints)
    cases = [(j, i) for j in range(n) for i in range(n)]
    choice = z3.Int("pair")
    opt.add(choice >= 0, choice < len(cases))
    lat = z3.Real("worst")
    for idx, (j, i) in enumerate(cases):
        opt.add(z3.Implies(choice == idx, z3.And(z3.Not(m.crashed[j]),
                                                 lat == m.latency[(j, i)])))
    opt.add(lat > smaller)
    opt.maximize(lat)
    if opt.check() != z3.sat:
        return None
    model = opt.model()
    j, i = cases[model.eval(choice).as_long()]
    return _run(m, model, j, i, params, time.perf_counter() - t0)


def _run(m: Model, model: Any, j: int, i: int, params: dict, seconds: float) -> dict:
    """The counterexample as numbers and as trace records (module docstring)."""
    n = m.n
    o = [_val(model, x) for x in m.offsets]
    a = [_val(model, x) for x in m.sends]
    crashed = [z3.is_true(model.eval(c, model_completion=True)) for c in m.crashed]
    msg = f"p{i}.1"
    Delta = params["Delta"]
    tid = f"qos-bound-n{n}-f{m.crashes}"
    recs: list[dict] = []
    send_real = a[i] - o[i]
    recs.append({"trace": tid, "process": f"p{i}", "kind": "send", "msg": msg,
                 "time": a[i], "real_time": send_real, "x_slot": SLOT})
    for k in range(n):
        if crashed[k]:
            # it crashes at its slot end, before its last block leaves
            t_local = (SLOT + 1) * Delta
            recs.append({"trace": tid, "process": f"p{k}", "kind": "crash",
                         "time": t_local, "real_time": t_local - o[k]})
    worst = None
    for q in range(n):
        if crashed[q]:
            continue
        real = _val(model, m.done[(q, i)])
        recs.append({"trace": tid, "process": f"p{q}", "kind": "deliver", "msg": msg,
                     "time": real + o[q], "real_time": real})
        if q == j:
            worst = real - send_real
    return {"n": n, "crashes": m.crashes, "receiver": j, "sender": i, "msg": msg,
            "latency": worst, "bound": _bound_value(m.crashes, params),
            "smaller": _bound_value(m.crashes, params, less=1), "offsets": o,
            "crashed": [f"p{k}" for k in range(n) if crashed[k]], "records": recs,
            "params": dict(params), "seconds": seconds}


def _bound_value(crashes: int, params: dict, less: int = 0) -> float:
    c = bound_terms(crashes)
    return c[0] * params["Delta"] + c[1] * params["delta"] + (c[2] - less) * params["epsilon"]


def write_counterexample(run: dict, out: str) -> dict[str, str]:
    """The run as a trace (.jsonl) and a text; returns the paths."""
    from tomkit.traces.writer import write_records

    os.makedirs(out, exist_ok=True)
    stem = os.path.join(out, f"qos-bound-n{run['n']}-f{run['crashes']}")
    write_records(stem + ".jsonl", run["records"])
    with open(stem + ".txt", "w") as f:
        p = run["params"]
        f.write(f"Delta = {p['Delta']} s, delta = {p['delta']} s, epsilon = {p['epsilon']} s; "
                f"{run['n']} processes, crashed: {', '.join(run['crashed']) or 'none'}\n")
        f.write("clock offsets: " + ", ".join(f"p{k} {x * 1000:+.3f} ms"
                                             for k, x in enumerate(run["offsets"])) + "\n")
        f.write(f"p{run['receiver']} delivers {run['msg']} {run['latency'] * 1000:.3f} ms "
                f"after its send in real time: over {run['smaller'] * 1000:.3f} ms (one "
                f"epsilon below the bound), within {run['bound'] * 1000:.3f} ms\n")
        f.write(f"check: tomkit check --realtime-bound {run['smaller']:g} {stem}.jsonl\n")
        f.write(json.dumps(run["records"], indent=1) + "\n")
    return {"trace": stem + ".jsonl", "txt": stem + ".txt"}


def prove_qos(n: int, crashes: int, timeout: float | None = None, out: str | None = None,
              refute: bool = True) -> BoundOutcome:
    """Prove the bound for ``n`` and ``crashes``, and refute the bound one epsilon
    smaller (its counterexample written to ``out`` when given)."""
    status, secs = prove_bound(n, crashes, timeout)
    o = BoundOutcome(n, crashes, status, secs, _text(crashes))
    if refute:
        run = refute_bound(n, crashes, timeout=timeout)
        o.refuted = run
        if run is not None and out:
            o.files = write_counterexample(run, out)
    return o


# ---------------------------------------------------------------- tomkit prove --protocol qos

OPTIONS = (
    Option("n", n_range, (2, 16), "number of processes, or a range A-B (default 2-16)"),
    Option("timeout", float, None, "seconds per Z3 query (default none)"),
    Option("out", str, None, "write the refuted bound's run here (trace .jsonl and .txt)"),
)


def run(protocol: str | None, rule: str | None, opts: Mapping[str, Any],
        say: Callable[[str], None], report: Callable[[Any], None]) -> int:
    """Per n, without and with a crash: the bound proved, the bound one epsilon smaller
    refuted and its run written to ``--out``."""
    lo, hi = opts["n"]
    if lo < 2:
        raise ProveUsageError(f"--protocol qos needs n >= 2 processes, got {lo}")
    worst = 0
    for n in range(lo, hi + 1):
        for crashes in (0, 1):
            o = prove_qos(n, crashes, opts["timeout"], opts["out"])
            say(o.line())
            report(o)
            if o.files:
                say("  wrote " + ", ".join(o.files[k] for k in ("trace", "txt")))
            if o.status == "counterexample":
                worst = 1
            elif o.status == "unknown" and worst == 0:
                worst = 3
    return worst


PROVER = Prover("qos-bound", "003's latency bound, Delta + delta + epsilon (2 epsilon with "
                "a crash), proved and refuted one epsilon smaller", ("qos",), OPTIONS, run,
                largest_n=(16, "docs/qos-checking.md"))
