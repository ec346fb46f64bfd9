"""The one process interface every protocol model implements, and a protocol's description.

In the style of Porcupine's models (a model is a small set of functions; the checker knows
no model in particular), a protocol's process is a deterministic state machine that the
one simulator (``model/sim.py``), the one Hypothesis machine (``fuzz/process_machine.py``)
and the one replayer (``model/conform.py``) drive, none of them knowing which protocol
it runs. Its inputs, each given the process's local clock ``now`` (seconds):

* :meth:`Process.on_send`: the application multicasts message ``mid``;
* :meth:`Process.on_receive`: a packet arrives from the network (or from the process
  itself, when it sent to a group it belongs to);
* :meth:`Process.on_timer`: a timer the process asked for went off;
* :meth:`Process.on_crash`: the membership service reports that process ``q`` crashed
  (000 section 5's Crash(q));
* :meth:`Process.on_view`: the membership service installs a new view.

Each returns an :class:`Output`: the packets to send (:class:`Transmit`), the receptions
and deliveries to log (:class:`Logged`, each with the extension fields the trace carries
for it), the causal deps of an application send, and a timer request. No I/O, no clock
of its own, no randomness: everything a process knows comes through its inputs, so a run
is a function of its inputs and a trace can be replayed.

A protocol whose processes join, leave and recover by themselves (003: no agreed
membership) implements :class:`Member` besides (``on_join``, ``on_leave``,
``on_recover``, ``start_outside``, ``accepting``, ``outside``); one whose processes share
a membership service (000 section 5) gives the drivers that service, a
:class:`MembershipService`, which they drive as its :class:`Driver`.

What a protocol needs from its environment, its capabilities (the membership events it
honours, a membership service, a timed network, clocks of its own), is declared on its
:class:`Protocol`, never probed: the simulator (``model/sim.py``), the Hypothesis machines
(``fuzz/process_machine.py``, ``fuzz/qos_machine.py``) and the replayer
(``model/conform.py``) read :attr:`Protocol.events`, :attr:`Protocol.service`,
:attr:`Protocol.timing` and :attr:`Protocol.clocks` and call the hooks these name; an
event a protocol does not honour is refused before anything runs
(:meth:`Protocol.refuse`, one line naming the protocol and the event). The vocabulary
of membership events is ``model/events.py``'s.

Processes are addressed by index (0 .. n-1) and named by the run (``p0``, ``p1`` ... in
simulations; a recorded trace's own names when replayed). A :class:`Protocol` describes
one protocol: how to make its processes, the options it takes (declared here, so that the
command line and the simulator have no per-protocol branches), the network it assumes
(FIFO links or not, whether it tolerates losses, crashes), the guarantee profile it
promises (by name), and how a recorded trace is turned back into its processes' inputs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, runtime_checkable
from typing import Protocol as Interface

from .events import EVENTS

if TYPE_CHECKING:  # the environments' descriptions, for the type hints only
    from .net.clocks import ClockBounds
    from .net.timed import Timing

__all__ = ["Crash", "Driver", "Input", "Installed", "Logged", "Member", "MembershipService",
           "MemberEvent", "Option", "Output", "Process", "Protocol", "Receive",
           "Renegotiate", "ReplayError", "Replayed", "Reserving", "Send", "Timer",
           "Transmit", "View", "ViewChange", "feed"]


class Transmit(NamedTuple):
    """Send ``packet`` to the processes of ``to`` (indices; the sender may be among them,
    and then receives it at once, before the next transmit). ``control`` marks
    ordering-layer traffic (acknowledgements, timestamps, ACK-only messages) as opposed to
    an application message: simulators draw their delays from separate streams, so that
    two protocols given one seed see the same delays for every application message."""

    packet: Any
    to: tuple[int, ...]
    control: bool = False


class Logged(NamedTuple):
    """A reception (``recv`` record) or a delivery (``deliver`` record) of message ``msg``,
    with the extension fields (``x_*``) the record carries, in order."""

    msg: str
    fields: Mapping[str, Any] | None = None


class View(NamedTuple):
    """A view of the membership service: its id and its members (indices)."""

    id: str
    members: tuple[int, ...]


class Installed(NamedTuple):
    """A view a process installed during an input, logged as a ``view`` record: the view
    (id and members), the record's extension fields, and ``at``, how many of the input's
    deliveries come before it (for a protocol whose processes install views themselves,
    as the hybrid's view-synchronous layer does, rather than a membership service)."""

    view: View
    fields: Mapping[str, Any] | None = None
    at: int = 0
    #: the members' names as the process knows them (incarnations: ``p0~2``), else the
    #: run's names of their indices now
    names: tuple[str, ...] | None = None


class Output:
    """What one input did.

    ``sends`` in order; ``received`` and ``delivered`` in the order they happened (every
    reception before the deliveries of the same input); ``deps`` and ``fields`` only for
    an application send (the ``deps`` the trace logs, possibly ``None`` for none logged,
    and the send record's extension fields); ``joined``: the process became a member
    during this input (003's join_OK, which may come long after the join request), with
    the fields of its ``join`` record, written before the input's receptions;
    ``installed``: views the process installed (:class:`Installed`), each written among
    the deliveries at its place (one of an application send before the send);
    ``negotiated``: the process asked the network for a reservation during this input
    (003 section 2.1's join(r) or RN(r)), with the fields of its ``negotiate`` record,
    written first; ``timer``:
    call :meth:`Process.on_timer` at this local time (each request is one call; a process
    ignores calls it no longer wants)."""

    __slots__ = ("sends", "received", "delivered", "deps", "fields", "joined", "installed",
                 "negotiated", "timer")

    # by hand rather than a dataclass: one Output is made per input, the simulator's
    # inner loop
    def __init__(self) -> None:
        self.sends: list[Transmit] = []
        self.received: list[Logged] = []
        self.delivered: list[Logged] = []
        self.deps: list[str] | None = None
        self.fields: Mapping[str, Any] | None = None
        self.joined: Mapping[str, Any] | None = None
        self.installed: Sequence[Installed] = ()
        self.negotiated: Mapping[str, Any] | None = None
        self.timer: float | None = None

    def __repr__(self) -> str:
        return (f"Output(sends={self.sends!r}, received={self.received!r}, "
                f"delivered={self.delivered!r}, deps={self.deps!r}, timer={self.timer!r})")


@runtime_checkable
class Process(Interface):
    """The interface (module docstring). ``index`` is the process's place in the group and
    ``name`` its name in traces."""

    index: int
    name: str

    def on_send(self, mid: str, now: float) -> Output: ...

    def on_receive(self, packet: Any, now: float) -> Output: ...

    def on_timer(self, now: float) -> Output: ...

    def on_crash(self, q: int, now: float) -> Output: ...

    def on_view(self, view: View, now: float) -> Output: ...


@runtime_checkable
class Member(Process, Interface):
    """A process that joins, leaves and recovers by itself, with no membership service
    (003, Bar-Joseph, Keidar, Anker and Lynch, sections 2 and 3.3): the processes of a
    protocol that honours ``join``, ``leave`` or ``recover`` and has no
    :attr:`Protocol.service`. The drivers call these hooks at the schedule's events and
    log a ``leave`` record with the output's ``fields``; the ``join`` record is the
    process's own (``Output.joined``), at the moment it becomes a member (003's join_OK,
    which comes slots after the request)."""

    #: the application may multicast now (a member, not leaving): sources wait otherwise
    accepting: bool
    #: not in the group (down from time 0, or gone after its leave): it sends nothing
    #: until it joins
    outside: bool

    def start_outside(self) -> None:
        """The process is outside the group from time 0 (its first event is a join)."""

    def on_join(self, now: float) -> Output:
        """``join``: the process, outside the group, becomes a member."""

    def on_leave(self, now: float) -> Output:
        """``leave``: the member leaves the group on purpose."""

    def on_recover(self, now: float) -> Output:
        """``recover``: the process, crashed, restarts with no state and rejoins."""


@runtime_checkable
class Reserving(Process, Interface):
    """A process that holds a reservation of the network and renegotiates it (003 section
    2.1's RN(r)): the processes of a protocol that honours ``renegotiate``. The drivers
    call :meth:`on_renegotiate` at the schedule's ``renegotiate`` events; the process
    logs its ``negotiate`` record itself (``Output.negotiated``)."""

    #: messages of the application held back over its reservation, still to be sent:
    #: the run is not over while a live process holds some
    holding: bool

    def on_renegotiate(self, r: tuple[int, int], now: float) -> Output:
        """RN(r): ask for reservation r = (avg over K slots, max per slot)."""


class Driver(Interface):
    """What a membership service needs of whoever runs the processes (the simulator, the
    fuzzer)."""

    def handle(self, i: int, out: Output) -> None:
        """Log what process i did and send its packets."""

    def record(self, i: int, kind: str, view: View | None = None) -> None:
        """Log a ``view``, ``crash`` or ``join`` record of process i."""

    def set_up(self, i: int, up: bool) -> None:
        """Process i runs (True: it has joined) or stops (False: it crashed or was
        excluded); a process that installs a view starts its application source."""

    def in_flight_until(self, q: int) -> float:
        """When the last packet process q sent arrives (0 when none is in flight)."""

    def changed(self, at: float) -> None:
        """Run :meth:`MembershipService.agree` at time ``at`` or later."""

    @property
    def now(self) -> float: ...


class MembershipService(Interface):
    """A membership service shared by a run's processes (000 section 5's, in
    ``model/toto/membership.py``): the drivers give it the schedule's events and run its
    configuration changes; it calls the processes' ``on_crash``, ``on_receive`` and
    ``on_view`` and tells the driver what to log."""

    #: each process's current name (a process that recovers is a new incarnation, which
    #: may be named anew)
    names: list[str]

    def start(self, driver: Driver, procs: Sequence[Process], initial: Sequence[int]
              ) -> None:
        """The first configuration: ``initial`` are members; the others join later."""

    def crash(self, q: int) -> None: ...

    def join(self, j: int) -> None: ...

    def recover(self, j: int) -> None: ...

    def partition(self, components: Sequence[Sequence[int]]) -> None:
        """The network splits into ``components`` (the processes not listed form one
        more)."""

    def heal(self) -> None: ...

    def admits(self, j: int, packet: Any) -> bool:
        """Whether ``packet`` may arrive at j now (no partition between); one that may
        not is the service's to hold back."""

    def may_join(self, j: int) -> bool:
        """Whether j, down, may join (or recover) now."""

    def installed(self, i: int) -> bool:
        """Whether process i has installed a view (it may send)."""

    def pending(self) -> bool:
        """Whether a configuration change is due."""

    def waits_for(self) -> float:
        """When the next change may run (no packet that it depends on in flight)."""

    def agree(self) -> None:
        """Run the configuration changes due."""


# ---------------------------------------------------------------------------- inputs as data


class Send(NamedTuple):
    """Input: the application multicasts ``mid``."""

    mid: str


class Receive(NamedTuple):
    """Input: ``packet`` arrives."""

    packet: Any


class Timer(NamedTuple):
    """Input: a requested timer goes off."""


class Crash(NamedTuple):
    """Input: Crash(q), the membership's notice that process ``q`` crashed."""

    q: int


class ViewChange(NamedTuple):
    """Input: a new view is installed."""

    view: View


class MemberEvent(NamedTuple):
    """Input of a :class:`Member`: ``outside`` (down from time 0), ``join``, ``leave``,
    ``recover``, or ``crash`` (the process stops: it takes no input, and its timers are
    void, until it recovers)."""

    kind: str


class Renegotiate(NamedTuple):
    """Input of a :class:`Reserving` process: RN(r), r = (avg, max)."""

    reservation: tuple[int, int]


Input = Send | Receive | Timer | Crash | ViewChange | MemberEvent | Renegotiate


def feed(p: Process, inp: Input, now: float) -> Output:
    """Give ``p`` one input (for drivers that keep inputs as data: the replayer, tests)."""
    if isinstance(inp, MemberEvent):
        m: Member = p  # type: ignore[assignment]
        if inp.kind == "join":
            return m.on_join(now)
        if inp.kind == "leave":
            return m.on_leave(now)
        if inp.kind == "recover":
            return m.on_recover(now)
        if inp.kind == "outside":
            m.start_outside()
            return Output()
        if inp.kind == "crash":
            return Output()
        raise TypeError(f"not a member event: {inp.kind!r}")
    if isinstance(inp, Renegotiate):
        return p.on_renegotiate(inp.reservation, now)  # type: ignore[attr-defined]
    if isinstance(inp, Receive):
        return p.on_receive(inp.packet, now)
    if isinstance(inp, Send):
        return p.on_send(inp.mid, now)
    if isinstance(inp, Crash):
        return p.on_crash(inp.q, now)
    if isinstance(inp, Timer):
        return p.on_timer(now)
    if isinstance(inp, ViewChange):
        return p.on_view(inp.view, now)
    raise TypeError(f"not an input: {inp!r}")


class ReplayError(ValueError):
    """A recorded trace cannot be replayed (receptions not logged, a message never sent, an
    input the model refuses)."""


class Replayed(NamedTuple):
    """One input of a recorded process, for the replayer: where it is in the process's
    log (record index), the input, and whether it brought something new to the process
    (a reception or a send: the replayer counts a delivery as later than the model's when
    such an input came between the two); ``now``: the local time to give it, for a
    protocol on a timed network (None: its position, as for untimed protocols)."""

    position: int
    input: Input
    fresh: bool = True
    now: float | None = None


# ---------------------------------------------------------------------------- description


@dataclass(frozen=True)
class Option:
    """A protocol-specific option: ``name`` (also the command-line flag, ``--name`` with
    dashes), its type, default, help and allowed values. A ``bool`` option with default
    True is switched off by ``--no-name``."""

    name: str
    type: Callable[[str], Any]
    default: Any
    help: str
    choices: tuple[Any, ...] | None = None

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


@dataclass(frozen=True)
class Protocol:
    """One protocol, as the simulator, the fuzzer, the replayer and the command line see it.

    ``make(names, options, rate)`` builds the run's processes (one per name, index = place
    in ``names``) with options resolved by :meth:`resolve` and the sources' rate per
    process (some defaults scale with it; the fuzzer passes 1.0). ``replay(records,
    names, options)`` turns a recorded trace's records (one trace, all processes) into
    each process's inputs; ``None`` when the protocol cannot be replayed.
    ``summary(processes, records, stats)`` adds the protocol's own figures to the
    simulator's statistics, and ``describe(stats, options)`` the lines ``tomkit
    simulate`` prints of them.
    """

    name: str
    #: one line: what it is and where it comes from (paper and section)
    title: str
    make: Callable[[Sequence[str], Mapping[str, Any], float], list[Process]]
    options: tuple[Option, ...] = ()
    #: links must deliver each link's packets in sending order
    fifo: bool = True
    #: the protocol tolerates lost packets that are retransmitted later (and duplicates)
    lossy: bool = False
    #: the protocol handles crashes (Crash(q) notices); if not, runs have none
    crashes: bool = False
    #: what every run must satisfy: the name of a guarantee profile of
    #: ``checker/profiles/`` (``model-*.toml``), whose file is the one list of the trace
    #: properties (model/ does not read the checker; the fuzzer and the tests do)
    profile: str = ""
    #: every application message is eventually delivered by every correct process once
    #: the network drains (liveness after draining)
    live: bool = True
    replay: Callable[[Sequence[Mapping], Sequence[str], Mapping[str, Any]],
                     dict[str, list[Replayed]]] | None = None
    summary: Callable[[Sequence[Process], Sequence[Mapping], dict], dict] | None = None
    describe: Callable[[Mapping[str, Any], Mapping[str, Any]], list[str]] | None = None
    #: named broken variants (values of the ``variant`` option), each with what it breaks
    variants: Mapping[str, str] = field(default_factory=dict)
    # ---- capabilities: what it needs from its environment (module docstring)
    #: the membership events (``model/events.py``) its runs may have; the drivers refuse
    #: the others. ``crashes=True`` is the older way to say ``"crash"`` (each fills in
    #: the other). Without a :attr:`service`, join, leave and recover go to the
    #: processes, which are then :class:`Member` s; crash stops a process and tells the
    #: others Crash(q) (000 section 5)
    events: frozenset[str] = frozenset()
    #: the membership service of a run, from its processes (000 section 5): crash, join,
    #: recover, partition and heal go to it, and the Crash(q) notices and views come
    #: from it
    service: Callable[[Sequence[Process]], MembershipService] | None = None
    #: the timed network it runs on (003: clocks within eps, delays within delta, burst
    #: losses; ``model/net/timed.py``), from its resolved options
    timing: Callable[[Mapping[str, Any]], Timing] | None = None
    #: its processes' own clocks on an ordinary network: bounded skew and drift, from
    #: its resolved options (``model/net/clocks.py``; 001's rate synchronisation reads
    #: them). Processes then get, log and time out in local time, and every record
    #: carries ``real_time``
    clocks: Callable[[Mapping[str, Any]], ClockBounds] | None = None
    #: how its traces name a restarted process (``p1~2``: ``("p1", 2)``; the first
    #: incarnation 1), when a restart is logged as a process of its own yet is the same
    #: member of the group: the replayer then gives each incarnation's records to the
    #: one model process, after its earlier incarnations'. None: every name in a trace
    #: is a process of the group
    incarnations: Callable[[str], tuple[str, int]] | None = None

    def __post_init__(self) -> None:
        unknown = set(self.events) - set(EVENTS)
        if unknown:
            raise ValueError(f"{self.name}: unknown membership events {sorted(unknown)} "
                             f"(known: {', '.join(EVENTS)})")
        events = frozenset(self.events) | ({"crash"} if self.crashes else set())
        object.__setattr__(self, "events", events)
        object.__setattr__(self, "crashes", "crash" in events)

    def honours(self, event: str) -> bool:
        """Whether its runs may have membership event ``event``."""
        return event in self.events

    def refuse(self, events: Iterable[str], where: str = "") -> None:
        """ValueError, one line naming the protocol and the first event of ``events`` it
        does not honour (``where``: e.g. the record that asks for it)."""
        for e in events:
            if e not in self.events:
                honours = ", ".join(k for k in EVENTS if k in self.events) or "none"
                raise ValueError(f"{self.name} cannot honour {e}{where} (the membership "
                                 f"events it honours: {honours})")

    def option(self, name: str) -> Option | None:
        for o in self.options:
            if o.name == name:
                return o
        return None

    def resolve(self, given: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The options with defaults filled in; ValueError naming an option the protocol
        does not take or a value it does not allow, TypeError one of the wrong type."""
        given = dict(given or {})
        out = {}
        for o in self.options:
            v = given.pop(o.name, o.default)
            if v is not None and o.type in (int, float, bool) and not (
                    isinstance(v, o.type) and not (o.type is int and isinstance(v, bool))
                    or o.type is float and isinstance(v, int) and not isinstance(v, bool)):
                # given from Python (the command line converts with o.type); a str option
                # may take other values from Python (a rule function for --rule)
                raise TypeError(f"{self.name}: {o.name} must be {o.type.__name__}, got "
                                f"{type(v).__name__} {v!r}")
            if v is not None and o.type in (int, float) and not 0 <= v < math.inf:
                # every number a protocol takes is a time, a rate, a count or a
                # probability (a negative --ack-timeout ran for ever, an infinite one
                # wrote NaN times, --tick-rate inf failed in a traceback; NaN is no number)
                raise ValueError(f"{self.name}: {o.flag} must be a finite number >= 0, "
                                 f"got {v}")
            if v is not None and o.choices is not None and v not in o.choices:
                raise ValueError(f"{self.name}: {o.flag} must be one of "
                                 f"{', '.join(map(str, o.choices))}, not {v!r}")
            out[o.name] = v
        if given:
            takes = ", ".join(o.flag for o in self.options) or "no options"
            raise ValueError(f"{self.name} does not take {', '.join(sorted(given))} "
                             f"(it takes {takes})")
        return out
