"""The neighbour maps Maelstrom's broadcast workload offers its nodes (``--topology``):
``grid`` (the default: a square grid, neighbours up, down, left and right), ``line``,
``total`` (everyone), and ``tree2``, ``tree3``, ``tree4`` (a k-ary tree, by index)."""

from __future__ import annotations

import math

__all__ = ["TOPOLOGIES", "topology"]

TOPOLOGIES = ("grid", "line", "total", "tree2", "tree3", "tree4")


def topology(kind: str, nodes: list[str]) -> dict[str, list[str]]:
    n = len(nodes)
    if kind == "total":
        return {a: [b for b in nodes if b != a] for a in nodes}
    if kind == "line":
        return {a: [nodes[j] for j in (i - 1, i + 1) if 0 <= j < n]
                for i, a in enumerate(nodes)}
    if kind == "grid":
        side = max(1, math.isqrt(n - 1) + 1 if n > 1 else 1)
        out = {}
        for i, a in enumerate(nodes):
            r, c = divmod(i, side)
            near = [(r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)]
            out[a] = [nodes[rr * side + cc] for rr, cc in near
                      if 0 <= cc < side and 0 <= rr and rr * side + cc < n]
        return out
    if kind.startswith("tree") and kind[4:].isdigit() and kind in TOPOLOGIES:
        k = int(kind[4:])
        out = {a: [] for a in nodes}
        for i in range(1, n):
            parent = (i - 1) // k
            out[nodes[i]].append(nodes[parent])
            out[nodes[parent]].append(nodes[i])
        return out
    raise ValueError(f"unknown topology {kind!r}; known: {', '.join(TOPOLOGIES)}")
