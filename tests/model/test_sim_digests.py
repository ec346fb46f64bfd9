"""A speed change leaves every simulated trace byte for byte what it was (issue 30 part 6).

tests/data/sim_digests.json holds, per run below, the SHA-256 of its records (canonical
JSON, one record a line) and of its statistics (wall time left out), computed by the code
before the speed work (its "about" names the commit). The runs cover the ToTo family
with today's defaults (ACK-only messages never candidates, idle ACKs), Crash(q), 001's
per-link gamma delays, the membership service (toto-dynamic: crash, join, partition,
heal), and ABCAST, TOMP, the sequencer and QoS, which share the simulator's event loop.
``PYTHONPATH=tests python tests/model/test_sim_digests.py --write`` rewrites the file (only from the
reference code: a changed digest is a changed trace).
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
from typing import Any

import pytest
from locations import DATA

from tomkit.model.net.links import Delay
from tomkit.model.sim import SimConfig, simulate

PATH = DATA / "sim_digests.json"

#: name -> SimConfig keyword arguments
RUNS: dict[str, dict[str, Any]] = {
    **{f"{p}-seed{s}": dict(protocol=p, n=8, options={"delta": 4}, messages=1500, seed=s)
       for p in ("toto", "s-toto", "g-toto", "gl-toto") for s in (1, 2, 7)},
    "all-ack-seed3": dict(protocol="all-ack", n=5, messages=1000, seed=3),
    "toto-n4-periodic": dict(protocol="toto", n=4, source="periodic", messages=800, seed=5),
    "toto-n13-slow": dict(protocol="toto", n=13, rate=20.0, messages=900, seed=11),
    "toto-crashes": dict(protocol="toto", n=8, options={"delta": 4}, messages=1500, seed=4,
                         crashes=((2, 3.0), ("p5", 6.5))),
    "gl-toto-crash": dict(protocol="gl-toto", n=6, messages=1200, seed=9, crashes=((0, 2.0),)),
    "toto-gamma-links": dict(protocol="toto", n=6, messages=1200, seed=6,
                             delay=Delay("gamma", 0.001),
                             link_delays={(0, 1): Delay("exponential", 0.02),
                                          ("p3", "p4"): Delay("constant", 0.005)}),
    "toto-dynamic": dict(protocol="toto-dynamic", n=6, messages=1200, seed=8,
                         crashes=((1, 2.0),), joins=((5, 1.0),),
                         partitions=((4.0, ((0, 2),)),), heals=(5.0,)),
    "abcast": dict(protocol="abcast", n=5, messages=800, seed=2),
    "tomp": dict(protocol="tomp", n=5, messages=800, seed=2),
    "sequencer": dict(protocol="sequencer", n=5, messages=800, seed=2),
    "qos": dict(protocol="qos", n=4, messages=400, seed=2),
}


def _plain(v: Any) -> Any:
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    return v


def digests(kw: dict[str, Any]) -> dict[str, str]:
    """The SHA-256 of a run's records and of its statistics (without wall time)."""
    res = simulate(SimConfig(**kw))
    h = hashlib.sha256()
    for r in res.records:
        h.update(json.dumps(r, sort_keys=True, default=repr).encode())
        h.update(b"\n")
    stats = {k: _plain(v) for k, v in res.stats.items() if k != "wall_time"}
    return {"records": h.hexdigest(), "count": len(res.records),
            "stats": hashlib.sha256(json.dumps(stats, sort_keys=True, default=repr)
                                    .encode()).hexdigest()}


@pytest.mark.parametrize("name", sorted(RUNS))
def test_trace_unchanged(name: str) -> None:
    want = json.loads(PATH.read_text())["runs"][name]
    assert digests(RUNS[name]) == want


def test_every_run_has_a_digest() -> None:
    assert sorted(json.loads(PATH.read_text())["runs"]) == sorted(RUNS)


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    import subprocess
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=True).stdout.strip()
    PATH.write_text(json.dumps({"about": f"computed by the code of commit {commit}, before "
                                         "issue 30 part 6's speed work of round 2",
                                "runs": {k: digests(v) for k, v in RUNS.items()}},
                               indent=1) + "\n")
