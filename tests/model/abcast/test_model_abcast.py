"""Tests of model/abcast/abcast.py: 004's Figure 1 (ABCAST on three hosts, counters 14.1, 15.2,
16.3) replayed queue by queue, timestamp by timestamp and label by label, plus the
decisions the module documents (the counter raise, Figure 1's slip at step 2) and bad
input."""

from __future__ import annotations

import doctest

import pytest

import tomkit.model.abcast.abcast as abcast_mod
from tomkit.model.abcast.abcast import (
    DL,
    UD,
    AbcastProcess,
    Ack,
    Data,
    Final,
    Timestamp,
)

GROUP = (1, 2, 3)
#: 004 section 2.2: "the greatest timestamps used before ... are 14.1, 15.2 and 16.3"
COUNTERS = {1: 14, 2: 15, 3: 16}
#: Figure 1 step 1: the order in which each host receives m1, m2, m3
ORDER = {1: ["m3", "m1", "m2"], 2: ["m2", "m1", "m3"], 3: ["m1", "m3", "m2"]}
SENDER = {"m1": 1, "m2": 2, "m3": 3}

#: Figure 1, host by host, as the paper draws the queues (delivered messages stay in
#: place). Step 2 host1 follows the rules: the figure prints m2 at 16.1 (see FIGURE_SLIP).
FIGURE1 = {
    1: {1: "m3 15.1 ud | m1 16.1 ud | m2 17.1 ud",
        2: "m2 16.2 ud | m1 17.2 ud | m3 18.2 ud",
        3: "m1 17.3 ud | m3 18.3 ud | m2 19.3 ud"},
    2: {1: "m3 15.1 ud | m2 17.1 ud | m1 17.3 dl",
        2: "m2 16.2 ud | m1 17.3 dl | m3 18.2 ud",
        3: "m1 17.3 dl | m3 18.3 ud | m2 19.3 ud"},
    3: {1: "m3 15.1 ud | m1 17.3 dl | m2 19.3 dl",
        2: "m1 17.3 dl | m3 18.2 ud | m2 19.3 dl",
        3: "m1 17.3 dl | m3 18.3 ud | m2 19.3 dl"},
    4: {1: "m1 17.3 dl | m3 18.3 dl | m2 19.3 dl",
        2: "m1 17.3 dl | m3 18.3 dl | m2 19.3 dl",
        3: "m1 17.3 dl | m3 18.3 dl | m2 19.3 dl"},
}
#: Figure 1 step 2, host1, as printed: m2 carries 16.1 (m1's abandoned proposal)
FIGURE_SLIP = "m3 15.1 ud | m2 16.1 ud | m1 17.3 dl"
#: the proposals each emitter collects (section 2.2: host1 gets 16.1, 17.2, 17.3 for m1)
PROPOSALS = {"m1": ["16.1", "17.2", "17.3"], "m2": ["17.1", "16.2", "19.3"],
             "m3": ["15.1", "18.2", "18.3"]}
FINAL = {"m1": "17.3", "m2": "19.3", "m3": "18.3"}
#: which step decides which message, and the deliveries it lets through
DECIDES = {2: "m1", 3: "m2", 4: "m3"}
DELIVERED = {2: {1: [], 2: [], 3: ["m1"]},
             3: {1: [], 2: ["m1"], 3: []},
             4: {1: ["m1", "m3", "m2"], 2: ["m3", "m2"], 3: ["m3", "m2"]}}


def parse(row: str) -> list[tuple[str, str, str]]:
    return [tuple(cell.split()) for cell in row.split("|")]  # type: ignore[misc]


class Example:
    """004 section 2.2's run, scripted: step 1 receives everything, step s >= 2 feeds the
    emitter of DECIDES[s] its acknowledgements and every host the validation message."""

    def __init__(self, cls: type[AbcastProcess] = AbcastProcess, **kw) -> None:
        self.hosts = {h: cls(h, GROUP, COUNTERS[h], **kw) for h in GROUP}
        data = {}
        for h in GROUP:
            st = self.hosts[h].multicast(f"m{h}")
            (send,) = st.sends
            assert send.to == GROUP and isinstance(send.msg, Data)
            data[send.msg.mid] = send.msg
        self.acks: dict[str, dict[int, Ack]] = {m: {} for m in data}
        for h in GROUP:
            for m in ORDER[h]:
                st = self.hosts[h].receive(data[m])
                assert st.delivered == [] or kw.get("broken") == "deliver-ud"
                (send,) = st.sends
                assert send.to == (SENDER[m],)
                self.acks[m][h] = send.msg  # type: ignore[assignment]
        self.finals: dict[str, Final] = {}

    def rows(self) -> dict[int, list[tuple[str, str, str]]]:
        return {h: self.hosts[h].figure_row() for h in GROUP}

    def decide(self, mid: str) -> dict[int, list[str]]:
        emitter = self.hosts[SENDER[mid]]
        sends = []
        for h in GROUP:
            sends += emitter.receive(self.acks[mid][h]).sends
        (send,) = sends  # the validation message, after the last acknowledgement only
        assert send.to == GROUP and isinstance(send.msg, Final)
        self.finals[mid] = send.msg
        return {h: [d.mid for d in self.hosts[h].receive(send.msg).delivered] for h in GROUP}


def test_doctests() -> None:
    assert doctest.testmod(abcast_mod).failed == 0


@pytest.mark.parametrize("raise_counter", [True, False])
def test_figure1_step_by_step(raise_counter: bool) -> None:
    """Every queue, timestamp and label of Figure 1 steps 1-4, and who delivers when.
    The counter raise (a decision, see model/abcast/abcast.py) changes nothing here."""
    ex = Example(raise_counter=raise_counter)
    assert ex.rows() == {h: parse(FIGURE1[1][h]) for h in GROUP}
    for step in (2, 3, 4):
        delivered = ex.decide(DECIDES[step])
        assert ex.rows() == {h: parse(FIGURE1[step][h]) for h in GROUP}, f"step {step}"
        assert delivered == DELIVERED[step], f"step {step}"
    for h in GROUP:
        assert ex.hosts[h].queue == []
        assert [str(d.ts) for d in ex.hosts[h].delivered] == ["17.3", "18.3", "19.3"]


def test_proposals_and_final_timestamps() -> None:
    """Section 2.2: host1 collects 16.1, 17.2, 17.3 for m1 and picks 17.3; m2 ends at 19.3
    and m3 at 18.3 (Figure 1 steps 3, 4)."""
    ex = Example()
    for m in ("m1", "m2", "m3"):
        assert [str(ex.acks[m][h].ts) for h in GROUP] == PROPOSALS[m]
        assert all(a.next_mid is None for a in ex.acks[m].values())  # ABCAST sends no vector
    for m in ("m1", "m2", "m3"):
        ex.decide(m)
        f = ex.finals[m]
        assert (str(f.ts), f.sender, f.min_next_mid, f.max_next_ts) == (
            FINAL[m], SENDER[m], None, None)


def test_figure1_step2_host1_slip_rules_win() -> None:
    """Figure 1 step 2 prints host1's m2 at 16.1; ABCAST never changes an undeliverable
    timestamp, so m2 keeps the 17.1 host1 gave it in step 1 (the figure's order of the
    queue is unaffected)."""
    ex = Example()
    ex.decide("m1")
    row = ex.hosts[1].figure_row()
    assert row != parse(FIGURE_SLIP)
    assert [m for m, _, _ in row] == [m for m, _, _ in parse(FIGURE_SLIP)]
    assert ("m2", "17.1", UD) in row


def test_m1_waits_at_host1_until_step4() -> None:
    """Section 2.3 remark (5): m1 is dl at host1 from step 2 but waits behind m3 (15.1,
    ud) until m3 is decided in step 4, although m3 ends above it (18.3 > 17.3)."""
    ex = Example()
    ex.decide("m1")
    h1 = ex.hosts[1]
    assert h1.queue[0].mid == "m3" and h1.queue[0].state == UD
    assert ("m1", "17.3", DL) in h1.figure_row() and h1.delivered == []
    ex.decide("m2")
    assert h1.delivered == []
    assert ex.decide("m3")[1] == ["m1", "m3", "m2"]


def test_counter_raise_on_final_timestamp() -> None:
    """The decision of model/abcast/abcast.py: a validation message moves the counter past its
    final timestamp, so a later reception proposes above it; the literal reading does
    not."""
    for raise_counter, want in ((True, "20.1"), (False, "18.1")):
        ex = Example(raise_counter=raise_counter)
        ex.decide("m2")  # 19.3
        h1 = ex.hosts[1]
        assert h1.counter == (19 if raise_counter else 17)
        (send,) = h1.receive(Data("x", 2, 2)).sends
        assert str(send.msg.ts) == want


def test_timestamp_order_and_parse() -> None:
    assert sorted(map(Timestamp.parse, ["18.3", "17.3", "18.2", "9.1"])) == [
        Timestamp(9, 1), Timestamp(17, 3), Timestamp(18, 2), Timestamp(18, 3)]
    assert str(Timestamp(17, 3).plus(2)) == "19.3"
    with pytest.raises(ValueError, match="COUNTER.HOSTID"):
        Timestamp.parse("17")


def test_bad_input_is_refused() -> None:
    ex = Example()
    h1 = ex.hosts[1]
    with pytest.raises(ValueError, match="received twice"):
        h1.receive(Data("m2", 2, 1))
    h1.receive(ex.acks["m1"][1])
    with pytest.raises(ValueError, match="acknowledged 'm1' twice"):
        h1.receive(ex.acks["m1"][1])
    with pytest.raises(ValueError, match="not waiting for"):
        h1.receive(ex.acks["m2"][1])
    with pytest.raises(ValueError, match="not in the reception queue"):
        h1.receive(Final("zz", 2, Timestamp(30, 2)))
    with pytest.raises(ValueError, match="not in the group"):
        h1.receive(Data("y", 7, 1))
    with pytest.raises(ValueError, match="not in the group"):
        AbcastProcess(4, GROUP)
    with pytest.raises(ValueError, match="broken must be one of"):
        AbcastProcess(1, GROUP, broken="raise-all")
    with pytest.raises(ValueError, match="used already"):
        h1.multicast("m1")
    ex = Example()
    ex.decide("m1")
    with pytest.raises(ValueError, match="not in the reception queue"):
        ex.hosts[3].receive(ex.finals["m1"])  # host3 delivered m1 already
    with pytest.raises(ValueError, match="second final timestamp"):
        ex.hosts[1].receive(ex.finals["m1"])  # m1 still waits behind m3 at host1


def test_broken_variants_deliver_early() -> None:
    """The planted faults deliver where ABCAST must not: ignore-head delivers m1 at host1
    in step 2 (ahead of m3, still ud); deliver-ud delivers on reception."""
    ex = Example(broken="ignore-head")
    assert ex.decide("m1") == {1: ["m1"], 2: ["m1"], 3: ["m1"]}
    ex = Example(broken="deliver-ud")
    assert [d.mid for d in ex.hosts[1].delivered] == ["m3", "m1", "m2"]
    assert [d.mid for d in ex.hosts[2].delivered] == ["m2", "m1", "m3"]
