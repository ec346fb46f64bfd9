"""Real-time latency: from a message's send to each of its deliveries, in real time.

Definition (Bar-Joseph, Keidar, Anker and Lynch, "QoS preserving totally ordered
multicast", OPODIS 2000, section 2: the latency bound is "the supremum over all
executions, all messages and all processes of the time since mcast(m) is performed
until m is delivered by all processes that deliver it"): latency(m, p) =
``real_time`` of p's first delivery of m - ``real_time`` of m's first send, for every
delivery whose send is logged and where both records carry ``real_time``; the property
holds when every such latency is at most the bound B. A message id sent more than once
is one message with several sends: its first send is its earliest in real time, whoever
sent it (latency.py's docstring; a trace with a reused id goes to this exact check).

Why real time: 003 bounds latency by Delta + delta + epsilon without failures and
Delta + delta + 2 epsilon with failures in *real* time (its Figures 3 and 4), while on
the processes' local clocks (``time``, the ``latency`` property) both are
Delta + delta + epsilon: the failure case's extra epsilon is the skew between the
sender's clock and the clock of the process that times the crashed one out. Only real
time shows it.

The bound is ``--realtime-bound SECONDS``, else ``--latency-bound SECONDS`` (so
``tomkit check -p realtime-latency --latency-bound B`` checks the same B in real time).
Unknown: no bound given; or no delivery with a real-time send and delivery, which says
plainly that the trace logs no ``real_time`` (the local-clock bound is the ``latency``
property). Deliveries without ``real_time`` are counted in the details, not passed.
Witness: the send and the slowest delivery over the bound.
"""

from __future__ import annotations

import numpy as np

from tomkit.checker.chunk import Chunk
from tomkit.checker.properties.base import Option, Options, Property, positive
from tomkit.checker.properties.latency import from_tally, judge, latencies, measure, over_bound
from tomkit.checker.result import Result, Verdict
from tomkit.checker.stream.clean import Clean
from tomkit.checker.trace import Trace

NAME = "realtime-latency"
NO_BOUND = "no bound given (--realtime-bound SECONDS or --latency-bound SECONDS)"
NO_REAL_TIME = ("the trace logs no real_time on a send and its delivery: real-time "
                "latency cannot be measured (the local-clock bound is the latency property)")


def bound(options: Options) -> float | None:
    return options.realtime_bound if options.realtime_bound is not None \
        else options.latency_bound


def check(trace: Trace, options: Options = Options()) -> Result:
    lat = latencies(trace, "real_time")
    unmeasured = sum(len(v) for v in trace.first_deliveries.values()) - len(lat)
    details = {"deliveries": len(lat), "unmeasured": unmeasured}
    if lat:
        details["max"] = max(lat)[0]
    b = bound(options)
    if b is None:
        return Result(NAME, trace.id, Verdict.UNKNOWN, explanation=NO_BOUND, details=details)
    if not lat:
        return Result(NAME, trace.id, Verdict.UNKNOWN, explanation=NO_REAL_TIME,
                      details=details)
    return judge(NAME, trace, lat, b, details, of="of real time ", clock="real_time")


def detect(c: Chunk, options: Options) -> np.ndarray:
    rows, lat = measure(c, c.real_time)
    return over_bound(c, rows, lat, bound(options))


def stream(clean: Clean, options: Options) -> Result | None:
    """As latency's decider (latency.py), on ``real_time``, with this check's details."""
    return from_tally(NAME, clean, "real_time", bound(options), NO_BOUND, NO_REAL_TIME,
                      full=False, of="of real time ")


# 003's bound, Delta + delta + 2 epsilon with failures (Bar-Joseph et al., section 2)
BOUND = Option("realtime_bound", float,
               "check every send-to-delivery time in real time (the real_time field) "
               "against this bound", "SECONDS", "seconds",
               validate=positive)

PROPERTY = Property(NAME, "every send-to-delivery time, in real time, within the bound",
                    False, check, detect, __doc__,
                    lambda c, ti, o: NO_BOUND if bound(o) is None else NO_REAL_TIME,
                    options=(BOUND,), reads=("latency_bound",), stream=stream,
                    clock="real_time", bound=bound)
