"""003's QoS contract (Bar-Joseph, Keidar, Anker and Lynch section 2.1): join(r) and RN(r)
declared in ``negotiate`` records, net_reserve's inflated r', the sender's shaper (an
application over its reservation is held to later slots), renegotiation from the next
slot, and the broken variants early-rn and unshaped (model/qos/reserve.py)."""

from __future__ import annotations

from collections import defaultdict

import pytest

from tomkit.checker.oracle import promised, violations
from tomkit.model.events import parse_renegotiation
from tomkit.model.net.links import Delay
from tomkit.model.qos.fec import reserved_avg, reserved_max
from tomkit.model.qos.process import QosParams, QosProcess
from tomkit.model.qos.reserve import (
    Reservation,
    Reservations,
    negotiate_fields,
    net_reserve,
    parse_reservation,
)
from tomkit.model.sim import SimConfig, simulate

MS = {"slot": 100.0, "max_delay": 50.0, "epsilon": 10.0, "loss": 0.0, "crash_loss": 0.0}
JUDGED = (*promised("model-qos"), "member-liveness")


def packets_per_slot(records):
    """(process, slot) -> network messages, join copies left out (003 section 2.2)."""
    out: dict = defaultdict(int)
    for r in records:
        if r["kind"] == "packet" and not r.get("x_join"):
            out[r["process"], r["x_slot"]] += 1
    return out


def declared(records):
    """process -> [(from slot, max', avg', K)] of its negotiate records."""
    out: dict = defaultdict(list)
    for r in records:
        if r["kind"] == "negotiate":
            out[r["process"]].append((r["x_slot"], r["x_rate_max"], r["x_rate_avg"],
                                      r["x_rate_window"]))
    return out


def in_force(steps, s):
    now = None
    for start, *rest in steps:
        if start <= s:
            now = rest
    return now


def over_reservation(records):
    """Slots over their declared max' and windows over the largest avg' in force in them:
    the rate property's reading, computed here independently of the checker."""
    counts, steps = packets_per_slot(records), declared(records)
    bad = []
    for (p, s), c in counts.items():
        r = in_force(steps[p], s)
        if r is not None and c > r[0]:
            bad.append(("max", p, s, c, r[0]))
    for p in steps:
        slots = sorted(s for q, s in counts if q == p)
        for s in slots:
            k = in_force(steps[p], s)
            if k is None:
                continue
            window = range(s, s + k[2])
            limit = max(in_force(steps[p], t)[1] for t in window
                        if in_force(steps[p], t) is not None)
            total = sum(counts.get((p, t), 0) for t in window)
            if total > limit:
                bad.append(("avg", p, s, total, limit))
    return bad


# ---------------------------------------------------------------- the pieces


def test_net_reserve_is_the_inflated_pair_of_section_2_2():
    avg, most = net_reserve(Reservation(20, 6), 10, 5, 2)
    assert (avg, most) == (reserved_avg(20, 10, 5, 2), reserved_max(6, 5, 2))
    assert float(most) == 12.0 and abs(float(avg) - 63.333) < 1e-3
    f = negotiate_fields(Reservation(20, 6), 4, 10, 5, 2, True)
    assert f == {"x_slot": 4, "x_avg": 20, "x_max": 6, "x_rate_window": 10,
                 "x_rate_avg": float(avg), "x_rate_max": 12.0, "x_rn": True}


def test_the_shaper_counts_a_slot_and_the_k_slots_ending_with_it():
    r = Reservations(window=3)
    r.set(0, Reservation(avg=4, max=2))
    for s, n in ((0, 2), (1, 2)):
        for _ in range(n):
            assert r.room(s)
            r.count(s)
    assert not r.room(1)  # max 2 in slot 1
    assert not r.room(2)  # slots 0..2 already hold 4 = avg
    assert r.room(3)  # slot 0 left the window
    r.set(3, Reservation(avg=10, max=5))
    r.set(3, Reservation(avg=1, max=1))  # a later request for the same slot replaces it
    assert r.in_force(2) == Reservation(4, 2) and r.in_force(3) == Reservation(1, 1)
    assert not r.room(3)  # slots 1..3 hold 2 > avg 1


@pytest.mark.parametrize("text", ["p1@0.5", "p1@0.5=3", "p1@0.5=a/b", "p1=3/1", "@1=3/1",
                                  "p1@-1=3/1"])
def test_a_bad_renegotiation_is_refused_naming_the_flag(text):
    with pytest.raises(ValueError, match="^--renegotiate: expected PROCESS@TIME=AVG/MAX"):
        parse_renegotiation("--renegotiate", text)
    assert parse_renegotiation("--renegotiate", "p1@0.5=20/6") == ("p1", 0.5, (20, 6))
    with pytest.raises(ValueError, match="--reserve: expected AVG/MAX"):
        parse_reservation("20", "--reserve")


# ---------------------------------------------------------------- one process


def proc(**kw):
    params = QosParams(slot=100.0, max_delay=50.0, epsilon=10.0, fec_i=5, fec_l=2,
                       window=3, reserve=Reservation(avg=3, max=2), **kw)
    p = QosProcess(0, ["p0", "p1"], params)
    out = p.on_timer(0.0)
    return p, out


def data_slots(out):
    return [t.packet.packet.slot for t in out.sends if hasattr(t.packet, "packet")]


def test_a_member_from_time_0_declares_its_reservation_at_its_first_input():
    p, out = proc()
    assert out.negotiated == negotiate_fields(Reservation(3, 2), 0, 3, 5, 2, False)


def test_excess_is_held_to_the_next_slot_with_room_in_order():
    p, _ = proc()
    fields = [p.on_send(f"m{k}", 10.0 + k).fields for k in range(4)]
    assert fields == [{"x_slot": 0}, {"x_slot": 0}, {"x_slot": 0, "x_held": True},
                      {"x_slot": 0, "x_held": True}]
    assert p.per_slot[0][0] == 2 and p.holding
    p.on_timer(100.0)  # slot 0 ends; slot 1 has room for one (avg 3 over 3 slots)
    assert p.per_slot[1][0] == 1 and p.holding
    # the FEC layer holds it for the slot's last block (B1): it goes out at slot 1's end
    assert 1 in data_slots(p.on_timer(200.0))
    assert 2 not in p.per_slot or p.per_slot[2][0] == 0  # window 0..2 full
    p.on_timer(300.0)  # slot 0 left the window
    assert p.per_slot[3][0] == 1 and not p.holding
    # a message sent while others are held never overtakes them
    q, _ = proc()
    for k in range(3):
        q.on_send(f"m{k}", 10.0)
    q.on_timer(100.0)
    assert q.on_send("late", 110.0).fields == {"x_slot": 1, "x_held": True}


def test_renegotiation_holds_from_the_next_slot_and_early_rn_from_this_one():
    p, _ = proc()
    out = p.on_renegotiate((6, 4), 150.0)
    assert out.negotiated["x_slot"] == 2 and out.negotiated["x_rn"] is True
    assert p.shaper.in_force(1) == Reservation(3, 2)
    assert p.shaper.in_force(2) == Reservation(6, 4)
    q, _ = proc(early_rn=True)
    assert q.on_renegotiate((6, 4), 150.0).negotiated["x_slot"] == 1


def test_a_leave_waits_behind_held_messages():
    p, _ = proc()
    for k in range(3):
        p.on_send(f"m{k}", 10.0)
    assert p.on_leave(20.0).fields == {"x_slot": 0, "x_held": True}
    assert not p.accepting and p.leave_slot is None
    p.on_timer(100.0)  # m2 in slot 1; the leave needs room too: the window is full
    assert p.leave_slot is None
    p.on_timer(200.0)
    p.on_timer(300.0)
    assert p.leave_slot == 3 and not p.holding
    p.on_timer(400.0)
    assert p.outside


def test_no_contract_no_negotiate_records_and_nothing_held():
    p = QosProcess(0, ["p0", "p1"], QosParams(slot=100.0, max_delay=50.0, epsilon=10.0))
    assert p.on_timer(0.0).negotiated is None
    for k in range(20):
        assert "x_held" not in p.on_send(f"m{k}", 10.0).fields


# ---------------------------------------------------------------- simulated runs


def run(seed, variant=None, renegotiations=(("p0", 0.55, (6, 1)),), rate=60.0, **kw):
    options = {"reserve": "20/4", "window": 10, "packets": True}
    if variant:
        options["variant"] = variant
    return simulate(SimConfig(protocol="qos", n=4, rate=rate, messages=240, seed=seed,
                              options=options, renegotiations=list(renegotiations), **kw))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_senders_stay_within_their_declared_reservations_and_held_messages_arrive(seed):
    res = run(seed, joins=[("p3", 0.3)], leaves=[("p1", 1.0)])
    recs = res.records
    assert res.stats["held"] > 0  # the application asks for more than it reserved
    assert over_reservation(recs) == []
    assert [r.property for r in violations(recs, JUDGED)] == []
    steps = declared(recs)
    assert steps["p3"][0][0] > 0  # the joiner's reservation holds from its join slot
    assert [s[0] for s in steps["p0"]] == [0, 6]  # RN at real 0.55: slot 5, from slot 6
    held = {r["msg"] for r in recs if r["kind"] == "send" and r.get("x_held")}
    delivered = {r["msg"] for r in recs if r["kind"] == "deliver"}
    assert held and held <= delivered


def test_the_unshaped_variant_exceeds_the_reservation():
    recs = run(1, "unshaped").records
    assert any(kind == "max" for kind, *_ in over_reservation(recs))


def test_early_rn_exceeds_the_new_reservation_in_the_slot_it_is_asked_in():
    # p0 sends at 60/s (6 a slot, its max 4), renegotiates down to 1 a slot mid-slot
    found = [s for s in range(1, 6)
             if any(b[0] == "max" and b[1] == "p0" and b[2] == 5
                    for b in over_reservation(run(s, "early-rn").records))]
    assert found
    assert all(over_reservation(run(s).records) == [] for s in found)


def test_the_default_is_unchanged_without_a_contract():
    cfg = dict(protocol="qos", n=3, rate=20.0, messages=60, seed=4,
               delay=Delay("exponential", 0.01))
    a = simulate(SimConfig(**cfg)).records
    assert not any(r["kind"] == "negotiate" or r.get("x_held") for r in a)
