"""Deliberately broken delivery rules, for data sets that hold real order violations.

Each mutant is a rule over the vocabulary (``model/vocab.py``), written like the rules of
``model/rules.py`` and run unchanged by the simulator (``model/sim.py``). They break the
ToTo family's safety argument in two documented ways:

* ``toto-low-delta``: ToTo_delta (000 section 4.2, criterion (DEL)) with delta below n/2.
  000 section 4.1 requires n/2 <= delta < n: two sources that each collect more than
  delta votes then cannot both exist, so all processes agree on S_p. With a smaller
  delta two processes can see different early sources and deliver them in different
  orders. The rule body is ToTo's, minus the range check of ``rules._delta``.
  Measured (n = 4, 6, 8; delta 1 to 3; 40 seeds each): no safety violation at all, but
  many runs never end: a process whose sources never stabilise keeps sending idle ACKs.
  It breaks liveness, not order, so the data set generator does not use it.
* ``majority``: "deliver what a majority voted for": every candidate that more than n/2
  processors vote for (nvt > n/2) is delivered at once, alone, in lexicographic order,
  with no stability condition. Which candidate first reaches a majority depends on the
  arrival order at each process, so processes disagree on the order. Measured with n = 8,
  300 messages/s per process, 10 ms mean delay: 16 of 40 seeds violate total order
  (weak, strong, global); 10 of 40 never end (a candidate short of a majority waits
  forever), which :func:`simulate_mutant` turns into :class:`Runaway`.

The simulator looks a protocol up by name in ``model.rules.RULES``; the mutants are not
protocols, so they are not in it. :func:`registered` adds them for the duration of a
``with`` block (the dataset generator runs it inside its worker processes) and restores
``RULES`` afterwards, so nothing else ever sees a mutant. The minimal change to
``model/sim.py`` that would make this unnecessary: accept ``SimConfig.rule: Rule | None``
and pass it to ``Process`` instead of the name.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from tomkit.model import rules as _rules
from tomkit.model.rules import Params, Rule, toto_external_stability_a, toto_internal_stability
from tomkit.model.vocab import Delivery, RuleView, sources

__all__ = ["MUTANTS", "Runaway", "majority", "registered", "simulate_mutant",
           "toto_low_delta"]


def toto_low_delta(v: RuleView, params: Params) -> Delivery | None:
    """ToTo_delta (000 section 4.2) for any 1 <= delta < n, without the n/2 lower bound."""
    d = params.delta
    if d is None or not 1 <= d < v.n:
        raise ValueError(f"toto-low-delta: delta must be in [1, n), got {d}")
    s = sources(v, d)
    internal = v.and_(v.nonempty(s), toto_internal_stability(v, s, d))
    out = v.subset(lambda m: v.not_(v.marked(m)), within=s)
    return v.first(
        (v.and_(internal, toto_external_stability_a(v, s, d)), v.deliver(out, "early")),
        (v.and_(internal, v.ntail_g == v.n), v.deliver(out, "default")),
    )


def majority(v: RuleView, params: Params) -> Delivery | None:
    """Deliver every candidate with more than n/2 votes, no stability test (broken)."""
    won = v.subset(lambda m: v.and_(v.nvt(m) > v.n // 2, v.not_(v.marked(m))))
    return v.first((v.nonempty(won), v.deliver(won, "majority")))


#: mutant name -> (rule, delta for n processes, the properties it is expected to break)
MUTANTS: dict[str, tuple[Rule, object, tuple[str, ...]]] = {
    "toto-low-delta": (toto_low_delta, lambda n: max(1, n // 2 - 1),
                       ("total-order-weak", "total-order-strong", "global-order")),
    "majority": (majority, lambda n: (n + 1) // 2,
                 ("total-order-weak", "total-order-strong", "global-order")),
}


@contextlib.contextmanager
def registered(names: list[str] | None = None) -> Iterator[None]:
    """Make the mutants (or the named ones) simulatable by name inside the block."""
    added = []
    try:
        for name in names or list(MUTANTS):
            if name in _rules.RULES:
                raise ValueError(f"{name!r} is already a rule name")
            _rules.RULES[name] = MUTANTS[name][0]
            added.append(name)
        yield
    finally:
        for name in added:
            _rules.RULES.pop(name, None)


class Runaway(RuntimeError):
    """A mutant simulation exceeded its rule-evaluation budget (it would never end)."""


def simulate_mutant(config, max_evaluations: int = 200_000, max_seconds: float = 10.0):
    """Run ``model.sim.simulate(config)`` where ``config.protocol`` names a mutant, and
    raise :class:`Runaway` once the rule has been evaluated ``max_evaluations`` times or
    the run takes ``max_seconds``.

    Why both: a stalled process whose view stops changing sends idle ACKs forever
    without the rule being evaluated again (``rules.drain`` skips an unchanged
    vocabulary), so only a clock stops it. Normal runs of a data set's size finish in
    milliseconds, far below the limit, so in practice the cut falls on the same runs on
    every machine. The clock is SIGALRM: main thread of a process only (the generator's
    workers are)."""
    import signal

    from tomkit.model.sim import simulate

    rule = MUTANTS[config.protocol][0]
    left = [max_evaluations]

    def counted(v: RuleView, params: Params) -> Delivery | None:
        left[0] -= 1
        if left[0] < 0:
            raise Runaway(f"{config.protocol}: over {max_evaluations} rule evaluations")
        return rule(v, params)

    if config.protocol in _rules.RULES:
        raise ValueError(f"{config.protocol!r} is already a rule name")
    def alarm(signum, frame):
        raise Runaway(f"{config.protocol}: still running after {max_seconds} s")

    _rules.RULES[config.protocol] = counted
    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, max_seconds)
    try:
        return simulate(config)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        _rules.RULES.pop(config.protocol, None)
