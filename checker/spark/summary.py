"""The aggregates behind a scan's report, as one mergeable value.

Both ways of computing the report fill a :class:`Summary` and hand it to
``report.document``: the files engine's tasks fill one per group of files as they check
them (so the report costs no Spark job when no trace spans files), and ``job.py`` fills
one from Spark aggregations over the per-trace rows (the other engines, and the files
engine when traces span files). Latencies are kept as the histogram of ``report.py`` (a
value's bucket is ``bucket_of``), so that partial histograms merge exactly: counts and
sums add, minima and maxima combine.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from tomkit.checker.spark.properties import NAMES

ALPHA = 1e-3  # relative width of a latency bucket
LISTED = 1000  # rejected records copied into report.json (all are in rejected/)
VERDICTS = ("holds", "violated", "unknown")

Key = tuple[str, str, str]  # protocol, config, trace


def _counts() -> dict[str, dict[str, int]]:
    return {p: dict.fromkeys(VERDICTS, 0) for p in NAMES}


@dataclass
class Group:
    """One protocol and configuration."""

    traces: int = 0
    events: int = 0
    counts: dict[str, dict[str, int]] = field(default_factory=_counts)
    # (sign, k) -> [count, sum, least, greatest]; the zeros are (0, 0)
    latency: dict[tuple[int, int], list] = field(default_factory=dict)
    iol: dict[float, int] = field(default_factory=dict)  # index of latency -> deliveries

    def add_bucket(self, s: int, k: int, n: int, total: float, lo: float, hi: float) -> None:
        b = self.latency.get((s, k))
        if b is None:
            self.latency[(s, k)] = [n, total, lo, hi]
        else:
            b[0] += n
            b[1] += total
            b[2] = min(b[2], lo)
            b[3] = max(b[3], hi)

    def add_latencies(self, values: np.ndarray) -> None:
        if not len(values):
            return
        s, k = bucket_of(values)
        key = k * 3 + (s + 1)  # one integer per bucket, ordered by sign then k
        lo_key = int(key.min())
        idx = key - lo_key
        size = int(idx.max()) + 1
        if size > 4 * len(values) + 100_000:  # buckets too far apart for dense arrays
            uniq, idx = np.unique(key, return_inverse=True)
            size, lo_key = len(uniq), None
        n = np.bincount(idx, minlength=size)
        total = np.bincount(idx, weights=values, minlength=size)
        lo = np.full(size, np.inf)
        hi = np.full(size, -np.inf)
        np.minimum.at(lo, idx, values)
        np.maximum.at(hi, idx, values)
        for j in np.flatnonzero(n).tolist():
            key_j = j + lo_key if lo_key is not None else int(uniq[j])
            sign, kk = key_j % 3 - 1, key_j // 3
            self.add_bucket(sign, kk, int(n[j]), float(total[j]), float(lo[j]), float(hi[j]))

    def add_iol(self, values: np.ndarray) -> None:
        vals, counts = np.unique(values, return_counts=True)
        for v, c in zip(vals.tolist(), counts.tolist()):
            self.iol[v] = self.iol.get(v, 0) + c

    def merge(self, o: Group) -> None:
        self.traces += o.traces
        self.events += o.events
        for p, c in o.counts.items():
            for v, n in c.items():
                self.counts[p][v] += n
        for (s, k), b in o.latency.items():
            self.add_bucket(s, k, *b)
        for v, c in o.iol.items():
            self.iol[v] = self.iol.get(v, 0) + c


def bucket_of(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sign and bucket number of each latency (``report.py``'s histogram; the Spark
    expression is ``report.latency``'s): k with (1 + ALPHA)^k <= |x| < (1 + ALPHA)^(k + 1)."""
    s = np.sign(values).astype(np.int64)
    with np.errstate(divide="ignore"):
        k = np.floor(np.log(np.abs(values)) / math.log1p(ALPHA))
    return s, np.where(s == 0, 0, k).astype(np.int64)


@dataclass
class Summary:
    """A report's aggregates over some traces and records."""

    groups: dict[tuple[str, str], Group] = field(default_factory=dict)
    rejected: int = 0  # records rejected one by one
    seq_traces: int = 0  # traces rejected for their seq, and their records
    seq_records: int = 0
    # property -> (key, explanation) of its violation with the least key
    examples: dict[str, tuple[Key, str | None]] = field(default_factory=dict)
    disagreements: list[str] = field(default_factory=list)
    # files whose columns do not fit the format (the scan stops: read.SchemaMismatch)
    mismatches: list[str] = field(default_factory=list)
    # the first LISTED rejected entries (src line row field message) by src, line, row
    listed: list[dict] = field(default_factory=list)

    def group(self, protocol: str, config: str) -> Group:
        g = self.groups.get((protocol, config))
        if g is None:
            g = self.groups[(protocol, config)] = Group()
        return g

    def add_example(self, prop: str, key: Key, explanation: str | None) -> None:
        old = self.examples.get(prop)
        if old is None or key < old[0]:
            self.examples[prop] = (key, explanation)

    def add_listed(self, entries: list[dict]) -> None:
        self.listed.extend(entries)
        if len(self.listed) > 2 * LISTED:
            self.first_listed()

    def first_listed(self) -> list[dict]:
        """The first LISTED entries, ordered as Spark's ``orderBy("src", "line", "row")``
        orders them (nulls first)."""
        self.listed.sort(key=lambda r: (r["src"], r["line"] is not None, r["line"] or 0,
                                        r["row"] is not None, r["row"] or 0))
        del self.listed[LISTED:]
        return self.listed

    def merge(self, o: Summary) -> None:
        for key, g in o.groups.items():
            self.group(*key).merge(g)
        self.rejected += o.rejected
        self.seq_traces += o.seq_traces
        self.seq_records += o.seq_records
        for prop, (key, expl) in o.examples.items():
            self.add_example(prop, key, expl)
        self.disagreements.extend(o.disagreements)
        self.mismatches.extend(o.mismatches)
        self.add_listed(o.listed)
