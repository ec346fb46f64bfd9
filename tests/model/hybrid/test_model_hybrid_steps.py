"""The hybrid protocol's switching rules step by step (001, Rodrigues, Fonseca,
Verissimo, section 5 and Figure 4), on hand-made schedules through the process
interface: goingToActive, goingToPassive (and its abort for the last active process),
change of sequencer, the crash of the only sequencer (promotion, reassign), and the
interleaving of decision A1 that breaks total order under the literal reading."""

from __future__ import annotations

from typing import Any

import pytest

from tomkit.checker.properties import Options, properties
from tomkit.checker.result import Verdict
from tomkit.checker.trace import Trace
from tomkit.model.hybrid.process import HybridProcess
from tomkit.model.process import Output
from tomkit.model.protocols import protocol
from tomkit.model.recorder import Recorder

ORDER = ["integrity", "total-order-weak", "total-order-strong", "global-order", "fifo-order",
         "liveness"]


class Net:
    """n hybrid processes on FIFO links that the test schedules by hand."""

    def __init__(self, n: int, **options: Any) -> None:
        opts = {"tick_rate": 0.0, "heartbeat": 0.0}
        opts.update(options)
        names = [f"p{i}" for i in range(n)]
        p = protocol("hybrid")
        self.procs: list[HybridProcess] = p.make(names, p.resolve(opts), 1.0)
        self.links: dict[tuple[int, int], list] = {(a, b): [] for a in range(n)
                                                   for b in range(n) if a != b}
        self.rec = Recorder("steps", names)
        self.now = 0.0
        self.sent = [0] * n
        self.crashed: set[int] = set()

    def tick(self) -> float:
        self.now += 1.0
        return self.now

    def handle(self, i: int, out: Output) -> None:
        self.rec.logged(i, out, self.now)
        for tr in out.sends:
            for j in tr.to:
                if j != i:
                    self.links[(i, j)].append(tr.packet)
            if i in tr.to:
                self.handle(i, self.procs[i].on_receive(tr.packet, self.now))

    def send(self, i: int) -> str:
        self.sent[i] += 1
        mid = f"p{i}.{self.sent[i]}"
        out = self.procs[i].on_send(mid, self.tick())
        self.rec.sent(i, mid, out, self.now)
        self.handle(i, out)
        return mid

    def switch(self, i: int) -> None:
        """Fire i's scripted-switch timer (the ``switches`` option)."""
        p = self.procs[i]
        left = p.switches_left
        while p.switches_left == left:  # the first input only arms the timer
            self.now = max(self.tick(), *p.timers) if p.timers else self.tick()
            self.handle(i, p.on_timer(self.now))

    def deliver(self, a: int, b: int, k: int = 1) -> None:
        for _ in range(k):
            self.handle(b, self.procs[b].on_receive(self.links[(a, b)].pop(0), self.tick()))

    def crash(self, q: int) -> None:
        self.crashed.add(q)
        self.rec.crash(q, self.tick())

    def notify(self, p: int, q: int) -> None:
        assert q in self.crashed and not self.links[(q, p)]
        self.handle(p, self.procs[p].on_crash(q, self.tick()))

    def notify_all(self) -> None:
        for p in range(len(self.procs)):
            for q in self.crashed:
                if p not in self.crashed and not self.links[(q, p)]:
                    self.handle(p, self.procs[p].on_crash(q, self.tick()))

    def drain(self) -> None:
        busy = True
        while busy:
            busy = False
            for (a, b), q in self.links.items():
                if q and b not in self.crashed:
                    busy = True
                    self.deliver(a, b)

    def order(self, i: int) -> list[str]:
        return [r["msg"] for r in self.rec.records
                if r["kind"] == "deliver" and r["process"] == f"p{i}"]

    def verdicts(self) -> dict[str, Verdict]:
        tr = Trace.from_records(self.rec.records)
        return {n: properties()[n].check(tr, Options()).verdict for n in ORDER}


def literal_ot_schedule(variant: str | None) -> Net:
    """Decision A1's interleaving. p0 is the only sequencer; p1 goes active; p0 tickets
    its goingToActive G (number 1) and then its own A (2) and B (3); p1 delivers G and
    tickets its Y with 2, between A and B. p2 gets p0's packets before p1's G: under the
    literal reading it commits G, A, B to OT while p0 is the only active process."""
    net = Net(3, roles="0", switches=1, variant=variant)
    net.switch(1)  # p1: goingToActive
    assert net.procs[1].state == "toactive"
    net.deliver(1, 0)  # p0 tickets G, sends the ticket at once (heartbeat 0)
    a, b = net.send(0), net.send(0)
    net.deliver(0, 1)  # p1 gets G's ticket only: delivers G, active
    assert net.procs[1].state == "active"
    y = net.send(1)
    net.deliver(0, 2, 3)  # p2: G's ticket, A, B before G itself
    net.drain()
    assert net.order(0) == [a, y, b]
    return net


def test_a1_interleaving_safe_reading_keeps_one_order() -> None:
    net = literal_ot_schedule(None)
    assert net.order(1) == net.order(2) == net.order(0)
    assert net.verdicts() == dict.fromkeys(ORDER, Verdict.HOLDS)


def test_a1_interleaving_breaks_total_order_under_the_literal_reading() -> None:
    net = literal_ot_schedule("literal-ot")
    assert net.order(2) == ["p0.1", "p0.2", "p1.1"]
    v = net.verdicts()
    assert v["total-order-weak"] == Verdict.VIOLATED
    assert v["global-order"] == Verdict.VIOLATED


def test_going_passive_aborts_for_the_last_active_process() -> None:
    """Section 5.3.2: the last active process's goingToPassive is aborted; it restarts
    sending and ticketing (rn unchanged). Its own goingToPassive is stable at once (it
    is the only issuer), so the abort happens at its own reception."""
    net = Net(2, roles="0", switches=1)
    m0 = net.send(1)
    net.switch(0)
    p0 = net.procs[0]
    assert p0.state == "active" and p0.rn == [0, 0] and p0.aborts == 1
    m1 = net.send(0)  # sending again, with its own ticket
    net.drain()
    assert net.procs[1].role == ["active", "passive"] and net.procs[1].rn == [0, 0]
    assert net.order(0) == net.order(1) and set(net.order(0)) == {m0, m1}


def test_two_concurrent_going_passive_the_second_aborts() -> None:
    """Both active processes go passive at once: the first goingToPassive in ticket
    order succeeds, the second finds itself the last active process and aborts."""
    net = Net(2, roles="all", switches=1)
    net.switch(0)
    net.switch(1)
    assert net.procs[0].state == net.procs[1].state == "topassive"
    net.drain()
    roles = {tuple(p.role) for p in net.procs}
    assert len(roles) == 1
    (r,) = roles
    assert sorted(r) == ["active", "passive"]
    winner = r.index("passive")
    assert net.procs[winner].state == "passive" and net.procs[1 - winner].aborts == 1
    m = net.send(winner)
    net.drain()
    assert net.order(0) == net.order(1) == [m]


def test_going_passive_reassigns_clients_and_keeps_fifo() -> None:
    """p0 and p1 active, p2 passive with p0 as sequencer. p2 sends, p0 goes passive
    before ticketing p2's second message: at the goingToPassive's place p0's role number
    grows, p2 reassigns ]l, c] to p1, which tickets it; everyone delivers the same
    sequence in FIFO order."""
    net = Net(3, roles="0,1", switches=1)
    m1 = net.send(2)
    net.deliver(2, 0)  # p0 tickets p2.1 at once
    m2 = net.send(2)
    net.switch(0)  # goingToPassive before p2.2 reaches p0
    net.drain()
    for i in range(3):
        p = net.procs[i]
        assert p.role == ["passive", "active", "passive"] and p.rn == [1, 0, 0]
    assert net.procs[2].S.p == 1 and net.procs[2].reassigns == 1
    assert net.order(0) == net.order(1) == net.order(2) == [m1, m2]
    assert net.verdicts() == dict.fromkeys(ORDER, Verdict.HOLDS)


def test_change_of_sequencer_waits_for_own_messages() -> None:
    """Section 5.3.4 and A6: chgseq stops sending until l = c, then names the new
    sequencer; immediately when l = c already."""
    net = Net(3, roles="0,1", switches=2)
    p2 = net.procs[2]
    assert p2.S.p == 0
    net.send(2)
    net.switch(2)  # switches_left 2 -> 1 (odd): change sequencer to p1
    assert p2.state == "chgseq" and p2.S.p == 0
    m = net.send(2)  # held
    assert p2.app_queue
    net.drain()
    assert p2.state == "passive" and p2.S.p == 1 and not p2.app_queue
    net.drain()
    assert [r for r in net.order(0)] == ["p2.1", m]
    assert net.verdicts() == dict.fromkeys(ORDER, Verdict.HOLDS)


@pytest.mark.parametrize("variant,live", [(None, True), ("literal-view", False)])
def test_crash_of_the_only_sequencer(variant: str | None, live: bool) -> None:
    """Section 5.3.1: p0, the only active process, crashes with p1's messages
    unticketed; after the view change p2 (highest id) is active with rn 1, p1 reassigns
    to it, and every message of p1 is delivered. Figure 4's view branch as printed
    (literal-view) never reassigns p1's messages."""
    net = Net(3, roles="0", variant=variant)
    sent = [net.send(1), net.send(1)]
    net.crash(0)
    net.drain()
    net.notify_all()
    net.drain()
    p2 = net.procs[2]
    assert p2.role[2] == "active" and p2.rn[2] == 1 and p2.members == (1, 2)
    assert (net.order(1) == net.order(2) == sent) is live
    assert (net.verdicts()["liveness"] == Verdict.HOLDS) is live


def test_crash_of_a_passive_process_discards_its_unticketed_messages() -> None:
    """Section 5.2: a crashed passive process's messages that have no ticket when the
    view changes are discarded by every survivor; the ticket its sequencer issued during
    the flush, unsent, is purged (A5). p1 learns of p2's crash first and flushes; p0
    flushes on p1's FLUSH and only then receives p2.1, whose ticket it cannot send. p1's
    FLUSH said p2 crashed after one packet: once p2.1 is in, p0 (the coordinator) knows
    it has all of p2's and changes the view at once, before its own Crash(p2)."""
    net = Net(3, roles="0")
    m = net.send(2)
    net.crash(2)
    net.deliver(2, 1)
    net.notify(1, 2)  # p1 flushes
    net.deliver(1, 0)  # p0 gets p1's FLUSH: flushes (nothing to send yet)
    assert net.procs[0].vs.blocked and not net.procs[0].LT
    assert net.procs[0].vs.told == {2: 1}
    net.deliver(2, 0)  # p2.1 reaches p0, which tickets it but may not send; p0 installs
    assert net.procs[0].vs.view == 1 and not net.procs[0].LT
    net.notify(0, 2)  # changes nothing now
    net.drain()
    for i in (0, 1):
        assert (2, 1) in net.procs[i].discarded and net.procs[i].members == (0, 1)
    assert not net.procs[0].LT
    assert m not in net.order(0) + net.order(1)
    m2 = net.send(1)
    net.drain()
    assert net.order(0) == net.order(1) == [m2]
    assert net.verdicts() == dict.fromkeys(ORDER, Verdict.HOLDS)
