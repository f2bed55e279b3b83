"""The Graph page's network as frames (SPEC-025): the nodes (anchors, connectors, connector candidates)
and edges of a run, its stage-4 contradictions, and the producer's own edges of an SDK snapshot. Read off a
:class:`~crp_core.PipelineResult` and the CKF; no score is recomputed."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from crp_core import KnowledgeBase, PipelineResult, given_edges

from .conflict_case import arbitration_label

NODE_COLUMNS = (
    "row",
    "fact_id",
    "kind",
    "cdr_score",
    "bridge_value",
    "connector_score",
    "in_envelope",
    "suppressed",
    "operator_status",
    "content",
)


def _node_rows(result: PipelineResult, include_candidates: bool) -> dict[int, str]:
    """Fact row -> node kind: anchors (and extra anchors), selected connectors, and with
    ``include_candidates`` the connector candidates with bridge value > 0."""
    cdgr = result.cdgr
    rows: dict[int, str] = {}
    for r in np.concatenate([cdgr.anchors, cdgr.extra_anchors]).tolist():
        rows[int(r)] = "anchor"
    for r in cdgr.selected_connectors.tolist():
        rows.setdefault(int(r), "connector")
    if include_candidates:
        conn = cdgr.connectors
        for i, r in enumerate(conn.idx.tolist()):
            if conn.bridge_value[i] > 0:
                rows.setdefault(int(r), "candidate")
    return rows


def _node_frame(result: PipelineResult, rows: Mapping[int, str], marked: Mapping[str, str]) -> pd.DataFrame:
    kb = result.corpus.kb
    cdr, conn = result.cdr, result.cdgr.connectors
    cdr_pos = {int(r): i for i, r in enumerate(cdr.idx.tolist())}
    conn_pos = {int(r): i for i, r in enumerate(conn.idx.tolist())}
    in_env = {p.fact_id for p in result.envelope.order}
    suppressed = set(np.asarray(result.resolution.suppressed).tolist())
    nodes = []
    for r, kind in rows.items():
        f = kb.facts[r]
        ci = conn_pos.get(r)
        nodes.append(
            {
                "row": r,
                "fact_id": f.fact_id,
                "kind": kind,
                "cdr_score": float(cdr.cdr_score[cdr_pos[r]]) if r in cdr_pos else np.nan,
                "bridge_value": float(conn.bridge_value[ci]) if ci is not None else np.nan,
                "connector_score": float(conn.connector_score[ci]) if ci is not None else np.nan,
                "in_envelope": f.fact_id in in_env,
                "suppressed": r in suppressed,
                "operator_status": marked.get(f.fact_id, ""),
                "content": f.content,
            }
        )
    return pd.DataFrame(nodes, columns=list(NODE_COLUMNS))


def cdgr_elements(
    result: PipelineResult, *, include_candidates: bool = False, operator_statuses: Mapping[str, str] | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Nodes and edges of the CDGR picture.

    Nodes: anchors (+ extra anchors), selected connectors and, with ``include_candidates``, the
    connector candidates with bridge value > 0; ``operator_status`` is the status an operator gave
    the fact (``operator_statuses``: fact id -> status, only those that differ from the CKF), ""
    when none. Edges: the pipeline's ``graph_edges`` (among anchors and selected connectors) and,
    for candidates, the similarity-graph edges among the drawn nodes
    (``corpus.graph(config).edges(rows)``, weight = cosine).
    """
    kb = result.corpus.kb
    rows = _node_rows(result, include_candidates)
    node_df = _node_frame(result, rows, dict(operator_statuses or {}))
    edges: dict[tuple[int, int], float] = {}
    for a, b, w in result.cdgr.graph_edges:
        edges[(min(a, b), max(a, b))] = float(w)
    if include_candidates and len(rows) > 1:
        ra, rb, ws = result.corpus.graph(result.config).edges(np.array(sorted(rows), dtype=np.int64))
        for a, b, w in zip(ra.tolist(), rb.tolist(), np.asarray(ws).tolist()):
            edges.setdefault((min(a, b), max(a, b)), float(w))
    edge_df = pd.DataFrame(
        [
            {"a": kb.facts[a].fact_id, "b": kb.facts[b].fact_id, "weight": w}
            for (a, b), w in sorted(edges.items())
            if a in rows and b in rows
        ],
        columns=["a", "b", "weight"],
    )
    return node_df, edge_df


def contradiction_edges(result: PipelineResult) -> pd.DataFrame:
    """The run's stage-4 pairs (SPEC-027 §2) as edges ``a``, ``b``, ``outcome`` (the arbitration's
    label: "<id> wins", "tie", "dismissed", "override: <id> wins"; "skipped" for a pair a fact of
    which an earlier pair already suppressed)."""
    rows = [
        {"a": p.fact_a, "b": p.fact_b, "outcome": "skipped" if p.skipped else arbitration_label(p)}
        for p in result.resolution.pairs
    ]
    return pd.DataFrame(rows, columns=["a", "b", "outcome"])


def given_edges_frame(kb: KnowledgeBase) -> pd.DataFrame:
    """The producer's edges of the CKF (an SDK snapshot's, :func:`crp_core.given_edges`) as
    ``a``, ``b``, ``relation_type``, ``confidence``: not similarity edges, drawn as given."""
    rows = [
        {
            "a": e.source_id,
            "b": e.target_id,
            "relation_type": e.relation_type,
            "confidence": e.confidence,
            "edge_id": e.edge_id,
        }
        for e in given_edges(kb)
    ]
    return pd.DataFrame(rows, columns=["a", "b", "relation_type", "confidence", "edge_id"])
