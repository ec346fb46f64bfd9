"""003's QoS contract: the application's reservation r, the network's inflated r'
(``net_reserve``), renegotiation, and the sender's shaper that keeps the application
within r.

Source: 003 (Bar-Joseph, Keidar, Anker and Lynch) section 2.1 (the reservation model: a
rate has two fields, ``avg``, the most messages in any K slots, and ``max``, the most in
any slot; the application's interface ``join(r)``, ``join_OK``, ``leave``, ``RN(r)``;
the network's ``net_reserve(r')``; "we assume that all reservation requests made by a
process are accepted by the network ... once a reservation request is made, the
bandwidth that was requested is immediately available") and section 2.2 (the inflated
reservation, reconstructed: max' = max*I/(I-L) + L, avg' = avg*I/(I-L) + K(L+1);
``fec.reserved_max``, ``fec.reserved_avg``).

Decisions (docs/qos.md, "The QoS contract"):

* **K** is one constant of the run (the option ``window``), as Delta is: the reading aid
  (briefs/001-003.md 2.1) gives a rate as the two fields avg and max only.
* **An application over its reservation.** 003 section 2.1 assumes it never is ("the
  application never exceeds its reservation"). The model does not trust it: the sender
  *shapes* its traffic. A message multicast when its slot already holds ``max``
  originals, or when the K slots ending with it already hold ``avg``, is held at the
  sender and FEC-sent at the start of the first later slot with room, in order (a held
  message is never overtaken by a later one). Held messages are still sent and
  delivered (liveness unharmed); the network never sees more than r' (the reservation
  is the network's to police, 003's guarantee rests on it); what the application loses
  is latency: a held message's latency counts from its multicast, so the bound of 003
  Figures 3-4 no longer holds for it, which is exactly the paper's proviso ("as long as
  the application sends at the reserved rate"). Refusing the message at ``mcast``
  would lose it, which 003's interface has no way to say. A ``leave`` takes its place in
  the queue (it is FEC-sent as an original, so it needs room too). The broken variant
  ``unshaped`` sends excess at once: the network then sees more than r'.
* **Renegotiation takes effect at the next slot.** RN(r) at local time t in slot s
  holds from slot s + 1. The network grants it at once (section 2.1), but both fields
  count a slot's messages as a whole: part of slot s already went out under the old
  r, and its end-of-slot block (which the "+ L" of max' pays for) is still to come. Held
  against a smaller new r, a slot partly spent under the old one would exceed the new
  max' through no fault of the sender; the first slot wholly under the new r is s + 1.
  The same boundary serves an increase (it costs at most one slot of the new rate). A
  join's reservation holds from the join slot s_j, the first slot the joiner sends in.
  The broken variant ``early-rn`` applies RN(r) in slot s itself.
* **Windows across a renegotiation.** The shaper admits a message in slot s while the
  K slots ending with s hold fewer than the avg in force in s; a window that straddles
  a renegotiation is judged (``checker/properties/rate.py``) against the largest avg'
  in force in its slots (the slots before the change were sent under the old r; a
  sender that respects every trailing window is never over that).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from fractions import Fraction
from typing import NamedTuple

from .fec import reserved_avg, reserved_max

__all__ = ["Reservation", "Reservations", "negotiate_fields", "net_reserve",
           "parse_reservation"]


class Reservation(NamedTuple):
    """003's rate r (section 2.1): at most ``max`` messages in a slot, at most ``avg`` in
    any K consecutive slots (K is the run's ``window``)."""

    avg: int
    max: int

    def check(self) -> Reservation:
        if not (isinstance(self.avg, int) and isinstance(self.max, int)
                and self.avg >= 0 and self.max >= 0):
            raise ValueError(f"a reservation is two integers avg >= 0 and max >= 0, got "
                             f"avg={self.avg!r}, max={self.max!r}")
        return self


def parse_reservation(text: str, what: str = "reservation") -> Reservation:
    """``"AVG/MAX"`` (e.g. ``20/6``) -> Reservation; ValueError naming ``what``."""
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not m:
        raise ValueError(f"{what}: expected AVG/MAX (messages per K slots / per slot, "
                         f"e.g. 20/6), got {text!r}")
    return Reservation(int(m[1]), int(m[2]))


def net_reserve(r: Reservation, window: int, fec_i: int, fec_l: int
                ) -> tuple[Fraction, Fraction]:
    """r' = (avg', max'), the network messages the sender reserves for r with the FEC's
    redundancy (003 section 2.2; join messages excluded)."""
    return reserved_avg(r.avg, window, fec_i, fec_l), reserved_max(r.max, fec_i, fec_l)


def negotiate_fields(r: Reservation, from_slot: int, window: int, fec_i: int, fec_l: int,
                     renegotiation: bool) -> dict:
    """The extension fields of a ``negotiate`` record (trace schema v1): the slot from
    which r holds, the application's r (``x_avg``, ``x_max``), K, the network's r'
    (``x_rate_avg``, ``x_rate_max``: what ``tomkit check``'s rate property judges, in the
    units of its ``--rate-avg``/``--rate-max``) and whether it is an RN."""
    avg_n, max_n = net_reserve(r, window, fec_i, fec_l)
    return {"x_slot": from_slot, "x_avg": r.avg, "x_max": r.max, "x_rate_window": window,
            "x_rate_avg": float(avg_n), "x_rate_max": float(max_n),
            "x_rn": renegotiation}


class Reservations:
    """One sender's reservations over its slots and the originals it sent per slot: what
    the shaper asks before FEC-sending (module docstring)."""

    def __init__(self, window: int) -> None:
        self.window = window
        #: (first slot, reservation), in slot order; a later entry from the same slot
        #: replaces an earlier one
        self.steps: list[tuple[int, Reservation]] = []
        self.sent: dict[int, int] = {}

    def set(self, from_slot: int, r: Reservation) -> None:
        while self.steps and self.steps[-1][0] >= from_slot:
            self.steps.pop()
        self.steps.append((from_slot, r))

    def in_force(self, s: int) -> Reservation | None:
        out = None
        for start, r in self.steps:
            if start <= s:
                out = r
        return out

    def room(self, s: int) -> bool:
        """Whether one more original fits slot s (its max) and the K slots ending with s
        (the avg in force in s)."""
        r = self.in_force(s)
        if r is None:
            return True
        if self.sent.get(s, 0) + 1 > r.max:
            return False
        held = sum(self.sent.get(t, 0) for t in range(s - self.window + 1, s + 1))
        return held + 1 <= r.avg

    def count(self, s: int) -> None:
        self.sent[s] = self.sent.get(s, 0) + 1
        if len(self.sent) > 4 * self.window:  # only the last K slots are ever read
            for t in [t for t in self.sent if t <= s - self.window]:
                del self.sent[t]


def reservation_of(value: object, what: str) -> Reservation | None:
    """An option's reservation: None, a Reservation, an (avg, max) pair or ``"AVG/MAX"``."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        return parse_reservation(value, what)
    if isinstance(value, Sequence) and len(value) == 2:
        return Reservation(*value).check()  # type: ignore[arg-type]
    raise ValueError(f"{what}: expected AVG/MAX, got {value!r}")
