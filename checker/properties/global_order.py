"""Global order: one sequence of messages is consistent with every process's deliveries.

Definition: there is a total order S of the delivered messages such that
each process delivers its messages (first deliveries) in S's order. This is
the order a total-order multicast promises; pairwise agreement (the weak
form) is necessary but not sufficient: with p: a<b, q: b<c, r: c<a every
pair agrees on its common messages, yet no S exists. Source: the
"global total order" discussion of Défago, Schiper and Urbán 2004, section
2.2 (pairwise total order is weaker than a single global sequence when
processes deliver different subsets).

Check: S exists iff the union of the per-process orders has no cycle
(Kahn's topological sort, linear time). Witness: a shortest cycle
m1 -> m2 -> ... -> mk -> m1 where each step is one process delivering the
first message before the second; found by a breadth-first search per
message of the cyclic component, O(E) each because a process's suffix is
scanned at most once per search. The witness is minimum for components of
up to MAX_SOURCES messages and irreducible (no step can be dropped) beyond.
"""

from __future__ import annotations

from collections import deque

import networkx as nx
import numpy as np

from tomkit.checker import witness as W
from tomkit.checker.chunk import Chunk
from tomkit.checker.properties.base import Options, Property, verdicts
from tomkit.checker.properties.order_filter import consistent_traces
from tomkit.checker.result import Result, Verdict
from tomkit.checker.trace import Trace

NAME = "global-order"
MAX_SOURCES = 2000


def _sequences(trace: Trace) -> dict[str, list[str]]:
    return {p: [e.msg for _, e in trace.first_deliveries[p]] for p in trace.processes}


def check(trace: Trace, options: Options = Options()) -> Result:
    seqs = _sequences(trace)
    g = nx.DiGraph()
    for s in seqs.values():
        g.add_nodes_from(s)
        g.add_edges_from(zip(s, s[1:]))
    if nx.is_directed_acyclic_graph(g):
        return Result(NAME, trace.id, Verdict.HOLDS)
    cycle = shortest_cycle(seqs, g)
    idx = trace.delivery_index
    wit, steps = [], []
    for (m, proc), (m2, _) in zip(cycle, cycle[1:] + cycle[:1]):
        wit += [W.delivery(trace, proc, idx[proc][m]), W.delivery(trace, proc, idx[proc][m2])]
        steps.append(f"{proc} delivers {m} before {m2}")
    text = "no single order fits every process: " + "; ".join(steps) + "."
    return Result(NAME, trace.id, Verdict.VIOLATED, wit, text, f"cycle-of-{len(cycle)}",
                  {"cycle": [m for m, _ in cycle]})


def shortest_cycle(seqs: dict[str, list[str]], g: nx.DiGraph) -> list[tuple[str, str]]:
    """A shortest cycle of the "some process delivers u before v" relation, as
    [(m1, process taking m1 to m2), (m2, ...), ...]."""
    pos = {p: {m: i for i, m in enumerate(s)} for p, s in seqs.items()}
    where: dict[str, list[str]] = {}
    for p, s in seqs.items():
        for m in s:
            where.setdefault(m, []).append(p)
    best: list[tuple[str, str]] | None = None
    comps = [c for c in nx.strongly_connected_components(g) if len(c) > 1]
    for comp in sorted(comps, key=lambda c: min(c)):
        for src in sorted(comp)[:MAX_SOURCES]:
            cyc = _bfs_cycle(src, seqs, pos, where, None if best is None else len(best))
            if cyc is not None and (best is None or len(cyc) < len(best)):
                best = cyc
                if len(best) == 2:
                    return best
    assert best is not None
    return best


def _bfs_cycle(src, seqs, pos, where, limit):
    """Shortest cycle through ``src``: BFS over "some process delivers u before v", closing
    when a process delivers the dequeued message before ``src``."""
    parent: dict[str, tuple[str, str] | None] = {src: None}
    dist = {src: 0}
    low = {p: len(s) for p, s in seqs.items()}  # positions >= low[p] are already scanned
    queue = deque([src])
    while queue:
        u = queue.popleft()
        if limit is not None and dist[u] + 1 >= limit:
            return None
        if u != src:
            closing = next((p for p in where[u] if src in pos[p] and pos[p][u] < pos[p][src]),
                           None)
            if closing is not None:
                path = [(u, closing)]
                x = u
                while parent[x] is not None:
                    prev, proc = parent[x]
                    path.append((prev, proc))
                    x = prev
                return path[::-1]
        for p in where[u]:
            i = pos[p][u]
            if i >= low[p]:
                continue
            for j in range(i + 1, low[p]):
                v = seqs[p][j]
                if v not in dist:
                    dist[v] = dist[u] + 1
                    parent[v] = (u, p)
                    queue.append(v)
            low[p] = i
    return None


def detect(c: Chunk, options: Options) -> np.ndarray:
    return verdicts(c, np.zeros(c.ntr, bool), exact=~consistent_traces(c))


PROPERTY = Property(NAME, "one sequence fits every process's deliveries", True,
                    check, detect, __doc__)
