"""Per-process load schedules: each process's source rate, changing at given times (001's
high and low loads, its nine scenarios of Figure 3 and their sequence in Figure 5).

Source: Rodrigues, Fonseca, Verissimo (paper 001) section 3 ("each process is subject to a
different traffic load [...] a Quasi-Periodic and a Poisson message source"), section 4.4
("Each process can be subjected to two different traffic loads [...] high (H) and low (L).
Nine different scenarios [...] a high rate of 100 msg/s and a low rate of [lost] msg/s"),
section 6.2 ("the system ran continuously while the process load changed with time, making
the system evolve through all nine scenarios in sequence").

Decisions on what the OCR lost (ours)
-------------------------------------
* The low rate: :data:`LOW_RATE` = 1 msg/s. 001 says the hybrid made "heavily loaded
  processes [...] active and lightly loaded processes [...] passive in all scenarios"; by
  its rule (passive iff D + t > 2D, i.e. t > D) a low process whose group has no high
  process (scenario 1: D is low and E is too, per the table below) is passive only if its
  period exceeds the 520 ms to the other group, i.e. a rate below 1.92 msg/s. The stray
  "1" of the OCR near the sentence fits 1 msg/s.
* The scenario table (:data:`FIG3_SCENARIOS`, loads of A B C D E): only "in scenario 1,
  process A has high load, process D has low load" and "scenario 9 [...] all processes
  have high load" survive. Ours: 1 HLLLL, 2 HHLLL, 3 HHHLL (load near the token site A),
  4 LLLHL, 5 LLLHH (load moved to the distant group), 6 HLLHL, 7 HHLHH, 8 HHHHL (mixed),
  9 HHHHH, which makes the paper's narrative visible: token-site best when the load sits
  near A, degraded when it moves away, symmetric best in scenario 9.
* How long each scenario of Figure 5 lasts is lost with the figure: :data:`FIG5_DWELL`
  = 20 s (ours; long enough for the mean-shift detector of section 6.1 and the switch).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tomkit.model.net.topology import TopologyError, line_of, read_toml_text

__all__ = ["FIG3_SCENARIOS", "FIG5_DWELL", "HIGH_RATE", "LOAD_PRESETS", "LOW_RATE",
           "LoadError", "LoadSchedule", "fig3_schedule", "fig5_schedule", "load_preset",
           "phase_start", "read_load_schedule"]

#: 001 section 4.4: the high rate
HIGH_RATE = 100.0
#: 001 section 4.4: the low rate (lost in the OCR; ours, module docstring)
LOW_RATE = 1.0
#: loads of A B C D E per scenario 1 .. 9 (ours but for scenarios 1 and 9; docstring)
FIG3_SCENARIOS = ("HLLLL", "HHLLL", "HHHLL", "LLLHL", "LLLHH", "HLLHL", "HHLHH", "HHHHL",
                  "HHHHH")
#: seconds per scenario in Figure 5 (ours)
FIG5_DWELL = 20.0


class LoadError(TopologyError):
    """A load schedule that cannot be used (names file, line and field)."""


@dataclass(frozen=True)
class LoadSchedule:
    """Each process's rate (messages per second; 0: silent) from each step's time on.
    ``steps`` are (time, rates), the first at time 0, times increasing; ``names`` name the
    steps (e.g. ``"scenario 3"``); sources send nothing at or after ``end``."""

    steps: tuple[tuple[float, tuple[float, ...]], ...]
    end: float = math.inf
    names: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.steps:
            raise LoadError("a load schedule needs at least one step")
        if self.steps[0][0] != 0:
            raise LoadError(f"the first step of a load schedule is at time 0, not "
                            f"{self.steps[0][0]}")
        n = len(self.steps[0][1])
        last = -1.0
        for t, rates in self.steps:
            if not (math.isfinite(t) and t > last):
                raise LoadError(f"step times must increase, got {t} after {last}")
            last = t
            if len(rates) != n or n < 1:
                raise LoadError(f"every step gives one rate per process ({n}), got "
                                f"{len(rates)} at time {t}")
            if any(not (math.isfinite(r) and r >= 0) for r in rates):
                raise LoadError(f"rates must be finite and >= 0, got {list(rates)} at "
                                f"time {t}")
        if not self.end > 0:
            raise LoadError(f"end must be positive, got {self.end}")
        if self.names and len(self.names) != len(self.steps):
            raise LoadError("one name per step")

    @property
    def n(self) -> int:
        """How many processes the schedule is for."""
        return len(self.steps[0][1])

    def step_at(self, t: float) -> int:
        """The index of the step in force at time ``t``."""
        k = 0
        for j, (s, _) in enumerate(self.steps):
            if s <= t:
                k = j
        return k

    def rates_at(self, t: float) -> tuple[float, ...]:
        """Every process's rate at time ``t``."""
        return self.steps[self.step_at(t)][1]

    def changes(self) -> list[tuple[float, list[tuple[int, float]]]]:
        """After time 0: (time, [(process, new rate)]) where some rate changes."""
        out = []
        for (_, old), (t, new) in zip(self.steps, self.steps[1:]):
            moved = [(i, r) for i, (o, r) in enumerate(zip(old, new)) if o != r]
            if moved and t < self.end:
                out.append((t, moved))
        return out

    @classmethod
    def constant(cls, rates: Sequence[float], end: float = math.inf) -> LoadSchedule:
        """Fixed per-process rates."""
        return cls(((0.0, tuple(float(r) for r in rates)),), end)

    @classmethod
    def scenarios(cls, loads: Sequence[str], high: float = HIGH_RATE, low: float = LOW_RATE,
                  dwell: float = FIG5_DWELL, names: Sequence[str] | None = None
                  ) -> LoadSchedule:
        """One step per load pattern (a letter per process, H or L), each ``dwell``
        seconds, in sequence; ``end`` after the last."""
        steps = tuple((k * dwell, _rates(p, high, low)) for k, p in enumerate(loads))
        return cls(steps, len(loads) * dwell, tuple(names) if names else ())


def _rates(pattern: str, high: float, low: float) -> tuple[float, ...]:
    bad = set(pattern) - {"H", "L"}
    if bad or not pattern:
        raise LoadError(f"a load pattern is a letter H or L per process, got {pattern!r}")
    return tuple(high if c == "H" else low for c in pattern)


def fig3_schedule(scenario: int, end: float = FIG5_DWELL, high: float = HIGH_RATE,
                  low: float = LOW_RATE) -> LoadSchedule:
    """001 Figure 3's scenario ``scenario`` (1 .. 9) held for ``end`` seconds."""
    if not 1 <= scenario <= len(FIG3_SCENARIOS):
        raise LoadError(f"001's Figure 3 has scenarios 1 .. {len(FIG3_SCENARIOS)}, not "
                        f"{scenario}")
    return LoadSchedule(((0.0, _rates(FIG3_SCENARIOS[scenario - 1], high, low)),), end,
                        (f"scenario {scenario}",))


def fig5_schedule(dwell: float = FIG5_DWELL, high: float = HIGH_RATE,
                  low: float = LOW_RATE) -> LoadSchedule:
    """001 Figure 5: the nine scenarios of Figure 3 in sequence, ``dwell`` seconds each."""
    return LoadSchedule.scenarios(FIG3_SCENARIOS, high, low, dwell,
                                  [f"scenario {k}" for k in range(1, 10)])


#: ``tomkit simulate --load-schedule`` presets: NAME or NAME:ARG
LOAD_PRESETS = {"001-fig3": "001-fig3:S (S = 1 .. 9), one scenario for 20 s",
                "001-fig5": "001-fig5[:DWELL], the nine scenarios in sequence"}


def load_preset(spec: str) -> LoadSchedule:
    """A preset by name (:data:`LOAD_PRESETS`)."""
    name, _, arg = spec.partition(":")
    try:
        if name == "001-fig3" and arg:
            return fig3_schedule(int(arg))
        if name == "001-fig5":
            return fig5_schedule(float(arg)) if arg else fig5_schedule()
    except ValueError as e:
        raise LoadError(f"load preset {spec!r}: {e}") from None
    raise LoadError(f"unknown load preset {spec!r}; known: {'; '.join(LOAD_PRESETS.values())}")


_KEYS = ("end", "high", "low", "step")
_STEP_KEYS = ("at", "loads", "rates", "name")


def read_load_schedule(path: str | os.PathLike, n: int | None = None) -> LoadSchedule:
    """A schedule from a TOML file (errors name the file, the line and the field)::

        end = 180.0          # sources stop (seconds)
        high = 100.0         # rate of an H in ``loads`` (default 001's 100 msg/s)
        low = 1.0            # rate of an L (default ours, 1 msg/s)
        [[step]]
        at = 0.0
        loads = "HLLLL"      # a letter per process, or
        [[step]]
        at = 20.0
        rates = [100, 100, 1, 1, 1]   # messages per second, per process
        name = "scenario 2"  # optional

    ``n``, when given, is the number of processes the rates must cover."""
    doc, text = read_toml_text(path, LoadError)

    def where(key: str, after: int = 0) -> str:
        k = line_of(text, key, after)
        return f"{path}:{k}" if k else str(path)

    for k in doc:
        if k not in _KEYS:
            raise LoadError(f"{where(k)}: unknown field {k!r}; known: {', '.join(_KEYS)}")

    def num(v: Any, w: str, field: str) -> float:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= 0 or (
                field != "end" and not math.isfinite(v)):
            raise LoadError(f"{w}: field {field}: expected a number >= 0, got {v!r}")
        return float(v)

    high = num(doc.get("high", HIGH_RATE), where("high"), "high")
    low = num(doc.get("low", LOW_RATE), where("low"), "low")
    end = num(doc.get("end", math.inf), where("end"), "end")
    steps_doc = doc.get("step")
    if not isinstance(steps_doc, list) or not steps_doc:
        raise LoadError(f"{where('step')}: field step: expected one or more [[step]] tables")
    steps, names = [], []
    after = 0
    for k, sd in enumerate(steps_doc, 1):
        after = line_of(text, "step", after)
        w = f"{path}:{after}" if after else str(path)
        if not isinstance(sd, dict):
            raise LoadError(f"{w}: step {k}: expected a table")
        for key in sd:
            if key not in _STEP_KEYS:
                raise LoadError(f"{w}: step {k}: unknown field step.{key}; known: "
                                f"{', '.join(_STEP_KEYS)}")
        if "at" not in sd:
            raise LoadError(f"{w}: step {k}: field step.at: missing")
        at = num(sd["at"], w, "step.at")
        if ("loads" in sd) == ("rates" in sd):
            raise LoadError(f"{w}: step {k}: give exactly one of step.loads and step.rates")
        if "loads" in sd:
            if not isinstance(sd["loads"], str):
                raise LoadError(f"{w}: step {k}: field step.loads: expected a string of H "
                                f"and L, got {sd['loads']!r}")
            try:
                rates = _rates(sd["loads"], high, low)
            except LoadError as e:
                raise LoadError(f"{w}: step {k}: field step.loads: {e}") from None
        else:
            if not isinstance(sd["rates"], list):
                raise LoadError(f"{w}: step {k}: field step.rates: expected a list, got "
                                f"{sd['rates']!r}")
            rates = tuple(num(r, w, "step.rates") for r in sd["rates"])
        if n is not None and len(rates) != n:
            raise LoadError(f"{w}: step {k}: {len(rates)} rates for {n} processes")
        steps.append((at, rates))
        names.append(str(sd.get("name", f"step {k}")))
    try:
        return LoadSchedule(tuple(steps), end, tuple(names))
    except LoadError as e:
        raise LoadError(f"{path}: {e}") from None


def phase_start(source: str, period: float, rng: Any) -> float:
    """From a rate change to the first send at the new rate: a uniformly random phase of
    the period for periodic and quasi-periodic sources (with a narrow jitter, sources that
    all started one period after time 0 would stay near lockstep for hundreds of periods,
    and 001's symmetric latency "close to D + t" assumes they are not), one exponential
    gap for a Poisson source (memoryless)."""
    if source == "poisson":
        return float(rng.exponential(period))
    return float(rng.uniform(0, period))
