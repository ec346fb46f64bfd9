"""Tests of model/abcast/tomp.py: 004's Figures 3 and 4 (TOMP on the example of section 2.2)
replayed step by step: every acknowledgement vector ackmi_next_mid and timestamp
ackmi_ts, every min_next_mid, max_next_ts and final timestamp, every queue, timestamp and
label, and the raises of pending timestamps; plus Figure 4's slip in min_next_mid (the
rules win) and bad input.

Message identifiers: each host's first message has identifier 1, so m1_id = m2_id =
m3_id = 1 and "mk_id + 1" is 2.
"""

from __future__ import annotations

import doctest

import pytest
from test_model_abcast import FINAL, GROUP, PROPOSALS, Example, parse

import tomkit.model.abcast.tomp as tomp_mod
from tomkit.model.abcast.abcast import Data, Final, Timestamp
from tomkit.model.abcast.tomp import TompProcess

ID = 1  # m1_id = m2_id = m3_id

#: Figures 3-4, queues (delivered messages drawn in place, as the paper does)
FIGURE = {
    1: {1: "m3 15.1 ud | m1 16.1 ud | m2 17.1 ud",
        2: "m2 16.2 ud | m1 17.2 ud | m3 18.2 ud",
        3: "m1 17.3 ud | m3 18.3 ud | m2 19.3 ud"},
    3: {1: "m1 17.3 dl | m2 18.3 ud | m3 18.3 ud",
        2: "m1 17.3 dl | m2 18.3 ud | m3 18.3 ud",
        3: "m1 17.3 dl | m3 18.3 ud | m2 19.3 ud"},
    5: {h: "m1 17.3 dl | m3 18.3 ud | m2 19.3 dl" for h in GROUP},
    7: {h: "m1 17.3 dl | m3 18.3 dl | m2 19.3 dl" for h in GROUP},
}
#: Figures 3-4 steps 2, 4, 6: ackmi_next_mid per host (offsets from mk_id), and the
#: vectors of ts_mi. Step 6's min_next_mid is the rules' value; FIGURE4_MIN is the print.
ACKS = {
    "m1": {1: (1, 0, 1), 2: (1, 1, 0), 3: (1, 0, 0)},
    "m2": {1: (1, 1, 1), 2: (0, 1, 0), 3: (1, 1, 1)},
    "m3": {1: (0, 0, 1), 2: (1, 1, 1), 3: (1, 0, 1)},
}
MIN_NEXT_MID = {"m1": (1, 0, 0), "m2": (0, 1, 0), "m3": (0, 0, 1)}
MAX_NEXT_TS = {"m1": ("18.3", "18.3", "18.3"), "m2": ("17.2", "20.3", "17.2"),
               "m3": ("16.1", "19.3", "19.3")}
FIGURE4_MIN = (0, 1, 0)  # as printed in Figure 4 step 6: (m1_id, m2_id + 1, m3_id)
#: step -> (message decided, the step whose queues follow, deliveries per host)
DECISIONS = [("m1", 3, {1: ["m1"], 2: ["m1"], 3: ["m1"]}),
             ("m2", 5, {1: [], 2: [], 3: []}),
             ("m3", 7, {h: ["m3", "m2"] for h in GROUP})]
#: Figure 3 step 3 (section 3.3): the pending timestamps each host raises on ts_m1
RAISED_M1 = {1: {("m3", "15.1", "18.3"), ("m2", "17.1", "18.3")},
             2: {("m2", "16.2", "18.3"), ("m3", "18.2", "18.3")},
             3: set()}


def offsets(vec: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(v - ID for v in vec)


def test_doctests() -> None:
    assert doctest.testmod(tomp_mod).failed == 0


def test_step1_and_acknowledgements() -> None:
    """Step 1 (as Figure 1) and the acknowledgements of Figures 3-4 steps 2, 4 and 6:
    host1 acknowledges m1 with (m1_id + 1, m2_id, m3_id + 1) and 16.1, and so on."""
    ex = Example(TompProcess)
    assert ex.rows() == {h: parse(FIGURE[1][h]) for h in GROUP}
    for m in ("m1", "m2", "m3"):
        assert [str(ex.acks[m][h].ts) for h in GROUP] == PROPOSALS[m]
        assert {h: offsets(ex.acks[m][h].next_mid) for h in GROUP} == ACKS[m], m


def test_figures_3_4_step_by_step() -> None:
    """Steps 2-7: ts_mi's tsmi_ts, min_next_mid and max_next_ts (steps 2, 4, 6), then
    every queue after the decision (steps 3, 5, 7) and the deliveries it allows."""
    ex = Example(TompProcess)
    for mid, step, delivered in DECISIONS:
        assert ex.decide(mid) == delivered, f"step {step}"
        f = ex.finals[mid]
        assert str(f.ts) == FINAL[mid]
        assert offsets(f.min_next_mid) == MIN_NEXT_MID[mid], mid
        assert tuple(map(str, f.max_next_ts)) == MAX_NEXT_TS[mid], mid
        assert ex.rows() == {h: parse(FIGURE[step][h]) for h in GROUP}, f"step {step}"
    assert all(ex.hosts[h].queue == [] for h in GROUP)


def test_step3_raises_pending_timestamps() -> None:
    """Section 3.3 step 3: host1 sets m3 (15.1) and m2 (17.1) to 18.3; host2 m2 and m3 to
    18.3; host3 changes nothing (18.3 is m3's own, 19.3 is above)."""
    ex = Example(TompProcess)
    emitter = ex.hosts[1]
    for h in GROUP:
        sends = emitter.receive(ex.acks["m1"][h]).sends
    final = sends[0].msg
    for h in GROUP:
        st = ex.hosts[h].receive(final)
        assert {(m, str(a), str(b)) for m, a, b in st.raised} == RAISED_M1[h]


def test_figure4_min_next_mid_slip_rules_win() -> None:
    """Figure 4 step 6 prints min_next_mid = (m1_id, m2_id + 1, m3_id) under
    acknowledgements whose minima are (m1_id, m2_id, m3_id + 1): rule (1) of section
    3.2.2.3 takes the minimum, so the model sends the latter. The printed max_next_ts
    (16.1, 19.3, 19.3) is the rules' own and step 7's queues do not depend on it."""
    ex = Example(TompProcess)
    for m in ("m1", "m2", "m3"):
        ex.decide(m)
    acks = ACKS["m3"]
    assert tuple(min(acks[h][j] for h in GROUP) for j in range(3)) == MIN_NEXT_MID["m3"]
    assert offsets(ex.finals["m3"].min_next_mid) == MIN_NEXT_MID["m3"] != FIGURE4_MIN


def test_max_next_ts_at_most_final_plus_one() -> None:
    """Section 3.2.3.2: "max_next_ts(k) is less than or equal to tsmi_ts + 1"."""
    ex = Example(TompProcess)
    for m in ("m1", "m2", "m3"):
        ex.decide(m)
        f = ex.finals[m]
        assert all(t <= f.ts.plus(1) for t in f.max_next_ts)


def test_tomp_delivers_m1_a_step_earlier_than_abcast() -> None:
    """The point of section 3: m1 waits at host1 under ABCAST until step 4 (Figure 1) but
    is delivered everywhere on its decision under TOMP (Figure 3 step 3), while the
    final order (m1 17.3, m3 18.3, m2 19.3) is the same."""
    ab, tp = Example(), Example(TompProcess)
    assert ab.decide("m1")[1] == [] and tp.decide("m1")[1] == ["m1"]
    for m in ("m2", "m3"):
        ab.decide(m)
        tp.decide(m)
    for h in GROUP:
        assert ab.hosts[h].delivered == tp.hosts[h].delivered


def test_ties_broken_dl_first_then_sender() -> None:
    p = TompProcess(1, GROUP)
    for mid, sender in (("c", 3), ("b", 2), ("a", 1)):
        p.receive(Data(mid, sender, 1))
    for e in p.queue:
        e.ts = Timestamp(5, 3)
    next(e for e in p.queue if e.mid == "c").state = "dl"
    p.queue.sort(key=p.sort_key)
    assert [e.mid for e in p.queue] == ["c", "a", "b"]  # c dl, then a (host1), b (host2)


def test_bad_input_is_refused() -> None:
    p = TompProcess(1, GROUP)
    with pytest.raises(ValueError, match="identifier 2, expected 1"):
        p.receive(Data("x", 2, 2))
    p.multicast("a")
    ack = p.receive(Data("a", 1, 1)).sends[0].msg
    with pytest.raises(ValueError, match="without a next_mid vector"):
        p.receive(type(ack)(ack.mid, ack.sender, 2, ack.ts))
    p.receive(Data("b", 2, 1))
    with pytest.raises(ValueError, match="without min_next_mid"):
        p.receive(Final("b", 2, Timestamp(9, 2)))
    with pytest.raises(ValueError, match="broken must be one of"):
        TompProcess(1, GROUP, broken="nonsense")
