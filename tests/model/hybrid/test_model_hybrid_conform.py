"""``tomkit conform --protocol hybrid``: a simulated hybrid trace (crashes, role
switches, view changes) replays through the model with no difference; planted
deviations are found: two deliveries swapped (a ticket used out of order) and a
delivery moved before the packet that made its ticket stable."""

from __future__ import annotations

import pytest

from tomkit.cli import main
from tomkit.model.conform import replay
from tomkit.model.net.links import Delay
from tomkit.model.process import ReplayError
from tomkit.model.sim import SimConfig, simulate
from tomkit.traces.writer import write_records

#: the run's options, which the replay needs too: the heartbeat is 1/rate by default, and
#: a trace does not say the run's rate (the processes' ``rates`` do)
OPTS = {"roles": "0,2", "switches": 2, "rates": [50.0] * 4}


def hybrid_run(**options) -> list[dict]:
    opts = dict(OPTS)
    opts.update(options)
    return simulate(SimConfig(protocol="hybrid", n=4, rate=50, messages=60,
                              delay=Delay("exponential", 0.01), seed=4,
                              crashes=((3, 0.4),), options=opts)).records


def test_simulated_trace_replays_without_difference() -> None:
    recs = hybrid_run()
    assert any(r.get("x_packet") == "newview" for r in recs)  # a view change happened
    reps = replay(recs, "hybrid", OPTS)
    assert reps and all(not r.differences for r in reps.values())
    assert all(r.implementation == r.model for r in reps.values())


def test_swapped_deliveries_are_an_order_difference() -> None:
    recs = hybrid_run()
    idx = [k for k, r in enumerate(recs) if r["process"] == "p1" and r["kind"] == "deliver"]
    a, b = idx[10], idx[11]
    recs[a], recs[b] = recs[b], recs[a]
    rep = replay(recs, "hybrid", OPTS)["p1"]
    assert rep.differences and rep.differences[0].kind == "order"
    assert rep.differences[0].index == 10


def _ticket_holder(recs: list[dict], proc: str, msg: str, number: int) -> int:
    """The index of the record where ``proc`` received the ticket numbered ``number``
    of the application message ``msg``."""
    body = next(r["x_wire"]["payload"]["body"] for r in recs
                if r["process"] == proc and r["kind"] == "recv" and r["msg"] == msg)
    for k, r in enumerate(recs):
        if r["process"] != proc or r["kind"] != "recv" or "x_wire" not in r:
            continue
        w = r["x_wire"]
        if w.get("_") != "VsMsg":
            continue
        for t in w["payload"]["tickets"]:
            if (t["number"], t["sender"], t["count"]) == (number, body["p"], body["c"]):
                return k
    raise AssertionError("ticket not found")


def test_delivery_before_stability_is_early() -> None:
    recs = hybrid_run()
    recv_at = {(r["process"], r["msg"]): k for k, r in enumerate(recs) if r["kind"] == "recv"}
    for k, r in enumerate(recs):
        if r["kind"] != "deliver" or r["process"] != "p2":
            continue
        issuer, number = r["x_ticket"]
        t_at = _ticket_holder(recs, "p2", r["msg"], number)
        first = max(t_at, recv_at[("p2", r["msg"])])
        # some reception of p2 between: the delivery waited for it (stability)
        between = [j for j in range(first + 1, k) if recs[j]["process"] == "p2"
                   and recs[j]["kind"] == "recv"]
        if between:
            moved = recs[:first + 1] + [r] + [x for j, x in enumerate(recs[first + 1:], first + 1)
                                              if j != k]
            break
    else:
        pytest.fail("no delivery waited for stability")
    rep = replay(moved, "hybrid", OPTS)["p2"]
    early = [d for d in rep.differences if d.kind == "early"]
    assert early and early[0].msg == r["msg"]


def test_trace_without_control_records_is_refused() -> None:
    recs = hybrid_run(control_records=False)
    with pytest.raises(ReplayError, match="control records"):
        replay(recs, "hybrid", OPTS)




def test_a_replay_without_the_runs_rate_is_refused_not_compared() -> None:
    """The default heartbeat is 1/rate: replayed without the run's rates, the model would
    set other timers than the run did and differ for that reason alone (seed 30 of a run
    with recoveries did), so a trace with timers is refused, naming the first; with
    --heartbeat it replays."""
    recs = hybrid_run()
    with pytest.raises(ReplayError, match=r"p\d: record timer/p\d/1: the trace logs "
                       r"timers.*give the run's --rates \(or --heartbeat\)"):
        replay(recs, "hybrid", {"roles": "0,2", "switches": 2})
    reps = replay(recs, "hybrid", {"roles": "0,2", "switches": 2, "heartbeat": 0.02})
    assert all(not r.differences for r in reps.values())


# ------------------------------------------------------- views that grow: joins, recoveries

JOINS = {"roles": "0,2", "switches": 2, "rates": [10.0] * 5}


def joining_run() -> list[dict]:
    """docs/hybrid.md's run: p4 joins at 0.7 s, p0 crashes at 0.5 s and restarts at 1.0 s
    (its incarnation p0~2 rejoins), p3 crashes at 0.9 s; scripted role switches."""
    return simulate(SimConfig(protocol="hybrid", n=5, rate=10, messages=80,
                              delay=Delay("exponential", 0.01), seed=4,
                              crashes=(("p0", 0.5), ("p3", 0.9)), joins=(("p4", 0.7),),
                              recovers=(("p0", 1.0),), options=JOINS)).records


def test_a_trace_with_a_join_and_a_recovery_replays_without_difference() -> None:
    """The joiner and the new incarnation are replayed from their join requests
    (``x_requested``) through the state they were sent; each delivers a suffix of the
    common order, as the model does with the same packets."""
    recs = joining_run()
    joins = [r for r in recs if r["kind"] == "join"]
    assert {r["process"] for r in joins} == {"p4", "p0~2"}
    assert all(r["x_requested"] < r["time"] for r in joins)
    reps = replay(recs, "hybrid", JOINS)
    assert set(reps) == {"p0", "p0~2", "p1", "p2", "p3", "p4"}
    assert all(not r.differences for r in reps.values())
    assert all(r.implementation == r.model for r in reps.values())
    # the joiners deliver the common order from their first view on, not all of it
    assert 0 < len(reps["p4"].model) < len(reps["p1"].model)
    assert 0 < len(reps["p0~2"].model) < len(reps["p1"].model)
    assert reps["p1"].model[-len(reps["p4"].model):] == reps["p4"].model


def test_a_joiner_that_delivers_a_message_of_before_its_view_is_extra() -> None:
    """p4 logs a delivery of a message every member delivered before p4 was admitted:
    the state it was sent counts that message delivered, so the model never delivers it
    at p4."""
    recs = joining_run()
    first = next(k for k, r in enumerate(recs) if r["process"] == "p4"
                 and r["kind"] == "deliver")
    old = next(r["msg"] for r in recs if r["process"] == "p1" and r["kind"] == "deliver")
    recs.insert(first, {**recs[first], "msg": old})
    rep = replay(recs, "hybrid", JOINS)["p4"]
    assert [(d.kind, d.msg) for d in rep.differences][:1] == [("order", old)]
    assert ("extra", old) in {(d.kind, d.msg) for d in rep.differences}


def test_swapped_deliveries_of_a_new_incarnation_are_an_order_difference() -> None:
    recs = joining_run()
    idx = [k for k, r in enumerate(recs) if r["process"] == "p0~2" and r["kind"] == "deliver"]
    a, b = idx[3], idx[4]
    recs[a], recs[b] = recs[b], recs[a]
    reps = replay(recs, "hybrid", JOINS)
    rep = reps["p0~2"]
    assert rep.differences and rep.differences[0].kind == "order"
    assert rep.differences[0].index == 3
    assert not reps["p0"].differences and not reps["p4"].differences


def test_a_join_without_its_request_time_is_refused_naming_the_field() -> None:
    recs = joining_run()
    k = next(k for k, r in enumerate(recs) if r["process"] == "p4" and r["kind"] == "join")
    recs[k] = {f: v for f, v in recs[k].items() if f != "x_requested"}
    with pytest.raises(ReplayError, match=r"p4: record \d+ \(join\): field x_requested"):
        replay(recs, "hybrid", JOINS)


@pytest.mark.parametrize("run,rates,shown", [
    (hybrid_run, "50,50,50,50", ("p3:",)),
    (joining_run, "10,10,10,10,10", ("p0~2:", "p4:")),  # a recovery and a join
])
def test_cli_conform(tmp_path, capsys, run, rates, shown) -> None:
    path = tmp_path / "hybrid.jsonl"
    write_records(path, run())
    assert main(["conform", "--protocol", "hybrid", "--roles", "0,2", "--switches", "2",
                 "--rates", rates, str(path)]) == 0
    out = capsys.readouterr().out
    assert all(p in out for p in shown) and "verdict: conforms" in out
