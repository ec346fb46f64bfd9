"""The hybrid protocol's three configurations (token-site, symmetric, hybrid) in the one
simulator (model/sim.py): deterministic runs, with crashes and scripted role switches,
pass integrity, total order (weak, strong, global), FIFO, causal order and liveness
among correct processes (001, Rodrigues, Fonseca, Verissimo; docs/hybrid.md)."""

from __future__ import annotations

import pytest

from tomkit.checker.properties import Options, properties
from tomkit.checker.result import Verdict
from tomkit.checker.trace import Trace
from tomkit.model.network import Delay
from tomkit.model.protocols import protocol
from tomkit.model.sim import SimConfig, simulate

ALL = ["integrity", "total-order-weak", "total-order-strong", "global-order", "fifo-order",
       "causal-order", "liveness"]


def verdicts(records: list[dict]) -> dict[str, Verdict]:
    trace = Trace.from_records(records)
    return {n: properties()[n].check(trace, Options()).verdict for n in ALL}


def run(proto: str, **kw):
    cfg = dict(protocol=proto, n=4, rate=50, messages=80,
               delay=Delay("exponential", 0.01), seed=3)
    cfg.update(kw)
    return simulate(SimConfig(**cfg))


def test_promises_declared() -> None:
    for name in ("hybrid", "token-site", "symmetric"):
        p = protocol(name)
        assert p.crashes and p.fifo and p.live
        assert set(p.promises) == set(ALL) - {"liveness"}


@pytest.mark.parametrize("proto,options", [
    ("token-site", {}), ("symmetric", {}), ("hybrid", {"roles": "0,2"}),
    ("hybrid", {"roles": "1", "switches": 3}), ("symmetric", {"switches": 3}),
])
@pytest.mark.parametrize("crashes", [(), ((0, 0.3),), ((3, 0.2), (0, 0.5))])
def test_runs_hold_every_property(proto: str, options: dict, crashes) -> None:
    res = run(proto, options=options, crashes=crashes)
    assert verdicts(res.records) == dict.fromkeys(ALL, Verdict.HOLDS)
    assert res.stats["undelivered"] == 0
    if options.get("switches"):
        assert res.stats["role_changes"] > 0


def test_deterministic_given_seed() -> None:
    a = run("hybrid", options={"roles": "0", "switches": 2}, crashes=((1, 0.3),))
    b = run("hybrid", options={"roles": "0", "switches": 2}, crashes=((1, 0.3),))
    assert a.records == b.records


def test_token_site_has_one_issuer_symmetric_every_process() -> None:
    issuers = {}
    for name in ("token-site", "symmetric"):
        recs = run(name).records
        issuers[name] = {r["x_ticket"][0] for r in recs if r["kind"] == "deliver"}
    assert issuers["token-site"] == {"p0"}
    assert issuers["symmetric"] == {"p0", "p1", "p2", "p3"}
