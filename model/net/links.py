"""The network and the workload every simulation shares: link delay distributions and
application sources.

Sources: 000 (Dolev, Kramer, Malki) section 6 (periodic and Poisson sources); 001
(Rodrigues, Fonseca, Verissimo) section 3 (per sender-recipient delay distributions, a
shifted gamma for both LAN and WAN, quasi-periodic and Poisson sources).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["DELAYS", "SOURCES", "Delay", "DelayDraws", "first_send", "source_gap"]

DELAYS = ("constant", "exponential", "gamma")
SOURCES = ("periodic", "quasi-periodic", "poisson")


@dataclass(frozen=True)
class Delay:
    """A link delay distribution, in seconds.

    ``gamma`` is 001's shifted gamma: ``shift`` plus a gamma variable, with overall mean
    ``mean`` and variance ``cv2 * mean**2``. 001 gives a mean and a variance per network
    (LAN: 20 ms and 0.05; WAN: 500 ms and 0.3-0.5); we read the variance as relative to
    the squared mean (a squared coefficient of variation, so 0.05 is a standard deviation
    of 4.5 ms at 20 ms) and, since the shift is not given, default it to half the mean
    (the propagation floor no message beats). ``cv2`` and ``shift`` are ignored by the
    other kinds.
    """

    kind: str = "exponential"
    mean: float = 0.001
    cv2: float = 0.05
    shift: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in DELAYS:
            raise ValueError(f"delay kind must be one of {DELAYS}, not {self.kind!r}")
        if not 0 < self.mean < math.inf:  # an infinite delay: no message ever arrives
            raise ValueError(f"mean delay must be a positive, finite number of seconds, "
                             f"got {self.mean}")
        if self.kind == "gamma":
            if not 0 < self.cv2 < math.inf:
                raise ValueError(f"gamma delay needs cv2 > 0, got {self.cv2}")
            if not 0 <= self._shift() < self.mean:
                raise ValueError(f"gamma shift must be in [0, mean), got {self._shift()}")

    def _shift(self) -> float:
        return self.mean / 2 if self.shift is None else self.shift

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """``size`` independent delays."""
        if self.kind == "constant":
            return np.full(size, self.mean)
        if self.kind == "exponential":
            return rng.exponential(self.mean, size)
        shift = self._shift()
        g_mean = self.mean - shift
        var = self.cv2 * self.mean ** 2
        return shift + rng.gamma(g_mean ** 2 / var, var / g_mean, size)


class DelayDraws:
    """The values of successive ``delay.sample(rng, k)`` calls, drawn ``block`` at a time
    (one numpy call per block instead of per message). numpy fills a block element by
    element from the same stream, so the values are exactly those of the calls one by
    one (tested)."""

    __slots__ = ("delay", "rng", "block", "buf", "pos")

    def __init__(self, delay: Delay, rng: np.random.Generator, block: int) -> None:
        self.delay, self.rng, self.block = delay, rng, max(block, 1)
        self.buf: list[float] = []
        self.pos = 0

    def take(self, k: int) -> list[float]:
        """The next ``k`` delays."""
        if self.pos + k > len(self.buf):
            self.buf = (self.buf[self.pos:]
                        + self.delay.sample(self.rng, max(self.block, k)).tolist())
            self.pos = 0
        out = self.buf[self.pos:self.pos + k]
        self.pos += k
        return out


def source_gap(source: str, period: float, jitter: float, rng: np.random.Generator) -> float:
    """The time from one application message of a source to its next (module docstring:
    periodic, quasi-periodic or Poisson, ``period`` = 1 / rate)."""
    if source == "periodic":
        return period
    if source == "poisson":
        return float(rng.exponential(period))
    # quasi-periodic: a narrow normal around the period, kept positive
    return max(period * (1.0 + jitter * float(rng.standard_normal())), 0.01 * period)


def first_send(source: str, period: float, jitter: float, rng: np.random.Generator) -> float:
    """When a source sends first: a periodic one at a random phase (else all processes
    would send in lockstep), the others after one gap."""
    if source == "periodic":
        return float(rng.uniform(0, period))
    return source_gap(source, period, jitter, rng)
