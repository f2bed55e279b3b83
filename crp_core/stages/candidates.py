"""Stage 1: candidate gathering (SPEC-003 §5.2, SPEC-024 §2.6; SPEC_NOTES §2.1).

HNSW top-``candidate_k`` for the query and for each sub-query, union by fact, DELETED /
QUARANTINED never returned (the index's ``allowed`` mask). ``relevance`` = exact
cosine(fact, query). Facts with ``relevance < cdr_min_relevance`` fail the gate; they stay in the
record (``passed_gate`` False) so the dashboard can show them and why.
"""
from __future__ import annotations

import numpy as np

from crp_core.config import CRPConfig
from crp_core.corpus.prepared import Corpus, ScenarioVectors
from crp_core.records import CandidateSet, frozen_array


def gather_candidates(corpus: Corpus, vectors: ScenarioVectors, config: CRPConfig) -> CandidateSet:
    """Stage 1 over a prepared corpus and the scenario's vectors (``ScenarioVectors``)."""
    q = np.asarray(vectors.query, dtype=np.float32).reshape(1, -1)
    subs = np.asarray(vectors.sub_queries, dtype=np.float32).reshape(-1, q.shape[1])
    queries = np.vstack([q, subs]) if subs.shape[0] else q
    labels = ("query",) + tuple(vectors.ids)
    # the facts each search found, unsorted (Corpus.search's facts without recomputing and sorting
    # their cosines: only the union and who found what matter here)
    ids = corpus.index_for(config).query_ids(queries, config.candidate_k, corpus.retrievable,
                                             ef_search=config.hnsw_ef_search)
    flat = ids.reshape(-1)
    owner = np.repeat(np.arange(queries.shape[0]), ids.shape[1])
    ok = flat >= 0
    flat, owner = flat[ok], owner[ok]
    # belt and braces: never a DELETED / QUARANTINED fact, whatever the index returned
    keep = corpus.retrievable[flat]
    flat, owner = flat[keep], owner[keep]
    rows, at = np.unique(flat, return_inverse=True)
    relevance = (corpus.vectors[rows] @ q[0]).astype(np.float64)
    order = np.lexsort((rows, -relevance))
    passed = relevance[order] >= config.cdr_min_relevance
    return CandidateSet(
        idx=frozen_array(rows[order].astype(np.int64)),
        relevance=frozen_array(relevance[order]),
        passed_gate=frozen_array(passed),
        found_by=found_by(at.reshape(-1), owner, rows.size, labels, order),
        gate_threshold=float(config.cdr_min_relevance),
    )


def found_by(at: np.ndarray, owner: np.ndarray, n: int, labels: tuple[str, ...],
             order: np.ndarray) -> tuple[tuple[str, ...], ...]:
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
