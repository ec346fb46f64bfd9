"""Message ids as pairs of 64-bit hashes: the window's id map and the retired set.

The single pass (canon.py) never holds an id string: a batch's distinct ids are hashed
twice (SipHash under two fixed keys, vectorized by pandas), the first hash finds the
message's code in sorted arrays, the second confirms it. Two ids are taken for one
only if both hashes agree (one chance in 2^128 a pair); when the first agrees and the
second does not, the trace goes to the exact whole-trace check, so such a collision
costs time and never a verdict.

A message leaves the window once every process has delivered it (canon.py); its first
hash stays in :class:`RetiredIds` (8 bytes a message), so that an id seen again later,
which integrity must report, is still caught; a hit sends the trace to the whole-trace
check too.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..pandas_guard import pandas

__all__ = ["IdMap", "RetiredIds", "hash_ids"]

KEYS = ("tomkit.stream.01", "tomkit.stream.02")  # SipHash keys: 16 bytes each


def hash_ids(ids: pa.Array | list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The two uint64 hashes of each id (the same in every run, so checkpoints keep)."""
    if isinstance(ids, pa.Array):
        ids = ids.to_numpy(zero_copy_only=False)
    arr = np.asarray(ids, dtype=object)
    if len(arr) == 0:
        return np.zeros(0, np.uint64), np.zeros(0, np.uint64)
    pd = pandas()  # on first use: the whole-trace check loads this module, never hashes
    return tuple(pd.util.hash_array(arr, hash_key=k, categorize=False) for k in KEYS)


class _Runs:
    """uint64 keys with int64 values in a few sorted runs (merged when there are many)."""

    MAX_RUNS = 4

    def __init__(self) -> None:
        self.runs: list[tuple[np.ndarray, np.ndarray]] = []

    def __len__(self) -> int:
        return sum(len(k) for k, _ in self.runs)

    def add(self, keys: np.ndarray, values: np.ndarray) -> None:
        if len(keys) == 0:
            return
        order = np.argsort(keys, kind="stable")
        self.runs.append((keys[order], values[order]))
        if len(self.runs) > self.MAX_RUNS:
            k = np.concatenate([r[0] for r in self.runs])
            v = np.concatenate([r[1] for r in self.runs])
            order = np.argsort(k, kind="stable")
            self.runs = [(k[order], v[order])]

    def get(self, keys: np.ndarray) -> np.ndarray:
        """Per key its value, -1 when absent."""
        out = np.full(len(keys), -1, np.int64)
        for k, v in self.runs:
            i = np.minimum(np.searchsorted(k, keys), len(k) - 1)
            hit = k[i] == keys
            out[hit] = v[i[hit]]
        return out


class IdMap(_Runs):
    """First hash -> message code, for the messages in the window."""


class RetiredIds:
    """The first hashes of the messages that left the window, in a few sorted runs."""

    MAX_RUNS = 4

    def __init__(self) -> None:
        self.runs: list[np.ndarray] = []

    def __len__(self) -> int:
        return sum(len(r) for r in self.runs)

    def add(self, h1: np.ndarray) -> None:
        if len(h1) == 0:
            return
        self.runs.append(np.sort(h1.astype(np.uint64)))
        if len(self.runs) > self.MAX_RUNS:
            merged = np.concatenate(self.runs)
            self.runs = []
            merged.sort()
            self.runs = [merged]

    def contains(self, h1: np.ndarray) -> np.ndarray:
        out = np.zeros(len(h1), bool)
        for run in self.runs:
            i = np.minimum(np.searchsorted(run, h1), len(run) - 1)
            out |= run[i] == h1
        return out
