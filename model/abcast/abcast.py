"""ABCAST (Skeen; ISIS) as a deterministic process state machine.

Source: 004 (Dasser, "TOMP: A Total Ordering Multicast Protocol") section 2, which
restates the ABCAST of Birman and Joseph [BirJos87], and its Figure 1 (three hosts, the
greatest timestamps used before are 14.1, 15.2 and 16.3).

The protocol (004 section 2.1)
------------------------------
* Dissemination phase (2.1.1). The emitter multicasts m to the group (itself included).
  A host receiving a new message increments its *counter* (a "local sequence number
  incremented after each new message reception"), gives m the *local timestamp*
  ``counter.hostid`` (:class:`Timestamp`; the host id postfix makes timestamps unique in
  the group), puts it in its reception queue (*R_Queue*) labelled undeliverable
  (:data:`UD`), and sends the emitter an acknowledgement carrying that timestamp
  (:class:`Ack`).
* Decision phase (2.1.2). When the emitter has the acknowledgements of all hosts it
  multicasts a validation message with the greatest proposed timestamp, the *final
  timestamp* (:class:`Final`). A host receiving it gives m the final timestamp, labels
  it deliverable (:data:`DL`) and reorders its queue in ascending timestamp order. A
  message is delivered iff (1) it is labelled dl and (2) it is at the head of the queue.

Decision: raising the counter on a final timestamp. 004 says only that the counter is
"incremented after each new message reception". Read literally, that is not a total
order: host h may deliver m (final timestamp T, proposed by another host) and then
receive m' and propose for it less than T, while a host that got m' before m holds m'
below T as well; m' then ends below T and is delivered before m there, after m at h.
Skeen's algorithm (and [BirJos87]: a priority "larger than any it has assigned or
seen") also moves the counter past every final timestamp a host learns:
``counter <- max(counter, final.counter)`` when the validation message arrives. We do
that by default (``raise_counter=True``); it changes nothing in Figure 1 (every
reception there comes before every decision). ``raise_counter=False`` is the literal
reading; tests/model/abcast/test_sim_abcast_tomp.py shows the checker catching its violations.

Everything else follows the rules; where Figure 1 disagrees with them the rules win:
Figure 1 step 2 shows m2 at host1 with 16.1, but host1 gave m2 17.1 in step 1 and
ABCAST never changes an undeliverable timestamp (16.1 was m1's proposal, which m1 has
just given up for 17.3). tests/model/abcast/test_model_abcast.py asserts 17.1 and records the
figure's value.

Ties: final timestamps are unique (each is one host's proposal, and a host never
proposes the same timestamp twice), and so are pending local ones, so ABCAST never
compares equal timestamps of two messages. TOMP (model/abcast/tomp.py) can, and the queue order
(:meth:`AbcastProcess.sort_key`) breaks ties dl before ud, then by sender in group
order, then by message id.

Processes are pure: an input (:meth:`AbcastProcess.multicast`,
:meth:`AbcastProcess.receive`) returns a :class:`Step` with the messages to send (each
a :class:`Send` to a tuple of hosts, possibly the host itself) and the deliveries; no
clocks, no randomness.

The common process interface (``model/process.py``) wraps that core for the simulator,
the fuzzer and the replayer: hosts are then the group's indices, ``now`` dates
receptions and decisions, and the trace logs

* ``send`` with ``deps``: the sender's previous message and the last message it
  delivered before sending (those it has). Decision: both protocols do deliver in
  causal order. An emitter's later message gets higher proposals than its earlier one
  at every host (FIFO links), so a higher final timestamp; and a host that delivered m
  has its counter past m's final timestamp (the counter raise), so its own proposal for
  a message it sends later already exceeds it. Because the order is total and gap-free,
  the last delivery stands for all earlier ones; the checker's causal-order property
  then decides a real claim rather than "unknown".
* ``recv`` when a data message reaches a host (its own: at the send).
* with ``control_records`` (the default), ``recv`` records of the protocol's own
  messages, so that ``tomkit conform`` can replay a run: an acknowledgement
  (``<mid>/ack/<host>``, at the emitter) and a validation message (``<mid>/final``, at
  every host), with ``x_packet`` ("ack" or "final"), ``x_of`` (the data message),
  ``x_from`` (the host that sent it), ``x_ts`` and, in TOMP, ``x_next_mid`` or
  ``x_min_next_mid`` and ``x_max_next_ts``. A validation message's content is logged
  once, on its emitter's record (the emitter receives it at once, when it decides);
  the other hosts' records carry ``x_packet`` only (a replay finds the content by id:
  an implementation may log it at every host as well). They are never sent by the application
  (no ``send`` record), so no property reads them as application messages.
* ``deliver`` with 004's latency split (section 2.3, Figure 2): ``x_t1`` from the
  reception of the message to the reception of its final timestamp, ``x_t2`` from there
  to the delivery (``x_t1 + x_t2`` is 004's *latency time*), and ``x_final_ts`` (the
  final timestamp, ``"counter.host"``).

Failures: 004 leaves them out of both protocols ("We shall not discuss what happens if a
failure occurs here", section 2.1.2; TOMP assumes "a known and static group" and that
"each multicast message is received by the set of hosts", 3.2.1), so the model has none:
an ABCAST emitter waiting for a dead host's acknowledgement would block every host for
ever. ``on_crash`` and ``on_view`` refuse.

Planted faults (``broken=``, for checker sanity tests only): ``"ignore-head"`` drops
delivery condition (2) and delivers a message as soon as it is dl; ``"deliver-ud"``
delivers the head of the queue even while it is ud, before its timestamp is final.
"""

from __future__ import annotations

import math
from bisect import insort
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from tomkit.model.process import (
    Logged,
    Option,
    Output,
    Protocol,
    Receive,
    Replayed,
    ReplayError,
    Transmit,
    View,
)
from tomkit.model.process import Send as SendInput

__all__ = ["BROKEN", "DL", "UD", "VARIANTS", "AbcastProcess", "Ack", "Data", "Delivery",
           "Entry", "Final", "Send", "Step", "Timestamp", "protocol", "replay"]

#: the labels of 004 section 2.1: undeliverable, deliverable
UD, DL = "ud", "dl"
#: planted faults (module docstring)
BROKEN = ("ignore-head", "deliver-ud")
#: the record fields of a validation message received from another host (its content is
#: in the emitter's record: _logged_control)
_FINAL_SEEN = {"x_packet": "final"}


class Timestamp(NamedTuple):
    """``counter.hostid`` (004 section 2.1.1), ordered by counter, then host id.

    >>> Timestamp(17, 3) > Timestamp(17, 2) > Timestamp(16, 3)
    True
    >>> str(Timestamp(17, 3).plus(1)), Timestamp.parse("19.3")
    ('18.3', Timestamp(counter=19, host=3))
    """

    counter: int
    host: int

    def __str__(self) -> str:
        return f"{self.counter}.{self.host}"

    def plus(self, k: int) -> Timestamp:
        """``ts + k`` as 004 section 3.2 writes it (``ackmi_ts + 1``, ``max_next_ts(k) +
        Delta``): k more on the counter, same host id (Figure 3: 17.3 + 1 = 18.3)."""
        return Timestamp(self.counter + k, self.host)

    @classmethod
    def parse(cls, text: str) -> Timestamp:
        c, sep, h = text.partition(".")
        if not sep or not c.lstrip("-").isdigit() or not h.isdigit():
            raise ValueError(f"a timestamp is COUNTER.HOSTID, e.g. 17.3, not {text!r}")
        return cls(int(c), int(h))


# ---------------------------------------------------------------------------- messages


class Data(NamedTuple):
    """An application message ``mi`` multicast by host ``sender``; ``seq`` is its message
    identifier ``mi_id`` (004 section 3.2.2.1: strictly increasing per sender, from 1)."""

    mid: str
    sender: int
    seq: int


class Ack(NamedTuple):
    """``ack_mi`` from ``host`` to the emitter ``sender`` of ``mid``: the local timestamp
    ``ts`` (``ackmi_ts``) and, in TOMP only, ``next_mid`` (``ackmi_next_mid``, one entry
    per host in group order)."""

    mid: str
    sender: int
    host: int
    ts: Timestamp
    next_mid: tuple[int, ...] | None = None


class Final(NamedTuple):
    """The validation message ``ts_mi`` of ``mid`` by its emitter ``sender``: the final
    timestamp ``ts`` (``tsmi_ts``) and, in TOMP only, ``min_next_mid`` and
    ``max_next_ts`` (group order)."""

    mid: str
    sender: int
    ts: Timestamp
    min_next_mid: tuple[int, ...] | None = None
    max_next_ts: tuple[Timestamp, ...] | None = None


class Send(NamedTuple):
    """Send ``msg`` to every host of ``to`` (the sending host may be among them)."""

    msg: Data | Ack | Final
    to: tuple[int, ...]


class Delivery(NamedTuple):
    mid: str
    ts: Timestamp


class Step:
    """What one input did: messages to send, deliveries in order, and (TOMP) the pending
    timestamps raised, as (mid, old, new)."""

    # by hand rather than a dataclass (as model/process.py's Output): several are made per
    # message in the simulator's inner loop
    __slots__ = ("sends", "delivered", "raised")

    def __init__(self, sends: list[Send] | None = None,
                 delivered: list[Delivery] | None = None,
                 raised: list[tuple[str, Timestamp, Timestamp]] | None = None) -> None:
        self.sends: list[Send] = [] if sends is None else sends
        self.delivered: list[Delivery] = [] if delivered is None else delivered
        self.raised: list[tuple[str, Timestamp, Timestamp]] = [] if raised is None else raised

    def __eq__(self, other: object) -> bool:
        if type(other) is not Step:
            return NotImplemented
        return (self.sends, self.delivered, self.raised) == (other.sends, other.delivered,
                                                             other.raised)

    __hash__ = None  # type: ignore[assignment]  # mutable, as a dataclass's

    def __repr__(self) -> str:
        return (f"Step(sends={self.sends!r}, delivered={self.delivered!r}, "
                f"raised={self.raised!r})")


@dataclass(slots=True)
class Entry:
    """A message in the reception queue: its current timestamp and label."""

    mid: str
    sender: int
    seq: int
    ts: Timestamp
    state: str = UD


# ---------------------------------------------------------------------------- process


class AbcastProcess:
    """One ABCAST host (module docstring). ``group`` lists the host ids in group order
    (the order of TOMP's vectors); ``counter`` is the greatest counter used before.

    >>> hosts = {h: AbcastProcess(h, (1, 2), counter=0) for h in (1, 2)}
    >>> data = hosts[1].multicast("a").sends[0].msg
    >>> acks = [hosts[h].receive(data).sends[0].msg for h in (1, 2)]
    >>> [str(a.ts) for a in acks]
    ['1.1', '1.2']
    >>> final = hosts[1].receive(acks[0]).sends + hosts[1].receive(acks[1]).sends
    >>> str(final[0].msg.ts), [hosts[h].receive(final[0].msg).delivered[0].mid for h in (1, 2)]
    ('1.2', ['a', 'a'])
    """

    protocol = "abcast"

    def __init__(self, host: int, group: Sequence[int], counter: int = 0, *,
                 raise_counter: bool = True, broken: str | None = None,
                 names: Sequence[str] | None = None, control_records: bool = True) -> None:
        self.group = tuple(group)
        if len(set(self.group)) != len(self.group):
            raise ValueError(f"group lists a host twice: {self.group}")
        if host not in self.group:
            raise ValueError(f"host {host} is not in the group {self.group}")
        if broken is not None and broken not in self.broken_variants():
            raise ValueError(f"broken must be one of {self.broken_variants()}, not {broken!r}")
        self.host = host
        self.counter = counter
        self.raise_counter = raise_counter
        self.broken = broken
        self.rank = {h: r for r, h in enumerate(self.group)}
        #: R_Queue, in delivery order (sort_key)
        self.queue: list[Entry] = []
        self.delivered: list[Delivery] = []
        self._delivered_ids: set[str] = set()
        self._received: set[str] = set()
        #: own messages waiting for acknowledgements: mid -> {host: proposed timestamp}
        self.acks: dict[str, dict[int, Timestamp]] = {}
        self.sent = 0
        # ---- the interface's part (module docstring)
        self.index = self.rank[host]
        #: the hosts' names in traces, in group order
        self.names = tuple(names) if names is not None else tuple(
            f"p{r}" for r in range(len(self.group)))
        self.name = self.names[self.index]
        self.control_records = control_records
        self._to_group = tuple(range(len(self.group)))
        self._recv_at: dict[str, float] = {}
        self._final_at: dict[str, float] = {}
        self._last_sent: str | None = None
        self._last_delivered: str | None = None
        #: protocol messages sent to other hosts, and pending timestamps raised (TOMP)
        self.acks_sent = self.finals_sent = self.raised = 0

    @classmethod
    def broken_variants(cls) -> tuple[str, ...]:
        return BROKEN

    # ------------------------------------------------------------------------ inputs

    def multicast(self, mid: str) -> Step:
        """The application multicasts ``mid`` to the group (itself included)."""
        if mid in self.acks or mid in self._received:
            raise ValueError(f"host {self.host}: message id {mid!r} is used already")
        self.sent += 1
        self.acks[mid] = {}
        self._open(mid)
        return Step([Send(Data(mid, self.host, self.sent), self.group)])

    def receive(self, msg: Data | Ack | Final) -> Step:
        """A message from the network (or from the host itself)."""
        if isinstance(msg, Data):
            return self.on_data(msg)
        if isinstance(msg, Ack):
            return self.on_ack(msg)
        if isinstance(msg, Final):
            return self.on_final(msg)
        raise TypeError(f"host {self.host}: not a protocol message: {msg!r}")

    def on_data(self, m: Data) -> Step:
        """004 section 2.1.1: timestamp, queue as ud, acknowledge to the emitter."""
        if m.mid in self._received:
            raise ValueError(f"host {self.host}: message {m.mid!r} received twice")
        if m.sender not in self.rank:
            raise ValueError(f"host {self.host}: message {m.mid!r} from {m.sender}, "
                             f"not in the group {self.group}")
        self._check_data(m)
        self._received.add(m.mid)
        self.counter += 1
        ts = Timestamp(self.counter, self.host)
        # the queue is sorted and keys are unique (they end with the id): an insertion
        # is the sort's result, at log cost
        insort(self.queue, Entry(m.mid, m.sender, m.seq, ts), key=self.sort_key)
        out = Step([Send(self._ack(m, ts), (m.sender,))])
        if self.broken == "deliver-ud":
            self._deliver(out)
        return out

    def on_ack(self, a: Ack) -> Step:
        """004 section 2.1.2: collect proposals; with all of them, multicast the maximum
        as the final timestamp."""
        got = self.acks.get(a.mid)
        if got is None or a.sender != self.host:
            raise ValueError(f"host {self.host}: acknowledgement of {a.mid!r}, which this "
                             "host is not waiting for")
        if a.host not in self.rank:
            raise ValueError(f"host {self.host}: acknowledgement from {a.host}, not in the "
                             f"group {self.group}")
        if a.host in got:
            raise ValueError(f"host {self.host}: host {a.host} acknowledged {a.mid!r} twice")
        got[a.host] = a.ts
        self._collect(a)
        if len(got) < len(self.group):
            return Step()
        del self.acks[a.mid]
        final = self._decide(a.mid, max(got.values()))
        return Step([Send(final, self.group)])

    def on_final(self, f: Final) -> Step:
        """004 section 2.1.2: final timestamp, label dl, reorder, deliver from the head."""
        out = Step()
        e = self._entry(f.mid)
        if e is None:
            if self.broken and f.mid in self._delivered_ids:
                return out  # delivered before its decision: what the fault plants
            raise ValueError(f"host {self.host}: final timestamp of {f.mid!r}, which is not "
                             "in the reception queue")
        if e.state == DL:
            raise ValueError(f"host {self.host}: second final timestamp of {f.mid!r}")
        e.ts = f.ts
        e.state = DL
        if self.raise_counter:
            self.counter = max(self.counter, f.ts.counter)
        self._anticipate(f, out)
        self._sort()
        self._deliver(out)
        return out

    # --------------------------------------------------------- the process interface

    def on_send(self, mid: str, now: float) -> Output:
        """The application multicasts ``mid`` (model/process.py); its logged deps are the
        previous own message and the last delivered one (module docstring)."""
        deps = [m for m in (self._last_sent, self._last_delivered) if m is not None]
        out = self._output(self.multicast(mid), now)
        out.deps = list(dict.fromkeys(deps))
        self._last_sent = mid
        return out

    def on_receive(self, packet: Data | Ack | Final, now: float) -> Output:
        cls = type(packet)
        if cls is Data:
            self._recv_at[packet.mid] = now
            out = self._output(self.on_data(packet), now)  # type: ignore[arg-type]
            out.received.append(Logged(packet.mid, None))  # _output logs no reception
            return out
        if cls is Final:
            self._final_at[packet.mid] = now
            out = self._output(self.on_final(packet), now)  # type: ignore[arg-type]
        elif cls is Ack:
            out = self._output(self.on_ack(packet), now)  # type: ignore[arg-type]
        else:
            out = self._output(self.receive(packet), now)
        if self.control_records:
            out.received.append(self._logged_control(packet))  # type: ignore[arg-type]
        return out

    def on_timer(self, now: float) -> Output:
        return Output()  # asks for none

    def on_crash(self, q: int, now: float) -> Output:
        raise ValueError(f"host {self.host}: {self.protocol} has no failure handling "
                         "(004 section 2.1.2)")

    def on_view(self, view: View, now: float) -> Output:
        raise ValueError(f"host {self.host}: {self.protocol} assumes a static group "
                         "(004 section 3.2.1)")

    def _logged_control(self, m: Ack | Final) -> Logged:
        """The recv record of a protocol message (module docstring). A validation message
        reaches every host, but its content is logged once, where its emitter receives it
        (at once, when it decides); the other hosts' records name it by id."""
        names = self.names
        if type(m) is Ack:
            frm = names[self.rank[m.host]]
            fields: dict[str, Any] = {"x_packet": "ack", "x_of": m.mid, "x_from": frm,
                                      "x_ts": f"{m.ts[0]}.{m.ts[1]}"}
            if m.next_mid is not None:
                fields["x_next_mid"] = list(m.next_mid)
            return Logged(f"{m.mid}/ack/{frm}", fields)
        if m.sender != self.host:
            return Logged(f"{m.mid}/final", _FINAL_SEEN)
        fields = {"x_packet": "final", "x_of": m.mid, "x_from": names[self.rank[m.sender]],
                  "x_ts": f"{m.ts[0]}.{m.ts[1]}"}
        if m.min_next_mid is not None and m.max_next_ts is not None:
            fields["x_min_next_mid"] = list(m.min_next_mid)
            fields["x_max_next_ts"] = [f"{c}.{h}" for c, h in m.max_next_ts]
        return Logged(f"{m.mid}/final", fields)

    def _output(self, st: Step, now: float) -> Output:
        out = Output()
        if st.raised:
            self.raised += len(st.raised)
        if st.delivered:
            delivered = out.delivered
            for d in st.delivered:
                r = self._recv_at.pop(d.mid)
                # a planted fault may deliver before the final timestamp (t1 is then open)
                f = self._final_at.pop(d.mid, now)
                delivered.append(Logged(d.mid, {"x_t1": f - r, "x_t2": now - f,
                                                "x_final_ts": f"{d.ts[0]}.{d.ts[1]}"}))
                self._last_delivered = d.mid
        sends = out.sends
        for msg, to in st.sends:
            if to is self.group or to == self.group:
                to = self._to_group
            else:
                to = tuple([self.rank[h] for h in to])
            cls = type(msg)
            if cls is Data:
                sends.append(Transmit(msg, to))
                continue
            others = len(to) - (self.index in to)
            if cls is Final:
                self.finals_sent += others
            else:
                self.acks_sent += others
            sends.append(Transmit(msg, to, True))
        return out

    # ------------------------------------------------------------------------ state

    def figure_row(self) -> list[tuple[str, str, str]]:
        """(message, timestamp, label) as 004's Figures 1, 3 and 4 draw a queue: the
        figures keep delivered messages in place (Figure 1 step 4 shows all three dl), so
        the delivered ones come first, in delivery order, then R_Queue."""
        return ([(d.mid, str(d.ts), DL) for d in self.delivered]
                + [(e.mid, str(e.ts), e.state) for e in self.queue])

    def sort_key(self, e: Entry) -> tuple[Timestamp, int, int, int, str]:
        """Ascending timestamp; ties (TOMP only) dl first, then sender, then id."""
        return (e.ts, 0 if e.state == DL else 1, self.rank[e.sender], e.seq, e.mid)

    # ------------------------------------------------------------------ protocol hooks

    def _open(self, mid: str) -> None:
        """An own message starts collecting acknowledgements (TOMP adds its vectors)."""

    def _check_data(self, m: Data) -> None:
        """Refuse a data message the protocol cannot take (TOMP: out of sequence)."""

    def _ack(self, m: Data, ts: Timestamp) -> Ack:
        return Ack(m.mid, m.sender, self.host, ts)

    def _collect(self, a: Ack) -> None:
        """Fold one acknowledgement's extra information in (TOMP)."""

    def _decide(self, mid: str, ts: Timestamp) -> Final:
        return Final(mid, self.host, ts)

    def _anticipate(self, f: Final, out: Step) -> None:
        """Use the validation message's extra information on pending messages (TOMP)."""

    # ----------------------------------------------------------------------- internal

    def _entry(self, mid: str) -> Entry | None:
        for e in self.queue:
            if e.mid == mid:
                return e
        return None

    def _sort(self) -> None:
        self.queue.sort(key=self.sort_key)

    def _deliver(self, out: Step) -> None:
        q = self.queue
        if self.broken == "ignore-head":
            keep = []
            for e in q:
                if e.state == DL:
                    self._out(e, out)
                else:
                    keep.append(e)
            self.queue = keep
            return
        while q and (q[0].state == DL or self.broken == "deliver-ud"):
            self._out(q.pop(0), out)

    def _out(self, e: Entry, out: Step) -> None:
        d = Delivery(e.mid, e.ts)
        self.delivered.append(d)
        self._delivered_ids.add(e.mid)
        out.delivered.append(d)


# ---------------------------------------------------------------------------- the protocol

#: the broken variants of ABCAST (the ``variant`` option), each with what it breaks
VARIANTS: dict[str, str] = {
    "literal-counter": "004's literal counter, incremented on receptions only and never "
                       "moved past a final timestamp: not a total order",
    "deliver-ud": "early delivery: the head of the queue is delivered before its timestamp "
                  "is final",
    "ignore-head": "a message is delivered as soon as it is dl, not only at the head of "
                   "the queue",
}

#: what every run must satisfy: a total order, causal (module docstring) and FIFO
PROMISES = ("integrity", "total-order-weak", "total-order-strong", "global-order",
            "causal-order", "fifo-order")


def options(variants: Mapping[str, str]) -> tuple[Option, ...]:
    return (
        Option("variant", str, None, "a broken variant, for checker and fuzzer demos: "
               + "; ".join(f"{k}: {v}" for k, v in variants.items()),
               choices=tuple(variants)),
        Option("control_records", bool, True, "log the receptions of acknowledgements and "
               "final timestamps as recv records (what 'tomkit conform' replays)"),
    )


def make(cls: type[AbcastProcess]):
    """The process factory of ABCAST (``cls`` = :class:`AbcastProcess`) or TOMP."""

    def make_processes(names: Sequence[str], opts: Mapping[str, Any],
                       rate: float) -> list[AbcastProcess]:
        variant = opts.get("variant")
        group = tuple(range(len(names)))
        return [cls(i, group, raise_counter=variant != "literal-counter",
                    broken=variant if variant in cls.broken_variants() else None,
                    names=names, control_records=opts.get("control_records", True))
                for i in group]

    return make_processes


def summary(procs: Sequence[AbcastProcess], records: Sequence[Mapping],
            stats: dict) -> dict:
    """acks and finals (protocol messages sent between hosts), mean_t1, mean_t2 and
    mean_latency (t1 + t2, 004's latency time, section 2.3), mean_end_to_end (send to
    delivery), raised (pending timestamps TOMP raised)."""
    d = stats["deliveries"]
    t1 = t2 = 0.0
    for r in records:
        if r["kind"] == "deliver":
            t1 += r["x_t1"]
            t2 += r["x_t2"]
    stats["mean_end_to_end"] = stats["mean_latency"]
    stats.update({
        "acks": sum(p.acks_sent for p in procs),
        "finals": sum(p.finals_sent for p in procs),
        "mean_t1": t1 / d if d else math.nan,
        "mean_t2": t2 / d if d else math.nan,
        "mean_latency": (t1 + t2) / d if d else math.nan,
        "raised": sum(p.raised for p in procs),
    })
    return stats


def describe(stats: Mapping[str, Any], opts: Mapping[str, Any]) -> list[str]:
    return [f"sent {stats['sends']} messages ({stats['acks']} acknowledgements, "
            f"{stats['finals']} final timestamps), {stats['deliveries']} deliveries, "
            f"{stats['undelivered']} undelivered",
            f"mean latency {stats['mean_latency'] * 1000:.3f} ms = t1 "
            f"{stats['mean_t1'] * 1000:.3f} + t2 {stats['mean_t2'] * 1000:.3f} ms (004 "
            f"Figure 2); send to delivery {stats['mean_end_to_end'] * 1000:.3f} ms; "
            f"{stats['raised']} timestamps raised"]


def _vector(r: Mapping, key: str, parse=int) -> tuple | None:
    v = r.get(key)
    if v is None:
        return None
    if not isinstance(v, list):
        raise ReplayError(f"{r['process']}: {key} of {r['msg']} is not a list")
    return tuple(parse(x) for x in v)


def replay(records: Sequence[Mapping], names: Sequence[str],
           opts: Mapping[str, Any]) -> dict[str, list[Replayed]]:
    """Each host's inputs from a recorded trace (``tomkit conform``): its sends, and the
    data messages, acknowledgements and final timestamps it received (module docstring;
    the trace must log the latter two, as the simulator does by default). A data
    message's identifier (``mi_id``, 004 section 3.2.2.1) is its place among its sender's
    sends, from 1."""
    at = {p: i for i, p in enumerate(names)}
    data: dict[str, tuple[int, int]] = {}
    count = [0] * len(names)
    for r in records:
        if r["kind"] == "send":
            s = at[r["process"]]
            count[s] += 1
            data[r["msg"]] = (s, count[s])
    #: final id -> the record that carries its content (the emitter's)
    finals = {r["msg"]: r for r in records
              if r["kind"] == "recv" and r.get("x_packet") == "final" and "x_ts" in r}
    if not any(r["kind"] == "recv" and r.get("x_packet") for r in records):
        raise ReplayError("the trace logs no receptions of acknowledgements or final "
                          "timestamps (x_packet): ABCAST and TOMP need them to replay "
                          "(simulate with control records)")

    def of(r: Mapping, mid: str) -> tuple[int, int]:
        if mid not in data:
            raise ReplayError(f"{r['process']} receives {r['msg']} of {mid}, which no "
                              "process sent")
        return data[mid]

    out: dict[str, list[Replayed]] = {p: [] for p in names}
    pos = dict.fromkeys(names, 0)
    for r in records:
        p = r["process"]
        i = pos[p]
        pos[p] = i + 1
        kind = r["kind"]
        try:
            if kind == "send":
                out[p].append(Replayed(i, SendInput(r["msg"])))
            elif kind == "recv":
                packet = r.get("x_packet")
                if packet is None:
                    s, seq = of(r, r["msg"])
                    out[p].append(Replayed(i, Receive(Data(r["msg"], s, seq))))
                elif packet == "ack":
                    mid = r["x_of"]
                    s, _ = of(r, mid)
                    out[p].append(Replayed(i, Receive(Ack(
                        mid, s, at[r["x_from"]], Timestamp.parse(r["x_ts"]),
                        _vector(r, "x_next_mid")))))
                elif packet == "final":
                    c = r if "x_ts" in r else finals.get(r["msg"])
                    if c is None:
                        raise ReplayError(f"{p}: record {i} ({r['msg']}): no record of this "
                                          "validation message carries its content (x_ts)")
                    mid = c["x_of"]
                    s, _ = of(c, mid)
                    out[p].append(Replayed(i, Receive(Final(
                        mid, s, Timestamp.parse(c["x_ts"]), _vector(c, "x_min_next_mid"),
                        _vector(c, "x_max_next_ts", Timestamp.parse)))))
                else:
                    raise ReplayError(f"{p}: unknown x_packet {packet!r} on {r['msg']}")
        except (KeyError, ValueError) as e:
            if isinstance(e, ReplayError):
                raise
            raise ReplayError(f"{p}: record {i} ({r['msg']}): {e}") from None
    return out


def protocol() -> Protocol:
    return Protocol(
        name="abcast", title="ABCAST (Skeen; Birman and Joseph), as 004 section 2 restates "
        "it", make=make(AbcastProcess), options=options(VARIANTS), fifo=True, lossy=False,
        crashes=False, promises=PROMISES, replay=replay, summary=summary,
        describe=describe, variants=VARIANTS)
