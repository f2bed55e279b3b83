"""Stage 2: the CDR score (SPEC-024 §2.2, §5.2 + SPEC-027 §3.3; docs/reference/pipeline.md §2).

```
coverage_score   = sum(depth_i * cos(fact, entry_i)) / sum(depth_i)    (0 when the Coverage Set is empty)
coverage_penalty = clamp(coverage_score, 0, coverage_penalty_cap)
novelty          = max(1 - coverage_penalty, min_novelty_floor)
residual_pull    = max(cos(fact, r) for r in ResidualSet)   (0 when the Coverage Set or ResidualSet is empty)
ngram_penalty    = min(ngram_penalty_cap, ngram_step_penalty * overlap)
CDR = importance_weight * max(relevance, residual_pull) * novelty * recency_factor * (1 - ngram_penalty)
```
Vectorised over all candidates: one matrix-vector product for the coverage score (the weighted
mean of cosines equals the dot product with the depth-weighted sum of entries) and one matrix
product for the residual pull.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from crp_core.config import CRPConfig
from crp_core.corpus.prepared import Corpus
from crp_core.factors.ngram import NGram, fact_overlaps
from crp_core.factors.recency import RecencyTable, lookup, resolved_importance
from crp_core.records import CDRTable
from crp_core.support.frozen import freeze_owned, frozen_array
from crp_core.support.memo import WeakMemo

if TYPE_CHECKING:
    from crp_core.factors.coverage import CoverageView

#: below this many residual sub-queries the residual pull is a few matrix-vector products (see residual_pulls)
SMALL_GEMM = 8


def coverage_scores(vectors: np.ndarray, coverage: CoverageView | None) -> np.ndarray:
    """Weighted mean cosine to the Coverage Set entries (SPEC-024 §2.2-2.3); 0 when empty.

    The cosines are float32 products of the float32 unit vectors (as relevance and residual pull are),
    averaged with the depth weights in float64: one matrix-vector product per entry (a Coverage Set
    holds a few), no float64 copy of the facts' vectors."""
    if coverage is None or len(coverage) == 0:
        return np.zeros(vectors.shape[0])
    w = np.asarray(coverage.depth_weights, dtype=np.float64)
    entries = np.asarray(coverage.embeddings, dtype=np.float32).reshape(w.size, -1)
    return _depth_mean(lambda j: vectors @ entries[j], w, vectors.shape[0])


def residual_pulls(
    vectors: np.ndarray, coverage: CoverageView | None, residual_vectors: np.ndarray | None
) -> np.ndarray:
    """max cosine to the ResidualSet; 0 when the Coverage Set or the ResidualSet is empty (SPEC-024 §2.7)."""
    n = vectors.shape[0]
    if coverage is None or len(coverage) == 0 or residual_vectors is None or np.asarray(residual_vectors).size == 0:
        return np.zeros(n)
    r = np.asarray(residual_vectors, dtype=np.float32).reshape(-1, vectors.shape[1])
    if r.shape[0] < SMALL_GEMM:
        # one matrix-vector product per residual sub-query: for a few sub-queries no gemm is needed
        return _max_of([vectors @ row for row in r])
    # one (r, c) product, reduced over its rows (elementwise maxima of contiguous rows, not a max along
    # each short row); inside a run numpy's BLAS has one thread (the pipeline's BLAS guard)
    return (r @ vectors.T).max(axis=0).astype(np.float64)


def factors_from_cosines(
    cosines: np.ndarray, ids: Sequence[str], coverage: CoverageView | None, residual_ids: Sequence[str]
) -> tuple[np.ndarray, np.ndarray] | None:
    """(coverage score, residual pull) read off each fact's cosine with each sub-query (``cosines`` (c, m),
    columns in ``ids`` order: stage 1's product), by the formulas of :func:`coverage_scores` and
    :func:`residual_pulls`; None when the Coverage Set is empty (:func:`score_cdr` then fills them without
    arithmetic) or names a sub-query without a column (the caller computes them from the vectors)."""
    if coverage is None or len(coverage) == 0:
        return None
    col = {sid: j for j, sid in enumerate(ids)}
    if not all(e in col for e in coverage.ids) or not all(r in col for r in residual_ids):
        return None
    return factors_from_columns(cosines, [col[e] for e in coverage.ids], [col[r] for r in residual_ids], coverage)


def factors_from_columns(
    cosines: np.ndarray, entry_cols: Sequence[int], res_cols: Sequence[int], coverage: CoverageView
) -> tuple[np.ndarray, np.ndarray]:
    """(coverage score, residual pull) of each row of ``cosines`` (float32, (n, columns)): the depth-weighted
    mean of the Coverage Set entries' columns ``entry_cols`` (in entry order) and the maximum of the
    residual sub-queries' columns ``res_cols`` (0 without any), the formulas of :func:`coverage_scores`
    and :func:`residual_pulls`. The Coverage Set is not empty."""
    n = cosines.shape[0]
    w = np.asarray(coverage.depth_weights, dtype=np.float64)
    total = float(w.sum())
    if total <= 0.0 or not len(entry_cols):
        cov = np.zeros(n)
    else:
        # the entries' columns as rows (one gather), each times its weight; a reduction over the outer axis of a
        # C-ordered array adds the rows one after another in entry order: _depth_mean's sum, in one call
        weighted = np.ascontiguousarray(cosines[:, list(entry_cols)].T) * w[:, None]
        cov = np.add.reduce(weighted, axis=0)
        cov /= total
    # the maximum is exact in any order: one reduction over the residual columns
    pull = cosines[:, list(res_cols)].max(axis=1).astype(np.float64) if len(res_cols) else np.zeros(n)
    return cov, pull


def _depth_mean(column: Callable[[int], np.ndarray], weights: np.ndarray, n: int) -> np.ndarray:
    """``sum(w_j * column(j)) / sum(w_j)`` in float64 (float32 cosines times float64 weights, summed in
    entry order); 0 when the weights sum to <= 0."""
    total = float(weights.sum())
    if total <= 0.0:
        return np.zeros(n)
    out = column(0) * weights[0]
    for j in range(1, weights.size):
        out += column(j) * weights[j]
    out /= total
    return out


def _max_of(columns: Sequence[np.ndarray]) -> np.ndarray:
    """The elementwise maximum of float32 cosine columns (at least one), widened to float64."""
    out = np.array(columns[0], dtype=np.float32)  # a copy: a column may be a read-only view
    for c in columns[1:]:
        np.maximum(out, c, out=out)
    return out.astype(np.float64)


def score_cdr(  # noqa: PLR0913  stage 2's inputs keyword-only, and the columns a caller already holds
    corpus: Corpus,
    idx: np.ndarray,
    relevance: np.ndarray,
    *,
    coverage: CoverageView | None,
    residual_vectors: np.ndarray | None,
    blacklist: frozenset[NGram],
    recency: RecencyTable,
    config: CRPConfig,
    passed_gate: np.ndarray | None = None,
    fact_columns: FactColumns | None = None,
    coverage_score: np.ndarray | None = None,
    residual_pull: np.ndarray | None = None,
) -> CDRTable:
    """Every factor of the CDR product for the facts ``idx`` (docs/reference/pipeline.md §2).

    ``relevance`` is cos(fact, query) aligned with ``idx``; ``recency`` must cover every row.
    ``passed_gate`` (optional) marks the facts that passed the stage-1 relevance gate; the others
    are scored too (for display) and flagged. ``fact_columns`` = :func:`fact_columns_of` for ``idx`` when
    the caller already has them (fan-out takes its pool's once); ``coverage_score`` / ``residual_pull``
    (float64, aligned with ``idx``) the same for those two factors (read only when the Coverage Set is not
    empty: fan-out takes them over its pool once, stage 3 reuses stage 2's).

    The factors a run leaves at their neutral value (an empty Coverage Set: no coverage penalty and
    no residual pull; an empty blacklist: no n-gram penalty) are filled without arithmetic: the
    same values the formulas give (``x * (1 - 0) == x`` exactly), at a fraction of the calls.
    """
    idx = _int_rows(idx)
    relevance = np.array(relevance, dtype=np.float64).reshape(-1)  # a copy: the record owns it
    n = idx.size
    if coverage is None or len(coverage) == 0:
        cov = freeze_owned(np.zeros(n))  # coverage score, its penalty and the residual pull are all 0
        penalty = pull = cov
        eff = np.maximum(relevance, 0.0)
        novelty = np.full(n, max(1.0 - 0.0, config.min_novelty_floor))
    else:
        if coverage_score is not None and residual_pull is not None:
            cov, pull = coverage_score, residual_pull
        else:
            v = corpus.vectors[idx]
            cov = coverage_scores(v, coverage) if coverage_score is None else coverage_score
            pull = residual_pulls(v, coverage, residual_vectors) if residual_pull is None else residual_pull
        eff = np.maximum(relevance, pull)
        penalty = np.minimum(np.maximum(cov, 0.0), config.coverage_penalty_cap)  # = clip(cov, 0, cap)
        novelty = np.maximum(1.0 - penalty, config.min_novelty_floor)
    rec, imp, given_overlap = (
        fact_columns if fact_columns is not None else fact_columns_of(corpus, idx, recency, blacklist, config)
    )
    score = imp * eff
    score *= novelty
    score *= rec
    if blacklist:
        overlap = (
            given_overlap if given_overlap is not None else fact_overlaps(corpus.kb, idx, blacklist, config.ngram_n)
        )
        ngram_penalty = np.minimum(config.ngram_penalty_cap, config.ngram_step_penalty * overlap)
        score *= 1.0 - ngram_penalty
    else:
        overlap = np.zeros(n, dtype=np.int64)
        ngram_penalty = np.full(n, min(config.ngram_penalty_cap, config.ngram_step_penalty * 0))
    # every column below is made in this call, except the ``fact_columns``, ``coverage_score`` and
    # ``residual_pull`` a caller hands in (fan-out's branches share their pool's): all are only read from
    # here on, so each is set read-only in place
    own = freeze_owned
    return CDRTable(
        idx=own(idx.copy()),
        relevance=own(relevance),
        residual_pull=own(pull),
        effective_relevance=own(eff),
        coverage_score=own(cov),
        coverage_penalty=own(penalty),
        novelty=own(novelty),
        recency_factor=own(rec),
        importance_weight=own(imp),
        ngram_overlap=own(overlap),
        ngram_penalty=own(ngram_penalty),
        cdr_score=own(score),
        passed_gate=None if passed_gate is None else own(np.array(passed_gate, dtype=bool).reshape(-1)),
    )


#: per-fact columns of the CDR product read from per-KB tables, aligned with the scored rows:
#: (recency factor, importance weight, n-gram overlap or None when the blacklist is empty)
FactColumns = tuple[np.ndarray, np.ndarray, "np.ndarray | None"]


def fact_columns_of(
    corpus: Corpus, idx: np.ndarray, recency: RecencyTable, blacklist: frozenset[NGram], config: CRPConfig
) -> FactColumns:
    """The recency factor (from ``recency``), importance weight (SPEC-009 §4.4) and n-gram overlap
    (SPEC-024 §5.2; None for an empty blacklist) of the facts ``idx``: what :func:`score_cdr` reads per
    row, aligned with ``idx`` (``column[mask]`` is the column of ``idx[mask]``)."""
    idx = _int_rows(idx)
    rec = np.asarray(lookup(recency.idx, recency.factor, idx), dtype=np.float64)
    imp = resolved_importance(corpus.kb, idx, config)
    overlap = fact_overlaps(corpus.kb, idx, blacklist, config.ngram_n) if blacklist else None
    return rec, imp, overlap


def _int_rows(idx: np.ndarray) -> np.ndarray:
    """``idx`` as a 1-D int64 array (the same object when it already is one)."""
    if isinstance(idx, np.ndarray) and idx.dtype == np.int64 and idx.ndim == 1:
        return idx
    return np.asarray(idx, dtype=np.int64).reshape(-1)


def cdr_row_positions(cdr: CDRTable, rows: Sequence[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`row_positions` of ``rows`` in ``cdr.idx``: (positions, found). The table's rows in a stable
    ascending order are computed once per table (the table and its arrays are immutable) and
    binary-searched: stages 3, 4 and the headers look rows up in the same stage-2 table."""
    r = np.asarray(rows, dtype=np.int64).reshape(-1)
    got = _IDX_ORDER.get(cdr, None)
    if got is None:
        order = np.argsort(cdr.idx, kind="stable")
        got = _IDX_ORDER.put(cdr, None, (order, cdr.idx[order]))
    order, ascending = got
    if not order.size:
        return np.zeros(r.size, dtype=np.intp), np.zeros(r.size, dtype=bool)
    at = np.searchsorted(ascending, r)
    np.minimum(at, order.size - 1, out=at)
    return order[at], ascending[at] == r


def cdr_positions(cdr: CDRTable, rows: Sequence[int] | np.ndarray) -> np.ndarray:
    """Positions of ``rows`` in the stage-2 table ``cdr`` (the first when a row is there twice); a KeyError
    for a row the table lacks."""
    r = np.asarray(rows, dtype=np.int64).reshape(-1)
    pos, found = cdr_row_positions(cdr, r)
    if not found.all():
        raise KeyError(int(r[np.flatnonzero(~found)[0]]))
    return pos.astype(np.int64, copy=False)


class BackfillPool(Sequence[int]):
    """Stage 4's backfill pool (docs/reference/pipeline.md §4): the gated-in candidates of the stage-2 table
    in CDR order, less the ``selected`` rows and the near-duplicates of anchors stage 3 skipped (the first
    row of each of its ``near_duplicates`` triples). Listed when first read (as an array by
    ``numpy.asarray``): stage 4 reads it only when a loser or a dropped duplicate frees a slot."""

    __slots__ = ("_args", "_rows")

    def __init__(self, cdr: CDRTable, near_duplicates: Sequence[tuple[int, int, float]], selected: np.ndarray) -> None:
        self._args: tuple[CDRTable, Sequence[tuple[int, int, float]], np.ndarray] | None = (
            cdr,
            near_duplicates,
            selected,
        )
        self._rows = np.zeros(0, dtype=np.int64)

    def _get(self) -> np.ndarray:
        if self._args is not None:
            cdr, near_duplicates, selected = self._args
            left_out = {d[0] for d in near_duplicates}
            left_out.update(np.asarray(selected).tolist())
            ranked = cdr.idx[cdr_ranking(cdr, cdr.passed_gate)].tolist()
            self._rows = frozen_array(np.array([r for r in ranked if r not in left_out], dtype=np.int64))
            self._args = None
        return self._rows

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        rows = self._get()
        return rows if dtype is None else rows.astype(dtype, copy=False)

    def __len__(self) -> int:
        return int(self._get().size)

    @overload
    def __getitem__(self, i: int) -> int: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[int]: ...

    def __getitem__(self, i: int | slice) -> int | Sequence[int]:
        got = self._get()[i]
        return got.tolist() if isinstance(i, slice) else int(got)


def cdr_ranking(cdr: CDRTable, mask: np.ndarray | None = None) -> np.ndarray:
    """Positions into ``cdr`` ranked by CDR score descending, ties by fact row (deterministic).

    ``mask`` (bool, aligned) restricts the ranking, e.g. to the gated-in facts. The ranking by the
    table's own ``passed_gate`` (stages 3 and 4 both read it) is computed once per table (the table
    and its arrays are immutable) and handed out read-only.
    """
    gated = mask is not None and mask is cdr.passed_gate
    if gated:
        got = _GATED_RANKING.get(cdr, None)
        if got is not None:
            return got
    pos = np.arange(cdr.idx.size) if mask is None else np.flatnonzero(mask)
    order = np.lexsort((cdr.idx[pos], -cdr.cdr_score[pos]))
    ranked = pos[order]
    if gated:
        ranked = frozen_array(ranked)
        _GATED_RANKING.put(cdr, None, ranked)
    return ranked


_GATED_RANKING: WeakMemo[CDRTable, None, np.ndarray] = WeakMemo(1)
#: per table: its rows' stable ascending order and the rows in that order (:func:`cdr_row_positions`)
_IDX_ORDER: WeakMemo[CDRTable, None, tuple[np.ndarray, np.ndarray]] = WeakMemo(1)
