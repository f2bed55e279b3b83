"""The whole-CKF scan restricted to the pairs of a few facts (beyond SPEC-027; docs/decisions/known-conflicts.md).

The known-conflict guard reads only the conflicts whose loser a run selected, and the scan arbitrates each pair
on its own (no pair's ruling reads another's). So the guard does not need the scan of every pair: the pairs
that hold one of the selected facts, found, text-checked and arbitrated exactly as :func:`scan_ckf` does, are
the scan's own pairs of those facts. :func:`rows_scan` computes them:

* **search**: the products of the selected rows with every row, in tiles of ``TILE_ELEMENTS``, at the
  threshold minus the float32 slack, then the one per-pair dot of :func:`pairs_above` (the arithmetic every
  search of the scan ends with), so a pair is kept here exactly when the whole scan keeps it;
* **text check**: the scan's own (:func:`check_ckf`; the verdicts are a pure function of the two texts, in the
  orientation smaller fact id first);
* **arbitration**: :func:`arbitrate_checked`, each pair on its own at ``now`` (recency is a per-fact factor).

Invariant (tests/core/analysis/test_scan_rows.py): ``rows_scan(corpus, config, now, rows).pairs`` equals the
pairs of ``scan_ckf(corpus, config, now).pairs`` that hold a fact of ``rows``, in the same order. Its cost is
``len(rows) x n`` products and the text check of those pairs, not the whole CKF's.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import numpy as np

from crp_core.analysis.scan import (
    CheckedPairs,
    ConflictScan,
    PairSearch,
    ScanSource,
    arbitrate_checked,
    check_ckf,
    float32_slack,
    pairs_above,
)
from crp_core.analysis.scan_search import TILE_ELEMENTS, hits
from crp_core.config import CRPConfig
from crp_core.decisions import Decisions


def rows_pairs(
    vectors: np.ndarray, rows: Sequence[int] | np.ndarray, threshold: float, retrievable: np.ndarray
) -> PairSearch:
    """Every pair ``(i, j)``, i < j, of retrievable rows with one of them in ``rows`` and the float32 cosine
    ``vectors[i] @ vectors[j]`` above ``threshold``: the pairs of :func:`exact_pairs` filtered like
    :func:`search_pairs`, restricted to ``rows``. ``vectors`` is read in place (a memory map stays one)."""
    v = np.asarray(vectors, dtype=np.float32)
    ok = np.asarray(retrievable, dtype=bool)
    sel = np.unique(np.asarray(rows, dtype=np.int64))
    sel = sel[(sel >= 0) & (sel < v.shape[0])]
    sel = sel[ok[sel]]
    n = v.shape[0]
    if sel.size == 0 or n < 2:
        return PairSearch(np.zeros((0, 2), dtype=np.int64), "rows", 0)
    q = np.ascontiguousarray(v[sel])
    cut = float(threshold) - float32_slack(v.shape[1])
    band = max(1, TILE_ELEMENTS // sel.size)
    found: list[np.ndarray] = []
    for start in range(0, n, band):
        j, k = hits(v[start : start + band], q, cut)
        j += start
        i = sel[k]
        keep = (i != j) & ok[j]
        found.append(np.stack([i[keep], j[keep]], axis=1))
    return PairSearch(pairs_above(v, found, threshold), "rows", int(sel.size) * n)


def rows_checked(corpus: ScanSource, config: CRPConfig, rows: Sequence[int] | np.ndarray) -> CheckedPairs:
    """The pair search and the text check of :func:`rows_scan`, what neither ``now`` nor the decisions change:
    :func:`check_ckf` with :func:`rows_pairs` as its searcher."""
    return check_ckf(corpus, config, searcher=lambda v, thr: rows_pairs(v, rows, thr, corpus.retrievable))


def rows_scan(
    corpus: ScanSource,
    config: CRPConfig,
    now: datetime,
    rows: Sequence[int] | np.ndarray,
    decisions: Decisions = None,
) -> ConflictScan:
    """The :class:`ConflictScan` of the pairs that hold a fact of ``rows`` (module docstring): the whole scan's
    pairs of those facts, searched, text-checked and arbitrated the same way; ``counts``, ``n_candidates`` and
    ``k`` describe these pairs only."""
    return arbitrate_checked(rows_checked(corpus, config, rows), corpus, config, now, decisions)
