"""One fan-out branch's retrieval (SPEC-027 §1.3 step 3, docs/reference/pipeline.md §5): the branch's relevance is
the max cosine over its sub-queries, the gate applies, the gated-in pool rows are scored by stage 2
(:func:`crp_core.stages.cdr.score_cdr`) against the branch's coverage object and the best by CDR are
chosen. The per-row values of a run's pool (cosines, coverage score, per-fact columns) are computed
once (:class:`BranchPool`) and read by every branch of both runs (:class:`BranchScorer`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from crp_core.config import CRPConfig
from crp_core.corpus.prepared import Corpus
from crp_core.factors.recency import RecencyTable, row_positions
from crp_core.records import BranchResult, CandidateSet, CDRTable
from crp_core.stages.cdr import FactColumns, cdr_ranking, coverage_scores, fact_columns_of, score_cdr
from crp_core.support.frozen import frozen_array

if TYPE_CHECKING:
    from crp_core.factors.coverage import CoverageView
    from crp_core.factors.ngram import NGram

#: the floor of the per-branch fact budget ``max(3, envelope_fact_budget // branches)`` (docs/reference/pipeline.md §5)
MIN_BRANCH_FACTS = 3


def branch_fact_budget(config: CRPConfig, branches: int) -> int:
    """Facts each branch may choose: ``max(3, envelope_fact_budget // branches)`` (docs/reference/pipeline.md §5)."""
    return max(MIN_BRANCH_FACTS, config.envelope_fact_budget // max(int(branches), 1))


@dataclass(frozen=True, eq=False)
class BranchTrace:
    """What a branch did, beyond :class:`BranchResult`, for the stepper."""

    result: BranchResult
    pool_size: int
    gated_out: int
    chosen: np.ndarray  # positions into result.cdr of result.selected, in rank order
    local_coverage: tuple[str, ...] = ()  # partitioned: the branch's view after its local additions


@dataclass(frozen=True, eq=False)
class BranchPool:
    """A fan-out pool's per-row values, computed once and read by every branch of a run (SPEC-027 §1.3).

    ``cosines[:, j]`` = cos(pool fact, sub-query vector j), one matrix-vector product per sub-query
    (a column does not depend on which other sub-queries are asked); a branch's relevance and residual
    pull are maxima over its columns. ``coverage_score`` = the weighted mean cosine to the Coverage Set
    (every branch scores against the parent's entries: its snapshot in partitioned mode, the shared set
    in naive mode), None when that set is empty. ``columns`` = the pool's
    :func:`~crp_core.stages.cdr.fact_columns_of`."""

    rows: np.ndarray
    cosines: np.ndarray
    coverage_score: np.ndarray | None
    columns: FactColumns
    memo: dict[tuple[int, ...], np.ndarray] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        corpus: Corpus,
        rows: np.ndarray,
        sub_query_vectors: np.ndarray,
        coverage: CoverageView,
        columns: FactColumns,
    ) -> BranchPool:
        vecs = corpus.vectors[rows]
        subs = np.asarray(sub_query_vectors, dtype=np.float32)
        cos = np.empty((rows.size, subs.shape[0]), dtype=np.float32)
        for j in range(subs.shape[0]):
            cos[:, j] = vecs @ subs[j]
        cov = coverage_scores(vecs, coverage) if len(coverage) and rows.size else None
        return cls(rows=rows, cosines=cos, coverage_score=cov, columns=columns)

    @classmethod
    def from_stages(
        cls,
        rows: np.ndarray,
        candidates: CandidateSet,
        cdr: CDRTable,
        residual_ids: Sequence[str],
        vector_ids: Sequence[str],
        coverage: CoverageView,
        blacklist: frozenset[NGram],
    ) -> BranchPool | None:
        """The pool's values read off stages 1-2 of the same run (a pipeline's pool is its candidates
        less the suppressed losers): stage 1's cosines with the residual sub-queries, stage 2's coverage
        score against the same parent Coverage Set and its per-fact columns, so a fact carries one value
        of each in stages 2 and 5. None when some pool row, or some residual sub-query, has none."""
        cosines = candidates.sub_query_cosines
        col = {sid: j for j, sid in enumerate(vector_ids)}
        if cosines is None or not np.array_equal(cdr.idx, candidates.idx) or not all(s in col for s in residual_ids):
            return None
        pos, found = row_positions(cdr.idx, rows)
        if not found.all():
            return None
        # fancy-index gathers: each a new array, C-ordered, in the stage records' dtypes
        cols = np.array([col[s] for s in residual_ids], dtype=np.intp)
        cos = np.asarray(cosines, dtype=np.float32)[np.ix_(pos, cols)]
        cov = cdr.coverage_score[pos] if len(coverage) and rows.size else None
        columns: FactColumns = (
            cdr.recency_factor[pos],
            cdr.importance_weight[pos],
            cdr.ngram_overlap[pos] if blacklist else None,
        )
        return cls(rows=rows, cosines=cos, coverage_score=cov, columns=columns)

    def max_cosine(self, cols: tuple[int, ...]) -> np.ndarray:
        """float64 max over the sub-query columns ``cols`` (memoised per column group)."""
        got = self.memo.get(cols)
        if got is None:
            got = (
                self.cosines[:, list(cols)].max(axis=1).astype(np.float64)
                if self.rows.size and cols
                else np.zeros(self.rows.size, dtype=np.float64)
            )
            self.memo[cols] = got
        return got


@dataclass(frozen=True, eq=False)
class BranchScorer:
    """The branches of one fan-out run scored over one :class:`BranchPool` (the pool's values shared):
    the same recency table, n-gram blacklist, per-branch fact budget and config for every branch."""

    corpus: Corpus
    pool: BranchPool
    recency: RecencyTable
    blacklist: frozenset[NGram]
    budget: int
    config: CRPConfig

    def score(
        self,
        branch: int,
        sub_queries: tuple[str, ...],
        *,
        relevance_cols: tuple[int, ...],
        residual_cols: tuple[int, ...],
        coverage: CoverageView,
        coverage_additions: tuple[str, ...],
    ) -> BranchTrace:
        """One branch: its relevance is the pool's max cosine over ``relevance_cols``, its residual pull
        the max over ``residual_cols`` (SPEC-024 §2.7: 0 with an empty Coverage Set); the gated-in rows
        are scored by stage 2 against ``coverage`` and the best ``budget`` by CDR chosen."""
        pool, config = self.pool, self.config
        relevance_b = pool.max_cosine(relevance_cols)
        passed = relevance_b >= config.cdr_min_relevance
        whole = bool(passed.all())
        cols = pool.columns

        def take(column: np.ndarray) -> np.ndarray:
            return column if whole else column[passed]

        idx = take(pool.rows)
        cov = None if pool.coverage_score is None else take(pool.coverage_score)
        pull = None if cov is None else take(pool.max_cosine(residual_cols))
        cdr = score_cdr(
            self.corpus,
            frozen_array(idx),
            frozen_array(take(relevance_b)),
            coverage=coverage,
            residual_vectors=None,
            blacklist=self.blacklist,
            recency=self.recency,
            config=config,
            fact_columns=(take(cols[0]), take(cols[1]), None if cols[2] is None else take(cols[2])),
            coverage_score=cov,
            residual_pull=pull,
        )
        order = cdr_ranking(cdr)[: max(self.budget, 0)]
        facts = self.corpus.kb.facts
        selected = tuple(facts[r].fact_id for r in cdr.idx[order].tolist())
        result = BranchResult(
            branch=branch, sub_queries=sub_queries, cdr=cdr, selected=selected, coverage_additions=coverage_additions
        )
        return BranchTrace(
            result=result, pool_size=int(pool.rows.size), gated_out=int(pool.rows.size - idx.size), chosen=order
        )


def run_branch(  # noqa: PLR0913  one branch on its own: every input docs/reference/pipeline.md §5 names, keyword-only
    corpus: Corpus,
    *,
    branch: int,
    sub_queries: Sequence[str],
    relevance_vectors: np.ndarray,
    residual_vectors: np.ndarray,
    coverage: CoverageView,
    pool_rows: np.ndarray,
    recency: RecencyTable,
    blacklist: frozenset[NGram],
    budget: int,
    config: CRPConfig,
    coverage_additions: Sequence[str] | None = None,
) -> BranchResult:
    """One branch's retrieval (SPEC-027 §1.3 step 3, docs/reference/pipeline.md §5).

    ``relevance_b`` = max cosine over ``relevance_vectors`` (the branch's sub-queries); the gate
    ``relevance_b >= cdr_min_relevance`` applies; the gated-in pool rows are scored by stage 2 with
    ``coverage`` (a snapshot in partitioned mode, the shared Coverage Set in naive mode) and
    ``residual_vectors``; the best ``budget`` by CDR (ties: lower fact row) are chosen. The per-row
    values are those of the whole pool (:class:`BranchPool`), as ``run_fanout`` shares them.
    """
    rows = np.asarray(pool_rows, dtype=np.int64)
    rel = np.asarray(relevance_vectors, dtype=np.float32).reshape(len(sub_queries), -1)
    res = np.asarray(residual_vectors, dtype=np.float32).reshape(-1, corpus.dim)
    pool = BranchPool.of(
        corpus, rows, np.concatenate([rel, res]), coverage, fact_columns_of(corpus, rows, recency, blacklist, config)
    )
    scorer = BranchScorer(corpus, pool, recency=recency, blacklist=blacklist, budget=budget, config=config)
    return scorer.score(
        branch,
        tuple(sub_queries),
        relevance_cols=tuple(range(rel.shape[0])),
        residual_cols=tuple(range(rel.shape[0], rel.shape[0] + res.shape[0])),
        coverage=coverage,
        coverage_additions=tuple(sub_queries if coverage_additions is None else coverage_additions),
    ).result
