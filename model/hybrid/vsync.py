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
simulator's "never before q's last packet reaches p"). Views only shrink (001 gives no
procedure for joins; decision A12 of the reading aid).

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
* After installing, a process that knows of a crash among the new members starts the
  next change at once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

__all__ = ["Flush", "NewView", "VsDeliver", "VsInstall", "VsMsg", "VsStep", "VsyncLayer"]


class VsMsg(NamedTuple):
    """A vs-multicast ``payload`` of ``sender``, sent in view ``view``; ``seq`` counts the
    sender's multicasts (it names the packet in traces)."""

    view: int
    sender: int
    seq: int
    payload: Any


class Flush(NamedTuple):
    """``sender`` has sent its last message of view ``view``."""

    view: int
    sender: int


class NewView(NamedTuple):
    """The coordinator ``sender`` of view ``view - 1`` proposes view ``view``."""

    view: int
    sender: int
    members: tuple[int, ...]


class VsDeliver(NamedTuple):
    """Event: deliver ``payload`` of ``sender`` (in the current view)."""

    sender: int
    payload: Any


class VsInstall(NamedTuple):
    """Event: view ``view`` with ``members`` is installed; ``left`` crashed out of it."""

    view: int
    members: tuple[int, ...]
    left: tuple[int, ...]


@dataclass
class VsStep:
    """Packets to send (``(packet, to)``, the sender among ``to`` when it is a member)
    and events for the layer above, in order."""

    sends: list[tuple[Any, tuple[int, ...]]] = field(default_factory=list)
    events: list[VsDeliver | VsInstall] = field(default_factory=list)


class VsyncLayer:
    """The layer at process ``index`` of the group ``range(n)`` (module docstring).

    >>> a, b = VsyncLayer(0, 2), VsyncLayer(1, 2)
    >>> (pkt, to), = a.multicast("hello").sends
    >>> b.receive(pkt).events
    [VsDeliver(sender=0, payload='hello')]
    >>> st = a.crash(1)           # a coordinates: NEWVIEW to itself
    >>> [type(p).__name__ for p, _ in st.sends]
    ['Flush', 'NewView']
    >>> a.receive(st.sends[1][0]).events
    [VsInstall(view=1, members=(0,), left=(1,))]
    """

    def __init__(self, index: int, n: int,
                 pre_flush: Callable[[], Iterable[Any]] | None = None) -> None:
        self.index = index
        self.view = 0
        self.members: tuple[int, ...] = tuple(range(n))
        self.crashed: set[int] = set()
        self.flushed = False
        self.flushes: set[int] = set()
        self.proposal: tuple[int, ...] | None = None
        self.proposed = False  # this process sent NEWVIEW(view + 1)
        self.outbox: list[Any] = []
        self.early: list[Any] = []
        self.seq = 0
        self.pre_flush = pre_flush

    # ------------------------------------------------------------------ queries

    @property
    def blocked(self) -> bool:
        """True while a view change is under way: multicasts wait in the outbox."""
        return self.flushed

    def coordinator(self) -> int:
        return min(m for m in self.members if m not in self.crashed)

    # ------------------------------------------------------------------ inputs

    def multicast(self, payload: Any, step: VsStep | None = None) -> VsStep:
        """vs-multicast ``payload`` to the view (itself included); held in the outbox
        during a view change."""
        step = VsStep() if step is None else step
        if self.flushed:
            self.outbox.append(payload)
        else:
            self._send(payload, step)
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
        self.crashed.add(q)
        self._progress(step)
        return step

    # ------------------------------------------------------------------ internal

    def _send(self, payload: Any, step: VsStep) -> None:
        self.seq += 1
        step.sends.append((VsMsg(self.view, self.index, self.seq, payload), self.members))

    def _take(self, packet: Any, step: VsStep) -> None:
        cls = type(packet)
        if packet.view > self.view + (cls is NewView):
            self.early.append(packet)  # of a view not installed here yet
            return
        if cls is VsMsg:
            if packet.view != self.view:
                raise ValueError(f"process {self.index}: message of view {packet.view} in "
                                 f"view {self.view} (the flush should prevent it)")
            step.events.append(VsDeliver(packet.sender, packet.payload))
        elif cls is Flush:
            if packet.view == self.view:
                self.flushes.add(packet.sender)
                self._flush(step)
        elif cls is NewView:
            if packet.view == self.view + 1:
                if self.proposal is not None and self.proposal != packet.members:
                    raise ValueError(f"process {self.index}: two proposals for view "
                                     f"{packet.view}: {self.proposal} and {packet.members}")
                self.proposal = packet.members
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
        step.sends.append((Flush(self.view, self.index), self.members))

    def _progress(self, step: VsStep) -> None:
        """Start, coordinate and complete view changes as far as possible."""
        while True:
            if self.proposal is None:
                if not any(m in self.crashed for m in self.members):
                    return
                self._flush(step)
                if self.coordinator() == self.index and not self.proposed:
                    self.proposed = True
                    members = tuple(m for m in self.members if m not in self.crashed)
                    # it reaches this process at once (a send to itself), which installs
                    # then
                    step.sends.append((NewView(self.view + 1, self.index, members),
                                       members))
                return
            if not self._installable():
                return
            self._install(step)

    def _installable(self) -> bool:
        if self.proposal is None or not self.flushed:
            return False
        if any(m not in self.crashed for m in self.members if m not in self.proposal):
            return False
        return all(r in self.flushes or r in self.crashed or r == self.index
                   for r in self.proposal)

    def _install(self, step: VsStep) -> None:
        assert self.proposal is not None
        left = tuple(m for m in self.members if m not in self.proposal)
        self.view += 1
        self.members = self.proposal
        self.proposal, self.proposed, self.flushed = None, False, False
        self.flushes = set()
        step.events.append(VsInstall(self.view, self.members, left))
        waiting, self.outbox = self.outbox, []
        for payload in waiting:
            self._send(payload, step)
        early, self.early = self.early, []
        for packet in early:
            self._take(packet, step)
