"""The dynamic hybrid token-site / symmetric total order protocol as a process state
machine, over the view-synchronous layer of ``model/hybrid/vsync.py``.

Source: 001 (Rodrigues, Fonseca, Verissimo), sections 4 (static hybrid), 5 (mode
switching, Figure 4's pseudo-code) and 6 (dynamic hybrid). The reading aid
``/work/shared/briefs/001-003.md`` reconstructs Figure 4; its decisions A1-A12 are
referred to by number below, and where this model decides otherwise it says why.

The protocol
------------
* Every process has an id p_i and a counter c_i of the messages it sent: a message is
  (p_i, c_i). Messages are vs-multicast to the whole group (``model/hybrid/vsync.py``).
* *Active* processes (sequencers) keep a ticket counter t_i and issue *tickets*
  (issuer, number, (p_j, c_j)) (``model/hybrid/wire.py``) for their own messages and
  for those of the *passive* processes that chose them as sequencer (the message names
  its sequencer's descriptor D = (p, role, rn); a sequencer only tickets a message that
  names its current role number, section 5.2). Tickets ride on active processes'
  messages and are ordered by number, then issuer; messages are delivered in ticket
  order (section 4.1).
* Ticket numbers are rate-synchronised (section 4.2, ref. [19], not available): on
  issuing, t := max(t + 1, floor(clock * tick_rate)); on receiving, t := max(t, every
  number seen). Every process keeps t, passive ones included (section 5.2). With
  ``tick_rate`` 0 this is Lamport's rule.
* Stability [FIX A1]: a ticket of number x is delivered once every process that is
  active *in the configuration in force at that ticket's place in the order* has shown
  a number >= x (a ticket it issued, or the promise ``tn`` every packet of an active
  process carries: it issues no ticket numbered <= tn afterwards; FIFO links do the
  rest), and its message has arrived. Delivery runs one ticket at a time and applies the
  goingToActive/goingToPassive it delivers before judging the next ticket, so every
  process judges every ticket against the same configuration. Figure 4 only says "move
  tickets in order from UT to OT"; judged against the configuration at *reception*,
  a ticket can be committed before a goingToActive is delivered whose sender then
  tickets below it: variant ``literal-ot``.
* Duplicate tickets [FIX A2]: a message can get two tickets (its sequencer crashed or
  went passive after ticketing it, and its sender reassigned it). The first in ticket
  order wins; later ones are dropped. Figure 4 waits for "T(M) = head(OT) and M in Q",
  which never holds again once M was delivered: variant ``literal-duplicates`` (which
  also tickets as Figure 4's issueTickets does, testing only "T(M) not in LT_i": LT_i is
  emptied on every send, so a message still waiting in Q is ticketed again).
* Per-sender FIFO ticketing (section 5.3.4: "to avoid disturbances in FIFO
  ordering"): a sequencer tickets (p, c) only once (p, c - 1) is delivered, discarded,
  or has a ticket it knows of; its counter is then above that ticket's number.
* Null messages [A4]: tickets need carriers, and stability needs every active process
  to keep showing numbers. An active process that has unsent tickets, or has seen a
  ticket numbered above its last promise, sends a null packet after ``heartbeat``
  seconds unless it sent something before (default: its mean inter-message time; 0 in
  the token-site configuration: tickets go out at once, as in Amoeba). Without them
  (variant ``literal-no-null``) a run whose active processes fall silent never
  delivers its last messages.
* Reassign [A3]: a process whose sequencer is no longer valid (crashed, or went passive)
  picks the closest active process and multicasts <reassign, p, ]l_p, c_p], S> with its
  own l_p (the last of its own messages delivered). Figure 4's goingToPassive branch sets
  l_i := c_j, the *sender's* counter, which we read as a slip of the pen.
* Views [section 5.3.1, Figure 4 "when view V is delivered"]: on installing a view the
  un-ticketed messages of the processes that left are discarded ("silently discarded",
  section 5.2; the tickets every survivor holds are the same, by view synchrony), unsent
  tickets of those messages are purged [A5]; if no active process is left, the process
  with the highest id becomes active (rn + 1) and reassigns its own ]l, c] to itself; it
  issues numbers above every ticket of the old view (all survivors hold the same). Then
  every non-active process whose sequencer is gone reassigns [A3]. Figure 4's view
  branch reassigns only if an active process already exists, and promotes after that
  check: when the only active process crashes, the passive processes it served keep
  naming it and their messages are never ordered: variant ``literal-view``.
* chgseq [A6]: a passive process changing sequencer stops sending until all its own
  messages are delivered (l = c); if that already holds it switches at once (Figure 4
  only switches on an own delivery, which then never comes).
* Ties and order of iteration in Figure 2: ``model/hybrid/switch.py``.

Configurations (``protocols()``): ``token-site`` (process p0 the one sequencer, every
other process passive, tickets sent at once), ``symmetric`` (every process active) and
``hybrid`` (Figure 2's heuristic when ``delays`` are given, else every process active as
section 5.1's initial configuration; ``dynamic`` adds section 6's online switching).

Traces: ``send`` (deps: own previous message and last delivery: the delivery order is
causal, docs/hybrid.md), ``recv`` of every data message (its id) and, with
``control_records``, of every other packet, crash notice and timer (what ``tomkit
conform`` replays: the packet's content in ``x_wire``), ``deliver`` with ``x_ticket``
(issuer name, number) and ``x_view`` (the view-synchronous view), and a ``view`` record
at every configuration C^n (section 5: the view and every member's descriptor; at the
start, at each view change, at each goingToActive and goingToPassive delivered) whose id
names the whole configuration ("3:v1 p0=a1,p1=p0"), so that the checker's view
properties judge "the same sequence of configurations" (``view-sequence``,
``view-agreement``). A message sent in one configuration may be ordered in a later one
(no ``sending-view-delivery``); docs/hybrid.md says which properties are promised.

Joins and recoveries (001 is silent; docs/hybrid.md): a process joins, or restarts as a
new incarnation (``p0~2``) and rejoins, through a view change of the layer; the members
that install it send it their ordering state at the end of the view before
(``_snapshot``), it starts from it (``_restore``) as a passive process with the role
number one higher, and delivers in the common order from that configuration on.
"""

from __future__ import annotations

import math
from bisect import insort
from collections.abc import Sequence
from typing import Any

from tomkit.model.hybrid.switch import MeanShift, better_sequencer, switch_decision, yields
from tomkit.model.hybrid.vsync import (
    Flush,
    Join,
    NewView,
    State,
    VsDeliver,
    VsInstall,
    VsMsg,
    VsyncLayer,
)
from tomkit.model.hybrid.wire import (
    ACTIVE,
    PASSIVE,
    At,
    Data,
    Descriptor,
    GoingToActive,
    GoingToPassive,
    Packet,
    Pong,
    Reassign,
    Ticket,
    encode,
)
from tomkit.model.process import Installed, Logged, Output, Transmit, View

__all__ = ["VARIANTS", "HybridProcess"]

#: the literal readings of Figure 4 (the ``variant`` option), each with what it breaks
VARIANTS: dict[str, str] = {
    "literal-ot": "Figure 4's 'move tickets in order from UT to OT' on reception, judged "
                  "against the configuration then (A1): a ticket is committed before a "
                  "goingToActive whose sender then tickets below it; total order breaks",
    "literal-duplicates": "Figure 4's issueTickets, which tests only the unsent tickets "
                          "LT_i (emptied on every send), and its delivery loop 'T(M) = "
                          "head(OT) and M in Q' (A2): a message waiting in Q is ticketed "
                          "again, and its second ticket blocks the queue for ever",
    "literal-view": "Figure 4's view branch: reassign only if an active process remains, "
                    "promote after the check (A3): clients of a crashed last sequencer "
                    "are never ordered again",
    "literal-no-null": "no null messages (A4): tickets and promises travel only on data, "
                       "so the last messages of a run are never delivered",
    "no-state-transfer": "a joiner starts from section 5.1's initial configuration (the "
                         "roles the run began with, nothing delivered, configurations "
                         "counted afresh) instead of the state the members send it: it "
                         "delivers in configurations nobody else has",
}

# states of Figure 4
S_ACTIVE, S_CHGSEQ, S_TOPASSIVE, S_PASSIVE, S_TOACTIVE = (
    "active", "chgseq", "topassive", "passive", "toactive")


class HybridProcess:
    """Process ``index`` of the group ``names`` (module docstring).

    ``roles``: per process, "active" or "passive" at start; ``sequencers``: per process
    its first sequencer (itself when active); ``delays``: the mean delay matrix used to
    pick the closest active process before estimates exist (None: all equal, lowest id
    wins); ``heartbeat``: seconds before a null message (None: never).
    """

    def __init__(self, index: int, names: Sequence[str], roles: Sequence[str],
                 sequencers: Sequence[int], *, tick_rate: float = 1000.0,
                 heartbeat: float | None = 0.0, delays: Sequence[Sequence[float]] | None = None,
                 dynamic: bool = False, probe_interval: float = 2.0, mean_shift_k: int = 5,
                 hysteresis: float = 0.2, switches: int = 0, variant: str | None = None,
                 control_records: bool = True, group: set[int] | None = None) -> None:
        #: what a restart begins from (on_recover: no state but these)
        self._made = dict(index=index, names=tuple(names), roles=tuple(roles),
                          sequencers=tuple(sequencers),
                          tick_rate=tick_rate, heartbeat=heartbeat, delays=delays,
                          dynamic=dynamic, probe_interval=probe_interval,
                          mean_shift_k=mean_shift_k, hysteresis=hysteresis,
                          switches=switches, variant=variant,
                          control_records=control_records, group=group)
        n = len(names)
        if len(roles) != n or len(sequencers) != n:
            raise ValueError("roles and sequencers need one entry per process")
        if ACTIVE not in roles:
            raise ValueError("at least one process must be active (001 section 5.1)")
        if variant is not None and variant not in VARIANTS:
            raise ValueError(f"variant must be one of {', '.join(VARIANTS)}, not {variant!r}")
        for j, s in enumerate(sequencers):
            if roles[s] != ACTIVE:
                raise ValueError(f"the sequencer {names[s]} of {names[j]} is not active")
        self.index, self.names, self.name, self.n = index, tuple(names), names[index], n
        self.tick_rate = tick_rate
        self.heartbeat = None if variant == "literal-no-null" else heartbeat
        self.delays = delays
        self.dynamic, self.probe_interval, self.h = dynamic, probe_interval, hysteresis
        self.variant = variant
        self.control_records = control_records
        # ---- configuration: the view and every member's role and role number
        self.members: tuple[int, ...] = tuple(range(n))
        self.role = list(roles)
        self.rn = [0] * n
        self.view_id = 0
        # ---- own state (Figure 4's variables)
        self.c = 0  # messages sent (ordered ones: data, goingTo*)
        self.l = 0  # last own message delivered
        self.state = S_ACTIVE if roles[index] == ACTIVE else S_PASSIVE
        self.t = 0  # ticket counter
        self.S = self._desc_of(sequencers[index])
        self.Q: dict[tuple[int, int], Any] = {}  # pending messages
        self.UT: list[Ticket] = []  # received tickets not yet delivered, by key
        self.OT: list[Ticket] = []  # literal-ot only: tickets committed on reception
        self.LT: list[Ticket] = []  # issued, not yet sent
        self.delivered: set[tuple[int, int]] = set()
        self.discarded: set[tuple[int, int]] = set()
        self.known: set[tuple[int, int]] = set()  # messages with a received ticket
        self.issued: set[tuple[int, int]] = set()  # messages this process ticketed
        self.last_tn = [-1] * n  # highest number shown by each process
        self.max_ticket = -1  # highest ticket number received
        self.promised = -1  # own last promise (tn)
        #: application messages waiting to be sent, with the time the application sent
        self.app_queue: list[tuple[str, float]] = []
        self.target: int | None = None  # chgseq: the wanted sequencer
        self.vs = VsyncLayer(index, n, pre_flush=self._pre_flush)
        # ---- membership (joins and recoveries: docs/hybrid.md)
        #: the first view's members, shared by the run's processes until it starts (the
        #: run's configuration, as the roles are; start_outside takes a process out)
        self.group = set(range(n)) if group is None else group
        self.started = False
        self.outside = False
        #: this process's restarts, on stable storage (a recovery is a new incarnation)
        self.incarnation = 0
        #: the local time of its latest join request: its ``join`` record, written when
        #: the view that admits it is installed, carries it (``x_requested``) so that
        #: ``tomkit conform`` can replay the request (as 003's qos does)
        self.requested: float | None = None
        #: configurations installed so far (001 section 5: C^n), the first one 0
        self.config_no = -1
        #: each member's incarnation, as of the view this process has installed
        self.incs: dict[int, int] = {}
        # ---- timers, estimates, scripted switches
        self.now = 0.0
        self.timers: set[float] = set()
        self._requested: float | None = None
        self.null_due: float | None = None
        self.switches_left = switches
        self.gap = MeanShift(mean_shift_k)
        self.delay_est = [MeanShift(mean_shift_k) for _ in range(n)]
        #: other processes' inter-message times, from their messages' clocks (6.1)
        self.rate_est = [MeanShift(mean_shift_k) for _ in range(n)]
        self.last_clock: list[float | None] = [None] * n
        self.last_send_at: float | None = None
        self.next_probe = 0.0
        self._out: Output | None = None
        self._last_sent: str | None = None
        self._last_delivered: str | None = None
        self._timer_k = 0
        # ---- counts for the summary
        self.nulls = self.reassigns = self.role_changes = self.aborts = 0

    # ------------------------------------------------------------------ descriptors

    def desc(self) -> Descriptor:
        return Descriptor(self.index, self.role[self.index], self.rn[self.index])

    def _desc_of(self, j: int) -> Descriptor:
        return Descriptor(j, self.role[j], self.rn[j])

    def valid(self, d: Descriptor) -> bool:
        return (d.p in self.members and self.role[d.p] == ACTIVE
                and self.rn[d.p] == d.rn)

    def actives(self) -> list[int]:
        return [j for j in self.members if self.role[j] == ACTIVE]

    def distance(self, j: int) -> float:
        """The delay to j: the estimate when there is one, else the configured mean."""
        est = self.delay_est[j].mean
        if est is not None:
            return est
        return 0.0 if self.delays is None else float(self.delays[self.index][j])

    def closest_active(self, exclude_self: bool = True) -> int | None:
        cands = [a for a in self.actives() if not (exclude_self and a == self.index)]
        if not cands:
            return None
        return min(cands, key=lambda a: (self.distance(a), a))

    # ------------------------------------------------------------- the interface

    def on_send(self, mid: str, now: float) -> Output:
        out = self._begin(now)
        deps = [m for m in (self._last_sent, self._last_delivered) if m is not None]
        self._last_sent = mid
        if self.dynamic:
            if self.last_send_at is not None:
                self.gap.add(now - self.last_send_at)
            self.last_send_at = now
        self.app_queue.append((mid, now))
        self._drain_app()
        if self.dynamic:
            self._decide()
        out.deps = list(dict.fromkeys(deps))
        return self._end()

    def on_receive(self, packet: Any, now: float) -> Output:
        if type(packet) is At:  # a replayed input with its logged time
            return self._replayed(packet)
        self._begin(now)
        if type(packet) is Pong:
            self._log_control(f"pong/{self.names[packet.frm]}/{packet.clock!r}", "pong",
                              packet)
            est = self.delay_est[packet.frm]
            if est.add((now - packet.clock) / 2) is not None:
                self._decide()
            return self._end()
        self._log_packet(packet)
        self._vs_step(self.vs.receive(packet))
        return self._end()

    def on_timer(self, now: float) -> Output:
        out = self._begin(now)
        if self._requested is not None and self._requested <= now:
            self._requested = None
        due = [t for t in self.timers if t <= now]
        for t in due:
            self.timers.discard(t)
        if not due:
            return self._end()
        if self.control_records:
            self._timer_k += 1
            out.received.append(Logged(f"timer/{self.name}/{self._timer_k}",
                                       {"x_packet": "timer"}))
        if self.null_due is not None and self.null_due <= now:
            self.null_due = None
            if self._needs_null():
                self._send_packet(None)
        if self.switches_left > 0 and self._steady():
            self._scripted_switch()
        return self._end()

    def on_crash(self, q: int, now: float) -> Output:
        out = self._begin(now)
        if self.control_records:
            out.received.append(Logged(f"crash/{self.names[q]}",
                                       {"x_packet": "crash-notice", "x_of": self.names[q]}))
        self._vs_step(self.vs.crash(q))
        return self._end()

    def on_view(self, view: View, now: float) -> Output:
        raise ValueError(f"{self.name}: the hybrid protocol runs its own view-synchronous "
                         "layer (model/hybrid/vsync.py); it takes Crash(q) notices, not views")

    # ------------------------------------------------------------- membership

    @property
    def accepting(self) -> bool:
        """The application may multicast (sends during a view change wait in app_queue);
        not before the first view of a process that joins."""
        return not self.outside

    def start_outside(self) -> None:
        """Outside the group from time 0: not in the first view (before the run)."""
        self.outside = True
        self.group.discard(self.index)

    def on_join(self, now: float) -> Output:
        """JOIN through the view-synchronous layer; the process becomes a member at the
        view that admits it, with the state it is sent (``_restore``)."""
        self._begin(now)
        self.requested = now
        self._emit(self.vs.join().sends)
        return self._end()

    def on_leave(self, now: float) -> Output:
        raise ValueError(f"{self.name}: the hybrid protocol does not honour leave")

    def on_recover(self, now: float) -> Output:
        """Restart with no state (a new incarnation: the counter on stable storage is all
        that survives) and join."""
        incarnation = self.incarnation + 1
        self.__init__(**self._made)  # type: ignore[misc]
        self.incarnation, self.outside = incarnation, True
        self.name = f"{self.names[self.index]}~{incarnation + 1}"
        return self.on_join(now)

    def _start(self) -> None:
        """At the first input: the first view (the group's members then, configuration
        0), or, for a process outside, a layer waiting to join."""
        self.started = True
        if self.outside:
            self.members = ()
            self.vs = VsyncLayer(self.index, self.n, pre_flush=self._pre_flush, outside=True,
                                 incarnation=self.incarnation)
            return
        self.members = tuple(sorted(self.group))
        self.vs = VsyncLayer(self.index, self.n, pre_flush=self._pre_flush,
                             members=self.members)
        if not self.actives():  # as at a view change (section 5.3.1): the highest id
            m = max(self.members)
            self.role[m] = ACTIVE
            self.rn[m] += 1
        if self.role[self.index] == ACTIVE:
            self.state, self.S = S_ACTIVE, self.desc()
        else:
            self.state = S_PASSIVE
            if not self.valid(self.S):
                self.S = self._desc_of(self.closest_active())  # type: ignore[arg-type]
        self._log_config()

    def _log_config(self) -> None:
        """A new configuration C^n = {V^i, D_j for j in V^i} (001 section 5), as a
        ``view`` record: its id is n, the view and every member's descriptor
        ("3:v1 p0=a1,p1=p0": configuration 3, view 1, p0 active with role number 1, p1
        passive with 0), so that two processes that disagree on a configuration log two
        ids (docs/hybrid.md)."""
        self.config_no += 1
        out = self._out
        assert out is not None
        named = tuple(self._named(j) for j in self.members)
        desc = ",".join(f"{name}={self.role[j][0]}{self.rn[j]}"
                        for name, j in zip(named, self.members))
        view = View(f"{self.config_no}:v{self.view_id} {desc}", self.members)
        if not out.installed:
            out.installed = []
        out.installed.append(Installed(  # type: ignore[attr-defined]
            view, {"x_config": self.config_no, "x_view": self.view_id}, len(out.delivered),
            named))

    def _named(self, j: int) -> str:
        """Process j's name in its incarnation (``p0``, then ``p0~2`` after a restart, as
        the membership service of model/toto/membership.py names them)."""
        inc = self.incs.get(j, 0)
        return self.names[j] if inc == 0 else f"{self.names[j]}~{inc + 1}"

    def _snapshot(self) -> tuple:
        """The ordering state a joiner needs, at the end of a view (every process that
        installs the next view has the same: view synchrony): configuration number,
        roles, role numbers, pending messages, received tickets, what is delivered,
        discarded and ticketed, every process's last number shown, the highest ticket."""
        return (self.config_no, tuple(self.role), tuple(self.rn),
                tuple(sorted(self.Q.items())), tuple(self.UT), tuple(self.OT),
                tuple(sorted(self.delivered)), tuple(sorted(self.discarded)),
                tuple(sorted(self.known)), tuple(self.last_tn), self.max_ticket)

    def _restore(self, st: tuple) -> None:
        """A joiner's state from its STATE (``_snapshot``). Its counter c continues after
        its earlier incarnations' messages, and its ticket counter starts above every
        number shown, so that no promise made by an earlier incarnation is broken."""
        (self.config_no, role, rn, q, ut, ot, delivered, discarded, known, last_tn,
         self.max_ticket) = st
        self.role, self.rn, self.last_tn = list(role), list(rn), list(last_tn)
        self.Q, self.UT, self.OT = dict(q), list(ut), list(ot)
        self.delivered, self.discarded = set(delivered), set(discarded)
        self.known = set(known)
        mine = [c for p, c in (*self.delivered, *self.discarded, *self.Q, *self.known)
                if p == self.index]
        self.c = self.l = max(mine, default=0)
        self.t = max(self.max_ticket, *self.last_tn)

    def _replayed(self, at: At) -> Output:
        from tomkit.model.process import feed

        return feed(self, at.input, at.time)

    # ------------------------------------------------------------- plumbing

    def _begin(self, now: float) -> Output:
        self.now = now
        self._out = Output()
        if not self.started:
            self._start()
        if self.switches_left > 0 and not self.timers:
            self._arm(now + 1.0)
        return self._out

    def _end(self) -> Output:
        out = self._out
        assert out is not None
        self._maybe_null()
        self._out = None
        if self.timers:
            # one request per timer: the earliest, unless an earlier one is outstanding
            t = min(self.timers)
            if self._requested is None or t < self._requested:
                out.timer = self._requested = t
        return out

    def _arm(self, t: float) -> None:
        self.timers.add(t)

    def _multicast(self, payload: Any) -> None:
        st = self.vs.multicast(payload)
        self._emit(st.sends)

    def _emit(self, sends: list[tuple[Any, tuple[int, ...]]]) -> None:
        out = self._out
        assert out is not None
        for packet, to in sends:
            control = not (type(packet) is VsMsg and type(packet.payload.body) is Data)
            out.sends.append(Transmit(packet, tuple(to), control))

    def _vs_step(self, st) -> None:
        self._emit(st.sends)
        for ev in st.events:
            if type(ev) is VsDeliver:
                self._on_packet(ev.sender, ev.payload)
            else:
                self._on_install(ev)
        self._drain_app()

    def _log_packet(self, packet: Any) -> None:
        out = self._out
        assert out is not None
        cls = type(packet)
        if cls is VsMsg and type(packet.payload.body) is Data:
            body = packet.payload.body
            fields = {"x_packet": "data", "x_wire": encode(packet)} \
                if self.control_records else None
            out.received.append(Logged(body.mid, fields))
            return
        if cls is VsMsg:
            name = f"vs/{self.names[packet.sender]}/{packet.seq}"
            kind = "vs"
        elif cls is Flush:
            name, kind = f"flush/{self.names[packet.sender]}/{packet.view}", "flush"
        elif cls is NewView:
            name, kind = f"newview/{packet.view}", "newview"
        elif cls is Join:
            name, kind = f"join/{self.names[packet.sender]}/{packet.incarnation}", "join"
        elif cls is State:
            name, kind = f"state/{packet.view}/{self.names[packet.sender]}", "state"
        else:
            raise TypeError(f"{self.name}: not a hybrid packet: {packet!r}")
        self._log_control(name, kind, packet)

    def _log_control(self, name: str, kind: str, packet: Any) -> None:
        if self.control_records:
            assert self._out is not None
            self._out.received.append(Logged(name, {"x_packet": kind,
                                                    "x_wire": encode(packet)}))

    # ------------------------------------------------------------- sending

    def _steady(self) -> bool:
        """May this process send now? Figure 4 stops sending in chgseq, topassive and
        toactive; the view-synchronous layer during a view change."""
        return self.state in (S_ACTIVE, S_PASSIVE) and not self.vs.blocked

    def _clock_tick(self) -> int:
        return math.floor(self.now * self.tick_rate) if self.tick_rate else 0

    def _issue(self, msg: tuple[int, int]) -> None:
        """Issue a ticket for ``msg`` (update t)."""
        self.t = max(self.t + 1, self._clock_tick())
        self.LT.append(Ticket(self.index, self.t, msg[0], msg[1]))
        self.issued.add(msg)

    def _send_packet(self, body: Any) -> None:
        """vs-multicast [LT]<body>, with the promise when active."""
        active = self.role[self.index] == ACTIVE and self.state != S_PASSIVE
        tn = None
        tickets: tuple[Ticket, ...] = ()
        if active:
            self.t = max(self.t, self._clock_tick())
            tn = self.promised = self.t
            tickets, self.LT = tuple(self.LT), []
        if body is None:
            self.nulls += 1
        self.null_due = None
        self._multicast(Packet(tickets, tn, self.now, body))

    def _pre_flush(self) -> list[Packet]:
        """Before a FLUSH: send the tickets issued and not yet sent (so that fewer
        messages of a crashed process are discarded) with a promise."""
        if self.role[self.index] == ACTIVE and self.state != S_PASSIVE and self.LT:
            self.t = max(self.t, self._clock_tick())
            self.promised = self.t
            tickets, self.LT = tuple(self.LT), []
            self.nulls += 1
            return [Packet(tickets, self.t, self.now, None)]
        return []

    def _drain_app(self) -> None:
        while self.app_queue and self._steady():
            self._send_data(*self.app_queue.pop(0))

    def _send_data(self, mid: str, at: float) -> None:
        self.c += 1
        probe = False
        if self.dynamic and self.now >= self.next_probe:
            probe, self.next_probe = True, self.now + self.probe_interval
        d = self.desc() if self.state == S_ACTIVE else self.S
        m = Data(self.index, self.c, d, mid, probe, at)
        if self.state == S_ACTIVE:
            self._issue((self.index, self.c))
        self._send_packet(m)

    def _needs_null(self) -> bool:
        if self.role[self.index] != ACTIVE or self.state == S_PASSIVE:
            return False
        if self.state == S_TOPASSIVE:  # stopped: its promise went with goingToPassive
            return False
        return bool(self.LT) or self.max_ticket > self.promised

    def _maybe_null(self) -> None:
        if self.heartbeat is None or self.vs.blocked or not self._needs_null():
            return
        if self.heartbeat == 0:
            self._send_packet(None)
        elif self.null_due is None:
            self.null_due = self.now + self.heartbeat
            self._arm(self.null_due)

    # ------------------------------------------------------------- receiving

    def _on_packet(self, sender: int, pk: Packet) -> None:
        """Figure 4, "when [tickets]<M> received from process j"."""
        for T in pk.tickets:
            if T.number > self.max_ticket:
                self.max_ticket = T.number
            if T.number > self.last_tn[T.issuer]:
                self.last_tn[T.issuer] = T.number
            self.known.add(T.msg)
            if T.msg not in self.delivered and T.msg not in self.discarded:
                insort(self.UT, T, key=_key)
        if pk.tn is not None and pk.tn > self.last_tn[sender]:
            self.last_tn[sender] = pk.tn
        # rate synchronisation: every process keeps t up to date (section 5.2)
        top = max([self.t, self.max_ticket, pk.tn if pk.tn is not None else -1])
        self.t = top
        body = pk.body
        cls = type(body)
        if cls is Reassign:
            self.reassigns += sender == self.index
            self._apply_reassign(body)
        elif body is not None:
            key = (body.p, body.c)
            if key in self.Q or key in self.delivered:
                raise ValueError(f"{self.name}: message {key} received twice")
            self.Q[key] = body
            if cls is Data and sender != self.index and self.dynamic:
                if self.last_clock[sender] is not None:
                    self.rate_est[sender].add(body.clock - self.last_clock[sender])
                self.last_clock[sender] = body.clock
                if body.probe:
                    assert self._out is not None
                    self._out.sends.append(Transmit(Pong(self.index, pk.clock), (sender,),
                                                    True))
        self._deliver_in_order()
        if self.state == S_ACTIVE:
            self._issue_tickets()

    def _apply_reassign(self, r: Reassign) -> None:
        for c in range(r.lo + 1, r.hi + 1):
            m = self.Q.get((r.p, c))
            if m is not None:
                self.Q[(r.p, c)] = m._replace(D=r.D)

    def _issue_tickets(self) -> None:
        """Figure 4's issueTickets, per sender in FIFO order (module docstring)."""
        me = self.desc()
        literal = self.variant == "literal-duplicates"
        pending = {T.msg for T in self.LT}
        for key, m in list(self.Q.items()):
            if m.D != me:
                continue
            if literal:
                if key in pending:  # Figure 4: "T(M) not in LT_i", LT_i emptied on send
                    continue
            elif key in self.issued or key in self.known:
                continue
            prev = (key[0], key[1] - 1)
            if key[1] > 1 and not (prev in self.delivered or prev in self.discarded
                                   or prev in self.known or prev in self.issued):
                continue
            self._issue(key)

    def _stable(self, T: Ticket, actives: list[int]) -> bool:
        return all(self.last_tn[b] >= T.number for b in actives if b != T.issuer)

    def _deliver_in_order(self) -> None:
        """Figure 4's deliverInOrder, with stability judged ticket by ticket against the
        configuration in force [A1], duplicates dropped [A2]."""
        if self.variant == "literal-ot":
            acts = self.actives()
            while self.UT and self._stable(self.UT[0], acts):
                self.OT.append(self.UT.pop(0))
            queue = self.OT
        else:
            queue = self.UT
        literal_dup = self.variant == "literal-duplicates"
        while queue:
            T = queue[0]
            msg = T.msg
            if msg in self.delivered or msg in self.discarded:
                if literal_dup and msg in self.delivered:
                    return  # "T(M) = head(OT) and M in Q" never holds again
                queue.pop(0)
                continue
            if queue is self.UT and not self._stable(T, self.actives()):
                return
            m = self.Q.get(msg)
            if m is None:
                return  # the ticket beat its message
            queue.pop(0)
            del self.Q[msg]
            self.delivered.add(msg)
            self._deliver_message(m, T)

    def _deliver_message(self, m: Any, T: Ticket) -> None:
        """Figure 4's deliverMessage."""
        cls = type(m)
        mine = m.p == self.index
        if mine:
            self.l = max(self.l, m.c)  # (a rejoined process's earlier messages come late)
        if cls is Data:
            out = self._out
            assert out is not None
            out.delivered.append(Logged(m.mid, {"x_ticket": [self.names[T.issuer], T.number],
                                                "x_view": self.view_id}))
            self._last_delivered = m.mid
            if mine and self.state == S_CHGSEQ and self.l == self.c:
                self._complete_chgseq()
            return
        if m.p not in self.members:
            return  # its sender left (A12)
        if cls is GoingToActive:
            self.role[m.p] = ACTIVE
            self.rn[m.p] += 1
            self._log_config()
            # its tickets from now on are above this one's number
            self.last_tn[m.p] = max(self.last_tn[m.p], T.number)
            if mine:
                self.role_changes += 1
                self.t = max(self.t, T.number)
                self.state = S_ACTIVE
                self.S = self.desc()
                self._issue_tickets()
            self._after_config()
            return
        if cls is GoingToPassive:
            others = [a for a in self.actives() if a != m.p]
            if not others:  # the last active process: abort (section 5.3.2)
                if mine:
                    self.aborts += 1
                    self.state = S_ACTIVE
                    self.S = self.desc()
                    self._issue_tickets()
                return
            self.role[m.p] = PASSIVE
            self.rn[m.p] += 1
            self._log_config()
            if mine:
                self.role_changes += 1
                self.state = S_PASSIVE
                self.S = self._desc_of(self.closest_active())  # type: ignore[arg-type]
            self._after_config()
            return
        raise TypeError(f"{self.name}: cannot deliver {m!r}")

    def _after_config(self) -> None:
        """A new configuration: a non-active process whose sequencer is gone reassigns
        its pending range to the closest active process [A3]; a chgseq target that is
        gone is dropped."""
        if self.state in (S_ACTIVE, S_TOPASSIVE):
            return
        if not self.valid(self.S):
            a = self.closest_active()
            if a is None:
                return
            self.S = self._desc_of(a)
            self._send_packet(Reassign(self.index, self.l, self.c, self.S))
        if self.state == S_CHGSEQ and self.target is not None and \
                not self.valid(self._desc_of(self.target)):
            self.target = None

    def _on_install(self, ev: VsInstall) -> None:
        """Figure 4, "when view V is delivered" (module docstring); a joiner starts from
        the state it is sent, members that admit joiners send it theirs (docs/hybrid.md)."""
        if ev.state is not None and self.variant != "no-state-transfer":
            self._restore(ev.state)  # this process's first view
        upper = self._snapshot() if ev.transfer is not None else None
        left = set(ev.left)
        self.view_id = ev.view
        if ev.state is not None:
            self.incs = {}
        self.incs.update(ev.incarnations)
        for key in list(self.Q):
            if key[0] in left and key not in self.known:
                del self.Q[key]
                self.discarded.add(key)
        self.LT = [T for T in self.LT if T.sender not in left]  # A5
        self.members = ev.members
        for j in ev.joined:  # a joiner (or a new incarnation) is passive at first
            self.role[j] = PASSIVE
            self.rn[j] += 1
        literal = self.variant == "literal-view"
        if literal:
            self._after_config_literal_view()
        if not self.actives():
            m = max(self.members)
            self.role[m] = ACTIVE
            self.rn[m] += 1
            self.last_tn[m] = max(self.last_tn[m], self.max_ticket)
            if m == self.index:
                self.role_changes += 1
                self.t = max(self.t, self.max_ticket)
                self.state = S_ACTIVE
                self.S = self.desc()
                # "issues tickets for all messages it has sent but that were not ordered
                # in previous configurations" (section 5.3.3) at once, before any new
                # message of its own gets a ticket (FIFO); Q itself changes when the
                # reassign is delivered, as everywhere (a joiner is sent Q)
                for c in range(self.l + 1, self.c + 1):
                    key = (self.index, c)
                    if key in self.Q and key not in self.issued and key not in self.known:
                        self._issue(key)
                self._send_packet(Reassign(self.index, self.l, self.c, self.S))
        if ev.state is not None:
            self.outside = False
            self._out.joined = {"x_view": ev.view,  # type: ignore[union-attr]
                                "x_requested": self.requested}
            if self.role[self.index] == PASSIVE:
                self.state = S_PASSIVE
                self.S = self._desc_of(self.closest_active())  # type: ignore[arg-type]
        if not literal:
            self._after_config()
        self._log_config()
        if upper is not None:
            self._emit(self.vs.state(ev, upper).sends)
        self._deliver_in_order()

    def _after_config_literal_view(self) -> None:
        """Figure 4's view branch: reassign only if some active process exists in the
        new configuration, before the promotion."""
        if self.state in (S_ACTIVE, S_TOPASSIVE) or self.valid(self.S) or not self.actives():
            return
        self._after_config()

    # ------------------------------------------------------------- switching

    def go_passive(self) -> None:
        """Section 5.3.2: send goingToPassive with its own ticket and the unsent ones,
        then stop sending and ticketing."""
        if self.state != S_ACTIVE or self.vs.blocked:
            raise ValueError(f"{self.name}: goingToPassive from state {self.state}")
        self.c += 1
        self._issue((self.index, self.c))
        self.state = S_TOPASSIVE
        self._send_packet(GoingToPassive(self.index, self.c, self.desc()))

    def go_active(self) -> None:
        """Section 5.3.3: send goingToActive (ordered by the sequencer), stop sending."""
        if self.state != S_PASSIVE or self.vs.blocked:
            raise ValueError(f"{self.name}: goingToActive from state {self.state}")
        self.c += 1
        self.state = S_TOACTIVE
        self._send_packet(GoingToActive(self.index, self.c, self.S))

    def change_sequencer(self, target: int) -> None:
        """Section 5.3.4: stop sending until l = c, then name ``target`` [A6]."""
        if self.state != S_PASSIVE or self.role[target] != ACTIVE:
            raise ValueError(f"{self.name}: cannot change sequencer to {target}")
        self.state = S_CHGSEQ
        self.target = target
        if self.l == self.c:
            self._complete_chgseq()

    def _complete_chgseq(self) -> None:
        t = self.target
        if t is None or not self.valid(self._desc_of(t)):
            t = self.closest_active()
        self.S = self._desc_of(t)  # type: ignore[arg-type]
        self.state = S_PASSIVE
        self.target = None

    def _scripted_switch(self) -> None:
        """The ``switches`` option (fuzzing): toggle the role, or change sequencer when
        passive and another active process exists (every other time)."""
        self.switches_left -= 1
        if self.state == S_ACTIVE:
            self.go_passive()
        else:
            others = [a for a in self.actives() if a != self.S.p]
            if others and self.switches_left % 2:
                self.change_sequencer(others[0])
            else:
                self.go_active()
        if self.switches_left > 0:
            self._arm(self.now + 1.0)

    def _decide(self) -> None:
        """Section 6.2's switching heuristic on the current estimates."""
        if not self.dynamic or not self._steady() or self.gap.mean is None:
            return
        a = self.closest_active()
        if a is None or self.delay_est[a].mean is None:
            return
        d_star = self.delay_est[a].mean
        if self.state == S_ACTIVE:
            if switch_decision(True, self.gap.mean, d_star, self.h) and \
                    yields(self.index, self.gap.mean, a, self.rate_est[a].mean, self.h):
                self.go_passive()
            return
        if switch_decision(False, self.gap.mean, d_star, self.h):
            self.go_active()
            return
        cur = self.delay_est[self.S.p].mean
        if a != self.S.p and cur is not None and better_sequencer(cur, d_star, self.h):
            self.change_sequencer(a)


def _key(T: Ticket) -> tuple[int, int]:
    return (T.number, T.issuer)
