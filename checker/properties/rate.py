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
* **Declared reservations** (003 section 2.1's join(r) and RN(r); issue 29): a process
  that logs ``negotiate`` records is judged against what it declared, not against the
  options: each record holds from its ``x_slot`` on (a later one replaces it from its own
  slot), slot s against the ``x_rate_max`` in force in s, and each window of
  ``x_rate_window`` slots starting at a slot with a declared ``x_rate_avg`` in force
  against the largest ``x_rate_avg`` in force in its slots (the slots before a
  renegotiation were sent under the old reservation, model/qos/reserve.py). A
  declaration that is not a renegotiation (``x_rn`` false: a join(r)) starts a new
  contract: a window counts only the slots of the contract it starts in (a recovered
  process reserves anew). Processes that declare nothing are judged by the options, as
  before. A ``negotiate`` record without ``x_slot``, or with neither ``x_rate_max`` nor
  ``x_rate_avg`` and ``x_rate_window`` (numbers >= 0, the window an integer >= 1), makes
  the verdict unknown, naming its file, line and field.
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

import bisect
import math
from typing import NamedTuple

import numpy as np

from tomkit.checker import witness as W
from tomkit.checker.chunk import NEGOTIATE, PACKET, Chunk
from tomkit.checker.properties.base import (
    EXACT,
    Option,
    Options,
    Property,
    not_negative,
    positive,
    verdicts,
)
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


def problem(options: Options) -> str | None:
    """What keeps the options from judging a rate (no reservation, a bad slot or window),
    or None."""
    if options.rate_max is None and options.rate_avg is None:
        return NO_RESERVATION
    if options.slot is not None and not options.slot > 0:
        return "the slot length (--slot) must be positive"
    if options.rate_window is not None and options.rate_window < 1:
        return "the window (--rate-window) must be at least one slot"
    if options.rate_avg is not None and options.rate_window is None:
        return NO_WINDOW
    return None


class Declared(NamedTuple):
    """One ``negotiate`` record: from slot ``start`` on, at most ``most`` packets a slot
    and ``avg`` in any ``window`` slots (None: not declared); ``contract``: the slot its
    contract started in (its own, unless it is a renegotiation)."""

    start: int
    most: float | None
    avg: float | None
    window: int | None
    contract: int
    event: Ev


def bad_declaration(e: Ev) -> str | None:
    """What is wrong with a ``negotiate`` record (trace schema v1), or None."""
    mx, avg, k, _ = e.reserve or (None, None, None, False)
    if e.slot is None or e.slot < 0:
        return "x_slot: a negotiate record needs the slot it holds from (an integer >= 0)"
    for name, v in (("x_rate_max", mx), ("x_rate_avg", avg)):
        if v is not None and v < 0:
            return f"{name}: must be a number >= 0, got {v}"
    if avg is not None and (k is None or k < 1 or k != int(k)):
        return "x_rate_window: x_rate_avg needs the window, an integer >= 1 (slots)"
    if mx is None and avg is None:
        return "x_rate_max: a negotiate record declares x_rate_max and/or x_rate_avg"
    return None


def declarations(evs: list[Ev]) -> list[Declared] | str:
    """A process's reservations in force, from its ``negotiate`` records in local order
    (a later one replaces the earlier from its slot on); a text naming the first bad
    record instead."""
    steps: list[Declared] = []
    for e in evs:
        if e.kind != "negotiate":
            continue
        why = bad_declaration(e)
        if why:
            return f"{e.location}: field {why}"
        mx, avg, k, rn = e.reserve  # type: ignore[misc]
        start = e.slot
        while steps and steps[-1].start >= start:  # type: ignore[operator]
            steps.pop()
        contract = steps[-1].contract if rn and steps else start
        steps.append(Declared(start, mx, avg, None if k is None else int(k), contract, e))  # type: ignore[arg-type]
    return steps


def in_force(steps: list[Declared], s: int) -> Declared | None:
    out = None
    for d in steps:
        if d.start <= s:
            out = d
    return out


def _judge_declared(p: str, steps: list[Declared], by_slot: dict[int, list[Ev]],
                    trace_id: str, details: dict) -> Result | None:
    """The violation of process ``p``'s declared reservations, or None (module
    docstring)."""
    for s in sorted(by_slot):
        d = in_force(steps, s)
        if d is not None and d.most is not None and len(by_slot[s]) > d.most:
            k = math.floor(d.most) + 1
            wit = [W.event(d.event)] + [W.event(e) for e in by_slot[s][:k]]
            text = (f"{p} sends {len(by_slot[s])} network messages in slot {s}, over the "
                    f"{d.most:g} per slot it declared from slot {d.start} on "
                    f"({d.event.location}).")
            return Result(NAME, trace_id, Verdict.VIOLATED, wit, text, "max-per-slot",
                          details)
    if not by_slot:
        return None
    used = sorted(by_slot)
    lo, hi = used[0], used[-1]
    first = lo - max((d.window or 1) for d in steps) + 1
    windows = {d.window for d in steps if d.window is not None}
    # whether window w is over its limit changes only where a used slot or a declaration's
    # start enters or leaves it, or the reservation in force at w changes: the first w
    # over it is one of these, so a window of 10^9 slots costs what one of 10 does
    cuts = {first}
    for k in windows:
        for t in used:
            cuts.update((t - k + 1, t + 1))
        for d in steps:
            cuts.update((d.start - k + 1, d.start, d.start + 1))
    for w in sorted(c for c in cuts if first <= c <= hi):
        d = in_force(steps, w)
        if d is None or d.avg is None or d.window is None:
            continue
        end = w + d.window  # the window is slots w .. end - 1
        # the reservations in force on some slot of it under the same contract: the one
        # at w and each that starts inside it
        spans = [d] + [x for x in steps if w < x.start < end]
        limit = max(x.avg for x in spans if x.contract == d.contract  # type: ignore[type-var]
                    and x.avg is not None)
        window = [e for t in used[bisect.bisect_left(used, w):bisect.bisect_left(used, end)]
                  if in_force(steps, t).contract == d.contract  # type: ignore[union-attr]
                  for e in by_slot[t]]
        if len(window) > limit:
            k = math.floor(limit) + 1
            text = (f"{p} sends {len(window)} network messages in the {d.window} slots "
                    f"{w}..{end - 1}, over the {limit:g} per {d.window} slots it "
                    f"declared ({d.event.location}).")
            return Result(NAME, trace_id, Verdict.VIOLATED,
                          [W.event(d.event)] + [W.event(e) for e in window[:k]], text,
                          "avg-per-window", details)
    return None


def check(trace: Trace, options: Options = Options()) -> Result:
    packets = {p: [e for e in evs if e.kind == "packet" and not e.unreserved]
               for p, evs in trace.events.items()}
    declared: dict[str, list[Declared]] = {}
    for p, evs in trace.events.items():
        steps = declarations(evs)
        if isinstance(steps, str):
            return Result(NAME, trace.id, Verdict.UNKNOWN,
                          explanation=f"a bad negotiate record: {steps}")
        if steps:
            declared[p] = steps
    total = sum(len(v) for v in packets.values())
    details: dict = {"packets": total}
    why = problem(options)
    if why and not declared:
        return Result(NAME, trace.id, Verdict.UNKNOWN, explanation=why, details=details)
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
        if p in declared:
            res = _judge_declared(p, declared[p], by_slot, trace.id, details)
            if res is not None:
                return res
            continue
        if why:
            continue  # no reservation for this process: nothing to judge it by
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
            for i, s in enumerate(slots):
                # the used slots in s .. s+k-1 (not every slot of the window: K may be huge)
                j = bisect.bisect_left(slots, s + k, lo=i)
                window = [e for t in slots[i:j] for e in by_slot[t]]
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
    codes = _detect_by_options(c, options)
    # a trace that declares reservations is judged against them by the exact check
    codes[c.per_trace_any(c.kind == NEGOTIATE)] = EXACT
    return codes


def _detect_by_options(c: Chunk, options: Options) -> np.ndarray:
    counted = (c.kind == PACKET) & ~c.unreserved
    has = c.per_trace_any(counted)
    if not has.any() or problem(options):
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
    return problem(options) or NO_PACKETS


def _reason(c: Chunk, ti: int, options: Options) -> str:
    return reason(options)


# the reservation of 003 section 4: max' per slot, avg' per K slots
OPTIONS = (
    Option("slot", float, "slot length, to place packet records without x_slot",
           "SECONDS", "seconds", validate=positive, selects=False),
    Option("rate_max", int, "check at most N packet records per process and slot",
           "N", "packet records", validate=not_negative),
    Option("rate_avg", int, "check at most N packet records per process in any "
           "--rate-window consecutive slots", "N", "packet records",
           validate=not_negative, needs=("rate_window",)),
    Option("rate_window", int, "the window of --rate-avg", "K", "slots",
           validate=positive, selects=False),
)

PROPERTY = Property(NAME, "network messages per slot and per K slots within the reservation",
                    False, check, detect, __doc__, _reason, options=OPTIONS)
