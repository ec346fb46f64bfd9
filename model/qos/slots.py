"""Slots, clocks and the join slot of the QoS-preserving totally ordered multicast.

Source: 003 section 2.1 (clocks: each process's clock C_p is within eps/2 of real time,
so two clocks differ by at most eps; slots of length Delta; every message arrives within
delta) and section 2.2 (join: s_j = floor(C_p/Delta) + ceil((delta+eps)/Delta) + 1; the
reading aid, ``briefs/001-003.md`` 2.2 and 2.4 B2 and B5, reconstructs the lost symbols).

Times are any real numbers (ints, ``Fraction`` for exact tests, floats in simulations).

Decisions on the text:

- B2: the join slot is the paper's formula, and ``join_slot`` asserts the condition the
  paper's argument needs: s_j*Delta > C_p + delta + eps, so every process has the join
  before its own clock reaches the start of s_j.
- B5: with skewed clocks a process r can send its join just before p wakes, for a slot
  after p's first (Delta=100, delta=50, eps=10: C_r=200 gives s_r=4, p waking at C_p=195
  gets s_j=3). Read literally (p treats every process as active in s_j only), p times r
  out in s_j and never delivers r. The safe reading, the default: p treats every
  process as active, until its end-of-slot marker or a timeout, in every slot of
  ``join_window`` = [s_j, s_j + ceil(eps/Delta) + 1]; the literal window is [s_j, s_j].
"""

from __future__ import annotations

import math

from ..net.clocks import Clocks  # the one clock abstraction (model/net/clocks.py)

__all__ = ["Clocks", "join_slot", "join_window", "slot_of"]


def slot_of(local: float, slot_length: float) -> int:
    """The slot a local time lies in: floor(C / Delta)."""
    return math.floor(local / slot_length)


def join_slot(local: float, slot_length: float, delta: float, epsilon: float) -> int:
    """003 section 2.2's join slot s_j = floor(C_p/Delta) + ceil((delta+eps)/Delta) + 1 for a
    joiner whose clock reads ``local``; asserts s_j*Delta > C_p + delta + eps (B2)."""
    s_j = slot_of(local, slot_length) + math.ceil((delta + epsilon) / slot_length) + 1
    if not s_j * slot_length > local + delta + epsilon:
        raise AssertionError(f"join slot {s_j} starts before every process has the join")
    return s_j


def join_window(s_j: int, slot_length: float, epsilon: float, literal: bool = False) -> range:
    """The slots in which a joiner waits for every process of the universe (B5): the
    safe window [s_j, s_j + ceil(eps/Delta) + 1], or [s_j] read literally."""
    if literal:
        return range(s_j, s_j + 1)
    return range(s_j, s_j + math.ceil(epsilon / slot_length) + 2)
