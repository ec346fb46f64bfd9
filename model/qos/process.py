"""The QoS-preserving totally ordered multicast (Bar-Joseph, Keidar, Anker and Lynch,
003) as a process state machine: the slotted ordering layer over the FEC layer.

Source: 003 section 3.2 (the ordering layer with a static group), section 3.3 (failures,
joins and leaves) and Figures 3-4 (the latency bounds); the OCR loses most symbols, the
reading aid (``briefs/001-003.md`` 2.2-2.4) reconstructs them and ``docs/qos.md`` says
what we checked against the prose. The FEC layer, the join slot and the join window are
``model/qos/fec.py`` and ``model/qos/slots.py``; the simulator hooks (clocks within eps, delays
within delta, the burst-loss adversary, join/leave/recover schedules) ``model/net/timed.py``.

The ordering layer (one process, index i of the universe 0..n-1)
----------------------------------------------------------------
* Time is cut into slots of length Delta on the *local* clock: slot s is
  [s*Delta, (s+1)*Delta). An application message sent in slot s goes to the FEC layer
  with slot s (``FecSender.send``); at local (s+1)*Delta the layer sends the slot's last
  block (``FecSender.end_slot``), which the receivers' FEC layers turn into the
  end-of-slot marker EOS(i, s) after the slot's messages.
* Delivery, slot by slot: in slot s the senders are taken in index order 0..n-1, those
  expected in s only; sender k's slot-s messages are delivered as they come out of its
  FEC receiver, until EOS(k, s) (or k's ``leave``), then the next sender. The delivery
  order is the key (slot, sender index, position in the sender's stream), the same at
  every process: each process delivers a subsequence of one global sequence.
* Failure (3.3): if at local (s+1)*Delta + delta + eps a process still waits for
  EOS(k, s), k has failed: what was delivered of k stays delivered, the rest of k's
  slot-s messages is discarded, and k is not expected in later slots until it rejoins.
  Every slot is therefore complete by local (s+1)*Delta + delta + eps.
* Join (3.3): a joiner with clock C computes s_j = floor(C/Delta) + ceil((delta+eps)/
  Delta) + 1 (``slots.join_slot``) and multicasts join(p, s_j) as 1 + L copies (reading
  aid B3: the burst-loss bound lets one through). Every process that receives it records
  that p is expected from slot s_j on. The joiner discards everything of slots before
  s_j, sends and delivers from s_j on (join_OK at local s_j*Delta + eps, below), and
  treats every process of the universe as expected in the slots of its join window,
  until its EOS or a timeout (B5, below).
* Leave (3.3): the leaver FEC-sends a ``leave`` in its current slot s, ends the slot as
  usual, and exits (it delivers nothing more: B6). A receiver meeting the leave at the
  head of p's queue in p's turn stops there and expects p no more from s + 1 on.
* Crash and recovery: a crashed process stops (the simulator); it recovers by joining
  again with a fresh state (003 section 2: "recovery requires a rejoin"). The membership's
  Crash(q) notices are ignored: 003 detects failures by the timeout alone.

Decisions on the text (besides those of model/qos/fec.py and model/qos/slots.py):

* Who is expected at time 0 (003 is silent: executions start at t = 0 with the group
  formed): every process of the universe is expected from slot 0, as a joiner expects
  every process in its first slot (3.3: "timeouts reveal which are absent"); a process
  that is down at time 0 (it joins later) is timed out in slot 0.
* B5, the join window (reading aid; Bar-Joseph et al. 3.3 "during slot s_j p assumes all
  processes to be correct"): the safe reading, the default, expects every process in
  every slot of ``slots.join_window`` = [s_j, s_j + ceil(eps/Delta) + 1]; a timeout in
  a window slot other than the last does not remove the process from the later ones.
  The literal window [s_j] is the broken variant ``literal-join``: a process whose join
  the joiner missed (sent before it woke, for a later slot because of clock skew) is
  timed out in s_j and never delivered (a liveness violation; tests and the fuzzer).
* Timeout boundary: a packet due exactly at the deadline is taken before the timeout
  (the simulator runs timers after arrivals of the same instant), so the deadline is the
  paper's ">" (waits *more than* delta + eps).
* A joined process's FEC receiver for sender k starts at the first block of a slot the
  receiver delivers (the joiner enters streams mid-way; a correct sender's block is
  never lost whole, since a block has at least L + 1 packets); it restarts when k
  rejoins (k's new stream numbers blocks from 0; FIFO links bring k's join after its old
  packets).
* The application does not send before join_OK or after leave (003 section 2's assumption):
  :attr:`QosProcess.accepting` says when it may, and the simulator's sources wait.
* join_OK comes at local s_j*Delta + eps, not at s_j*Delta, and nothing is delivered
  before it (the ``join`` record is written then, ``Output.joined``). 003 section 2's
  Definition 2.1 makes a process correct from its join_OK, a point in real time, and owes
  it every message sent after that point. With join_OK at the joiner's local s_j*Delta
  (section 3.3 as printed), a process whose clock is behind by up to eps still sends in
  slot s_j - 1 after it (real time), a slot the joiner discards: it is never delivered
  (``docs/qos.md``, "join_OK and real time", has the three-record trace). The flaw is in
  the algorithm as printed read against its own real-time definition; the paper's
  argument counts "after join_OK" in slots, which is an assumption the definition does
  not state. Waiting eps more closes it: at the joiner's local s_j*Delta + eps every
  clock reads at least s_j*Delta (two clocks differ by at most eps, 003 section 2.1), so
  every later send is in a slot >= s_j, which the joiner delivers. The printed reading
  is the broken variant ``early-join-ok`` (tests and the fuzzer find it).

The process is a ``Member`` (``model/process.py``): the drivers call ``on_join``,
``on_leave``, ``on_recover`` and ``start_outside`` at the schedule's events
(``model/events.py``); its ``join`` record is its own, at join_OK.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tomkit.model.process import Logged, Output, Transmit, View
from tomkit.model.qos.fec import Eos, FecReceiver, FecSender, Packet
from tomkit.model.qos.reserve import Reservation, Reservations, negotiate_fields
from tomkit.model.qos.slots import join_slot, join_window
from tomkit.model.qos.wire import Data, Join, Leave, reception

__all__ = ["Data", "Join", "Leave", "QosParams", "QosProcess", "VARIANTS"]

#: broken variants (the ``variant`` option)
VARIANTS: dict[str, str] = {
    "early-join-ok": "003 section 3.3's join_OK at the joiner's local start of its join "
                     "slot: a process whose clock is behind sends in the slot before, after "
                     "join_OK in real time, and the joiner never delivers it (Definition "
                     "2.1 in real time): a liveness violation",
    "literal-join": "003 section 3.3's join read literally: the joiner expects every process in "
                    "its join slot only, and misses a skewed joiner whose join it never "
                    "received (reading aid B5): a liveness violation",
    "early-rn": "RN(r) takes effect in the slot it is requested in, not the next: part of "
                "that slot already went out under the old reservation, and after a "
                "decrease the slot exceeds the new max' (the rate property)",
    "unshaped": "the sender FEC-sends what the application multicasts at once, over its "
                "reservation too: the network sees more than the reserved r' (the rate "
                "property)",
}


@dataclass(frozen=True)
class QosParams:
    """The protocol's constants: slot length Delta, delay bound delta, clock skew eps
    (two clocks differ by at most eps), the FEC's I and L; ``literal_join`` the B5
    variant, ``early_join_ok`` join_OK at the join slot's start (module docstring)."""

    slot: float = 0.1
    max_delay: float = 0.05
    epsilon: float = 0.01
    fec_i: int = 5
    fec_l: int = 2
    literal_join: bool = False
    early_join_ok: bool = False
    #: the reservation r every process asks for at join(r) (and holds from time 0);
    #: None: no contract (no shaping, no ``negotiate`` records)
    reserve: Reservation | None = None
    #: K, the slots of a reservation's avg (model/qos/reserve.py)
    window: int = 10
    early_rn: bool = False
    unshaped: bool = False
    #: log a ``recv`` record per network message from another process
    #: (``model/qos/wire.py``: what ``tomkit conform`` replays)
    receptions: bool = False

    def __post_init__(self) -> None:
        if not self.slot > 0 or self.max_delay < 0 or self.epsilon < 0:
            raise ValueError(f"qos needs slot > 0, max_delay >= 0, epsilon >= 0; got "
                             f"slot={self.slot}, max_delay={self.max_delay}, "
                             f"epsilon={self.epsilon}")
        FecSender(self.fec_i, self.fec_l)  # checks 0 <= L < I
        if self.window < 1:
            raise ValueError(f"qos needs a reservation window K >= 1 slot, got {self.window}")
        if self.reserve is not None:
            self.reserve.check()

    def deadline(self, s: int) -> float:
        """The local time at which slot s's missing senders are timed out."""
        return (s + 1) * self.slot + self.max_delay + self.epsilon

    def join_ok(self, s_j: int) -> float:
        """The joiner's local time of join_OK for join slot s_j (module docstring)."""
        return s_j * self.slot + (0.0 if self.early_join_ok else self.epsilon)

    def bound(self, failures: bool) -> float:
        """003's latency bound in real time: Delta + delta + eps without failures (Figure
        3), Delta + delta + 2 eps with them (Figure 4); docs/qos.md derives both."""
        return self.slot + self.max_delay + (2 if failures else 1) * self.epsilon


# status of a process
OUT, JOINING, MEMBER, LEAVING = "out", "joining", "member", "leaving"


class QosProcess:
    """One process of 003's ordering layer (module docstring). ``index`` in 0..n-1; the
    process starts as a member expected from slot 0 by everyone (``up=True``) or down
    until :meth:`on_join`."""

    def __init__(self, index: int, names: Sequence[str], params: QosParams,
                 up: bool = True) -> None:
        self.index = index
        self.names = tuple(names)
        self.name = self.names[index]
        self.n = len(self.names)
        self.p = params
        #: FEC messages sent, per slot: slot -> [originals, network messages]
        self.per_slot: dict[int, list[int]] = {}
        #: slots' timeouts: (slot, sender) pairs this process timed out
        self.timeouts: list[tuple[int, int]] = []
        self.joins_received = 0
        #: the application's reservation (003 section 2.1's r): asked again at a rejoin
        self.app_r: Reservation | None = params.reserve
        #: messages the shaper held past their slot (model/qos/reserve.py)
        self.held_total = 0
        self._reset(0 if up else None)

    # ---------------------------------------------------------------------- state

    def _reset(self, start: int | None) -> None:
        """A fresh process (after a crash its memory is gone): a member from slot
        ``start`` expecting everybody from there, or down (None)."""
        n, p = self.n, self.p
        self.status = OUT if start is None else MEMBER
        self.fec = FecSender(p.fec_i, p.fec_l, slot=start or 0)
        self.rx: list[FecReceiver | None] = [None] * n
        self.queue: list[deque] = [deque() for _ in range(n)]
        #: slot from which sender k is expected (None: not expected)
        self.active_from: list[int | None] = [start] * n
        #: slots whose timeouts do not remove a sender from later slots (B5)
        self.grace: range = range(0)
        self.dslot = start if start is not None else 0  # slot being delivered
        self.didx = 0  # sender whose turn it is
        self.first_slot = start if start is not None else 0  # nothing before it
        self.leave_slot: int | None = None
        self.join_at: float | None = None  # local time of join_OK
        self.requested_at: float | None = None  # local time of the join request
        self.requested: set[float] = set()
        self.delivered: list[str] = []
        #: the sender's reservations per slot and the messages its shaper holds back
        self.shaper = Reservations(p.window)
        self.held: deque = deque()
        #: a member from time 0 declares its reservation at its first input
        self.declare = start is not None and self.app_r is not None
        if self.declare:
            self.shaper.set(start, self.app_r)  # type: ignore[arg-type]

    @property
    def accepting(self) -> bool:
        """Whether the application may multicast now (a member, not leaving)."""
        return self.status == MEMBER

    @property
    def holding(self) -> bool:
        """Messages held over the reservation, still to be sent (a member's)."""
        return bool(self.held) and self.status in (MEMBER, LEAVING)

    @property
    def outside(self) -> bool:
        """Not in the group: down from time 0 or gone after its leave (or its crash)."""
        return self.status == OUT

    def start_outside(self) -> None:
        """Down from time 0: no state, no slots, until :meth:`on_join`."""
        self._reset(None)

    # ---------------------------------------------------------------------- inputs

    def on_send(self, mid: str, now: float) -> Output:
        out = Output()
        self._advance(now, out)
        if self.status != MEMBER:
            raise ValueError(f"{self.name}: the application multicasts {mid!r} while "
                             f"{self.status} (003 section 2: only between join_OK and leave)")
        s = self.fec.slot
        if self.held or not (self.p.unshaped or self.shaper.room(s)):
            # over the reservation: held for a later slot (model/qos/reserve.py)
            self.held.append(mid)
            self.held_total += 1
            out.fields = {"x_slot": s, "x_held": True}
        else:
            self._fec_send(mid, out)
            out.fields = {"x_slot": s}
        self._finish(now, out)
        return out

    def on_receive(self, packet: Any, now: float) -> Output:
        out = Output()
        if self.status == OUT:
            return out
        self._advance(now, out)
        if self.status == OUT:
            return out
        if self.p.receptions and packet.sender != self.index:
            out.received.append(Logged(*reception(packet, self.names)))
        if isinstance(packet, Join):
            self._record_join(packet)
        elif isinstance(packet, Data):
            self._fec_receive(packet)
        else:
            raise TypeError(f"{self.name}: not a qos packet: {packet!r}")
        self._finish(now, out)
        return out

    def on_timer(self, now: float) -> Output:
        out = Output()
        self.requested.discard(now)
        if self.status == OUT:
            return out
        self._advance(now, out)
        if self.status != OUT:
            self._finish(now, out)
        return out

    def on_crash(self, q: int, now: float) -> Output:
        """003 detects failures by its timeout alone; the notice changes nothing."""
        return Output()

    def on_view(self, view: View, now: float) -> Output:
        raise ValueError(f"{self.name}: qos has no views (003 has no agreed membership)")

    def on_join(self, now: float) -> Output:
        """The application joins (or a recovered process rejoins) at local ``now``: a
        fresh state, the join slot, 1 + L join copies to every other process. The
        ``join`` record comes later, at join_OK (``Output.joined``, with ``x_slot`` =
        s_j)."""
        if self.status != OUT:
            raise ValueError(f"{self.name}: joins while {self.status}")
        p = self.p
        s_j = join_slot(now, p.slot, p.max_delay, p.epsilon)
        self._reset(s_j)
        self.status = JOINING
        window = join_window(s_j, p.slot, p.epsilon, literal=p.literal_join)
        self.grace = range(window.start, window.stop - 1)
        self.join_at = p.join_ok(s_j)
        self.requested_at = now
        out = Output()
        if self.app_r is not None:  # join(r): net_reserve(r') from the join slot on
            self.declare = False
            self.shaper.set(s_j, self.app_r)
            out.negotiated = negotiate_fields(self.app_r, s_j, p.window, p.fec_i, p.fec_l,
                                              False)
        others = tuple(k for k in range(self.n) if k != self.index)
        for c in range(1 + p.fec_l):
            out.sends.append(Transmit(Join(self.index, s_j, c), others, True))
        self._finish(now, out)
        return out

    def on_recover(self, now: float) -> Output:
        """A crashed process comes back: its memory is gone, and it rejoins (003 section 2)."""
        self.status = OUT
        return self.on_join(now)

    def on_leave(self, now: float) -> Output:
        """The application leaves: the leave goes into the current slot's stream; the
        process exits at the slot's end. ``fields`` carry ``x_slot``, the leave slot."""
        out = Output()
        self._advance(now, out)
        if self.status != MEMBER:
            raise ValueError(f"{self.name}: leaves while {self.status}")
        s = self.fec.slot
        self.status = LEAVING
        if self.held or not (self.p.unshaped or self.shaper.room(s)):
            # the leave is FEC-sent as an original: it waits its turn behind the held
            # messages (model/qos/reserve.py); the process exits at the end of its slot
            self.held.append(Leave(self.index))
            out.fields = {"x_slot": s, "x_held": True}
        else:
            self._fec_send(Leave(self.index), out)
            out.fields = {"x_slot": s}
        self._finish(now, out)
        return out

    def on_renegotiate(self, r: Reservation, now: float) -> Output:
        """RN(r) (003 section 2.1): the application asks for reservation ``r``; it holds
        from the next slot (model/qos/reserve.py derives it; the variant ``early-rn``: from
        this one). ``out.negotiated``: the fields of the ``negotiate`` record."""
        out = Output()
        self._advance(now, out)
        if self.status == OUT:
            raise ValueError(f"{self.name}: renegotiates while outside the group (003 "
                             "section 2.1: RN is a member's)")
        r = Reservation(*r).check()
        p = self.p
        start = self.fec.slot + (0 if p.early_rn else 1)
        self.app_r = r
        self.shaper.set(start, r)
        out.negotiated = negotiate_fields(r, start, p.window, p.fec_i, p.fec_l, True)
        self._release(out)
        self._finish(now, out)
        return out

    # ---------------------------------------------------------------------- sending

    def _fec_send(self, item: Any, out: Output) -> None:
        """FEC-send an application message or the leave in the current slot."""
        s = self.fec.slot
        self.shaper.count(s)
        if isinstance(item, Leave):
            self.leave_slot = s
            self._count(s, 0, 0)
        else:
            self._count(s, 1, 0)
        self._transmit(self.fec.send(item), out)

    def _release(self, out: Output) -> None:
        """The held messages that fit the current slot go out, in order."""
        while self.held and self.status in (MEMBER, LEAVING) and (
                self.p.unshaped or self.shaper.room(self.fec.slot)):
            self._fec_send(self.held.popleft(), out)

    def _count(self, s: int, originals: int, packets: int) -> None:
        c = self.per_slot.setdefault(s, [0, 0])
        c[0] += originals
        c[1] += packets

    def _transmit(self, packets: list[Packet], out: Output) -> None:
        if not packets:
            return
        everyone = tuple(range(self.n))
        self._count(packets[0].slot, 0, len(packets))
        for pk in packets:
            out.sends.append(Transmit(Data(self.index, pk), everyone))

    def _advance(self, now: float, out: Output) -> None:
        """Bring the process to local time ``now``: join_OK (``join_at``), the end of
        every slot that ended (FEC-end-slot), the exit after a leave."""
        p = self.p
        if self.declare:  # a member from time 0: its reservation, from slot 0
            self.declare = False
            out.negotiated = negotiate_fields(self.app_r, self.first_slot, p.window,  # type: ignore[arg-type]
                                              p.fec_i, p.fec_l, False)
        if self.status == JOINING and now >= self.join_at:  # type: ignore[operator]
            self.status = MEMBER
            out.joined = {"x_slot": self.first_slot, "x_requested": self.requested_at}
        while self.status in (MEMBER, LEAVING) and now >= (self.fec.slot + 1) * p.slot:
            s = self.fec.slot
            self._transmit(self.fec.end_slot(), out)
            if self.status == LEAVING and s == self.leave_slot:
                self.status = OUT  # 003 section 3.3: net_leave and exit; B6: no more deliveries
                return
            self._release(out)

    # ---------------------------------------------------------------------- receiving

    def _record_join(self, j: Join) -> None:
        if j.sender == self.index:
            return
        self.joins_received += 1
        if self.active_from[j.sender] == j.slot and self.rx[j.sender] is None:
            return  # another copy of a join already recorded
        self.active_from[j.sender] = j.slot
        self.rx[j.sender] = None  # the new stream numbers its blocks from 0
        self.queue[j.sender].clear()

    def _fec_receive(self, d: Data) -> None:
        s, pk = d.sender, d.packet
        sender_rx = self.rx[s]
        if sender_rx is None:
            if pk.slot < self.first_slot:
                return  # 3.3: the joiner discards everything of earlier slots
            sender_rx = self.rx[s] = FecReceiver(self.p.fec_l, next_block=pk.block)
        if pk.block < sender_rx.next_block:
            return
        self.queue[s].extend(sender_rx.receive(pk))

    # ---------------------------------------------------------------------- delivery

    def expected(self, k: int, s: int) -> bool:
        a = self.active_from[k]
        return a is not None and a <= s

    def _deliver(self, now: float, out: Output) -> None:
        p, n = self.p, self.n
        while self.status in (MEMBER, LEAVING):  # nothing before join_OK
            s, k = self.dslot, self.didx
            if k == n:
                self.dslot, self.didx = s + 1, 0
                continue
            if not self.expected(k, s):
                self.didx = k + 1
                continue
            q = self.queue[k]
            head = q[0] if q else None
            if head is not None and head[0] < s:
                q.popleft()  # of a slot already done (a timed-out sender's late part)
                continue
            if head is not None and head[0] == s:
                q.popleft()
                if type(head) is Eos:
                    self.didx = k + 1
                    continue
                msg = head[1]
                if isinstance(msg, Leave):
                    self.active_from[k] = None
                    while q and q[0][0] <= s:
                        q.popleft()
                    self.didx = k + 1
                    continue
                self.delivered.append(msg)
                out.delivered.append(Logged(msg, {"x_slot": s}))
                continue
            if now >= p.deadline(s):
                # 3.3: k failed in s (or, in a join window, is not there yet)
                self.timeouts.append((s, k))
                while q and q[0][0] <= s:
                    q.popleft()
                if s not in self.grace and k != self.index:
                    self.active_from[k] = None
                self.didx = k + 1
                continue
            return

    def _finish(self, now: float, out: Output) -> None:
        """Deliver what can be, then ask for the next wake-up (a slot end, a join_OK, or
        the current slot's deadline)."""
        self._deliver(now, out)
        if self.status == OUT:
            return
        p = self.p
        wake = []
        if self.status == JOINING:
            wake.append(self.join_at)
        else:
            wake.append((self.fec.slot + 1) * p.slot)
        wake.append(p.deadline(self.dslot))
        t = min(w for w in wake if w is not None)
        if t > now and t not in self.requested:
            self.requested.add(t)
            out.timer = t
