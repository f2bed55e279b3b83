"""The centroid-pruned exact pair search of the whole-CKF scan (SPEC-027 §2.2): every pair of unit vectors
whose cosine is above a cut, computing only products the triangle inequality cannot rule out.

**Blocks.** Spherical k-means centroids (:func:`centroids_of`, seeded); every row's *home* block is its most
similar centroid; a block's home rows, sorted by angle to the centroid, are cut into *shells* of
``SHELL_ROWS`` (:func:`centroid_blocks`).

**Guests.** A shell is multiplied by its *guests*: the rows whose cosine to the block's centroid is above the
shell's *guest cutoff* (:func:`guest_cutoffs`) and whose home block is this one or a later one. Angles on the
unit sphere obey the triangle inequality: if cos(x, y) > cut (angle below alpha = acos(cut)) and x lies at
angle <= theta from the centroid c (theta: the shell's farthest row), then angle(y, c) < theta + alpha, so
y is a guest of x's shell. A pair (x, y) above the cut with home blocks a = home x <= home y is therefore
computed in x's shell of block a: nothing is missed, whatever the centroids.

**How the guests are found.** A block's guests need every row's cosine to its centroid. Those cosines are
computed a *group* of up to ``GROUP_BLOCKS`` consecutive blocks at a time, in row bands of at most
``TILE_ELEMENTS`` products (:func:`group_guests`): each band is one well-shaped product of a contiguous
slice of rows with the group's centroids, and only the entries above each block's loosest cutoff (its
farthest shell's) whose row's home block is that block or a later one are kept, sorted most similar first.
The guest set is the one the definition above gives (every row, each cosine compared with the cutoff); the
bands only bound the memory and let one pass over the rows serve the whole group.

**Exactness.** Every cosine compared with a cutoff may differ from its exact value by float32 rounding;
the cutoffs are widened by ``slack`` (:func:`crp_core.analysis.scan.float32_slack`) on every angle, so a
rounding cannot exclude a true guest. The products found here are raw candidates at the cut (the
threshold minus the slack); the scan keeps those whose one per-pair dot is above the threshold
(``scan.pairs_above``), so the pair set does not depend on the centroids, the groups, the bands or the
threads that computed a product.

**Threads.** Groups are independent: :func:`pruned_pairs` runs them in ``threads`` worker threads, numpy's
BLAS on one thread each (the products, comparisons, gathers and sorts release the interpreter lock), and
gathers the results in group order.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial

import numpy as np
import scipy.sparse as sp

from crp_core.support.blas import one_blas_thread

#: float32 elements of one product tile (64 MB): every matrix product is tiled to this size
TILE_ELEMENTS = 1 << 24
#: facts per centroid (the number of centroid blocks is n / this, at most KMEANS_SAMPLE / 4)
FACTS_PER_CENTROID = 200
#: spherical k-means for the centroids: facts sampled, Lloyd iterations, fixed seed (the pair set does
#: not depend on the centroids, only the time does; the seed makes the time reproducible too)
KMEANS_SAMPLE = 16384
KMEANS_ITERATIONS = 4
KMEANS_SEED = 0
#: facts of one block that share a guest radius (a shell: consecutive by angle to the centroid)
SHELL_ROWS = 128
#: facts in the sample that estimates the pruned search's products
ESTIMATE_SAMPLE = 4096
#: consecutive blocks whose guests are found in one pass over the rows (:func:`group_guests`), at most
GROUP_BLOCKS = 256
#: rows gathered at a time, at most: the rows of one band of :func:`group_guests` (times the group's
#: centroids) and the guests of one band of :func:`block_pairs` (times a shell); with the product tile,
#: what one search thread holds at a time
BAND_ROWS = 16384
#: groups per worker thread at least, when the blocks allow it (smaller groups balance uneven ones)
GROUPS_PER_THREAD = 4

#: raw candidate pairs above the cut (any order, repeats) and the dot products computed
Found = tuple[list[np.ndarray], int]


def hits(a: np.ndarray, b: np.ndarray, cut: float) -> tuple[np.ndarray, np.ndarray]:
    """(row in a, row in b) of the products ``a @ b.T`` above ``cut``."""
    i, j = np.nonzero(a @ b.T > cut)
    return i.astype(np.int64), j.astype(np.int64)


def unit_rows(a: np.ndarray) -> np.ndarray:
    """Rows of ``a`` scaled to unit length (zero rows kept), contiguous float32."""
    norms = np.linalg.norm(a, axis=1, keepdims=True)
    return np.ascontiguousarray(a / np.where(norms > 0, norms, 1.0), dtype=np.float32)


def nearest(v: np.ndarray, centroids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's most similar centroid (ties: the lower index) and that cosine, in bounded tiles."""
    m, c = v.shape[0], centroids.shape[0]
    home = np.empty(m, dtype=np.int64)
    sim = np.empty(m, dtype=np.float32)
    band = max(1, TILE_ELEMENTS // c)
    for s in range(0, m, band):
        block = v[s : s + band] @ centroids.T
        best = np.argmax(block, axis=1)
        home[s : s + band] = best
        sim[s : s + band] = block[np.arange(best.size), best]
    return home, sim


def centroids_of(v: np.ndarray, n_centroids: int) -> np.ndarray:
    """Spherical k-means on a fixed sample of the rows (seeded: the same vectors give the same centroids)."""
    rng = np.random.default_rng(KMEANS_SEED)
    m = v.shape[0]
    sample = v[np.sort(rng.choice(m, size=min(m, KMEANS_SAMPLE), replace=False))]
    s = sample.shape[0]
    centroids = sample[np.sort(rng.choice(s, size=n_centroids, replace=False))].copy()
    for _ in range(KMEANS_ITERATIONS):
        home, _ = nearest(sample, centroids)
        member = sp.csr_matrix((np.ones(s, dtype=np.float32), (home, np.arange(s))), shape=(n_centroids, s))
        sums = np.asarray(member @ sample)
        filled = np.linalg.norm(sums, axis=1) > 0  # an emptied centroid keeps its place
        centroids[filled] = unit_rows(sums[filled])
    return centroids


def guest_cutoffs(farthest: np.ndarray, cut: float, slack: float) -> np.ndarray:
    """The cosine to a centroid that a row must exceed to pair above ``cut`` with some row of a shell
    whose farthest row has cosine ``farthest`` to that centroid (-2: every row).

    Angles on the unit sphere obey the triangle inequality: if cos(x, y) > cut (angle < alpha) and y
    is at angle <= theta from the centroid c, then x is at angle < theta + alpha from c, i.e.
    cos(x, c) > cos(theta + alpha). Both angles are widened and the cutoff lowered by ``slack``, so
    float32 rounding of any of these cosines cannot make the cutoff too tight.
    """
    theta = np.arccos(np.clip(np.asarray(farthest, dtype=np.float64) - slack, -1.0, 1.0))
    alpha = math.acos(min(1.0, max(-1.0, cut - slack)))
    return np.where(theta + alpha >= math.pi, -2.0, np.cos(np.minimum(theta + alpha, math.pi)) - slack)


@dataclass(frozen=True, eq=False)
class CentroidBlocks:
    """Rows grouped by their most similar centroid, each block cut into shells (consecutive by angle)."""

    centroids: np.ndarray  # (c, d) unit
    home: np.ndarray  # (m,) each row's block
    shell_rows: tuple[np.ndarray, ...]  # rows of each shell, block by block
    shell_block: np.ndarray  # (s,) block of each shell, non-decreasing
    cutoffs: np.ndarray  # (s,) cosine to the block's centroid a guest of the shell must exceed

    def shells_of(self, block: int) -> range:
        lo, hi = np.searchsorted(self.shell_block, [block, block + 1])
        return range(int(lo), int(hi))

    def loosest(self, g0: int, g1: int) -> np.ndarray:
        """(g1 - g0,) the loosest guest cutoff of each block ``g0..g1-1`` (its farthest shell's; +inf: no
        shell, no guest)."""
        out = np.full(g1 - g0, np.inf)
        last = np.searchsorted(self.shell_block, np.arange(g0 + 1, g1 + 1)) - 1  # each block's last shell
        has = (last >= 0) & (self.shell_block[np.maximum(last, 0)] == np.arange(g0, g1))
        out[has] = self.cutoffs[last[has]]
        return out


def centroid_blocks(v: np.ndarray, cut: float, slack: float) -> CentroidBlocks:
    """Centroids (:func:`centroids_of`), each row's home block, its shells and their guest cutoffs."""
    m = v.shape[0]
    n_centroids = max(2, min(m // FACTS_PER_CENTROID, KMEANS_SAMPLE // 4))
    centroids = centroids_of(v, n_centroids)
    home, home_sim = nearest(v, centroids)
    order = np.lexsort((-home_sim, home))  # by block, then nearest to the centroid first
    starts = np.searchsorted(home[order], np.arange(n_centroids + 1))
    shell_rows: list[np.ndarray] = []
    shell_block: list[int] = []
    for c in range(n_centroids):
        members = order[starts[c] : starts[c + 1]]
        for s in range(0, members.size, SHELL_ROWS):
            shell_rows.append(members[s : s + SHELL_ROWS])
            shell_block.append(c)
    farthest = np.array([home_sim[r[-1]] for r in shell_rows], dtype=np.float32)
    return CentroidBlocks(
        centroids, home, tuple(shell_rows), np.asarray(shell_block, dtype=np.int64), guest_cutoffs(farthest, cut, slack)
    )


def estimated_products(v: np.ndarray, blocks: CentroidBlocks) -> float:
    """The pruned search's products, estimated on a fixed sample of rows before computing any."""
    m = v.shape[0]
    rng = np.random.default_rng(KMEANS_SEED)
    probe = np.sort(rng.choice(m, size=min(m, ESTIMATE_SAMPLE), replace=False))
    guests = np.zeros(blocks.shell_block.size, dtype=np.int64)  # probe rows that are guests of each shell
    band = max(1, TILE_ELEMENTS // max(1, blocks.shell_block.size))
    for s in range(0, probe.size, band):
        rows = probe[s : s + band]
        sims = (v[rows] @ blocks.centroids.T)[:, blocks.shell_block]  # (rows, shells)
        later = blocks.home[rows][:, None] >= blocks.shell_block[None, :]
        guests += np.count_nonzero((sims > blocks.cutoffs[None, :]) & later, axis=0)
    sizes = np.array([r.size for r in blocks.shell_rows], dtype=np.float64)
    return float(np.sum(sizes * guests) * m / probe.size)


def group_guests(
    v: np.ndarray, blocks: CentroidBlocks, g0: int, g1: int
) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """``(block, guest rows, minus their cosines)`` for each block ``g0..g1-1``: the rows whose cosine to the
    block's centroid is above its loosest cutoff and whose home block is it or a later one, most similar
    first (ties: the lower row), with their cosines negated (ascending: each shell's guests are a prefix).

    One pass over the rows whose home block is ``g0`` or later, in bands of at most ``TILE_ELEMENTS`` cosines
    (the band's rows times the group's centroids), keeping only the guests (the module's docstring)."""
    loosest = blocks.loosest(g0, g1)
    below = np.nextafter(loosest.astype(np.float32), np.float32(-np.inf))  # float32 at or below each cutoff
    cents = blocks.centroids[g0:g1]
    band = max(1, min(BAND_ROWS, TILE_ELEMENTS // max(1, g1 - g0)))
    later = np.flatnonzero(blocks.home >= g0)  # no row of an earlier block is a guest of the group
    rows: list[np.ndarray] = []
    which: list[np.ndarray] = []
    sims: list[np.ndarray] = []
    for s in range(0, later.size, band):
        part = later[s : s + band]
        tile = v[part] @ cents.T  # (band, group)
        r, k = np.nonzero(tile > below[None, :])  # a float32 comparison first, then the exact one on the few
        c = tile[r, k]
        keep = (c > loosest[k]) & (blocks.home[part[r]] >= g0 + k)
        rows.append(part[r[keep]])
        which.append(k[keep])
        sims.append(c[keep])
    row = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    blk = np.concatenate(which) if which else np.zeros(0, dtype=np.int64)
    neg = -np.concatenate(sims) if sims else np.zeros(0, dtype=np.float32)
    # the entries come in ascending row order (bands of ascending rows, each read row by row), so a stable
    # sort by block, then most similar first, leaves ties in row order
    order = np.lexsort((neg, blk))
    row, blk, neg = row[order], blk[order], neg[order]
    bounds = np.searchsorted(blk, np.arange(g1 - g0 + 1))
    for b in range(g1 - g0):
        yield g0 + b, row[bounds[b] : bounds[b + 1]], neg[bounds[b] : bounds[b + 1]]


def block_pairs(
    v: np.ndarray, blocks: CentroidBlocks, block: int, guests: np.ndarray, desc: np.ndarray, cut: float
) -> Found:
    """Pairs above ``cut`` of one block's shells with their guests (``guests``, ``desc``: :func:`group_guests`'s
    rows and minus cosines); each shell's guests are the prefix above its cutoff, gathered once per block."""
    found: list[np.ndarray] = []
    products = 0
    shells = blocks.shells_of(block)
    if not shells or not guests.size:
        return found, products
    band = max(1, min(BAND_ROWS, TILE_ELEMENTS // max(SHELL_ROWS, v.shape[1])))  # gathered guests, products
    for t in range(0, guests.size, band):
        cols = guests[t : t + band]
        gathered = v[cols]
        for sh in shells:
            n_guests = int(np.searchsorted(desc, -blocks.cutoffs[sh], side="left")) - t  # guests above the cutoff
            if n_guests <= 0:
                continue
            rows = blocks.shell_rows[sh]
            i, j = hits(v[rows], gathered[:n_guests], cut)
            src, dst = rows[i], cols[j]
            keep = src != dst
            found.append(np.stack([src[keep], dst[keep]], axis=1))
            products += rows.size * min(n_guests, cols.size)
    return found, products


def range_pairs(v: np.ndarray, blocks: CentroidBlocks, g0: int, g1: int, cut: float) -> Found:
    """Raw candidates of blocks ``g0..g1-1`` (groups of at most ``GROUP_BLOCKS``): each block's shells times
    their guests."""
    found: list[np.ndarray] = []
    products = 0
    for a in range(g0, g1, GROUP_BLOCKS):
        for block, guests, desc in group_guests(v, blocks, a, min(g1, a + GROUP_BLOCKS)):
            got, n = block_pairs(v, blocks, block, guests, desc, cut)
            found.extend(got)
            products += n
    return found, products


def block_groups(n_blocks: int, threads: int) -> list[tuple[int, int]]:
    """Consecutive block ranges of at most ``GROUP_BLOCKS``, at least ``GROUPS_PER_THREAD`` per thread when
    there are blocks enough."""
    size = max(1, min(GROUP_BLOCKS, -(-n_blocks // max(1, GROUPS_PER_THREAD * threads))))
    return [(a, min(n_blocks, a + size)) for a in range(0, n_blocks, size)]


def pruned_pairs(v: np.ndarray, blocks: CentroidBlocks, cut: float, threads: int) -> Found:
    """Raw candidates above ``cut`` of every block (:func:`range_pairs`), the groups of :func:`block_groups`
    run in ``threads`` worker threads with numpy's BLAS on one thread, gathered in group order."""
    found: list[np.ndarray] = []
    products = 0
    groups = block_groups(int(blocks.centroids.shape[0]), threads)
    run = partial(range_pairs, v, blocks, cut=cut)
    with ThreadPoolExecutor(max_workers=max(1, threads)) as pool, one_blas_thread():
        for got, n in pool.map(lambda g: run(g0=g[0], g1=g[1]), groups):
            found.extend(got)
            products += n
    return found, products
