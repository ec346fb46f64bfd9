"""`tomkit conform --protocol qos` (issue 29 part 3): recorded qos traces replayed through
the model at their local times (model/conform.py's timed replay, model/qos/wire.py's
receptions); clean simulated traces conform (losses, crashes, joins, leaves, reservations
and renegotiations, several seeds); a planted reorder, early delivery and missed
delivery are each found where they show; traces that cannot be replayed say why."""

from __future__ import annotations

import json

import pytest

from tomkit.cli import main
from tomkit.model.conform import ReplayError, conform_traces
from tomkit.model.sim import SimConfig, simulate

OPTIONS = {"receptions": True, "reserve": "20/4", "loss": 0.3}


def record(seed: int, n: int = 4, **kw) -> list[dict]:
    cfg = dict(protocol="qos", n=n, rate=30.0, messages=120, seed=seed,
               options={**OPTIONS, **kw.pop("options", {})},
               joins=[("p3", 0.3)], leaves=[("p1", 1.2)], crashes=[("p2", 1.5)],
               renegotiations=[("p0", 0.55, (6, 2))])
    cfg.update(kw)
    return simulate(SimConfig(**cfg)).records


def differences(records, **options):
    rep = conform_traces(records, "qos", {**OPTIONS, **options})
    return [(p, d.kind, d.msg) for reps in rep.traces.values() for p, r in reps.items()
            for d in r.differences]


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_simulated_traces_conform(seed):
    recs = record(seed)
    assert any(r.get("x_held") for r in recs)  # the shaper held some: it is replayed too
    assert differences(recs) == []
    rep = conform_traces(recs, "qos", OPTIONS)
    reports = rep.processes()
    assert all(r.implementation == r.model for r in reports.values())
    assert sum(len(r.model) for r in reports.values()) > 100


def deliveries(recs, p):
    return [i for i, r in enumerate(recs) if r["process"] == p and r["kind"] == "deliver"]


def test_a_planted_reorder_is_found_where_it_shows():
    recs = record(1)
    i, j = deliveries(recs, "p0")[10:12]
    a, b = recs[i]["msg"], recs[j]["msg"]
    recs[i], recs[j] = {**recs[i], "msg": b}, {**recs[j], "msg": a}
    found = differences(recs)
    assert ("p0", "order", b) in found
    assert all(p == "p0" for p, _, _ in found)


def test_a_planted_early_delivery_is_found():
    recs = record(2)
    # p0 delivers a message of p3 as soon as p3 sends it (its local clock then), before
    # any packet of it could have arrived: the model delivers it only after p3's
    # end-of-slot block and those of p0..p2
    k = next(i for i in deliveries(recs, "p0") if recs[i]["msg"].startswith("p3."))
    m = recs[k]["msg"]
    sent = next(r for r in recs if r["kind"] == "send" and r["msg"] == m)
    recs[k] = {**recs[k], "time": sent["real_time"]}
    found = differences(recs)
    assert ("p0", "early", m) in found
    assert all(p == "p0" for p, _, _ in found)


def test_a_planted_missed_delivery_is_found():
    recs = record(3)
    k = deliveries(recs, "p3")[5]
    m = recs[k]["msg"]
    del recs[k]
    found = differences(recs)
    assert ("p3", "missing", m) in found
    assert all(p == "p3" for p, _, _ in found)


def test_traces_that_cannot_be_replayed_say_why():
    plain = simulate(SimConfig(protocol="qos", n=3, rate=20.0, messages=20, seed=1)).records
    with pytest.raises(ReplayError, match="logs no recv records: replaying qos needs each "
                       "process's receptions \\(simulate with --receptions"):
        conform_traces(plain, "qos")
    recs = record(1)
    with pytest.raises(ReplayError, match="declares the reservation 20/4 at join: replay "
                       "with --reserve 20/4"):
        conform_traces(recs, "qos", {"receptions": True})
    bad = [{k: v for k, v in r.items() if k != "x_requested"} for r in recs]
    with pytest.raises(ReplayError, match="p3: record \\d+ \\(join\\): field x_requested"):
        conform_traces(bad, "qos", OPTIONS)
    recv = next(i for i, r in enumerate(recs) if r["kind"] == "recv" and "x_payload" in r)
    broken = [*recs[:recv], {**recs[recv], "x_payload": 3}, *recs[recv + 1:]]
    with pytest.raises(ReplayError, match="field x_payload"):
        conform_traces(broken, "qos", OPTIONS)


def test_cli_conform_protocol_qos(tmp_path, capsys):
    path = tmp_path / "qos.jsonl"
    assert main(["simulate", "--protocol", "qos", "--n", "3", "--messages", "60", "--rate",
                 "20", "--receptions", "--join", "p2@0.3", "--seed", "2", "--out",
                 str(path)]) == 0
    capsys.readouterr()
    assert main(["conform", "--protocol", "qos", str(path)]) == 0
    assert "verdict: conforms" in capsys.readouterr().out
    recs = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    recs = [r for r in recs if "trace" in r]
    k = next(i for i, r in enumerate(recs) if r["kind"] == "deliver" and r["process"] == "p1")
    del recs[k]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(json.dumps(r) + "\n" for r in recs))
    assert main(["conform", "--protocol", "qos", str(bad)]) == 1
    out = capsys.readouterr().out
    assert "trace sim p1:" in out and "verdict: differs from the model" in out
    assert main(["conform", "--protocol", "qos", "--format", "json", str(bad)]) == 1
    report = json.loads(capsys.readouterr().out)
    kinds = {d["kind"] for d in report["traces"]["sim"]["p1"]["differences"]}
    assert "missing" in kinds
    assert not report["traces"]["sim"]["p0"]["differences"]
