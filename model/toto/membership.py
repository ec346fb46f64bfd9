"""The membership service of ToTo's dynamic environment, and ToTo run per configuration.

Source: 000 (Dolev, Kramer, Malki), section 5: 5.1 the Transis membership service, 5.2
the extended ToTo protocol (Figure 4), footnote 3; section 3 (Figure 2: the agreed
multicast service, "connected" machines) and section 1 (the membership may extract
machines that have not failed). docs/toto-membership.md restates what the paper says and
lists every decision below.

The service (:class:`Membership`) keeps the current configuration set (CCS, a
:class:`~tomkit.model.process.View`: id and members) and runs a configuration change in
the paper's three stages:

* Initiate: a crash, a partition, a heal or a join is noticed (by timeout; the driver
  decides when: the simulator ``detection_delay`` later, the fuzzer whenever it likes);
* Agree: the connected machines agree on the next CCS and on the set of regular messages
  of the old configuration that must be delivered before the change (virtual
  synchrony). Each continuing member gets an :class:`Agree` notice carrying what of that
  set it lacks, then the internal Crash(q) event for every machine q that leaves;
* Flush: once a member has delivered the agreed set (ToTo's M_p is empty), the
  configuration-change message is delivered: the member installs the view (a ``view``
  record) and starts a fresh ToTo over the new CCS. Defunc_p, "the machines q for which
  p received Crash(q) and q is still in CCS" (5.2), ends there with the old instance.

The process (:class:`DynamicToto`) is ToTo (``model/toto/process.py``, unchanged) run once per
configuration: regular messages travel as :class:`Packet` (the configuration they were
sent in, and the DAG message), so that a message is ordered only among the messages of
its own configuration.

Decisions on the paper's text (000 section 5; each named broken reading is a value of the
``variant`` option, see :data:`VARIANTS`):

* Flush messages (5.1 Agree and Flush, 5.2's claim "when a configuration-change message
  is delivered, the M_p set of ToTo is empty"). ToTo delivers a candidate only with votes
  of every machine that is neither Defunc nor heard from (external stability (b)
  NTail = n, or (a) more than delta votes), and a survivor that sent nothing after the
  last regular messages never votes on them: with the agreed set holding regular
  messages only, the Flush stage can wait for ever (Crash(q) covers departed machines
  only). Transis' membership messages are themselves causal messages that acknowledge
  what their sender holds; we model that: the agreed set also holds one ACK-only *flush
  message* per continuing member, ``<name>.flush<view>``, that follows the whole agreed
  set. With them NTail(G) = n holds in every activation of the old DAG, and ToTo delivers
  the whole set, in one order everywhere (all continuing members hold one DAG and one
  Defunc). Literal reading: variant ``no-flush-acks`` (the view change never completes;
  tests/model/toto/test_toto_membership_variants.py).
* Primary component (5.1 "the connected machines must reconfigure"; section 1: "a machine
  or a set of machines can unjustfully extract all the other machines ... and continue to
  form the total order on their own"). Figure 2 promises the total order only among
  connected machines, so two components that both continue may order the old
  configuration's messages differently, which no trace property can tell from a bug.
  Only a component holding a strict majority of the old CCS continues; the members of
  any other component are excluded (their incarnation ends: a ``crash`` record, as Isis
  does with a process cut off from the primary view) and join again when they reconnect.
  A crash cannot be told from a partition (5.1: "detected based on timeout"), so the rule
  holds for crashes too. Literal reading: variant ``all-components`` (every component
  continues; total order across components is violated).
* The agreed set (5.1 Agree): the union of the old configuration's messages that the
  continuing members hold, which is causally closed (each member's view is). A message of
  the old configuration that no continuing member holds is dropped everywhere (on
  arrival, and from the causal buffers). So that a crashed machine's messages are not
  lost to some and seen by others, the Agree stage waits until every packet the crashed
  machine sent has arrived (as the fixed-group simulator does for Crash(q); footnote 3:
  no message of q "will be received henceforth").
* Sends during a change (5.1 "each regular message is sent and delivered within a
  certain membership context"): a member blocks application sends between its Agree
  notice and its view, as Isis and Transis block the sender during a flush (none occur in
  the decided model, where one member's stages take one instant; under variant
  ``no-flush-acks`` they wait for ever), and a message of a configuration a process has
  not installed yet waits until it installs it. So a message is delivered in the view it
  was sent in (``sending-view-delivery``).
* Joins and rejoins (5.1 "the joining of new machines is spontaneous"; footnote 3 "until
  q rejoins"): a joiner (a new machine, a crashed one restarted, or an excluded one
  reconnected) keeps its name, installs the next view at the Agree stage, and starts with
  no state (no state transfer: it delivers the messages of the views it installs).
* The ``join`` record (the trace format's meaning: the moment the process becomes a
  member, from which on it is owed what is sent; README "The trace format",
  docs/toto-membership.md): logged when the joiner installs its first view, just before
  that ``view`` record, not at the Initiate stage. Between the two the joiner is no
  member of any configuration and is owed nothing (virtual synchrony: a message is
  delivered in the view it was sent in, which the joiner never installs); a ``join`` at
  Initiate made ``member-liveness`` (Bar-Joseph, Keidar, Anker and Lynch, Definition 2.1)
  owe it the old configuration's last messages, a false alarm on every run with a join.
  A machine that comes up but is never admitted (its join is still pending at the end of
  the run) logs nothing.
* delta per configuration: ceil(n/2) of that configuration (000 section 4.1 needs
  n/2 <= delta < n, and n changes).
* Transient partitions (5.1: detachments are detected "based on timeout"): links are
  reliable (Transis retransmits), so a packet a partition holds back arrives at the heal
  (:meth:`Membership.admits`), and is dropped by its receiver if its view was closed
  meanwhile; a partition healed before the Agree stage changes nothing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple
from typing import Protocol as Interface

from tomkit.model.process import (
    Crash,
    Logged,
    Option,
    Output,
    Protocol,
    Receive,
    Replayed,
    ReplayError,
    Transmit,
    View,
    ViewChange,
)
from tomkit.model.toto.dag import DagFacts, DagView, Message
from tomkit.model.toto.mutants import resolve_rule
from tomkit.model.toto.process import PROMISES, AckOnly, TotoProcess, dag_sends
from tomkit.model.toto.rules import RULES, Params, Rule

__all__ = ["NAME", "VARIANTS", "VIEW_PROMISES", "Agree", "Driver", "DynamicToto",
           "Membership", "Packet", "protocol"]

NAME = "toto-dynamic"

#: the literal readings of 000 section 5 kept as broken variants (module docstring)
VARIANTS: dict[str, str] = {
    "no-flush-acks": "the agreed set holds the regular messages only (000 section 5.1, "
                     "literally): a survivor never votes on the last messages, the Flush "
                     "stage waits for ever and the view is never installed",
    "all-components": "every component of a partition continues with its own CCS (000 "
                      "section 1): components order the old configuration's messages "
                      "differently",
}

#: what the membership layer promises on top of ToTo's order (000 section 5.1: virtual
#: synchrony; Chockler, Keidar and Vitenberg 2001, Properties 4.1-4.2, 5.1-5.3)
VIEW_PROMISES = ("view-agreement", "same-view-delivery", "sending-view-delivery",
                 "virtual-synchrony")


class Packet(NamedTuple):
    """A regular (DAG) message and the configuration it was sent in (its view id)."""

    view: str
    msg: Message


class Agree(NamedTuple):
    """The membership's notice at the end of the Agree stage (000 section 5.1), one of the
    "special membership messages" it interjects in the stream: the next configuration,
    the one it replaces, the machines that leave, and what of the agreed set the process
    lacks (retransmitted, in causal order) followed by the flush messages. A replay gives
    ``messages=None`` (not known: the messages come as the receptions the trace logs, and
    the process then accepts any message of the old view)."""

    view: View
    old: str
    departed: tuple[int, ...]
    messages: tuple[Message, ...] | None = None


def _vnum(view_id: str) -> int:
    try:
        return int(view_id)
    except ValueError:
        raise ValueError(f"view id {view_id!r} is not a number (the membership numbers its "
                         "views 1, 2, ...)") from None


# ---------------------------------------------------------------------------- the process


class DynamicToto:
    """One machine: ToTo per configuration (module docstring). ``names``: every machine
    of the run (its index is its place there); ``membership``: the service of the run (the
    drivers read it; the process never calls it)."""

    def __init__(self, index: int, rule: str | Rule, ack_timeout: float | None,
                 membership: Membership, facts: dict[str, DagFacts]) -> None:
        self.index = index
        #: every machine's current name, by index (the service's list: a rejoining
        #: machine is a new incarnation with a new name, see Membership.join)
        self.names = membership.names
        self.rule = rule
        self.ack_timeout = ack_timeout
        self.membership = membership
        self._facts = facts
        #: the installed configuration and its ToTo (None: not a member)
        self.view: View | None = None
        self.toto: TotoProcess | None = None
        #: the Agree notice of the change under way (None: none)
        self.changing: Agree | None = None
        #: ids of the old configuration's messages still accepted (None: any; a replay)
        self._cut: set[str] | None = None
        #: messages of the current configuration waiting for causal predecessors
        self._buffer: dict[str, Message] = {}
        #: messages of configurations not installed yet, by view id
        self._future: dict[str, list[Message]] = {}
        #: application sends held during a change (module docstring)
        self._held: list[str] = []
        # figures over every configuration (model/toto/process.py's summary reads them)
        self.acks_sent = self.sum_index_of_latency = self.sum_width = 0
        self.views_installed = 0

    @property
    def name(self) -> str:
        return self.names[self.index]

    # ------------------------------------------------------------------------ state

    def flushed(self) -> bool:
        """000 section 5.2: M_p is empty: every message of the configuration visible here
        is delivered (or, an ACK-only message, retired: model/toto/dag.py), no Crash(q) waits,
        nothing waits in the causal buffer."""
        t = self.toto
        return (t is None or (len(t.dag.delivered) + len(t.dag.retired) == len(t.dag)
                              and not t.pending_crashes and not self._buffer))

    def known(self) -> list[Message]:
        """The current configuration's visible messages, in a causal order (by the number
        of messages each follows)."""
        t = self.toto
        if t is None:
            return []
        dag = t.dag
        mids = [m for r in range(dag.n) for m in dag.chain(r)]
        mids.sort(key=lambda m: sum(dag.vc(m)))
        return [dag.message(m) for m in mids]

    def _name_in_view(self, i: int) -> str:
        """Machine i's name in the installed view (it may have rejoined since, renamed)."""
        return self.toto.dag.processors[self.view.members.index(i)]  # type: ignore[union-attr]

    def _members(self) -> tuple[int, ...]:
        return self.view.members if self.view is not None else ()

    def _out(self, inner: Output, into: Output | None = None) -> Output:
        """The ToTo instance's output with its transmits addressed by machine index."""
        out = into if into is not None else Output()
        members = self._members()
        vid = self.view.id if self.view is not None else ""
        for tr in inner.sends:
            out.sends.append(Transmit(Packet(vid, tr.packet), tuple(members[r] for r in tr.to),
                                      tr.control))
        out.received += inner.received
        out.delivered += inner.delivered
        if inner.timer is not None and (out.timer is None or inner.timer < out.timer):
            out.timer = inner.timer
        return out

    # --------------------------------------------------------- the process interface

    def on_send(self, mid: str, now: float) -> Output:
        if self.toto is None or self.changing is not None:
            self._held.append(mid)  # blocked (module docstring): never in the decided model
            return Output()
        inner = self.toto.on_send(mid, now)
        out = self._out(inner)
        out.deps, out.fields = inner.deps, inner.fields
        return out

    def on_receive(self, packet: Any, now: float) -> Output:
        if isinstance(packet, Agree):
            return self._agree(packet, now)
        view, msg = packet
        out = Output()
        if self.view is None or _vnum(view) > _vnum(self.view.id):
            self._future.setdefault(view, []).append(msg)
        elif view == self.view.id:
            self._insert(msg, now, out)
        return out  # an older configuration's message: dropped (module docstring)

    def _insert(self, msg: Message, now: float, out: Output) -> None:
        """Through the causal layer (here rather than in the DagView, so that the Agree
        stage can drop what will never be released)."""
        t = self.toto
        assert t is not None
        dag = t.dag
        if msg.id in dag or msg.id in self._buffer:
            return
        if self._cut is not None and msg.id not in self._cut:
            return  # not in the agreed set: dropped
        if msg.sender in dag.defunc:
            raise ValueError(f"{msg.id}: sender {msg.sender} is defunct (Crash received)")
        if not all(d in dag for d in msg.deps):
            self._buffer[msg.id] = msg
            return
        if self._buffer:
            # what msg releases goes to ToTo first, in arrival order, where it waits for
            # msg: then msg releases it in one batch, as the fixed-group ToTo's own causal
            # buffer does (the two then deliver alike, index of latency included: tested)
            ready = {msg.id}
            grew = True
            while grew:
                grew = False
                for m in self._buffer.values():
                    if m.id not in ready and all(d in dag or d in ready for d in m.deps):
                        ready.add(m.id)
                        grew = True
            for m in [m for m in self._buffer.values() if m.id in ready]:
                del self._buffer[m.id]
                self._out(t.on_receive(m, now), out)
        self._out(t.on_receive(msg, now), out)

    def _agree(self, notice: Agree, now: float) -> Output:
        out = Output()
        if self.view is None or notice.old != self.view.id:
            raise ValueError(f"{self.name}: Agree for view {notice.view.id} after view "
                             f"{notice.old}, but the installed view is "
                             f"{self.view.id if self.view else None}")
        out.received.append(Logged(f"agree/{notice.view.id}", {
            "x_agree": notice.view.id,
            "x_members": [self.names[i] for i in notice.view.members],
            "x_departed": [self._name_in_view(i) for i in notice.departed]}))
        self.changing = notice
        if notice.messages is not None:
            dag = self.toto.dag  # type: ignore[union-attr]
            self._cut = {m for m in dag.visible} | {m.id for m in notice.messages}
            self._buffer = {k: m for k, m in self._buffer.items() if k in self._cut}
            for m in notice.messages:
                self._insert(m, now, out)
            self._buffer.clear()  # what is left can never be released
        return out

    def on_crash(self, q: int, now: float) -> Output:
        """Crash(q) (000 Figure 4) in the current configuration; Crash of this machine
        itself ends its incarnation (a replay gives it at the ``crash`` record)."""
        if q == self.index:
            self._reset()
            return Output()
        if self.toto is None or q not in self._members():
            return Output()
        out = self._out(self.toto.on_crash(self.view.members.index(q), now))  # type: ignore
        return out

    def on_view(self, view: View, now: float) -> Output:
        """The configuration-change message (000 section 5.1 Flush): install ``view``, start
        a fresh ToTo over it (Defunc ends) and release what waited for it. Refused while
        M_p is not empty (5.2) or when this machine is not in the view."""
        if self.index not in view.members:
            raise ValueError(f"{self.name} installs view {view.id}, which it is not in")
        if self.view is not None:
            if _vnum(view.id) <= _vnum(self.view.id):
                raise ValueError(f"{self.name}: view {view.id} after view {self.view.id}")
            if not self.flushed():
                raise ValueError(f"{self.name}: configuration change to view {view.id} with "
                                 "M_p not empty (000 section 5.2)")
        self._retire()
        procs = [self.names[i] for i in view.members]
        facts = self._facts.get(view.id)
        if facts is None or facts.processors != tuple(procs):
            facts = self._facts[view.id] = DagFacts(procs)
        params = Params(delta=(len(procs) + 1) // 2)
        # ToTo needs n/2 <= delta < n, empty for n = 1: a machine alone delivers what it
        # sends at once, which is all-ack with n = 1 (only variant all-components makes such
        # a view: a majority of a view of two or more has two members or more)
        rule = self.rule if len(procs) > 1 else "all-ack"
        if isinstance(rule, str) and rule not in RULES:
            rule = resolve_rule(rule)
        self.toto = TotoProcess(self.name, procs, rule, params, facts=facts,
                                ack_timeout=self.ack_timeout)
        self.toto.acks_sent = self.acks_sent  # ACK-only ids stay unique across views
        self.view, self.changing, self._cut = view, None, None
        self._buffer.clear()
        self.views_installed += 1
        out = Output()
        for vid in sorted(self._future, key=_vnum):
            if _vnum(vid) < _vnum(view.id):
                del self._future[vid]
        for m in self._future.pop(view.id, []):
            self._insert(m, now, out)
        return out

    def on_timer(self, now: float) -> Output:
        if self.toto is None or self.changing is not None:
            return Output()  # no new message of a configuration being closed
        return self._out(self.toto.on_timer(now))

    def _retire(self) -> None:
        t = self.toto
        if t is not None:
            self.acks_sent = t.acks_sent
            self.sum_index_of_latency += t.sum_index_of_latency
            self.sum_width += t.sum_width

    def _reset(self) -> None:
        self._retire()
        self.toto = self.view = self.changing = self._cut = None
        self._buffer.clear()
        self._future.clear()
        self._held.clear()

    def totals(self) -> tuple[int, int, int]:
        """ACK-only messages sent, sums of index of latency and candidate-set width."""
        t = self.toto
        if t is None:
            return self.acks_sent, self.sum_index_of_latency, self.sum_width
        return (t.acks_sent, self.sum_index_of_latency + t.sum_index_of_latency,
                self.sum_width + t.sum_width)


# ---------------------------------------------------------------------------- the service


class Driver(Interface):
    """What the service needs of whoever runs the machines (the simulator, the fuzzer)."""

    def handle(self, i: int, out: Output) -> None:
        """Log what machine i did and send its packets."""

    def record(self, i: int, kind: str, view: View | None = None) -> None:
        """Log a ``view``, ``crash`` or ``join`` record of machine i."""

    def set_up(self, i: int, up: bool) -> None:
        """Machine i runs (True: it has joined) or stops (False: it crashed or was
        excluded); a machine that installs a view starts its application source."""

    def in_flight_until(self, q: int) -> float:
        """When the last packet machine q sent arrives (0 when none is in flight)."""

    def changed(self, at: float) -> None:
        """Run :meth:`Membership.agree` at time ``at`` or later (the Initiate stage)."""

    @property
    def now(self) -> float: ...


class Membership:
    """The membership service of one run (module docstring). ``variant``: None or a key
    of :data:`VARIANTS`."""

    def __init__(self, names: Sequence[str], variant: str | None = None) -> None:
        if variant is not None and variant not in VARIANTS:
            raise ValueError(f"unknown variant {variant!r}; known: {', '.join(VARIANTS)}")
        #: each machine's name; a machine that joins again after running is a new
        #: incarnation, ``<name>~<k>`` (see join)
        self.names = list(names)
        self.base = tuple(names)
        self.incarnation = [0] * len(names)
        #: machine index of every name ever used
        self.index_of = {p: i for i, p in enumerate(names)}
        self.variant = variant
        self.procs: list[DynamicToto] = []
        self.driver: Driver | None = None
        n = len(names)
        self.up = [False] * n
        #: excluded from the primary component: joins again when reconnected
        self.excluded: set[int] = set()
        #: the network's component of each machine (all 0: connected), and the packets
        #: a partition holds back (receiver, packet)
        self.component = [0] * n
        self.held: list[tuple[int, Any]] = []
        #: per machine, the view the service last gave it
        self.view_of: list[View | None] = [None] * n
        self.last_id = 0
        #: every view installed anywhere, by id, and its members' names then
        self.views: dict[str, View] = {}
        self.view_names: dict[str, tuple[str, ...]] = {}

    def _new_view(self, members: Sequence[int]) -> View:
        self.last_id += 1
        v = View(str(self.last_id), tuple(sorted(members)))
        self.views[v.id] = v
        self.view_names[v.id] = tuple(self.names[i] for i in v.members)
        return v

    def start(self, driver: Driver, procs: Sequence[DynamicToto],
              initial: Sequence[int]) -> None:
        """The first configuration: ``initial`` install view 1."""
        self.driver, self.procs = driver, list(procs)
        v = self._new_view(initial)
        for i in v.members:
            self.up[i] = True
            self.incarnation[i] = 1
            driver.set_up(i, True)
            self._install(i, v)

    def _install(self, i: int, v: View, joins: bool = False) -> None:
        """Machine i installs view v, its first when it ``joins`` (logged as ``join``
        first: a member from here on, module docstring)."""
        d = self.driver
        assert d is not None
        self.view_of[i] = v
        if joins:
            d.record(i, "join")
        d.record(i, "view", v)
        d.handle(i, self.procs[i].on_view(v, d.now))

    # ---------------------------------------------------------------- Initiate

    def crash(self, q: int) -> None:
        """Machine q crashed (the driver logged it and stopped it)."""
        self._down(q)
        self.driver.changed(self.driver.now)  # type: ignore[union-attr]

    def _down(self, q: int) -> None:
        self.up[q] = False
        self.view_of[q] = None
        d = self.driver
        d.set_up(q, False)  # type: ignore[union-attr]
        d.handle(q, self.procs[q].on_crash(q, d.now))  # type: ignore[union-attr]

    def join(self, j: int) -> None:
        """Machine j (new, or restarted after a crash) connects: the Initiate stage (its
        ``join`` record comes when it installs its first view, see the module docstring);
        a machine already up (e.g. one that rejoined at a heal) has nothing to do."""
        if self.up[j]:
            return
        self.excluded.discard(j)
        self._up(j)

    def _up(self, j: int) -> None:
        """Machine j comes up. One that ran before is a new incarnation with a new name
        (decision: Isis numbers incarnations; the trace checkers know no incarnations, and
        under the old name would read the old incarnation's views and deliveries as the
        new one's: fifo-order and virtual-synchrony then fail a correct run)."""
        d = self.driver
        assert d is not None
        if self.incarnation[j]:
            name = f"{self.base[j]}~{self.incarnation[j] + 1}"
            self.names[j] = name
            self.index_of[name] = j
        self.incarnation[j] += 1
        self.up[j] = True
        d.set_up(j, True)
        d.changed(d.now)

    def partition(self, components: Sequence[Sequence[int]]) -> None:
        """The network splits into ``components`` (the machines not listed form one more);
        an empty list heals it. Excluded machines join again when reconnected."""
        listed = {i for c in components for i in c}
        comp = [len(components)] * len(self.names)
        for k, c in enumerate(components):
            for i in c:
                comp[i] = k
        if len(listed) != sum(len(c) for c in components):
            raise ValueError("a machine is in two components")
        self.component = comp
        d = self.driver
        held, self.held = self.held, []
        for j, packet in held:
            if self.admits(j, packet) and self.up[j]:
                d.handle(j, self.procs[j].on_receive(packet, d.now))  # type: ignore[union-attr]
        for j in sorted(self.excluded):
            if self._reachable_primary(j):
                self.excluded.discard(j)
                self._up(j)
        self.driver.changed(self.driver.now)  # type: ignore[union-attr]

    def _reachable_primary(self, j: int) -> bool:
        return any(self.up[i] and self.view_of[i] is not None
                   and self.component[i] == self.component[j] for i in range(len(self.names)))

    def connected(self, a: int, b: int) -> bool:
        return self.component[a] == self.component[b]

    def admits(self, j: int, packet: Any) -> bool:
        """Whether a packet arriving at j crosses no partition. One that does is held
        back, not lost: links are reliable (Transis retransmits), so it arrives when the
        partition heals, unless a configuration change has made it stale by then (the
        receiver drops an older view's message)."""
        if isinstance(packet, Packet) and \
                self.component[self.index_of[packet.msg.sender]] != self.component[j]:
            self.held.append((j, packet))
            return False
        return True

    # ---------------------------------------------------------------- Agree and Flush

    def pending(self) -> bool:
        """Whether a configuration change is due (the next agree would change a view)."""
        return bool(self._plans())

    def _plans(self) -> list[tuple[list[tuple[View, list[int]]], list[int], list[int]]]:
        """Per component with a change due: the configurations that continue there, each
        with its continuing members (one, the primary, unless variant all-components, when
        every component continues and a heal merges them); the joiners; the members to
        exclude (of a configuration with no majority there)."""
        n = len(self.names)
        current = {v.id: v for v in self.view_of if v is not None}
        by_comp: dict[int, tuple[list[tuple[View, list[int]]], list[int]]] = {}
        for v in sorted(current.values(), key=lambda v: _vnum(v.id)):
            groups: dict[int, list[int]] = {}
            for i in v.members:
                if self.up[i] and self.view_of[i] is v:
                    groups.setdefault(self.component[i], []).append(i)
            for c, group in sorted(groups.items()):
                go, out = by_comp.setdefault(c, ([], []))
                if 2 * len(group) > len(v.members) or self.variant == "all-components":
                    go.append((v, group))
                else:
                    out += group
        plans = []
        for c, (go, out) in sorted(by_comp.items()):
            joiners = [j for j in range(n) if self.up[j] and self.view_of[j] is None
                       and self.component[j] == c] if go else []
            if out or joiners or len(go) > 1 or any(len(g) != len(v.members) for v, g in go):
                plans.append((go, joiners, out))
        return plans

    def waits_for(self) -> float:
        """When the next Agree may run: not before every packet of a crashed machine that
        leaves has arrived (module docstring)."""
        d = self.driver
        t = d.now  # type: ignore[union-attr]
        for go, _, _ in self._plans():
            for v, group in go:
                for q in v.members:
                    if q not in group and not self.up[q] and q not in self.excluded:
                        t = max(t, d.in_flight_until(q))  # type: ignore[union-attr]
        return t

    def agree(self) -> None:
        """The Agree stage of every change due, then each member's Flush."""
        d = self.driver
        assert d is not None
        t = self.waits_for()
        if t > d.now:
            d.changed(t)
            return
        for go, joiners, exclude in self._plans():
            for i in exclude:
                self.excluded.add(i)
                d.record(i, "crash")
                self._down(i)
            if not go:
                continue
            new = self._new_view([*joiners, *(i for _, g in go for i in g)])
            for v, group in go:
                self._close(v, group, new)
            for j in joiners:
                self._install(j, new, joins=True)

    def _close(self, v: View, group: list[int], new: View) -> None:
        """Agree on view ``v``'s messages among ``group``, then each one's Crash(q) events
        and Flush (module docstring)."""
        d = self.driver
        assert d is not None
        departed = tuple(q for q in v.members if q not in group)
        union: dict[str, Message] = {}
        for i in group:
            if self.procs[i].view == v:
                for m in self.procs[i].known():
                    union.setdefault(m.id, m)
        agreed = self._order(v, list(union.values()))
        flush: list[Message] = []
        if self.variant != "no-flush-acks":
            heads = self._heads(v, agreed)
            flush = [AckOnly(f"{self.names[r]}.flush{new.id}", self.names[r], heads)
                     for r in group]
        for i in group:
            p = self.procs[i]
            self.view_of[i] = new
            if p.view != v:
                continue  # still closing an older change (variant no-flush-acks)
            have = p.toto.dag  # type: ignore[union-attr]
            missing = tuple(m for m in agreed if m.id not in have) + tuple(flush)
            d.handle(i, p.on_receive(Agree(new, v.id, departed, missing), d.now))
            for q in departed:
                d.handle(i, p.on_crash(q, d.now))
            if p.flushed():
                d.record(i, "view", new)
                d.handle(i, p.on_view(new, d.now))
            elif self.variant is None:  # decision 1 says this cannot happen: say so loudly
                raise RuntimeError(f"{self.names[i]}: the Flush of view {v.id} did not "
                                   f"complete with the agreed set and Crash(q) events")

    def _order(self, v: View, msgs: list[Message]) -> list[Message]:
        """``msgs`` (a causally closed set of view ``v``) in a causal order."""
        dag = DagView(self.view_names[v.id])
        left, out = list(msgs), []
        while left:  # (each pass releases at least one message of a closed set)
            rest = []
            for m in left:
                if all(x in dag for x in m.deps):
                    dag.insert(m)
                    out.append(m)
                else:
                    rest.append(m)
            if len(rest) == len(left):
                raise ValueError("the agreed set is not causally closed")
            left = rest
        return out

    def _heads(self, v: View, agreed: list[Message]) -> tuple[str, ...]:
        dag = DagView(self.view_names[v.id])
        for m in agreed:
            dag.insert(m)
        return dag.heads()


# ---------------------------------------------------------------------------- the protocol

OPTIONS = (
    Option("rule", str, "toto", "the delivery rule run in each configuration (a rule of "
           "model/toto/rules.py or a mutant of model/toto/mutants.py)"),
    Option("ack_timeout", float, None, "idle time before an ACK-only message, in seconds "
           "(default 5 mean source periods: 5 / rate)"),
    Option("variant", str, None, "a broken literal reading of 000 section 5: "
           + "; ".join(f"{k}: {v}" for k, v in VARIANTS.items()), choices=tuple(VARIANTS)),
)


def make(names: Sequence[str], options: Mapping[str, Any], rate: float) -> list[DynamicToto]:
    service = Membership(names, options.get("variant"))
    facts: dict[str, DagFacts] = {}
    ack = options.get("ack_timeout")
    return [DynamicToto(i, options.get("rule") or "toto",
                        ack if ack is not None else 5.0 / rate, service, facts)
            for i in range(len(names))]


def summary(procs: Sequence[DynamicToto], records: Sequence[Mapping], stats: dict) -> dict:
    """acks, mean_index_of_latency, mean_width (as the fixed-group ToTo) and views (the
    configurations installed)."""
    d = stats["deliveries"]
    tot = [p.totals() for p in procs]
    stats["acks"] = sum(t[0] for t in tot)
    stats["mean_index_of_latency"] = sum(t[1] for t in tot) / d if d else math.nan
    stats["mean_width"] = sum(t[2] for t in tot) / d if d else math.nan
    stats["views"] = len(procs[0].membership.views) if procs else 0
    # undelivered: what the machines up at the end owe, the messages sent in the views
    # they installed (a joiner owes nothing of the views before it)
    cur: dict[str, str | None] = {}
    installed: dict[str, set[str]] = {}
    sent_in: dict[str, str | None] = {}
    got: dict[str, set[str]] = {}
    for r in records:
        p, k = r["process"], r["kind"]
        if k == "view":
            cur[p] = r["view"]
            installed.setdefault(p, set()).add(r["view"])
        elif k == "crash":
            cur[p] = None
            installed[p] = set()
        elif k == "send":
            sent_in[r["msg"]] = cur.get(p)
        elif k == "deliver":
            got.setdefault(p, set()).add(r["msg"])
    up = {p for p, v in cur.items() if v is not None}
    sender = {r["msg"]: r["process"] for r in records if r["kind"] == "send"}
    owed = {m for m in sent_in
            if sender[m] in up or any(m in got.get(p, ()) for p in up)}
    stats["undelivered"] = sum(1 for p in up for m in owed
                               if sent_in[m] in installed[p] and m not in got.get(p, ()))
    return stats


def describe(stats: Mapping[str, Any], options: Mapping[str, Any]) -> list[str]:
    return [f"{stats['views']} configurations: sent {stats['sends']} messages "
            f"({stats['acks']} ACK-only), {stats['deliveries']} deliveries",
            f"mean index of latency {stats['mean_index_of_latency']:.3f}, mean latency "
            f"{stats['mean_latency'] * 1000:.3f} ms"]


def replay(records: Sequence[Mapping], names: Sequence[str],
           options: Mapping[str, Any]) -> dict[str, list[Replayed]]:
    """Each machine's inputs from a recorded trace (``tomkit conform``): a ``view`` record
    is the configuration change (on_view), not Crash(q); a ``recv`` with ``x_agree`` the
    Agree notice (its retransmitted and flush messages are the ``recv`` records that
    follow it); a ``recv`` with ``x_crash`` Crash(q); a machine's own ``crash`` record the
    end of its incarnation. A message belongs to the view the machine had installed when
    it logged the message."""
    sends = dag_sends(records)
    at = {p: i for i, p in enumerate(names)}
    msgs: dict[str, Message] = {}

    def message(p: str, mid: str) -> Message:
        m = msgs.get(mid)
        if m is None:
            s = sends.get(mid)
            if s is None:
                raise ReplayError(f"{p} receives {mid}, which no process sent")
            sender, cls = ((s["process"], Message) if s["kind"] == "send"
                           else (s.get("x_sender"), AckOnly))
            if not sender:
                raise ReplayError(f"{p}: the ACK-only message {mid} has no x_sender")
            deps = s.get("x_dag_deps", s.get("deps"))
            m = msgs[mid] = cls(mid, sender, tuple(deps or ()))
        return m

    out: dict[str, list[Replayed]] = {p: [] for p in names}
    view: dict[str, str] = {}
    pos: dict[str, int] = {p: 0 for p in names}
    for r in records:
        p, kind = r["process"], r["kind"]
        i = pos[p]
        pos[p] = i + 1
        if kind == "view":
            members = []
            for m in r["members"]:
                if m not in at:
                    raise ReplayError(f"{p}: view {r['view']} names {m}, not in the trace")
                members.append(at[m])
            view[p] = r["view"]
            out[p].append(Replayed(i, ViewChange(View(r["view"], tuple(members))), False))
        elif kind == "crash":
            view.pop(p, None)
            out[p].append(Replayed(i, Crash(at[p]), False))
        elif kind == "recv" and r.get("x_crash") is not None:
            out[p].append(Replayed(i, Crash(at[r["x_crash"]]), False))
        elif kind == "recv" and r.get("x_agree") is not None:
            nv = View(str(r["x_agree"]), tuple(sorted(at[m] for m in r.get("x_members", ()))))
            dep = tuple(at[m] for m in r.get("x_departed", ()))
            out[p].append(Replayed(i, Receive(Agree(nv, view.get(p, ""), dep)), False))
        elif kind in ("send", "recv"):
            if p not in view:
                raise ReplayError(f"{p}: record {i} ({kind} {r['msg']}) outside any view")
            out[p].append(Replayed(i, Receive(Packet(view[p], message(p, r["msg"]))), True))
    return out


def protocol() -> Protocol:
    """ToTo over the membership service of 000 section 5 (``toto-dynamic``)."""
    return Protocol(name=NAME, title="ToTo in a dynamic environment: the Transis membership "
                    "service and the extended ToTo (Dolev, Kramer, Malki; 000 section 5)",
                    make=make, options=OPTIONS, fifo=False, lossy=True, crashes=True,
                    promises=PROMISES + VIEW_PROMISES, replay=replay, summary=summary,
                    describe=describe, variants=VARIANTS)

