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
    ids, _ = corpus.search(queries, config.candidate_k, config)
    flat = ids.reshape(-1)
    owner = np.repeat(np.arange(queries.shape[0]), ids.shape[1])
    ok = flat >= 0
    flat, owner = flat[ok], owner[ok]
    # belt and braces: never a DELETED / QUARANTINED fact, whatever the index returned
    keep = corpus.retrievable[flat]
    flat, owner = flat[keep], owner[keep]
    rows = np.unique(flat)
    relevance = (corpus.vectors[rows] @ q[0]).astype(np.float64)
    order = np.lexsort((rows, -relevance))
    rows, relevance = rows[order], relevance[order]
    # found_by: which searches returned each candidate, in search order
    sorter = np.argsort(rows, kind="stable")
    cand_pos = sorter[np.searchsorted(rows, flat, sorter=sorter)] if rows.size else flat
    found: list[list[str]] = [[] for _ in range(rows.size)]
    for c, o in sorted(set(zip(cand_pos.tolist(), owner.tolist()))):
        found[c].append(labels[o])
    passed = relevance >= config.cdr_min_relevance
    return CandidateSet(
        idx=frozen_array(rows.astype(np.int64)),
        relevance=frozen_array(relevance),
        passed_gate=frozen_array(passed),
        found_by=tuple(tuple(f) for f in found),
        gate_threshold=float(config.cdr_min_relevance),
    )
