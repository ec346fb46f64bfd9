"""Latency: time from a message's send to each of its deliveries, against a bound.

Definition: latency(m, p) = time of p's first delivery of m - time of m's
first send, for every delivery whose send is logged and where both events carry
``time``. The property holds when every latency is at most the bound the
user gives (``--latency-bound SECONDS``). Times are the processes' local
clocks: the difference is meaningful only as far as the clocks are
synchronised, as in the latency bound of the QoS-preserving protocol (003),
whose bound includes clock terms.

A message id sent more than once (by two processes, or twice by one) is one message with
several send events, as for fifo-order and causal-order (their docstrings; integrity
reports the reuse as duplicate-send): its *first* send is the earliest on the clock
measured, among its sends that carry that clock. A message exists from its first send,
so the time until a delivery is counted from there (Bar-Joseph et al., section 2:
"the time since mcast(m) is performed"), whichever process sent it; a later resend
does not restart it, and the order of process names does not choose the send (it did:
a send after the delivery could be the one measured). The vectorized engine hands a
trace with a reused id to this exact check.

Unknown when no bound is given, or no delivery has a timed send and
delivery. Deliveries without times are counted in the details, not passed.
Witness: the send and the slowest delivery over the bound.
Details: per trace the count, mean and maximum, per process mean and
maximum, and the slowest message. The means are ``math.fsum`` (correctly rounded, so
the order of the terms does not change them: the single pass, checker/stream/, reads
them in another order and sums them exactly) divided by the count.

The single pass decides it on a long trace (``stream`` and ``held``): per process the
count, exact sum and maximum of the latencies, the unmeasured count and the slowest
delivery with its witness, kept as messages retire (checker/stream/latencies.py), and
on a broken trace combined with this check's measurements of the held records.
"""

from __future__ import annotations

import math

import numpy as np

from tomkit.checker import witness as W
from tomkit.checker.chunk import Chunk
from tomkit.checker.properties.base import Option, Options, Property, positive, verdicts
from tomkit.checker.result import Result, Verdict, WitnessEvent
from tomkit.checker.stream.clean import Clean
from tomkit.checker.stream.latencies import Slowest, Tally
from tomkit.checker.trace import Ev, Trace

NAME = "latency"
SLOWEST = 5  # slowest deliveries listed in a report
NO_BOUND = "no bound given (--latency-bound SECONDS)"
NO_TIMES = "no delivery with a timed send and delivery"


def first_sends(trace: Trace, clock: str = "time") -> dict[str, tuple[int, Ev]]:
    """msg -> (index in its sender's sends, its earliest send on ``clock``) over the sends
    that carry ``clock`` (module docstring: a reused id's first send); ties go to the
    process first by name, then to its earlier send."""
    out: dict[str, tuple[int, Ev]] = {}
    for p in trace.processes:
        for k, e in enumerate(trace.send_lists[p]):
            t = getattr(e, clock)
            if t is None:
                continue
            have = out.get(e.msg)
            if have is None or t < getattr(have[1], clock):
                out[e.msg] = (k, e)
    return out


def _resent(trace: Trace, msg: str) -> bool:
    return sum(e.msg == msg for p in trace.senders.get(msg, ()) for e in trace.send_lists[p]) > 1


def latencies(trace: Trace, clock: str = "time") -> list[tuple[float, str, int]]:
    """(latency, process, delivery index) for every measurable first delivery, on
    ``clock``: "time" (the local clocks) or "real_time" (realtime_latency.py)."""
    out = []
    first = first_sends(trace, clock)
    for p in trace.processes:
        for i, e in trace.first_deliveries[p]:
            sent = first.get(e.msg)
            if sent is None:
                continue
            t0, t1 = getattr(sent[1], clock), getattr(e, clock)
            if t1 is None:
                continue
            out.append((t1 - t0, p, i))
    return out


def judge(name: str, trace: Trace, lat: list[tuple[float, str, int]], bound: float,
          details: dict, of: str = "", clock: str = "time") -> Result:
    """The verdict on the measured latencies ``lat`` (not empty) against ``bound``:
    violated by the slowest over it (witness: its first send on ``clock`` and that
    delivery); ``of`` says on which clock, in the explanation ("of real time ")."""
    x, p, i = max(lat)
    if x > bound:
        m = trace.deliveries[p][i].msg
        k, e = first_sends(trace, clock)[m]
        wit = [WitnessEvent(e.process, "send", m, k, e.location), W.delivery(trace, p, i)]
        sent = f"its first send (by {e.process})" if _resent(trace, m) else "its send"
        text = f"{p} delivers {m} {x:.6g} s {of}after {sent}, over the bound of {bound:g} s."
        return Result(name, trace.id, Verdict.VIOLATED, wit, text, "over-bound", details)
    return Result(name, trace.id, Verdict.HOLDS, details=details)


def stats(trace: Trace) -> dict:
    lat = latencies(trace)
    unmeasured = sum(len(v) for v in trace.first_deliveries.values()) - len(lat)
    if not lat:
        return {"deliveries": 0, "unmeasured": unmeasured}
    per: dict[str, list[float]] = {}
    for x, p, _ in lat:
        per.setdefault(p, []).append(x)
    worst = max(lat)
    return {
        "deliveries": len(lat),
        "unmeasured": unmeasured,
        "mean": math.fsum(x for x, _, _ in lat) / len(lat),
        "max": worst[0],
        "slowest": {"process": worst[1], "msg": trace.deliveries[worst[1]][worst[2]].msg},
        "per_process": {p: {"mean": math.fsum(v) / len(v), "max": max(v)}
                        for p, v in per.items()},
    }


def check(trace: Trace, options: Options = Options()) -> Result:
    details = stats(trace)
    bound = options.latency_bound
    if bound is None:
        return Result(NAME, trace.id, Verdict.UNKNOWN, explanation=NO_BOUND, details=details)
    lat = latencies(trace)
    if not lat:
        return Result(NAME, trace.id, Verdict.UNKNOWN, explanation=NO_TIMES, details=details)
    return judge(NAME, trace, lat, bound, details)


def measure(c: Chunk, clock: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows of the measurable first deliveries and their latencies, on ``clock`` (a
    column of the chunk: ``c.time`` or ``c.real_time``; NaN where a record has none)."""
    sr = c.send_row[c.f_tm]
    has = sr >= 0
    every = has.all()
    rows = c.f_rows if every else c.f_rows[has]
    lat = clock[rows] - clock[sr if every else sr[has]]
    ok = ~np.isnan(lat)
    if not ok.all():
        rows, lat = rows[ok], lat[ok]
    return rows, lat


def over_bound(c: Chunk, rows: np.ndarray, lat: np.ndarray,
               bound: float | None) -> np.ndarray:
    """The verdicts of :func:`measure`'s latencies against ``bound``: unknown where a
    trace has none measured or no bound is given; a trace with a reused id goes to the
    exact check (module docstring: :func:`measure` reads the send first by name)."""
    measured = np.zeros(c.ntr, bool)
    measured[c.t[rows]] = True
    unknown = ~measured | (bound is None)
    violated = np.zeros(c.ntr, bool)
    if bound is not None:
        violated[c.t[rows[lat > bound]]] = True
    exact = c.resent if bound is not None else np.zeros(c.ntr, bool)
    return verdicts(c, violated & ~unknown & ~exact, unknown & ~exact, exact)


def detect(c: Chunk, options: Options) -> np.ndarray:
    rows, lat = measure(c, c.time)
    c.cache["latencies"] = lat
    # per process name (summed over traces) and the slowest deliveries, for the report
    procs = c.p[rows]
    n = len(c.proc_names)
    count = np.bincount(procs, minlength=n)
    total = np.bincount(procs, weights=lat, minlength=n)
    top = np.full(n, -np.inf)
    np.maximum.at(top, procs, lat)
    c.cache["latency_by_process"] = {c.proc_names[i]: (int(count[i]), float(total[i]),
                                                       float(top[i]))
                                     for i in np.flatnonzero(count)}
    k = min(SLOWEST, len(lat))
    worst = np.argpartition(lat, len(lat) - k)[-k:] if k else np.zeros(0, np.int64)
    worst = worst[np.argsort(lat[worst])[::-1]]
    c.cache["slowest"] = [(float(lat[w]), c.trace_names[c.t[rows[w]]],
                           c.proc_names[c.p[rows[w]]], c.msg_names[c.msg[rows[w]]])
                          for w in worst]
    return over_bound(c, rows, lat, options.latency_bound)


def stream(clean: Clean, options: Options) -> Result | None:
    """A clean single pass (checker/stream/) kept the latencies' statistics and the
    slowest delivery on the local clocks (stream/latencies.py): the verdict, witness and
    details of :func:`check`; None (the whole-trace engine) when a latency overflowed."""
    return from_tally(NAME, clean, "time", options.latency_bound, NO_BOUND, NO_TIMES)


def from_tally(name: str, clean: Clean, clock: str, bound: float | None, no_bound: str,
               no_times: str, full: bool = True, of: str = "") -> Result | None:
    """The stream decider of a latency bound on ``clock``, from the single pass's tally
    (``Clean.latency``: a clean trace's, or a broken one's retired prefix and held
    records together, stream/reduced.py): unknown (with the reason) without a bound or a
    measured delivery, else :func:`judge`'s verdict, witness and sentence, with ``full``
    details (latency's) or the count, unmeasured and maximum (realtime latency's)."""
    if bound is None:
        return Result(name, clean.trace, Verdict.UNKNOWN, explanation=no_bound)
    t = clean.latency.get(clock)
    if t is None or t.odd:
        return None
    details = t.details(full)
    if not t.measured():
        # the vectorized engine reads a trace with a reused id by this exact check, whose
        # unknown carries the details
        return Result(name, clean.trace, Verdict.UNKNOWN, explanation=no_times,
                      details=details if clean.resent else {})
    s = t.slowest
    assert s is not None
    if s.latency <= bound:
        return Result(name, clean.trace, Verdict.HOLDS, details=details)
    wit = [WitnessEvent(s.sender, "send", s.msg, s.send_index, s.send_location),
           WitnessEvent(s.process, "deliver", s.msg, s.index, s.location)]
    sent = f"its first send (by {s.sender})" if s.resent else "its send"
    text = f"{s.process} delivers {s.msg} {s.latency:.6g} s {of}after {sent}, over the " \
        f"bound of {bound:g} s."
    return Result(name, clean.trace, Verdict.VIOLATED, wit, text, "over-bound", details)


def tally(trace: Trace, clock: str = "time") -> Tally:
    """The measured first deliveries of ``trace`` on ``clock`` as the single pass keeps
    them (stream/latencies.py): a broken trace's held records, combined there with its
    retired prefix's."""
    lat = latencies(trace, clock)
    firsts = sum(len(v) for v in trace.first_deliveries.values())
    out = Tally(unmeasured=firsts - len(lat))
    if not lat:
        return out
    code = {p: k for k, p in enumerate(trace.processes)}
    x = np.array([v[0] for v in lat], np.float64)
    proc = np.array([code[v[1]] for v in lat], np.int64)
    index = np.array([v[2] for v in lat], np.int64)
    first = first_sends(trace, clock)

    def resolve(row: int) -> Slowest:
        _, p, i = lat[row]
        e = trace.deliveries[p][i]
        k, s = first[e.msg]
        return Slowest(lat[row][0], p, i, e.msg, e.location, s.process, k, s.location,
                       _resent(trace, e.msg))

    out.add(x, proc, trace.processes, index, resolve)
    return out


#: the bound (seconds, local clocks); realtime-latency reads it too, as its fallback
BOUND = Option("latency_bound", float,
               "check every send-to-delivery latency on the local clocks (field time) "
               "against this bound; realtime-latency's bound when "
               "--realtime-bound is not given", "SECONDS", "seconds", validate=positive)

# not in tomkit scan, whose report gives each configuration's latency distribution instead
PROPERTY = Property(NAME, "every send-to-delivery time within the user's bound", False,
                    check, detect, __doc__,
                    lambda c, ti, o: NO_BOUND if o.latency_bound is None else NO_TIMES,
                    options=(BOUND,), scan=False, stream=stream, clock="time",
                    bound=lambda o: o.latency_bound)
