"""Delta debugging of a failing run of the process fuzzer, at the level of its schedule.

Hypothesis shrinks the *draws* of a run: when a failure needs a long, precise
interleaving (the hybrid protocol's literal readings of 001 Figure 4 need a role switch,
tickets issued on both sides of it and packets that arrive in one order at one process
and in another elsewhere), most of its shrink attempts change an early draw, which
changes what every later draw means, and the run no longer fails; it stops at its
shrink limit with a trace of a hundred records. This module reduces the *steps* instead.

A run of :func:`~tomkit.fuzz.process_machine.process_machine` logs every step it takes
(``send p``, ``transmit`` on a link, ``fire_timer p``, ``crash q``, ``notify p q``, the
membership's steps), each named by what it does rather than by the draws behind it.
:func:`replay` runs a schedule through a fresh machine, deterministically: a step the
machine does not allow at that point (its rule's precondition: the link is empty, the
crash budget is spent, a packet of q is still on its way to p) is skipped; then the
machine's own teardown drains the run and judges it with the checker, exactly as at the
end of a fuzzed run. So every schedule it replays is a run the fuzzer itself could have
made, and a failure it reports is the checker's verdict on that run's trace: no false
alarms.

:func:`reduce` is Zeller and Hildebrandt's ddmin ("Simplifying and isolating
failure-inducing input", IEEE TSE 2002) over the steps: it drops chunks of steps, then
single steps, then pairs of steps, and keeps a shorter schedule when its replay fails
the *same property* with no more trace records than the best so far, until no single step
and no pair can go or the replay budget is spent. The drain delivers what the dropped steps left in
flight, in link order, so a kept schedule holds only the steps that must happen
*before* the drain's order would make them: typically a handful.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tomkit.fuzz.process_machine import ProcessFailure, RuleFailure

__all__ = ["Reduction", "reduce", "replay", "shortest_prefix"]


def replay(machine: type, schedule: Sequence[tuple]) -> tuple[ProcessFailure | None, int]:
    """Run ``schedule`` through a fresh ``machine`` (a class made by ``process_machine``),
    then its teardown (drain and judge). Returns the failure the checker found (None if
    the run passes) and how many steps the machine allowed."""
    cls = machine
    # a replay is no run of the search
    runs, first, first_found = cls.runs, cls.first_failure, cls.first_found
    try:
        m = cls()
        applied = sum(m.apply(s) for s in schedule)
        try:
            m.teardown()
        except RuleFailure as e:
            return e.found, applied
        return None, applied
    finally:
        cls.runs, cls.first_failure, cls.first_found = runs, first, first_found


class Reduction:
    """The outcome of :func:`reduce`: the reduced failure, and what it took."""

    def __init__(self, failure: ProcessFailure, before: ProcessFailure, replays: int,
                 complete: bool) -> None:
        self.failure = failure
        self.before = before
        self.replays = replays
        #: True when the replay budget was not spent: no single step and no pair of
        #: steps of the result can go
        self.complete = complete

    def __repr__(self) -> str:
        return (f"Reduction({self.failure.kind}: {len(self.before.records)} -> "
                f"{len(self.failure.records)} records, {len(self.before.schedule)} -> "
                f"{len(self.failure.schedule)} steps, {self.replays} replays)")


def reduce(machine: type, failure: ProcessFailure, *, max_replays: int = 2000,
           keep: Callable[[ProcessFailure], bool] | None = None, cut: bool = True
           ) -> Reduction:
    """Reduce ``failure`` (found by ``machine``, with its ``schedule``) by ddmin over its
    steps (module docstring). A candidate is kept when its replay fails the same property
    as ``failure``, with a trace no longer than the best so far (for a violated safety
    property with ``cut``, its shortest violating prefix), and ``keep`` (if given)
    accepts it. The result's failure carries the kept schedule (only the steps the
    machine allowed) and ``reduced_from``, the record count before. With ``cut``, a
    violated safety property (one the protocol promises: a violation stays in every longer
    trace) keeps only the shortest prefix of the trace that violates it: the same run,
    observed until the violation is complete (``drained`` keeps the drained length)."""
    kind = failure.kind
    safety = cut and kind in getattr(machine, "promised", ())
    best_size = len(failure.records)
    replays = 0

    def test(steps: list[tuple]) -> ProcessFailure | None:
        nonlocal replays, best_size
        replays += 1
        found, _ = replay(machine, steps)
        if found is None or found.kind != kind:
            return None
        size = shortest_prefix(machine, found)[0] if safety else len(found.records)
        if size > best_size or (keep is not None and not keep(found)):
            return None
        best_size = size
        return found

    # the logged schedule replays to the same run (the machine is deterministic)
    steps = list(failure.schedule)
    first = test(steps)
    if first is None:
        raise ValueError(f"{kind}: the failure's schedule does not replay to a failure of "
                         "the same property (a nondeterministic machine?)")
    best = first
    chunks = 2
    while len(steps) >= 2 and replays < max_replays:
        size = -(-len(steps) // chunks)
        parts = [steps[i:i + size] for i in range(0, len(steps), size)]
        for k in range(len(parts)):
            if replays >= max_replays:
                break
            cand = [s for j, p in enumerate(parts) if j != k for s in p]
            found = test(cand)
            if found is not None:
                steps, best = cand, found
                chunks = max(chunks - 1, 2)
                break
        else:
            if size == 1:
                break  # every single step was tried: 1-minimal
            chunks = min(chunks * 2, len(steps))
    # then single steps and pairs of steps until none can go: two steps that only
    # matter together (a switch and the send it holds back) survive single removals,
    # and a step may become removable once a pair went
    again = True
    while again and replays < max_replays:
        again = False
        cands = [(i,) for i in range(len(steps))] + \
            [(i, j) for i in range(len(steps)) for j in range(i + 1, len(steps))]
        for drop in cands:
            if replays >= max_replays:
                break
            cand = [s for i, s in enumerate(steps) if i not in drop]
            found = test(cand)
            if found is not None:
                steps, best, again = cand, found, True
                break
    complete = replays < max_replays or len(steps) < 2
    if safety:
        k, why = shortest_prefix(machine, best)
        if k < len(best.records):
            best.drained = len(best.records)
            best.explanation = why
            best.records = best.records[:k]
    # best.schedule: the kept steps the machine allowed (the others did nothing)
    best.reduced_from = len(failure.records)
    best.found_at = failure.found_at
    return Reduction(best, failure, replays, complete)


def shortest_prefix(machine: type, f: ProcessFailure) -> tuple[int, str]:
    """The length of the shortest prefix of ``f.records`` on which the checker still finds
    ``f.kind`` violated, and its explanation there (binary search: a safety violation in
    a prefix stays in every longer one)."""
    from tomkit.checker.properties import Options, properties
    from tomkit.checker.result import Verdict
    from tomkit.checker.trace import Trace

    prop, opts = properties()[f.kind], Options(scope=machine.scope)

    def violated(k: int) -> str | None:
        res = prop.check(Trace.from_records(f.records[:k]), opts)
        return res.explanation if res.verdict == Verdict.VIOLATED else None

    lo, hi = 0, len(f.records)  # violated(hi), not violated(lo)
    why = f.explanation
    while hi - lo > 1:
        mid = (lo + hi) // 2
        w = violated(mid)
        if w is not None:
            hi, why = mid, w
        else:
            lo = mid
    return hi, why
