"""Causal DAG views: one process's causally closed view of the message DAG.

Source: 000 (Dolev, Kramer, Malki, ToTo) section 2.1 and Figure 1; 002 (Johnson,
Maugis) section 2, "Causality DAG".

Every message carries ACKs of earlier messages (its ``deps``). ``m'`` *follows* ``m``
when ``m`` is reachable from ``m'`` by ACK edges, and a message follows itself
(000 section 2.1). A processor's messages form a chain: each follows the sender's
previous one (000: "m cause-> m' if send_q(m) -> send_q(m')"), so the sequence number
``k`` of ``m_{q,k}`` is implied by the DAG and not carried.

All processes eventually see the same DAG, "revealed" to them in different orders
(000 section 2.1, 002 section 2). As Transis does, a :class:`DagView` inserts a
message only once all its causal predecessors are in the view and buffers the rest,
releasing them in causal order when their predecessors arrive, so the view is always
causally closed.

Follows-queries are O(1): each visible message keeps a vector of "the latest
message of processor r that it follows" (its sequence number, 0 for none), like a
vector clock; since every processor's messages form a chain, ``a`` follows ``b`` iff
``vc(a)[sender(b)] >= seq(b)``.

Delivery state, as the ToTo family needs it (000 section 4.1, 002 section 2):

* the *delivered prefix*: the messages delivered in completed activations. It is
  causally closed and so, per processor, a prefix of its chain (``front``);
* the current *activation* (000 Figure 3: "Set Nact = Nact + 1"): the DAG ``G``
  after the delivered prefix. Its roots are the *candidates* ``M_G`` (000: "a pending
  message that follows only delivered messages"); since a candidate follows its
  sender's previous message, each processor has at most one candidate, its first
  undelivered message;
* *marked* messages: candidates that GL-ToTo delivered early inside the current
  activation (002 section 5: "mark m_i; deliver m_i"). They are delivered to the
  application but stay in ``G`` until the activation ends, so they keep voting power
  and candidate status for the rest of it;
* ``Defunc`` (000 section 5.2, Figure 4): the processors for which a Crash(q) event
  arrived. They count as heard from (in Tail(G)) and vote for nothing when they have
  no message in ``G``.

Votes (002 section 3): the first message of processor q in ``G`` (its *voter*) votes
for every candidate it follows; a candidate, its sender's voter, votes for itself.
000's Extended Vector Time Stamp VT encodes the same votes (``k`` / infinity / bottom)
and is provided for reproducing 000 Table 1 (:meth:`DagView.vt`).

The rules (``model/rules.py``) do not read a ``DagView``; they read the vocabulary of
``model/vocab.py``, whose concrete interpretation is computed from a ``DagView``.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from operator import gt
from typing import NamedTuple

#: VV(m)[q] when q has not voted yet (002 section 3 writes "*").
UNSEEN = None
#: VT(m)[q] when q is not in Tail_p (000 section 4.1 writes bottom).
BOTTOM = None
#: VT(m)[q] when q voted, but not for m (000 section 4.1).
INFINITY = math.inf


@dataclass(frozen=True)
class Message:
    """A multicast message: its id, the processor that sent it, and the ids it ACKs.

    The per-sender sequence number is implied by the DAG (see :meth:`DagView.seq`).

    >>> Message("d2", "d", ("c1", "e2"))
    Message(id='d2', sender='d', deps=('c1', 'e2'))
    """

    id: str
    sender: str
    deps: tuple[str, ...] = ()


class ActivationState(NamedTuple):
    """The current activation's vocabulary at one moment (see DagView.activation_state)."""

    candidates: tuple[str, ...]
    #: candidate -> rank of its sender
    ranks: dict[str, int]
    #: candidate -> bitmask of the processors voting for it (VV(m)[q] = 1)
    yes: dict[str, int]
    #: candidate -> bitmask of Tail(m)
    tail: dict[str, int]
    #: bitmask of Tail(G): processors with a message in G, and Defunc
    seen: int
    marked: frozenset[str]


class DagView:
    """One process's causally closed view of the DAG (000 section 2.1: ``DAG_p``).

    ``processors`` is the configuration, in the order that ranks processors for the
    lexicographic order of messages (000 section 2: messages are identified by
    ``<sender, counter>``; candidates are delivered "in a lexicographical order").

    >>> v = DagView(["a", "b"])
    >>> v.insert(Message("b1", "b", ("a1",)))   # a1 is missing: buffered
    []
    >>> [m.id for m in v.insert(Message("a1", "a"))]
    ['a1', 'b1']
    >>> v.follows("b1", "a1"), v.candidates()
    (True, ('a1',))
    """

    def __init__(self, processors: Sequence[str]) -> None:
        procs = tuple(processors)
        if not procs:
            raise ValueError("a configuration needs at least one processor")
        if len(set(procs)) != len(procs):
            raise ValueError(f"duplicate processors in {procs!r}")
        self.processors: tuple[str, ...] = procs
        self.n: int = len(procs)
        self._rank: dict[str, int] = {p: i for i, p in enumerate(procs)}
        self._msgs: dict[str, Message] = {}
        self._seq: dict[str, int] = {}
        self._vc: dict[str, tuple[int, ...]] = {}
        self._chain: list[list[str]] = [[] for _ in procs]
        self._buffer: dict[str, Message] = {}
        self._n_missing: dict[str, int] = {}
        self._waiting_on: dict[str, list[str]] = {}
        self._front: list[int] = [0] * self.n
        self._marked: dict[str, None] = {}
        self._delivered: list[str] = []
        self._defunc: set[str] = set()
        self.activation: int = 0
        # The current activation's vocabulary, kept incrementally (see _add): candidates
        # in rank order, and per candidate the bitmasks (bit = processor rank) of the
        # processors voting for it and of Tail(m); the bitmask of Tail(G).
        self._cands: list[str] = []
        self._cand_rank: dict[str, int] = {}
        self._yes: dict[str, int] = {}
        self._tailm: dict[str, int] = {}
        self._seen: int = 0
        #: processors with a message in G (000 section 6's index of latency counts them)
        self._heard: int = 0
        #: bumped on every change of the view
        self.version: int = 0
        #: bumped only when the vocabulary of the current activation changes (candidates,
        #: votes, tails, Tail(G), marks): a rule, being a pure function of the
        #: vocabulary, gives the same answer while it stays the same
        self.vocab_version: int = 0

    # ------------------------------------------------------------------ causal layer

    def insert(self, msg: Message) -> list[Message]:
        """Add ``msg``; return the messages that became visible, in causal order.

        A message whose deps are not all visible is buffered and released (in the list
        returned by a later call) when they are. Re-inserting an identical message is a
        no-op. Raises ``ValueError`` for an unknown sender, a sender already declared
        crashed, a message that ACKs itself, a different message under a known id, or a
        message that does not follow its sender's previous message (a fork); in the
        last case the messages released before it in this call stay visible.
        """
        known = self._msgs.get(msg.id) or self._buffer.get(msg.id)
        if known is not None:
            if known != msg:
                raise ValueError(f"{msg.id}: conflicts with known {known!r}")
            return []
        if msg.sender not in self._rank:
            raise ValueError(f"{msg.id}: sender {msg.sender!r} not in the configuration")
        if msg.sender in self._defunc:
            raise ValueError(f"{msg.id}: sender {msg.sender} is defunct (Crash received)")
        if msg.id in msg.deps:
            raise ValueError(f"{msg.id}: a message cannot ACK itself")
        missing = {d for d in msg.deps if d not in self._msgs}
        if missing:
            self._buffer[msg.id] = msg
            self._n_missing[msg.id] = len(missing)
            for d in missing:
                self._waiting_on.setdefault(d, []).append(msg.id)
            return []
        released: list[Message] = []
        ready = deque([msg])
        while ready:
            m = ready.popleft()
            self._add(m)
            released.append(m)
            for w in self._waiting_on.pop(m.id, ()):
                self._n_missing[w] -= 1
                if self._n_missing[w] == 0:
                    del self._n_missing[w]
                    ready.append(self._buffer.pop(w))
        return released

    def _add(self, m: Message) -> None:
        r = self._rank[m.sender]
        chain = self._chain[r]
        if m.deps:
            vc = [max(col) for col in zip(*(self._vc[d] for d in m.deps))]
        else:
            vc = [0] * self.n
        if vc[r] != len(chain):
            raise ValueError(
                f"{m.id}: does not follow {m.sender}'s previous message "
                f"{chain[-1] if chain else None} (a processor's messages form a chain)")
        seq = len(chain) + 1
        vc[r] = seq
        self._msgs[m.id] = m
        self._seq[m.id] = seq
        self._vc[m.id] = vct = tuple(vc)
        chain.append(m.id)
        self.version += 1
        # Only the new message can change the vocabulary: it may be its sender's first in
        # G (a new voter, maybe a new candidate) and may extend candidates' tails. No
        # visible message can follow it yet, so a new candidate has only its own vote.
        bit = 1 << r
        changed = False
        for c in self._cands:
            if vct[self._cand_rank[c]] >= self._seq[c] and not self._tailm[c] & bit:
                self._tailm[c] |= bit
                changed = True
        if seq == self._front[r] + 1:
            changed = True
            self._seen |= bit
            self._heard |= bit
            for c in self._cands:
                if vct[self._cand_rank[c]] >= self._seq[c]:
                    self._yes[c] |= bit
            if sum(map(gt, vct, self._front)) == 1:
                self._cand_rank[m.id] = r
                self._yes[m.id] = self._tailm[m.id] = bit
                self._cands.append(m.id)
                self._cands.sort(key=self._cand_rank.__getitem__)
        if changed:
            self.vocab_version += 1

    def _recompute_activation(self) -> None:
        front, vcs, seqs = self._front, self._vc, self._seq
        voters = self.voters()
        self._cands = [v for v in voters
                       if v is not None and sum(map(gt, vcs[v], front)) == 1]
        self._cand_rank = {c: self._rank[self._msgs[c].sender] for c in self._cands}
        self._yes, self._tailm = {}, {}
        latest = [(1 << i, vcs[c[-1]]) for i, c in enumerate(self._chain) if c]
        first = [(1 << i, vcs[v]) for i, v in enumerate(voters) if v is not None]
        for c, r in self._cand_rank.items():
            s = seqs[c]
            self._yes[c] = sum(bit for bit, vc in first if vc[r] >= s)
            self._tailm[c] = sum(bit for bit, vc in latest if vc[r] >= s)
        self._seen = self._heard = sum(bit for bit, _ in first)
        for q in self._defunc:
            self._seen |= 1 << self._rank[q]
        self.vocab_version += 1

    def _advance(self, done: list[str]) -> None:
        """The next activation's vocabulary, from the current one, after ``done`` (all
        candidates) joined the delivered prefix. Same result as _recompute_activation
        (tested), in O(n * |done| + n * new candidates) instead of O(n^2 + n * k):

        * a candidate c that stays has the same tail (no message was added), and the
          same votes but from the delivered candidates' senders q: the old voter of q
          was a candidate, which does not follow c, and the new one (q's next message,
          if visible) votes for c iff it follows c;
        * a new candidate is a voter that followed only delivered messages: a moved
          sender's new voter, or a voter that was held back by a delivered message.
        """
        rank, msgs, vcs, seqs = self._rank, self._msgs, self._vc, self._seq
        front, chains = self._front, self._chain
        cand_rank, yes, tailm = self._cand_rank, self._yes, self._tailm
        moved = []
        for m in done:
            r = rank[msgs[m].sender]
            front[r] += 1
            moved.append(r)
            del cand_rank[m], yes[m], tailm[m]
        kept = self._cands = [c for c in self._cands if c in cand_rank]
        defunc_bits = 0
        for q in self._defunc:
            defunc_bits |= 1 << rank[q]
        seen, heard = self._seen, self._heard
        for r in moved:
            bit = 1 << r
            chain = chains[r]
            if len(chain) > front[r]:
                vc = vcs[chain[front[r]]]
                for c in kept:
                    if vc[cand_rank[c]] >= seqs[c]:
                        yes[c] |= bit
            else:
                heard &= ~bit
                if not defunc_bits & bit:
                    seen &= ~bit
        self._seen, self._heard = seen, heard
        # new candidates: voters (not candidates already) following no undelivered message
        # of another processor
        new = []
        for r, chain in enumerate(chains):
            f = front[r]
            if len(chain) > f:
                v = chain[f]
                if v not in cand_rank and sum(map(gt, vcs[v], front)) == 1:
                    new.append((r, v))
        if new:
            first = [(1 << i, vcs[c[f]]) for i, (c, f) in enumerate(zip(chains, front))
                     if len(c) > f]
            latest = [(1 << i, vcs[c[-1]]) for i, c in enumerate(chains) if c]
            for r, c in new:
                s = seqs[c]
                cand_rank[c] = r
                yes[c] = sum(bit for bit, vc in first if vc[r] >= s)
                tailm[c] = sum(bit for bit, vc in latest if vc[r] >= s)
            kept.extend(c for _, c in new)
            kept.sort(key=cand_rank.__getitem__)
        self.vocab_version += 1

    def __contains__(self, mid: object) -> bool:
        return mid in self._msgs

    def __len__(self) -> int:
        return len(self._msgs)

    def message(self, mid: str) -> Message:
        """The visible message ``mid``."""
        return self._msgs[mid]

    def seq(self, mid: str) -> int:
        """k such that ``mid`` is m_{q,k}, the k'th message of its sender (from 1)."""
        return self._seq[mid]

    def vc(self, mid: str) -> tuple[int, ...]:
        """Per processor (in configuration order), the seq of the latest message of
        that processor which ``mid`` follows; 0 when it follows none."""
        return self._vc[mid]

    def follows(self, a: str, b: str) -> bool:
        """Whether ``a`` follows ``b`` (``b`` reachable from ``a``; a follows itself)."""
        return self._vc[a][self._rank[self._msgs[b].sender]] >= self._seq[b]

    def messages_of(self, q: str) -> tuple[str, ...]:
        """The visible messages of processor ``q``, in sending order."""
        return tuple(self._chain[self._rank[q]])

    def rank(self, q: str) -> int:
        """Position of processor ``q`` in the configuration order."""
        return self._rank[q]

    @property
    def visible(self) -> frozenset[str]:
        return frozenset(self._msgs)

    @property
    def buffered(self) -> frozenset[str]:
        """Messages received but waiting for causal predecessors."""
        return frozenset(self._buffer)

    @property
    def heard_from(self) -> frozenset[str]:
        """Processors with at least one visible message (delivered or not)."""
        return frozenset(p for p, c in zip(self.processors, self._chain) if c)

    # --------------------------------------------------------------- delivery state

    @property
    def delivered(self) -> frozenset[str]:
        """Messages delivered to the application (including marked ones)."""
        return frozenset(self._delivered)

    @property
    def delivered_sequence(self) -> tuple[str, ...]:
        """Messages in the order they were delivered to the application."""
        return tuple(self._delivered)

    @property
    def marked(self) -> tuple[str, ...]:
        """Candidates delivered early in the current activation (GL-ToTo, 002 section 5)."""
        return tuple(self._marked)

    @property
    def defunc(self) -> frozenset[str]:
        """000 section 5.2: processors q for which Crash(q) arrived."""
        return frozenset(self._defunc)

    def in_activation(self, mid: str) -> bool:
        """Whether visible ``mid`` is in G, i.e. after the delivered prefix (marked
        messages are still in G)."""
        return self._seq[mid] > self._front[self._rank[self._msgs[mid].sender]]

    def voter(self, q: str) -> str | None:
        """The first message of ``q`` in G (it casts q's votes), or None."""
        r = self._rank[q]
        chain = self._chain[r]
        f = self._front[r]
        return chain[f] if len(chain) > f else None

    def voters(self) -> list[str | None]:
        """:meth:`voter` of every processor, in configuration order."""
        front = self._front
        return [c[f] if len(c) > f else None for c, f in zip(self._chain, front)]

    def candidates(self) -> tuple[str, ...]:
        """M_G: messages of G all of whose causal predecessors are delivered, in
        lexicographic (configuration) order."""
        return tuple(self._cands)

    def tail(self, mid: str) -> frozenset[str]:
        """000 section 4.1: Tail(m), the processors that sent a message following m."""
        r = self._rank[self._msgs[mid].sender]
        s = self._seq[mid]
        return frozenset(p for p, c in zip(self.processors, self._chain)
                         if c and self._vc[c[-1]][r] >= s)

    def ntail(self, mid: str) -> int:
        """NTail(m) = |Tail(m)|."""
        r = self._rank[self._msgs[mid].sender]
        s = self._seq[mid]
        vcs = self._vc
        return sum(1 for c in self._chain if c and vcs[c[-1]][r] >= s)

    def tail_g(self) -> frozenset[str]:
        """Tail(G): processors with a message in G, extended with Defunc (000 section
        5.2: "We extend Tail_p to contain U Tail_p(m_i) U Defunc_p")."""
        return frozenset(p for p, c, f in zip(self.processors, self._chain, self._front)
                         if len(c) > f) | self._defunc

    def ntail_g(self) -> int:
        """NTail(G) = |Tail(G)|; ``n - ntail_g()`` is u, the processors unseen."""
        return self._seen.bit_count()

    def index_of_latency(self) -> int:
        """000 section 6: the number of processors heard from in the current activation
        (with a message in G; Defunc processors were not heard from)."""
        return self._heard.bit_count()

    def vv(self, mid: str) -> tuple[int | None, ...]:
        """002 section 3: the vote vector VV(m): per processor 1 (votes for m), 0 (votes,
        not for m) or UNSEEN. A Defunc processor without a voter votes 0 (000 Figure 4)."""
        out: list[int | None] = []
        for p, v in zip(self.processors, self.voters()):
            if v is None:
                out.append(0 if p in self._defunc else UNSEEN)
            else:
                out.append(1 if self.follows(v, mid) else 0)
        return tuple(out)

    def vt(self, mid: str) -> tuple[int | float | None, ...]:
        """000 section 4.1: the Extended Vector Time Stamp VT(m): per processor q, the k
        of q's voter m_{q,k} if it follows m, INFINITY if q votes otherwise (or is Defunc
        without a voter, 000 Figure 4), BOTTOM if q is not in Tail_p."""
        out: list[int | float | None] = []
        for p, v in zip(self.processors, self.voters()):
            if v is None:
                out.append(INFINITY if p in self._defunc else BOTTOM)
            else:
                out.append(self._seq[v] if self.follows(v, mid) else INFINITY)
        return tuple(out)

    def nvt(self, mid: str) -> int:
        """NVT(m) (000) = nvt(m) (002): the number of processors voting for m."""
        return sum(1 for x in self.vv(mid) if x == 1)

    def activation_state(self) -> ActivationState:
        """A snapshot of the current activation's vocabulary, as bitmasks (bit i =
        the i'th processor of the configuration); kept incrementally, so O(candidates)."""
        return ActivationState(tuple(self._cands), dict(self._cand_rank), dict(self._yes),
                               dict(self._tailm), self._seen, frozenset(self._marked))

    def rule_inputs(self) -> tuple[list[str], list[int], list[int], list[bool], list[int],
                                   int]:
        """What a compiled rule reads (model/compiled.py), without copying dicts:
        candidates in lexicographic order and, per candidate, its vote and tail bitmasks,
        whether it is marked and its sender's rank; then the Tail(G) bitmask."""
        cands = self._cands
        yes, tail, rank, marked = self._yes, self._tailm, self._cand_rank, self._marked
        return (cands, [yes[c] for c in cands], [tail[c] for c in cands],
                [c in marked for c in cands], [rank[c] for c in cands], self._seen)

    # ---------------------------------------------------------------------- events

    def crash(self, q: str) -> None:
        """000 Figure 4, Crash(q): add q to Defunc. No message of q is received after it
        (000 section 5.1), so a later insert of one, or a buffered one, is an error."""
        if q not in self._rank:
            raise ValueError(f"Crash({q}): not in the configuration")
        if any(m.sender == q for m in self._buffer.values()):
            raise ValueError(f"Crash({q}): messages of {q} are still buffered")
        self._defunc.add(q)
        self._seen |= 1 << self._rank[q]
        self.version += 1
        self.vocab_version += 1

    def deliver(self, mids: Sequence[str], end_activation: bool = True) -> None:
        """Deliver ``mids`` to the application, in the given order.

        Every one must be a candidate of the current activation not yet marked. With
        ``end_activation`` the activation's delivered set (the marked messages and
        ``mids``) joins the delivered prefix and a new activation starts (000 Figure 3:
        "Update M_p ... Set Nact = Nact + 1"); otherwise ``mids`` are marked (GL-ToTo).
        """
        cands = self._cand_rank
        seen: set[str] = set()
        for m in mids:
            if m not in cands:
                raise ValueError(f"deliver {m}: not a candidate of activation {self.activation}")
            if m in self._marked or m in seen:
                raise ValueError(f"deliver {m}: already delivered")
            seen.add(m)
        self._delivered.extend(mids)
        if end_activation:
            done = list(self._marked) + list(mids)
            self._marked.clear()
            self.activation += 1
            self._advance(done)
        else:
            self._marked.update(dict.fromkeys(mids))
            self.vocab_version += 1
        self.version += 1
