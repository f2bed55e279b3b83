"""Frames of one pipeline run for the Overview, Graph and Envelope pages: the stage funnel and times,
the packed envelope, the connector candidates and the pairs they bridge, the data-quality warnings and how
tables mark suppressed and re-marked facts.

Pure functions of a :class:`~crp_core.PipelineResult` (no Streamlit); nothing is recomputed.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from crp_core import PipelineResult


def funnel_frame(result: PipelineResult) -> pd.DataFrame:
    """Stage funnel for the Overview: stage, count, pipeline stage, measured time (ms).

    candidates = stage-1 union; passed gate = relevance >= cdr_min_relevance; anchors = CDR anchors
    plus extra anchors; connectors = selected connectors; suppressed = contradiction losers; backfilled =
    facts that took a suppressed fact's slot; packed = facts in the envelope. The time is the measured wall
    time of the pipeline stage that produces the count.
    """
    t = dict(result.timings_ms)
    cand = result.candidates
    cdgr = result.cdgr
    rows = [
        ("candidates", int(len(cand.idx)), "1 candidates", t.get("candidates", np.nan)),
        ("passed gate", int(np.count_nonzero(cand.passed_gate)), "2 cdr", t.get("cdr", np.nan)),
        ("anchors", int(len(cdgr.anchors) + len(cdgr.extra_anchors)), "3 cdgr", t.get("cdgr", np.nan)),
        ("connectors", int(len(cdgr.selected_connectors)), "3 cdgr", t.get("cdgr", np.nan)),
        ("suppressed", int(len(result.resolution.suppressed)), "4 contradictions", t.get("contradictions", np.nan)),
        ("backfilled", int(len(result.resolution.backfilled)), "4 contradictions", t.get("contradictions", np.nan)),
        ("packed", int(len(result.envelope.order)), "6 packing", t.get("packing", np.nan)),
    ]
    return pd.DataFrame(rows, columns=["stage", "count", "pipeline stage", "time_ms"])


def timings_frame(result: PipelineResult) -> pd.DataFrame:
    """Every measured stage time, plus the total."""
    items = [(k, float(v)) for k, v in result.timings_ms.items()]
    items.append(("total", float(sum(v for _, v in items))))
    return pd.DataFrame(items, columns=["stage", "time_ms"])


def envelope_frame(result: PipelineResult) -> pd.DataFrame:
    """The packed envelope in order: position, band, tier (anchors only), role, fact, score, tokens,
    the first anchor a connector bridges (its placement reference, docs/reference/pipeline.md §6), source type and
    content."""
    kb = result.corpus.kb
    rows = []
    for k, p in enumerate(result.envelope.order, start=1):
        f = kb.get(p.fact_id)
        rows.append(
            {
                "position": k,
                "band": p.band,
                "tier": p.tier,
                "role": p.role,
                "fact_id": p.fact_id,
                "score": float(p.score),
                "tokens": int(p.tokens),
                "bridges_anchor": p.bridges_anchor,
                "source_type": f.source_type if f is not None else None,
                "content": f.content if f is not None else "",
            }
        )
    cols = [
        "position",
        "band",
        "tier",
        "role",
        "fact_id",
        "score",
        "tokens",
        "bridges_anchor",
        "source_type",
        "content",
    ]
    return pd.DataFrame(rows, columns=cols)


def tie_groups_frame(result: PipelineResult) -> pd.DataFrame:
    """One row per tie group of the envelope (docs/reference/pipeline.md §6), as ``Envelope.tie_groups``
    holds them (those with a NOTE block first, in text order): its facts, those packed (envelope order)
    and those left out with why, its tied pairs and the pairs its NOTE covers (the header's unresolved
    count)."""
    rows = [
        {
            "group": k,
            "facts": len(g.members),
            "packed": ", ".join(g.packed),
            "left out": ", ".join(f"{f} ({r})" for f, r in zip(g.left_out, g.left_out_reasons, strict=True)),
            "tied pairs": len(g.pairs),
            "pairs covered": len(g.packed_pairs),
            "NOTE tokens": int(g.note_tokens),
        }
        for k, g in enumerate(result.envelope.tie_groups, start=1)
    ]
    cols = ["group", "facts", "packed", "left out", "tied pairs", "pairs covered", "NOTE tokens"]
    return pd.DataFrame(rows, columns=cols)


def connectors_frame(result: PipelineResult, *, only_bridging: bool = True) -> pd.DataFrame:
    """Connector candidates of stage 3 (SPEC-025 §2.4): bridge value, score, hops, touched anchors,
    bridged pairs, selected. ``only_bridging`` keeps those with bridge value > 0."""
    kb = result.corpus.kb
    c = result.cdgr.connectors
    rows = []
    for i, r in enumerate(c.idx.tolist()):
        bv = float(c.bridge_value[i])
        if only_bridging and not bv > 0:
            continue
        rows.append(
            {
                "fact_id": kb.facts[r].fact_id,
                "selected": bool(c.selected[i]),
                "bridge_value": bv,
                "connector_score": float(c.connector_score[i]),
                "hop_distance": int(c.hop_distance[i]),
                "mean_path_weight": float(c.mean_path_weight[i]),
                "relevance": float(c.relevance[i]),
                "novelty": float(c.novelty[i]),
                "recency_factor": float(c.recency_factor[i]),
                "touched_anchors": [kb.facts[a].fact_id for a in c.touched_anchors[i]],
                "bridged_pairs": [(kb.facts[a].fact_id, kb.facts[b].fact_id) for a, b in c.bridged_pairs[i]],
            }
        )
    cols = [
        "fact_id",
        "selected",
        "bridge_value",
        "connector_score",
        "hop_distance",
        "mean_path_weight",
        "relevance",
        "novelty",
        "recency_factor",
        "touched_anchors",
        "bridged_pairs",
    ]
    df = pd.DataFrame(rows, columns=cols)
    return df.sort_values(
        ["selected", "connector_score", "fact_id"], ascending=[False, False, True], kind="mergesort"
    ).reset_index(drop=True)


def bridged_pairs_frame(result: PipelineResult, connector_id: str) -> pd.DataFrame:
    """The anchor pairs one connector bridges (no direct edge between them), with the anchors' texts."""
    kb = result.corpus.kb
    c = result.cdgr.connectors
    row = kb.index_of(connector_id)
    hits = np.flatnonzero(c.idx == row)
    cols = ["anchor_a", "anchor_b", "content_a", "content_b"]
    if hits.size == 0:
        return pd.DataFrame(columns=cols)
    i = int(hits[0])
    rows = [
        {
            "anchor_a": kb.facts[a].fact_id,
            "anchor_b": kb.facts[b].fact_id,
            "content_a": kb.facts[a].content,
            "content_b": kb.facts[b].content,
        }
        for a, b in c.bridged_pairs[i]
    ]
    return pd.DataFrame(rows, columns=cols)


def warnings_frame(result: PipelineResult) -> pd.DataFrame:
    """Data-quality warnings: those of this run (recency: future timestamps, unknown ages) and
    those the loader found in the CKF."""
    rows: list[dict[str, object]] = [
        {"origin": "pipeline (recency)", "line": None, "field": None, "fact_id": None, "message": w}
        for w in result.warnings
    ]
    kb = result.corpus.kb
    for p in kb.warnings:
        rows.append(
            {
                "origin": "CKF loader",
                "line": p.line or None,
                "field": p.field,
                "fact_id": p.fact_id,
                "message": p.message,
            }
        )
    return pd.DataFrame(rows, columns=["origin", "line", "field", "fact_id", "message"])


def fact_marks(result: PipelineResult, operator_statuses: Mapping[str, str] | None = None) -> dict[str, str]:
    """fact id -> how a table marks it: "suppressed" (a stage-4 loser of this run) and / or
    "<STATUS> (operator)" (a status an operator set; ``operator_statuses`` holds only those that
    differ from the CKF). Facts with neither are absent."""
    kb = result.corpus.kb
    marks: dict[str, list[str]] = {}
    for r in np.asarray(result.resolution.suppressed).tolist():
        marks.setdefault(kb.facts[int(r)].fact_id, []).append("suppressed")
    for fid, status in sorted((operator_statuses or {}).items()):
        marks.setdefault(fid, []).append(f"{status} (operator)")
    return {fid: " · ".join(m) for fid, m in marks.items()}


def with_marks(
    df: pd.DataFrame, marks: Mapping[str, str], *, column: str = "fact_id", name: str = "mark"
) -> pd.DataFrame:
    """A copy of ``df`` with a ``name`` column right after ``column``: each row's mark ("" when none)."""
    out = df.copy()
    values = [marks.get(v, "") if isinstance(v, str) else "" for v in out[column]]
    out.insert(list(out.columns).index(column) + 1, name, pd.Series(values, index=out.index, dtype=object))
    return out
