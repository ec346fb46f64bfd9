"""Tests of 001's simulation set-up (Rodrigues, Fonseca, Verissimo section 3, 4.4, 6.2):
the per-pair delay model (model/net/topology.py), per-process load schedules (model/net/load.py),
their wiring into the one simulator (model/sim.py) and 001's latency metric
(model/hybrid/latency.py)."""

from __future__ import annotations

import doctest
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import tomkit.model.hybrid.latency as latency_mod
import tomkit.model.net.topology as topology_mod
from tomkit.model.hybrid.latency import latency_001, latency_series, message_latencies
from tomkit.model.net.links import Delay
from tomkit.model.net.load import (
    FIG3_SCENARIOS,
    LoadError,
    LoadSchedule,
    fig3_schedule,
    fig5_schedule,
    load_preset,
    read_load_schedule,
)
from tomkit.model.net.topology import (
    Topology,
    TopologyError,
    absolute,
    chi2_dof,
    fig3_topology,
    lan,
    read_topology,
    series,
    wan,
)
from tomkit.model.sim import SimConfig, simulate


def test_doctests() -> None:
    assert doctest.testmod(topology_mod).failed == 0
    assert doctest.testmod(latency_mod).failed == 0


# ------------------------------------------------------------------ delay model


def test_lan_and_wan_are_shifted_chi2_with_the_papers_mean_and_variance() -> None:
    # LAN: cv2 0.05 with shift mean/2 is exactly a chi^2 of 10 degrees of freedom
    assert chi2_dof(lan()) == pytest.approx(10.0)
    assert chi2_dof(wan(cv2=0.5)) == pytest.approx(1.0)
    rng = np.random.default_rng(7)
    for d in (lan(), wan(), wan(cv2=0.5)):
        x = d.sample(rng, 200_000)
        assert x.mean() == pytest.approx(d.mean, rel=0.01)
        assert x.var() == pytest.approx(d.cv2 * d.mean ** 2, rel=0.03)
        assert x.min() >= d.mean / 2  # the shift: no message beats it
    # the chi^2 reading: (x - shift) / scale is chi^2_10 for the LAN
    x = lan().sample(rng, 200_000) - 0.010
    scale = 0.010 / 10  # mean of the gamma part / k
    assert (x / scale).var() == pytest.approx(2 * 10, rel=0.03)


def test_series_adds_shifts_means_and_variances() -> None:
    d = series(lan(0.020), wan(0.500, 0.3))
    assert d.kind == "gamma"
    assert d.mean == pytest.approx(0.520)
    assert d.shift == pytest.approx(0.010 + 0.250)
    assert d.cv2 * d.mean ** 2 == pytest.approx(0.05 * 0.02 ** 2 + 0.3 * 0.5 ** 2)
    x = d.sample(np.random.default_rng(1), 100_000)
    y = (lan(0.020).sample(np.random.default_rng(2), 100_000)
         + wan(0.500, 0.3).sample(np.random.default_rng(3), 100_000))
    assert x.mean() == pytest.approx(y.mean(), rel=0.01)
    assert x.var() == pytest.approx(y.var(), rel=0.05)
    c = series(Delay("constant", 0.1), Delay("constant", 0.2))
    assert c.kind == "constant" and c.mean == pytest.approx(0.3)
    with pytest.raises(ValueError):
        series()


def test_ms2_reading() -> None:
    x = absolute(0.5, 0.4).sample(np.random.default_rng(3), 100_000)
    assert x.mean() == pytest.approx(0.5, rel=1e-4)
    assert (x * 1e3).var() == pytest.approx(0.4, rel=0.03)  # ms^2
    t = fig3_topology()  # the figures' reading
    assert t.delays[0][1] == absolute(0.020, 0.05)
    assert t.delays[0][3].cv2 * 0.52 ** 2 * 1e6 == pytest.approx(0.05 + 0.4)
    with pytest.raises(TopologyError, match="reading"):
        fig3_topology(reading="s2")


def test_fig3_topology_pairs() -> None:
    t = fig3_topology(reading="cv2")
    assert t.labels == ("A", "B", "C", "D", "E")
    m = t.means()
    for i in range(5):
        for j in range(5):
            same = (i < 3) == (j < 3)
            want = 0.0 if i == j else (0.020 if same else 0.520)
            assert m[i][j] == pytest.approx(want)
    assert len(t.link_delays()) == 20
    assert t.delays[0][3] == series(lan(), wan())


def test_topology_validation() -> None:
    with pytest.raises(TopologyError, match="once"):
        Topology.groups([["A", "A"]], lan(), wan())
    with pytest.raises(TopologyError, match="once"):
        Topology.groups([["A", "B"], ["B"]], lan(), wan())
    with pytest.raises(TopologyError, match="unknown process 'Z'"):
        Topology.groups([["A", "B"]], lan(), wan(), links={("A", "Z"): wan()})
    t = Topology.groups([["A", "B"], ["C"]], lan(), wan(), links={("A", "B"): wan()})
    assert t.mean(0, 1) == 0.5 and t.mean(1, 0) == 0.02 and t.mean(0, 2) == 0.5


FIG3_TOML = """\
processes = ["A", "B", "C", "D", "E"]
groups = [["A", "B", "C"], ["D", "E"]]
intra = "lan"
inter = "path"

[network.lan]
mean = 0.020
cv2 = 0.05

[network.wan]
mean = 0.500
cv2 = 0.3

[network.path]
series = ["lan", "wan"]
"""


def test_read_topology_equals_the_preset(tmp_path: Path) -> None:
    f = tmp_path / "fig3.toml"
    f.write_text(FIG3_TOML)
    assert read_topology(f) == fig3_topology(reading="cv2")
    f.write_text(FIG3_TOML.replace("cv2 = 0.05", "var_ms2 = 0.05").replace("cv2 = 0.3",
                                                                           "var_ms2 = 0.4"))
    assert read_topology(f).means() == fig3_topology().means()
    assert read_topology(f).delays[4][1] == pytest.approx(fig3_topology().delays[4][1])
    f.write_text(FIG3_TOML + '\n[[link]]\nfrom = "E"\nto = "A"\nnetwork = "lan"\n')
    t = read_topology(f)
    assert t.mean(4, 0) == pytest.approx(0.02) and t.mean(0, 4) == pytest.approx(0.52)


@pytest.mark.parametrize("edit,match", [
    (("cv2 = 0.3", "cv2 = -1"), r"fig3.toml:12: field network.wan.cv2"),
    (("cv2 = 0.05", "cv2 = 0.05\nspeed = 3"), r"fig3.toml:9: unknown field network.lan.speed"),
    (('inter = "path"', 'inter = "sat"'), r"fig3.toml:4: field inter: unknown network 'sat'"),
    (('["D", "E"]]', '["D"]]'), r"fig3.toml:2: field groups"),
    (("processes", "procs"), r"fig3.toml:1: unknown field 'procs'"),
    (("mean = 0.500", "mean = 0.500\nkind = 'radio'"), r"fig3.toml:12: field network.wan.kind"),
    (('series = ["lan", "wan"]', 'series = ["lan", "path"]'), r"series of itself"),
    (("[network.lan]", "[network.lan"), r"fig3.toml: not TOML"),
])
def test_bad_topology_names_file_line_and_field(tmp_path: Path, edit: tuple[str, str],
                                                match: str) -> None:
    f = tmp_path / "fig3.toml"
    f.write_text(FIG3_TOML.replace(*edit))
    with pytest.raises(TopologyError, match=match):
        read_topology(f)


def test_missing_topology_file(tmp_path: Path) -> None:
    with pytest.raises(TopologyError, match="cannot read"):
        read_topology(tmp_path / "none.toml")


# ------------------------------------------------------------------ load schedules


def test_schedules() -> None:
    s = fig5_schedule(dwell=10)
    assert s.n == 5 and s.end == 90 and len(s.steps) == 9
    assert s.rates_at(0) == (100, 1, 1, 1, 1)
    assert s.rates_at(35) == _r(FIG3_SCENARIOS[3])
    assert s.names[8] == "scenario 9" and s.rates_at(89.9) == (100,) * 5
    # scenario 1 -> 2 changes B only; 3 -> 4 changes A, B, C and D
    ch = dict(s.changes())
    assert ch[10] == [(1, 100)]
    assert ch[30] == [(0, 1), (1, 1), (2, 1), (3, 100)]
    assert fig3_schedule(6).rates_at(5) == (100, 1, 1, 100, 1)
    assert load_preset("001-fig3:9").rates_at(0) == (100,) * 5
    assert load_preset("001-fig5:2").end == 18
    for bad in ("001-fig3:10", "001-fig3", "fig9", "001-fig5:x"):
        with pytest.raises(LoadError):
            load_preset(bad)
    with pytest.raises(LoadError, match="increase"):
        LoadSchedule(((0.0, (1.0,)), (0.0, (2.0,))))
    with pytest.raises(LoadError, match="time 0"):
        LoadSchedule(((1.0, (1.0,)),))
    with pytest.raises(LoadError, match="one rate per process"):
        LoadSchedule(((0.0, (1.0,)), (1.0, (2.0, 3.0))))
    with pytest.raises(LoadError, match="H or L"):
        LoadSchedule.scenarios(["HX"])


def _r(p: str) -> tuple[float, ...]:
    return tuple(100.0 if c == "H" else 1.0 for c in p)


LOAD_TOML = """\
end = 30.0
low = 2.0

[[step]]
at = 0.0
loads = "HLLLL"

[[step]]
at = 10.0
rates = [0, 5, 1, 1, 1]
name = "quiet A"
"""


def test_read_load_schedule(tmp_path: Path) -> None:
    f = tmp_path / "load.toml"
    f.write_text(LOAD_TOML)
    s = read_load_schedule(f, n=5)
    assert s.steps == ((0.0, (100.0, 2.0, 2.0, 2.0, 2.0)), (10.0, (0.0, 5.0, 1.0, 1.0, 1.0)))
    assert s.end == 30 and s.names == ("step 1", "quiet A")


@pytest.mark.parametrize("edit,match", [
    (('loads = "HLLLL"', 'loads = "HLXLL"'), r"load.toml:4: step 1: field step.loads"),
    (("rates = [0, 5, 1, 1, 1]", "rates = [0, -5, 1, 1, 1]"), r"load.toml:8: field step.rates"),
    (("rates = [0, 5, 1, 1, 1]", "rates = [0, 5, 1, 1]"), r"load.toml:8: step 2: 4 rates"),
    (("at = 10.0", "at = 0.0"), r"load.toml: step times must increase"),
    (('name = "quiet A"', 'nam = "quiet A"'), r"load.toml:8: step 2: unknown field step.nam"),
    (("low = 2.0", "low = 2.0\nmid = 1"), r"load.toml:3: unknown field 'mid'"),
    (('at = 10.0\n', ''), r"load.toml:8: step 2: field step.at: missing"),
])
def test_bad_load_schedule_names_file_line_and_field(tmp_path: Path, edit: tuple[str, str],
                                                     match: str) -> None:
    f = tmp_path / "load.toml"
    f.write_text(LOAD_TOML.replace(*edit))
    with pytest.raises(LoadError, match=match):
        read_load_schedule(f, n=5)


# ------------------------------------------------------------------ the simulator


def _sends(records: list[dict]) -> list[tuple[str, float]]:
    return [(r["process"], r["time"]) for r in records if r["kind"] == "send"]


def test_simulator_follows_the_load_schedule() -> None:
    load = LoadSchedule(((0.0, (50.0, 0.0, 5.0)), (2.0, (0.0, 20.0, 5.0))), end=4.0)
    res = simulate(SimConfig(protocol="all-ack", n=3, source="periodic", messages=10 ** 6,
                             delay=Delay("constant", 0.001), load=load, seed=3))
    sends = _sends(res.records)
    before = Counter(p for p, t in sends if t < 2)
    after = Counter(p for p, t in sends if t >= 2)
    # periodic: exactly rate * 2 s, give or take the random phase's one message
    assert before["p0"] in (99, 100) and before["p1"] == 0 and before["p2"] in (9, 10)
    assert after["p0"] == 0 and after["p1"] in (39, 40) and after["p2"] in (9, 10)
    assert max(t for _, t in sends) < 4.0
    # p2's rate did not change: its source was not restarted (gaps stay 0.2 s)
    t2 = [t for p, t in sends if p == "p2"]
    assert np.allclose(np.diff(t2), 0.2)
    # the budget still applies
    res = simulate(SimConfig(protocol="all-ack", n=3, messages=7, load=load, seed=3))
    assert len(_sends(res.records)) == 7


def test_load_schedule_sources_start_at_random_phases() -> None:
    load = LoadSchedule.constant([10.0] * 20, end=0.3)
    res = simulate(SimConfig(protocol="all-ack", n=20, source="quasi-periodic",
                             messages=10 ** 6, load=load, delay=Delay("constant", 0.001)))
    first = sorted(min(t for p, t in _sends(res.records) if p == q)
                   for q in {p for p, _ in _sends(res.records)})
    assert len(first) == 20 and first[0] < 0.02 and first[-1] > 0.08  # spread over 0.1 s
    # Poisson: about rate * time messages
    res = simulate(SimConfig(protocol="all-ack", n=4, source="poisson", messages=10 ** 6,
                             load=LoadSchedule.constant([100.0] * 4, end=5.0),
                             delay=Delay("constant", 0.001)))
    assert 1800 < len(_sends(res.records)) < 2200


def test_simulator_uses_the_topologys_pair_delays() -> None:
    # ABCAST logs a data message's reception on arrival (the ToTo family only once its
    # causal predecessors are there)
    res = simulate(SimConfig(protocol="abcast", n=5, topology=fig3_topology(),
                             load=fig3_schedule(9, end=1.0), messages=10 ** 6, seed=2))
    sent = {r["msg"]: (r["process"], r["time"]) for r in res.records if r["kind"] == "send"}
    grp = {"p0": 0, "p1": 0, "p2": 0, "p3": 1, "p4": 1}
    near, far = [], []
    for r in res.records:
        if (r["kind"] == "recv" and "x_packet" not in r
                and sent[r["msg"]][0] != r["process"]):
            p, t = sent[r["msg"]]
            (near if grp[p] == grp[r["process"]] else far).append(r["time"] - t)
    assert near and far
    assert min(near) >= 0.010 and min(far) >= 0.260  # the shifts
    assert np.mean(near) == pytest.approx(0.020, rel=0.2)
    assert 0.45 < np.median(far) < 1.5  # FIFO clamping only adds
    with pytest.raises(ValueError, match="topology has 5 processes"):
        simulate(SimConfig(protocol="all-ack", n=4, topology=fig3_topology()))
    with pytest.raises(ValueError, match="load schedule is for 5"):
        simulate(SimConfig(protocol="all-ack", n=4, load=fig3_schedule(1)))


# ------------------------------------------------------------------ latency metric


def _rec(kind: str, p: str, m: str, t: float) -> dict:
    return {"kind": kind, "process": p, "msg": m, "time": t}


def test_latency_is_the_mean_of_each_messages_maximum_delivery_time() -> None:
    recs = [_rec("send", "a", "a.1", 0.0), _rec("deliver", "a", "a.1", 0.1),
            _rec("deliver", "b", "a.1", 0.5), _rec("deliver", "c", "a.1", 0.2),
            _rec("send", "a", "a.2", 1.0), _rec("deliver", "a", "a.2", 1.1),
            _rec("deliver", "b", "a.2", 1.1), _rec("deliver", "c", "a.2", 1.3),
            _rec("send", "b", "b.1", 2.0), _rec("deliver", "b", "b.1", 2.1),
            _rec("deliver", "a", "b.1", 2.2),  # c never delivers b.1
            _rec("send", "c", "c.1", 3.0), _rec("deliver", "c", "c.1", 3.0),
            _rec("deliver", "a", "c.1", 3.9), _rec("deliver", "b", "c.1", 3.1)]
    lat = latency_001(recs)
    assert lat.count == 3 and lat.incomplete == 1
    assert lat.mean == pytest.approx((0.5 + 0.3 + 0.9) / 3)
    assert lat.per_sender == {"a": (pytest.approx(0.4), 2), "c": (pytest.approx(0.9), 1)}
    assert latency_001(recs, since=0.5, until=2.5).mean == pytest.approx(0.3)
    assert latency_001(recs, since=0.5, until=2.5).incomplete == 1
    ser = latency_series(recs, 2.0)
    assert [(s, c) for s, _, c in ser] == [(0.0, 2), (2.0, 1)]
    assert ser[0][1] == pytest.approx(0.4) and ser[1][1] == pytest.approx(0.9)
    # a crashed process owes nothing: without c, b.1 is complete; c's own message too
    crashed = recs + [{"kind": "crash", "process": "c", "time": 3.5}]
    done, missing = message_latencies(crashed)
    assert set(done) == {"a.1", "a.2", "b.1", "c.1"} and not missing
    assert done["a.1"][2] == pytest.approx(0.5) and done["c.1"][2] == pytest.approx(0.9)
    assert math.isnan(latency_001([]).mean)


def test_latency_matches_the_simulators_own_mean_on_a_two_process_run() -> None:
    # with two processes and constant delays, every message's maximum is its delivery at
    # the other process or at its sender, whichever is later; check against the records
    res = simulate(SimConfig(protocol="all-ack", n=2, messages=200, rate=20,
                             delay=Delay("constant", 0.01), seed=4))
    lat = latency_001(res)
    per_msg: dict[str, list[float]] = {}
    sent = {r["msg"]: r["time"] for r in res.records if r["kind"] == "send"}
    for r in res.records:
        if r["kind"] == "deliver":
            per_msg.setdefault(r["msg"], []).append(r["time"] - sent[r["msg"]])
    assert lat.count == 200 == len(per_msg)
    assert lat.mean == pytest.approx(np.mean([max(v) for v in per_msg.values()]))
    assert lat.mean >= res.stats["mean_latency"]


# ------------------------------------------------------------------ command line


def test_cli_takes_a_topology_and_a_load_schedule(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture) -> None:
    from tomkit.cli import main

    topo, load, out = tmp_path / "fig3.toml", tmp_path / "load.toml", tmp_path / "run.jsonl"
    topo.write_text(FIG3_TOML)
    load.write_text(LOAD_TOML.replace("end = 30.0", "end = 2.0").replace("at = 10.0",
                                                                         "at = 1.0"))
    argv = ["simulate", "--protocol", "abcast", "--topology", str(topo), "--load-schedule",
            str(load), "--messages", "100000", "--seed", "5", "--source", "periodic",
            "--out", str(out)]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "seed 5" in text and "n=5" in text and "001 latency" in text
    sends = Counter(r["process"] for r in _read(out) if r.get("kind") == "send")
    assert 95 <= sends["p0"] <= 101 and sends["p1"] in (6, 7, 8)  # 2/s, then 5/s
    assert main(["check", str(out), "-q"]) == 0
    assert main(argv[:4] + ["001-fig3", "--load-schedule", "001-fig3:9", "--messages",
                            "60", "--out", str(out)]) == 0
    # bad input: exit 2, the file, line and field named
    topo.write_text(FIG3_TOML.replace("cv2 = 0.3", "cv2 = 'x'"))
    assert main(argv) == 2
    assert "fig3.toml:12: field network.wan.cv2" in capsys.readouterr().err
    assert main(["simulate", "--protocol", "abcast", "--load-schedule", "001-fig3:1",
                 "--out", str(out)]) == 2
    assert "for 5 processes, the run has 8" in capsys.readouterr().err
    assert main(["simulate", "--protocol", "abcast", "--topology", "001-fig4",
                 "--out", str(out)]) == 2


def _read(path: Path) -> list[dict]:
    import json

    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def test_cli_fills_the_hybrids_delays_and_rates(tmp_path: Path,
                                                capsys: pytest.CaptureFixture) -> None:
    from tomkit.cli import main

    out = tmp_path / "run.jsonl"
    assert main(["simulate", "--protocol", "hybrid", "--topology", "001-fig3",
                 "--load-schedule", "001-fig3:4", "--messages", "150", "--seed", "2",
                 "--no-control-records", "--out", str(out)]) == 0
    assert "rates=[1.0, 1.0, 1.0, 100.0, 1.0]" in capsys.readouterr().out
    # Figure 2 on the topology's delays and the schedule's rates: D orders every message
    issuers = {r["x_ticket"][0] for r in _read(out) if r.get("kind") == "deliver"}
    assert issuers == {"p3"}
