"""A ToTo-family process: a deterministic state machine over a causal DAG view.

Sources: 000 (Dolev, Kramer, Malki, ToTo) section 2.1 and Figure 1 (Transis ACKs),
Figure 3 (the event-driven delivery loop), section 5 and Figure 4 (Crash(q)), section 6
(index of latency); 002 (Johnson, Maugis) for S-ToTo, G-ToTo and GL-ToTo.

A :class:`Process` is a :class:`~tomkit.model.dag.DagView` plus a delivery rule from
:data:`~tomkit.model.rules.RULES` and its :class:`~tomkit.model.rules.Params`. It has
three inputs and no I/O:

* :meth:`Process.receive`: a message arrives from the network. The DagView buffers it
  until its causal predecessors are visible (Transis' causal layer), then the rule is
  drained: evaluated until it delivers nothing more (000 Figure 3 is event driven, and
  a delivery opens an activation that may be deliverable at once).
* :meth:`Process.send`: the process multicasts a new message. It receives its own
  message at once (001 section 3: "A process receives its own messages immediately").
* :meth:`Process.crash`: the membership service's Crash(q) event (000 Figure 4).

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

from collections.abc import Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import NamedTuple

from tomkit.model.dag import DagFacts, DagView, Message
from tomkit.model.rules import RULES, Decider, Params, Rule, apply

__all__ = ["Delivered", "Process", "Step"]

_ID = attrgetter("id")


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


class Process:
    """One process of the ToTo family (see the module docstring). ``params`` defaults to
    ``Params(delta=ceil(n / 2))``; ``facts`` is a :class:`~tomkit.model.dag.DagFacts`
    shared with the other processes of one run (the simulator's), a speed-up only.

    >>> a, b = Process("a", ["a", "b"], "all-ack"), Process("b", ["a", "b"], "all-ack")
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
                 params: Params | None = None, *, facts: DagFacts | None = None) -> None:
        self.name = name
        # facts: shared by the processes of one simulation (see DagFacts)
        self.dag = DagView(processors, facts)
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

    # ------------------------------------------------------------------------ inputs

    def heads(self) -> tuple[str, ...]:
        """The latest visible message of each processor that no other processor's latest
        message follows, in configuration order: what a new message ACKs."""
        return self.dag.heads()

    def send(self, mid: str | None = None) -> tuple[Message, Step]:
        """Create the next message (ACKing :meth:`heads`) and receive it at once.

        ``mid`` defaults to ``"<name>.<k>"``, k counting this process's messages from 1.
        """
        self.sent += 1
        msg = Message(mid if mid is not None else f"{self.name}.{self.sent}", self.name,
                      self.heads())
        self.last_sent = msg.id
        return msg, self.receive(msg)

    def receive(self, msg: Message) -> Step:
        """A message from the network (or the process's own): insert it and drain."""
        out = Step()
        if msg.id in self._buffered:
            return out
        released = self.dag.insert(msg)
        if not released:
            if msg.id not in self.dag:
                self._buffered[msg.id] = msg.sender
                self._buffered_from[msg.sender] = self._buffered_from.get(msg.sender, 0) + 1
            return out
        out.released = [msg.id] if len(released) == 1 else list(map(_ID, released))
        if self._buffered:
            for m in released:
                if self._buffered.pop(m.id, None) is not None:
                    self._buffered_from[m.sender] -= 1
        if self._pending_crashes:
            self._apply_crashes(out)
        if self.dag.vocab_version != self._quiet_at:  # (half the messages change nothing)
            self._drain(out)
        return out

    def crash(self, q: str) -> Step:
        """Crash(q) (000 Figure 4): q joins Defunc, then drain. Deferred while messages of
        q wait in the causal buffer (see the module docstring)."""
        out = Step()
        if q in self.dag.defunc or q in self._pending_crashes:
            return out
        self._pending_crashes.append(q)
        self._apply_crashes(out)
        self._drain(out)
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

    def _apply_crashes(self, out: Step) -> None:
        still = []
        for q in self._pending_crashes:
            if self._buffered_from.get(q, 0):
                still.append(q)
            else:
                self.dag.crash(q)
                out.crashes_applied.append(q)
        self._pending_crashes = still

    def _drain(self, out: Step) -> None:
        """Evaluate the rule until it delivers nothing more (see the module docstring).

        The simulator's inner loop: with a compiled rule (model/compiled.py) and nothing
        marked, the rule's slot mask is applied to the view directly (it names distinct
        unmarked candidates, so DagView.deliver's checks are skipped); otherwise through
        Decider.decision and rules.apply, which give the same result (tested)."""
        dag, decider = self.dag, self._decide
        by_k = decider._by_k
        delivered = out.delivered
        new = tuple.__new__  # a Delivered without its Python-level __new__
        while dag.vocab_version != self._quiet_at:
            cands = dag._cands  # (dag.rule_inputs(), read in place: this loop is hot)
            k = len(cands)
            fn = by_k[k] if k in by_k else decider.compiled_for(k)
            if fn is None or dag._marked:
                d = decider.decision(dag)
                if d is None:
                    self._quiet_at = dag.vocab_version
                    return
                msgs, clause, ends = d
                iol = apply(dag, msgs, ends, self.rule)
            else:
                r = fn.fn(dag._yes, dag._tailm, dag._cand_marked, dag._cand_rank, dag._seen)
                if r is None:
                    self._quiet_at = dag.vocab_version
                    return
                i, mask = r
                clause, ends = fn.options[i]
                if mask == fn.full and k:
                    msgs = tuple(cands)
                else:
                    msgs = tuple([c for j, c in enumerate(cands) if mask >> j & 1])
                    if not msgs:  # as rules.apply: nothing would change, and we would loop
                        raise ValueError(f"{getattr(self.rule, '__name__', self.rule)} "
                                         "returned an empty delivery")
                iol = dag._heard.bit_count()  # (dag.index_of_latency())
                dag.deliver_checked(msgs, ends)
            if len(msgs) == 1:
                delivered.append(new(Delivered, (msgs[0], iol, k, clause)))
            else:
                delivered += [new(Delivered, (m, iol, k, clause)) for m in msgs]
