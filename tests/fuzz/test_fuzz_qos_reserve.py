"""The timed fuzzer with 003's QoS contract (issue 29 part 4): with a reservation
(``reserve``) it renegotiates (RN(r)), logs packets and judges the rate against the
reservations the run declares; it finds and shrinks the broken variants ``early-rn``
(RN taking effect in the slot it is asked in) and ``unshaped`` (a sender over its
reservation, unchecked), and finds nothing in the protocol."""

from __future__ import annotations

from tomkit.checker.oracle import violations
from tomkit.fuzz.qos_machine import timed_machine
from tomkit.fuzz.stateful import run_machine

# a small window K = 2 lets held messages drain in a few slots; r = 4/2 gives max' = 5.33
OPTS = {"slot": 100.0, "max_delay": 50.0, "epsilon": 40.0, "reserve": "4/2", "window": 2}


def hunt(variant, seed_, examples):
    m = timed_machine("qos", 3, {**OPTS, **({"variant": variant} if variant else {})},
                      max_messages=8)
    failure = run_machine(m, examples, seed_, steps=20)
    return None if failure is None else failure.found


def test_early_rn_is_found_and_shrunk():
    found = hunt("early-rn", 1, 300)
    assert found is not None, "RN taking effect in its own slot went unnoticed"
    assert found.kind == "rate" and "per slot it declared from slot" in found.explanation
    recs = found.records
    # the core: sends in a slot, then an RN in that same slot declared from that slot
    rn = [r for r in recs if r["kind"] == "negotiate" and r["x_rn"]]
    assert rn
    sends = [r for r in recs if r["kind"] == "send"]
    assert any(s["process"] == r["process"] and s["x_slot"] == r["x_slot"]
               and s["time"] <= r["time"] for r in rn for s in sends)
    assert sum(r["kind"] != "packet" for r in recs) <= 20
    # the trace says so again, as tomkit check -p rate would
    assert [v.property for v in violations(recs, ["rate"])] == ["rate"]


def test_unshaped_sender_is_found_and_shrunk():
    found = hunt("unshaped", 1, 200)
    assert found is not None, "a sender over its reservation went unnoticed"
    assert found.kind == "rate" and "network messages in slot" in found.explanation
    assert sum(r["kind"] == "send" for r in found.records) <= 8
    assert [v.property for v in violations(found.records, ["rate"])] == ["rate"]


def test_the_protocol_with_reservations_survives_the_fuzzer():
    assert hunt(None, 2, 150) is None
