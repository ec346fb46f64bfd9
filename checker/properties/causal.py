"""Causal order: a message is delivered only after the messages it acknowledges.

Definition (causal order, Hadzilacos and Toueg, "A modular approach to
fault-tolerant broadcasts and related problems", 1994; in the ToTo papers
000 and 002 every message carries ACKs of earlier ones and "m' follows m"
when m is reachable by ACK edges): if m' causally follows m, every process
that delivers m' delivers m before it. The causal relation comes from the
``deps`` of send events (direct dependencies); checking each direct
dependency at each process suffices, since "delivered before" is
transitive.

Membership (as for fifo-order: Chockler, Keidar and Vitenberg 2001, section 4, a
process owes nothing for views it was not a member of): in a trace with view events, p
owes a dependency d only if d was sent in a view p installed; so a member that joins
late may deliver m' whose dependency was delivered before it joined (a dependency it
delivers anyway must still come first).

An id sent more than once (as for fifo-order: the trace format names a message by its id,
so it is one message with several send events): m' follows every dependency that any of
its sends lists, since each of those sends is a broadcast of m' that the dependency's
broadcast precedes, which is what the definition quantifies over. Reading only the first
send's deps (of the process first by name, as before) both missed dependencies and, when
that send carried none, called the relation unlogged though another send logged it. The
reuse itself is integrity's duplicate-send. The vectorized engine and the SQL engine hand
a trace with a reused id to this exact check.

A send that lists its own message among its deps asks, read literally, that m' be
delivered before itself: each delivery of it violates, and the sentence says so (it used to
read "delivers m' as #i and m' only later, as #i").

Unknown when the trace has no send events, or no send carries ``deps`` (the
relation is not logged). A send without ``deps`` in a trace whose other
sends carry them is read as having none. Deliveries of unsent messages are
integrity's business and are skipped here.
Witness: the send of m' with its deps, p's delivery of m', and p's later
delivery of the dependency m if there is one.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tomkit.checker import witness as W
from tomkit.checker.chunk import Chunk, concat_ranges
from tomkit.checker.properties.base import Options, Property, verdicts
from tomkit.checker.result import Result, Verdict, WitnessEvent
from tomkit.checker.stream.clean import Clean
from tomkit.checker.trace import Trace

NAME = "causal-order"
NO_SENDS = "no send events logged, so no causal relation"
NO_DEPS = "no send carries deps: the causal relation is not logged"


def check(trace: Trace, options: Options = Options()) -> Result:
    if not trace.has_sends:
        return Result(NAME, trace.id, Verdict.UNKNOWN, explanation=NO_SENDS)
    if not any(e.deps is not None for sends in trace.send_lists.values() for e in sends):
        return Result(NAME, trace.id, Verdict.UNKNOWN, explanation=NO_DEPS)
    idx = trace.delivery_index
    sent_in = _send_views(trace) if trace.has_views else None
    deps = _deps(trace)
    for p in trace.processes:
        installed = {e.view for e in trace.events[p] if e.kind == "view"}
        for i, e in trace.first_deliveries[p]:
            for d, sent in deps.get(e.msg, ()):
                j = idx[p].get(d)
                if j is not None and j < i:
                    continue
                if j is None and sent_in is not None and d in sent_in \
                        and not sent_in[d] & installed:
                    continue  # sent before p was a member (module docstring)
                wit, s = [sent, W.delivery(trace, p, i)], sent.process
                if d == e.msg:  # read literally, m' must come before itself
                    text = (f"{d} lists itself among its deps (its send by {s}), so {p}'s "
                            f"delivery of it as #{i} cannot come after it.")
                    return Result(NAME, trace.id, Verdict.VIOLATED, wit, text,
                                  "delivered-before-dependency")
                if j is None:
                    tail = f"never delivers {d}"
                else:
                    wit.append(W.delivery(trace, p, j))
                    tail = f"delivers {d} only later, as #{j}"
                text = (f"{e.msg} depends on {d} (deps of its send by {s}), "
                        f"but {p} delivers {e.msg} as #{i} and {tail}.")
                return Result(NAME, trace.id, Verdict.VIOLATED, wit, text,
                              "delivered-before-dependency")
    return Result(NAME, trace.id, Verdict.HOLDS)


def _deps(trace: Trace) -> dict[str, list[tuple[str, WitnessEvent]]]:
    """msg -> its dependencies, each with the send that lists it: the deps of every send
    of msg, senders by name, each sender's in its order (module docstring); a dependency
    listed twice is kept at its first place."""
    out: dict[str, dict[str, WitnessEvent]] = {}
    for s in trace.processes:
        for k, e in enumerate(trace.send_lists[s]):
            if e.deps:
                mine = out.setdefault(e.msg, {})
                for d in e.deps:
                    if d not in mine:
                        mine[d] = W.event(e, k)
    return {m: list(ds.items()) for m, ds in out.items()}


def _send_views(trace: Trace) -> dict[str, set[str | None]]:
    """Each message's sending views (each sender's installed view at its first send of
    it): p owes the message if it installed one of them."""
    out: dict[str, set[str | None]] = {}
    for s in trace.processes:
        seen = set()
        for e, v in zip(trace.events[s], trace.views_at[s]):
            if e.kind == "send" and e.msg not in seen:
                seen.add(e.msg)
                out.setdefault(e.msg, set()).add(v)
    return out


def stream(clean: Clean, options: Options) -> Result:
    """A clean single pass (checker/stream/) checked each delivered message's deps to lie
    before it in the one sequence every process delivers a prefix of."""
    clean = clean.in_scope(options.scope)
    if not clean.senders:
        return Result(NAME, clean.trace, Verdict.UNKNOWN, explanation=NO_SENDS)
    if not clean.deps_by:
        return Result(NAME, clean.trace, Verdict.UNKNOWN, explanation=NO_DEPS)
    return Result(NAME, clean.trace, Verdict.HOLDS)


def detect(c: Chunk, options: Options) -> np.ndarray:
    # one (delivery of m at p, dependency d of m) pair per dep: is d's first delivery at p
    # earlier? Positions come from a table keyed by (process sequence, message in trace).
    send_row = c.send_row[c.f_tm]
    has = send_row >= 0
    nd = np.zeros(len(c.f_rows), np.int64)
    nd[has] = np.maximum(c.dep_len[send_row[has]], 0)
    with_deps = np.flatnonzero(nd)
    which = np.repeat(with_deps, nd[with_deps])
    dep_local = c.dep_ml[concat_ranges(c.dep_off[send_row[with_deps]], nd[with_deps])]
    m = max(c.max_msgs, 1)
    want = c.f_tp[which].astype(np.int64) * m + dep_local
    have = c.f_tp.astype(np.int64) * m + c.ml[c.f_rows]
    space = c.pm_space()
    if space <= 4 * len(have) + 65536:  # direct addressing; 0 = not delivered there
        table = np.zeros(space, np.int32)  # half the memory traffic of int64
        table[have] = c.f_pos + 1
        pos_d = table[want].astype(np.int64) - 1
    else:
        found = pc.index_in(pa.array(want), value_set=pa.array(have))
        j = found.fill_null(-1).to_numpy(zero_copy_only=False)
        pos_d = np.where(j >= 0, c.f_pos[np.maximum(j, 0)], -1)
    # a dependency no row of the trace names (dep_ml -1) is delivered nowhere
    pos_d[dep_local < 0] = -1
    bad = (pos_d < 0) | (pos_d >= c.f_pos[which])
    violated = np.zeros(c.ntr, bool)
    violated[c.f_t[which[bad]]] = True
    unknown = ~c.trace_has["send"] | ~c.trace_has["deps"]
    # with views, membership may excuse a dependency (module docstring): the exact check;
    # a reused id's other sends may list more dependencies: the exact check
    views = c.trace_has["view"]
    resent = c.resent
    return verdicts(c, violated & ~unknown & ~views & ~resent, unknown,
                    ((violated & views) | resent) & ~unknown)


PROPERTY = Property(NAME, "delivered only after the messages it acknowledges (deps)", False,
                    check, detect, __doc__,
                    lambda c, ti, o: NO_SENDS if not c.trace_has["send"][ti] else NO_DEPS,
                    stream=stream)
