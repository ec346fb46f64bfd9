"""The ToTo family's process: a deterministic state machine over a causal DAG view.

Sources: 000 (Dolev, Kramer, Malki, ToTo) section 2.1 and Figure 1 (Transis ACKs),
Figure 3 (the event-driven delivery loop), section 5 and Figure 4 (Crash(q)), section 6
(index of latency); 002 (Johnson, Maugis) for S-ToTo, G-ToTo and GL-ToTo.

A :class:`TotoProcess` is a :class:`~tomkit.model.toto.dag.DagView` plus a delivery rule from
:data:`~tomkit.model.toto.rules.RULES` and its :class:`~tomkit.model.toto.rules.Params`. Its core
has three inputs and no I/O:

* :meth:`TotoProcess.receive`: a message arrives from the network. The DagView buffers it
  until its causal predecessors are visible (Transis' causal layer), then the rule is
  drained: evaluated until it delivers nothing more (000 Figure 3 is event driven, and
  a delivery opens an activation that may be deliverable at once).
* :meth:`TotoProcess.send`: the process multicasts a new message. It receives its own
  message at once (001 section 3: "A process receives its own messages immediately").
* :meth:`TotoProcess.crash`: the membership service's Crash(q) event (000 Figure 4).

Around that core it implements the common process interface (``model/process.py``:
``on_send``, ``on_receive``, ``on_timer``, ``on_crash``, ``on_view``), with what Transis
adds and the trace needs:

* Idle ACKs (decision). 000's measurements ran on Transis, which acknowledges messages
  even when the application is silent; without that the last messages of a finite run
  would never collect the votes they need. A process that has undelivered application
  messages in its view, something new to acknowledge, and has not sent for
  ``ack_timeout`` seconds multicasts an ACK-only message (:class:`AckOnly`, named
  ``<name>.ack<k>``), asking for a timer to notice the idle time. ACK-only messages are
  DAG messages (they ACK and vote like any other), but they belong to the ordering
  layer, not the application: they are never delivered to it, and, as 000 section 4.1
  orders agreed messages only (Figure 1's causal messages are never candidates), they
  are never candidates either: one leaves G once all it follows is delivered
  (``DagView._retire``). Option ``ack_candidates`` keeps the earlier reading, which
  ordered them as candidates (and made agreed candidates wait for them).
* What the trace logs. The ``deps`` logged for an application message are, per
  processor, the latest *application* message it follows (what the checkers' causal
  order reads): the process keeps, per sender, the latest application message up to
  each of its messages. So that a replay (``tomkit conform``) sees exactly the DAG the
  processes saw, the trace also carries the ordering layer's view in extension fields,
  which no safety property reads: every application send has ``x_dag_deps``, the
  message's own ACKs (possibly ACK-only messages), and every ACK-only message appears
  only as ``recv`` records marked ``x_ack_only: true`` with ``x_sender`` and
  ``x_dag_deps``, one at each process where it became visible (its sender included). It
  is never a ``send``: the application did not send it, and validity, FIFO and liveness
  are about application messages. A ``recv`` is logged when a message becomes visible in
  the causally closed view (possibly later than its arrival); deliveries carry 000
  section 6's ``x_index_of_latency``. The membership's Crash(q) notice is logged when it
  reaches the process, as a ``recv`` of ``crash/<q>`` with ``x_crash: q`` (000 section
  5.1: the membership service sends it; no property reads it as an application message).

What a new message ACKs (decision). 000 section 2.1 describes Transis: "each newly
emitted message contains ACKs to previous messages", and Figure 1's example has
m_{d,2} *explicitly* acknowledge m_{c,1} and m_{e,2}, and only implicitly m_{a,1},
m_{d,1} and m_{e,1}. Those explicit ACKs are the *heads* of d's view: the latest visible
message of each processor that no other latest message already follows. We take that
choice: a message ACKs the heads of its sender's view. It is the minimal deps set that
makes the message follow everything its sender has seen (so it votes as much as it can,
which is what ToTo's latency depends on), and it always includes, directly or
implicitly, the sender's previous message, as the DAG requires.

Crash(q) (decision). 000 section 5.1: Crash(q) is generated after the membership's
Agree stage, which fixes the set of q's messages, and it "indicates that ... no more
messages from q will be received henceforth". So every message of q that the process
will ever get must be in its view before Crash(q) takes effect. :meth:`Process.crash`
applies Crash(q) at once when no message of q waits in the causal buffer, and otherwise
defers it until the buffered ones are released (the DagView refuses a crash with
buffered messages of q). Bringing every message of q to the process before the event
is the caller's job (the simulator schedules the event after q's last message arrives).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, NamedTuple

from ..kernel import mypyc_attr
from ..process import (
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
from .dag import DagFacts, DagView, Message
from .mutants import resolve_rule
from .rules import RULES, Decider, Params, Rule, apply

__all__ = ["OPTIONS", "PROFILE", "AckOnly", "Delivered", "Step", "TotoProcess", "dag_sends",
           "make", "protocols", "replay"]

_ID = attrgetter("id")
_new = tuple.__new__  # a NamedTuple without its Python-level __new__ (the hot loop)


class Delivered(NamedTuple):
    """One message delivered to the application.

    ``index_of_latency`` is 000 section 6's measure: the processors heard from in the
    activation when the message is delivered; ``width`` is the number of candidates
    (|M_G|) when the rule fired, 000 section 6's "size of the candidate set".
    """

    msg: str
    index_of_latency: int
    width: int
    clause: str


@dataclass(slots=True, init=False)
class Step:
    """What one input did: messages that became visible (reached the ordering layer),
    in causal order, and the deliveries, in delivery order."""

    released: list[str]
    delivered: list[Delivered]
    #: processors whose deferred Crash(q) took effect during this input
    crashes_applied: list[str]

    # by hand rather than generated: dataclass's __init__ calls a factory per field, and
    # one Step is built per message received
    def __init__(self, released: list[str] | None = None,
                 delivered: list[Delivered] | None = None,
                 crashes_applied: list[str] | None = None) -> None:
        self.released = [] if released is None else released
        self.delivered = [] if delivered is None else delivered
        self.crashes_applied = [] if crashes_applied is None else crashes_applied


@dataclass(frozen=True)
class AckOnly(Message):
    """An ACK-only message (Transis; module docstring): it votes and is ordered like any
    DAG message, and is never delivered to the application."""


def _is_ack_only(m: Message) -> bool:
    return type(m) is AckOnly


@mypyc_attr(allow_interpreted_subclasses=True)  # (tomkit/runs/toto.py; model/kernel.py)
class TotoProcess:
    """One process of the ToTo family (see the module docstring). ``params`` defaults to
    ``Params(delta=ceil(n / 2))``; ``facts`` is a :class:`~tomkit.model.toto.dag.DagFacts`
    shared with the other processes of one run (the simulator's), a speed-up only;
    ``ack_timeout`` is the idle time before an ACK-only message (None: never one);
    ``ack_candidates`` orders ACK-only messages as candidates (the reading before 000
    section 4.1 was followed; module docstring).

    >>> a, b = TotoProcess("a", ["a", "b"], "all-ack"), TotoProcess("b", ["a", "b"], "all-ack")
    >>> m, st = a.send()
    >>> st.released, st.delivered
    (['a.1'], [])
    >>> [d.msg for d in b.receive(m).delivered]       # b has not sent: a alone is seen
    []
    >>> m2, st = b.send()
    >>> m2.deps, [d.msg for d in st.delivered]
    (('a.1',), ['a.1'])
    """

    def __init__(self, name: str, processors: Sequence[str], rule: str | Rule,
                 params: Params | None = None, *, facts: DagFacts | None = None,
                 ack_timeout: float | None = None, ack_candidates: bool = False) -> None:
        self.name = name
        # facts: shared by the processes of one simulation (see DagFacts)
        self.dag = DagView(processors, facts,
                           None if ack_candidates else _is_ack_only)
        if name not in self.dag.processors:
            raise ValueError(f"process {name!r} not in the configuration")
        self.rule: Rule = RULES[rule] if isinstance(rule, str) else rule
        # delta defaults to ceil(n/2), the least ToTo allows (000 section 4.1)
        self.params = params if params is not None else Params(delta=(self.dag.n + 1) // 2)
        self.sent = 0
        self.last_sent: str | None = None
        # Per sender, how many of its messages wait in the causal buffer: the DagView
        # keeps its buffer private, and Crash(q) must wait for these (see crash()).
        self._buffered_from: dict[str, int] = {}
        self._buffered: dict[str, str] = {}
        self._pending_crashes: list[str] = []
        # vocab_version at which the rule last delivered nothing: a rule is a pure
        # function of the vocabulary, so re-evaluating it then is wasted work
        self._quiet_at = -1
        self._decide = Decider(self.rule, self.params, self.dag.n)
        # (last_sent, how many visible messages it follows): a vc never changes
        self._covers: tuple[str | None, int] = (None, 0)
        #: the list the current drain appends to (_general_step)
        self._into: list[tuple[str, int, int, str]] = []
        # ---- the interface's part (module docstring)
        self.index = self.dag.rank(name)
        self.ack_timeout = ack_timeout
        self._others = tuple(r for r in range(self.dag.n) if r != self.index)
        self._rank = {p: r for r, p in enumerate(self.dag.processors)}
        #: the visible ACK-only messages
        self._ack_only: set[str] = set()
        #: application messages visible, and delivered (the idle-ACK test)
        self.app_visible = self.app_delivered = 0
        self.acks_sent = 0
        #: over this process's application deliveries: index of latency, candidate set size
        self.sum_index_of_latency = self.sum_width = 0
        self._last_send = -math.inf
        self._timer_set = False

    # ------------------------------------------------------------------------ inputs

    def heads(self) -> tuple[str, ...]:
        """The latest visible message of each processor that no other processor's latest
        message follows, in configuration order: what a new message ACKs."""
        return self.dag.heads()

    def send(self, mid: str | None = None, *, ack_only: bool = False) -> tuple[Message, Step]:
        """Create the next message (ACKing :meth:`heads`) and receive it at once.

        ``mid`` defaults to ``"<name>.<k>"``, k counting this process's messages from 1.
        """
        msg = self._new_message(mid if mid is not None else f"{self.name}.{self.sent + 1}",
                                AckOnly if ack_only else Message)
        return msg, self.receive(msg)

    def receive(self, msg: Message) -> Step:
        """A message from the network (or the process's own): insert it and drain."""
        out = Step()
        released = self._insert(msg)
        if not released:
            return out
        out.released = [msg.id] if len(released) == 1 else list(map(_ID, released))
        if self._pending_crashes:
            self._apply_crashes(out.crashes_applied)
        if self.dag.vocab_version != self._quiet_at:  # (half the messages change nothing)
            raw: list[tuple[str, int, int, str]] = []
            self._drain(raw)
            out.delivered = [_new(Delivered, d) for d in raw]
        return out

    def _insert(self, msg: Message) -> list[Message]:
        """Insert ``msg``; the messages that became visible, in causal order."""
        if msg.id in self._buffered:
            return []
        released = self.dag.insert(msg)
        if not released:
            if msg.id not in self.dag:
                self._buffered[msg.id] = msg.sender
                self._buffered_from[msg.sender] = self._buffered_from.get(msg.sender, 0) + 1
            return released
        if self._buffered:
            for m in released:
                if self._buffered.pop(m.id, None) is not None:
                    self._buffered_from[m.sender] -= 1
        return released

    def crash(self, q: str) -> Step:
        """Crash(q) (000 Figure 4): q joins Defunc, then drain. Deferred while messages of
        q wait in the causal buffer (see the module docstring)."""
        out = Step()
        if q in self.dag.defunc or q in self._pending_crashes:
            return out
        self._pending_crashes.append(q)
        self._apply_crashes(out.crashes_applied)
        raw: list[tuple[str, int, int, str]] = []
        self._drain(raw)
        out.delivered = [_new(Delivered, d) for d in raw]
        return out

    # --------------------------------------------------------- the process interface

    def on_send(self, mid: str, now: float) -> Output:
        """The application multicasts ``mid`` (model/process.py)."""
        msg = self._new_message(mid, Message)
        self._last_send = now
        out = self.on_receive(msg, now)
        out.deps = self._app_deps(msg)
        out.fields = {"x_dag_deps": list(msg.deps)}
        out.sends.append(Transmit(msg, self._others))
        return out

    def on_timer(self, now: float) -> Output:
        """The idle-ACK timer (module docstring): an ACK-only message if the process has
        been idle for ``ack_timeout`` and still needs one."""
        self._timer_set = False
        if not self._needs_ack():
            return Output()
        due = self._last_send + self.ack_timeout  # type: ignore[operator]
        if due > now:  # sent since the timer was armed: idle time restarts there
            self._timer_set = True
            out = Output()
            out.timer = due
            return out
        self.acks_sent += 1
        msg = self._new_message(f"{self.name}.ack{self.acks_sent}", AckOnly)
        self._last_send = now
        out = self.on_receive(msg, now)
        out.sends.append(Transmit(msg, self._others, True))
        return out

    def on_crash(self, q: int, now: float) -> Output:
        """Crash(q); logged as the reception of the membership's notice (``crash/<q>``,
        ``x_crash``: q), which the replay turns back into Crash(q)."""
        name = self.dag.processors[q]
        out = Output()
        out.received.append(Logged(f"crash/{name}", {"x_crash": name}))
        st = self.crash(name)
        if st.delivered:
            self._log_delivered(st.delivered, out.delivered)
        self._arm(out, now)
        return out

    def on_view(self, view: View, now: float) -> Output:
        """A view leaving out a processor is its Crash(q) here (000 section 5.1: the
        membership's view change is how this process learns of the crash)."""
        out = Output()
        for q in range(self.dag.n):
            if q not in view.members:
                st = self.crash(self.dag.processors[q])
                if st.delivered:
                    self._log_delivered(st.delivered, out.delivered)
        self._arm(out, now)
        return out

    def _new_message(self, mid: str, cls: type[Message]) -> Message:
        self.sent += 1
        msg = cls(mid, self.name, self.heads())
        self.last_sent = mid
        return msg

    def on_receive(self, msg: Message, now: float) -> Output:
        """A message arrives (model/process.py): the releases and application deliveries
        logged straight into an Output (the simulator's inner loop, so ``_insert`` and
        the idle-ACK test are written out here)."""
        out = Output()
        mid = msg.id
        if mid in self._buffered:
            return out
        dag = self.dag
        released = dag.insert(msg)
        if not released:
            if mid not in dag:
                self._buffered[mid] = msg.sender
                self._buffered_from[msg.sender] = self._buffered_from.get(msg.sender, 0) + 1
            return out  # nothing changed, so the timer need not be looked at again
        received = out.received
        buffered = self._buffered
        app = 0
        for m in released:
            if buffered and buffered.pop(m.id, None) is not None:
                self._buffered_from[m.sender] -= 1
            if type(m) is AckOnly:
                self._ack_only.add(m.id)
                # plain tuples shaped as Logged: its NamedTuple constructor would be a
                # Python call per record
                received.append((m.id, {  # type: ignore[arg-type]
                    "x_ack_only": True, "x_sender": m.sender, "x_dag_deps": list(m.deps)}))
            else:
                app += 1
                received.append((m.id, None))  # type: ignore[arg-type]
        self.app_visible += app
        if self._pending_crashes:
            self._apply_crashes([])
        if dag.vocab_version != self._quiet_at:
            delivered: list[tuple[str, int, int, str]] = []
            self._drain(delivered)
            if delivered:
                self._log_delivered(delivered, out.delivered)
        if (not self._timer_set and self.ack_timeout is not None
                and self.app_visible > self.app_delivered and not self.covered()):
            self._timer_set = True
            out.timer = max(now, self._last_send) + self.ack_timeout
        return out

    def _log_delivered(self, delivered: Sequence[tuple[str, int, int, str]],
                       into: list[Logged]) -> None:
        ack_only = self._ack_only
        for m, iol, width, _ in delivered:
            if m in ack_only:
                continue
            self.app_delivered += 1
            self.sum_index_of_latency += iol
            self.sum_width += width
            into.append((m, {"x_index_of_latency": iol}))  # type: ignore[arg-type]

    def _arm(self, out: Output, now: float) -> None:
        """Ask for the idle-ACK timer if it is now needed and not yet asked for."""
        if not self._timer_set and self._needs_ack():
            self._timer_set = True
            out.timer = max(now, self._last_send) + self.ack_timeout  # type: ignore[operator]

    def _needs_ack(self) -> bool:
        return (self.ack_timeout is not None and self.app_visible > self.app_delivered
                and not self.covered())

    def _app_deps(self, msg: Message) -> list[str]:
        """Per processor, the latest application message that ``msg`` (just sent here)
        follows, besides itself: the causal relation among application messages, ACK-only
        ones elided (module docstring)."""
        out = []
        own, dag, ack_only = self.index, self.dag, self._ack_only
        for r, k in enumerate(dag.vc(msg.id)):
            if r == own:
                k -= 1
            if k:
                chain = dag.chain(r)
                while k:  # back over ACK-only messages (rare: they are sent when idle)
                    m = chain[k - 1]
                    if m not in ack_only:
                        out.append(m)
                        break
                    k -= 1
        return out

    # ------------------------------------------------------------------------ state

    @property
    def pending_crashes(self) -> tuple[str, ...]:
        """Crash(q) events received but waiting for buffered messages of q."""
        return tuple(self._pending_crashes)

    def covered(self) -> bool:
        """Whether this process's last message follows every visible message (a new
        message would ACK nothing new)."""
        if self.last_sent is None:
            return len(self.dag) == 0
        mid, follows = self._covers
        if mid != self.last_sent:
            follows = sum(self.dag.vc(self.last_sent))
            self._covers = (self.last_sent, follows)
        return follows == len(self.dag)

    # ----------------------------------------------------------------------- internal

    def _apply_crashes(self, applied: list[str]) -> None:
        still = []
        for q in self._pending_crashes:
            if self._buffered_from.get(q, 0):
                still.append(q)
            else:
                self.dag.crash(q)
                applied.append(q)
        self._pending_crashes = still

    def _drain(self, delivered: list[tuple[str, int, int, str]]) -> None:
        """Evaluate the rule until it delivers nothing more (see the module docstring).

        The simulator's inner loop: with a compiled rule (model/toto/compiled.py) and nothing
        marked, the rule's slot mask is applied to the view directly (it names distinct
        unmarked candidates, so DagView.deliver's checks are skipped); otherwise through
        Decider.decision and rules.apply, which give the same result (tested)."""
        dag = self.dag
        if dag.vocab_version != self._quiet_at:
            self._into = delivered
            dag.drain_compiled(self._decide.compiled_for, self._general_step, delivered)
            self._quiet_at = dag.vocab_version

    def _general_step(self) -> bool:
        """One step of the rule through the Decider and rules.apply (no compiled rule for
        this view, or a candidate is marked), appended to the list being drained into."""
        dag = self.dag
        d = self._decide.decision(dag)
        if d is None:
            return False
        msgs, clause, ends = d
        k = len(dag.candidates())
        iol = apply(dag, msgs, ends, self.rule)
        self._into += [(m, iol, k, clause) for m in msgs]
        return True


# ---------------------------------------------------------------------------- the protocols

#: the options every ToTo-family protocol takes
OPTIONS = (
    Option("delta", int, None, "the rule's delta (default ceil(n/2), the least ToTo allows: "
           "4 for n = 8; all-ack ignores it)"),
    Option("rule", str, None, "run this delivery rule instead of the protocol's: a mutant "
           "of model/toto/mutants.py or module:function (the protocol then only names the run)"),
    Option("ack_timeout", float, None, "idle time before an ACK-only message, in seconds "
           "(default 5 mean source periods: 5 / rate)"),
    Option("ack_candidates", bool, False, "order ACK-only messages as candidates, as "
           "agreed messages are (000 section 4.1 orders agreed messages only; the default "
           "never makes them candidates)"),
)

#: what every run must satisfy (000 section 2: ToTo delivers in one total order that
#: extends the causal order; a sender's messages follow one another causally):
#: checker/profiles/model-toto-family.toml
PROFILE = "model-toto-family"


def make(name: str, cls: Callable[..., TotoProcess] = TotoProcess,
         ) -> Callable[[Sequence[str], Mapping[str, Any], float], list[TotoProcess]]:
    """The process factory of the protocol ``name`` (a rule of ``model.rules.RULES``);
    ``cls`` makes each process, given TotoProcess's arguments (a subclass that measures,
    as tomkit/runs/toto.py's: a compiled TotoProcess's class cannot be switched after)."""

    def make_processes(names: Sequence[str], options: Mapping[str, Any],
                       rate: float) -> list[TotoProcess]:
        rule: str | Rule = name
        if options.get("rule") is not None:
            r = options["rule"]
            if isinstance(r, str):
                r = resolve_rule(r)
            rule = r
        delta = options.get("delta")
        params = Params(delta=delta if delta is not None else (len(names) + 1) // 2)
        ack = options.get("ack_timeout")
        # one DagFacts: every process receives the same Message objects, whose vcs are
        # then computed once (model/toto/dag.py)
        facts = DagFacts(names)
        return [cls(p, names, rule, params, facts=facts,
                    ack_timeout=ack if ack is not None else 5.0 / rate,
                    ack_candidates=bool(options.get("ack_candidates")))
                for p in names]

    return make_processes


def summary(procs: Sequence[TotoProcess], records: Sequence[Mapping], stats: dict) -> dict:
    """delta (as the rule ran), acks (ACK-only messages), mean_index_of_latency and
    mean_width (000 section 6: processors heard from, and candidates, when an application
    message is delivered)."""
    d = stats["deliveries"]
    stats["delta"] = procs[0].params.delta
    stats["acks"] = sum(p.acks_sent for p in procs)
    stats["mean_index_of_latency"] = (sum(p.sum_index_of_latency for p in procs) / d
                                      if d else math.nan)
    stats["mean_width"] = sum(p.sum_width for p in procs) / d if d else math.nan
    return stats


def describe(stats: Mapping[str, Any], options: Mapping[str, Any]) -> list[str]:
    return [f"delta {stats['delta']}: sent {stats['sends']} messages ({stats['acks']} ACK-only), "
            f"{stats['deliveries']} deliveries, {stats['undelivered']} undelivered at "
            "surviving processes",
            f"mean index of latency {stats['mean_index_of_latency']:.3f}, mean latency "
            f"{stats['mean_latency'] * 1000:.3f} ms, mean candidate set "
            f"{stats['mean_width']:.3f}"]


def dag_sends(records: Sequence[Mapping]) -> dict[str, Mapping]:
    """Per DAG message, the record that brings it into the DAG: its application ``send``,
    or the first ``recv`` of an ACK-only message (``x_ack_only``); ReplayError when no
    ``recv`` is logged (a replay needs each process's receptions)."""
    sends: dict[str, Mapping] = {}
    for r in records:
        if r["kind"] == "send" or (r["kind"] == "recv" and r.get("x_ack_only")):
            sends.setdefault(r["msg"], r)
    if not any(r["kind"] == "recv" for r in records):
        raise ReplayError("the trace logs no recv events: conformance needs each process's "
                          "receptions to replay")
    return sends


def replay(records: Sequence[Mapping], names: Sequence[str],
           options: Mapping[str, Any]) -> dict[str, list[Replayed]]:
    """Each process's inputs from a recorded trace (``tomkit conform``).

    A process's own send and each ``recv`` bring a DAG message, whose ACKs are the send's
    ``x_dag_deps`` when logged, else its ``deps``; ACK-only messages are ``recv`` records
    marked ``x_ack_only`` with ``x_sender`` and ``x_dag_deps`` (module docstring). A process
    receives its own message when it sends it (000 section 3), so the ``recv`` of its own
    message logged after the send brings nothing new. A ``recv`` with ``x_crash: q`` (the
    membership's notice, as the simulator logs it) and a ``view`` leaving a processor out
    are the Crash(q) event at that process (000 Figure 4). Receptions must be logged:
    without them there is nothing to replay.
    """
    sends = dag_sends(records)
    at = {p: i for i, p in enumerate(names)}
    packets: dict[str, Message] = {}

    def packet(p: str, mid: str) -> Message:
        m = packets.get(mid)
        if m is not None:
            return m
        s = sends.get(mid)
        if s is None:
            raise ReplayError(f"{p} receives {mid}, which no process sent")
        if s["kind"] == "send":
            sender, cls = s["process"], Message
        else:
            sender, cls = s.get("x_sender"), AckOnly
            if not sender:
                raise ReplayError(f"{p}: the ACK-only message {mid} has no x_sender")
        deps = s.get("x_dag_deps")
        if deps is None:
            deps = s.get("deps")
        m = packets[mid] = cls(mid, sender, tuple(deps or ()))
        return m

    out: dict[str, list[Replayed]] = {p: [] for p in names}
    fed: dict[str, set[str]] = {p: set() for p in names}
    pos: dict[str, int] = {p: 0 for p in names}
    for r in records:
        p = r["process"]
        i = pos[p]
        pos[p] = i + 1
        kind = r["kind"]
        if kind == "recv" and r.get("x_crash") is not None:
            q = r["x_crash"]
            if q not in at:
                raise ReplayError(f"{p}: Crash({q}) of a process not in the trace")
            out[p].append(Replayed(i, Crash(at[q]), False))
        elif kind in ("send", "recv"):
            mid = r["msg"]
            fresh = mid not in fed[p]
            fed[p].add(mid)
            out[p].append(Replayed(i, Receive(packet(p, mid)), fresh))
        elif kind == "view":
            out[p].append(Replayed(i, ViewChange(View(r.get("view", ""), tuple(
                at[m] for m in r["members"] if m in at))), False))
    return out


def protocols() -> list[Protocol]:
    """all-ack, ToTo (000), S-ToTo, G-ToTo and GL-ToTo (002), one protocol per rule."""
    titles = {
        "all-ack": "deliver once every processor is heard from (000 section 6's baseline)",
        "toto": "ToTo_delta (Dolev, Kramer, Malki; 000 section 4)",
        "s-toto": "S-ToTo (Johnson, Maugis; 002 section 3)",
        "g-toto": "G-ToTo (Johnson, Maugis; 002 section 4)",
        "gl-toto": "GL-ToTo (Johnson, Maugis; 002 section 5)",
    }
    # (make and summary take and give TotoProcess, which implements Process: list and
    # Callable are invariant, hence the ignores)
    return [Protocol(name=r, title=titles[r], make=make(r),  # type: ignore[arg-type]
                     options=OPTIONS, fifo=False, lossy=True, crashes=True, profile=PROFILE,
                     replay=replay, summary=summary,  # type: ignore[arg-type]
                     describe=describe)
            for r in RULES]
