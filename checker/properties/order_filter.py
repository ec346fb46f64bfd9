"""A shared fast test for the order properties: is one sequence consistent with every process?

If some total order of the messages lists every process's (first)
deliveries in that process's order, then no two processes disagree
(weak total order holds) and a global order exists. Finding such an order
is a topological sort of the union of the per-process orders; here it is
done for all traces of a chunk at once by longest-path relaxation: start
from each message's largest delivery position, then repeatedly push every
"a is delivered just before b" edge (rank b >= rank a + 1) a bounded number
of rounds. A trace whose edges all ascend has such an order (exact: the
ranks themselves are the witness). A trace that still has a descending edge
after the rounds is either cyclic or merely slow to converge: the engine
gives it to the exact per-trace check, so the filter can be wrong only in
cost, never in verdict.
"""

from __future__ import annotations

import numpy as np

from tomkit.checker.chunk import Chunk

ROUNDS = 16


def consistent_traces(c: Chunk) -> np.ndarray:
    """Per trace: True when one sequence fits every process's first deliveries."""
    cached = c.cache.get("order_filter")
    if cached is not None:
        return cached
    rank = np.zeros(max(c.ntm, 1), np.int64)
    np.maximum.at(rank, c.f_tm, c.f_pos)
    same = c.f_tp[1:] == c.f_tp[:-1]
    a, b = c.f_tm[:-1][same], c.f_tm[1:][same]
    bad = rank[a] >= rank[b]
    for _ in range(ROUNDS):
        if not bad.any():
            break
        np.maximum.at(rank, b[bad], rank[a[bad]] + 1)
        bad = rank[a] >= rank[b]
    ok = np.ones(c.ntr, bool)
    ok[c.tm_t[a[bad]]] = False
    c.cache["order_filter"] = ok
    return ok
