"""Rate: network messages per slot and per K slots, within each process's reservation.

Definition (Bar-Joseph, Keidar, Anker and Lynch, "QoS preserving totally ordered
multicast", OPODIS 2000, section 2: a rate is declared as two parameters, the most
messages in any slot of length Delta (max) and the most in any K slots (avg, "the
average" over K Delta); section 4: the network messages the algorithm sends, FEC
redundancy and end-of-slot dummies included, stay within the inflated reservation
(max', avg')): for every process p and slot s, the ``packet`` records of p in slot s
number at most ``--rate-max``; for every K consecutive slots s .. s+K-1 (``--rate-window
K``), they number at most ``--rate-avg``. Per process: each process reserves its own rate.

Decisions:

* Join announcements are not counted: Bar-Joseph et al. (section 4) leave the join
  messages out of the reservation, so a packet marked ``x_join: true`` (the qos
  simulator marks the 1 + L copies of a join so) is ignored.
* A packet's slot is its ``x_slot`` when it carries one, else it is derived from its
  local clock ``time`` and the slot length Delta (``--slot SECONDS``) as
  ceil(time / Delta) - 1: slot s is the interval (s Delta, (s+1) Delta], so the
  end-of-slot block, which 003 sends at exactly (s+1) Delta on the local clock
  (section 4, FEC-end-slot), counts in the slot it closes. (A tolerance of 1e-9 slot
  absorbs floating-point error in time / Delta.)
* Windows are slot-aligned (K consecutive slots), not any real interval of length
  K Delta: an interval straddling two slots can hold the end-of-slot block of one and the
  first block of the next, which a correct sender does, and the reservation is stated per
  slot.
* Unknown when no reservation is given or ``--rate-avg`` comes without ``--rate-window``
  (said first: it holds for every trace of the run); not applicable (unknown, never
  "holds") when the trace has no ``packet`` records: it does not log network messages;
  unknown too when a packet has neither ``x_slot`` nor a placeable ``time`` (it is
  counted, not dropped: a violation among the others still stands, since more packets
  only add to the counts).

Witness: the packets of the first process (by name) over its reservation in the first
such slot or window: max+1 (or avg+1) packet records, the fewest that show it.
"""

from __future__ import annotations

import math

import numpy as np

from tomkit.checker import witness as W
from tomkit.checker.chunk import PACKET, Chunk
from tomkit.checker.properties.base import Options, Property, verdicts
from tomkit.checker.result import Result, Verdict
from tomkit.checker.trace import Ev, Trace

NAME = "rate"
NO_PACKETS = ("not applicable: the trace logs no packet records (network messages), so "
              "the rate cannot be checked")
NO_RESERVATION = "no reservation given (--rate-max N and/or --rate-avg N --rate-window K)"
NO_WINDOW = "--rate-avg needs the window length in slots (--rate-window K)"
EPS = 1e-9


def slot_of(e: Ev, slot_length: float | None) -> int | None:
    """The slot of a packet (module docstring), None when it cannot be placed."""
    if e.slot is not None:
        return e.slot
    if e.time is None or slot_length is None:
        return None
    return math.ceil(e.time / slot_length - EPS) - 1


def _problem(options: Options) -> str | None:
    if options.rate_max is None and options.rate_avg is None:
        return NO_RESERVATION
    if options.slot is not None and not options.slot > 0:
        return "the slot length (--slot) must be positive"
    if options.rate_window is not None and options.rate_window < 1:
        return "the window (--rate-window) must be at least one slot"
    if options.rate_avg is not None and options.rate_window is None:
        return NO_WINDOW
    return None


def check(trace: Trace, options: Options = Options()) -> Result:
    packets = {p: [e for e in evs if e.kind == "packet" and not e.unreserved]
               for p, evs in trace.events.items()}
    total = sum(len(v) for v in packets.values())
    details: dict = {"packets": total}
    problem = _problem(options)
    if problem:
        return Result(NAME, trace.id, Verdict.UNKNOWN, explanation=problem, details=details)
    if not total:
        return Result(NAME, trace.id, Verdict.UNKNOWN, explanation=NO_PACKETS)
    unplaced = 0
    for p in trace.processes:
        by_slot: dict[int, list[Ev]] = {}
        for e in packets[p]:
            s = slot_of(e, options.slot)
            if s is None:
                unplaced += 1
            else:
                by_slot.setdefault(s, []).append(e)
        peak = max((len(v) for v in by_slot.values()), default=0)
        details.setdefault("max_per_slot", {})[p] = peak
        slots = sorted(by_slot)
        if options.rate_max is not None:
            for s in slots:
                if len(by_slot[s]) > options.rate_max:
                    wit = [W.event(e) for e in by_slot[s][:options.rate_max + 1]]
                    text = (f"{p} sends {len(by_slot[s])} network messages in slot {s}, over "
                            f"its reservation of {options.rate_max} per slot.")
                    return Result(NAME, trace.id, Verdict.VIOLATED, wit, text, "max-per-slot",
                                  details)
        if options.rate_avg is not None:
            k = options.rate_window
            for s in slots:
                window = [e for t in range(s, s + k) for e in by_slot.get(t, ())]
                if len(window) > options.rate_avg:
                    wit = [W.event(e) for e in window[:options.rate_avg + 1]]
                    text = (f"{p} sends {len(window)} network messages in the {k} slots "
                            f"{s}..{s + k - 1}, over its reservation of {options.rate_avg} "
                            f"per {k} slots.")
                    return Result(NAME, trace.id, Verdict.VIOLATED, wit, text, "avg-per-window",
                                  details)
    if unplaced:
        details["unplaced"] = unplaced
        return Result(NAME, trace.id, Verdict.UNKNOWN, details=details,
                      explanation=f"{unplaced} packet record(s) carry neither x_slot nor a time "
                      "to place them in a slot (--slot SECONDS)")
    return Result(NAME, trace.id, Verdict.HOLDS, details=details)


def _slots(c: Chunk, rows: np.ndarray, options: Options) -> np.ndarray:
    """Per packet row, its slot as float (NaN: not placeable)."""
    s = c.slot[rows]
    if options.slot is not None:
        from_time = np.ceil(c.time[rows] / options.slot - EPS) - 1
        s = np.where(np.isnan(s), from_time, s)
    return s


def detect(c: Chunk, options: Options) -> np.ndarray:
    counted = (c.kind == PACKET) & ~c.unreserved
    has = c._per_trace_any(counted)
    if not has.any() or _problem(options):
        return verdicts(c, np.zeros(c.ntr, bool), np.ones(c.ntr, bool))
    rows = np.flatnonzero(counted)
    s = _slots(c, rows, options)
    placed = ~np.isnan(s)
    unplaced = np.zeros(c.ntr, bool)
    unplaced[c.t[rows[~placed]]] = True
    rows, s = rows[placed], s[placed].astype(np.int64)
    tp = c.tp[rows].astype(np.int64)
    violated = np.zeros(c.ntr, bool)
    if len(rows):
        # (process of a trace, slot) groups in sorted order, with their counts
        order = np.lexsort((s, tp))
        tp, s, rows = tp[order], s[order], rows[order]
        new = np.ones(len(s), bool)
        new[1:] = (tp[1:] != tp[:-1]) | (s[1:] != s[:-1])
        starts = np.flatnonzero(new)
        count = np.diff(np.append(starts, len(s)))
        g_tp, g_s = tp[starts], s[starts]
        bad = np.zeros(len(starts), bool)
        if options.rate_max is not None:
            bad |= count > options.rate_max
        if options.rate_avg is not None:
            # the sum over slots g_s .. g_s+K-1 of the same process: prefix sums over the
            # sorted groups, the window's end found by a search on (process, slot)
            cs = np.concatenate(([0], np.cumsum(count)))
            span = int(g_s.max() - g_s.min()) + options.rate_window + 1
            if len(starts) and span * (int(g_tp.max()) + 1) < 2 ** 62:
                key = g_tp * span + (g_s - g_s.min())
                end = np.searchsorted(key, key + options.rate_window, side="left")
                bad |= (cs[end] - cs[np.arange(len(starts))]) > options.rate_avg
            else:  # slots too far apart to key them in int64: let the exact check judge
                return verdicts(c, np.zeros(c.ntr, bool), ~has, has)
        violated[c.tp_trace[g_tp[bad]]] = True
    # a trace with packets that cannot be placed: the exact check counts them
    return verdicts(c, violated, ~has, unplaced)


def reason(options: Options) -> str:
    """Why a trace the detection calls UNKNOWN is unknown: the options' problem, else
    no packets (the same for every trace of a run, so every engine words it alike)."""
    return _problem(options) or NO_PACKETS


def _reason(c: Chunk, ti: int, options: Options) -> str:
    return reason(options)


PROPERTY = Property(NAME, "network messages per slot and per K slots within the reservation",
                    False, check, detect, __doc__, _reason)
