"""Stage 1: candidate gathering (SPEC-003 §5.2, SPEC-024 §2.6; docs/reference/pipeline.md §1).

HNSW top-``candidate_k`` for the query and for each sub-query, union by fact, DELETED /
QUARANTINED never returned (the index's ``allowed`` mask). ``relevance`` = exact
cosine(fact, query). Facts with ``relevance < cdr_min_relevance`` fail the gate; they stay in the
record (``passed_gate`` False) so the dashboard can show them and why.

All searches go to the index in one batched call; the union is one plain sort of the hits keyed by
(row, search), and who found a row is a bit mask per row (one bit per search) OR-reduced over its
hits, so no per-hit Python runs.
"""

from __future__ import annotations

from itertools import compress

import numpy as np

from crp_core.config import CRPConfig
from crp_core.corpus.prepared import Corpus, ScenarioVectors
from crp_core.records import CandidateSet
from crp_core.support.frozen import DeferredTuple, freeze_owned

#: up to this many searches (query + sub-queries) a row's finders fit in one int64 bit mask (and owners in 6 bits)
MASK_SEARCHES = 62


def gather_candidates(corpus: Corpus, vectors: ScenarioVectors, config: CRPConfig) -> CandidateSet:
    """Stage 1 over a prepared corpus and the scenario's vectors (``ScenarioVectors``)."""
    q = np.asarray(vectors.query, dtype=np.float32).reshape(1, -1)
    subs = np.asarray(vectors.sub_queries, dtype=np.float32).reshape(-1, q.shape[1])
    queries = np.concatenate((q, subs)) if subs.shape[0] else q
    labels = ("query",) + tuple(vectors.ids)
    # the facts each search found, unsorted (Corpus.search's facts without recomputing and sorting
    # their cosines: only the union and who found what matter here)
    # one thread: a handful of small searches, whose results do not depend on a thread team
    ids = corpus.index_for(config).query_ids(
        queries, config.candidate_k, corpus.retrievable, ef_search=config.hnsw_ef_search, num_threads=1
    )
    flat = ids.reshape(-1)
    owner = np.repeat(np.arange(queries.shape[0], dtype=np.int64), ids.shape[1])
    # no padding, and belt and braces: never a DELETED / QUARANTINED fact, whatever the index returned
    keep = (flat >= 0) & corpus.retrievable[flat]
    if not keep.all():
        flat, owner = flat[keep], owner[keep]
    if len(labels) <= MASK_SEARCHES:
        rows, masks = union_masks(flat, owner)
    else:
        rows, at = np.unique(flat, return_inverse=True)
    # one gather of the candidates' vectors for the relevance and for every sub-query's cosine, which
    # stage 2 reads for the coverage score and the residual pull
    found = corpus.vectors[rows]
    relevance = (found @ q[0]).astype(np.float64)
    order = np.argsort(-relevance, kind="stable")  # rows ascend: ties keep the lower row first
    relevance = relevance[order]
    sub_cosines = (found @ subs.T)[order] if subs.shape[0] else np.zeros((rows.size, 0), dtype=np.float32)
    # who found each candidate: read by the report and the dashboard, never by a later stage, so the
    # label tuples are built when first read
    if len(labels) <= MASK_SEARCHES:
        ordered = masks[order]
        finders: DeferredTuple[tuple[str, ...]] = DeferredTuple(lambda: found_by_masks(ordered, labels))
    else:
        hits, n_rows = at.reshape(-1), rows.size
        finders = DeferredTuple(lambda: found_by(hits, owner, n_rows, labels, order))
    return CandidateSet(
        idx=freeze_owned(rows[order]),
        relevance=freeze_owned(relevance),
        passed_gate=freeze_owned(relevance >= config.cdr_min_relevance),
        found_by=finders,
        gate_threshold=float(config.cdr_min_relevance),
        sub_query_cosines=freeze_owned(sub_cosines),
    )


def union_masks(flat: np.ndarray, owner: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(rows, masks)``: the distinct rows of ``flat`` (int64, 0 <= row < 2**57), ascending, and per row
    the OR of ``1 << owner`` over its hits (bit j set: search j found it). ``owner`` < 64.

    One plain sort of ``row << 6 | owner``: the OR needs no order among a row's hits, so no stable
    argsort."""
    key = np.sort((flat << 6) | owner)
    s = key >> 6
    start = np.empty(s.size, dtype=bool)
    start[:1] = True
    np.not_equal(s[1:], s[:-1], out=start[1:])
    bounds = np.flatnonzero(start)
    if not bounds.size:
        return s, np.zeros(0, dtype=np.int64)
    return s[bounds], np.bitwise_or.reduceat(np.left_shift(np.int64(1), key & 63), bounds)


def found_by_masks(masks: np.ndarray, labels: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """Per candidate, the labels of the bits set in its mask, in search order. Candidates found by the
    same searches share one tuple (a handful of distinct masks, each built once: their bits in one
    shift, each tuple one ``compress`` of the labels)."""
    codes = masks.tolist()
    distinct = list(dict.fromkeys(codes))
    bits = (np.array(distinct, dtype=np.int64)[:, None] >> np.arange(len(labels), dtype=np.int64)) & 1
    patterns = dict(zip(distinct, [tuple(compress(labels, row)) for row in bits.tolist()]))
    return tuple(map(patterns.__getitem__, codes))


def found_by(
    at: np.ndarray, owner: np.ndarray, n: int, labels: tuple[str, ...], order: np.ndarray
) -> tuple[tuple[str, ...], ...]:
    """Per candidate (``order`` of the ``n`` unique rows): the labels of the searches that returned it,
    in search order. ``at[i]`` is the unique row of hit i and ``owner[i]`` its search. Candidates
    found by the same searches share one tuple (a handful of distinct patterns, built once each)."""
    if n == 0:
        return ()
    hit = np.zeros((n, len(labels)), dtype=bool)
    hit[at, owner] = True
    if len(labels) < 63:
        code = hit @ (np.int64(1) << np.arange(len(labels), dtype=np.int64))
        codes, which = np.unique(code[order], return_inverse=True)
        patterns = [tuple(labels[j] for j in range(len(labels)) if (c >> j) & 1) for c in codes.tolist()]
    else:
        rows_u, which = np.unique(hit[order], axis=0, return_inverse=True)
        patterns = [tuple(labels[j] for j in np.flatnonzero(r).tolist()) for r in rows_u]
    return tuple(map(patterns.__getitem__, which.reshape(-1).tolist()))
