"""Stage 3: coverage-differential graph retrieval, CDGR (SPEC-025 §2; SPEC_NOTES §2.5).

Phase A (seed): anchors = the top ``config.anchor_budget`` gated-in candidates by CDR, skipping a
candidate whose cosine with an already chosen anchor exceeds ``dedup_similarity`` (SPEC-003 §6.6)
unless the pair value-conflicts (then both stay and stage 4 arbitrates).
Phase B (expand): connector candidates = retrievable facts within ``max_hops`` of an anchor, not
anchors. Phase C (bridge): touched anchors = anchors at graph distance 1 or 2;
``bridge_value = (touched-anchor pairs with no direct edge) * mean_path_weight`` where
``mean_path_weight`` pools the edges of the connector's strongest shortest path to each touched
anchor (shortest in hops; among those, the one with the highest total weight).
``connector_score = bridge_value * novelty * recency_factor * max(relevance, min_connector_relevance)``
(SPEC-027 §3.3). Connectors with bridge value 0 are dropped; the best fill the connector slots
(``envelope_fact_budget - anchor_budget``); unused slots go to the next CDR candidates
(``extra_anchors``). With graph retrieval off, anchors take the whole budget.

Everything is vectorised over the sparse graph: the walk only touches the anchors' 2-hop
neighbourhood (CSR row slices), never the whole matrix.
"""
from __future__ import annotations

from datetime import datetime
from typing import Any, Callable

import numpy as np

from .cdr import cdr_ranking, score_cdr
from .config import CRPConfig
from .ngram import NGram
from .recency import compute_recency
from .records import CDGRResult, CDRTable, ConnectorTable, RecencyTable, frozen_array

ConflictFn = Callable[[str, str], Any]


def default_values_conflict() -> ConflictFn | None:
    """``crp_core.conflicts.values_conflict`` when that module is available."""
    try:
        from .conflicts import values_conflict  # noqa: PLC0415 - optional until stage 4 lands
    except ImportError:
        return None
    return values_conflict


# ---- Phase A: anchors ---------------------------------------------------------------------------
def pick_anchors(corpus: Any, ranked_rows: np.ndarray, count: int, chosen: list[int], *, start: int,
                 exclude: set[int], config: CRPConfig, values_conflict: ConflictFn | None,
                 near_duplicates: list[tuple[int, int, float]]) -> tuple[list[int], int]:
    """Take up to ``count`` rows from ``ranked_rows[start:]`` (CDR order), skipping SPEC-003 §6.6
    near-duplicates of rows in ``chosen`` that do not value-conflict with them.

    Returns (picked rows, next start position). ``chosen`` is extended in place (local list).
    """
    picked: list[int] = []
    vecs = corpus.vectors
    texts = corpus.kb.facts
    p = start
    while len(picked) < count and p < ranked_rows.size:
        row = int(ranked_rows[p])
        p += 1
        if row in exclude:
            continue
        if chosen:
            sims = vecs[chosen] @ vecs[row]
            close = np.flatnonzero(sims > config.dedup_similarity)
            dup_of = None
            for c in close[np.argsort(-sims[close], kind="stable")]:
                other = chosen[int(c)]
                conflict = values_conflict(texts[other].content, texts[row].content) if values_conflict else None
                if not conflict:
                    dup_of = (other, float(sims[c]))
                    break
            if dup_of is not None:
                near_duplicates.append((row, dup_of[0], dup_of[1]))
                continue
        picked.append(row)
        chosen.append(row)
    return picked, p


# ---- Phase B/C: the walk and the bridge values --------------------------------------------------
def _expand_rows(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray,
                 frontier: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each row of ``frontier`` (duplicates allowed): (entry owner position, neighbour, weight)."""
    starts = indptr[frontier]
    counts = indptr[frontier + 1] - starts
    total = int(counts.sum())
    if total == 0:
        e = np.zeros(0, dtype=np.int64)
        return e, e, np.zeros(0, dtype=np.float64)
    offsets = np.cumsum(counts) - counts
    pos = np.repeat(starts - offsets, counts) + np.arange(total)
    owner = np.repeat(np.arange(frontier.size), counts)
    return owner, indices[pos].astype(np.int64), data[pos].astype(np.float64)


def walk(matrix: Any, anchors: np.ndarray, max_hops: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows within ``max_hops`` of any anchor (anchors excluded), ascending, with their hop distance."""
    indptr, indices, data = matrix.indptr, matrix.indices, matrix.data
    visited = np.unique(anchors)
    frontier = visited
    rows, dists = [], []
    for h in range(1, max_hops + 1):
        if frontier.size == 0:
            break
        _, nb, _ = _expand_rows(indptr, indices, data, frontier)
        new = np.setdiff1d(np.unique(nb), visited, assume_unique=True)
        if new.size == 0:
            break
        rows.append(new)
        dists.append(np.full(new.size, h, dtype=np.int64))
        visited = np.union1d(visited, new)
        frontier = new
    if not rows:
        e = np.zeros(0, dtype=np.int64)
        return e, e
    r = np.concatenate(rows)
    d = np.concatenate(dists)
    order = np.argsort(r, kind="stable")
    return r[order], d[order]


def anchor_paths(matrix: Any, anchors: np.ndarray, cands: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per (candidate, anchor): hops of the shortest path if it is 1 or 2 (else 0), and the total
    weight of the strongest such path (SPEC-025 §2.4; see docs/decisions/pipeline.md).

    Returns ``hops`` (m, s) int8 and ``weight_sum`` (m, s) float64 (0 where not touched).
    """
    s, m = anchors.size, cands.size
    hops = np.zeros((m, s), dtype=np.int8)
    wsum = np.zeros((m, s), dtype=np.float64)
    if s == 0 or m == 0:
        return hops, wsum
    indptr, indices, data = matrix.indptr, matrix.indices, matrix.data
    own1, x, w1 = _expand_rows(indptr, indices, data, anchors)  # anchor -> x (distance 1)
    own2, c2, w2 = _expand_rows(indptr, indices, data, x)  # x -> c (walks of length 2)
    a2 = own1[own2]
    val2 = w1[own2] + w2
    keep2 = c2 != anchors[a2]
    a_all = np.concatenate([own1, a2[keep2]])
    c_all = np.concatenate([x, c2[keep2]])
    h_all = np.concatenate([np.ones(own1.size, dtype=np.int8), np.full(int(keep2.sum()), 2, dtype=np.int8)])
    v_all = np.concatenate([w1, val2[keep2]])
    # keep only connector candidates; map rows to local positions
    cpos = np.searchsorted(cands, c_all)
    cpos = np.minimum(cpos, m - 1)
    ok = cands[cpos] == c_all
    a_all, cpos, h_all, v_all = a_all[ok], cpos[ok], h_all[ok], v_all[ok]
    if a_all.size == 0:
        return hops, wsum
    key = cpos.astype(np.int64) * s + a_all
    order = np.lexsort((-v_all, h_all, key))  # per pair: fewest hops first, then the strongest
    key, h_all, v_all = key[order], h_all[order], v_all[order]
    first = np.ones(key.size, dtype=bool)
    first[1:] = key[1:] != key[:-1]
    k, hh, vv = key[first], h_all[first], v_all[first]
    hops.reshape(-1)[k] = hh
    wsum.reshape(-1)[k] = vv
    return hops, wsum


def bridge_values(matrix: Any, anchors: np.ndarray, hops: np.ndarray,
                  wsum: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(bridge_count, mean_path_weight, bridge_value, non_adjacent (s, s) bool) per candidate."""
    s = anchors.size
    touched = hops > 0
    if s:
        aa = matrix[anchors][:, anchors].toarray() != 0
    else:
        aa = np.zeros((0, 0), dtype=bool)
    non_adj = ~aa & ~np.eye(s, dtype=bool)
    t = touched.astype(np.int64)
    count = ((t @ non_adj.astype(np.int64)) * t).sum(axis=1) // 2
    edges = hops.astype(np.int64).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_w = np.where(edges > 0, wsum.sum(axis=1) / np.maximum(edges, 1), np.nan)
    bridge = np.where(count > 0, count * np.nan_to_num(mean_w), 0.0)
    return count, mean_w, bridge, non_adj


# ---- the stage ----------------------------------------------------------------------------------
def expand_graph_with_recency(corpus: Any, cdr: CDRTable, *, query_vector: np.ndarray, coverage: Any,
                              residual_vectors: np.ndarray | None, blacklist: frozenset[NGram],
                              now: datetime, config: CRPConfig,
                              values_conflict: ConflictFn | None | str = "auto",
                              ) -> tuple[CDGRResult, RecencyTable]:
    """Stage 3; also returns the recency table of the connector candidates (for the run's record)."""
    if values_conflict == "auto":
        values_conflict = default_values_conflict()
    gate = cdr.passed_gate if cdr.passed_gate is not None else np.ones(cdr.idx.size, dtype=bool)
    ranked = cdr.idx[cdr_ranking(cdr, gate)]
    near: list[tuple[int, int, float]] = []
    chosen: list[int] = []
    anchors_l, next_pos = pick_anchors(corpus, ranked, config.anchor_budget, chosen, start=0, exclude=set(),
                                       config=config, values_conflict=values_conflict, near_duplicates=near)
    anchors = np.asarray(anchors_l, dtype=np.int64)
    slots = config.envelope_fact_budget - config.anchor_budget
    empty_i = np.zeros(0, dtype=np.int64)
    empty_f = np.zeros(0, dtype=np.float64)

    if config.graph_retrieval and anchors.size:
        matrix = corpus.graph(config).matrix
        cands, dist = walk(matrix, anchors, config.max_hops)
        ok = corpus.retrievable[cands]
        cands, dist = cands[ok], dist[ok]
        hops, wsum = anchor_paths(matrix, anchors, cands)
        count, mean_w, bridge, non_adj = bridge_values(matrix, anchors, hops, wsum)
        relevance = (corpus.vectors[cands] @ np.asarray(query_vector, dtype=np.float32)).astype(np.float64)
        recency = compute_recency(corpus.kb, cands, now, config)
        ccdr = score_cdr(corpus, cands, relevance, coverage=coverage, residual_vectors=residual_vectors,
                         blacklist=blacklist, recency=recency, config=config,
                         passed_gate=relevance >= config.cdr_min_relevance)
        score = bridge * ccdr.novelty * ccdr.recency_factor * np.maximum(relevance, config.min_connector_relevance)
        eligible = np.flatnonzero(bridge > 0)
        order = eligible[np.lexsort((cands[eligible], -score[eligible]))]
        sel_pos = order[:max(slots, 0)]
        selected = np.zeros(cands.size, dtype=bool)
        selected[sel_pos] = True
        selected_rows = cands[sel_pos]
        touched_tuples, pair_tuples = _touched_and_pairs(anchors, hops, count, non_adj)
        table = ConnectorTable(
            idx=frozen_array(cands), hop_distance=frozen_array(dist), touched_anchors=touched_tuples,
            bridged_pairs=pair_tuples, mean_path_weight=frozen_array(mean_w), bridge_value=frozen_array(bridge),
            relevance=frozen_array(relevance), novelty=ccdr.novelty, recency_factor=ccdr.recency_factor,
            connector_score=frozen_array(score), selected=frozen_array(selected))
        hop_count = config.max_hops
    else:
        matrix = None
        recency = compute_recency(corpus.kb, empty_i, now, config)
        ccdr = score_cdr(corpus, empty_i, empty_f, coverage=coverage, residual_vectors=residual_vectors,
                         blacklist=blacklist, recency=recency, config=config, passed_gate=np.zeros(0, dtype=bool))
        table = ConnectorTable(
            idx=frozen_array(empty_i), hop_distance=frozen_array(empty_i), touched_anchors=(), bridged_pairs=(),
            mean_path_weight=frozen_array(empty_f), bridge_value=frozen_array(empty_f),
            relevance=frozen_array(empty_f), novelty=frozen_array(empty_f), recency_factor=frozen_array(empty_f),
            connector_score=frozen_array(empty_f), selected=frozen_array(np.zeros(0, dtype=bool)))
        selected_rows = empty_i
        hop_count = config.max_hops if config.graph_retrieval else 0

    unused = max(slots, 0) - selected_rows.size if config.graph_retrieval else 0
    extra_l: list[int] = []
    if unused > 0:
        extra_l, _ = pick_anchors(corpus, ranked, unused, chosen, start=next_pos,
                                  exclude=set(selected_rows.tolist()), config=config,
                                  values_conflict=values_conflict, near_duplicates=near)
    extra = np.asarray(extra_l, dtype=np.int64)

    edges: tuple[tuple[int, int, float], ...] = ()
    if matrix is not None:
        rows = np.concatenate([anchors, extra, selected_rows])
        sub = matrix[rows][:, rows].tocoo()
        up = sub.row < sub.col
        trip = sorted(zip(rows[sub.row[up]].tolist(), rows[sub.col[up]].tolist(), sub.data[up].tolist()))
        edges = tuple((min(a, b), max(a, b), float(w)) for a, b, w in trip)

    result = CDGRResult(
        anchors=frozen_array(anchors), connectors=table, selected_connectors=frozen_array(selected_rows),
        extra_anchors=frozen_array(extra), graph_edges=edges, hops=hop_count,
        near_duplicates=tuple(near), connector_cdr=ccdr)
    return result, recency


def expand_graph(corpus: Any, cdr: CDRTable, *, query_vector: np.ndarray, coverage: Any,
                 residual_vectors: np.ndarray | None, blacklist: frozenset[NGram], now: datetime,
                 config: CRPConfig, values_conflict: ConflictFn | None | str = "auto") -> CDGRResult:
    """Stage 3 (SPEC_NOTES §2.5). ``cdr`` is the stage-2 table (with ``passed_gate``)."""
    return expand_graph_with_recency(corpus, cdr, query_vector=query_vector, coverage=coverage,
                                     residual_vectors=residual_vectors, blacklist=blacklist, now=now,
                                     config=config, values_conflict=values_conflict)[0]


def _touched_and_pairs(anchors: np.ndarray, hops: np.ndarray, count: np.ndarray,
                       non_adj: np.ndarray) -> tuple[tuple[tuple[int, ...], ...], tuple[tuple[tuple[int, int], ...], ...]]:
    m = hops.shape[0]
    r, c = np.nonzero(hops > 0)
    splits = np.searchsorted(r, np.arange(1, m))
    per = np.split(anchors[c], splits) if m else []
    per_pos = np.split(c, splits) if m else []
    touched = tuple(tuple(a.tolist()) for a in per)
    pairs: list[tuple[tuple[int, int], ...]] = []
    anchor_list = anchors.tolist()
    for i in range(m):
        if count[i] == 0:
            pairs.append(())
            continue
        pos = per_pos[i]
        sub = non_adj[np.ix_(pos, pos)]
        ii, jj = np.nonzero(np.triu(sub, k=1))
        pairs.append(tuple((anchor_list[pos[a]], anchor_list[pos[b]]) for a, b in zip(ii.tolist(), jj.tolist())))
    return touched, tuple(pairs)
