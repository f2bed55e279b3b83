"""A deterministic 2-D layout for the Graph page's network (anchors, connectors and their edges): each
connected component laid out by stress majorisation on hop distances, the largest in [-1, 1]^2, the
others in a grid of smaller cells to its right."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def hop_distances(n: int, edges: Sequence[tuple[int, int, float]]) -> np.ndarray:
    """(n, n) hop counts between the nodes of one connected component (BFS from every node; the drawn
    components are small: the anchors and connectors of one run)."""
    adj = np.zeros((n, n), dtype=bool)
    for i, j, _ in edges:
        adj[i, j] = adj[j, i] = True
    d = np.full((n, n), np.inf)
    for s in range(n):
        d[s, s] = 0
        frontier, hop = np.array([s]), 0
        while frontier.size:
            hop += 1
            nxt = np.flatnonzero(adj[frontier].any(axis=0) & np.isinf(d[s]))
            d[s, nxt] = hop
            frontier = nxt
    d[np.isinf(d)] = d[np.isfinite(d)].max() + 1
    return d


def _mds_start(d: np.ndarray) -> np.ndarray:
    """Classical MDS of the target distances ``d`` in two dimensions, exact symmetries broken."""
    n = len(d)
    j = np.eye(n) - 1.0 / n
    b = -0.5 * j @ (d**2) @ j
    vals, vecs = np.linalg.eigh(b)
    top = np.argsort(vals)[::-1][:2]
    x = vecs[:, top] * np.sqrt(np.maximum(vals[top], 1e-9))
    return np.asarray(x + 1e-3 * np.c_[np.arange(n), -np.arange(n)])


def _stress_layout(n: int, edges: Sequence[tuple[int, int, float]], iterations: int) -> np.ndarray:
    """Stress-majorisation (SMACOF, weights 1/d^2) layout of one connected component, target distance
    = sqrt(hop distance), started from classical MDS; each axis scaled into [-1, 1]. Deterministic."""
    if n == 1:
        return np.zeros((1, 2))
    d = np.sqrt(hop_distances(n, edges))  # target distance sqrt(hops): a dense core gets room next to long chains
    x = _mds_start(d)
    w = np.zeros((n, n))
    off = ~np.eye(n, dtype=bool)
    w[off] = 1.0 / d[off] ** 2
    v = -w.copy()
    np.fill_diagonal(v, w.sum(axis=1))
    v_pinv = np.linalg.pinv(v)
    for _ in range(iterations):
        dist = np.linalg.norm(x[:, None] - x[None], axis=-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(dist > 1e-12, w * d / dist, 0.0)
        bz = -ratio
        np.fill_diagonal(bz, ratio.sum(axis=1))
        x = v_pinv @ bz @ x
    lo, hi = x.min(axis=0), x.max(axis=0)
    span = np.where(hi - lo > 1e-9, hi - lo, 1.0)
    return np.asarray(np.where(hi - lo > 1e-9, 2 * (x - lo) / span - 1, 0.0))


def components(n: int, edges: Sequence[tuple[int, int, float]]) -> list[list[int]]:
    """Connected components (lists of node positions), largest first, ties by smallest member."""
    parent = list(range(n))

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for i, j, _ in edges:
        ri, rj = find(i), find(j)
        if ri != rj:
            parent[max(ri, rj)] = min(ri, rj)
    groups: dict[int, list[int]] = {}
    for v in range(n):
        groups.setdefault(find(v), []).append(v)
    return sorted(groups.values(), key=lambda g: (-len(g), g[0]))


def spring_layout(n: int, edges: Sequence[tuple[int, int, float]], *, iterations: int = 100) -> np.ndarray:
    """Deterministic layout of ``n`` nodes: each connected component laid out by stress
    majorisation on hop distances; the largest fills [-1, 1]^2, the others sit
    in a grid of smaller cells to its right (x in (1.2, ...)), so an isolated node never squeezes
    the main component."""
    if n == 0:
        return np.zeros((0, 2))
    comps = components(n, edges)
    pos = np.zeros((n, 2))
    biggest = len(comps[0])
    rest = comps[1:]
    per_col = max(1, math.ceil(math.sqrt(len(rest) * 2))) if rest else 1
    cell = 2.0 / per_col
    for c, members in enumerate(comps):
        local = {v: i for i, v in enumerate(members)}
        sub = [(local[i], local[j], w) for i, j, w in edges if i in local and j in local]
        p = _stress_layout(len(members), sub, iterations)
        if c == 0:
            pos[members] = p
            continue
        r = max(0.15, 0.9 * math.sqrt(len(members) / biggest)) * cell / 2
        col, row = divmod(c - 1, per_col)
        centre = np.array([1.2 + cell / 2 + col * cell, 1.0 - cell / 2 - row * cell])
        pos[members] = centre + r * p
    return pos
