"""model/net/clocks.py: per-process clocks with bounded skew and drift, and the
simulator's use of them for a protocol that declares clocks (Protocol.clocks)."""

from __future__ import annotations

import numpy as np
import pytest

from tomkit.model.net.clocks import ClockBounds, Clocks, clock_rng
from tomkit.model.qos.slots import Clocks as SlotClocks
from tomkit.model.sim import SimConfig, simulate


def test_drawn_clocks_stay_within_their_bounds() -> None:
    c = Clocks.draw(50, 0.02, np.random.default_rng(7), rho=1e-4)
    assert all(abs(o) <= 0.01 for o in c.offsets)
    assert all(abs(d) <= 1e-4 for d in c.drifts)
    assert max(c.offsets) - min(c.offsets) > 0.015  # they do spread over the bound
    for t in (0.0, 1.0, 100.0):
        locs = [c.local(p, t) for p in range(50)]
        assert all(abs(x - t) <= c.bound(t) + 1e-12 for x in locs)
        assert max(locs) - min(locs) <= 2 * c.bound(t)


def test_local_and_real_are_inverse_and_clocks_run_forward() -> None:
    c = Clocks((0.003, -0.004), 0.01, (5e-5, -8e-5), 1e-4)
    for p in (0, 1):
        for t in (0.0, 0.5, 37.25):
            assert c.real(p, c.local(p, t)) == pytest.approx(t, abs=1e-12)
        assert c.local(p, 2.0) > c.local(p, 1.0)


def test_without_drift_local_time_is_real_plus_offset_bit_for_bit() -> None:
    c = Clocks.draw(4, 0.01, np.random.default_rng(3))
    assert c.drifts == ()
    for t in (0.1, 1.7, 12.345):
        assert [c.local(p, t) for p in range(4)] == [t + o for o in c.offsets]


def test_bad_bounds_and_offsets_are_refused() -> None:
    with pytest.raises(ValueError, match="offset of process 1"):
        Clocks((0.0, 0.02), 0.01)
    with pytest.raises(ValueError, match="drift of process 0"):
        Clocks((0.0, 0.0), 0.01, (2e-4, 0.0), 1e-4)
    with pytest.raises(ValueError, match="skew"):
        ClockBounds(-1.0)
    with pytest.raises(ValueError, match="drift"):
        ClockBounds(0.0, 1.5)


def test_003s_timed_network_and_the_hybrid_share_one_clock_class() -> None:
    assert SlotClocks is Clocks


def _run(seed: int, **opts):
    return simulate(SimConfig(protocol="symmetric", n=4, messages=80, rate=50.0, seed=seed,
                              options={"control_records": False, **opts}))


def test_clocks_are_drawn_from_the_seed_and_only_when_asked_for() -> None:
    a, b, c = (_run(1, clock_skew=0.05, clock_drift=1e-4),
               _run(1, clock_skew=0.05, clock_drift=1e-4),
               _run(2, clock_skew=0.05, clock_drift=1e-4))
    assert a.records == b.records
    off = lambda res: {r["process"]: round(r["time"] - r["real_time"], 9)  # noqa: E731
                       for r in res.records if r["kind"] == "send"}
    assert off(a) != off(c)
    plain = _run(1)
    assert all("real_time" not in r for r in plain.records)  # no clocks: as before
    rng = clock_rng(1)
    want = Clocks.draw(4, 0.05, rng, 1e-4)
    for r in a.records:
        i = int(r["process"][1:])
        assert r["time"] == pytest.approx(want.local(i, r["real_time"]), abs=1e-12)


def test_given_offsets_are_checked_against_the_skew() -> None:
    with pytest.raises(ValueError, match="beyond eps/2"):
        simulate(SimConfig(protocol="symmetric", n=2, messages=4, clock_offsets=[0.1, 0.0],
                           options={"clock_skew": 0.05}))
    with pytest.raises(ValueError, match="2 offsets for 3 processes"):
        simulate(SimConfig(protocol="symmetric", n=3, messages=4, clock_offsets=[0.0, 0.0],
                           options={"clock_skew": 0.05}))
    with pytest.raises(ValueError, match="no timed network"):
        simulate(SimConfig(protocol="toto", n=3, messages=4, clock_offsets=[0.0, 0.0, 0.0]))
