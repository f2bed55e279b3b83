"""Stage 5: parallel coverage isolation for fan-out (SPEC-027 §1, SPEC_NOTES §2.7).

Two runs over the same branches, so the dashboard can put the race next to its fix:

* **partitioned** (SPEC-027 §1.3): the ResidualSet is split into disjoint partitions
  (:func:`partition_residual_for_fanout`, §1.4); each branch gets a read-only
  :class:`~crp_core.factors.coverage.CoverageSnapshot` of the parent Coverage Set (§1.5) and retrieves facts
  relevant to *its own* partition only; branch coverage additions are merged at fan-in and one
  cross-branch dedup pass runs (§1.6, SPEC-005 §9.2: cosine > ``fanin_dedup_similarity``).
* **naive** (the race of SPEC-027 §1.1): the same number of branches, sub-queries dealt round-robin
  for relevance, but residual pull over the whole ResidualSet and novelty against the one shared
  Coverage Set read at dispatch (T0); duplicates are counted the same way.

Branch scoring reuses stage 2 (:func:`crp_core.stages.cdr.score_cdr`): only the relevance vector (max cosine
over the branch's sub-queries), the residual vectors and the coverage object change.
Decisions where the spec is silent: ``docs/decisions/fanout.md``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from crp_core.config import CRPConfig
from crp_core.corpus.prepared import Corpus, ScenarioVectors
from crp_core.factors.recency import RecencyTable
from crp_core.records import BranchResult, CandidateSet, CDRTable, Duplicate, FanoutResult, FanoutRun, FanoutStep
from crp_core.stages.partitions import (
    RULE_KMEANS,
    RULE_ONE_EACH,
    RULE_SINGLE,
    fanout_active,
    partition_residual_for_fanout,
    partition_rule,
)
from crp_core.support.frozen import frozen_array

if TYPE_CHECKING:
    from crp_core.factors.coverage import CoverageSet, CoverageSnapshot, CoverageView
    from crp_core.factors.ngram import NGram
    from crp_core.model import Scenario
    from crp_core.stages.cdr import FactColumns

__all__ = [
    "MIN_BRANCH_FACTS",
    "RULE_ONE_EACH",
    "RULE_KMEANS",
    "RULE_SINGLE",
    "RULE_ROUND_ROBIN",
    "fanout_active",
    "partition_rule",
    "partition_residual_for_fanout",
    "round_robin_partitions",
    "branch_fact_budget",
    "run_branch",
    "cross_branch_dedup",
    "run_fanout",
]

#: the floor of the per-branch fact budget ``max(3, envelope_fact_budget // branches)`` (SPEC_NOTES §2.7)
MIN_BRANCH_FACTS = 3
RULE_ROUND_ROBIN = "round-robin"  # the naive run's assignment (SPEC_NOTES §2.7)

#: ``branch_probe(branch, snapshot)``: sees the Coverage Set snapshot a partitioned branch scores against
BranchProbe = Callable[[int, "CoverageSnapshot"], None]
#: a lane of the stepper's timeline: "parent", ("branch", b) or "shared"
_Lane = str | tuple[str, int]


# ---- partitions (SPEC-027 §1.4): crp_core.stages.partitions; the naive run's assignment ---------
def round_robin_partitions(residual_ids: Sequence[str], branches: int) -> tuple[tuple[str, ...], ...]:
    """The naive run's assignment: branch i gets sub-queries i, i+N, i+2N, ... (SPEC_NOTES §2.7)."""
    ids = tuple(residual_ids)
    n = max(int(branches), 1)
    return tuple(ids[i::n] for i in range(min(n, len(ids))))


def branch_fact_budget(config: CRPConfig, branches: int) -> int:
    """Facts each branch may choose: ``max(3, envelope_fact_budget // branches)`` (SPEC_NOTES §2.7)."""
    return max(MIN_BRANCH_FACTS, config.envelope_fact_budget // max(int(branches), 1))


# ---- one branch ---------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class _BranchTrace:
    """What a branch did, beyond :class:`BranchResult`, for the stepper."""

    result: BranchResult
    pool_size: int
    gated_out: int
    chosen: np.ndarray  # positions into result.cdr of result.selected, in rank order
    local_coverage: tuple[str, ...] = ()  # partitioned: the branch's view after its local additions


def run_branch(
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
    """One branch's retrieval (SPEC-027 §1.3 step 3, SPEC_NOTES §2.7).

    ``relevance_b`` = max cosine over ``relevance_vectors`` (the branch's sub-queries); the gate
    ``relevance_b >= cdr_min_relevance`` applies; the gated-in pool rows are scored by stage 2 with
    ``coverage`` (a snapshot in partitioned mode, the shared Coverage Set in naive mode) and
    ``residual_vectors``; the best ``budget`` by CDR (ties: lower fact row) are chosen. The per-row
    values are those of the whole pool (:class:`_Pool`), as :func:`run_fanout` shares them.
    """
    from crp_core.stages.cdr import fact_columns_of

    rows = np.asarray(pool_rows, dtype=np.int64)
    rel = np.asarray(relevance_vectors, dtype=np.float32).reshape(len(sub_queries), -1)
    res = np.asarray(residual_vectors, dtype=np.float32).reshape(-1, corpus.dim)
    pool = _Pool.of(
        corpus, rows, np.concatenate([rel, res]), coverage, fact_columns_of(corpus, rows, recency, blacklist, config)
    )
    return _run_branch(
        corpus,
        pool,
        branch=branch,
        sub_queries=tuple(sub_queries),
        relevance_cols=tuple(range(rel.shape[0])),
        residual_cols=tuple(range(rel.shape[0], rel.shape[0] + res.shape[0])),
        coverage=coverage,
        recency=recency,
        blacklist=blacklist,
        budget=budget,
        config=config,
        coverage_additions=tuple(sub_queries if coverage_additions is None else coverage_additions),
    ).result


@dataclass(frozen=True, eq=False)
class _Pool:
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
    ) -> _Pool:
        from crp_core.stages.cdr import coverage_scores

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
    ) -> _Pool | None:
        """The pool's values read off stages 1-2 of the same run (a pipeline's pool is its candidates
        less the suppressed losers): stage 1's cosines with the residual sub-queries, stage 2's coverage
        score against the same parent Coverage Set and its per-fact columns, so a fact carries one value
        of each in stages 2 and 5. None when some pool row, or some residual sub-query, has none."""
        from crp_core.factors.recency import row_positions

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


def _run_branch(
    corpus: Corpus,
    pool: _Pool,
    *,
    branch: int,
    sub_queries: tuple[str, ...],
    relevance_cols: tuple[int, ...],
    residual_cols: tuple[int, ...],
    coverage: CoverageView,
    recency: RecencyTable,
    blacklist: frozenset[NGram],
    budget: int,
    config: CRPConfig,
    coverage_additions: tuple[str, ...],
) -> _BranchTrace:
    """:func:`run_branch` over a :class:`_Pool`: the branch's relevance is the max over ``relevance_cols``,
    its residual pull the max over ``residual_cols`` (SPEC-024 §2.7: 0 with an empty Coverage Set)."""
    from crp_core.stages.cdr import cdr_ranking, score_cdr

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
        corpus,
        frozen_array(idx),
        frozen_array(take(relevance_b)),
        coverage=coverage,
        residual_vectors=None,
        blacklist=blacklist,
        recency=recency,
        config=config,
        fact_columns=(take(cols[0]), take(cols[1]), None if cols[2] is None else take(cols[2])),
        coverage_score=cov,
        residual_pull=pull,
    )
    order = cdr_ranking(cdr)[: max(budget, 0)]
    facts = corpus.kb.facts
    selected = tuple(facts[r].fact_id for r in cdr.idx[order].tolist())
    result = BranchResult(
        branch=branch, sub_queries=sub_queries, cdr=cdr, selected=selected, coverage_additions=coverage_additions
    )
    return _BranchTrace(
        result=result, pool_size=int(pool.rows.size), gated_out=int(pool.rows.size - idx.size), chosen=order
    )


# ---- fan-in dedup (SPEC-027 §1.6, SPEC-005 §9.2) -----------------------------------------------
def cross_branch_dedup(
    corpus: Corpus, branches: Sequence[BranchResult], config: CRPConfig
) -> tuple[tuple[Duplicate, ...], tuple[str, ...]]:
    """Cross-branch duplicates and the fan-in union with each duplicate kept once.

    A duplicate is the same fact chosen by two or more branches (``similarity`` 1.0), or two distinct
    chosen facts, chosen by different branches, with cosine > ``fanin_dedup_similarity``. The union
    keeps, among facts linked by a cross-branch duplicate, the one with the best branch CDR score
    (ties: first chosen, in branch then rank order); ``merged`` lists the kept facts in branch then
    rank order.
    """
    facts = corpus.kb.facts
    scores = []
    for b in branches:  # a chosen fact missing from the branch's table scores -inf
        score_of = {facts[int(r)].fact_id: float(s) for r, s in zip(b.cdr.idx, b.cdr.cdr_score)}
        scores.append([score_of.get(fid, float("-inf")) for fid in b.selected])
    return _dedup(corpus, branches, scores, config)


def _dedup(
    corpus: Corpus, branches: Sequence[BranchResult], scores: Sequence[Sequence[float]], config: CRPConfig
) -> tuple[tuple[Duplicate, ...], tuple[str, ...]]:
    """:func:`cross_branch_dedup` given each branch's CDR score per chosen fact (``scores[b][i]`` for
    ``branches[b].selected[i]``)."""
    chose: dict[str, set[int]] = {}  # insertion order: branch then rank order
    best: dict[str, float] = {}
    for b, b_scores in zip(branches, scores):
        for fid, s in zip(b.selected, b_scores):
            if fid not in chose:
                chose[fid] = set()
                best[fid] = float("-inf")
            chose[fid].add(b.branch)
            best[fid] = max(best[fid], s)
    order_ids = list(chose)
    u = len(order_ids)
    duplicates: list[Duplicate] = [
        Duplicate(fact_ids=(fid,), branches=tuple(sorted(chose[fid])), similarity=1.0)
        for fid in order_ids
        if len(chose[fid]) > 1
    ]
    if u == 0:
        return (), ()
    rows = np.array([corpus.kb.index_of(f) for f in order_ids], dtype=np.int64)
    vecs = np.asarray(corpus.vectors[rows], dtype=np.float64)
    sims = vecs @ vecs.T
    ii, jj = np.nonzero(sims > config.fanin_dedup_similarity)  # row-major: the upper triangle's order
    upper = ii < jj
    linked = np.zeros((u, u), dtype=bool)
    for i, j in zip(ii[upper].tolist(), jj[upper].tolist()):
        bi, bj = chose[order_ids[i]], chose[order_ids[j]]
        if bi == bj and len(bi) == 1:
            continue  # both chosen by the same single branch: not a cross-branch duplicate
        linked[i, j] = linked[j, i] = True
        duplicates.append(
            Duplicate(
                fact_ids=(order_ids[i], order_ids[j]), branches=tuple(sorted(bi | bj)), similarity=float(sims[i, j])
            )
        )
    if not linked.any():  # nothing linked: every chosen fact is kept
        return tuple(duplicates), tuple(order_ids)
    kept = np.zeros(u, dtype=bool)
    for i in sorted(range(u), key=lambda k: (-best[order_ids[k]], k)):
        if not (linked[i] & kept).any():
            kept[i] = True
    merged = tuple(order_ids[i] for i in range(u) if kept[i])
    return tuple(duplicates), merged


# ---- the two runs ---------------------------------------------------------------------------------
def run_fanout(
    corpus: Corpus,
    scenario: Scenario,
    vectors: ScenarioVectors,
    pool_rows: npt.ArrayLike,
    recency: RecencyTable,
    blacklist: frozenset[NGram],
    config: CRPConfig,
    width: int | None = None,
    *,
    now: datetime | None = None,
    branch_probe: BranchProbe | None = None,
    candidates: CandidateSet | None = None,
    cdr: CDRTable | None = None,
) -> FanoutResult | None:
    """Stage 5 (SPEC-027 §1, SPEC_NOTES §2.7): partitioned and naive fan-out plus their timelines.

    ``pool_rows``: stage-1 candidate rows (before the gate) minus suppressed contradiction losers;
    non-retrievable rows are dropped here as well. ``recency`` should cover the pool; rows it lacks are
    computed with ``now`` (default ``scenario.now``). ``width`` defaults to ``scenario.fanout_width``.
    Returns ``None`` when fan-out is inactive (width <= 1 or empty ResidualSet).
    ``branch_probe(branch, coverage)`` is called inside each partitioned branch with exactly the
    coverage object the branch scores against (the read-only snapshot) - an instrumentation hook.
    ``candidates`` and ``cdr`` (stage 1's CandidateSet and stage 2's table of the same run, the pool among
    their rows): the pool's cosines, coverage scores and per-fact columns are read off them
    (:meth:`_Pool.from_stages`) instead of computed again; the same formulas, float32 products rounded
    as stage 1's one product rounds them.
    """
    from crp_core.factors.coverage import CoverageSnapshot

    w = int(scenario.fanout_width if width is None else width)
    residual_ids = tuple(sq.id for sq in scenario.residual_set)
    if not fanout_active(w, len(residual_ids)):
        return None
    vec_of = _sub_query_vectors(vectors)
    residual_vecs = np.stack([vec_of[s] for s in residual_ids]).astype(np.float32)
    pool = _clean_pool(corpus, pool_rows)
    parent = _parent_coverage(scenario, vectors)
    parent_ids = tuple(parent.ids)

    partitions = partition_residual_for_fanout(residual_ids, residual_vecs, w, config, cache_dir=corpus.cache_dir)
    rule = partition_rule(len(residual_ids), w)
    n_branches = len(partitions)
    budget = branch_fact_budget(config, n_branches)
    # shared by the 2 x branches scorings: the pool's cosines to every residual sub-query, its coverage
    # score against the parent's entries and its per-fact columns
    shared = (
        None
        if candidates is None or cdr is None
        else _Pool.from_stages(pool, candidates, cdr, residual_ids, vectors.ids, parent, blacklist)
    )
    if shared is None:
        recency, columns = _pool_columns(
            corpus, recency, pool, blacklist, now if now is not None else scenario.now, config
        )
        shared = _Pool.of(corpus, pool, residual_vecs, parent, columns)
    position = {sid: j for j, sid in enumerate(residual_ids)}
    score_branch = functools.partial(
        _run_branch, corpus, shared, recency=recency, blacklist=blacklist, budget=budget, config=config
    )

    # partitioned: snapshot + own partition only (SPEC-027 §1.3 step 3)
    traces: list[_BranchTrace] = []
    snapshots: list[CoverageSnapshot] = []
    for b, part in enumerate(partitions):
        snapshot = CoverageSnapshot(parent)
        snapshots.append(snapshot)
        if branch_probe is not None:
            branch_probe(b, snapshot)
        own = tuple(position[s] for s in part)
        trace = score_branch(
            branch=b,
            sub_queries=part,
            relevance_cols=own,
            residual_cols=own,
            coverage=snapshot,
            coverage_additions=part,
        )
        # local additions (one entry per partition sub-query) extend the snapshot's set for this branch
        # alone: its view is the snapshot's ids followed by its partition's
        traces.append(replace(trace, local_coverage=parent_ids + part))
    merged_ids = _merged_ids(parent_ids, partitions)  # fan-in: union of the branch additions (SPEC-027 §1.6)
    p_branches = tuple(t.result for t in traces)
    p_dups, p_merged = _dedup(corpus, p_branches, [t.result.cdr.cdr_score[t.chosen].tolist() for t in traces], config)
    partitioned = FanoutRun(
        mode="partitioned",
        partitions=partitions,
        branches=p_branches,
        duplicates=p_dups,
        merged=p_merged,
        coverage_depth=len(merged_ids),
    )

    # naive: round-robin relevance, whole-ResidualSet residual pull, shared coverage read at T0
    rr = round_robin_partitions(residual_ids, n_branches)
    every = tuple(range(len(residual_ids)))
    n_traces = [
        score_branch(
            branch=b,
            sub_queries=subs,
            relevance_cols=tuple(position[s] for s in subs),
            residual_cols=every,
            coverage=parent,
            coverage_additions=subs,
        )
        for b, subs in enumerate(rr)
    ]
    # T2: every branch writes into the one shared Coverage Set
    shared_ids = _merged_ids(parent_ids, [t.result.coverage_additions for t in n_traces])
    n_branches_r = tuple(t.result for t in n_traces)
    n_dups, n_merged = _dedup(
        corpus, n_branches_r, [t.result.cdr.cdr_score[t.chosen].tolist() for t in n_traces], config
    )
    naive = FanoutRun(
        mode="naive",
        partitions=rr,
        branches=n_branches_r,
        duplicates=n_dups,
        merged=n_merged,
        coverage_depth=len(shared_ids),
    )

    steps = _partitioned_steps(
        parent_ids, residual_ids, partitions, rule, w, budget, traces, partitioned, merged_ids, snapshots
    )
    naive_steps = _naive_steps(parent_ids, residual_ids, rr, budget, n_traces, naive)
    return FanoutResult(width=w, rule=rule, partitioned=partitioned, naive=naive, steps=steps, naive_steps=naive_steps)


# ---- helpers: coverage and inputs ------------------------------------------------------------------
def _sub_query_vectors(vectors: ScenarioVectors) -> dict[str, np.ndarray]:
    subs = np.asarray(vectors.sub_queries, dtype=np.float32)
    return {sid: subs[i] for i, sid in enumerate(vectors.ids)}


def _clean_pool(corpus: Corpus, pool_rows: npt.ArrayLike) -> np.ndarray:
    """Unique, sorted, retrievable rows (DELETED/QUARANTINED never retrieved, SPEC-009 §2.2)."""
    pool = np.sort(np.asarray(pool_rows, dtype=np.int64).ravel())
    if pool.size > 1:
        pool = pool[np.concatenate(([True], pool[1:] != pool[:-1]))]
    return pool[corpus.retrievable[pool]] if pool.size else pool


def _parent_coverage(scenario: Scenario, vectors: ScenarioVectors) -> CoverageSet:
    """The parent Coverage Set: one entry per addressed sub-query (SPEC_NOTES §1.2)."""
    from crp_core.factors.coverage import CoverageSet

    subs = np.asarray(vectors.sub_queries, dtype=np.float32)
    dim = subs.shape[1] if subs.ndim == 2 else int(np.asarray(vectors.query).shape[0])
    return CoverageSet.from_scenario(scenario, subs, tuple(vectors.ids), dim=dim)


def _merged_ids(parent_ids: tuple[str, ...], additions: Sequence[Sequence[str]]) -> tuple[str, ...]:
    """The parent Coverage Set's ids extended by each branch's additions in turn, an id already present
    not added again (the entries are depth ``branch_depth_weight``; only the ids are reported)."""
    ids = list(parent_ids)
    for batch in additions:
        seen = set(ids)
        ids.extend(s for s in batch if s not in seen)
    return tuple(ids)


def _pool_columns(
    corpus: Corpus,
    recency: RecencyTable,
    pool: np.ndarray,
    blacklist: frozenset[NGram],
    now: datetime | None,
    config: CRPConfig,
) -> tuple[RecencyTable, FactColumns]:
    """The pool's :func:`~crp_core.stages.cdr.fact_columns_of` (recency factor, importance, n-gram overlap),
    taken once for every branch, and ``recency`` extended with the pool rows it lacks (computed by
    stage 2's recency, SPEC-027 §3.2)."""
    from crp_core.factors.recency import compute_recency, concat_recency
    from crp_core.stages.cdr import fact_columns_of

    try:  # the lookup raises when a pool row is missing from the table
        return recency, fact_columns_of(corpus, pool, recency, blacklist, config)
    except KeyError:
        if now is None:
            raise ValueError("run_fanout: the recency table lacks some pool rows and no 'now' was given") from None
    missing = np.setdiff1d(pool, np.asarray(recency.idx, dtype=np.int64))
    recency = concat_recency(recency, compute_recency(corpus.kb, frozen_array(missing), now, config))
    return recency, fact_columns_of(corpus, pool, recency, blacklist, config)


# ---- step states for the stepper ---------------------------------------------------------------------
class _Timeline:
    """Builds :class:`FanoutStep` records; ``added`` = coverage minus the previous step of the same lane.

    Lanes: the parent (``branch=None``) and one per branch; a branch lane forks from the parent lane,
    so its first step is compared with the parent's latest step. ``lane_of`` maps a step's branch to
    its lane (the naive run has one shared lane: every step is compared with the step before it).
    """

    def __init__(self, lane_of: Callable[[int | None], _Lane]):
        self.steps: list[FanoutStep] = []
        self.lane_of = lane_of
        self.last: dict[_Lane, tuple[int, tuple[str, ...]]] = {}

    def add(
        self,
        kind: str,
        title: str,
        branch: int | None,
        coverage: Sequence[str],
        facts: Sequence[str] = (),
        **detail: Any,
    ) -> None:
        lane = self.lane_of(branch)
        parent_lane = self.lane_of(None)
        prev_index, prev_cov = self.last.get(lane, self.last.get(parent_lane, (None, ())))
        seen = set(prev_cov)
        cov = tuple(coverage)
        added = tuple(c for c in cov if c not in seen)
        detail["since_step"] = prev_index
        index = len(self.steps)
        self.steps.append(
            FanoutStep(
                index=index,
                kind=kind,
                title=title,
                branch=branch,
                coverage=cov,
                added=added,
                facts=tuple(facts),
                detail=detail,
            )
        )
        self.last[lane] = (index, cov)


def _fact_scores(trace: _BranchTrace) -> list[dict[str, Any]]:
    cdr: CDRTable = trace.result.cdr
    p = trace.chosen
    return [
        {
            "fact_id": fid,
            "relevance": rel,
            "residual_pull": pull,
            "novelty": nov,
            "recency_factor": rec,
            "cdr_score": score,
        }
        for fid, rel, pull, nov, rec, score in zip(
            trace.result.selected,
            cdr.relevance[p].tolist(),
            cdr.residual_pull[p].tolist(),
            cdr.novelty[p].tolist(),
            cdr.recency_factor[p].tolist(),
            cdr.cdr_score[p].tolist(),
        )
    ]


def _dup_detail(dups: Sequence[Duplicate]) -> list[dict[str, Any]]:
    return [
        {"fact_ids": list(d.fact_ids), "branches": list(d.branches), "similarity": float(d.similarity)} for d in dups
    ]


def _chosen_by_several(results: Sequence[BranchResult]) -> dict[str, list[int]]:
    by: dict[str, list[int]] = {}
    for r in results:
        for fid in r.selected:
            by.setdefault(fid, []).append(r.branch)
    return {fid: bs for fid, bs in by.items() if len(bs) > 1}


def _partitioned_steps(
    parent_ids: tuple[str, ...],
    residual_ids: tuple[str, ...],
    partitions: tuple[tuple[str, ...], ...],
    rule: str,
    width: int,
    budget: int,
    traces: Sequence[_BranchTrace],
    run: FanoutRun,
    merged_cov: tuple[str, ...],
    snapshots: Sequence[CoverageSnapshot],
) -> tuple[FanoutStep, ...]:
    tl = _Timeline(lambda b: ("branch", b) if b is not None else "parent")
    tl.add(
        "parent",
        "T0: parent Coverage Set (addressed sub-queries)",
        None,
        parent_ids,
        residual_set=list(residual_ids),
        addressed=list(parent_ids),
    )
    tl.add(
        "partition",
        f"ResidualSet split into {len(partitions)} disjoint partitions ({rule})",
        None,
        parent_ids,
        partitions=[list(p) for p in partitions],
        rule=rule,
        width=width,
        branch_fact_budget=budget,
    )
    for t, snap in zip(traces, snapshots):
        b = t.result.branch
        tl.add(
            "snapshot",
            f"Branch {b}: read-only snapshot of the Coverage Set",
            b,
            tuple(snap.ids),
            partition=list(t.result.sub_queries),
            read_only=True,
            snapshot_type=type(snap).__name__,
        )
    for t in traces:
        r = t.result
        tl.add(
            "retrieval",
            f"Branch {r.branch}: retrieves for its own partition only",
            r.branch,
            parent_ids,
            r.selected,
            partition=list(r.sub_queries),
            pool=t.pool_size,
            gated_out=t.gated_out,
            scored=int(np.asarray(r.cdr.idx).size),
            budget=budget,
            scores=_fact_scores(t),
        )
    for t in traces:
        r = t.result
        tl.add(
            "additions",
            f"Branch {r.branch}: local coverage additions (not visible to other branches)",
            r.branch,
            t.local_coverage,
            additions=list(r.coverage_additions),
        )
    union: list[str] = []
    for r in run.branches:
        union.extend(f for f in r.selected if f not in union)
    tl.add(
        "merge",
        "Fan-in: union of branch additions into the parent Coverage Set",
        None,
        merged_cov,
        union,
        coverage_depth=run.coverage_depth,
        branch_additions={str(r.branch): list(r.coverage_additions) for r in run.branches},
    )
    tl.add(
        "dedup",
        f"Cross-branch dedup: {len(run.duplicates)} duplicate(s)",
        None,
        merged_cov,
        run.merged,
        duplicates=_dup_detail(run.duplicates),
        dropped=[f for f in union if f not in run.merged],
    )
    return tuple(tl.steps)


def _naive_steps(
    parent_ids: tuple[str, ...],
    residual_ids: tuple[str, ...],
    rr: tuple[tuple[str, ...], ...],
    budget: int,
    traces: Sequence[_BranchTrace],
    run: FanoutRun,
) -> tuple[FanoutStep, ...]:
    tl = _Timeline(lambda b: "shared")
    tl.add(
        "parent",
        f"T0: shared Coverage Set = {{{', '.join(parent_ids)}}}",
        None,
        parent_ids,
        time="T0",
        residual_set=list(residual_ids),
        assignment=[list(p) for p in rr],
        rule=RULE_ROUND_ROBIN,
        branch_fact_budget=budget,
    )
    several = _chosen_by_several(run.branches)
    for t in traces:
        r = t.result
        tl.add(
            "retrieval",
            f"T1: branch {r.branch} reads the shared Coverage Set and retrieves",
            r.branch,
            parent_ids,
            r.selected,
            time="T1",
            sub_queries=list(r.sub_queries),
            pool=t.pool_size,
            gated_out=t.gated_out,
            scored=int(np.asarray(r.cdr.idx).size),
            budget=budget,
            scores=_fact_scores(t),
            chosen_by_other_branches={f: [x for x in several[f] if x != r.branch] for f in r.selected if f in several},
        )
    shared = list(parent_ids)
    for t in traces:
        r = t.result
        shared.extend(s for s in r.coverage_additions if s not in shared)
        tl.add(
            "additions",
            f"T2: branch {r.branch} writes into the shared Coverage Set",
            r.branch,
            tuple(shared),
            r.selected,
            time="T2",
            additions=list(r.coverage_additions),
        )
    tl.add(
        "dedup",
        f"Result: {len(run.duplicates)} duplicate(s) across branches",
        None,
        tuple(shared),
        run.merged,
        time="Result",
        duplicates=_dup_detail(run.duplicates),
        coverage_depth=run.coverage_depth,
    )
    return tuple(tl.steps)
