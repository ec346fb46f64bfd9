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


def hybrid_run(**options) -> list[dict]:
    opts = {"roles": "0,2", "switches": 2}
    opts.update(options)
    return simulate(SimConfig(protocol="hybrid", n=4, rate=50, messages=60,
                              delay=Delay("exponential", 0.01), seed=4,
                              crashes=((3, 0.4),), options=opts)).records


def test_simulated_trace_replays_without_difference() -> None:
    recs = hybrid_run()
    assert any(r.get("x_packet") == "newview" for r in recs)  # a view change happened
    reps = replay(recs, "hybrid", {"roles": "0,2", "switches": 2})
    assert reps and all(not r.differences for r in reps.values())
    assert all(r.implementation == r.model for r in reps.values())


def test_swapped_deliveries_are_an_order_difference() -> None:
    recs = hybrid_run()
    idx = [k for k, r in enumerate(recs) if r["process"] == "p1" and r["kind"] == "deliver"]
    a, b = idx[10], idx[11]
    recs[a], recs[b] = recs[b], recs[a]
    rep = replay(recs, "hybrid", {"roles": "0,2", "switches": 2})["p1"]
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
    rep = replay(moved, "hybrid", {"roles": "0,2", "switches": 2})["p2"]
    early = [d for d in rep.differences if d.kind == "early"]
    assert early and early[0].msg == r["msg"]


def test_trace_without_control_records_is_refused() -> None:
    recs = hybrid_run(control_records=False)
    with pytest.raises(ReplayError, match="control records"):
        replay(recs, "hybrid", {"roles": "0,2", "switches": 2})


def test_cli_conform(tmp_path, capsys) -> None:
    path = tmp_path / "hybrid.jsonl"
    write_records(path, hybrid_run())
    assert main(["conform", "--protocol", "hybrid", "--roles", "0,2", "--switches", "2",
                 str(path)]) == 0
