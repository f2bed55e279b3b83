"""Stage 3's walk over the similarity graph (SPEC-025 §2.3-2.4; docs/reference/pipeline.md §3): the connector
candidates within ``max_hops`` of the anchors, each one's hop distance to each anchor and the total weight
of its strongest shortest path, the anchors' own adjacency, the bridge values, and the edges among the
selected facts.

Everything is vectorised over the sparse graph: the walk only touches the anchors' 2-hop neighbourhood
(CSR row slices), never the whole matrix. With ``max_hops == 2`` the walk and the paths are one compiled
pass (``_graph_walk.pyx``, an optional extension) where it was built; the numpy path gives the same arrays.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import scipy.sparse as sp

try:  # the compiled walk: an optional extension, pyproject.toml builds it where a C compiler is
    import crp_core.stages._graph_walk as _kernel
except ImportError:  # pragma: no cover - a build without the extension takes the numpy paths
    _kernel = None  # type: ignore[assignment]
#: what this module calls in the extension: one built from an older ``.pyx`` (an editable install not
#: rebuilt) lacks some, and every path then takes its numpy form rather than failing mid-stage
_KERNEL_API = ("walk_two_hops", "edges_within", "edge_triples", "bridge_counts", "bridged_order")
if _kernel is not None and not all(hasattr(_kernel, name) for name in _KERNEL_API):  # pragma: no cover
    _kernel = None  # type: ignore[assignment]


def compiled() -> bool:
    """Whether the optional compiled walk (``_graph_walk.pyx``) was built and is used here."""
    return _kernel is not None


@contextmanager
def numpy_paths() -> Iterator[None]:
    """Inside, every function here takes its numpy path, the compiled walk set aside: the reference the
    compiled twin is compared with (not for concurrent use: it swaps the module's kernel)."""
    global _kernel
    saved = _kernel
    _kernel = None  # type: ignore[assignment]  # the module or None, as at import
    try:
        yield
    finally:
        _kernel = saved


def _expand_rows(
    indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, frontier: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each row of ``frontier`` (duplicates allowed): (entry owner position, neighbour, weight)."""
    w, nb, counts = row_slices(indptr, indices, data, frontier)
    return np.repeat(np.arange(frontier.size), counts), nb, w  # the CSR's float32 weights: callers widen


def walk(matrix: sp.csr_matrix, anchors: np.ndarray, max_hops: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows within ``max_hops`` of any anchor (anchors excluded), ascending, with their hop distance.

    Breadth-first over CSR row slices; a per-call (n,) int8 distance array deduplicates each layer
    without sorting.
    """
    dist = np.full(matrix.shape[0], -1, dtype=np.int8)
    frontier = np.unique(anchors)
    dist[frontier] = 0
    _extend_layers(matrix, dist, frontier, 1, max_hops)
    rows = np.flatnonzero(dist > 0)
    return rows.astype(np.int64), dist[rows].astype(np.int64)


def _extend_layers(matrix: sp.csr_matrix, dist: np.ndarray, frontier: np.ndarray, first: int, last: int) -> None:
    """Breadth-first layers ``first..last`` from ``frontier`` (the layer before), written into
    ``dist`` in place (-1 = not reached yet)."""
    indptr, indices, data = matrix.indptr, matrix.indices, matrix.data
    for h in range(first, last + 1):
        if frontier.size == 0:
            break
        _, nb, _ = _expand_rows(indptr, indices, data, frontier)
        nb = nb[dist[nb] < 0]
        if nb.size == 0:
            break
        dist[nb] = h
        if h < last:
            frontier = np.flatnonzero(dist == h)  # this layer, each row once, ascending


def anchor_paths(
    matrix: sp.csr_matrix, anchors: np.ndarray, cands: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per (candidate, anchor): hops of the shortest path if it is 1 or 2 (else 0), and the total
    weight of the strongest such path (SPEC-025 §2.4; see docs/decisions/pipeline.md); plus the
    anchors' own adjacency (s, s) bool.

    Every intermediate node of a 2-hop path is a neighbour of the anchor, so one expansion of the
    anchors' rows and one of their neighbours' rows cover every path (max-plus by ``maximum.at``).
    Returns ``hops`` (m, s) int8, ``weight_sum`` (m, s) float64 (0 where not touched) and ``aa``.
    """
    indptr, indices, data = matrix.indptr, matrix.indices, matrix.data
    own1, x, w1 = _expand_rows(indptr, indices, data, anchors)
    return _paths_from(matrix, anchors, cands, own1, x, w1, row_slices(indptr, indices, data, x))


def row_slices(
    indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, x: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The CSR slices of every row of ``x`` (duplicates kept), concatenated: (weights, neighbour rows
    as ``intp``, per-x entry counts). The rows are widened once: ``intp`` is the index type numpy gathers
    and scatters through natively (the CSR holds int32)."""
    starts = indptr[x]
    counts = indptr[x + 1] - starts
    total = int(counts.sum())
    if total == 0:
        e = np.zeros(0, dtype=np.intp)
        return data[e], e, counts
    offsets = np.cumsum(counts) - counts
    at = np.repeat(starts - offsets, counts) + np.arange(total)
    return data[at], indices[at].astype(np.intp, copy=False), counts


def _paths_from(
    matrix: sp.csr_matrix,
    anchors: np.ndarray,
    cands: np.ndarray,
    own1: np.ndarray,
    x: np.ndarray,
    w1: np.ndarray,
    layer2: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``anchor_paths`` from the anchors' expansion (own1, x, w1) and the expansion of x (``layer2``)."""
    s, m = anchors.size, cands.size
    hops = np.zeros((m, s), dtype=np.int8)
    wsum = np.zeros((m, s), dtype=np.float64)
    aa = np.zeros((s, s), dtype=bool)
    if s == 0:
        return hops, wsum, aa
    # local position: candidates 0..m-1, anchors m..m+s-1, any other row m+s (a dummy block of keys)
    pos = np.full(matrix.shape[0], m + s, dtype=np.intp)  # intp: the keys below need no widening
    pos[cands] = np.arange(m)
    pos[anchors] = np.arange(m, m + s)
    px = pos[x]
    is_anchor = (px >= m) & (px < m + s)
    aa[own1[is_anchor], px[is_anchor] - m] = True
    if m == 0:
        return hops, wsum, aa
    # x -> c (walks of length 2), each entry tagged with the anchor of its x (``np.repeat`` of the
    # per-x values: no gather through an owner index). Keys of walks ending on an anchor or a
    # non-candidate land in rows m.. of ``best2`` and are ignored (no filtering pass).
    w2, c2, counts = layer2
    flat_w = wsum.reshape(-1)
    flat_h = hops.reshape(-1)
    if w2.size:
        key2 = pos[c2]  # in place from here: no temporaries of the walk's size
        key2 *= s
        key2 += np.repeat(own1, counts)
        val2 = np.repeat(w1.astype(np.float64), counts)
        val2 += w2
        # two-hop walks: the strongest total per (candidate, anchor) ...
        best2 = np.full((m + s + 1) * s, -np.inf)
        np.maximum.at(best2, key2, val2)
        best2 = best2[: m * s]
        has2 = best2 > -np.inf
        flat_h[has2] = 2
        flat_w[has2] = best2[has2]
    # ... unless a direct edge makes the anchor 1 hop away (each (anchor, neighbour) entry is unique)
    one = px < m
    key1 = px[one] * s + own1[one]
    flat_h[key1] = 1
    flat_w[key1] = w1[one].astype(np.float64)
    return hops, wsum, aa


def walk_with_paths(
    matrix: sp.csr_matrix, anchors: np.ndarray, max_hops: int, retrievable: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``walk`` (retrievable rows only) and ``anchor_paths`` over its rows, sharing the two CSR
    expansions both need: the anchors' rows give hop 1, their neighbours' rows give hop 2 and the
    2-hop paths. Returns (cands, hop distance, hops, weight_sum, aa).

    With ``max_hops == 2`` (the default) and distinct anchors this is the compiled walk of
    ``_cdgr_walk.pyx`` when it was built (one pass over the anchors' 2-hop neighbourhood, no temporary
    per walk entry); else, and where the extension is missing, the numpy path below."""
    if max_hops < 1 or anchors.size == 0:
        cands, dist = walk(matrix, anchors, max_hops)
        ok = retrievable[cands]
        cands, dist = cands[ok], dist[ok]
        hops, wsum, aa = anchor_paths(matrix, anchors, cands)
        return cands, dist, hops, wsum, aa
    indptr, indices, data = matrix.indptr, matrix.indices, matrix.data
    if (
        max_hops == 2
        and _kernel is not None
        and _compiled_graph(matrix)
        and anchors.dtype == np.int64
        and retrievable.dtype == np.bool_
        and len(set(anchors.tolist())) == anchors.size
    ):
        # the compiled walk: the same five arrays, to the bit (tests/core/stages/test_cdgr_fastpaths.py)
        return _kernel.walk_two_hops(
            indptr, indices, data, np.ascontiguousarray(anchors), np.ascontiguousarray(retrievable)
        )
    own1, x, w1 = _expand_rows(indptr, indices, data, anchors)
    layer2 = row_slices(indptr, indices, data, x)
    # three scatters, nearest last: every neighbour of a hop-1 row is 2 hops away unless it is a hop-1
    # row itself or an anchor (no gather and filter of every 2-hop walk)
    dist = np.full(matrix.shape[0], -1, dtype=np.int8)
    if max_hops >= 2:
        dist[layer2[1]] = 2
    dist[x] = 1
    dist[anchors] = 0
    if max_hops >= 3:  # further layers: as ``walk`` (no pass over every row's distance otherwise)
        _extend_layers(matrix, dist, np.flatnonzero(dist == 2), 3, max_hops)
    rows = np.flatnonzero(dist > 0)
    cands = rows[retrievable[rows]].astype(np.int64, copy=False)
    cdist = dist[cands].astype(np.int64)
    hops, wsum, aa = _paths_from(matrix, anchors, cands, own1, x, w1, layer2)
    return cands, cdist, hops, wsum, aa


def bridge_values(
    aa: np.ndarray, hops: np.ndarray, wsum: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(bridge_count, mean_path_weight, bridge_value, non_adjacent (s, s) bool) per candidate.

    bridge_count = touched-anchor pairs with no direct edge; mean_path_weight = total weight of the
    strongest shortest paths / number of their edges (pooled; the weights summed over the anchors left to
    right); bridge_value = count * mean. The compiled :func:`bridge_counts` (up to 62 anchors, where it was
    built) gives the same arrays to the bit.
    """
    s = aa.shape[0]
    non_adj = ~aa & ~np.eye(s, dtype=bool)
    if (
        _kernel is not None
        and 0 < s <= BRIDGE_BITS
        and hops.dtype == np.int8
        and wsum.dtype == np.float64
        and hops.flags.c_contiguous
        and wsum.flags.c_contiguous
    ):
        count, mean_w, bridge = _kernel.bridge_counts(hops, wsum, non_adj.view(np.uint8))
        return count, mean_w, bridge, non_adj
    t = (hops > 0).astype(np.float64)
    count = np.rint(((t @ non_adj.astype(np.float64)) * t).sum(axis=1) / 2).astype(np.int64)
    edges = hops.sum(axis=1, dtype=np.int64)
    total = np.zeros(hops.shape[0], dtype=np.float64)
    for k in range(s):  # left to right over the anchors (a row sum would pair them up from 8 on)
        total += wsum[:, k]
    mean0 = total / np.maximum(edges, 1)  # 0 where no anchor is touched (wsum row all 0)
    mean_w = np.where(edges > 0, mean0, np.nan)
    bridge = np.where(count > 0, count * mean0, 0.0)  # count > 0 implies edges > 0
    return count, mean_w, bridge, non_adj


#: the compiled bridge counts hold a row's touched anchors in one 64-bit mask
BRIDGE_BITS = 62


def bridged_anchor_listing(hops: np.ndarray, non_adj: np.ndarray) -> Callable[[int], list[int]] | None:
    """The compiled listing of the anchor positions a row's bridged pairs name, each once in order of first
    appearance, as a function of the row (the layout checked once); None where it does not apply (no
    extension, more than :data:`BRIDGE_BITS` anchors, other layouts): the caller then reads them off its
    bit masks."""
    if (
        _kernel is None
        or not 0 < hops.shape[1] <= BRIDGE_BITS
        or hops.dtype != np.int8
        or not hops.flags.c_contiguous
        or non_adj.dtype != np.bool_
        or not non_adj.flags.c_contiguous
    ):
        return None
    return functools.partial(_kernel.bridged_order, hops, non_adj.view(np.uint8))


def edges_among(matrix: sp.csr_matrix, rows: np.ndarray) -> tuple[tuple[int, int, float], ...]:
    """Undirected edges (i < j, weight) with both ends in ``rows``, sorted (the compiled listing where
    it was built and the rows are distinct; the same triples either way)."""
    rows = np.asarray(rows, dtype=np.int64)
    if rows.size < 2:
        return ()
    ordered = np.sort(rows)  # membership by binary search: no pass over every row of the graph
    if _kernel is not None and _compiled_graph(matrix) and bool((ordered[1:] != ordered[:-1]).all()):
        triples = _kernel.edge_triples(matrix.indptr, matrix.indices, matrix.data, ordered)
        if triples is not None:  # each row's columns ascend: the listing is already in (a, b) order
            return triples
        a, b, x = _kernel.edges_within(matrix.indptr, matrix.indices, matrix.data, ordered)
    else:
        own, nb, w = _expand_rows(matrix.indptr, matrix.indices, matrix.data, rows)
        src = rows[own]
        at = np.minimum(np.searchsorted(ordered, nb), ordered.size - 1)
        keep = (ordered[at] == nb) & (src < nb)
        a, b, x = src[keep], nb[keep], w[keep]
    order = np.lexsort((x, b, a))  # = sorted() of the (a, b, weight) triples
    return tuple(zip(a[order].tolist(), b[order].tolist(), x[order].astype(np.float64).tolist()))


def _compiled_graph(matrix: sp.csr_matrix) -> bool:
    """Whether the compiled kernels read this CSR as it is (int32 indices, float32 weights, contiguous)."""
    return (
        matrix.indptr.dtype == np.int32
        and matrix.indices.dtype == np.int32
        and matrix.data.dtype == np.float32
        and matrix.indptr.flags.c_contiguous
        and matrix.indices.flags.c_contiguous
        and matrix.data.flags.c_contiguous
    )
