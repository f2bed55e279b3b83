"""Centroid blocks of the whole-CKF pair search, cut into independent work units (SPEC-027 §2.2).

The exact search above ``contradiction_similarity`` (:func:`crp_core.analysis.scan.exact_pairs`) is
split by k-means centroid blocks so each unit can run on another worker. Coverage argument (every
pair the local scan keeps is computed by some unit):

* every fact has a *home* block, its most similar centroid; a block's home facts are cut into shells;
* a pair (x, y) with cos(x, y) > tau - slack has angle(x, y) < alpha = acos(tau - slack); if x lies in
  a shell of block a whose farthest fact is at angle theta from the centroid c_a, then by the triangle
  inequality of angles on the unit sphere angle(y, c_a) < theta + alpha, i.e. cos(y, c_a) is above the
  shell's guest cutoff (:func:`crp_core.analysis.scan_search.guest_cutoffs`, widened by the slack);
* the unit of block a multiplies each shell with every such *guest* whose home block is a or later, so
  the pair is computed in the unit of min(home x, home y) — the block and its neighbouring blocks.

Units return raw candidates; :func:`merge_pairs` deduplicates them and keeps exactly the pairs whose
per-pair float32 dot product is above tau: the same arithmetic and the same set as the local scan
(``exact_pairs`` also filters its candidates that way), whatever the centroids, units or engine.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from crp_core.analysis import scan, scan_search
from crp_core.analysis.scan import PairSearch

#: block groups per worker: more, smaller units balance uneven blocks
UNITS_PER_WORKER = 4

#: one unit's result: (raw candidate pairs (k, 2) int64, dot products computed)
UnitResult = tuple[np.ndarray, int]


@dataclass(frozen=True, eq=False)
class BlockPlan:
    """The unit vectors, their centroid blocks and the cut, shared read-only by every unit."""

    vectors: np.ndarray  # (m, d) float32 unit rows
    blocks: scan_search.CentroidBlocks
    cut: float  # threshold minus the float32 slack
    threshold: float

    @property
    def n_blocks(self) -> int:
        return int(self.blocks.centroids.shape[0])

    def units(self, n_units: int) -> list[tuple[int, int]]:
        """Consecutive block ranges ``[g0, g1)`` of about equal facts, at most ``n_units`` of them."""
        sizes = np.bincount(self.blocks.home, minlength=self.n_blocks).astype(np.float64)
        n_units = max(1, min(int(n_units), self.n_blocks))
        edges = np.searchsorted(np.cumsum(sizes), np.linspace(0, sizes.sum(), n_units + 1)[1:-1], side="right")
        bounds = [0, *sorted({int(e) for e in edges if 0 < e < self.n_blocks}), self.n_blocks]
        return [(a, b) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]


def plan_blocks(vectors: np.ndarray, threshold: float) -> BlockPlan:
    """Centroids, home blocks, shells and guest cutoffs of the local scan's pruned search."""
    v = np.ascontiguousarray(vectors, dtype=np.float32)
    slack = scan.float32_slack(v.shape[1])
    cut = float(threshold) - slack
    return BlockPlan(v, scan_search.centroid_blocks(v, cut, slack), cut, float(threshold))


def unit_pairs(plan: BlockPlan, g0: int, g1: int) -> UnitResult:
    """Raw candidates of blocks ``g0..g1-1``: each block's shells times their guests (one worker's unit)."""
    found, products = scan_search.range_pairs(plan.vectors, plan.blocks, g0, g1, plan.cut)
    raw = np.concatenate(found) if found else np.zeros((0, 2), dtype=np.int64)
    return raw.astype(np.int64, copy=False), products


def merge_pairs(vectors: np.ndarray, threshold: float, results: Iterable[UnitResult]) -> PairSearch:
    """The units' candidates deduplicated (i < j, sorted) and filtered by the per-pair float32 dot
    product, exactly as :func:`crp_core.analysis.scan.exact_pairs` finishes."""
    v = np.ascontiguousarray(vectors, dtype=np.float32)
    parts: list[np.ndarray] = []
    products = 0
    for raw, n in results:
        parts.append(raw)
        products += int(n)
    return PairSearch(scan.pairs_above(v, parts, threshold), "centroid-pruned", products)


#: runs the units ``[(g0, g1), ...]`` of a plan and yields their results (in any order)
UnitRunner = Callable[[BlockPlan, Sequence[tuple[int, int]]], Iterable[UnitResult]]


def run_in_process(plan: BlockPlan, units: Sequence[tuple[int, int]]) -> Iterable[UnitResult]:
    """The units one after another in this process (the reference runner)."""
    return [unit_pairs(plan, g0, g1) for g0, g1 in units]


def blocked_pairs(
    vectors: np.ndarray, threshold: float, runner: UnitRunner = run_in_process, n_units: int = UNITS_PER_WORKER
) -> PairSearch:
    """Every pair (i, j), i < j, with float32 cosine above ``threshold``, found block unit by block unit
    (``runner`` may run them anywhere): the pair set of ``exact_pairs(vectors, threshold)``."""
    v = np.ascontiguousarray(vectors, dtype=np.float32)
    if v.shape[0] < 2:
        return PairSearch(np.zeros((0, 2), dtype=np.int64), "centroid-pruned", 0)
    plan = plan_blocks(v, threshold)
    return merge_pairs(v, threshold, runner(plan, plan.units(n_units)))
