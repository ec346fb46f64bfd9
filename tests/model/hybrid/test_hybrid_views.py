"""Views that grow in the hybrid protocol (001, Rodrigues, Fonseca and Verissimo; joins
and recoveries are our decisions, docs/hybrid.md): in the simulator, seeded random
schedules of crashes, joins and recoveries with scripted role switches keep every
promised property (order, FIFO, causal, the view properties: one sequence of
configurations) and liveness; a joiner delivers, from its first configuration on, the
same sequence as everyone; every configuration is a view record; ``tomkit simulate``
takes --join and --recover for the hybrid; the planted ``no-state-transfer`` reading
is caught by the checker."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest

from tomkit.checker.oracle import promised
from tomkit.checker.properties import Options, properties
from tomkit.checker.result import Verdict
from tomkit.checker.trace import Trace
from tomkit.model.net.links import Delay
from tomkit.model.protocols import protocol
from tomkit.model.sim import SimConfig, simulate

END = ["liveness", "agreement", "validity"]
ALL = [*promised(protocol("hybrid").profile), *END]


def verdicts(records: list[dict]) -> dict[str, tuple[Verdict, str]]:
    trace = Trace.from_records(records)
    out = {}
    for n in ALL:
        r = properties()[n].check(trace, Options())
        out[n] = (r.verdict, r.explanation)
    return out


def schedule(seed: int) -> dict:
    """n, roles, crashes, recoveries and joins drawn from ``seed``."""
    rng = random.Random(seed)
    n = 4 + seed % 3
    spares = 1 + seed % 2
    first = list(range(n - spares))
    crashed = rng.sample(first, min(1 + seed % 2, len(first) - 1))  # the group lives on
    crashes = [(p, round(rng.uniform(0.1, 1.2), 3)) for p in crashed]
    recovers = [(p, round(t + rng.uniform(0.01, 0.6), 3)) for p, t in crashes
                if rng.random() < 0.7]
    joins = [(j, round(rng.uniform(0.05, 1.5), 3)) for j in range(n - spares, n)]
    roles = ",".join(str(a) for a in sorted(rng.sample(first, 1 + seed % 2)))
    return dict(n=n, crashes=crashes, recovers=recovers, joins=joins,
                options={"roles": roles, "switches": seed % 3})


def run(seed: int, **kw):
    # a run that never drains stops with Runaway rather than filling the memory
    cfg = dict(protocol="hybrid", rate=40, messages=150, delay=Delay("exponential", 0.01),
               seed=seed, max_events=400_000, **schedule(seed))
    cfg.update(kw)
    return simulate(SimConfig(**cfg))


@pytest.mark.parametrize("seed", range(16))
def test_random_schedules_with_joins_and_recoveries_hold_every_property(seed: int) -> None:
    res = run(seed)
    got = verdicts(res.records)
    assert {n: v for n, (v, _) in got.items()} == dict.fromkeys(ALL, Verdict.HOLDS), \
        (seed, schedule(seed), {n: x for n, (v, x) in got.items() if v != Verdict.HOLDS})
    sch = schedule(seed)
    joined = [r for r in res.records if r["kind"] == "join"]
    assert len(joined) == len(sch["joins"]) + len(sch["recovers"])
    # a recovered process is a new incarnation, named anew
    for p, _ in sch["recovers"]:
        assert any(r["process"] == f"p{p}~2" for r in joined)


def test_a_joiner_delivers_the_common_sequence_from_its_first_configuration() -> None:
    res = simulate(SimConfig(protocol="hybrid", n=4, rate=40, messages=120, seed=5,
                             delay=Delay("exponential", 0.01), options={"roles": "0"},
                             joins=[("p3", 0.6)]))
    recs = res.records
    order = {p: [r["msg"] for r in recs if r["kind"] == "deliver" and r["process"] == p]
             for p in ("p0", "p1", "p2", "p3")}
    assert order["p0"] == order["p1"] == order["p2"]
    j = order["p3"]
    assert 0 < len(j) < len(order["p0"])
    assert order["p0"][-len(j):] == j  # a suffix: nothing missed, nothing reordered
    # its join record, the STATE it received, then the configuration it joined in,
    # which the others installed too; it sends after joining, and everyone delivers its
    # messages
    mine = [r for r in recs if r["process"] == "p3"]
    first = next(i for i, r in enumerate(mine) if r["kind"] == "join")
    assert [r.get("x_packet", r["kind"]) for r in mine[first:first + 3]] == [
        "join", "state", "view"]
    assert not any(r["kind"] in ("send", "deliver", "view") for r in mine[:first])
    cfg = mine[first + 2]["view"]
    assert {r["process"] for r in recs if r.get("view") == cfg} == {"p0", "p1", "p2", "p3"}
    sent = [r["msg"] for r in mine if r["kind"] == "send"]
    assert sent and set(sent) <= set(order["p0"])


def test_every_configuration_is_a_view_record() -> None:
    """Configurations change at view changes and at the delivery of goingToActive and
    goingToPassive (section 5.3); each is logged by every member with the descriptors."""
    res = run(3, crashes=[], recovers=[], joins=[], n=3, options={"roles": "0",
                                                                  "switches": 2})
    views = [r for r in res.records if r["kind"] == "view"]
    per = {}
    for r in views:
        per.setdefault(r["process"], []).append(r["view"])
    seqs = list(per.values())
    assert len(seqs) == 3 and all(s == seqs[0] for s in seqs)
    assert [int(v.split(":")[0]) for v in seqs[0]] == list(range(len(seqs[0])))
    assert len(seqs[0]) - 1 == res.stats["role_changes"]
    assert all(r["x_config"] == int(r["view"].split(":")[0]) for r in views)


def test_deterministic_given_seed() -> None:
    assert run(7).records == run(7).records


def test_planted_no_state_transfer_is_caught() -> None:
    """The joiner that starts from the initial configuration delivers in configurations
    nobody else installed: same-view-delivery finds it (prefix and total order, which
    compare only within configurations both installed, do not)."""
    res = simulate(SimConfig(protocol="hybrid", n=4, rate=40, messages=120, seed=5,
                             delay=Delay("exponential", 0.01),
                             options={"roles": "0", "variant": "no-state-transfer"},
                             joins=[("p3", 0.6)]))
    got = verdicts(res.records)
    assert got["same-view-delivery"][0] == Verdict.VIOLATED
    assert "p3" in got["same-view-delivery"][1]


def test_simulate_command_takes_join_and_recover(tmp_path) -> None:
    out = tmp_path / "run.jsonl"
    cmd = [sys.executable, "-m", "tomkit", "simulate", "--protocol", "hybrid", "--n", "4",
           "--messages", "80", "--rate", "40", "--seed", "2", "--roles", "0,1",
           "--crash", "p0@0.4", "--recover", "p0@0.7", "--join", "p3@0.3",
           "--out", str(out)]
    subprocess.run(cmd, check=True, capture_output=True, timeout=300)
    recs = [json.loads(x) for x in out.read_text().splitlines()]
    assert {r["process"] for r in recs if r.get("kind") == "join"} == {"p3", "p0~2"}
    check = subprocess.run([sys.executable, "-m", "tomkit", "check", str(out),
                            "--guarantee", "model-hybrid", "--format", "json"],
                           capture_output=True, text=True, timeout=300)
    assert check.returncode == 0, check.stdout + check.stderr


def test_a_run_whose_group_dies_ends() -> None:
    """Every process crashes (one restarts, with nobody left to admit it): the sources of
    a protocol whose processes join by themselves stop once nobody is in the group and
    nobody may come back, rather than spin for ever."""
    res = simulate(SimConfig(protocol="hybrid", n=3, rate=20, messages=200, seed=1,
                             crashes=[("p0", 0.1), ("p1", 0.2), ("p2", 0.3)],
                             recovers=[("p2", 0.5)], max_events=100_000))
    assert res.stats["sends"] < 200 and res.stats["sim_time"] < 1.0
    assert not [r for r in res.records if r["kind"] == "join"]  # p2 waits outside
