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
* messages that are never candidates (``never_candidate``, for ToTo's ACK-only
  messages; 000 section 4.1 orders agreed messages only): they vote while in ``G``, and
  join the delivered prefix, undelivered, once everything they follow is delivered
  (:meth:`DagView._retire`);
* ``Defunc`` (000 section 5.2, Figure 4): the processors for which a Crash(q) event
  arrived. They count as heard from (in Tail(G)) and vote for nothing when they have
  no message in ``G``.

Votes (002 section 3): the first message of processor q in ``G`` (its *voter*) votes
for every candidate it follows; a candidate, its sender's voter, votes for itself.
000's Extended Vector Time Stamp VT encodes the same votes (``k`` / infinity / bottom)
and is provided for reproducing 000 Table 1 (:meth:`DagView.vt`).

The rules (``model/toto/rules.py``) do not read a ``DagView``; they read the vocabulary of
``model/toto/vocab.py``, whose concrete interpretation is computed from a ``DagView``.

Speed (the simulator inserts every message into n views): the activation's vocabulary
is kept incrementally (``_add``, ``_advance``), as per-candidate lists and processor
bitmasks; a visible message is one dict entry (its :data:`Fact`: message, vc, vc sum),
which the views of one simulation share (:class:`DagFacts`), so a vc is computed once
per message, not once per view.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import gt
from typing import Any, NamedTuple, NoReturn

from ..kernel import mypyc_attr

#: VV(m)[q] when q has not voted yet (002 section 3 writes "*").
UNSEEN = None
#: VT(m)[q] when q is not in Tail_p (000 section 4.1 writes bottom).
BOTTOM = None
#: VT(m)[q] when q voted, but not for m (000 section 4.1).
INFINITY = math.inf


@mypyc_attr(allow_interpreted_subclasses=True)  # (AckOnly; see model/kernel.py)
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


#: What a visible message's deps fix, whatever the view: the message, its vc, and the sum
#: of its vc (how many messages it follows, itself included).
Fact = tuple[Message, tuple[int, ...], int]


class DagFacts:
    """Per message id, its :data:`Fact`, for views of one configuration to share.

    A message's vc is fixed by its deps, so every view computes the same one as long as
    an id names one message throughout the run. The simulator's processes, which receive
    the very same Message objects, share one DagFacts so that each vc is computed once
    rather than once per process (a third of the simulator's time went to inserts). A
    view takes a shared fact only for the Message object it was computed from (``is``),
    and still checks it against its own chain, so a conflicting or forked message is
    refused as without sharing (tested).
    """

    __slots__ = ("processors", "by_id")

    def __init__(self, processors: Sequence[str]) -> None:
        self.processors: tuple[str, ...] = tuple(processors)
        self.by_id: dict[str, Fact] = {}


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


_BYTE_RANKS: list[list[tuple[int, ...]]] = []


def _byte_ranks(nbytes: int) -> list[list[tuple[int, ...]]]:
    """Per byte k of a bitmask and per value b of that byte, the positions of its bits:
    looping over them is faster than peeling bits one at a time (shared, built once)."""
    while len(_BYTE_RANKS) < nbytes:
        k = len(_BYTE_RANKS)
        _BYTE_RANKS.append([tuple(8 * k + i for i in range(8) if b >> i & 1)
                            for b in range(256)])
    return _BYTE_RANKS


def _fork(m: Message, chain: Sequence[str]) -> NoReturn:
    raise ValueError(
        f"{m.id}: does not follow {m.sender}'s previous message "
        f"{chain[-1] if chain else None} (a processor's messages form a chain)")


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

    def __init__(self, processors: Sequence[str], facts: DagFacts | None = None,
                 never_candidate: Callable[[Message], bool] | None = None) -> None:
        procs = tuple(processors)
        if not procs:
            raise ValueError("a configuration needs at least one processor")
        if len(set(procs)) != len(procs):
            raise ValueError(f"duplicate processors in {procs!r}")
        self.processors: tuple[str, ...] = procs
        self.n: int = len(procs)
        self._rank: dict[str, int] = {p: i for i, p in enumerate(procs)}
        if facts is not None and facts.processors != procs:
            raise ValueError(f"facts of configuration {facts.processors!r} shared with a "
                             f"view of {procs!r}")
        self._facts = facts.by_id if facts is not None else None
        #: per visible message, its Fact (one dict, one store per insert: the hot path)
        self._msgs: dict[str, Fact] = {}
        self._chain: list[list[str]] = [[] for _ in procs]
        self._buffer: dict[str, Message] = {}
        self._n_missing: dict[str, int] = {}
        self._waiting_on: dict[str, list[str]] = {}
        self._front: list[int] = [0] * self.n
        self._marked: dict[str, None] = {}
        self._delivered: list[str] = []
        self._defunc: set[str] = set()
        # Messages that vote but are never ordered as candidates (000 section 4.1 orders
        # agreed messages only: see _retire), and those of them that joined the prefix
        self._never = never_candidate
        self._retired: list[str] = []
        self.activation: int = 0
        # The current activation's vocabulary, kept incrementally (see _add): candidates
        # in rank order and, in lists aligned with them (what a compiled rule reads, see
        # rule_inputs), their senders' ranks, the bitmasks (bit = processor rank) of the
        # processors voting for them and of their Tail(m), and whether they are marked;
        # the bitmask of Tail(G).
        self._cands: list[str] = []
        self._cand_rank: list[int] = []
        self._yes: list[int] = []
        self._tailm: list[int] = []
        self._cand_marked: list[bool] = []
        self._seen: int = 0
        #: processors with a message in G (000 section 6's index of latency counts them)
        self._heard: int = 0
        # Per processor rank, the vc of its latest visible message and of its voter (all
        # zeros when it has none: it then follows nothing), and, for each voter that is
        # not a candidate, how many other processors it follows an undelivered message
        # of (see _advance).
        self._byte_ranks = _byte_ranks((self.n + 7) // 8)
        self._zero_vc: tuple[int, ...] = (0,) * self.n
        self._latest_vc: list[tuple[int, ...]] = [self._zero_vc] * self.n
        self._voter_vc: list[tuple[int, ...]] = [self._zero_vc] * self.n
        self._blocked: dict[int, int] = {}
        #: bumped only when the vocabulary of the current activation changes (candidates,
        #: votes, tails, Tail(G), marks): a rule, being a pure function of the
        #: vocabulary, gives the same answer while it stays the same
        self.vocab_version: int = 0
        #: (rule, params, vocab_version) at which rules.drain last found nothing to deliver
        #: (kept here rather than in a WeakKeyDictionary: a view compiled by mypyc,
        #: model/kernel.py, takes no weak reference)
        self.quiet: tuple[Any, Any, int] | None = None

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
        msgs = self._msgs
        fact = msgs.get(msg.id)
        known = fact[0] if fact is not None else self._buffer.get(msg.id)
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
        for d in msg.deps:
            if d not in msgs:
                missing = {d for d in msg.deps if d not in msgs}
                self._buffer[msg.id] = msg
                self._n_missing[msg.id] = len(missing)
                for d in missing:
                    self._waiting_on.setdefault(d, []).append(msg.id)
                return []
        self._add(msg)
        if not self._waiting_on:  # nothing buffered waits for it (the common case)
            return [msg]
        released: list[Message] = []
        ready = deque([msg])
        while ready:
            m = ready.popleft()
            if m is not msg:
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
        mid = m.id
        msgs, facts = self._msgs, self._facts
        fact = facts.get(mid) if facts is not None else None
        if fact is not None and fact[0] is m:  # another view of the run computed it
            vct = fact[1]
            if vct[r] != len(chain) + 1:
                _fork(m, chain)
        else:
            deps = m.deps
            if not deps:
                vc = [0] * self.n
            elif len(deps) == 1:
                vc = list(msgs[deps[0]][1])
            else:
                vc = list(map(max, *[msgs[d][1] for d in deps]))
            if vc[r] != len(chain):
                _fork(m, chain)
            vc[r] += 1
            vct = tuple(vc)
            fact = (m, vct, sum(vct))
            if facts is not None:
                facts[mid] = fact
        msgs[mid] = fact
        chain.append(mid)
        self._latest_vc[r] = vct
        # Only the new message can change the vocabulary: it may be its sender's first in
        # G (a new voter, maybe a new candidate) and may extend candidates' tails. No
        # visible message can follow it yet, so a new candidate has only its own vote.
        # A candidate is its sender's first message in G: m follows it iff m follows an
        # undelivered message of that sender.
        bit = 1 << r
        front = self._front
        tailm = self._tailm
        if len(chain) == front[r] + 1:  # a voter: it votes for, and is in the tail of,
            yes = self._yes             # every candidate it follows
            for i, cr in enumerate(self._cand_rank):
                if vct[cr] > front[cr]:
                    tailm[i] |= bit
                    yes[i] |= bit
            self._seen |= bit
            self._heard |= bit
            self._voter_vc[r] = vct
            # the other processors whose undelivered messages it follows
            blocked = sum(map(gt, vct, front)) - 1
            if blocked:
                self._blocked[r] = blocked
            else:
                self._add_candidate(mid, r, bit, bit)
                if self._never is not None and self._never(m):
                    self._retire([mid])
            self.vocab_version += 1
            return
        changed = False
        for i, cr in enumerate(self._cand_rank):
            if vct[cr] > front[cr] and not tailm[i] & bit:
                tailm[i] |= bit
                changed = True
        if changed:
            self.vocab_version += 1

    def _add_candidate(self, c: str, r: int, yes: int, tail: int) -> None:
        """Insert candidate c of sender rank r, in rank order."""
        if not self._cands:
            self._cands, self._cand_rank, self._yes, self._tailm = [c], [r], [yes], [tail]
            self._cand_marked = [False]
            return
        i = bisect_left(self._cand_rank, r)
        self._cands.insert(i, c)
        self._cand_rank.insert(i, r)
        self._yes.insert(i, yes)
        self._tailm.insert(i, tail)
        self._cand_marked.insert(i, False)

    def _recompute_activation(self) -> None:
        front, vcs = self._front, self.vc
        voters = self.voters()
        self._cands = [v for v in voters
                       if v is not None and sum(map(gt, vcs(v), front)) == 1]
        self._cand_rank = [self._rank[self._msgs[c][0].sender] for c in self._cands]
        self._yes, self._tailm = [], []
        self._cand_marked = [c in self._marked for c in self._cands]
        latest = [(1 << i, vcs(c[-1])) for i, c in enumerate(self._chain) if c]
        first = [(1 << i, vcs(v)) for i, v in enumerate(voters) if v is not None]
        for c, r in zip(self._cands, self._cand_rank):
            s = vcs(c)[r]
            self._yes.append(sum(bit for bit, vc in first if vc[r] >= s))
            self._tailm.append(sum(bit for bit, vc in latest if vc[r] >= s))
        self._seen = self._heard = sum(bit for bit, _ in first)
        for q in self._defunc:
            self._seen |= 1 << self._rank[q]
        self._latest_vc = [vcs(c[-1]) if c else self._zero_vc for c in self._chain]
        self._voter_vc = [self._zero_vc if v is None else vcs(v) for v in voters]
        self._blocked = {r: b for r, b in ((r, sum(map(gt, vcs(v), front)) - 1)
                                           for r, v in enumerate(voters) if v is not None)
                         if b}
        self.vocab_version += 1

    def _advance(self, done: Sequence[str]) -> list[int]:
        """The next activation's vocabulary, from the current one, after ``done`` (all
        candidates) joined the delivered prefix. Same result as _recompute_activation
        (tested), in O(n * |done| + n * new candidates) instead of O(n^2 + n * k), and
        in practice less, as only processors in vote and tail masks are visited. Returns
        the ranks of the new candidates' senders.

        * a candidate c that stays has the same tail (no message was added), and the
          same votes but from the delivered candidates' senders q: the old voter of q
          was a candidate, which does not follow c, and the new one (q's next message,
          if visible) votes for c iff it follows c;
        * a new candidate is a voter that followed only delivered messages: a moved
          sender's new voter, or a voter that was held back by a delivered message.
          ``_blocked`` counts, per voter that is not a candidate, the other processors
          it follows an undelivered message of; q's front moving past m_{q,f} unblocks
          q for exactly the voters whose vc[q] is f. Those follow m_{q,f}, so they are
          among the voters that voted for it (its yes mask): only these are looked at.
          A voter becomes a candidate when its count reaches 0;
        * a new candidate follows a delivered one (it was held back by it, or is its
          sender's next message), so its Tail and its voters are among the processors
          of that one's tail: only these are looked at.
        """
        front, chains, msgs = self._front, self._chain, self._msgs
        voter_vc, blocked = self._voter_vc, self._blocked
        cand_rank = self._cand_rank
        # moved: per delivered candidate, its sender's rank and its voters; scope: the
        # union of their tails (every new candidate follows one of them, so its tail is
        # in there)
        if len(cand_rank) == 1 and len(done) == 1:  # the commonest case of all
            q = cand_rank[0]
            moved: Sequence[tuple[int, int]] = ((q, self._yes[0]),)
            scope = self._tailm[0]
            front[q] += 1
            cand_rank = self._cand_rank = []
            self._cands, self._yes, self._tailm, self._cand_marked = [], [], [], []
        elif len(done) == len(cand_rank):  # every candidate: the next commonest case
            moved = tuple(zip(cand_rank, self._yes))
            scope = 0
            for t in self._tailm:
                scope |= t
            for q in cand_rank:
                front[q] += 1
            cand_rank = self._cand_rank = []
            self._cands, self._yes, self._tailm, self._cand_marked = [], [], [], []
        else:
            gone = [self._cands.index(m) for m in done]
            moved = [(cand_rank[i], self._yes[i]) for i in gone]
            scope = 0
            for i in gone:
                scope |= self._tailm[i]
                front[cand_rank[i]] += 1
            keep = [i for i in range(len(cand_rank)) if i not in gone]
            self._cands = [self._cands[i] for i in keep]
            cand_rank = self._cand_rank = [cand_rank[i] for i in keep]
            self._yes = [self._yes[i] for i in keep]
            self._tailm = [self._tailm[i] for i in keep]
            self._cand_marked = [self._cand_marked[i] for i in keep]
        byte_ranks = self._byte_ranks
        yes = self._yes
        seen, heard = self._seen, self._heard
        new = []
        for q, voters in moved:
            chain = chains[q]
            f = front[q]
            bit = 1 << q
            # q's new voter, m_{q,f+1} if visible: it votes for the candidates it follows
            # (a candidate is its sender's first message in G: see _add), and is a new
            # candidate unless it follows an undelivered message of another processor
            if len(chain) > f:
                vc = voter_vc[q] = msgs[chain[f]][1]
                if cand_rank:
                    for i, cr in enumerate(cand_rank):
                        if vc[cr] > front[cr]:
                            yes[i] |= bit
                b = sum(map(gt, vc, front)) - 1
                if b:
                    blocked[q] = b
                else:
                    new.append(q)
            else:
                voter_vc[q] = self._zero_vc
                heard &= ~bit
                if not (self._defunc and self.processors[q] in self._defunc):
                    seen &= ~bit
            # the other voters following m_{q,f} (the yes mask): all held back by it; those
            # held back by no later message of q are held back by one processor fewer.
            # (They are not moved senders, whose voters were candidates: no voter_vc
            # read here is one this loop sets.)
            voters &= ~bit
            k = 0
            while voters:  # (the ranks of its bits, a byte at a time)
                for r in byte_ranks[k][voters & 255]:
                    if voter_vc[r][q] == f:
                        b = blocked[r] - 1
                        if b:
                            blocked[r] = b
                        else:
                            del blocked[r]
                            new.append(r)
                voters >>= 8
                k += 1
        self._seen, self._heard = seen, heard
        if new:
            latest_vc = self._latest_vc
            # into empty lists, candidates in rank order are appended; else inserted
            append = not cand_rank
            if append and len(new) > 1:
                new.sort()
            for r in new:
                s = front[r] + 1  # the new candidate is m_{r,s}, r's first message in G
                # Tail(c) and the voters following c (a voter that follows c is in Tail(c):
                # its processor's latest message follows the voter)
                y = t = 0
                m, k = scope, 0
                while m:
                    for p in byte_ranks[k][m & 255]:
                        if latest_vc[p][r] >= s:
                            t |= 1 << p
                            if voter_vc[p][r] >= s:
                                y |= 1 << p
                    m >>= 8
                    k += 1
                if not append:
                    self._add_candidate(chains[r][s - 1], r, y, t)
                else:
                    self._cands.append(chains[r][s - 1])
                    cand_rank.append(r)
                    yes.append(y)
                    self._tailm.append(t)
                    self._cand_marked.append(False)
        self.vocab_version += 1
        return new

    def _retire(self, cands: Sequence[str]) -> None:
        """Move those of ``cands`` (new candidates) that must never be candidates
        (``never_candidate``) into the delivered prefix, without an activation and
        without delivering them, and so on with the candidates that uncovers (a retired
        message's successor may be one too).

        000 section 4.1 defines a pending message as "an agreed multicast message that
        was received ... but has not yet been added to the total order" and a candidate
        as a pending message that follows only delivered ones; Figure 1's causal
        multicast messages are in the DAG but never candidates. An ACK-only message is
        such a message: it votes (while it is its sender's first message in G it votes
        for the candidates it follows) but is not agreed, so ordering it would only make
        agreed candidates wait for it. It leaves G, as a causal message is delivered,
        once everything it follows is delivered. Which messages leave is a function of
        the delivered prefix and the DAG (a process that sees one sees what it follows),
        so every process retires the same messages between the same activations and the
        G on which the processes' activations must agree stays the same at every process.
        ``deliver`` and ``drain_compiled`` never see a retired message."""
        never, msgs, chains, front = self._never, self._msgs, self._chain, self._front
        while True:
            done = [c for c in cands if never(msgs[c][0])]  # type: ignore[misc]
            if not done:
                return
            self._retired.extend(done)
            cands = [chains[r][front[r]] for r in self._advance(done)]

    def __contains__(self, mid: object) -> bool:
        return mid in self._msgs

    def __len__(self) -> int:
        return len(self._msgs)

    def message(self, mid: str) -> Message:
        """The visible message ``mid``."""
        return self._msgs[mid][0]

    def seq(self, mid: str) -> int:
        """k such that ``mid`` is m_{q,k}, the k'th message of its sender (from 1)."""
        m, vc, _ = self._msgs[mid]
        return vc[self._rank[m.sender]]

    def vc(self, mid: str) -> tuple[int, ...]:
        """Per processor (in configuration order), the seq of the latest message of
        that processor which ``mid`` follows; 0 when it follows none."""
        return self._msgs[mid][1]

    def follows(self, a: str, b: str) -> bool:
        """Whether ``a`` follows ``b`` (``b`` reachable from ``a``; a follows itself)."""
        mb, vb, _ = self._msgs[b]
        r = self._rank[mb.sender]
        return self._msgs[a][1][r] >= vb[r]

    def messages_of(self, q: str) -> tuple[str, ...]:
        """The visible messages of processor ``q``, in sending order."""
        return tuple(self._chain[self._rank[q]])

    def chain(self, r: int) -> Sequence[str]:
        """The visible messages of the processor of rank ``r``, in sending order: m_{q,k}
        is ``chain(r)[k - 1]``. The view's own list, not a copy (the simulator reads it
        per send): do not change it."""
        return self._chain[r]

    def rank(self, q: str) -> int:
        """Position of processor ``q`` in the configuration order."""
        return self._rank[q]

    def heads(self) -> tuple[str, ...]:
        """The latest visible message of each processor that no other processor's latest
        message follows, in configuration order (what a new message ACKs, see
        model/process.py)."""
        # computed here, once per send, rather than kept by _add, once per insert (n times
        # as many). The latest message of r is m_{r,s}, s = len(chain): no visible message
        # follows more than s of r's, so the column of r in the latest vcs holds s at r
        # itself and once more for every other latest message following m_{r,s}
        chains = self._chain
        return tuple([chains[r][-1] for r, col in enumerate(zip(*self._latest_vc))
                      if col.count(len(chains[r])) == 1 and chains[r]])

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
    def retired(self) -> tuple[str, ...]:
        """Messages that joined the delivered prefix without being candidates or
        delivered (``never_candidate``; see :meth:`_retire`), in the order they did."""
        return tuple(self._retired)

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
        return self.seq(mid) > self._front[self._rank[self._msgs[mid][0].sender]]

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
        r = self._rank[self._msgs[mid][0].sender]
        s = self.seq(mid)
        return frozenset(p for p, c in zip(self.processors, self._chain)
                         if c and self.vc(c[-1])[r] >= s)

    def ntail(self, mid: str) -> int:
        """NTail(m) = |Tail(m)|."""
        r = self._rank[self._msgs[mid][0].sender]
        s = self.seq(mid)
        return sum(1 for c in self._chain if c and self.vc(c[-1])[r] >= s)

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
                out.append(self.seq(v) if self.follows(v, mid) else INFINITY)
        return tuple(out)

    def nvt(self, mid: str) -> int:
        """NVT(m) (000) = nvt(m) (002): the number of processors voting for m."""
        return sum(1 for x in self.vv(mid) if x == 1)

    def activation_state(self) -> ActivationState:
        """A snapshot of the current activation's vocabulary, as bitmasks (bit i =
        the i'th processor of the configuration); kept incrementally, so O(candidates)."""
        cands = self._cands
        return ActivationState(tuple(cands), dict(zip(cands, self._cand_rank)),
                               dict(zip(cands, self._yes)), dict(zip(cands, self._tailm)),
                               self._seen, frozenset(self._marked))

    def rule_inputs(self) -> tuple[list[str], list[int], list[int], list[bool], list[int],
                                   int]:
        """What a compiled rule reads (model/toto/compiled.py): candidates in lexicographic
        order and, per candidate, its vote and tail bitmasks, whether it is marked and its
        sender's rank; then the Tail(G) bitmask. The lists are the view's own, not copies
        (this runs for every rule evaluation): read them before the view changes, and do
        not modify them."""
        return (self._cands, self._yes, self._tailm, self._cand_marked, self._cand_rank,
                self._seen)

    def drain_compiled(self, lookup: Callable[[int], Any], fallback: Callable[[], bool],
                       into: list[tuple[str, int, int, str]]) -> None:
        """Evaluate a rule and apply what it delivers until it delivers nothing more (000
        Figure 3 is event driven: a delivery opens an activation that may be deliverable
        at once). The simulator's inner loop, so it runs here, on the view's own arrays.

        ``lookup(k)`` gives the rule compiled for k candidates (model/toto/compiled.py; a
        :class:`~tomkit.model.toto.rules.Decider`'s ``compiled_for``) or None; the compiled
        rule's slot mask names distinct unmarked candidates, so :meth:`deliver`'s checks
        are skipped. Where there is no compiled rule or a candidate is marked,
        ``fallback()`` decides and applies one step itself (through the Decider and
        ``rules.apply``, which give the same result: tested), appends what it delivered
        to ``into`` and returns whether it delivered. Each delivered message is appended
        to ``into`` as (message, index of latency, number of candidates, clause), 000
        section 6's measures of the step that delivered it."""
        while True:
            cands = self._cands
            k = len(cands)
            fn = lookup(k)
            if fn is None or self._marked:
                if not fallback():
                    return
                continue
            r = fn.fn(self._yes, self._tailm, self._cand_marked, self._cand_rank, self._seen)
            if r is None:
                return
            i, mask = r
            clause, ends = fn.options[i]
            if mask == fn.full and k:
                msgs = tuple(cands)
            else:
                msgs = tuple([c for j, c in enumerate(cands) if mask >> j & 1])
                if not msgs:  # as rules.apply: nothing would change, and we would loop
                    raise ValueError("the rule returned an empty delivery")
            iol = self._heard.bit_count()  # (index_of_latency())
            self.deliver_checked(msgs, ends)
            if len(msgs) == 1:
                into.append((msgs[0], iol, k, clause))
            else:
                into += [(m, iol, k, clause) for m in msgs]

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
        self.vocab_version += 1

    def deliver(self, mids: Sequence[str], end_activation: bool = True) -> None:
        """Deliver ``mids`` to the application, in the given order.

        Every one must be a candidate of the current activation not yet marked. With
        ``end_activation`` the activation's delivered set (the marked messages and
        ``mids``) joins the delivered prefix and a new activation starts (000 Figure 3:
        "Update M_p ... Set Nact = Nact + 1"); otherwise ``mids`` are marked (GL-ToTo).
        """
        cands, marked = self._cands, self._marked
        for i, m in enumerate(mids):
            if m not in cands:
                raise ValueError(f"deliver {m}: not a candidate of activation {self.activation}")
            if m in marked or (i and m in mids[:i]):
                raise ValueError(f"deliver {m}: already delivered")
        self.deliver_checked(mids, end_activation)

    def deliver_checked(self, mids: Sequence[str], end_activation: bool = True) -> None:
        """:meth:`deliver`, for ``mids`` known to be distinct candidates none of which is
        marked (a compiled rule's delivery when nothing is marked, see model/process.py):
        the checks are skipped, as the simulator's inner loop runs this."""
        self._delivered.extend(mids)
        if end_activation:
            done: Sequence[str]
            if self._marked:
                done = [*self._marked, *mids]
                self._marked.clear()
            else:
                done = mids
            self.activation += 1
            new = self._advance(done)
            if self._never is not None and new:
                chains, front = self._chain, self._front
                self._retire([chains[r][front[r]] for r in new])
        else:
            self._marked.update(dict.fromkeys(mids))
            cands = self._cands
            for m in mids:
                self._cand_marked[cands.index(m)] = True
            self.vocab_version += 1
