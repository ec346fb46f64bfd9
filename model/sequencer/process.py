"""The fixed-sequencer total-order broadcast as a deterministic process state machine.

Source: Défago, Schiper and Urbán, "Total order broadcast and multicast algorithms:
taxonomy and survey", ACM Computing Surveys 36(4), 2004, section 4.1 (fixed sequencer).
The survey names three ways to run a fixed sequencer: UB (unicast-broadcast: the sender
unicasts m to the sequencer, which broadcasts m with its number), BB
(broadcast-broadcast: the sender broadcasts m to everybody and the sequencer broadcasts
only m's number), and UUB (the sender asks the sequencer for a number, then broadcasts).
This model is **BB**: every process receives every message from its sender, and the
sequencer's packets carry identifiers and numbers only. We chose BB because a crashed
sequencer then takes no message with it (every survivor has, or will get, the message
itself from its sender), so the view change is about numbers alone, which is what the
survey's failure discussion and this model's broken variant are about.

The protocol
------------
* Broadcast. A process sends ``m`` to the group (itself included) as :class:`Data`.
* Numbering. The sequencer, on receiving a message it has no number for, gives it the
  next sequence number and broadcasts :class:`Order` ``(m, seq)`` to the group (itself
  included).
* Delivery. A process delivers in sequence-number order: the message numbered
  ``next_deliver`` once it has both its number and the message itself. An order for a
  message, or for a number, already taken is ignored (the first order wins): in a correct
  run that never happens; the broken variant below makes it happen.

The view change (the sequencer's crash)
---------------------------------------
The survey's fixed-sequencer algorithms hand the sequencer's crash to a group membership
service (a view change). Here the membership is the perfect failure detector of the one
process interface: Crash(q) reaches every survivor after q's last packet (model/sim.py,
fuzz/process_machine.py). The sequencer is the lowest-indexed process not known to have
crashed. When a process's sequencer changes to ``s``:

1. *Flush.* The process sends ``s`` a :class:`Report` of every order it knows
   (``(seq, m)`` pairs). ``s`` itself waits for the report of every process it does not
   know to have crashed (a Crash notice ends the wait for that one).
2. *Takeover.* ``s`` takes the union of its own orders and the reports, broadcasts it as
   :class:`Takeover` (a survivor that missed one of the old sequencer's orders learns it
   here) and goes on numbering from the **highest** number in the union, first the
   messages it holds without a number (in reception order), then every new one.

A survivor reports only after its own Crash notice, hence after the old sequencer's last
packet reached it; so the new sequencer numbers nothing before every survivor has all the
old sequencer's orders, and no number is given twice. On the drivers' networks (every
packet of a crashed process still arrives) the flush adds nothing the new sequencer did
not already see itself; it is the protocol's part for networks where it does
(``specs/Sequencer/``: a crash may cut a broadcast short), and the variant below shows
what skipping it costs even here.

Broken variant ``no-flush`` (kept for the checker, the fuzzer and TLC to catch): the new
sequencer skips the flush and takes its own delivered prefix for the whole order: it goes
on from ``next_deliver`` (one past the last number it delivered), forgets every order it
holds beyond that, and numbers afresh every message it has received and not delivered.
A number the old sequencer gave a message the new one has not received yet (BB: the
order can overtake the message) is given again, to another message; a survivor that
delivered the first one and the new sequencer then deliver two messages in opposite
orders.

Trace records: ``send`` with ``deps`` (the sender's previous message and the last one it
delivered: the order is causal, docs/sequencer.md), ``recv`` of each data message,
``deliver`` with ``x_seq``. With ``control_records`` (the default) also a ``recv`` of
each protocol packet, with its content, so that ``tomkit conform`` can replay the run:
``<m>/order/<by>`` (``x_packet`` "order", ``x_of``, ``x_seq``, ``x_from``),
``flush/<from>/<to>`` (``x_packet`` "report", ``x_from``, ``x_to``, ``x_orders``),
``takeover/<by>`` (``x_packet`` "takeover", ``x_from``, ``x_orders``) and each Crash
notice, ``crash/<q>`` with ``x_crash`` (as the ToTo family logs it). ``x_orders`` lists
``"seq:m"`` strings, ascending. None of them is ever sent by the application (no
``send`` record), so no property reads them as application messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from ..process import Logged, Output, Transmit, View

__all__ = ["VARIANTS", "Data", "Order", "Report", "SequencerProcess", "Takeover",
           "parse_orders"]

#: the broken variants (the protocol's ``variant`` option), each with what it breaks
VARIANTS: dict[str, str] = {
    "no-flush": "the new sequencer skips the flush: it goes on from the last number it "
                "delivered, not the highest the old sequencer gave, and numbers a message "
                "a second time",
}

Orders = tuple[tuple[int, str], ...]


class Data(NamedTuple):
    """Application message ``mid`` broadcast by process ``sender``."""

    mid: str
    sender: int


class Order(NamedTuple):
    """The sequencer ``by`` gives ``mid`` the sequence number ``seq`` (from 1)."""

    mid: str
    seq: int
    by: int


class Report(NamedTuple):
    """The flush: process ``frm`` tells ``to``, its new sequencer, every order it knows,
    as ``(seq, mid)`` pairs in ascending order."""

    frm: int
    to: int
    orders: Orders


class Takeover(NamedTuple):
    """The new sequencer ``by``'s union of the reports, broadcast before it numbers
    anything."""

    by: int
    orders: Orders


def format_orders(orders: Orders) -> list[str]:
    return [f"{s}:{m}" for s, m in orders]


def parse_orders(items: Sequence[str]) -> Orders:
    """``x_orders`` back to ``(seq, mid)`` pairs; ValueError naming a bad item."""
    out = []
    for x in items:
        s, sep, m = str(x).partition(":")
        if not sep or not s.isdigit() or not m:
            raise ValueError(f"x_orders: {x!r} is not SEQ:MESSAGE")
        out.append((int(s), m))
    return tuple(out)


class SequencerProcess:
    """One process of the fixed-sequencer protocol (module docstring), index ``index``
    of the group ``names``.

    >>> ps = [SequencerProcess(i, ["p0", "p1"]) for i in range(2)]
    >>> data = ps[1].on_send("p1.1", 0.0).sends[0].packet
    >>> order = ps[0].on_receive(data, 0.1).sends[0].packet
    >>> order
    Order(mid='p1.1', seq=1, by=0)
    >>> [m for m, _ in ps[1].on_receive(order, 0.2).delivered]
    ['p1.1']
    """

    protocol = "sequencer"

    def __init__(self, index: int, names: Sequence[str], *, variant: str | None = None,
                 control_records: bool = True) -> None:
        if variant is not None and variant not in VARIANTS:
            raise ValueError(f"variant must be one of {', '.join(VARIANTS)}, not {variant!r}")
        if not 0 <= index < len(names):
            raise ValueError(f"index {index} is not in a group of {len(names)}")
        self.index = index
        self.names = tuple(names)
        self.name = self.names[index]
        self.variant = variant
        self.control_records = control_records
        self.group = tuple(range(len(self.names)))
        #: processes known to have crashed; the sequencer is the lowest index not in it
        self.crashed: set[int] = set()
        self.sequencer = 0
        #: the messages received (mid -> sender)
        self.data: dict[str, int] = {}
        #: the order known: mid -> seq and seq -> mid
        self.seq_of: dict[str, int] = {}
        self.at: dict[int, str] = {}
        self.next_deliver = 1
        self.delivered: list[str] = []
        #: received messages with no number yet, in reception order
        self.unordered: dict[str, None] = {}
        # ---- the sequencer's part
        #: whether it numbers messages now (the first sequencer from the start, a new one
        #: once its flush is over)
        self.numbering = index == 0
        self.next_seq = 1
        #: during its flush, the processes whose report it waits for
        self.waiting: set[int] | None = None
        #: reports addressed to this process, by reporter
        self.reports: dict[int, Orders] = {}
        # ---- figures and logged deps
        self.orders_sent = self.reports_sent = self.takeovers = 0
        self._last_sent: str | None = None
        self._last_delivered: str | None = None
        self._everyone = self.group

    # ------------------------------------------------------------- the interface

    def on_send(self, mid: str, now: float) -> Output:
        """The application broadcasts ``mid`` to the group, itself included."""
        if mid in self.data:
            raise ValueError(f"{self.name}: message id {mid!r} is used already")
        out = Output()
        out.deps = [m for m in dict.fromkeys((self._last_sent, self._last_delivered))
                    if m is not None]
        self._last_sent = mid
        out.sends.append(Transmit(Data(mid, self.index), self._everyone))
        return out

    def on_receive(self, packet: Any, now: float) -> Output:
        out = Output()
        cls = type(packet)
        if cls is Data:
            self._on_data(packet, out)
        elif cls is Order:
            self._log(out, f"{packet.mid}/order/{self.names[packet.by]}",
                      {"x_packet": "order", "x_of": packet.mid, "x_seq": packet.seq,
                       "x_from": self.names[packet.by]})
            self._adopt(packet.mid, packet.seq)
        elif cls is Report:
            self._log(out, f"flush/{self.names[packet.frm]}/{self.names[packet.to]}",
                      {"x_packet": "report", "x_from": self.names[packet.frm],
                       "x_to": self.names[packet.to],
                       "x_orders": format_orders(packet.orders)})
            self._on_report(packet, out)
        elif cls is Takeover:
            self._log(out, f"takeover/{self.names[packet.by]}",
                      {"x_packet": "takeover", "x_from": self.names[packet.by],
                       "x_orders": format_orders(packet.orders)})
            for s, m in packet.orders:
                self._adopt(m, s)
        else:
            raise TypeError(f"{self.name}: not a packet of the sequencer protocol: "
                            f"{packet!r}")
        self._deliver(out)
        return out

    def on_timer(self, now: float) -> Output:
        return Output()  # asks for none

    def on_crash(self, q: int, now: float) -> Output:
        """Crash(q): if q was the sequencer, the view change (module docstring)."""
        if q == self.index or not 0 <= q < len(self.names):
            raise ValueError(f"{self.name}: Crash({q}) of no other process of the group")
        out = Output()
        self._log(out, f"crash/{self.names[q]}", {"x_crash": self.names[q]})
        if q in self.crashed:
            return out
        self.crashed.add(q)
        if self.waiting is not None:
            self.waiting.discard(q)
        new = min(j for j in self.group if j not in self.crashed)
        if new != self.sequencer:
            self.sequencer = new
            if new == self.index:
                self._become_sequencer(out)
            else:
                self.reports_sent += 1
                out.sends.append(Transmit(Report(self.index, new, self._known()), (new,),
                                          True))
        elif self.waiting is not None and not self.waiting:
            self._take_over(out)
        self._deliver(out)
        return out

    def on_view(self, view: View, now: float) -> Output:
        raise ValueError(f"{self.name}: the sequencer protocol runs its own view change on "
                         "Crash notices; it takes no views from a membership service")

    # ------------------------------------------------------------------ the rules

    def _on_data(self, m: Data, out: Output) -> None:
        if m.mid in self.data:
            raise ValueError(f"{self.name}: message {m.mid!r} received twice")
        self.data[m.mid] = m.sender
        out.received.append(Logged(m.mid, None))
        if m.mid not in self.seq_of:
            self.unordered[m.mid] = None
            if self.numbering:
                self._number(out)

    def _adopt(self, mid: str, seq: int) -> None:
        """Learn that ``mid`` has number ``seq``, unless either is taken (first wins)."""
        if mid in self.seq_of or seq in self.at:
            return
        self.seq_of[mid] = seq
        self.at[seq] = mid
        self.unordered.pop(mid, None)

    def _number(self, out: Output) -> None:
        """The sequencer numbers every received message that has none, in reception
        order, and broadcasts the orders (it learns them as it receives its own)."""
        for mid in list(self.unordered):
            s = self.next_seq
            self.next_seq += 1
            self.orders_sent += 1
            out.sends.append(Transmit(Order(mid, s, self.index), self._everyone, True))
        self.unordered.clear()

    def _become_sequencer(self, out: Output) -> None:
        if self.variant == "no-flush":
            # the fault: its delivered prefix taken for the whole order
            for s in [s for s in self.at if s >= self.next_deliver]:
                del self.seq_of[self.at.pop(s)]
            self.unordered = {m: None for m in self.data if m not in self.seq_of}
            self.next_seq = self.next_deliver
            self.numbering = True
            self.takeovers += 1
            self._number(out)
            return
        self.waiting = {j for j in self.group
                        if j != self.index and j not in self.crashed and j not in self.reports}
        if not self.waiting:
            self._take_over(out)

    def _on_report(self, r: Report, out: Output) -> None:
        if r.to != self.index:
            raise ValueError(f"{self.name}: a flush report for {self.names[r.to]}")
        if self.variant == "no-flush":
            return  # the fault: it took over without waiting for the survivors' reports
        if r.frm in self.reports:
            raise ValueError(f"{self.name}: a second flush report from {self.names[r.frm]}")
        if self.numbering:
            raise ValueError(f"{self.name}: a flush report from {self.names[r.frm]} after "
                             "its takeover")
        self.reports[r.frm] = r.orders
        if self.waiting is not None:
            self.waiting.discard(r.frm)
            if not self.waiting:
                self._take_over(out)

    def _take_over(self, out: Output) -> None:
        """The flush is over: the union of the orders, then number from the highest."""
        self.waiting = None
        for orders in self.reports.values():
            for s, m in orders:
                self._adopt(m, s)
        union = self._known()
        self.next_seq = max((s for s, _ in union), default=0) + 1
        self.numbering = True
        self.takeovers += 1
        out.sends.append(Transmit(Takeover(self.index, union), self._everyone, True))
        self._number(out)

    def _known(self) -> Orders:
        return tuple(sorted(self.at.items()))

    def _deliver(self, out: Output) -> None:
        at, data = self.at, self.data
        while True:
            mid = at.get(self.next_deliver)
            if mid is None or mid not in data:
                return
            out.delivered.append(Logged(mid, {"x_seq": self.next_deliver}))
            self.delivered.append(mid)
            self._last_delivered = mid
            self.next_deliver += 1

    def _log(self, out: Output, msg: str, fields: dict[str, Any]) -> None:
        if self.control_records:
            out.received.append(Logged(msg, fields))
