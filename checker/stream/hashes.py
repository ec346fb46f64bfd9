"""Message ids that left the window: 64-bit hashes, so that a reused id is still caught.

A message leaves the single-pass checker's window once every process has delivered it
in the canonical order (canon.py); its id string is dropped, and only its hash is kept
(8 bytes a message, in sorted runs). An id seen again later, which integrity must
report, finds its hash here. Two different ids may share a hash (about one chance in
10^5 at 10^7 messages); a hit therefore only sends the trace to the exact whole-trace
check, which decides it without hashes, so a collision costs time and never a verdict.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["RetiredIds", "hash_ids"]


def hash_ids(ids: list[str]) -> np.ndarray:
    """uint64 hashes of id strings (SipHash with pandas' fixed key: the same in every run,
    so a checkpoint's hashes stay valid)."""
    if not ids:
        return np.zeros(0, np.uint64)
    return pd.util.hash_array(np.asarray(ids, dtype=object), categorize=False)


class RetiredIds:
    """A set of uint64 hashes held as a few sorted runs (merged when there are many)."""

    MAX_RUNS = 8

    def __init__(self, runs: list[np.ndarray] | None = None) -> None:
        self.runs: list[np.ndarray] = list(runs or [])

    def __len__(self) -> int:
        return sum(len(r) for r in self.runs)

    def add(self, hashes: np.ndarray) -> None:
        if len(hashes) == 0:
            return
        self.runs.append(np.sort(hashes.astype(np.uint64)))
        if len(self.runs) > self.MAX_RUNS:
            self.runs = [np.sort(np.concatenate(self.runs))]

    def contains(self, hashes: np.ndarray) -> np.ndarray:
        """Per hash, whether it is in the set."""
        out = np.zeros(len(hashes), bool)
        for run in self.runs:
            i = np.searchsorted(run, hashes)
            out |= run[np.minimum(i, len(run) - 1)] == hashes
        return out
