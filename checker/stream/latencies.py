"""Send-to-delivery latencies summed and maximised as they come, exactly.

The latency properties (checker/properties/latency.py, realtime_latency.py) report, per
trace, the count of measured first deliveries, the unmeasured ones, the mean, per
process the mean and the maximum, and the slowest delivery: the largest of the tuples
``(latency, process, delivery index)``, with its message's first send as witness. The
single pass never holds every latency, so it keeps what those need, which combines
across batches, the retired prefix and a broken trace's held records alike:

- per process the count, the exact sum and the maximum. The sum is exact (an integer
  in units of 2**-1126, the least a sum of doubles needs): a floating-point sum depends
  on the order of its terms, and the single pass reads them in another order than the
  whole-trace check, which sums with ``math.fsum`` (correctly rounded, so
  order-free); ``value`` rounds the exact sum once, as ``fsum`` does.
- the slowest delivery so far (``Slowest``): its key and what its witness names (the
  message, the delivery's location and index, the send's process, index and location),
  resolved only when it becomes the slowest (a few times a batch at most).

**Across the cut** (narrow.py). A broken trace checked on the records naming the cut's
messages M has the rest (the tail) checked by a second canonical pass, which tallies its
first deliveries as a clean pass does. The three parts together are the whole trace's
tally, exactly, as a broken trace's retired part and held records are (reduced.py):

- each first delivery is measured on one side only. The records split by message id, so
  a message's sends and deliveries are all on its side: its first send on the clock
  (latency.py's ``first_sends``, the earliest among its sends) and each process's first
  delivery of it are the same records there as in the trace.
- the counts and exact sums add; the unmeasured ones add (the tail is clean: every
  message it delivers is sent, so its unmeasured ones lack a time, as the trace's do).
- the slowest delivery is the largest key (latency, process, delivery index) over the
  parts, once every index counts from the trace's start (``shifted``): a process's
  deliveries of M are its first held ones (narrow.py, condition 1), so its tail
  deliveries come after those (``counted``), and each sender's sends of M are its
  first held sends. A tie of latency and process goes to the later delivery, as
  ``max`` takes it over the whole trace.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from ...traces.errors import Location
from ..chunk import DELIVER, SEND, Piece, kind_codes

__all__ = ["Slowest", "Tally", "counted", "exact_sums", "shifted", "value"]

#: a double is an integer multiple of 2**-1074; frexp's mantissa, scaled to an integer,
#: carries 53 more bits, so every term is an integer in units of 2**-(1074 + 52)
_UNIT = 1126
_HALF = 1 << 26


def exact_sums(x: np.ndarray, group: np.ndarray, ngroups: int) -> list[int]:
    """Per group (``group`` in ``range(ngroups)``), the exact sum of the finite values
    ``x`` of its rows, as an integer in units of 2**-1126."""
    out = [0] * ngroups
    if not len(x):
        return out
    m, e = np.frexp(x)
    big = (m * float(1 << 53)).astype(np.int64)  # exact: |m| < 1, 53 bits
    hi, lo = big >> 26, big & (_HALF - 1)  # big = hi * 2**26 + lo; floor shift
    shift = e.astype(np.int64) + (_UNIT - 53)  # >= 0 for every double
    if len(x) > 1 << 24:
        raise ValueError("exact_sums: at most 2**24 values a call")
    # one bin per group and exponent (a batch's latencies span a few exponents): the
    # float sums of < 2**27 integers, at most 2**24 of them, stay exact
    low = int(shift.min())
    width = int(shift.max()) - low + 1
    key = group.astype(np.int64) * width + (shift - low)
    if ngroups * width <= 1 << 22:
        bins = np.arange(ngroups * width)
        shi = np.bincount(key, weights=hi.astype(np.float64), minlength=len(bins))
        slo = np.bincount(key, weights=lo.astype(np.float64), minlength=len(bins))
        some = np.flatnonzero((shi != 0) | (slo != 0))
        bins, shi, slo = bins[some], shi[some], slo[some]
    else:  # many groups: only the bins used
        bins, inv = np.unique(key, return_inverse=True)
        shi = np.bincount(inv, weights=hi.astype(np.float64), minlength=len(bins))
        slo = np.bincount(inv, weights=lo.astype(np.float64), minlength=len(bins))
    for k, a, b in zip(bins.tolist(), shi.tolist(), slo.tolist()):
        g, s = divmod(k, width)
        out[g] += ((int(a) << 26) + int(b)) << (s + low)
    return out


def value(total: int) -> float:
    """An exact sum (units of 2**-1126) rounded once to a double (as ``math.fsum``)."""
    return total / (1 << _UNIT)  # int / int: correctly rounded


@dataclass(frozen=True)
class Slowest:
    """The slowest delivery so far, and what its witness names."""

    latency: float
    process: str
    index: int  # its delivery index at its process (repeats included)
    msg: str
    location: Location
    sender: str  # its message's first send on the clock
    send_index: int
    send_location: Location
    #: the message id is sent more than once (the sentence names the first send's process)
    resent: bool = False

    def key(self) -> tuple[float, str, int]:
        return (self.latency, self.process, self.index)


@dataclass
class Tally:
    """One clock's measured first deliveries: per process count, exact sum and maximum;
    the unmeasured ones; the slowest (module docstring)."""

    per: dict[str, list] = field(default_factory=dict)  # name -> [count, sum, max]
    unmeasured: int = 0
    slowest: Slowest | None = None
    #: a latency that is not a finite double (two times near 1e308 apart): its exact sum
    #: is not kept, and the whole-trace engine decides the trace
    odd: bool = False

    def add(self, x: np.ndarray, proc: np.ndarray, names: list[str],
            index: np.ndarray, resolve) -> None:
        """Measured latencies ``x`` of process codes ``proc`` (``names``) at delivery
        indexes ``index``; ``resolve(row)`` makes the :class:`Slowest` of a row when it
        becomes the slowest."""
        if not len(x):
            return
        if not np.isfinite(x).all():
            self.odd = True
            return
        np_ = len(names)
        count = np.bincount(proc, minlength=np_)
        sums = exact_sums(x, proc, np_)
        top = np.full(np_, -np.inf)
        np.maximum.at(top, proc, x)
        for p in np.flatnonzero(count).tolist():
            have = self.per.get(names[p])
            if have is None:
                self.per[names[p]] = [int(count[p]), sums[p], float(top[p])]
            else:
                have[0] += int(count[p])
                have[1] += sums[p]
                have[2] = max(have[2], float(top[p]))
        # the batch's largest (latency, process name, index): the names' order decides
        # among equal latencies, then the later delivery
        xmax = float(x.max())
        if self.slowest is not None and xmax < self.slowest.latency:
            return
        rows = np.flatnonzero(x == xmax)
        best = max(rows.tolist(), key=lambda r: (names[int(proc[r])], int(index[r])))
        key = (xmax, names[int(proc[best])], int(index[best]))
        if self.slowest is None or key > self.slowest.key():
            self.slowest = resolve(best)

    def merge(self, other: Tally) -> Tally:
        """Both tallies together (their delivery indexes counted alike: from the trace's
        start)."""
        out = Tally({p: list(v) for p, v in self.per.items()},
                    self.unmeasured + other.unmeasured, self.slowest, self.odd or other.odd)
        for p, (k, s, top) in other.per.items():
            have = out.per.get(p)
            if have is None:
                out.per[p] = [k, s, top]
            else:
                have[0] += k
                have[1] += s
                have[2] = max(have[2], top)
        a, b = out.slowest, other.slowest
        if b is not None and (a is None or b.key() > a.key()):
            out.slowest = b
        return out

    def measured(self) -> int:
        return sum(v[0] for v in self.per.values())

    def details(self, full: bool = True) -> dict:
        """The whole-trace check's details (latency.py's ``stats``; ``full=False``:
        realtime-latency's count, unmeasured and maximum)."""
        n = self.measured()
        if not full:
            out = {"deliveries": n, "unmeasured": self.unmeasured}
            if n and self.slowest is not None:
                out["max"] = self.slowest.latency
            return out
        if not n or self.slowest is None:
            return {"deliveries": 0, "unmeasured": self.unmeasured}
        total = sum(v[1] for v in self.per.values())
        return {
            "deliveries": n,
            "unmeasured": self.unmeasured,
            "mean": value(total) / n,
            "max": self.slowest.latency,
            "slowest": {"process": self.slowest.process, "msg": self.slowest.msg},
            "per_process": {p: {"mean": value(v[1]) / v[0], "max": v[2]}
                            for p, v in sorted(self.per.items())},
        }


def shifted(t: Tally, delivered: Mapping[str, int], sent: Mapping[str, int]) -> Tally:
    """``t`` with its slowest delivery's indexes counted from further back: ``delivered``
    more deliveries at each process and ``sent`` more sends at each sender (a broken
    trace's retired prefix, reduced.py; the records of the cut's messages before the
    tail's, module docstring)."""
    s = t.slowest
    if s is None:
        return t
    return Tally(t.per, t.unmeasured,
                 replace(s, index=s.index + delivered.get(s.process, 0),
                         send_index=s.send_index + sent.get(s.sender, 0)), t.odd)


def counted(pieces: Sequence[Piece]) -> tuple[dict[str, int], dict[str, int]]:
    """Per process its deliveries and its sends among ``pieces`` (the records of the cut's
    messages: they come before the tail's at each process, narrow.py)."""
    delivered: dict[str, int] = {}
    sent: dict[str, int] = {}
    for piece in pieces:
        kinds = kind_codes(piece.table.column("kind"))
        procs = np.asarray(piece.table.column("process").cast("string")
                           .to_numpy(zero_copy_only=False), object)
        for kind, out in ((DELIVER, delivered), (SEND, sent)):
            names, n = np.unique(procs[kinds == kind], return_counts=True)
            for p, k in zip(names.tolist(), n.tolist()):
                out[p] = out.get(p, 0) + k
    return delivered, sent
