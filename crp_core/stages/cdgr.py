"""Stage 3: coverage-differential graph retrieval, CDGR (SPEC-025 §2; docs/reference/pipeline.md §3).

Phase A (seed): anchors = the top ``config.anchor_budget`` gated-in candidates by CDR, skipping a
candidate whose cosine with an already chosen anchor exceeds ``dedup_similarity`` (SPEC-003 §6.6)
unless the pair value-conflicts (then both stay and stage 4 arbitrates).
Phase B (expand): connector candidates = retrievable facts within ``max_hops`` of an anchor, not
anchors. Phase C (bridge): touched anchors = anchors at graph distance 1 or 2;
``bridge_value = (touched-anchor pairs with no direct edge) * mean_path_weight`` where
``mean_path_weight`` pools the edges of the connector's strongest shortest path to each touched
anchor (shortest in hops; among those, the one with the highest total weight).
``connector_score = bridge_value * novelty * recency_factor * max(relevance, min_connector_relevance)``
(SPEC-027 §3.3). Connectors with bridge value 0 are dropped, and so is a connector candidate that
is a near-duplicate of an anchor (cosine > ``dedup_similarity``, SPEC-003 §6.6) with no value conflict
with it (docs/reference/pipeline.md §6: before the connectors are chosen, so the next candidate takes the slot);
the best fill the connector slots (``envelope_fact_budget - anchor_budget``); unused slots go to the
next CDR candidates (``extra_anchors``). With graph retrieval off, anchors take the whole budget.

The walk over the similarity graph, the bridge values and the edge listing are
:mod:`crp_core.stages.graph_walk` (it touches only the anchors' 2-hop neighbourhood, never the whole
matrix). What the walk gives depends on the graph and the anchors alone: the graph keeps it for its last
few anchor sets, so a rerun with the same anchors does not walk again. A connector candidate stage 2
already scored keeps stage 2's relevance, coverage score and residual pull (one value per fact).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, cast

import numpy as np

from crp_core.config import CRPConfig
from crp_core.corpus.graph import SimilarityGraph
from crp_core.corpus.prepared import Corpus
from crp_core.factors.ngram import NGram
from crp_core.factors.recency import RecencyTable, compute_recency
from crp_core.records import CDGRResult, CDRTable, ConnectorTable
from crp_core.stages.bridges import BridgedPairs, LazyRows, connector_rows
from crp_core.stages.cdr import cdr_ranking, cdr_row_positions, score_cdr
from crp_core.stages.contradictions.values import conflict_check
from crp_core.stages.graph_walk import bridge_values, edges_among, walk_with_paths
from crp_core.stages.near_duplicates import AnchorPicker, ConflictFn, choose_connectors
from crp_core.support.frozen import DeferredTuple, frozen_array
from crp_core.support.memo import WeakMemo

if TYPE_CHECKING:
    from crp_core.factors.coverage import CoverageView


# ---- the stage ----------------------------------------------------------------------------------
def expand_graph_with_recency(  # noqa: PLR0913  stage 3's inputs: stage 2's table and, keyword-only, the run's
    corpus: Corpus,
    cdr: CDRTable,
    *,
    query_vector: np.ndarray,
    coverage: CoverageView | None,
    residual_vectors: np.ndarray | None,
    blacklist: frozenset[NGram],
    now: datetime,
    config: CRPConfig,
    values_conflict: ConflictFn | None = None,
) -> tuple[CDGRResult, RecencyTable]:
    """Stage 3; also returns the recency table of the connector candidates (for the run's record).
    ``values_conflict`` defaults to the detector as ``config.detector_learned`` sets it."""
    if values_conflict is None:
        values_conflict = conflict_check(config.detector_learned)
    gate = cdr.passed_gate if cdr.passed_gate is not None else np.ones(cdr.idx.size, dtype=bool)
    ranked = cdr.idx[cdr_ranking(cdr, gate)]
    picker = AnchorPicker(corpus, ranked, config=config, values_conflict=values_conflict)
    anchors_l, next_pos = picker.take(config.anchor_budget, start=0, exclude=set())
    anchors = np.asarray(anchors_l, dtype=np.int64)
    conn_near: Sequence[tuple[int, int, float]] = ()
    slots = config.envelope_fact_budget - config.anchor_budget
    empty_i = np.zeros(0, dtype=np.int64)
    empty_f = np.zeros(0, dtype=np.float64)

    if config.graph_retrieval and anchors.size:
        graph = corpus.graph(config)
        matrix = graph.matrix
        walked = _walked(graph, anchors, config.max_hops, corpus.retrievable)
        cands, dist, mean_w, bridge = walked.cands, walked.dist, walked.mean_w, walked.bridge
        relevance, cov, pull = _scored_in_stage2(corpus, cdr, cands, query_vector, coverage, residual_vectors)
        recency = compute_recency(corpus.kb, cands, now, config)
        ccdr = score_cdr(
            corpus,
            cands,
            relevance,
            coverage=coverage,
            residual_vectors=residual_vectors,
            blacklist=blacklist,
            recency=recency,
            config=config,
            passed_gate=relevance >= config.cdr_min_relevance,
            coverage_score=cov,
            residual_pull=pull,
        )
        score = bridge * ccdr.novelty * ccdr.recency_factor * np.maximum(relevance, config.min_connector_relevance)
        eligible = np.flatnonzero(bridge > 0)
        # by score, ties by row: the walk lists the candidates ascending, so one stable sort of the scores
        order = eligible[np.argsort(-score[eligible], kind="stable")]
        sel_pos, conn_near = choose_connectors(
            corpus, anchors, cands, order, max(slots, 0), config=config, values_conflict=values_conflict
        )
        selected = np.zeros(cands.size, dtype=bool)
        selected[sel_pos] = True
        selected_rows = cands[sel_pos]
        # the lazy rows stand in for the record's tuples (same items, equality, slicing and pickling)
        table = ConnectorTable(
            idx=frozen_array(cands),
            hop_distance=frozen_array(dist),
            touched_anchors=cast("tuple[tuple[int, ...], ...]", walked.touched),
            bridged_pairs=cast("tuple[tuple[tuple[int, int], ...], ...]", walked.pairs),
            mean_path_weight=frozen_array(mean_w),
            bridge_value=frozen_array(bridge),
            relevance=frozen_array(relevance),
            novelty=ccdr.novelty,
            recency_factor=ccdr.recency_factor,
            connector_score=frozen_array(score),
            selected=frozen_array(selected),
        )
        hop_count = config.max_hops
    else:
        matrix = None
        recency = compute_recency(corpus.kb, empty_i, now, config)
        ccdr = score_cdr(
            corpus,
            empty_i,
            empty_f,
            coverage=coverage,
            residual_vectors=residual_vectors,
            blacklist=blacklist,
            recency=recency,
            config=config,
            passed_gate=np.zeros(0, dtype=bool),
        )
        table = ConnectorTable(
            idx=frozen_array(empty_i),
            hop_distance=frozen_array(empty_i),
            touched_anchors=(),
            bridged_pairs=(),
            mean_path_weight=frozen_array(empty_f),
            bridge_value=frozen_array(empty_f),
            relevance=frozen_array(empty_f),
            novelty=frozen_array(empty_f),
            recency_factor=frozen_array(empty_f),
            connector_score=frozen_array(empty_f),
            selected=frozen_array(np.zeros(0, dtype=bool)),
        )
        selected_rows = empty_i
        hop_count = config.max_hops if config.graph_retrieval else 0

    unused = max(slots, 0) - selected_rows.size if config.graph_retrieval else 0
    extra_l: list[int] = []
    if unused > 0:
        extra_l, _ = picker.take(unused, start=next_pos, exclude=set(selected_rows.tolist()))
    extra = np.asarray(extra_l, dtype=np.int64)

    # the edges among the selected facts are for drawing (the report and the graph page): listed when
    # first read
    edges: Sequence[tuple[int, int, float]] = ()
    if matrix is not None:
        csr, drawn = matrix, np.concatenate([anchors, extra, selected_rows])
        edges = DeferredTuple(lambda: edges_among(csr, drawn))

    result = CDGRResult(
        anchors=frozen_array(anchors),
        connectors=table,
        selected_connectors=frozen_array(selected_rows),
        extra_anchors=frozen_array(extra),
        graph_edges=cast("tuple[tuple[int, int, float], ...]", edges),
        hops=hop_count,
        near_duplicates=tuple(picker.near_duplicates),
        connector_cdr=ccdr,
        connector_near_duplicates=cast("tuple[tuple[int, int, float], ...]", conn_near),
    )
    return result, recency


@dataclass(frozen=True, eq=False)
class _Walked:
    """What stage 3 reads off the similarity graph for one anchor set, read-only: the connector candidates
    (ascending) and their hop distance (:func:`walk_with_paths`), bridge values (:func:`bridge_values`) and
    rows (:func:`connector_rows`), and the retrievable mask the walk was given."""

    retrievable: np.ndarray
    cands: np.ndarray
    dist: np.ndarray
    mean_w: np.ndarray
    bridge: np.ndarray
    touched: LazyRows[tuple[int, ...]]
    pairs: BridgedPairs


#: anchor sets whose walk a similarity graph keeps (:func:`_walked`; 0: none, every run walks)
WALKS_KEPT = 8
_WALKS: WeakMemo[SimilarityGraph, tuple[int, bytes], _Walked] = WeakMemo(WALKS_KEPT)


def _walked(graph: SimilarityGraph, anchors: np.ndarray, max_hops: int, retrievable: np.ndarray) -> _Walked:
    """The walk, bridge values and connector rows of ``anchors`` (int64) over ``graph``: they depend on the
    graph, the anchors, ``max_hops`` and the retrievable mask alone, so the graph keeps those of its last
    :data:`WALKS_KEPT` anchor sets (a rerun, or a sweep point that picks the same anchors, reads them
    again; the mask is checked by identity)."""
    key = (int(max_hops), anchors.tobytes())
    got = _WALKS.get(graph, key) if WALKS_KEPT else None
    if got is not None and got.retrievable is retrievable:
        return got
    cands, dist, hops, wsum, aa = walk_with_paths(graph.matrix, anchors, max_hops, retrievable)
    count, mean_w, bridge, non_adj = bridge_values(aa, hops, wsum)
    touched, pairs = connector_rows(anchors, hops, count, non_adj)
    for a in (cands, dist, hops, count, mean_w, bridge, non_adj):
        a.setflags(write=False)
    walked = _Walked(retrievable, cands, dist, mean_w, bridge, touched, pairs)
    return _WALKS.put(graph, key, walked) if WALKS_KEPT else walked


def _scored_in_stage2(
    corpus: Corpus,
    cdr: CDRTable,
    cands: np.ndarray,
    query_vector: np.ndarray,
    coverage: CoverageView | None,
    residual_vectors: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """The connector candidates' relevance, coverage score and residual pull (float64, aligned with
    ``cands``; the last two None when the Coverage Set is empty, as stage 2 then fills them without
    arithmetic). A candidate stage 2 scored keeps stage 2's values (the same formulas on the same
    fact: the breakdown shows one value per fact); only the others are computed, from their vectors."""
    from crp_core.stages.cdr import factors_from_columns

    m = cands.size
    pos, found = cdr_row_positions(cdr, cands)
    empty = coverage is None or len(coverage) == 0
    relevance = np.empty(m, dtype=np.float64)
    cov = None if empty else np.empty(m, dtype=np.float64)
    pull = None if empty else np.empty(m, dtype=np.float64)
    have = pos[found]
    relevance[found] = cdr.relevance[have]
    if cov is not None and pull is not None:
        cov[found] = cdr.coverage_score[have]
        pull[found] = cdr.residual_pull[have]
    if not found.all():
        new = ~found
        vecs = corpus.vectors[cands[new]]
        query = np.asarray(query_vector, dtype=np.float32).reshape(1, -1)
        if cov is None or pull is None or coverage is None:
            relevance[new] = vecs @ query[0]
        else:
            # one product with the query, the Coverage Set entries and the residual sub-queries (these
            # rows have no stage-2 value to agree with), read by stage 2's formulas
            entries = np.asarray(coverage.embeddings, dtype=np.float32).reshape(len(coverage), -1)
            res = (
                np.zeros((0, query.shape[1]), dtype=np.float32)
                if residual_vectors is None
                else np.asarray(residual_vectors, dtype=np.float32).reshape(-1, query.shape[1])
            )
            cos = vecs @ np.concatenate([query, entries, res]).T
            c = entries.shape[0]
            relevance[new] = cos[:, 0]
            cov[new], pull[new] = factors_from_columns(
                cos, range(1, 1 + c), range(1 + c, 1 + c + res.shape[0]), coverage
            )
    return relevance, cov, pull


def expand_graph(  # noqa: PLR0913  stage 3's inputs: stage 2's table and, keyword-only, the run's
    corpus: Corpus,
    cdr: CDRTable,
    *,
    query_vector: np.ndarray,
    coverage: CoverageView | None,
    residual_vectors: np.ndarray | None,
    blacklist: frozenset[NGram],
    now: datetime,
    config: CRPConfig,
    values_conflict: ConflictFn | None = None,
) -> CDGRResult:
    """Stage 3 (docs/reference/pipeline.md §3). ``cdr`` is the stage-2 table (with ``passed_gate``)."""
    return expand_graph_with_recency(
        corpus,
        cdr,
        query_vector=query_vector,
        coverage=coverage,
        residual_vectors=residual_vectors,
        blacklist=blacklist,
        now=now,
        config=config,
        values_conflict=values_conflict,
    )[0]
