"""Per-process clocks: an offset (skew) and a rate error (drift) each, seeded.

The one clock abstraction of the simulator. Process p's clock reads

    C_p(t) = t + offset_p + drift_p * t

at real time t (the simulator's event time), with |offset_p| <= eps/2, so that two clocks
differ by at most eps at time 0 (003, Bar-Joseph, Keidar, Anker and Lynch, section 2.1:
"each clock within eps/2 of real time"), and |drift_p| <= rho, the rate error of a
quartz clock (1e-4 is a cheap one). With no drift the clocks are 003's, and two differ by
at most eps for ever; with drift they part by up to 2 rho per second of run: no clock
synchronisation is modelled between the samples (a run lasts seconds to minutes, and
001's reference [19], which the hybrid's rate synchronisation comes from, is not
available to say what it assumed).

Two environments use them, each declared by the protocol (``model/process.py``):

* ``Protocol.timing``: 003's timed network (``model/net/timed.py``), clocks within eps and
  no drift;
* ``Protocol.clocks``: a :class:`ClockBounds` from the protocol's options, the clocks of
  an ordinary network (the hybrid of 001 declares them: its rate-synchronised ticket
  numbers read the local clock, section 4.2).

In both, a process is given and logs its local time, asks for timers in local time, and
every record carries ``real_time`` beside ``time`` (``model/net/timed.py``'s recorder).
With eps = rho = 0 every local time is the real time, bit for bit (``t + 0.0 + 0.0 * t``).

The draws come from the run's seed (child 3 of ``numpy.random.SeedSequence(seed).spawn(5)``,
the stream the timed network has always drawn its offsets from), so a run is a function
of its seed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["ClockBounds", "Clocks", "clock_rng"]


def clock_rng(seed: int) -> np.random.Generator:
    """The generator a run's clocks are drawn from (module docstring)."""
    return np.random.default_rng(np.random.SeedSequence(seed).spawn(5)[3])


@dataclass(frozen=True)
class ClockBounds:
    """What a protocol asks of its processes' clocks: ``skew`` eps (two clocks differ by
    at most eps at time 0; seconds) and ``drift`` rho (each clock's rate within
    1 +- rho)."""

    skew: float = 0.0
    drift: float = 0.0

    def __post_init__(self) -> None:
        if not (self.skew >= 0 and np.isfinite(self.skew)):
            raise ValueError(f"clock skew must be finite and >= 0, got {self.skew!r}")
        if not (0 <= self.drift < 1):
            raise ValueError(f"clock drift must be in [0, 1), got {self.drift!r}")


@dataclass(frozen=True)
class Clocks:
    """Per-process clocks (module docstring): ``offsets[p]`` within [-eps/2, eps/2],
    ``drifts[p]`` within [-rho, rho] (empty: none)."""

    offsets: tuple[float, ...]
    epsilon: float
    drifts: tuple[float, ...] = ()
    rho: float = 0.0

    def __post_init__(self) -> None:
        if self.epsilon < 0:
            raise ValueError(f"clock skew bound eps must be >= 0, got {self.epsilon!r}")
        for p, off in enumerate(self.offsets):
            if abs(off) * 2 > self.epsilon:
                raise ValueError(
                    f"clock offset of process {p} is {off!r}, beyond eps/2 = {self.epsilon / 2!r}"
                )
        if self.drifts:
            if len(self.drifts) != len(self.offsets):
                raise ValueError(f"{len(self.drifts)} clock drifts for "
                                 f"{len(self.offsets)} offsets")
            for p, d in enumerate(self.drifts):
                if abs(d) > self.rho:
                    raise ValueError(f"clock drift of process {p} is {d!r}, beyond "
                                     f"rho = {self.rho!r}")

    @classmethod
    def draw(cls, n: int, epsilon: float, rng: np.random.Generator,
             rho: float = 0.0) -> Clocks:
        """Offsets drawn uniformly in [-eps/2, eps/2], then (rho > 0) drifts uniformly in
        [-rho, rho]; with rho = 0 the draws are the offsets alone (as 003's timed network
        has always drawn them)."""
        offsets = tuple(float(x) for x in rng.uniform(-epsilon / 2, epsilon / 2, n))
        drifts = tuple(float(x) for x in rng.uniform(-rho, rho, n)) if rho > 0 else ()
        return cls(offsets, epsilon, drifts, rho)

    @classmethod
    def given(cls, offsets: Sequence[float], bounds: ClockBounds,
              rng: np.random.Generator) -> Clocks:
        """Offsets as given (each checked within the skew bound), drifts drawn."""
        n = len(offsets)
        drifts = (tuple(float(x) for x in rng.uniform(-bounds.drift, bounds.drift, n))
                  if bounds.drift > 0 else ())
        return cls(tuple(float(x) for x in offsets), bounds.skew, drifts, bounds.drift)

    def drift_list(self) -> list[float]:
        """Each process's drift (zeros when there is none)."""
        return list(self.drifts) if self.drifts else [0.0] * len(self.offsets)

    def local(self, p: int, real: float) -> float:
        """Process p's clock at real time ``real``."""
        d = self.drifts[p] if self.drifts else 0.0
        return real + self.offsets[p] + d * real

    def real(self, p: int, local: float) -> float:
        """The real time at which process p's clock reads ``local``."""
        d = self.drifts[p] if self.drifts else 0.0
        return (local - self.offsets[p]) / (1.0 + d)

    def bound(self, real: float) -> float:
        """The most any clock may be off real time at real time ``real`` >= 0:
        eps/2 + rho * real."""
        return self.epsilon / 2 + self.rho * abs(real)
