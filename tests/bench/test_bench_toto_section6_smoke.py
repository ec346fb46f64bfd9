"""tomkit/runs/toto.py (000 section 6's omega, equations (1)-(2), timed receptions) and a
smoke run of bench/toto_section6.py."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import pytest
from locations import ROOT

from tomkit.model import protocols
from tomkit.model.sim import SimConfig, simulate
from tomkit.model.toto.dag import Message
from tomkit.runs.toto import (
    MeasuredToto,
    bin_receptions,
    joint_distribution,
    model_latency,
    model_speedup_ideal,
    simulate_measured,
)

BENCH = ROOT / "bench"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("proto,delta", [("toto", 2), ("gl-toto", 1)])
def test_measured_run_is_the_plain_run(proto: str, delta: int) -> None:
    """Measuring changes nothing: the same trace, record for record, and the temporary
    protocol is gone afterwards."""
    cfg = SimConfig(protocol=proto, n=4, options={"delta": delta}, messages=150, seed=5,
                    rate=30.0)
    m = simulate_measured(cfg, timing=True)
    assert m.result.records == simulate(cfg).records
    assert set(protocols.PROTOCOLS) == {p for p in protocols.PROTOCOLS if "~" not in p}
    assert len(m.rows) == m.stats["deliveries"] == 4 * 150
    assert {r.clause for r in m.rows} <= {"early", "default", "prefix"}
    assert all(1 <= r.omega <= 4 and 1 <= r.iol <= 4 and r.latency >= 0 for r in m.rows)
    assert len(m.receptions) >= 4 * 150  # every application message, at every process
    assert sum(x.delivered for x in m.receptions) >= m.stats["deliveries"]


def test_omega_counts_machines_with_a_concurrent_message() -> None:
    """000 section 6: omega = machines with a message concurrent to the newly received
    one, its own machine included."""
    names = ["a", "b", "c", "d"]
    c = MeasuredToto("c", names, "toto")
    a1, b1 = Message("a.1", "a"), Message("b.1", "b")  # concurrent: neither ACKs the other
    c.on_receive(a1, 0.0)
    assert c.omega["a.1"] == 1  # nothing else in c's view
    c.on_receive(b1, 0.0)
    assert c.omega["b.1"] == 2  # a.1 is concurrent to it
    b2 = Message("b.2", "b", ("a.1", "b.1"))  # follows everything c has
    c.on_receive(b2, 0.0)
    assert c.omega["b.2"] == 1
    d1 = Message("d.1", "d", ("a.1",))  # follows a.1, concurrent to b.1 and b.2
    c.on_receive(d1, 0.0)
    assert c.omega["d.1"] == 2
    c.on_send("c.1", 0.0)  # its own message follows every message it has seen
    assert c.omega["c.1"] == 1


def test_equations_reduce_to_their_closed_forms() -> None:
    """All-ack with omega = 1 (tau = n): (1) gives H_{n-1}/lambda, (2) gives (n-1)/n c;
    pairs outside the sums (tau <= n/2, omega > tau) are dropped and reported."""
    h7 = sum(1 / k for k in range(1, 8))
    assert model_latency({(8, 1): 1.0}, 8, 0.16, "poisson") == pytest.approx((0.16 * h7, 0))
    assert model_latency({(8, 1): 1.0}, 8, 0.16, "periodic") == pytest.approx((0.14, 0))
    # tau = 5, omega = 2: wait for 3 of the 6 others: 1/6 + 1/5 + 1/4, and 3/7 of c
    assert model_latency({(5, 2): 1.0}, 8, 1.0, "poisson")[0] == pytest.approx(37 / 60)
    assert model_latency({(5, 2): 1.0}, 8, 1.0, "periodic")[0] == pytest.approx(3 / 7)
    pred, dropped = model_latency({(4, 1): 0.25, (5, 6): 0.25, (6, 1): 0.5}, 8, 1.0,
                                  "periodic")
    assert dropped == pytest.approx(0.5) and pred == pytest.approx(0.5 * 5 / 8)
    with pytest.raises(ValueError, match="poisson and periodic"):
        model_latency({}, 8, 1.0, "quasi-periodic")
    # 000's O(log n) is the Poisson model's; periodic sources stay under 2
    poisson = [model_speedup_ideal(n, n // 2, "poisson") for n in (4, 8, 16, 32, 64)]
    assert poisson == sorted(poisson) and poisson[-1] > 6
    assert model_speedup_ideal(8, 4, "poisson") == pytest.approx(3.41, abs=0.01)
    assert all(model_speedup_ideal(n, n // 2, "periodic") < 2 for n in (4, 8, 64))


def test_bins_partition_the_receptions() -> None:
    m = simulate_measured(SimConfig(protocol="toto", n=5, options={"delta": 3}, messages=200,
                                    rate=80.0, seed=2), timing=True)
    for key, edges in (("pending", (0, 4, 8)), ("candidates", (0, 1, 2, 3))):
        bins = bin_receptions(m.receptions, key, edges)
        assert sum(b["count"] for b in bins) == len(m.receptions)
        assert all(b["quiet_n"] + b["deliv_n"] == b["count"] for b in bins)
    j = joint_distribution(m.rows)
    assert math.isclose(sum(j.values()), 1.0)


def test_bench_rows_and_pngs(tmp_path: Path) -> None:
    mod = _load("toto_section6")
    quiet = lambda s: None  # noqa: E731
    fig = mod.figure_rows(messages=300, seed=1, loads=(50, 200), sources=("poisson",),
                          log=quiet)
    assert [(r["load"], r["protocol"]) for r in fig] == [
        (50, "toto"), (50, "all-ack"), (200, "toto"), (200, "all-ack")]
    for r in fig:
        assert r["omega"] >= 1.0 and r["dropped"] == 0.0
        assert r["eps"] < 0.3  # the model is close to the simulation
        if r["protocol"] == "all-ack":
            assert r["iol"] == 8.0
        else:
            assert 5.0 <= r["iol"] < 8.0 and sum(r["iol_dist"].values()) == pytest.approx(1)
    sp = mod.speedup_rows(messages=300, seed=1, ns=(4, 8), sources=("poisson",), log=quiet)
    assert [r["n"] for r in sp] == [4, 8]
    assert all(r["speedup"] > 1.0 and r["speedup_model"] > 1.0 for r in sp)
    cx = mod.complexity_rows(messages=300, seed=1, runs=(("lan", 8),), log=quiet)
    assert sum(b["count"] for b in cx[0]["by_candidates"]) == cx[0]["receptions"]
    paths = [*mod.plot_figures(fig, tmp_path), mod.plot_speedup(sp, tmp_path)]
    assert [p.name for p in paths] == ["figure6_poisson.png", "speedup_vs_n.png"]
    for p in paths:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
