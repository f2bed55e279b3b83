"""The centroid-pruned pair search's guests, groups and threads (crp_core.analysis.scan_search)."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crp_core.analysis import scan_search
from crp_core.analysis.scan import float32_slack, pairs_above
from crp_core.analysis.scan_search import block_groups, centroid_blocks, group_guests, pruned_pairs

#: float64 against float32 cosines of unit vectors of at most 48 dimensions
ROUNDING = 1e-5


def clustered(seed: int, n: int, dim: int, n_clusters: int, spread: float) -> np.ndarray:
    """Unit float32 vectors around random unit centres (``spread``: the noise's norm relative to a centre)."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(n_clusters, dim))
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    v = centres[rng.integers(0, n_clusters, n)] + spread * rng.normal(size=(n, dim)) / np.sqrt(dim)
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(2, 120),
    n_clusters=st.integers(1, 5),
    spread=st.sampled_from([0.1, 0.5, 2.0]),
    cut=st.floats(0.0, 0.95),
    group=st.integers(1, 7),
    tile=st.sampled_from([8, 64, 1 << 24]),
)
def test_group_guests_are_every_later_row_above_the_loosest_cutoff_most_similar_first(
    seed: int, n: int, n_clusters: int, spread: float, cut: float, group: int, tile: int
) -> None:
    v = clustered(seed, n, 16, n_clusters, spread)
    with mock.patch.multiple(scan_search, FACTS_PER_CENTROID=4, SHELL_ROWS=3, TILE_ELEMENTS=tile):
        blocks = centroid_blocks(v, cut, float32_slack(16))
        n_blocks = blocks.centroids.shape[0]
        got = [g for a in range(0, n_blocks, group) for g in group_guests(v, blocks, a, min(n_blocks, a + group))]
    assert [b for b, _, _ in got] == list(range(n_blocks))
    cos = v.astype(np.float64) @ blocks.centroids.astype(np.float64).T  # (rows, blocks)
    for block, rows, desc in got:
        shells = blocks.shells_of(block)
        loosest = blocks.cutoffs[shells[-1]] if shells else np.inf
        later = blocks.home >= block
        sure = set(np.flatnonzero(later & (cos[:, block] > loosest + ROUNDING)).tolist())
        maybe = set(np.flatnonzero(later & (cos[:, block] > loosest - ROUNDING)).tolist())
        assert sure <= set(rows.tolist()) <= maybe and len(set(rows.tolist())) == rows.size
        assert np.allclose(desc, -cos[rows, block], atol=ROUNDING)
        assert list(zip(desc.tolist(), rows.tolist())) == sorted(zip(desc.tolist(), rows.tolist()))


@pytest.mark.parametrize("n_blocks,threads", [(1, 2), (7, 1), (500, 2), (4096, 2), (4096, 8)])
def test_block_groups_cover_the_blocks_in_order_in_bounded_groups(n_blocks: int, threads: int) -> None:
    groups = block_groups(n_blocks, threads)
    assert groups[0][0] == 0 and groups[-1][1] == n_blocks
    assert all(a[1] == b[0] for a, b in zip(groups[:-1], groups[1:]))
    assert all(0 < g1 - g0 <= scan_search.GROUP_BLOCKS for g0, g1 in groups)
    assert len(groups) >= min(n_blocks, scan_search.GROUPS_PER_THREAD * threads)


def test_threads_and_groups_find_the_same_candidates_and_products() -> None:
    v = clustered(5, 3000, 48, 15, 0.6)
    slack = float32_slack(48)
    cut = 0.85 - slack
    blocks = centroid_blocks(v, cut, slack)
    one_raw, one_products = pruned_pairs(v, blocks, cut, 1)
    with mock.patch.object(scan_search, "GROUP_BLOCKS", 2):
        two_raw, two_products = pruned_pairs(v, blocks, cut, 2)
    assert one_products == two_products > 0
    one = pairs_above(v, one_raw, 0.85)
    assert one.shape[0] > 100 and np.array_equal(one, pairs_above(v, two_raw, 0.85))
