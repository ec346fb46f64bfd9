"""One Hypothesis stateful machine for every protocol: its processes on a hostile network.

Where ``fuzz/dag_machine.py`` feeds DAG views to a ToTo-family rule, this machine runs the
n processes of any protocol of ``model/protocols.py`` through the common process
interface (``model/process.py``), exactly as the simulator does, and plays the network
and the membership against them, within what the protocol says it assumes
(:class:`~tomkit.model.process.Protocol`):

* ``send``: a live process's application multicasts a message;
* ``transmit``: one packet in flight arrives. Across links in *any* order; within a link
  in any order too unless the protocol needs FIFO links (ABCAST and TOMP do: one TCP
  connection per pair), then only the oldest;
* ``lose`` / ``retransmit`` / ``duplicate``, only for protocols that tolerate lossy links
  (the ToTo family: reliable links are built from lossy ones by retransmission, so every
  loss is eventually repaired, and the causal layer drops duplicates);
* ``fire_timer``: a timer a process asked for goes off (time is logical: each step
  advances the clock by one, and a timer moves it to its due time);
* ``crash``: a process stops (for protocols that handle crashes; a minority at most);
* ``notify``: the membership's Crash(q) at a live process, once no packet of q is still
  on its way there (000 section 5.1).

A protocol that declares a membership service (``Protocol.service``;
``model/toto/membership.py``, ``toto-dynamic``) gets it instead of ``notify``: ``crash``
goes to the service, and ``join`` (one of ``spares`` processes outside the first view
joins; a crashed process's comeback is logged as the step ``recover``), ``partition``
(the network splits in two), ``heal`` and ``agree`` (the service's Agree and Flush stages,
once no packet of a crashed process that leaves is in flight) are rules. The events are
``model/events.py``'s, and a protocol refuses those it does not honour
(``Protocol.refuse``). Its runs are judged in the correct scope: 000 Figure 2 promises
the order among connected machines only, and a machine cut off from the primary component may have
delivered what the primary never does (docs/toto-membership.md).

Every step is logged as v1 trace records by the simulator's recorder
(``model/recorder.py``), and as a step of the run's schedule (``send p``, ``transmit``
on a link, ...), which :meth:`apply` replays on a fresh machine (``fuzz/reduce.py``
reduces a failing run that way). The teardown drains the run (every loss repaired,
every packet delivered, Crash(q) everywhere, timers fired until nothing changes), then
checks the properties the protocol promises on the trace, and liveness, with the
checker's own properties.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

from tomkit.checker.oracle import promised
from tomkit.checker.properties import Options, properties
from tomkit.checker.result import Verdict
from tomkit.checker.trace import Trace
from tomkit.fuzz.failure import ProcessFailure, RuleFailure
from tomkit.fuzz.qos_machine import timed_machine
from tomkit.model.process import Output, Process
from tomkit.model.protocols import protocol as get_protocol
from tomkit.model.recorder import Recorder

__all__ = ["ProcessFailure", "RuleFailure", "process_machine"]

#: drain rounds before the teardown gives up on quiescence (liveness then decides)
DRAIN_ROUNDS = 60


def process_machine(protocol: str, n: int, options: Mapping[str, Any] | None = None, *,
                    max_messages: int = 12, max_crashes: int | None = None,
                    label: str | None = None, spares: int = 0, partitions: bool = True,
                    scope: str | None = None, liveness: bool | None = None,
                    comebacks: int = 0) -> type[RuleBasedStateMachine]:
    """A RuleBasedStateMachine class over the n processes of ``protocol`` (module
    docstring). ``max_crashes`` defaults to a minority, (n - 1) // 2, for protocols that
    handle crashes, else 0. With a membership service: ``spares`` processes start
    outside the first view, ``partitions`` allows the partition rule, and ``scope`` (the
    checker's) defaults to correct with partitions, else uniform. ``liveness`` (default:
    whether the protocol promises it) judges liveness after the drain; False leaves the
    promised safety properties alone, so that a search for a safety violation is not
    stopped by a liveness failure found first. A protocol whose processes join and
    recover by themselves (``Member`` s, no service; the hybrid) gets the rule
    ``comeback`` when ``spares`` (processes outside from the start) or ``comebacks`` is
    given: up to ``comebacks`` (default 3) joins of spares and recoveries of crashed
    processes."""
    proto = get_protocol(protocol)
    if proto.timing is not None:  # 003's timed network (qos)
        return timed_machine(protocol, n, options, max_messages=max_messages,
                             max_crashes=max_crashes, label=label)
    opts = proto.resolve(options)
    if proto.clocks is not None:
        bounds = proto.clocks(opts)
        if bounds.skew or bounds.drift:
            # the machine's steps are one logical clock, and it already chooses every
            # order of events that skewed clocks could bring about
            raise ValueError(f"{protocol}: the process fuzzer runs on one logical clock; "
                             "clock skew and drift are for the simulator (tomkit simulate)")
    names = [f"p{i}" for i in range(n)]
    label = label or protocol
    if max_crashes is None:
        max_crashes = (n - 1) // 2 if proto.crashes else 0
    if max_crashes:
        proto.refuse(["crash"])
    props = properties()
    safety = promised(proto.profile)
    judge_liveness = proto.live if liveness is None else liveness
    dynamic = proto.service is not None
    if spares:
        proto.refuse(["join"])  # spares join
    #: joins and recoveries go to the processes themselves (Member s)
    members_join = not dynamic and bool(spares or comebacks) and any(
        proto.honours(k) for k in ("join", "recover"))
    if members_join and not comebacks:
        comebacks = 3
    if scope is None:  # (module docstring)
        scope = "correct" if dynamic and partitions else "uniform"
    LINKS = [(a, b) for a in range(n) for b in range(n) if a != b]  # noqa: N806

    class ProcessMachine(RuleBasedStateMachine):
        #: runs started, and how many had started when a property first failed (what
        #: "examples needed to find it" reports)
        runs = 0
        first_failure: int | None = None
        #: the failure as first found, before Hypothesis shrank it (fuzz/stateful.py
        #: reduces both: shrinking draws can land on a longer run)
        first_found: ProcessFailure | None = None

        def __init__(self) -> None:
            super().__init__()
            type(self).runs += 1
            self.procs: list[Process] = proto.make(names, opts, 1.0)
            # (sender, recipient) -> packets in flight, oldest first
            self.links: dict[tuple[int, int], list[Any]] = {
                (a, b): [] for a in range(n) for b in range(n) if a != b}
            self.lost: list[tuple[tuple[int, int], Any]] = []
            self.timers: list[list[float]] = [[] for _ in range(n)]
            self.now = 0.0
            self.sent = [0] * n
            self.crashed: list[int] = []
            self.noted: list[set[int]] = [set() for _ in range(n)]
            self.names = list(names)
            self.rec = Recorder(f"fuzz-{label}", names)
            #: the steps of the run so far (``step``); ``played``: those before the drain
            self.schedule: list[tuple] = []
            self.played: list[tuple] = []
            self.slow: frozenset[tuple[int, int]] = frozenset()
            # the membership service (module docstring), with this machine as its driver
            self.members = proto.service(self.procs) if dynamic else None  # type: ignore
            self.up = [True] * n
            self.partitioned = False
            self.partitions = self.joins = self.n_crashes = 0
            #: processes that crashed (a comeback of one is its recover)
            self.went_down: set[int] = set()
            if self.members is not None:
                self.up = [False] * n
                self.members.start(self, self.procs, range(n - spares))
            elif members_join:
                for j in range(n - spares, n):
                    self.procs[j].start_outside()  # type: ignore[attr-defined]
                    self.up[j] = False

        # ------------------------------------------ the membership service's driver

        def record(self, i: int, kind: str, view: Any = None) -> None:
            if kind == "crash":
                self.rec.crash(i, self.now)
                return
            r: dict[str, Any] = {"trace": self.rec.trace_id, "process": self.names[i],
                                 "kind": kind}
            if kind == "view":
                r["view"], r["members"] = view.id, [self.names[j] for j in view.members]
            r["time"] = self.now
            self.rec.records.append(r)

        def set_up(self, i: int, up: bool) -> None:
            self.up[i] = up
            if up and self.members.names[i] != self.names[i]:  # a new incarnation
                self.names[i] = self.members.names[i]
                self.rec.names = tuple(self.names)

        def in_flight_until(self, q: int) -> float:
            busy = any(self.links[(q, j)] for j in range(n) if j != q and self.up[j]) or \
                any(k[0] == q for k, _ in self.lost)
            return float("inf") if busy else 0.0

        def changed(self, at: float) -> None:
            """The agree rule runs the Agree stage when the service has a change due."""

        def agreeable(self) -> bool:
            return (self.members is not None and self.members.pending()
                    and self.members.waits_for() <= self.now)

        # ---------------------------------------------------------------- helpers

        def alive(self) -> list[int]:
            return [p for p in range(n) if p not in self.crashed and self.up[p]]

        def senders(self) -> list[int]:
            """Live processes that may send: with a membership, members of a view."""
            return [p for p in self.alive()
                    if self.members is None or self.members.installed(p)]

        def tick(self) -> float:
            self.now += 1.0
            return self.now

        def handle(self, i: int, out: Output) -> None:
            """Log, remember the timer, send (a packet to itself is received at once)."""
            self.rec.logged(i, out, self.now)
            if out.timer is not None:
                self.timers[i].append(out.timer)
            for tr in out.sends:
                for j in tr.to:
                    if j != i:
                        self.links[(i, j)].append(tr.packet)
                if i in tr.to:
                    self.handle(i, self.procs[i].on_receive(tr.packet, self.now))

        def live_links(self) -> list[tuple[int, int]]:
            return [k for k, q in self.links.items()
                    if q and k[1] not in self.crashed and self.up[k[1]]]

        def next_links(self) -> list[tuple[int, int]]:
            """The live links a packet may arrive on now: the slow ones only when no
            other has a packet in flight."""
            live = self.live_links()
            return [k for k in live if k not in self.slow] or live

        def do_send(self, p: int) -> None:
            self.sent[p] += 1
            mid = f"{self.names[p]}.{self.sent[p]}"
            t = self.tick()
            out = self.procs[p].on_send(mid, t)
            self.rec.sent(p, mid, out, t)
            self.handle(p, out)

        def arrive(self, b: int, packet: Any) -> None:
            if self.members is not None and not self.members.admits(b, packet):
                return  # a partition cuts the link: held back until the heal
            self.handle(b, self.procs[b].on_receive(packet, self.tick()))

        def notifiable(self) -> list[tuple[int, int]]:
            return [(p, q) for p in self.alive() for q in self.crashed
                    if q not in self.noted[p] and not self.links[(q, p)]
                    and not any(k == (q, p) for k, _ in self.lost)]

        def fire(self, p: int) -> None:
            t = min(self.timers[p])
            self.timers[p].remove(t)
            self.now = max(self.now + 1.0, t)
            self.handle(p, self.procs[p].on_timer(self.now))

        # ------------------------------------------------------------------ steps
        # A rule draws its choices, then applies them as one step and logs the step in
        # ``schedule``; :meth:`apply` replays a logged step on a fresh machine when the
        # machine allows it there (``fuzz/reduce.py`` replays shortened schedules). A
        # step names what it does (a link and a position on it, a process), not the
        # draws, so that it keeps its meaning when steps before it are dropped.

        def step(self, kind: str, *args: Any) -> None:
            self.schedule.append((kind, *args))
            getattr(self, f"do_{kind}")(*args)

        def apply(self, step: tuple) -> bool:
            """Apply a logged step if the rules allow it now (their preconditions; the
            slow links, a bias of the search and no assumption of the protocol's, are
            not kept); False, with nothing done, if not."""
            kind, *args = step
            can = getattr(self, f"can_{kind}", None)
            if can is None or not can(*args):
                return False
            self.step(kind, *args)
            return True

        def can_send(self, p: int) -> bool:
            return sum(self.sent) < max_messages and p in self.senders()

        def can_transmit(self, link: tuple[int, int], i: int) -> bool:
            return link in self.live_links() and i < len(self.links[link]) and \
                (i == 0 or not proto.fifo)

        def do_transmit(self, link: tuple[int, int], i: int) -> None:
            self.arrive(link[1], self.links[link].pop(i))

        def can_lose(self, link: tuple[int, int], i: int) -> bool:
            return proto.lossy and len(self.lost) < 4 and link in self.live_links() and \
                i < len(self.links[link])

        def do_lose(self, link: tuple[int, int], i: int) -> None:
            self.lost.append((link, self.links[link].pop(i)))

        def can_retransmit(self, k: int) -> bool:
            return k < len(self.lost)

        def do_retransmit(self, k: int) -> None:
            link, m = self.lost.pop(k)
            self.links[link].append(m)

        def can_duplicate(self, link: tuple[int, int], i: int) -> bool:
            return proto.lossy and link in self.live_links() and i < len(self.links[link])

        def do_duplicate(self, link: tuple[int, int], i: int) -> None:
            q = self.links[link]
            q.append(q[i])

        def can_fire_timer(self, p: int) -> bool:
            return p in self.alive() and bool(self.timers[p])

        def do_fire_timer(self, p: int) -> None:
            self.fire(p)

        def can_crash(self, q: int) -> bool:
            return self.n_crashes < max_crashes and q in self.alive()

        def do_crash(self, q: int) -> None:
            self.n_crashes += 1
            self.went_down.add(q)
            if self.members is not None:
                self.rec.crash(q, self.tick())
                self.members.crash(q)
                return
            self.crashed.append(q)
            self.rec.crash(q, self.tick())

        def can_notify(self, p: int, q: int) -> bool:
            return (p, q) in self.notifiable()

        def do_notify(self, p: int, q: int) -> None:
            self.noted[p].add(q)
            self.handle(p, self.procs[p].on_crash(q, self.tick()))

        # ------------------------------------------------------------------ rules

        @initialize(slow=st.frozensets(st.sampled_from(LINKS)))
        def choose_slow_links(self, slow: frozenset[tuple[int, int]]) -> None:
            """Swarm testing (Groce et al., ISSTA 2012): a run picks links that lag behind
            all others, so that some processes fall far behind, as real schedules do and
            uniform choices rarely produce."""
            self.slow = slow

        @precondition(lambda self: sum(self.sent) < max_messages and bool(self.senders()))
        @rule(data=st.data())
        def send(self, data: st.DataObject) -> None:
            self.step("send", data.draw(st.sampled_from(self.senders()), label="sender"))

        @precondition(lambda self: bool(self.live_links()))
        @rule(data=st.data())
        def transmit(self, data: st.DataObject) -> None:
            link = data.draw(st.sampled_from(self.next_links()), label="link")
            q = self.links[link]
            i = 0 if proto.fifo else data.draw(st.integers(0, len(q) - 1), label="which")
            self.step("transmit", link, i)

        @precondition(lambda self: proto.lossy and bool(self.live_links())
                      and len(self.lost) < 4)
        @rule(data=st.data())
        def lose(self, data: st.DataObject) -> None:
            link = data.draw(st.sampled_from(self.live_links()), label="link")
            i = data.draw(st.integers(0, len(self.links[link]) - 1), label="which")
            self.step("lose", link, i)

        @precondition(lambda self: bool(self.lost))
        @rule(data=st.data())
        def retransmit(self, data: st.DataObject) -> None:
            self.step("retransmit", data.draw(st.integers(0, len(self.lost) - 1)))

        @precondition(lambda self: proto.lossy and bool(self.live_links()))
        @rule(data=st.data())
        def duplicate(self, data: st.DataObject) -> None:
            link = data.draw(st.sampled_from(self.live_links()), label="link")
            i = data.draw(st.integers(0, len(self.links[link]) - 1), label="which")
            self.step("duplicate", link, i)

        @precondition(lambda self: any(self.timers[p] for p in self.alive()))
        @rule(data=st.data())
        def fire_timer(self, data: st.DataObject) -> None:
            self.step("fire_timer", data.draw(
                st.sampled_from([p for p in self.alive() if self.timers[p]]),
                label="timer of"))

        @precondition(lambda self: self.n_crashes < max_crashes and bool(self.alive()))
        @rule(data=st.data())
        def crash(self, data: st.DataObject) -> None:
            self.step("crash", data.draw(st.sampled_from(self.alive()), label="crash"))

        @precondition(lambda self: bool(self.notifiable()))
        @rule(data=st.data())
        def notify(self, data: st.DataObject) -> None:
            p, q = data.draw(st.sampled_from(self.notifiable()), label="Crash(q) at p")
            self.step("notify", p, q)

        @precondition(lambda self: (sum(self.sent) >= max_messages or not self.senders())
                      and not self.live_links()
                      and not self.lost and not self.notifiable() and not self.agreeable())
        @rule()
        def settle(self) -> None:
            """Nothing left to do (the machine always needs a rule to run)."""

        # ------------------------------------------------------------- invariants

        def check(self, prop: str) -> None:
            records = self.rec.records
            if not records:
                return
            res = props[prop].check(Trace.from_records(records), Options(scope=scope))
            if res.verdict == Verdict.VIOLATED:
                found = ProcessFailure(label, n, opts, prop, res.explanation,
                                       list(records), schedule=self.played)
                if type(self).first_failure is None:
                    type(self).first_failure = type(self).runs
                    type(self).first_found = found
                raise RuleFailure(found)

        def safety(self) -> None:
            """The promised properties, on the whole trace: once, at the end of a run (a
            safety violation stays in the trace, and checking after every step made each
            run quadratic, which made shrinking crawl)."""
            for prop in safety:
                self.check(prop)

        def teardown(self) -> None:
            self.played = list(self.schedule)  # the steps before the drain
            if not sum(self.sent):
                return
            for link, m in self.lost:
                self.links[link].append(m)
            self.lost.clear()
            if self.partitioned:
                self.do_heal()
            for _ in range(DRAIN_ROUNDS):
                busy = False
                if self.agreeable():
                    busy = True
                    self.do_agree()
                for (_, b), q in self.links.items():
                    while q and b not in self.crashed and self.up[b]:
                        busy = True
                        self.arrive(b, q.pop(0))
                for p in self.alive():
                    for q in self.crashed:
                        if q not in self.noted[p]:
                            busy = True
                            self.noted[p].add(q)
                            self.handle(p, self.procs[p].on_crash(q, self.tick()))
                for p in self.alive():
                    if self.timers[p]:
                        busy = True
                        self.fire(p)
                if not busy:
                    break
            self.safety()
            if judge_liveness:
                self.check("liveness")

    class MembershipMachine(ProcessMachine):
        """The membership service's rules (module docstring), in a subclass so that the
        machine of a protocol without one has exactly its old rules: Hypothesis draws
        its steps from the rule set, and one more rule, even never enabled, changes the
        runs a seed makes."""

        @precondition(lambda self: self.members is not None and self.joins < 3 and any(
            self.members.may_join(j) for j in range(n)))
        @rule(data=st.data())
        def join(self, data: st.DataObject) -> None:
            """A spare process joins, or a crashed one recovers (a new incarnation)."""
            j = data.draw(st.sampled_from([j for j in range(n) if self.members.may_join(j)]),
                          label="join")
            self.step("recover" if j in self.went_down else "join", j)

        @precondition(lambda self: partitions and self.members is not None
                      and not self.partitioned and self.partitions < 2)
        @rule(data=st.data())
        def partition(self, data: st.DataObject) -> None:
            """The network splits in two: a drawn group against the rest."""
            group = data.draw(st.lists(st.sampled_from(range(n)), min_size=1, max_size=n - 1,
                                       unique=True), label="component")
            self.step("partition", tuple(sorted(group)))

        @precondition(lambda self: self.members is not None and self.partitioned)
        @rule()
        def heal(self) -> None:
            self.step("heal")

        @precondition(lambda self: self.agreeable())
        @rule()
        def agree(self) -> None:
            """The membership's Agree stage, and each member's Flush (000 section 5.1)."""
            self.step("agree")

        def can_join(self, j: int) -> bool:
            return self.joins < 3 and j not in self.went_down and self.members.may_join(j)

        def do_join(self, j: int) -> None:
            self.joins += 1
            self.tick()
            self.members.join(j)

        def can_recover(self, j: int) -> bool:
            return self.joins < 3 and j in self.went_down and self.members.may_join(j)

        def do_recover(self, j: int) -> None:
            self.joins += 1
            self.tick()
            self.members.recover(j)

        def can_partition(self, group: tuple[int, ...]) -> bool:
            return partitions and not self.partitioned and self.partitions < 2

        def do_partition(self, group: tuple[int, ...]) -> None:
            self.partitioned = True
            self.partitions += 1
            self.tick()
            self.members.partition([list(group)])

        def can_heal(self) -> bool:
            return self.partitioned

        def do_heal(self) -> None:
            self.partitioned = False
            self.tick()
            self.members.heal()

        def can_agree(self) -> bool:
            return self.agreeable()

        def do_agree(self) -> None:
            self.tick()
            self.members.agree()

    class MemberMachine(ProcessMachine):
        """Joins and recoveries of processes that do them by themselves (module
        docstring), in a subclass for the same reason as MembershipMachine."""

        def comers(self) -> list[int]:
            if self.joins >= comebacks:
                return []
            return [j for j in range(n) if not self.up[j] or j in self.crashed]

        @precondition(lambda self: bool(self.comers()))
        @rule(data=st.data())
        def comeback(self, data: st.DataObject) -> None:
            """A spare joins, or a crashed process recovers (a new incarnation)."""
            j = data.draw(st.sampled_from(self.comers()), label="comes back")
            self.step("recover" if j in self.crashed else "join", j)

        def senders(self) -> list[int]:
            return [p for p in self.alive() if self.procs[p].accepting]  # type: ignore

        def can_join(self, j: int) -> bool:
            return j in self.comers() and j not in self.crashed

        def do_join(self, j: int) -> None:
            self.joins += 1
            self.up[j] = True
            self.handle(j, self.procs[j].on_join(self.tick()))  # type: ignore[attr-defined]

        def can_recover(self, j: int) -> bool:
            return j in self.comers() and j in self.crashed

        def do_recover(self, j: int) -> None:
            """What was on its way to it is lost, its timers with it; the notices of its
            crash not yet given are dropped (its own packets tell of its restart)."""
            self.joins += 1
            self.crashed.remove(j)
            for a in range(n):
                if a != j:
                    self.links[(a, j)].clear()
                self.noted[a].discard(j)
            self.noted[j] = set()
            self.timers[j] = []
            out = self.procs[j].on_recover(self.tick())  # type: ignore[attr-defined]
            if self.procs[j].name != self.names[j]:  # a new incarnation's name
                self.names[j] = self.procs[j].name
                self.rec.names = tuple(self.names)
            self.handle(j, out)

    machine = MembershipMachine if dynamic else MemberMachine if members_join \
        else ProcessMachine
    # what fuzz/reduce.py needs to judge a prefix of a run's trace
    machine.promised, machine.scope = tuple(safety), scope
    machine.__name__ = machine.__qualname__ = \
        f"ProcessMachine_{label.replace('-', '_').replace(':', '_')}_n{n}"
    return machine
