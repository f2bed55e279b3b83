"""Response headers of a pipeline run (docs/reference/reports.md; SPEC-024 §8, SPEC-025 §5, SPEC-027 §1.7,
§2.4-2.5, §3.6, SPEC-003 §15), exact spelling, in this order.

Definitions where the specs leave room (docs/decisions/pipeline.md):
* ``Facts-Used: included/available``: included = facts in the envelope; available = distinct facts
  scored by the run (stage-1 candidates before the relevance gate, plus stage-3 connector
  candidates): SPEC-003 §3 ``total_facts_available`` = "candidate facts before filtering".
* ``Connectors-Included: c/total``: connectors in the envelope / facts in the envelope (SPEC-025 §5.2).
* ``Recency-Penalised``: distinct gated-in candidates and connector candidates with factor < 1.0.
* ``NGram-Guard-Activations``: gated-in candidates with an n-gram penalty > 0 (SPEC-024 §8.3).
* ``Coverage-Score``: minimum novelty over the envelope's facts; ``1.00`` when the Coverage Set is
  empty or the envelope is empty.
* ``Coverage-Depth``: Coverage Set size at packing time (after the fan-in merge when fan-out ran).
* ``Conflicts-Resolved: N; unresolved=U``: U = tied pairs with both facts in the envelope = the pairs the
  NOTE blocks of its tie groups cover (each group's NOTE lists its packed facts, so it covers every
  tied pair among them: ``TieGroup.packed_pairs``); a tied pair with a fact left out of the envelope
  (docs/reference/pipeline.md §6) counts in neither N nor U, so the header and the envelope text always agree.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from crp_core.factors.recency import row_positions
from crp_core.records import Envelope, Resolution
from crp_core.stages.cdr import cdr_row_positions
from crp_core.stages.tie_groups import packed_pair_count

PARTITIONS = "CRP-Context-Coverage-Partitions"
CONFLICTS = "CRP-Context-Conflicts-Resolved"
RECENCY = "CRP-Context-Recency-Penalised"
COVERAGE_SCORE = "CRP-Context-Coverage-Score"
COVERAGE_DEPTH = "CRP-Context-Coverage-Depth"
NGRAM = "CRP-Context-NGram-Guard-Activations"
HOPS = "CRP-Context-Graph-Hops"
CONNECTORS = "CRP-Context-Connectors-Included"
BRIDGE = "CRP-Context-Bridge-Score"
FACTS_USED = "CRP-Context-Facts-Used"
TOKENS_USED = "CRP-Context-Tokens-Used"

HEADER_ORDER: tuple[str, ...] = (
    PARTITIONS,
    CONFLICTS,
    RECENCY,
    COVERAGE_SCORE,
    COVERAGE_DEPTH,
    NGRAM,
    HOPS,
    CONNECTORS,
    BRIDGE,
    FACTS_USED,
    TOKENS_USED,
)


def conflicts_value(detected: int, unresolved: int) -> str:
    """``N`` or ``N; unresolved=U`` (SPEC-027 §2.4-2.5)."""
    return f"{detected}; unresolved={unresolved}" if unresolved else f"{detected}"


def conflict_counts(resolution: Resolution, envelope: Envelope) -> tuple[int, int]:
    """(N, U) of ``CRP-Context-Conflicts-Resolved`` (docs/reference/reports.md): the pairs stage 4 counts, minus
    the tied pairs not wholly in the envelope; U = the tied pairs the envelope's NOTE blocks cover."""
    unresolved = sum(packed_pair_count(g) for g in envelope.tie_groups)
    return resolution.detected - (resolution.unresolved - unresolved), unresolved


def _fmt2(x: float) -> str:
    return f"{x:.2f}"


def envelope_novelty(result: Any, rows: np.ndarray | None = None) -> list[float]:
    """Novelty of every envelope fact (stage-2 value; the connector table's for connectors). ``rows``:
    the envelope's fact rows when the caller has them (:func:`_envelope_rows`)."""
    cdr, conn = result.cdr, result.cdgr.connector_cdr
    order = result.envelope.order
    if rows is None:
        rows = _envelope_rows(result)
    pos_cdr, in_cdr = cdr_row_positions(cdr, rows)
    pos_conn, in_conn = (
        row_positions(conn.idx, rows) if conn is not None else (pos_cdr, np.zeros(rows.size, dtype=bool))
    )
    out: list[float] = []
    for p, i, a, j, b in zip(order, pos_cdr.tolist(), in_cdr.tolist(), pos_conn.tolist(), in_conn.tolist()):
        if a and p.role != "connector":
            out.append(float(cdr.novelty[i]))
        elif b:
            out.append(float(conn.novelty[j]))
        elif a:
            out.append(float(cdr.novelty[i]))
    return out


def _envelope_rows(result: Any) -> np.ndarray:
    """The fact rows of the envelope's facts, in envelope order."""
    index_of = result.corpus.kb.index_of
    return np.array([index_of(p.fact_id) for p in result.envelope.order], dtype=np.int64)


def _distinct(n: int, a: np.ndarray, b: np.ndarray) -> int:
    """How many distinct fact rows (0 <= row < ``n``) ``a`` and ``b`` hold together: one mark per row, no sort."""
    if not a.size and not b.size:
        return 0
    seen = np.zeros(n, dtype=bool)
    for rows in (a, b):
        if rows.size:
            seen[rows] = True
    return int(np.count_nonzero(seen))


def build_headers(result: Any) -> dict[str, str]:
    """All headers of docs/reference/reports.md, in order, for a PipelineResult (``headers`` not yet needed)."""
    h: dict[str, str] = {}
    fan = result.fanout
    if fan is not None:
        h[PARTITIONS] = str(len(fan.partitioned.partitions))
    h[CONFLICTS] = conflicts_value(*conflict_counts(result.resolution, result.envelope))

    cdr, cdgr = result.cdr, result.cdgr
    gate = cdr.passed_gate if cdr.passed_gate is not None else np.ones(cdr.idx.size, dtype=bool)
    conn = cdgr.connectors
    # distinct facts: a row can be both a candidate and a connector candidate
    n_kb = len(result.corpus.kb)
    h[RECENCY] = str(_distinct(n_kb, cdr.idx[gate & (cdr.recency_factor < 1.0)], conn.idx[conn.recency_factor < 1.0]))

    coverage = result.coverage
    rows = _envelope_rows(result)
    novelties = envelope_novelty(result, rows)
    if coverage is None or len(coverage) == 0 or not novelties:
        h[COVERAGE_SCORE] = "1.00"
    else:
        h[COVERAGE_SCORE] = _fmt2(min(novelties))
    depth = len(coverage) if coverage is not None else 0
    if fan is not None:
        depth = int(fan.partitioned.coverage_depth)
    h[COVERAGE_DEPTH] = str(depth)
    h[NGRAM] = str(int(np.count_nonzero(gate & (cdr.ngram_penalty > 0))))
    h[HOPS] = str(int(cdgr.hops))

    order = result.envelope.order
    is_conn = np.array([p.role == "connector" for p in order], dtype=bool)
    n_conn = int(is_conn.sum())
    h[CONNECTORS] = f"{n_conn}/{len(order)}"
    bvals = np.zeros(n_conn)
    if n_conn and conn.idx.size:
        at, found = row_positions(conn.idx, rows[is_conn])
        bvals = np.where(found, np.asarray(conn.bridge_value, dtype=np.float64)[at], 0.0)
    h[BRIDGE] = _fmt2(float(np.mean(bvals)) if bvals.size else 0.0)
    available = _distinct(n_kb, result.candidates.idx, conn.idx)
    h[FACTS_USED] = f"{len(order)}/{available}"
    h[TOKENS_USED] = str(int(result.envelope.tokens_used))
    return h
