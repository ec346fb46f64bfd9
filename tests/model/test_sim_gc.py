"""simulate() runs with the cyclic collector's first threshold raised (model/sim.py: a
dict per record kept for the whole run made the collector's passes a sixth of a ToTo
run) and sets it back afterwards, also when the run fails; the traces stay the ones
of tests/model/test_sim_digests.py."""

from __future__ import annotations

import gc

import pytest

from tomkit.model import sim
from tomkit.model.sim import Runaway, SimConfig, simulate


@pytest.fixture
def thresholds():
    saved = gc.get_threshold()
    gc.set_threshold(700, 9, 11)
    yield
    gc.set_threshold(*saved)


def test_the_threshold_is_raised_during_the_run_and_set_back(thresholds, monkeypatch) -> None:
    seen = []
    run = sim._Sim.run

    def spy(self):  # noqa: ANN001, ANN202 - the simulator's own method
        seen.append(gc.get_threshold())
        return run(self)

    monkeypatch.setattr(sim._Sim, "run", spy)
    res = simulate(SimConfig(protocol="toto", n=4, messages=200, seed=2))
    assert res.stats["deliveries"] == 800
    assert seen == [(sim.GC_THRESHOLD, 9, 11)]
    assert gc.get_threshold() == (700, 9, 11)


def test_set_back_when_the_run_fails(thresholds) -> None:
    with pytest.raises(Runaway):
        simulate(SimConfig(protocol="toto", n=4, messages=200, seed=2, max_events=50))
    assert gc.get_threshold() == (700, 9, 11)


def test_a_higher_threshold_is_kept(thresholds) -> None:
    gc.set_threshold(10 * sim.GC_THRESHOLD, 9, 11)
    simulate(SimConfig(protocol="toto", n=3, messages=30, seed=2))
    assert gc.get_threshold() == (10 * sim.GC_THRESHOLD, 9, 11)
