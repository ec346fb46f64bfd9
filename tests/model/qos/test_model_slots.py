"""003's clocks and join slot (Bar-Joseph et al. 2.1-2.2; reading aid B2 and B5), with the
reading aid's numbers: Delta = 100, delta = 50, eps = 10 (ms)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from tomkit.model.qos.slots import Clocks, join_slot, join_window, slot_of

SLOT, DELTA, EPS = 100, 50, 10


def test_join_slot_of_the_reading_aid() -> None:
    assert join_slot(200, SLOT, DELTA, EPS) == 4
    assert join_slot(195, SLOT, DELTA, EPS) == 3
    assert slot_of(199, SLOT) == 1 and slot_of(200, SLOT) == 2


def test_literal_join_window_misses_the_skewed_joiner_and_the_safe_one_waits() -> None:
    # B5: r joins at C_r = 200 (slot 4) just before p wakes at C_p = 195 (slot 3).
    s_r, s_p = join_slot(200, SLOT, DELTA, EPS), join_slot(195, SLOT, DELTA, EPS)
    assert s_r not in join_window(s_p, SLOT, EPS, literal=True)
    assert s_r in join_window(s_p, SLOT, EPS)
    assert list(join_window(s_p, SLOT, EPS)) == [3, 4, 5]


times = st.fractions(min_value=0, max_value=10_000, max_denominator=1000)
offsets = st.fractions(
    min_value=Fraction(-EPS, 2), max_value=Fraction(EPS, 2), max_denominator=1000
)


@settings(max_examples=examples(200), deadline=None)
@given(t_r=times, wait=times, off_r=offsets, off_p=offsets, off_q=offsets, lag=times)
def test_join_slot_safety_and_window(t_r, wait, off_r, off_p, off_q, lag) -> None:
    clocks = Clocks((off_r, off_p, off_q), EPS)
    s_r = join_slot(clocks.local(0, t_r), SLOT, DELTA, EPS)
    # B2: r's join, arriving within delta, reaches q before q's clock starts slot s_r.
    arrival = t_r + min(lag, DELTA)
    assert clocks.local(2, arrival) < s_r * SLOT
    # B5: p waking after r sent its join (so it may miss it) has r's slot in its window.
    s_p = join_slot(clocks.local(1, t_r + wait), SLOT, DELTA, EPS)
    assert s_r <= join_window(s_p, SLOT, EPS)[-1]


def test_clocks_bounds_and_conversion() -> None:
    clocks = Clocks.draw(64, EPS, np.random.default_rng(3))
    assert max(clocks.offsets) - min(clocks.offsets) <= EPS
    assert clocks.real(5, clocks.local(5, 123.0)) == pytest.approx(123.0)
    with pytest.raises(ValueError, match="process 1"):
        Clocks((0, 6), EPS)
    with pytest.raises(ValueError, match="eps"):
        Clocks((), -1)
