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


#: the width right of the largest component (x from REST_X0) where the other components are placed
REST_X0, REST_WIDTH = 1.2, 2.0
#: the largest cell of an isolated node's grid (a lone node stays next to the main component)
SINGLE_CELL = 0.5


def spring_layout(n: int, edges: Sequence[tuple[int, int, float]], *, iterations: int = 100) -> np.ndarray:
    """Deterministic layout of ``n`` nodes: each connected component laid out by stress
    majorisation on hop distances; the largest fills [-1, 1]^2, the others sit to its right
    (x in (1.2, 3.2)): the components of two nodes or more in a column of squares whose sides follow
    their node counts, the isolated nodes in a grid beside it, so neither an isolated node squeezes the
    main component nor a crowd of isolated nodes squeezes a second cluster."""
    if n == 0:
        return np.zeros((0, 2))
    comps = components(n, edges)
    pos = np.zeros((n, 2))
    biggest = len(comps[0])
    layouts = []
    for members in comps:
        local = {v: i for i, v in enumerate(members)}
        sub = [(local[i], local[j], w) for i, j, w in edges if i in local and j in local]
        layouts.append(_stress_layout(len(members), sub, iterations))
    pos[comps[0]] = layouts[0]
    groups = [(m, p) for m, p in zip(comps[1:], layouts[1:]) if len(m) > 1]
    singles = [m[0] for m in comps[1:] if len(m) == 1]
    width = _place_groups(pos, groups, biggest)
    _place_singles(pos, singles, REST_X0 + width, REST_WIDTH - width)
    return pos


def _place_groups(pos: np.ndarray, groups: Sequence[tuple[list[int], np.ndarray]], biggest: int) -> float:
    """Components of two nodes or more stacked from the top in a column right of the largest: each in a
    square of side 2 sqrt(size / biggest) (as large as the largest when as big), all scaled down together to
    fit the column's height of 2; returns the column's width (0 without such components)."""
    if not groups:
        return 0.0
    sides = [2.0 * math.sqrt(len(m) / biggest) for m, _ in groups]
    scale = min(1.0, 2.0 / sum(sides), 0.75 * REST_WIDTH / max(sides))
    width, top = max(sides) * scale, 1.0
    for (members, p), side in zip(groups, sides):
        side *= scale
        centre = np.array([REST_X0 + width / 2, top - side / 2])
        pos[members] = centre + 0.42 * side * p  # a margin inside the square for the labels
        top -= side
    return width


def _place_singles(pos: np.ndarray, singles: Sequence[int], x0: float, width: float) -> None:
    """Isolated nodes in a grid of square cells (at most :data:`SINGLE_CELL` wide) within ``width`` x 2 from
    (x0, 1), row by row."""
    if not singles:
        return
    width = max(width, 0.4)
    cols = max(1, math.ceil(math.sqrt(len(singles) * width / 2.0)))
    rows = math.ceil(len(singles) / cols)
    cell = min(width / cols, 2.0 / rows, SINGLE_CELL)
    for k, v in enumerate(singles):
        row, col = divmod(k, cols)
        pos[v] = (x0 + cell / 2 + col * cell, 1.0 - cell / 2 - row * cell)


#: where a node's label may sit, in the order tried when two places cost the same (plotly textposition), and
#: the label box's offset from the node in pixels: (dx of the box's left edge from the node as a multiple of its
#: width, dy of its bottom edge from the node in pixels as a multiple of its height, a fixed gap)
LABEL_SIDES: tuple[tuple[str, float, float, float, float], ...] = (
    ("top center", -0.5, 0.0, 0.0, 9.0),
    ("bottom center", -0.5, -1.0, 0.0, -9.0),
    ("middle right", 0.0, -0.5, 11.0, 0.0),
    ("middle left", -1.0, -0.5, -11.0, 0.0),
)
#: half the side of the square a marker is taken to cover, pixels
MARKER_HALF = 9.0


def _overlap(a: np.ndarray, boxes: np.ndarray) -> float:
    """The area ``a`` (x0, y0, x1, y1) shares with each of ``boxes``, summed."""
    if not len(boxes):
        return 0.0
    w = np.clip(np.minimum(a[2], boxes[:, 2]) - np.maximum(a[0], boxes[:, 0]), 0.0, None)
    h = np.clip(np.minimum(a[3], boxes[:, 3]) - np.maximum(a[1], boxes[:, 1]), 0.0, None)
    return float((w * h).sum())


def label_sides(
    pos: np.ndarray,
    sizes: Sequence[tuple[float, float]],
    ranges: tuple[tuple[float, float], tuple[float, float]],
    plot_px: tuple[float, float] = (760.0, 460.0),
) -> list[str]:
    """A plotly ``textposition`` per node that keeps its label (``sizes``: width, height in pixels) off the
    labels placed before it and off every marker, greedily in node order; a place that overlaps nothing
    keeps the first side of :data:`LABEL_SIDES` that does. ``ranges``: the axes' (x, y) ranges the plot
    shows over ``plot_px`` pixels. Presentation only: the layout's positions are not moved."""
    (x0, x1), (y0, y1) = ranges
    px = (
        np.column_stack(((pos[:, 0] - x0) * plot_px[0] / (x1 - x0), (pos[:, 1] - y0) * plot_px[1] / (y1 - y0)))
        if len(pos)
        else np.zeros((0, 2))
    )
    placed = [np.array([x - MARKER_HALF, y - MARKER_HALF, x + MARKER_HALF, y + MARKER_HALF]) for x, y in px]
    sides: list[str] = []
    for (x, y), (w, h) in zip(px.tolist(), sizes, strict=True):
        boxes = [
            np.array([x + fx * w + gx, y + fy * h + gy, x + fx * w + gx + w, y + fy * h + gy + h])
            for _name, fx, fy, gx, gy in LABEL_SIDES
        ]
        taken = np.array(placed)
        pick = min(range(len(boxes)), key=lambda k: (_overlap(boxes[k], taken), k))
        sides.append(LABEL_SIDES[pick][0])
        placed.append(boxes[pick])
    return sides
