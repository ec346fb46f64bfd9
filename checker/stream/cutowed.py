"""The end-of-trace properties across the cut: agreement, validity, liveness and member
liveness of a trace broken early, decided on the cut's records and the tail's clean pass.

narrow.py cuts a broken trace after its breach: a set M of messages, per process p the
count K_p of its held deliveries that name M; the records naming M (and, with views,
every membership record: viewcut.py) go to the exact checks, the rest (the *tail*) to a
fresh canonical pass that keeps its picture to the end. narrow.py's argument serves the
order and view properties, whose first violation lies among M's records. Agreement,
validity, liveness (Défago, Schiper and Urbán 2004, section 2.2) and member liveness
(Bar-Joseph, Keidar, Anker and Lynch 2000, section 2) ask who owes what of *every*
message, so a violation may lie in the tail; but the tail keeps the picture, and a
clean pass answers exactly that question (ledger.py: each process's stays per view,
the properties' stream deciders, ``Property.stream``). This module merges the two
answers into the held records' own.

**Notation.** H is the held records, H_M the cut's records (those naming M, and every
membership record with views), T the tail's records (those naming the other messages,
and every membership record with views). check(X) is a property's exact check on the
records X as a trace; the tail's clean decider gives check(T) (the clean deciders are
the exact checks' on a trace that keeps the picture: test_stream_end_of_trace.py).

**Conditions** (besides the cut's, narrow.py's 1 to 5 or viewcut.py's 4v and 5v):

A. every process with a held record has a record in H_M, and one in T or none there
   (below, "A process silent in the tail"); with views a membership record is on both
   sides; a process that delivers and sends nothing of M fails this (narrow.py then
   tries a cut that holds its first record: ``Heads``);
B. the tail's deciders decide (none needs the whole trace: a witness not kept);
C. for member liveness, not both sides undecided without a violation (the first
   undecidable pair's sender is not in its sentence, so the two could not be ordered);
D. the tail judged every member set: liveness reads the final view's members, so a cut
   whose tail left one unjudged (cutdeps.py, "A breach among the membership records")
   is refused for these properties (narrow.py's ``Cut.result``).

Else the cut is not taken for them (narrow.py tries the next one, then every held
record is checked, as before).

**What is the same in H, H_M and T.** Each message's sends and deliveries lie on one
side (the records split by message id). Each process's deliveries of M are its first
K_p held deliveries and each sender's sends of M its first held sends (condition 1):
p's deliveries in H are its deliveries in H_M, then its deliveries in T, and so are its
sends; a witness's index in T is its index in H less p's deliveries (or sends) in H_M.
The crash, view, join and leave records are none of H's without views (narrow.py's
condition 4), and all of H_M's and T's with views, in each process's own order (viewcut.py):
so the crashed processes, each process's installed views, the view it left from, its
latest join (record and clocks), the view each record was made in, and the final view
are the same in all three; with condition A so are the processes, and with them the
correct processes of each property (no crash; with liveness, in the final view; with
member liveness, a last membership record that is a join, or none), each sorted by
name. A process's last record (the witness's "last event of q") is its last in H, which
canon.py keeps as records come (``TraceState.last``): each side's is replaced by it.

**Why the merge is the exact check's, property by property**, each in its own order:

- *agreement* scans the deliverers by name, each one's first deliveries in order, then
  the correct processes q by name: a violation when q does not deliver the message and
  owes it (installed its delivery's view and did not leave from it; without views: did
  not leave). p's first deliveries in H are those in H_M, then those in T; whether q
  delivers a message, and whether q owes it, is read on its own side, with the same
  views. So p's candidates in H are its candidates in H_M, then those in T, in the same
  order: H's first violation is check(H_M)'s when its deliverer comes first by name or
  is the same as check(T)'s, else check(T)'s; the sentence names p, m, the view and q,
  the same on both.
- *validity* scans the senders by name (not crashed), each one's sends in order: a
  violation when the sender does not deliver the message and did not leave from its
  sending view. Its sends in H are those in H_M, then those in T: the same merge by
  sender. Unknown exactly when H has no send: the cut takes no trace whose tail sends
  while M has no send (narrow.py), and a tail without sends judges nothing (it holds).
- *liveness* scans the messages by id: a violation when a correct process sent it or
  delivered it and a correct process that owes it does not deliver it. Each message's
  candidates are read on its side alone, with the same correct processes and views, so
  H's first violation is the one of the two with the smaller id (ids are disjoint); its
  cause (the send, or the first correct deliverer's delivery) and the process short of
  it are the same records. Its details (the correct processes) are the same.
- *member liveness* scans the correct senders by name, each one's first sends of an id
  since its latest join, then the correct processes q: a pair is judged when q does not
  deliver the message, and owed by q's latest join and its views since, or the clocks
  of the two records. p's sends in H are those in H_M, then those in T (the join, a
  membership record, is on both sides in p's order, so "sent after its latest join"
  reads alike), and each pair is judged on its message's side with the same records:
  H's first owed pair is check(H_M)'s when its sender comes first by name or is the
  same, else check(T)'s. With no owed pair, the first undecidable pair is H's unknown:
  one side's, when only one side has one (condition C).

Then reduced.py shifts the witnesses by the retired prefix, as it shifts the held
records' (with views, viewheld.py: its argument reads H, which this merge gives).

**A process silent in the tail.** A process x whose held records all name M (it stops
inside the breach: its last delivery is one of M) is a process of H, and correct there
(without views the cut takes no crash or leave record; with views every membership
record is on both sides, so x has none: no crash, join, leave or view), but T has no
record of it, so check(T) on T's records alone would not judge it. It is added to
T's clean summary as a process that delivered and sent nothing (``Ledger.add_silent``:
one stay before any view, no delivery, its cursor at S'[0], its last record H's), which
is what x is in T ∪ {x}: every check reads x there as H reads it on T's messages. In
H, x delivers none of T's messages (its records name M only) and sends none of them;
each is owed by x (it did not leave); x is correct for each property (no crash; no
final view; no join); so each candidate (p, m, x) with m a T message is one of H's
exactly when it is one of check(T ∪ {x})'s, at the same place of the scan (x among the
correct processes by name), with the same sentence, and x's last event, the witness's
last, is H's (``_last``). With T's positions retired, x lies behind T's retired prefix
from its start, which the deciders read from T's retired sequence on disk, as for any
process behind (ledger.py); where a witness is not kept they return None (condition
B). With views x installed no view, in H as in T ∪ {x} (its one stay is "no view
yet"): a process owes a message only of a view it installed (agreement.py's
``owes``), so x owes none of T's messages on either side; member liveness reads x as
a member from the start (no join) with no view since, on both sides; and x is among
the correct processes of both, in liveness's details too. A process with no record
in H_M (one that first appears in T) still fails A; narrow.py tries a cut that holds
its first record (``Heads``).

**A retired prefix.** A broken trace whose positions retired (its window,
``canon.TRIM_AT``, passed before the breach) has each process's retired deliveries
counted: prefixowed.py decides the retired part of these properties from those counts
and the retired sequence on disk, and merges it with H's result (this merge's, across a
cut) in the same scan orders, R coming first; so a crash, a process behind the retired
prefix and, with views, a member that skipped a retired view no longer refuse the cut
(nor send the trace whole). Condition A still requires every process to have a held
record.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..properties import Options, Property
from ..properties.agreement import NO_SENDS
from ..result import Result, Verdict, WitnessEvent

if TYPE_CHECKING:
    from .canon import TraceState

__all__ = ["OWED", "Owed", "decide", "owing"]

#: the end-of-trace properties decided across the cut (module docstring), by name
OWED = frozenset({"agreement", "validity", "liveness", "member-liveness"})
#: the one whose first violation is ordered by message id, not by process
BY_ID = "liveness"


def owing(props: Sequence[Property]) -> list[Property]:
    """The end-of-trace properties among ``props`` that this module decides."""
    return [p for p in props if p.name.split("@")[0] in OWED]


@dataclass(frozen=True)
class Owed:
    """The tail's part of the end-of-trace properties across a cut."""

    #: per property name, check(T): the tail's clean decider's result
    results: dict[str, Result]
    #: per process, its deliveries and its sends in H_M: T's indexes start past them
    delivered: dict[str, int]
    sent: dict[str, int]

    def merge(self, name: str, verdict: Verdict, held: Result | None,
              last: dict[str, WitnessEvent]) -> Result | None:
        """H's result of property ``name`` from check(H_M) (its ``verdict`` and, unless it
        holds, its result ``held``) and check(T) (module docstring); None: condition C."""
        base = name.split("@")[0]
        tail = self.results[name]
        tv = tail.verdict
        if held is None:
            held = Result(name, tail.trace, verdict)
        if verdict == Verdict.UNKNOWN and held.explanation == NO_SENDS:
            # no send in H_M: the cut took no tail that sends (narrow.py)
            return held if tv == Verdict.UNKNOWN and tail.explanation == NO_SENDS else None
        if tv == Verdict.UNKNOWN and tail.explanation == NO_SENDS:
            tv = Verdict.HOLDS  # a tail without sends judges nothing
        if verdict == Verdict.VIOLATED and \
                (tv != Verdict.VIOLATED or _key(base, held) <= _key(base, tail)):
            return self._last(held, last)
        if tv == Verdict.VIOLATED:
            return self._last(self._shift(tail), last)
        if verdict == Verdict.UNKNOWN:
            return None if tv == Verdict.UNKNOWN else held
        return tail if tv == Verdict.UNKNOWN else Result(name, tail.trace, Verdict.HOLDS)

    def _shift(self, res: Result) -> Result:
        """A result of T with its witnesses' indexes counted in H."""

        def event(w: WitnessEvent) -> WitnessEvent:
            if w.index is None:
                return w
            add = self.delivered if w.kind == "deliver" else \
                self.sent if w.kind == "send" else {}
            return replace(w, index=w.index + add.get(w.process, 0))

        return replace(res, witness=[event(w) for w in res.witness])

    @staticmethod
    def _last(res: Result, last: dict[str, WitnessEvent]) -> Result:
        """Every one of these witnesses ends with a process's last event: its last in H."""
        w = res.witness
        if not w or w[-1].index is not None or w[-1].process not in last:
            return res
        return replace(res, witness=[*w[:-1], last[w[-1].process]])


def _key(base: str, res: Result) -> str:
    """Where a violation lies in its check's scan: the message id (liveness), else the
    first witness event's process (the deliverer, or the sender)."""
    w = res.witness[0]
    return (w.msg or "") if base == BY_ID else w.process


def decide(tail: TraceState, props: Sequence[Property], options: Options,
           processes: set[str], on_m: set[str], delivered: dict[str, int],
           sent: dict[str, int], last: dict[str, WitnessEvent] | None = None) -> Owed | None:
    """check(T) for each end-of-trace property of ``props`` from the tail's clean pass
    (``tail``, settled), given the held records' processes, those with a record in H_M,
    and each one's deliveries and sends there; None when conditions A or B fail.
    ``last``: each process's last record in H, for a process silent in T (condition A)."""
    names = list(tail.procs)
    on_t = {names[i] for i in range(len(names)) if tail.seen[i]}
    silent = processes - on_t
    if on_m != processes or not on_t <= processes or \
            (silent and (last is None or not silent <= last.keys())):
        return None  # condition A
    clean = tail.clean()
    if silent:  # known to T's deciders as processes with no record there
        clean = replace(clean, processes=clean.processes | silent,
                        delivered={**clean.delivered, **{p: 0 for p in silent}})
        if clean.ledger is not None:
            clean.ledger.add_silent({p: last[p] for p in silent})
    results = {}
    for prop in owing(props):
        res = prop.stream(clean, options) if prop.stream else None
        if res is None:
            return None  # condition B
        results[prop.name] = res
    return Owed(results, delivered, sent)
