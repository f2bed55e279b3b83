"""The whole-CKF conflict scan: SPEC-027 §2 detection and arbitration applied to every pair of
retrievable facts that the HNSW neighbours bring above ``contradiction_similarity``."""
from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from crp_core.config import CRPConfig
from crp_core.corpus.prepared import Corpus
from crp_core.records import ConflictPair, RecencyTable, ValueConflict
from crp_core.stages.contradictions.arbitration import AUTHORITY_DECIMALS, Decisions, arbitrate, decision_for
from crp_core.stages.contradictions.authority import authority_of
from crp_core.stages.contradictions.values import PATTERNS, values_conflict


@dataclass(frozen=True, eq=False)
class ConflictScan:
    """Every conflicting pair of the CKF's retrievable facts, each arbitrated on its own."""

    pairs: tuple[ConflictPair, ...]  # triage order: ties first, then smallest margin, then ids
    counts: Mapping[str, int]  # pattern -> number of pairs showing it (dismissed pairs excluded)
    n_facts: int  # retrievable facts scanned
    n_candidates: int  # distinct pairs with cosine > contradiction_similarity (text-checked)
    k: int  # neighbours per fact taken from the index (deepened where a row was still above threshold)
    threshold: float
    now: datetime
    recency: RecencyTable | None  # of the facts in a pair (None when no pair)
    timings_ms: Mapping[str, float]  # "neighbours", "text_check", "arbitration", "total"
    rows: Mapping[str, int] = field(default_factory=dict)  # fact id -> row, for the facts in a pair

    @property
    def tied(self) -> int:
        return sum(1 for p in self.pairs if p.tied)

    @property
    def dismissed(self) -> int:
        return sum(1 for p in self.pairs if p.decision == "dismiss")


def candidate_pairs(corpus: Corpus, config: CRPConfig, threshold: float | None = None) -> tuple[np.ndarray, int]:
    """Distinct (row_i, row_j), i < j, of retrievable facts with cosine > ``threshold`` (default
    ``contradiction_similarity``), from the HNSW neighbour table: never all n^2 pairs.

    Starts from ``corpus.neighbours(graph_k)`` (cached, shared with the graph); rows whose k-th
    neighbour is still above the threshold are re-queried with k doubled until it is not.
    Returns ``(pairs (m, 2) int64 sorted, largest k used)``.
    """
    thr = config.contradiction_similarity if threshold is None else float(threshold)
    retr = np.asarray(corpus.retrievable, dtype=bool)
    rows = np.flatnonzero(retr)
    n_r = rows.size
    if n_r < 2:
        return np.zeros((0, 2), dtype=np.int64), 0
    k = max(1, min(config.graph_k, n_r - 1))
    table = corpus.neighbours(k, config)
    ids, sims = table.ids[rows], table.sims[rows]
    chunks_src = [np.repeat(rows, ids.shape[1])]
    chunks_dst = [ids.reshape(-1)]
    chunks_sim = [sims.reshape(-1)]
    with np.errstate(invalid="ignore"):
        deep = rows[sims[:, -1] > thr]
    while deep.size and k < n_r - 1:
        k = min(2 * k, n_r - 1)
        got_ids, got_sims = corpus.search(corpus.vectors[deep], k + 1, config)
        chunks_src.append(np.repeat(deep, got_ids.shape[1]))
        chunks_dst.append(got_ids.reshape(-1))
        chunks_sim.append(got_sims.reshape(-1))
        with np.errstate(invalid="ignore"):
            deep = deep[got_sims[:, -1] > thr]
    src = np.concatenate(chunks_src)
    dst = np.concatenate(chunks_dst)
    sim = np.concatenate(chunks_sim)
    with np.errstate(invalid="ignore"):
        ok = (dst >= 0) & (dst != src) & (sim > thr)
    a, b = src[ok], dst[ok]
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    pairs = np.unique(np.stack([lo, hi], axis=1), axis=0) if lo.size else np.zeros((0, 2), dtype=np.int64)
    if pairs.size:  # one exact cosine per pair, the same arithmetic as the brute-force check
        v = np.asarray(corpus.vectors, dtype=np.float32)
        exact = np.einsum("ij,ij->i", v[pairs[:, 0]], v[pairs[:, 1]])
        pairs = pairs[exact > thr]
    return pairs.astype(np.int64), k


def triage_order(pair: ConflictPair) -> tuple[bool, bool, float, str, str]:
    """Ties first, then the smallest authority margin (rounded to ``AUTHORITY_DECIMALS``), then ids;
    dismissed pairs last."""
    return (pair.decision == "dismiss", not pair.tied, round(pair.margin, AUTHORITY_DECIMALS), pair.fact_a,
            pair.fact_b)


def scan_ckf(corpus: Corpus, config: CRPConfig, now: datetime,
             decisions: Decisions = None) -> ConflictScan:
    """Whole-CKF conflict scan (SPEC-027 §2 applied to every retrievable pair).

    Candidate pairs come from the HNSW neighbours (:func:`candidate_pairs`), each goes through
    :func:`values_conflict`, and each conflicting pair is arbitrated independently (no
    suppression chain: the scan reports, the envelope decides). Recency is computed at ``now``.
    """
    from crp_core.factors.recency import compute_recency

    t0 = time.perf_counter()
    kb = corpus.kb
    cand, k = candidate_pairs(corpus, config)
    t1 = time.perf_counter()
    found: list[tuple[int, int, ValueConflict]] = []
    facts = kb.facts
    for i, j in cand.tolist():
        ca, cb = facts[i].content, facts[j].content
        if ca == cb:
            continue
        vc = values_conflict(ca, cb)
        if vc is not None:
            found.append((i, j, vc))
    t2 = time.perf_counter()
    involved = np.array(sorted({r for i, j, _ in found for r in (i, j)}), dtype=np.int64)
    rec = compute_recency(kb, involved, now, config) if involved.size else None
    factor = {} if rec is None else dict(zip(rec.idx.tolist(), rec.factor.tolist()))
    auth = {r: authority_of(facts[r], factor[r], config) for r in involved.tolist()}
    v = np.asarray(corpus.vectors, dtype=np.float32)
    pairs: list[ConflictPair] = []
    for i, j, vc in found:
        if facts[j].fact_id < facts[i].fact_id:
            i, j = j, i  # fact_a is the smaller id, and the diffs' *_a sides describe its text
            vc = values_conflict(facts[i].content, facts[j].content) or vc
        a, b = auth[i], auth[j]
        kind, winner = decision_for(decisions, a.fact_id, b.fact_id)
        arb = arbitrate(a, b, config, kind, winner)
        pairs.append(ConflictPair(a.fact_id, b.fact_id, float(v[i] @ v[j]), vc.patterns, vc,
                                  {a.fact_id: a, b.fact_id: b}, arb.kept, arb.suppressed, arb.tied,
                                  skipped=False, margin=abs(a.authority - b.authority), decision=arb.decision))
    pairs.sort(key=triage_order)
    counts = {pat: 0 for pat in PATTERNS}
    for p in pairs:
        if p.decision != "dismiss":
            for pat in p.patterns:
                counts[pat] += 1
    t3 = time.perf_counter()
    return ConflictScan(
        pairs=tuple(pairs), counts=counts, n_facts=int(np.count_nonzero(corpus.retrievable)),
        n_candidates=int(cand.shape[0]), k=k, threshold=float(config.contradiction_similarity), now=now,
        recency=rec,
        timings_ms={"neighbours": (t1 - t0) * 1e3, "text_check": (t2 - t1) * 1e3,
                    "arbitration": (t3 - t2) * 1e3, "total": (t3 - t0) * 1e3},
        rows={facts[r].fact_id: r for r in involved.tolist()},
    )

