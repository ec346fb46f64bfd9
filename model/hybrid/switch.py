"""The hybrid protocol's decisions: the static mode assignment and the online switching
rules, as pure functions.

Sources: 001 (Rodrigues, Fonseca, Verissimo) section 4.2-4.3 (the mode rule and Figure
2's heuristic) and section 6 (the evaluation of system parameters with a mean-shift
detector, and the switching heuristic with a 20 % threshold).

* Mode rule (section 4.3): process n is passive iff D(n,a) + t_n > 2 D(n,a), a the
  nearest active process, t_n n's mean inter-message time; i.e. iff t_n > D(n,a): n can
  "request and obtain a ticket from a before there is a new message to be sent".
* Figure 2: all passive; the process with the highest rate (lowest id on a tie) active;
  then, until nothing changes, every passive j (ascending id, decision A7 of the reading
  aid: the figure's "forall" has no order and the result depends on it) becomes active
  if D(j,a) + t_j < 2 D(j,a), else takes a as its sequencer. The two texts disagree on
  the tie t_j = D(j,a): section 4.3's prose prints a strict ">" for the passive case
  (and "<=" for the active one, its symbol lost in the OCR), which makes the tie
  *active*; Figure 2's strict "<" for the active case makes it *passive*. We follow the
  figure (A8 of the reading aid), since it is the algorithm the evaluation ran; the
  prose's reading differs only on the tie, which a run meets only when a process's mean
  inter-message time equals its delay to the sequencer exactly.
* Switching (section 6.2): with D* the delay to the closest other active process and t
  the own mean inter-message time, an active process goes passive when t exceeds D* by
  more than the threshold h D* (h = 0.2, "20 % of the delay value"), a passive process
  goes active when t is below D* by more than h D*. A passive process changes sequencer
  when another active process is closer (section 5.3.4); the paper gives no threshold for
  that, we use the same 20 % (A11).
* Mean-shift detector (section 6.1): the initial mean is the mean of the first k
  samples; "whenever a run of k or more samples fall either all above the mean value or
  all below it, that mean value is recalculated". The value of k is lost in the OCR
  (footnote 6) and how the mean is recalculated is not said: we recompute it as the mean
  of the run (A10), k = 5 by default.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = ["MeanShift", "assign_modes", "better_sequencer", "closest", "is_passive",
           "switch_decision", "yields"]

ACTIVE, PASSIVE = "active", "passive"


def is_passive(d: float, t: float) -> bool:
    """Figure 2's rule: passive unless D + t < 2D (i.e. unless t < D). On the tie t == D
    this is passive, where section 4.3's prose (passive iff D + t > 2D) would make the
    process active; we follow the figure (A8, module docstring)."""
    return not (d + t < 2 * d)


def closest(j: int, candidates: Sequence[int], delay: Sequence[Sequence[float]]) -> int:
    """The candidate nearest to j in network delay (lowest id on a tie)."""
    return min(candidates, key=lambda a: (delay[j][a], a))


def assign_modes(delay: Sequence[Sequence[float]], gaps: Sequence[float]
                 ) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """Figure 2's heuristic. ``delay[i][j]``: the mean delay D(i,j) (seconds);
    ``gaps[i]``: process i's mean inter-message time t_i (1 / rate). Returns the modes
    and, per process, its sequencer (itself when active).

    >>> D = [[0, .02, .52], [.02, 0, .52], [.52, .52, 0]]
    >>> assign_modes(D, [.01, 1.0, 1.0])       # A high; B, C low
    (('active', 'passive', 'passive'), (0, 0, 0))
    >>> assign_modes(D, [1.0, 1.0, .01])[0]     # C high: A, B within reach of nobody
    ('passive', 'passive', 'active')
    """
    n = len(gaps)
    if n == 0 or len(delay) != n or any(len(row) != n for row in delay):
        raise ValueError("delay must be an n x n matrix and gaps have n entries")
    mode = [PASSIVE] * n
    seq = list(range(n))
    first = min(range(n), key=lambda i: (gaps[i], i))  # highest rate: smallest gap
    mode[first] = ACTIVE
    changed = True
    while changed:
        changed = False
        for j in range(n):
            if mode[j] != PASSIVE:
                continue
            a = closest(j, [i for i in range(n) if mode[i] == ACTIVE], delay)
            if not is_passive(delay[j][a], gaps[j]):
                mode[j] = ACTIVE
                seq[j] = j
                changed = True
            else:
                seq[j] = a
    # a sequencer chosen before a later promotion may no longer be the nearest active:
    # Figure 2 keeps the last "set sequencer of j to a" of its final iteration, which
    # is the nearest active of the final assignment (the last pass changed nothing)
    return tuple(mode), tuple(seq)


def switch_decision(active: bool, gap: float, d_star: float, h: float = 0.2) -> bool:
    """Section 6.2: should this process change mode? ``gap`` is its mean inter-message
    time t, ``d_star`` the delay to the closest other active process, ``h`` the
    threshold as a fraction of that delay.

    >>> switch_decision(True, 0.115, 0.1), switch_decision(True, 0.125, 0.1)
    (False, True)
    >>> switch_decision(False, 0.085, 0.1), switch_decision(False, 0.075, 0.1)
    (False, True)
    """
    if active:
        return gap - d_star > h * d_star
    return d_star - gap > h * d_star


def yields(me: int, gap: float, other: int, other_gap: float | None, h: float = 0.2) -> bool:
    """May active process ``me`` go passive in favour of the active process ``other``?

    Section 5.3.2 gives two reasons to go passive: (a) the own load fell, (b) "a nearby
    process has become active and transmitting at a much faster rate". Section 6.2's rule
    alone is symmetric: two nearby active processes with the same rate both find the
    other within reach and both go passive, then both go active again, for ever (the
    simulator shows it on Figure 3's topology). Decision: ``me`` yields to ``other``
    when ``other`` sends faster by more than the threshold, not when it sends slower by
    more than the threshold, and in between (or with no estimate of its rate) when
    ``other`` has the lower id.

    >>> yields(1, 0.05, 0, 0.05), yields(0, 0.05, 1, 0.05)
    (True, False)
    >>> yields(0, 0.05, 1, 0.01), yields(1, 0.05, 0, 0.5)
    (True, False)
    """
    if other_gap is not None:
        if other_gap < (1.0 - h) * gap:
            return True
        if other_gap > (1.0 + h) * gap:
            return False
    return other < me


def better_sequencer(current: float, candidate: float, h: float = 0.2) -> bool:
    """Change sequencer only to one closer by more than the threshold (A11)."""
    return candidate < (1.0 - h) * current


@dataclass
class MeanShift:
    """Section 6.1's mean-shift detector over one quantity (a rate or a delay).

    ``mean`` is None until k samples came; then the mean of the first k. A run of k or
    more consecutive samples all above the mean, or all below it, replaces the mean by
    the mean of that run (A10), and the run starts again.

    >>> d = MeanShift(3)
    >>> [d.add(x) for x in (10, 10, 10)][-1]
    10.0
    >>> [d.add(x) for x in (20, 20, 20)][-1]
    20.0
    >>> [d.add(x) for x in (21, 19, 21)][-1]   # no run on one side: unchanged
    20.0
    >>> round([d.add(x) for x in (9, 11, 9)][-1], 3)   # a run below: the run's mean
    9.667
    """

    k: int = 5
    mean: float | None = None
    samples: list[float] = field(default_factory=list)  # the first k, then the run
    side: int = 0  # +1 run above the mean, -1 below, 0 none

    def __post_init__(self) -> None:
        if self.k < 1:
            raise ValueError(f"k must be >= 1, got {self.k}")

    def add(self, x: float) -> float | None:
        """Take one sample; the current mean."""
        if self.mean is None:
            self.samples.append(x)
            if len(self.samples) == self.k:
                self.mean = sum(self.samples) / self.k
                self.samples = []
            return self.mean
        s = (x > self.mean) - (x < self.mean)
        if s == 0 or s != self.side:
            self.samples = []
            self.side = s
        if s != 0:
            self.samples.append(x)
            if len(self.samples) >= self.k:
                self.mean = sum(self.samples) / len(self.samples)
                self.samples, self.side = [], 0
        return self.mean
