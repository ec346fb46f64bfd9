"""The process machine on a timed network, for protocols that declare one (003's qos):
clocks within eps, every packet delivered within delta unless lost, the burst-loss
adversary, crashes (a crashing sender's packets lost past the bound), joins, leaves and
recoveries; 003's safety properties as invariants and its liveness after draining.

Source: 003 (Bar-Joseph, Keidar, Anker and Lynch) sections 2.1 (network: FIFO links,
delivery within delta, "L out of I" burst losses; clocks within eps) and 3.3 (failures,
joins, leaves). ``fuzz/process_machine.py`` hands a timed protocol to this machine: its
own network reorders without bound, which would time out correct processes and say
nothing about the protocol.

The adversary, as Hypothesis rules (time is real, in the protocol's units; each process
reads ``real + offset``, the offsets drawn within eps/2 at the start):

* ``send``: a member multicasts an application message now;
* ``arrive``: the oldest packet of a link arrives now (FIFO links); to a process that is
  down, it is lost (the process was not there);
* ``wait``: time passes by a drawn amount (up to three slots), timer by timer; before
  each timer, every packet whose deadline (sent + delta) it passes or reaches arrives,
  in link order (a packet due exactly at a timeout is taken before it, as in the
  simulator);
* ``lose``: a packet in flight is lost if its link then still loses at most L of any I
  consecutive packets (``fec.within_burst_bound``); a packet sent before its sender's
  latest crash may be lost without that bound (003 section 3.3), one sent after a recovery not;
* ``renegotiate`` (with a reservation, the option ``reserve``: 003 section 2.1's QoS
  contract): a member asks for a new reservation r = (avg, max), 1 <= avg <= 4 and
  1 <= max <= 3 (a reservation of 0 would hold its messages for ever). Such a run logs
  a ``packet`` record per network message, as the simulator's ``--packets`` does, and
  the checker's ``rate`` judges each process against the reservations it declared;
  the teardown lets the senders' held messages go out first (model/qos/reserve.py);
* ``crash`` (a minority of the processes at most), ``join`` of a process that is down
  (from time 0, or crashed: a recovery), ``join_two`` (two down processes join close
  together, as a group forms), ``leave`` of a member. A joiner may have missed what was
  in flight to it: it arrived just before it woke (reading aid B5).

The teardown drains (time runs until every slot is delivered), then checks, with the
checker's own properties (``checker/oracle.py``), what the model promises (its profile,
``model-qos``: integrity, total-order-weak, global-order) and 003's liveness under joins,
leaves, crashes and recoveries (Definition 2.1: the checker's ``member-liveness``), and
with a reservation the rate against the declared reservations (the checker's ``rate``). A
failure is shrunk and reported as the process machine's
:class:`~tomkit.fuzz.failure.ProcessFailure`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

from tomkit.checker.oracle import promised, violations
from tomkit.fuzz.failure import ProcessFailure, RuleFailure
from tomkit.model.net.timed import RealTimeRecorder
from tomkit.model.process import Member, Output
from tomkit.model.protocols import protocol as get_protocol
from tomkit.model.qos.fec import within_burst_bound

__all__ = ["FEATURES", "timed_machine"]

#: the adversary's optional moves; each run picks a subset (swarm testing)
FEATURES = ("lose", "crash", "leave")

#: 003's liveness (Definition 2.1: among processes correct from their latest join on)
LIVENESS = "member-liveness"
#: the network messages against the declared reservations (003 section 2.1)
RATE = "rate"


def timed_machine(protocol: str, n: int, options: Mapping[str, Any] | None = None, *,
                  max_messages: int = 8, max_crashes: int | None = None,
                  label: str | None = None) -> type[RuleBasedStateMachine]:
    """A RuleBasedStateMachine class over the n processes of a timed ``protocol``
    (module docstring)."""
    proto = get_protocol(protocol)
    # the adversary's moves are model/events.py's: a protocol refuses what it cannot honour
    proto.refuse(("crash", "join", "leave", "recover"))
    if proto.timing is None:
        raise ValueError(f"{protocol} runs on no timed network")
    opts = proto.resolve(options)
    # at the end of a drained run: the promised safety, then 003's liveness, and with a
    # reservation (003's QoS contract) the rate against what each process declared
    reserving = proto.honours("renegotiate") and opts.get("reserve") is not None
    judged = (*promised(proto.profile), LIVENESS, *((RATE,) if reserving else ()))
    timing = proto.timing(opts)  # type: ignore[attr-defined]
    names = [f"p{i}" for i in range(n)]
    label = label or protocol
    if max_crashes is None:
        max_crashes = (n - 1) // 2
    eps, dmax = timing.epsilon, timing.max_delay
    slot = timing.slot
    fec_i, fec_l = timing.fec_i, timing.fec_l
    drain = (math.ceil(eps / slot) + 4) * slot + 2 * (dmax + eps)

    class TimedMachine(RuleBasedStateMachine):
        runs = 0
        first_failure: int | None = None

        def __init__(self) -> None:
            super().__init__()
            type(self).runs += 1
            self.now = 0.0
            self.procs = proto.make(names, opts, 1.0)
            self.off = [0.0] * n
            self.up = [True] * n
            # link -> in flight, oldest first: [seq, deadline, packet]
            self.links: dict[tuple[int, int], list[list]] = {
                (a, b): [] for a in range(n) for b in range(n) if a != b}
            self.fates: dict[tuple[int, int], list[bool]] = {k: [] for k in self.links}
            self.timers: list[set[float]] = [set() for _ in range(n)]  # local times
            self.sent = [0] * n
            self.crashed: set[int] = set()
            #: crashes of each process so far: a packet sent before its sender's latest
            #: crash escapes the burst-loss bound, one of a recovered process does not
            self.incarnation = [0] * n
            self.last_input = 0.0
            self.rec = RealTimeRecorder(f"fuzz-{label}", names, lambda: self.now)
            self.features: frozenset[str] = frozenset(FEATURES)

        # ---------------------------------------------------------------- helpers

        def local(self, i: int) -> float:
            return self.now + self.off[i]

        def handle(self, i: int, out: Output) -> None:
            self.rec.logged(i, out, self.local(i))
            if out.timer is not None:
                self.timers[i].add(out.timer)
            for tr in out.sends:
                if reserving:  # what the rate property counts (the simulator's --packets)
                    self.rec.event(i, "packet", self.local(i), timing.packet_fields(tr.packet))
                for j in tr.to:
                    if j != i:
                        link = (i, j)
                        fates = self.fates[link]
                        self.links[link].append([len(fates), self.now + dmax, tr.packet,
                                                 self.incarnation[i]])
                        fates.append(False)
                if i in tr.to:
                    self.handle(i, self.procs[i].on_receive(tr.packet, self.local(i)))

        def next_timer(self) -> float:
            return min((t - self.off[i] for i in range(n) if self.up[i]
                        for t in self.timers[i]), default=math.inf)

        def arrive(self, link: tuple[int, int]) -> None:
            packet = self.links[link].pop(0)[2]
            b = link[1]
            if self.up[b]:
                self.handle(b, self.procs[b].on_receive(packet, self.local(b)))

        def move_to(self, t: float) -> None:
            """Time passes to real ``t``, timer by timer: before each, the packets due by
            then arrive (link by link, FIFO), then the timers of that instant fire."""
            while True:
                nt = self.next_timer()
                if nt >= t:
                    break
                self.step_to(nt)
            self.step_to(t)

        def step_to(self, t: float) -> None:
            while True:
                # a packet due at t itself comes before t's timers (as in the simulator)
                due = [k for k, q in self.links.items() if q and q[0][1] <= t]
                if not due:
                    break
                self.arrive(min(due, key=lambda k: self.links[k][0][1]))
            self.now = max(self.now, t)
            for i in range(n):
                while self.up[i]:
                    ripe = [x for x in self.timers[i] if x - self.off[i] <= self.now]
                    if not ripe:
                        break
                    x = min(ripe)
                    self.timers[i].discard(x)
                    self.handle(i, self.procs[i].on_timer(x))

        def members(self) -> list[int]:
            return [i for i in range(n) if self.up[i] and self.procs[i].accepting]

        def in_flight(self) -> list[tuple[int, int]]:
            return [k for k, q in self.links.items() if q]

        # ------------------------------------------------------------------ rules

        @initialize(offsets=st.lists(st.sampled_from((-0.5, 0.5, 0.0)), min_size=n,
                                     max_size=n),
                    down=st.lists(st.booleans(), min_size=n, max_size=n),
                    features=st.sets(st.sampled_from(FEATURES)))
        def start(self, offsets: list[float], down: list[bool], features: set[str]
                  ) -> None:
            """Clocks at -eps/2, 0 or +eps/2 (the extremes make the tight cases); some
            processes are down from time 0 (they may join later); the adversary's moves
            this run may use (swarm testing, Groce et al., ISSTA 2012: a run without
            leaves or crashes keeps its joiners correct to the end)."""
            self.features = frozenset(features)
            self.off = [o * eps for o in offsets]
            for i in range(n):
                if down[i]:
                    self.up[i] = False
                    self.procs[i].start_outside()
                else:
                    self.handle(i, self.procs[i].on_timer(self.local(i)))

        @precondition(lambda self: sum(self.sent) < max_messages and bool(self.members()))
        @rule(data=st.data())
        def send(self, data: st.DataObject) -> None:
            p = data.draw(st.sampled_from(self.members()), label="sender")
            self.sent[p] += 1
            mid = f"{names[p]}.{self.sent[p]}"
            out = self.procs[p].on_send(mid, self.local(p))
            self.rec.sent(p, mid, out, self.local(p))
            self.last_input = self.now
            self.handle(p, out)

        @precondition(lambda self: bool(self.in_flight()))
        @rule(data=st.data())
        def arrive_one(self, data: st.DataObject) -> None:
            self.arrive(data.draw(st.sampled_from(self.in_flight()), label="link"))

        @rule(step=st.integers(1, 24))
        def wait(self, step: int) -> None:
            """Time passes by step/8 of a slot (up to three slots)."""
            self.move_to(self.now + step * slot / 8)

        @precondition(lambda self: "lose" in self.features and bool(self.in_flight()))
        @rule(data=st.data())
        def lose(self, data: st.DataObject) -> None:
            link = data.draw(st.sampled_from(self.in_flight()), label="link")
            q = self.links[link]
            k = data.draw(st.integers(0, len(q) - 1), label="which")
            seq, inc = q[k][0], q[k][3]
            fates = self.fates[link]
            if inc == self.incarnation[link[0]]:  # its sender has not crashed since
                lo = max(0, seq - fec_i + 1)
                window = fates[lo:seq + fec_i]
                trial = list(window)
                trial[seq - lo] = True
                if not within_burst_bound(trial, fec_i, fec_l):
                    return  # the burst-loss bound forbids it
            fates[seq] = True
            q.pop(k)

        @precondition(lambda self: "crash" in self.features
                      and len(self.crashed) < max_crashes and any(self.up))
        @rule(data=st.data())
        def crash(self, data: st.DataObject) -> None:
            q = data.draw(st.sampled_from([i for i in range(n) if self.up[i]]),
                          label="crash")
            self.crashed.add(q)
            self.incarnation[q] += 1
            self.up[q] = False
            self.timers[q].clear()
            self.rec.crash(q, self.local(q))
            self.last_input = self.now

        @precondition(lambda self: not all(self.up))
        @rule(data=st.data(), missed=st.booleans())
        def join(self, data: st.DataObject, missed: bool) -> None:
            """A down process joins (down from time 0) or recovers (crashed); with
            ``missed``, what was in flight to it arrived just before it woke, and is lost
            to it."""
            p = data.draw(st.sampled_from([i for i in range(n) if not self.up[i]]),
                          label="joiner")
            self.do_join(p, missed)

        def do_join(self, p: int, missed: bool) -> None:
            if missed:
                for (_, b), q in self.links.items():
                    if b == p:
                        q.clear()
            self.up[p] = True
            proc: Member = self.procs[p]
            # the join record comes at join_OK (Output.joined)
            out = (proc.on_recover(self.local(p)) if p in self.crashed
                   else proc.on_join(self.local(p)))
            self.last_input = self.now
            self.handle(p, out)

        @precondition(lambda self: sum(not u for u in self.up) >= 2)
        @rule(data=st.data(), gap=st.integers(0, 4))
        def join_two(self, data: st.DataObject, gap: int) -> None:
            """Two down processes join close together (a group forming): the second
            wakes gap/8 eps of real time after the first, just after the first's join
            copies to it arrived: it misses them (reading aid B5)."""
            down = [i for i in range(n) if not self.up[i]]
            a = data.draw(st.sampled_from(down), label="first")
            b = data.draw(st.sampled_from([i for i in down if i != a]), label="second")
            self.do_join(a, False)
            self.links[(a, b)].clear()
            self.move_to(self.now + gap * eps / 8)
            self.do_join(b, True)

        if reserving:
            @precondition(lambda self: bool(self.members()))
            @rule(data=st.data(), avg=st.integers(1, 4), most=st.integers(1, 3))
            def renegotiate(self, data: st.DataObject, avg: int, most: int) -> None:
                """RN(r): a member asks for a new reservation (003 section 2.1)."""
                p = data.draw(st.sampled_from(self.members()), label="renegotiator")
                self.last_input = self.now
                self.handle(p, self.procs[p].on_renegotiate((avg, most), self.local(p)))

        @precondition(lambda self: "leave" in self.features and bool(self.members()))
        @rule(data=st.data())
        def leave(self, data: st.DataObject) -> None:
            p = data.draw(st.sampled_from(self.members()), label="leaver")
            out = self.procs[p].on_leave(self.local(p))
            self.rec.event(p, "leave", self.local(p), out.fields)
            out.fields = None
            self.last_input = self.now
            self.handle(p, out)

        # ------------------------------------------------------------- the end

        def fail(self, kind: str, explanation: str) -> None:
            if type(self).first_failure is None:
                type(self).first_failure = type(self).runs
            raise RuleFailure(ProcessFailure(label, n, dict(opts), kind, explanation,
                                             list(self.rec.records)))

        def teardown(self) -> None:
            if not sum(self.sent):
                return
            self.move_to(max(self.now, self.last_input + drain) + slot)
            if reserving:  # the shaper's held messages go out, one slot at a time
                while any(self.up[i] and self.procs[i].holding for i in range(n)):
                    self.move_to(self.now + slot)
                self.move_to(self.now + drain + slot)
            while self.in_flight():
                self.arrive(self.in_flight()[0])
            for res in violations(self.rec.records, judged):
                self.fail(res.property, res.explanation)

    TimedMachine.__name__ = TimedMachine.__qualname__ = \
        f"TimedMachine_{label.replace('-', '_').replace(':', '_')}_n{n}"
    return TimedMachine
