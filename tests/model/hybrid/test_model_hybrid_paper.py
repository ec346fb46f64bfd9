"""What 001 (Rodrigues, Fonseca, Verissimo) states, pinned: ticket order (section 4.1),
the mode rule and Figure 2's heuristic on Figure 3's topology (five processes on two
LANs, D1 = 20 ms, D2 = 500 ms) for every high/low load pattern, the 20 % hysteresis of
section 6.2 at its boundaries, and section 6.1's mean-shift detector."""

from __future__ import annotations

import doctest
import itertools

import pytest

import tomkit.model.hybrid.switch as switch_mod
import tomkit.model.hybrid.wire as wire_mod
from tomkit.model.hybrid.switch import (
    MeanShift,
    assign_modes,
    better_sequencer,
    is_passive,
    switch_decision,
)
from tomkit.model.hybrid.wire import Ticket

D1, D2 = 0.020, 0.500
HIGH, LOW = 1 / 100, 1 / 1  # inter-message times: 100 msg/s; 1 msg/s (see below)
LAN = ({0, 1, 2}, {3, 4})  # A, B, C and D, E


def figure3_delays() -> list[list[float]]:
    """A, B, C (and D, E) within D1 of each other; across the groups D1 + D2."""
    def d(i: int, j: int) -> float:
        if i == j:
            return 0.0
        same = any(i in g and j in g for g in LAN)
        return D1 if same else D1 + D2

    return [[d(i, j) for j in range(5)] for i in range(5)]


def test_doctests() -> None:
    assert doctest.testmod(switch_mod).failed == 0
    assert doctest.testmod(wire_mod).failed == 0


def test_ticket_order_number_then_issuer() -> None:
    """Section 4.1: by ticket number, equal numbers by the issuers' order."""
    a5, b5, a6, b4 = Ticket(0, 5, 3, 1), Ticket(1, 5, 3, 2), Ticket(0, 6, 4, 1), \
        Ticket(1, 4, 4, 2)
    assert sorted([a6, b5, a5, b4], key=lambda t: t.key) == [b4, a5, b5, a6]
    assert a5.msg == (3, 1)


def test_mode_rule_tie_and_sides() -> None:
    """D + t > 2D passive; D + t < 2D active; the tie passive (Figure 2's strict <)."""
    assert is_passive(0.05, 0.1) and not is_passive(0.2, 0.1)
    assert is_passive(0.1, 0.1)


@pytest.mark.parametrize("loads", list(itertools.product("HL", repeat=5)))
def test_figure2_on_figure3_every_load_pattern(loads: tuple[str, ...]) -> None:
    """Section 4.4: "heavily loaded processes are active and lightly loaded processes are
    passive in all scenarios" (the low rate is lost in the OCR; any rate below
    1 / 520 ms gives this, we use 1 msg/s), each passive process's sequencer the nearest
    active one (its own LAN first, then across; the lowest id on a tie); with no high
    load at all, A (the highest rate, lowest id) is the one active process."""
    gaps = [HIGH if x == "H" else LOW for x in loads]
    modes, seqs = assign_modes(figure3_delays(), gaps)
    if "H" not in loads:
        assert modes == ("active",) + ("passive",) * 4 and seqs == (0,) * 5
        return
    assert modes == tuple("active" if x == "H" else "passive" for x in loads)
    for j, x in enumerate(loads):
        if x == "H":
            assert seqs[j] == j
            continue
        mine = next(g for g in LAN if j in g)
        near = sorted(i for i in mine if loads[i] == "H")
        far = sorted(i for i in range(5) if loads[i] == "H" and i not in mine)
        assert seqs[j] == (near or far)[0]


def test_figure2_promotes_when_sending_faster_than_the_delay() -> None:
    """n = 2, t = 100 ms: D = 50 ms passive, D = 200 ms active, D = 100 ms passive (tie)."""
    for d, expect in ((0.05, "passive"), (0.2, "active"), (0.1, "passive")):
        delays = [[0, d], [d, 0]]
        assert assign_modes(delays, [0.01, 0.1])[0][1] == expect


def test_figure2_order_of_iteration_matters_and_is_ascending() -> None:
    """A7: two nearby passive processes both faster than the far active one; whichever is
    promoted first serves the other. Ascending ids: the lower one is promoted."""
    far, near = 0.5, 0.01
    delays = [[0, far, far], [far, 0, near], [far, near, 0]]
    modes, seqs = assign_modes(delays, [0.001, 0.1, 0.1])
    assert modes == ("active", "active", "passive") and seqs == (0, 1, 1)


@pytest.mark.parametrize("active,gap,expect", [
    (True, 0.115, False), (True, 0.125, True), (True, 0.119999, False),
    (False, 0.085, False), (False, 0.075, True), (False, 0.080001, False),
])
def test_hysteresis_boundaries(active: bool, gap: float, expect: bool) -> None:
    """Section 6.2 with D* = 100 ms: an active process goes passive only beyond
    t = 120 ms, a passive one goes active only below t = 80 ms."""
    assert switch_decision(active, gap, 0.1) is expect


def test_hysteresis_parameter_and_sequencer_change() -> None:
    assert switch_decision(True, 0.125, 0.1, h=0.3) is False
    assert switch_decision(True, 0.135, 0.1, h=0.3) is True
    assert better_sequencer(0.1, 0.079) and not better_sequencer(0.1, 0.081)


def test_mean_shift_initial_mean_runs_and_noise() -> None:
    d = MeanShift(3)
    assert [d.add(x) for x in (10, 10)] == [None, None]
    assert d.add(13) == 11.0  # the mean of the first k
    # alternating sides: no run of k, no shift
    for x in (12, 10, 12, 10, 12, 10):
        assert d.add(x) == 11.0
    # k samples on one side: the mean becomes the run's
    assert [d.add(x) for x in (20, 22, 24)][-1] == 22.0
    # a run longer than k shifts at its k-th sample, then starts again
    assert [d.add(x) for x in (5, 5, 5)][-1] == 5.0
    with pytest.raises(ValueError):
        MeanShift(0)
