"""Integrity: no duplicate delivery, no creation, no duplicate send.

Definition (uniform integrity, Défago, Schiper and Urbán, "Total order
broadcast and multicast algorithms: taxonomy and survey", ACM Computing
Surveys 36(4), 2004, section 2.2): for any message m, every process
delivers m at most once, and only if m was previously broadcast by its
sender. tomkit checks, per trace:

- duplicate-delivery: no process delivers the same message id twice;
- unsent-delivery: every delivered message id has a send event in the
  trace. Checked only when the trace logs sends (at least one send event);
  otherwise this clause is *unknown*, never a pass. Counted once per process and id:
  a repeat of the delivery is duplicate-delivery's, not a second creation;
- duplicate-send: no message id is sent twice (ids are unique within a
  trace by the format; an implementation that reuses ids makes every order
  fact about that id ambiguous). fifo-order and causal-order read such an id as one
  message with several send events (their docstrings), so they report only breaches
  of their own definitions, and the reuse is reported here.

"Previously" is not checked against clocks: processes log local orders
only, so a send logged after a remote delivery is not evidence of creation.
Witness: the two deliveries (or two sends) of one id, or the one delivery
of an unsent id.
"""

from __future__ import annotations

import numpy as np

from tomkit.checker import witness as W
from tomkit.checker.chunk import Chunk
from tomkit.checker.properties.base import Options, Property, verdicts
from tomkit.checker.result import Result, Verdict
from tomkit.checker.stream.clean import Clean
from tomkit.checker.trace import Trace

NAME = "integrity"
NO_SENDS = "no send events logged: deliveries of unsent messages cannot be ruled out"


def check(trace: Trace, options: Options = Options()) -> Result:
    found = []  # (clause, witness, explanation)
    for p in trace.processes:
        seen: dict[str, int] = {}
        for i, e in enumerate(trace.deliveries[p]):
            if e.msg in seen:
                found.append(("duplicate-delivery",
                              [W.delivery(trace, p, seen[e.msg]), W.delivery(trace, p, i)],
                              f"{p} delivers {e.msg} twice: as #{seen[e.msg]} and as #{i}."))
            else:
                seen[e.msg] = i
    if trace.has_sends:
        for p in trace.processes:
            # a repeat of an unsent delivery is counted once, as duplicate-delivery
            for i, e in trace.first_deliveries[p]:
                if e.msg not in trace.sends:
                    found.append(("unsent-delivery", [W.delivery(trace, p, i)],
                                  f"{p} delivers {e.msg} (#{i}), which no process sent."))
    first_send: dict[str, object] = {}
    for p in trace.processes:
        for k, e in enumerate(trace.send_lists[p]):
            if e.msg in first_send:
                a = first_send[e.msg]
                who = f"by {p}" if a.process == p else f"by {a.process} and by {p}"
                found.append(("duplicate-send", [a, W.event(e, k)],
                              f"message id {e.msg} is sent twice ({who})."))
            else:
                first_send[e.msg] = W.event(e, k)
    if found:
        clause, wit, text = found[0]
        return Result(NAME, trace.id, Verdict.VIOLATED, wit, text, clause,
                      {"violations": len(found)})
    if not trace.has_sends and any(trace.deliveries.values()):
        return Result(NAME, trace.id, Verdict.UNKNOWN, explanation=NO_SENDS)
    return Result(NAME, trace.id, Verdict.HOLDS)


def detect(c: Chunk, options: Options) -> np.ndarray:
    dup_delivery = c.t[c.d_rows[~c.d_first]]
    has_send = c.trace_has["send"]
    unsent_rows = c.f_rows[c.send_row[c.f_tm] < 0]
    unsent = c.t[unsent_rows][has_send[c.t[unsent_rows]]]
    violated = c.resent.copy()  # duplicate-send
    violated[np.concatenate((dup_delivery, unsent))] = True
    unknown = ~has_send & c.trace_has["deliver"]
    return verdicts(c, violated, unknown)


def stream(clean: Clean, options: Options) -> Result:
    """A clean single pass (checker/stream/) saw no repeat and no unsent delivery."""
    if not clean.senders and clean.deliverers:
        return Result(NAME, clean.trace, Verdict.UNKNOWN, explanation=NO_SENDS)
    return Result(NAME, clean.trace, Verdict.HOLDS)


PROPERTY = Property(NAME, "no duplicate or unsent deliveries, no reused ids", True,
                    check, detect, __doc__, lambda c, ti, o: NO_SENDS, stream=stream)
