"""One long clean trace, written in blocks, for the single-pass checker and its bench.

``bulk_table`` (generate.py) makes many short traces; its dependency computation is
quadratic in the messages of a trace, so it cannot make one trace of millions of
messages. This generator follows the same model (a sequencer: every process delivers
every message in send order, each after a delay drawn from ``[DELAY_MIN, DELAY_MAX]``,
sends ``MEAN_GAP`` apart on average) without deps, block by block, so memory holds one
block. Rows are merged by time within a block, so a process's deliveries lag behind the
sends by at most one block.

``swap_at`` plants the bench's late breach: process ``p0``'s deliveries number
``swap_at`` and ``swap_at + 1`` swap places (total order, prefix order and FIFO break
there; integrity still holds).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa

from .generate import DELAY_MAX, DELAY_MIN, MEAN_GAP
from .schema import ARROW_SCHEMA

__all__ = ["long_trace_tables"]

_EPS = 1e-6


def long_trace_tables(n_messages: int, *, n_processes: int = 8, seed: int = 0,
                      block: int = 100_000, trace_id: str = "long",
                      swap_at: int | None = None) -> Iterator[pa.Table]:
    """Arrow tables (``ARROW_SCHEMA``) of one trace of ``n_messages`` sends and
    ``n_processes * n_messages`` deliveries, ``block`` messages per table; block ``b``
    draws from seed ``[seed, b]``."""
    n = n_processes
    if n < 1 or n_messages < 1:
        raise ValueError("need at least one process and one message")
    procs = pa.array([f"p{i}" for i in range(n)], pa.string())
    kinds = pa.array(["send", "deliver"], pa.string())
    t0 = 0.0
    last = np.full(n, -np.inf)  # each process's latest delivery time so far
    delivered = 0  # p0's deliveries written so far (for swap_at)
    for b, lo in enumerate(range(0, n_messages, block)):
        m = min(block, n_messages - lo)
        rng = np.random.default_rng([seed, b])
        send = t0 + np.cumsum(rng.exponential(MEAN_GAP, m))
        t0 = float(send[-1])
        senders = rng.integers(0, n, m)
        delays = rng.uniform(DELAY_MIN, DELAY_MAX, (n, m))
        ramp = np.arange(m) * _EPS
        arrive = send[None, :] + delays - ramp
        arrive[:, 0] = np.maximum(arrive[:, 0], last + _EPS)
        deliv = np.maximum.accumulate(arrive, axis=1) + ramp
        last = deliv[:, -1]
        time = np.concatenate([send, deliv.ravel()])
        proc = np.concatenate([senders, np.repeat(np.arange(n), m)])
        msgi = np.concatenate([np.arange(m), np.tile(np.arange(m), n)]) + lo
        is_send = np.arange(m * (n + 1)) < m
        order = np.argsort(time, kind="stable")
        time, proc, msgi, is_send = time[order], proc[order], msgi[order], is_send[order]
        if swap_at is not None:
            mine = np.flatnonzero(~is_send & (proc == 0))
            k = swap_at - delivered
            if 0 <= k and k + 1 < len(mine):
                i, j = mine[k], mine[k + 1]
                msgi[i], msgi[j] = msgi[j], msgi[i]
            delivered += len(mine)
        yield events_table(pa.array(np.full(len(time), trace_id), pa.string()),
                           procs.take(pa.array(proc)),
                           kinds.take(pa.array((~is_send).astype(np.int8))), msgi, time)


def events_table(trace: pa.Array, process: pa.Array, kind: pa.Array, msgi: np.ndarray,
                 time: np.ndarray) -> pa.Table:
    """A table (``ARROW_SCHEMA``) of sends and deliveries of messages ``m<msgi>`` at
    ``time``, every other field null."""
    rows = len(time)
    return pa.Table.from_arrays([
        trace, process, kind,
        pa.array(np.char.add("m", msgi.astype(str))),
        pa.nulls(rows, pa.list_(pa.string())),
        pa.nulls(rows, pa.string()),
        pa.nulls(rows, pa.list_(pa.string())),
        pa.array(time, pa.float64()),
        pa.nulls(rows, pa.int64()),
        pa.nulls(rows, pa.float64()),
    ], schema=ARROW_SCHEMA)
