"""A view-synchronous reliable (unordered) multicast layer with crashes, per process.

Source: 001 (Rodrigues, Fonseca, Verissimo) section 3 and section 5: the hybrid protocol
runs over "a reliable (unordered) multicast mechanism and its associated membership
service" that "follows the virtually-synchronous model": views are linearly ordered
(V^i, V^i+1, ...) and a multicast m is *vs-multicast* in V^i iff, if some p in V^i
delivers m in V^i and installs V^i+1, every q in V^i that installs V^i+1 delivered m
before installing it (section 5, quoting Schiper and Ricciardi). Each view change is
therefore "a synchronization point where all processes are guaranteed to have received
the same messages".

The layer is a pure state machine like the protocol processes (``model/process.py``):
each input returns a :class:`VsStep` with the packets to send and the events for the
layer above (deliveries and view installations, in order). It assumes what the
simulator (``model/sim.py``) and the process fuzzer (``fuzz/process_machine.py``) give:
reliable FIFO links, accurate crash notices (Crash(q) only for a crashed q), and a
notice Crash(q) at p only once every packet q sent has reached p (000 section 5.1; the
simulator's "never before q's last packet reaches p"). Views shrink at crashes and grow
at joins and recoveries (001 gives no procedure for joins, decision A12 of the reading
aid; ours is below).

The view change (a flush with a coordinator)
--------------------------------------------
* A process that learns of a crash in its view, or receives a FLUSH or NEWVIEW of its
  view, *flushes*: it first lets the layer above multicast what it must (``pre_flush``:
  the hybrid sends its issued but unsent tickets), then multicasts FLUSH(v) and from
  then on sends nothing in view v: later multicasts wait in an outbox and go out,
  tagged v+1, once v+1 is installed ("stop sending").
* The coordinator of view v is the lowest process of v not known to have crashed. It
  multicasts NEWVIEW(v+1, members) with every member it knows crashed removed, once, as
  soon as it knows of a crash. A coordinator that crashes after sending NEWVIEW has
  sent it to everybody (one transmit), and the next coordinator only acts after
  Crash(old coordinator), by which time that NEWVIEW has arrived (the notice waits for
  the crashed process's packets): so view v+1 is the same at every process that
  installs it, and views are linear.
* p installs v+1 once it has NEWVIEW(v+1), has flushed, and for every member r of v+1
  has r's FLUSH(v) or knows r crashed; every process of v left out of v+1 is known
  crashed. FIFO links then guarantee that p has every view-v message of every member
  (they precede its FLUSH), and the crash notices that it has every message of the
  crashed ones: every process installing v+1 delivered the same view-v messages.
* Packets of a later view that arrive early (from a process that installed it first)
  wait until p installs that view, then are taken in arrival order.
* After installing, a process that knows of a crash among the new members, or of a
  process waiting to join, starts the next change at once.

Joins and recoveries (001 is silent: our decisions, docs/hybrid.md)
-------------------------------------------------------------------
* A process outside the group (from time 0, or crashed and restarted with no state: a
  new *incarnation*, numbered from a counter on stable storage) multicasts JOIN(p, inc)
  to every other process, members or not, and waits. A member that knows of a waiting
  joiner flushes, and the coordinator proposes NEWVIEW(v+1) with the joiners added
  (``joined``, with their incarnations): a join is one more view change. The joiners
  send no FLUSH (they had no view v); members install as before.
* JOIN(q, inc) reaching a member whose view holds an older incarnation of q means that
  incarnation crashed, and, the links being FIFO, that all of its packets have arrived:
  it counts as Crash(q) (the environment drops a Crash(q) notice still on its way when
  q restarts: ``model/sim.py``). One change may then take q's old incarnation out and
  its new one in (q is both in ``left`` and in ``joined``).
* State transfer: every member of v that installs v+1 sends STATE(v+1) to each joiner:
  the layer's part (members, their incarnations, who left and joined, joiners still
  waiting) and the layer above's state at the end of view v (``VsInstall.transfer``,
  then :meth:`VsyncLayer.state`); the processes that install v+1 delivered the same
  view-v messages, so every STATE of v+1 is the same and the joiner takes the first. The
  joiner installs v+1 from it (``VsInstall.state``); packets of v+1 that reach it before
  are kept until then. It delivers nothing of the views before v+1.
* The coordinator's cut: NEWVIEW(v+1) carries, per process it leaves out, how many
  view-v packets of it the coordinator received (all it sent: the coordinator knows of
  the crash). An installer waits for that many rather than for its own Crash notice,
  which a joiner may never get: Crash(q) goes to the processes up when q crashed, and a
  joiner ignores the notices it gets before its first view (they may be of an
  incarnation that has already rejoined).
* Gossip in the FLUSH: a FLUSH names the joiners its sender knows waiting (a coordinator
  that restarted may have lost their JOINs, sent to its earlier incarnation) and the
  members it knows crashed, each with the number of its view packets received; the
  receiver counts such a member crashed once as many of its packets have arrived (then
  it has all of them, a NEWVIEW it sent included).
* Not covered (a joiner's knowledge in its first view): a member of the joiner's first
  view that crashed before the joiner started, and that the coordinator did not yet
  know crashed, is only known crashed to the joiner through the cut of a view that
  leaves it out; if it is the joiner's coordinator, or in the next proposal without a
  FLUSH, the joiner waits for ever (liveness, never order).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

__all__ = ["Flush", "Join", "NewView", "State", "VsDeliver", "VsInstall", "VsMsg", "VsStep",
           "VsyncLayer"]


class VsMsg(NamedTuple):
    """A vs-multicast ``payload`` of ``sender``, sent in view ``view``; ``seq`` counts the
    sender's multicasts (it names the packet in traces)."""

    view: int
    sender: int
    seq: int
    payload: Any


class Flush(NamedTuple):
    """``sender`` has sent its last message of view ``view``; it tells of the joiners it
    knows waiting (process, incarnation) and of the members it knows crashed, each with
    how many packets of the view it received from it (module docstring)."""

    view: int
    sender: int
    waiting: tuple[tuple[int, int], ...] = ()
    down: tuple[tuple[int, int], ...] = ()


class NewView(NamedTuple):
    """The coordinator ``sender`` of view ``view - 1`` proposes view ``view``:
    ``joined`` the processes it admits, with their incarnations; ``cut`` how many packets
    of view ``view - 1`` it received from each process it leaves out (module
    docstring)."""

    view: int
    sender: int
    members: tuple[int, ...]
    joined: tuple[tuple[int, int], ...] = ()
    cut: tuple[tuple[int, int], ...] = ()


class Join(NamedTuple):
    """``sender``, outside the group, asks to join as its incarnation ``incarnation``."""

    sender: int
    incarnation: int


class State(NamedTuple):
    """The state transfer of view ``view`` to its joiners, from ``sender``, a member of
    the view before: the view's members, who ``left`` and ``joined`` at this change,
    every member's incarnation, the joiners still ``waiting`` (process, incarnation),
    and the layer above's state at the end of the view before (``upper``)."""

    view: int
    sender: int
    members: tuple[int, ...]
    left: tuple[int, ...]
    joined: tuple[tuple[int, int], ...]
    incarnations: tuple[tuple[int, int], ...]
    waiting: tuple[tuple[int, int], ...]
    admitted: tuple[tuple[int, int], ...] = ()
    upper: Any = None


class VsDeliver(NamedTuple):
    """Event: deliver ``payload`` of ``sender`` (in the current view)."""

    sender: int
    payload: Any


class VsInstall(NamedTuple):
    """Event: view ``view`` with ``members`` is installed; ``left`` crashed out of it (a
    process that rejoins is in ``left`` and in ``joined``: its old incarnation left).
    ``transfer``: at a member of the view before when processes joined, what
    :meth:`VsyncLayer.state` needs to send them the state; ``state``: at a joiner, the
    layer above's state it was sent (its first view)."""

    view: int
    members: tuple[int, ...]
    left: tuple[int, ...]
    joined: tuple[int, ...] = ()
    transfer: Any = None
    state: Any = None


@dataclass
class VsStep:
    """Packets to send (``(packet, to)``, the sender among ``to`` when it is a member)
    and events for the layer above, in order."""

    sends: list[tuple[Any, tuple[int, ...]]] = field(default_factory=list)
    events: list[VsDeliver | VsInstall] = field(default_factory=list)


def _agreed(st: State) -> tuple:
    """What every STATE of one view must agree on."""
    return st.members, st.left, st.joined, st.incarnations, st.upper


def _tag(packet: Any) -> int:
    """The view a packet belongs to: the view it was sent in (a NEWVIEW is sent in the
    view before the one it proposes)."""
    return packet.view - 1 if type(packet) is NewView else packet.view


class VsyncLayer:
    """The layer at process ``index`` of the group ``range(n)`` (module docstring).
    ``members``: the first view (default every process); ``outside``: the process is not
    in the group and joins with :meth:`join`, as its incarnation ``incarnation``.

    >>> a, b = VsyncLayer(0, 2), VsyncLayer(1, 2)
    >>> (pkt, to), = a.multicast("hello").sends
    >>> b.receive(pkt).events
    [VsDeliver(sender=0, payload='hello')]
    >>> a.receive(pkt).events     # a process's own message comes back to it
    [VsDeliver(sender=0, payload='hello')]
    >>> st = a.crash(1)           # a coordinates: NEWVIEW to itself
    >>> [type(p).__name__ for p, _ in st.sends]
    ['Flush', 'NewView']
    >>> a.receive(st.sends[1][0]).events
    [VsInstall(view=1, members=(0,), left=(1,), joined=(), transfer=None, state=None)]
    """

    def __init__(self, index: int, n: int,
                 pre_flush: Callable[[], Iterable[Any]] | None = None, *,
                 members: Iterable[int] | None = None, outside: bool = False,
                 incarnation: int = 0) -> None:
        self.index, self.n = index, n
        self.view = 0
        self.members: tuple[int, ...] = () if outside else tuple(
            sorted(range(n) if members is None else members))
        if not outside and index not in self.members:
            raise ValueError(f"process {index} is not in its first view {self.members}")
        self.installed = not outside
        #: this incarnation's first view (packets of views before it were sent to an
        #: earlier incarnation)
        self.first = 0
        self.incarnation = incarnation
        #: each member's incarnation
        self.incs: dict[int, int] = dict.fromkeys(self.members, 0)
        #: processes waiting to join, with their incarnations
        self.joiners: dict[int, int] = {}
        #: per process, the last incarnation the group admitted (a JOIN of it or of an
        #: earlier one is old news)
        self.admitted: dict[int, int] = dict(self.incs)
        #: joiners known crashed before their admission (process -> incarnation)
        self.dead: dict[int, int] = {}
        #: members whose current incarnation is known crashed, all its packets here
        self.crashed: set[int] = set()
        #: per member, its packets of the current view received (the coordinator's cut)
        self.got: dict[int, int] = {}
        #: members others know crashed, with how many packets of the view they sent
        #: (known crashed here once that many have arrived)
        self.told: dict[int, int] = {}
        self.flushed = False
        self.flushes: set[int] = set()
        self.proposal: NewView | None = None
        self.proposed = False  # this process sent NEWVIEW(view + 1)
        self.outbox: list[Any] = []
        self.early: list[Any] = []
        self.seq = 0
        #: own messages of the current view sent, and received back: a view is installed
        #: only once they are back (else one input could install two views, and its own
        #: message of the first come back in the second)
        self.own_sent = self.own_got = 0
        self.pre_flush = pre_flush
        #: the STATE this incarnation joined with (later copies must equal it)
        self.transferred: State | None = None

    # ------------------------------------------------------------------ queries

    @property
    def blocked(self) -> bool:
        """True while a view change is under way (or the process has not joined yet):
        multicasts wait in the outbox."""
        return self.flushed or not self.installed

    def coordinator(self) -> int:
        return min(m for m in self.members if m not in self.crashed)

    # ------------------------------------------------------------------ inputs

    def multicast(self, payload: Any, step: VsStep | None = None) -> VsStep:
        """vs-multicast ``payload`` to the view (itself included); held in the outbox
        during a view change."""
        step = VsStep() if step is None else step
        if self.blocked:
            self.outbox.append(payload)
        else:
            self._send(payload, step)
        return step

    def join(self) -> VsStep:
        """Ask to join: JOIN to every other process (module docstring)."""
        if self.installed:
            raise ValueError(f"process {self.index} joins while a member")
        others = tuple(j for j in range(self.n) if j != self.index)
        return VsStep(sends=[(Join(self.index, self.incarnation), others)])

    def state(self, ev: VsInstall, upper: Any) -> VsStep:
        """The STATE packets of an installation with joiners (``ev.transfer``), with the
        layer above's state ``upper`` at the end of the view before."""
        step = VsStep()
        if ev.transfer is not None:
            step.sends.append((State(*ev.transfer, upper=upper), ev.joined))
        return step

    def receive(self, packet: Any) -> VsStep:
        step = VsStep()
        self._take(packet, step)
        self._progress(step)
        return step

    def crash(self, q: int) -> VsStep:
        """Crash(q) from the membership service."""
        step = VsStep()
        if q == self.index:
            raise ValueError(f"process {self.index} is told of its own crash")
        if not self.installed:
            return step  # of an incarnation that may have rejoined (module docstring)
        if q in self.joiners:  # a joiner (perhaps admitted by a proposal) crashed
            self.dead[q] = self.joiners.pop(q)
        elif q in self.members:
            self.crashed.add(q)
        self._progress(step)
        return step

    # ------------------------------------------------------------------ internal

    def _send(self, payload: Any, step: VsStep) -> None:
        self.seq += 1
        self.own_sent += 1
        step.sends.append((VsMsg(self.view, self.index, self.seq, payload), self.members))

    def _wants(self, q: int, inc: int) -> bool:
        """Is incarnation ``inc`` of ``q`` a joiner not yet admitted nor known dead?"""
        return inc > self.admitted.get(q, -1) and inc > self.joiners.get(q, -1) and \
            self.dead.get(q) != inc

    def _on_join(self, j: Join) -> None:
        q, inc = j.sender, j.incarnation
        if self.installed and q in self.members:
            if inc <= self.incs[q]:
                return  # the JOIN that admitted it
            self.crashed.add(q)  # its old incarnation: all its packets are here (FIFO)
        if self._wants(q, inc):
            self.joiners[q] = inc

    def _take(self, packet: Any, step: VsStep) -> None:
        cls = type(packet)
        if cls is Join:
            self._on_join(packet)
            return
        if cls is State:
            if not self.installed and (self.index, self.incarnation) in packet.joined:
                self._install_from(packet, step)
                self.transferred = packet
            elif self.transferred is not None and packet.view == self.transferred.view \
                    and _agreed(packet) != _agreed(self.transferred):
                # every member that installs the view sends one: the same, by view
                # synchrony (the joiners each knows waiting may differ)
                raise ValueError(f"process {self.index}: two different states of view "
                                 f"{packet.view}, from {self.transferred.sender} and "
                                 f"{packet.sender}")
            return
        tag = _tag(packet)
        if not self.installed or tag > self.view:
            self.early.append(packet)  # of a view not installed here yet
            return
        if tag == self.view:
            self.got[packet.sender] = self.got.get(packet.sender, 0) + 1
        if cls is VsMsg:
            if packet.view < self.first:
                return  # sent to this process's previous incarnation
            if packet.sender == self.index:
                self.own_got += 1
            if packet.view != self.view:
                raise ValueError(f"process {self.index}: message {packet} of view {packet.view} in "
                                 f"view {self.view} (the flush should prevent it)")
            step.events.append(VsDeliver(packet.sender, packet.payload))
        elif cls is Flush:
            if packet.view == self.view:
                self.flushes.add(packet.sender)
                for q, inc in packet.waiting:
                    if q not in self.members and self._wants(q, inc):
                        self.joiners[q] = inc
                for q, k in packet.down:
                    if q in self.members and q not in self.crashed:
                        self.told[q] = max(self.told.get(q, 0), k)
                self._flush(step)
        elif cls is NewView:
            if packet.view == self.view + 1:
                if self.proposal is not None and self.proposal[2:] != packet[2:]:
                    raise ValueError(f"process {self.index}: two proposals for view "
                                     f"{packet.view}: {self.proposal} and {packet}")
                self.proposal = packet
                self._flush(step)
        else:
            raise TypeError(f"not a view-synchronous packet: {packet!r}")

    def _flush(self, step: VsStep) -> None:
        if self.flushed:
            return
        if self.pre_flush is not None:
            for payload in self.pre_flush():
                self._send(payload, step)
        self.flushed = True
        down = tuple((q, self.got.get(q, 0)) for q in sorted(self.crashed))
        step.sends.append((Flush(self.view, self.index, tuple(sorted(self.joiners.items())),
                                 down), self.members))

    def _progress(self, step: VsStep) -> None:
        """Start, coordinate and complete view changes as far as possible."""
        while self.installed:
            for q, k in list(self.told.items()):  # all its packets of the view are here
                if self.got.get(q, 0) >= k:
                    self.crashed.add(q)
                    del self.told[q]
            if self.proposal is None:
                if not self.joiners and not any(m in self.crashed for m in self.members):
                    return
                self._flush(step)
                if self.coordinator() == self.index and not self.proposed:
                    self.proposed = True
                    members = tuple(sorted({m for m in self.members if m not in self.crashed}
                                           | set(self.joiners)))
                    cut = tuple((m, self.got.get(m, 0)) for m in self.members
                                if m in self.crashed)
                    # it reaches this process at once (a send to itself), which installs
                    # then
                    step.sends.append((NewView(self.view + 1, self.index, members,
                                               tuple(sorted(self.joiners.items())), cut),
                                       members))
                return
            if not self._installable():
                return
            self._install(step)

    def _installable(self) -> bool:
        prop = self.proposal
        if prop is None or not self.flushed or self.own_got < self.own_sent:
            return False
        joined = dict(prop.joined)
        cut = dict(prop.cut)
        for m in self.members:
            if m == self.index:
                continue
            if m not in prop.members or m in joined:  # (its old incarnation) leaves
                if m not in self.crashed and self.got.get(m, 0) < cut.get(m, 1 << 62):
                    return False
            elif m not in self.flushes and m not in self.crashed:
                return False
        return True

    def _install(self, step: VsStep) -> None:
        prop = self.proposal
        assert prop is not None
        joined = dict(prop.joined)
        left = tuple(m for m in self.members if m not in prop.members or m in joined)
        self.view += 1
        self.members = prop.members
        self.incs = {m: joined.get(m, self.incs.get(m, 0)) for m in self.members}
        self.admitted.update(joined)
        # what it knew of them was of an old incarnation, unless the new one crashed too
        self.crashed -= set(joined)
        self.crashed |= {q for q, inc in joined.items() if self.dead.get(q) == inc}
        self._admitted()
        self.proposal, self.proposed, self.flushed = None, False, False
        self.flushes = set()
        transfer = None
        if joined:
            transfer = (self.view, self.index, self.members, left, prop.joined,
                        tuple(sorted(self.incs.items())), tuple(sorted(self.joiners.items())),
                        tuple(sorted(self.admitted.items())))
        step.events.append(VsInstall(self.view, self.members, left, tuple(joined), transfer))
        self._resume(step)

    def _admitted(self) -> None:
        """After a new view: crashes known of its members only (a process that rejoined
        is its new incarnation), joiners that are not in it yet, counts afresh."""
        self.crashed = {m for m in self.crashed if m in self.incs}
        self.joiners = {q: inc for q, inc in self.joiners.items()
                        if inc > self.admitted.get(q, -1)}
        for q in self.joiners:  # a JOIN of a newer incarnation of a member (module doc)
            if q in self.incs:
                self.crashed.add(q)
        self.got = {}
        self.told = {}
        self.own_sent = self.own_got = 0

    def _install_from(self, st: State, step: VsStep) -> None:
        """The joiner's first view, from a STATE."""
        self.installed = True
        self.view, self.members, self.first = st.view, st.members, st.view
        self.incs = dict(st.incarnations)
        self.admitted = dict(st.admitted)
        for q, inc in st.waiting:
            if inc > self.joiners.get(q, -1):
                self.joiners[q] = inc
        self.crashed = set()
        self._admitted()
        step.events.append(VsInstall(st.view, st.members, st.left,
                                     tuple(q for q, _ in st.joined), None, st.upper))
        self._resume(step)

    def _resume(self, step: VsStep) -> None:
        """The new view's sends, then its packets that came early (older ones dropped:
        a joiner gets no packet of a view before its first)."""
        waiting, self.outbox = self.outbox, []
        for payload in waiting:
            self._send(payload, step)
        early, self.early = self.early, []
        for packet in early:
            if _tag(packet) >= self.view:
                self._take(packet, step)
