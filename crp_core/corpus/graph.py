"""The fact similarity graph (SPEC-009 §5.2, used by CDGR, SPEC-025 §2.3-2.4).

1. For each retrievable fact, its K nearest retrievable neighbours in the HNSW index
   (one batched query, k = K + 1, self dropped): the ``NeighbourTable``.
2. An undirected edge {i, j} where either lists the other and cos(i, j) >= ``graph_edge_min``.
3. Edge weight = the cosine (exact float32 dot product of the two normalised vectors, as the
   index query recomputes it).

DELETED / QUARANTINED facts have no edges (they are never retrieved, not even as connectors).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from crp_core.config import CRPConfig
from crp_core.support.frozen import freeze_owned

if TYPE_CHECKING:
    from crp_core.corpus.index import FactIndex


#: rows of the neighbour table searched per batched query
NEIGHBOUR_ROWS = 65536

#: rows of the neighbour table read per step of the graph's build
_BUILD_ROWS = 8192

#: the dtypes of a CSR matrix's index arrays
_INDEX_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))


@dataclass(frozen=True, eq=False)
class NeighbourTable:
    """Each fact's K nearest neighbours: ``ids`` (n, K) int64 (-1 padded), ``sims`` (n, K) float32
    (NaN where padded), rows sorted by cosine descending. Non-retrievable facts have empty rows."""

    ids: np.ndarray
    sims: np.ndarray

    def __post_init__(self) -> None:
        if self.ids.shape != self.sims.shape or self.ids.ndim != 2:
            raise ValueError(f"ids {self.ids.shape} and sims {self.sims.shape} must be equal 2-D shapes")
        freeze_owned(self.ids)
        freeze_owned(self.sims)

    @property
    def k(self) -> int:
        return int(self.ids.shape[1])

    @classmethod
    def from_index(
        cls,
        index: FactIndex,
        vectors: np.ndarray,
        k: int,
        retrievable: np.ndarray,
        *,
        ef_search: int | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> NeighbourTable:
        """One batched query for every retrievable fact (k + 1 results), then self is dropped;
        ``progress(queried, retrievable facts)`` hears each cut of queries, from ``(0, n)``."""
        n = vectors.shape[0]
        retrievable = np.asarray(retrievable, dtype=bool)
        ids = np.full((n, k), -1, dtype=np.int64)
        sims = np.full((n, k), np.nan, dtype=np.float32)
        every = np.flatnonzero(retrievable)
        # queried NEIGHBOUR_ROWS at a time (each row's search is its own: the same table for any cut), so a million
        # rows' query vectors and results are never copied whole
        if progress is not None:
            progress(0, every.size)
        for s in range(0, every.size if k > 0 else 0, NEIGHBOUR_ROWS):
            rows = every[s : s + NEIGHBOUR_ROWS]
            got_ids, got_sims = index.query(vectors[rows], k + 1, retrievable, ef_search=ef_search)
            is_self = got_ids == rows[:, None]
            # a row without itself (exact duplicates can outrank it) drops its last entry instead
            no_self = ~is_self.any(axis=1)
            is_self[no_self, -1] = True
            keep = ~is_self
            ids[rows] = got_ids[keep].reshape(rows.size, k)
            sims[rows] = got_sims[keep].reshape(rows.size, k)
            if progress is not None:
                progress(s + rows.size, every.size)
        if progress is not None and k <= 0:
            progress(every.size, every.size)
        return cls(ids, sims)


@dataclass(frozen=True)
class HopPaths:
    """Shortest hop distances from each source, and the strongest shortest path (SPEC-025 §2.4).

    ``dist[s, v]``: hops from ``sources[s]`` to fact v (0 at the source, -1 when not reached
    within ``max_hops``). ``weight_sum[s, v]``: the largest total edge weight over the shortest
    paths (NaN when unreached); ``mean_weight = weight_sum / dist``. ``via[s, v]``: the node
    before v on that path (-1 at the source / unreached).
    """

    sources: np.ndarray
    dist: np.ndarray
    weight_sum: np.ndarray
    via: np.ndarray
    max_hops: int

    @property
    def mean_weight(self) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.dist > 0, self.weight_sum / np.maximum(self.dist, 1), np.nan).astype(np.float32)

    def path(self, s: int, v: int) -> list[int]:
        """Fact rows on the strongest shortest path from ``sources[s]`` to ``v`` (both included)."""
        if self.dist[s, v] < 0:
            return []
        out = [int(v)]
        while self.dist[s, out[-1]] > 0:
            out.append(int(self.via[s, out[-1]]))
        return out[::-1]


@dataclass(frozen=True, eq=False)
class SimilarityGraph:
    """Undirected weighted similarity graph as a symmetric scipy CSR matrix (SPEC-009 §5.2)."""

    matrix: sp.csr_matrix  # (n, n) symmetric, data = cosine weights, explicit entries = edges
    graph_k: int
    edge_min: float
    retrievable: np.ndarray
    _reach: sp.csr_matrix = field(repr=False, default=None)  # the boolean structure (True at every edge)

    @classmethod
    def build(
        cls, table: NeighbourTable, vectors: np.ndarray, retrievable: np.ndarray, config: CRPConfig = CRPConfig()
    ) -> SimilarityGraph:
        n = vectors.shape[0]
        retrievable = freeze_owned(np.asarray(retrievable, dtype=bool).copy())
        kept = _kept_listings(table, retrievable, float(config.graph_edge_min))
        # an edge when either endpoint lists the other: a listing answered by its partner is one edge placed from
        # both rows; a lone listing also places its reverse in the partner's row
        partner, in_count = _partners(table.ids, kept)
        out_count = kept.sum(axis=1)
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(out_count + in_count, out=indptr[1:])
        indices = np.empty(int(indptr[-1]), dtype=np.int32 if n < np.iinfo(np.int32).max else np.int64)
        data = np.empty(indices.size, dtype=np.float32)
        cursor = indptr[:-1] + out_count  # where each row's next reversed listing goes
        for s in range(0, n, _BUILD_ROWS):
            _place_rows(table, kept, partner, slice(s, min(n, s + _BUILD_ROWS)), cursor, (indptr, indices, data))
        matrix = sp.csr_matrix((data, indices, indptr), shape=(n, n))
        matrix.sort_indices()  # each row's columns ascending, in place
        return cls._of_csr(matrix.data, matrix.indices, matrix.indptr, retrievable, config)

    @classmethod
    def _of_csr(
        cls, data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, retrievable: np.ndarray, config: CRPConfig
    ) -> SimilarityGraph:
        """The graph of a symmetric CSR matrix's arrays (built or read back), read-only, with its boolean structure."""
        n = indptr.size - 1
        matrix = sp.csr_matrix((data, indices, indptr), shape=(n, n))
        reach = sp.csr_matrix((np.ones(data.size, dtype=bool), matrix.indices, matrix.indptr), shape=(n, n))
        for a in (matrix.data, matrix.indices, matrix.indptr, reach.data):
            a.setflags(write=False)
        return cls(matrix, config.graph_k, config.graph_edge_min, retrievable, reach)

    # ---- persistence (next to the neighbour table it is built from) ------------------------------
    def save(self, fh: BinaryIO) -> None:
        """The CSR arrays as an ``.npz`` (what :meth:`load` reads back to an equal graph)."""
        m = self.matrix
        np.savez(fh, indptr=m.indptr, indices=m.indices, data=m.data)

    @classmethod
    def load(cls, path: Path, retrievable: np.ndarray, config: CRPConfig) -> SimilarityGraph:
        """The graph saved at ``path`` by :meth:`save`, for ``n = retrievable.size`` facts; ``ValueError`` when the
        arrays are not a well-formed graph of that size (a damaged file, to be rebuilt)."""
        n = int(retrievable.size)
        with np.load(path, allow_pickle=False) as z:
            indptr, indices, data = np.asarray(z["indptr"]), np.asarray(z["indices"]), np.asarray(z["data"])
        # scipy keeps CSR index arrays as int32 when the values fit, else int64
        if indptr.dtype not in _INDEX_DTYPES or indices.dtype not in _INDEX_DTYPES or data.dtype != np.float32:
            raise ValueError("dtype mismatch")
        if indptr.shape != (n + 1,) or indices.ndim != 1 or data.shape != indices.shape:
            raise ValueError("shape mismatch")
        if indptr[0] != 0 or indptr[-1] != indices.size or (np.diff(indptr) < 0).any():
            raise ValueError("row pointers out of order")
        if indices.size and (indices.min() < 0 or indices.max() >= n or not np.isfinite(data).all()):
            raise ValueError("entries out of range")
        kept = freeze_owned(np.asarray(retrievable, dtype=bool).copy())
        return cls._of_csr(data, indices, indptr, kept, config)

    # ---- basic queries ------------------------------------------------------------------------
    @property
    def n(self) -> int:
        return int(self.matrix.shape[0])

    @property
    def n_edges(self) -> int:
        """Undirected edges (each stored twice in the symmetric matrix)."""
        return int(self.matrix.nnz // 2)

    def degree(self) -> np.ndarray:
        return np.diff(self.matrix.indptr)

    def neighbours(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """(neighbour rows, weights) of fact row i, sorted by row."""
        s, e = self.matrix.indptr[i], self.matrix.indptr[i + 1]
        return self.matrix.indices[s:e], self.matrix.data[s:e]

    def has_edge(self, i: int, j: int) -> bool:
        nb, _ = self.neighbours(i)
        p = np.searchsorted(nb, j)
        return bool(p < nb.size and nb[p] == j)

    def weight(self, i: int, j: int) -> float | None:
        """Edge weight (cosine), or None when there is no edge."""
        nb, w = self.neighbours(i)
        p = np.searchsorted(nb, j)
        return float(w[p]) if p < nb.size and nb[p] == j else None

    def has_edges(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        """Vectorised ``has_edge`` over paired arrays of rows."""
        i = np.asarray(i, dtype=np.int64)
        j = np.asarray(j, dtype=np.int64)
        if i.size == 0:
            return np.zeros(i.shape, dtype=bool)
        return np.asarray(self._reach[i, j]).reshape(i.shape) > 0

    def edges(self, rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Undirected edges (i < j, weight), optionally only those with both ends in ``rows``."""
        m = self.matrix if rows is None else self.matrix[rows][:, rows]
        coo = sp.triu(m, k=1, format="coo")
        if rows is None:
            return coo.row.astype(np.int64), coo.col.astype(np.int64), coo.data
        rows = np.asarray(rows, dtype=np.int64)
        return rows[coo.row], rows[coo.col], coo.data

    # ---- walks --------------------------------------------------------------------------------
    def hop_distances(self, sources: npt.ArrayLike, max_hops: int) -> np.ndarray:
        """(n,) int: hops from the nearest source (0 at sources, -1 beyond ``max_hops``)."""
        dist = np.full(self.n, -1, dtype=np.int64)
        src = np.unique(np.asarray(sources, dtype=np.int64))
        if src.size == 0:
            return dist
        dist[src] = 0
        frontier = np.zeros(self.n, dtype=np.float32)
        frontier[src] = 1.0
        for h in range(1, max_hops + 1):
            nxt = (self._reach @ frontier) > 0  # symmetric: A @ f == A.T @ f
            new = nxt & (dist < 0)
            if not new.any():
                break
            dist[new] = h
            frontier = new.astype(np.float32)
        return dist

    def within_hops(self, sources: npt.ArrayLike, hops: int) -> np.ndarray:
        """Rows at 1..hops from the nearest source (sources themselves excluded), ascending."""
        d = self.hop_distances(sources, hops)
        return np.flatnonzero(d > 0)

    def hop_paths(self, sources: npt.ArrayLike, max_hops: int) -> HopPaths:
        """Per-source BFS with strongest shortest paths (SPEC-025 §2.4 bridge value).

        Layer by layer: a node first reached at hop h takes the best ``weight_sum`` over its
        neighbours at hop h - 1 plus the edge weight (max-plus step, vectorised over edges).
        """
        src = np.asarray(sources, dtype=np.int64).reshape(-1)
        s, n = src.size, self.n
        dist = np.full((s, n), -1, dtype=np.int16)
        wsum = np.full((s, n), np.nan, dtype=np.float32)
        via = np.full((s, n), -1, dtype=np.int64)
        indptr, indices, data = self.matrix.indptr, self.matrix.indices, self.matrix.data
        for a in range(s):
            dist[a, src[a]] = 0
            wsum[a, src[a]] = 0.0
            frontier = src[a : a + 1]
            for h in range(1, max_hops + 1):
                starts, ends = indptr[frontier], indptr[frontier + 1]
                counts = ends - starts
                if counts.sum() == 0:
                    break
                pos = np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(counts.sum())
                u = np.repeat(frontier, counts)
                v = indices[pos].astype(np.int64)
                val = wsum[a, u] + data[pos]
                fresh = dist[a, v] < 0
                u, v, val = u[fresh], v[fresh], val[fresh]
                if v.size == 0:
                    break
                # best predecessor per new node: sort by (v, -val, u) and take the first of each v
                order = np.lexsort((u, -val, v))
                u, v, val = u[order], v[order], val[order]
                first = np.ones(v.size, dtype=bool)
                first[1:] = v[1:] != v[:-1]
                nv = v[first]
                dist[a, nv] = h
                wsum[a, nv] = val[first]
                via[a, nv] = u[first]
                frontier = nv
        return HopPaths(freeze_owned(src.copy()), freeze_owned(dist), freeze_owned(wsum), freeze_owned(via), max_hops)


# ---- the graph's build, a block of table rows at a time -------------------------------------------------------
def _kept_listings(table: NeighbourTable, retrievable: np.ndarray, edge_min: float) -> np.ndarray:
    """(n, k) bool: the listings that are edges, a neighbour at or above ``edge_min`` with both ends retrievable
    (padding, -1, reads the last row's flag and is dropped by ``ids >= 0``)."""
    ids, sims = table.ids, table.sims
    kept = (ids >= 0) & (sims >= np.float32(edge_min))
    kept &= retrievable[:, None] & retrievable[ids]
    kept &= ids != np.arange(ids.shape[0])[:, None]
    return kept


def _partners(ids: np.ndarray, kept: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each kept listing i -> j, the slot of row j that lists i back (-1 when none: a lone listing), (n, k);
    and each row's count of lone listings pointing at it, (n,)."""
    n = ids.shape[0]
    partner = np.full(ids.shape, -1, dtype=np.int16)
    in_count = np.zeros(n, dtype=np.int64)
    for s in range(0, n, _BUILD_ROWS):
        r, c = np.nonzero(kept[s : s + _BUILD_ROWS])
        i, j = r + s, ids[r + s, c]
        back = (ids[j] == i[:, None]) & kept[j]
        answered = back.any(axis=1)
        partner[i[answered], c[answered]] = back[answered].argmax(axis=1)
        in_count += np.bincount(j[~answered], minlength=n)
    return partner, in_count


def _place_rows(
    table: NeighbourTable,
    kept: np.ndarray,
    partner: np.ndarray,
    rows: slice,
    cursor: np.ndarray,
    csr: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> None:
    """Writes the kept listings of ``rows`` into the CSR arrays: each in its own row (from the row's start, in
    table order), a lone listing's reverse in its partner's row (at ``cursor``, which advances). A pair listed
    both ways weighs its lower row's listing: the cosine of its first listing in table order."""
    indptr, indices, data = csr
    ids, sims = table.ids, table.sims
    r, c = np.nonzero(kept[rows])
    i = r + rows.start
    j, w, slot = ids[i, c], sims[i, c], partner[i, c]
    lower = (slot >= 0) & (j < i)
    w[lower] = sims[j[lower], slot[lower]]
    # np.nonzero is row-major: each row's listings are consecutive, ranked from the row's first
    at = indptr[i] + np.arange(i.size) - np.searchsorted(i, i)
    indices[at], data[at] = j, w
    lone = slot < 0
    order = np.argsort(j[lone], kind="stable")
    into, back, wl = j[lone][order], i[lone][order], w[lone][order]
    at = cursor[into] + np.arange(into.size) - np.searchsorted(into, into)
    indices[at], data[at] = back, wl
    got, count = np.unique(into, return_counts=True)
    cursor[got] += count
