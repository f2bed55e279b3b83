"""Pipeline records -> pandas DataFrames for the dashboard pages.

Pure functions of a :class:`crp_core.records.PipelineResult`: no Streamlit, no score is
recomputed. The breakdown table is built from ``crp_core.report.run_report`` (the CLI's
``--json`` rows, SPEC_NOTES §4), so the dashboard, its CSV download and the CLI report show the
same numbers. Frames are memoised per result object (results are immutable and cached by the
shell), so a rerun that only changes a filter does not rebuild them.
"""

from __future__ import annotations

import hashlib
import weakref
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

#: outcome labels (the "in envelope / suppressed / gated" column of the breakdown table)
OUTCOMES: tuple[str, ...] = ("in envelope", "suppressed", "dropped (budget)", "not selected", "gated")

#: breakdown columns in display order (names as in the JSON report, plus ``outcome``)
BREAKDOWN_COLUMNS: tuple[str, ...] = (
    "fact_id",
    "role",
    "outcome",
    "cdr_score",
    "importance_weight",
    "relevance",
    "residual_pull",
    "effective_relevance",
    "coverage_score",
    "coverage_penalty",
    "novelty",
    "recency_factor",
    "age_days",
    "ttl_days",
    "ttl_source",
    "recency_rule",
    "ngram_overlap",
    "ngram_penalty",
    "bridge_value",
    "connector_score",
    "in_envelope",
    "suppressed",
    "passed_gate",
    "position",
    "source_type",
    "status",
    "reason",
    "content",
)

#: product steps of the CDR score (SPEC_NOTES §2.4): (label, column, how the column enters)
CDR_STEPS: tuple[tuple[str, str, str], ...] = (
    ("importance weight", "importance_weight", "start"),
    ("effective relevance = max(relevance, residual pull)", "effective_relevance", "times"),
    ("novelty = max(1 - coverage penalty, floor)", "novelty", "times"),
    ("recency factor", "recency_factor", "times"),
    ("1 - n-gram penalty", "ngram_penalty", "one_minus"),
)

_REPORTS: weakref.WeakKeyDictionary[Any, dict] = weakref.WeakKeyDictionary()
_MEMO: weakref.WeakKeyDictionary[Any, dict] = weakref.WeakKeyDictionary()
MEMO_PER_RESULT = 32


def memo(result: Any, key: Any, build: Callable[[], Any]) -> Any:
    """``build()`` once per (result object, key): figures and frames derived from an immutable
    result are rebuilt only when their parameters change (at most ``MEMO_PER_RESULT`` per result).
    Callers must not mutate what they get back."""
    store = _MEMO.get(result)
    if store is None:
        store = {}
        _MEMO[result] = store
    if key in store:
        return store[key]
    value = build()
    if len(store) >= MEMO_PER_RESULT:
        store.pop(next(iter(store)))
    store[key] = value
    return value


def content_digest(frame: pd.DataFrame, columns: Iterable[str]) -> str:
    """A digest of ``frame[columns]``'s values in row order (names, dtypes and row count included)."""
    cols = list(columns)
    h = hashlib.sha1(repr((cols, [str(frame[c].dtype) for c in cols], len(frame))).encode())
    for c in cols:
        col = frame[c]
        if isinstance(col.dtype, np.dtype) and col.dtype.kind in "biuf":  # plain numbers: their bytes
            h.update(np.ascontiguousarray(col.to_numpy()).tobytes())
        else:  # text, objects, nullable numbers: each value's repr (None, NaN and "None" stay apart)
            h.update("\x1f".join(map(repr, col.tolist())).encode("utf-8", "surrogatepass"))
        h.update(b"\x1e")
    return h.hexdigest()


_FRAMES: weakref.WeakKeyDictionary[Any, pd.DataFrame] = weakref.WeakKeyDictionary()


def report_of(result: Any) -> dict:
    """``crp_core.report.run_report(result)``, computed once per result object."""
    got = _REPORTS.get(result)
    if got is None:
        from crp_core.report import run_report

        got = run_report(result)
        _REPORTS[result] = got
    return got


def outcome_of(row: dict) -> str:
    """Where a fact ended: in envelope, suppressed (contradiction loser), dropped for the token
    budget, gated (relevance below the gate), else not selected."""
    return _outcome(
        row.get("in_envelope"),
        row.get("suppressed"),
        row.get("reason", ""),
        row.get("role"),
        row.get("passed_gate", True),
    )


def _outcome(in_envelope: Any, suppressed: Any, reason: Any, role: Any, passed_gate: Any) -> str:
    if in_envelope:
        return "in envelope"
    if suppressed:
        return "suppressed"
    if str(reason).startswith("selected but dropped"):
        return "dropped (budget)"
    if role == "gated" or not passed_gate:
        return "gated"
    return "not selected"


#: the breakdown frame's float columns (None -> NaN) and its integer ones
_FLOAT_COLUMNS = (
    "cdr_score",
    "importance_weight",
    "relevance",
    "residual_pull",
    "effective_relevance",
    "coverage_score",
    "coverage_penalty",
    "novelty",
    "recency_factor",
    "age_days",
    "ttl_days",
    "ngram_penalty",
    "bridge_value",
    "connector_score",
)


def _floats(values: list[Any]) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in values], dtype=np.float64)


def breakdown_frame(result: Any) -> pd.DataFrame:
    """One row per scored fact (stage-1 candidates, then stage-3 connector candidates) with every
    factor, as in the JSON report (``facts``), plus ``outcome``. Read-only: do not mutate it.

    Built from the report's columns (``crp_core.report.fact_columns``), each in its final dtype, in one
    ``DataFrame`` call: no per-fact row dicts (a frame from a list of dicts, then converted column by
    column, cost most of a config change's table time)."""
    got = _FRAMES.get(result)
    if got is not None:
        return got
    from crp_core import fact_columns

    fields = fact_columns(result)  # the report's own columns: its rows (the JSON download) never get the outcome
    fields["outcome"] = [
        _outcome(*v)
        for v in zip(
            fields["in_envelope"], fields["suppressed"], fields["reason"], fields["role"], fields["passed_gate"]
        )
    ]
    empty = not fields["fact_id"]
    names = list(BREAKDOWN_COLUMNS) + ([] if empty else [c for c in fields if c not in BREAKDOWN_COLUMNS])
    cols: dict[str, Any] = {}
    for col in names:
        values = fields[col]
        if col in _FLOAT_COLUMNS:
            cols[col] = _floats(values)
        elif col == "ngram_overlap":
            cols[col] = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce").fillna(0).astype("int64")
        elif col == "position":
            cols[col] = pd.array([np.nan if v is None else v for v in values], dtype="Int64")
        else:
            cols[col] = pd.Series(values, dtype=object) if empty else values
    df = pd.DataFrame(cols, columns=names)
    _FRAMES[result] = df
    return df


def breakdown_csv(result: Any) -> str:
    """The breakdown table as CSV text (lists joined with ';', floats unrounded)."""
    df = breakdown_frame(result).copy()
    for col in df.columns:
        if df[col].dtype == object:
            df[col] = df[col].map(_cell)
    return df.to_csv(index=False)


def _cell(v: Any) -> Any:
    if isinstance(v, (list, tuple)):
        return ";".join("-".join(map(str, x)) if isinstance(x, (list, tuple)) else str(x) for x in v)
    return v


def filter_breakdown(
    df: pd.DataFrame,
    *,
    roles: Iterable[str] | None = None,
    outcomes: Iterable[str] | None = None,
    source_types: Iterable[str] | None = None,
    text: str = "",
    min_cdr: float | None = None,
) -> pd.DataFrame:
    """Rows matching every given filter (empty / None filter = no constraint). ``text`` matches
    the fact id or the content, case-insensitively, as a plain substring (never a regex)."""
    mask = np.ones(len(df), dtype=bool)
    if roles:
        mask &= df["role"].isin(list(roles)).to_numpy()
    if outcomes:
        mask &= df["outcome"].isin(list(outcomes)).to_numpy()
    if source_types:
        mask &= df["source_type"].isin(list(source_types)).to_numpy()
    if text:
        t = text.lower()
        mask &= (
            df["fact_id"].str.lower().str.contains(t, regex=False)
            | df["content"].str.lower().str.contains(t, regex=False)
        ).to_numpy()
    if min_cdr is not None:
        mask &= (df["cdr_score"] >= min_cdr).to_numpy()
    return df[mask]


def sort_breakdown(df: pd.DataFrame, column: str, descending: bool = True) -> pd.DataFrame:
    """Stable sort over all rows (NaN last), ties by fact id."""
    if column not in df.columns:
        raise KeyError(column)
    return df.sort_values([column, "fact_id"], ascending=[not descending, True], na_position="last", kind="mergesort")


def page_of(df: pd.DataFrame, page: int, page_size: int) -> pd.DataFrame:
    """Rows of 1-based ``page`` (clamped into range)."""
    n_pages = max(1, -(-len(df) // page_size))
    page = min(max(1, int(page)), n_pages)
    return df.iloc[(page - 1) * page_size : page * page_size]


def n_pages(n_rows: int, page_size: int) -> int:
    return max(1, -(-int(n_rows) // int(page_size)))


def cdr_steps(row: Any) -> pd.DataFrame:
    """The CDR product of one breakdown row, factor by factor (SPEC_NOTES §2.4).

    Columns: ``step``, ``factor`` (the stored factor value), ``multiplier`` (what the running
    product is multiplied by), ``running_product``. The last row is the stored ``cdr_score``;
    the running product of the stored factors equals it up to float rounding.
    """
    out = []
    running = None
    for label, col, kind in CDR_STEPS:
        v = float(row[col])
        mult = 1.0 - v if kind == "one_minus" else v
        running = mult if running is None else running * mult
        out.append(
            {
                "step": label if kind != "one_minus" else f"{label} (penalty {v:.4f})",
                "factor": v,
                "multiplier": mult,
                "running_product": running,
            }
        )
    out.append(
        {
            "step": "CDR score (stored)",
            "factor": float(row["cdr_score"]),
            "multiplier": np.nan,
            "running_product": float(row["cdr_score"]),
        }
    )
    return pd.DataFrame(out)


def funnel_frame(result: Any) -> pd.DataFrame:
    """Stage funnel for the Overview: stage, count, pipeline stage, measured time (ms).

    candidates = stage-1 union; passed gate = relevance >= cdr_min_relevance; anchors = CDR anchors
    plus extra anchors; connectors = selected connectors; suppressed = contradiction losers;
    packed = facts in the envelope. The time is the measured wall time of the pipeline stage that
    produces the count.
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
        ("packed", int(len(result.envelope.order)), "6 packing", t.get("packing", np.nan)),
    ]
    return pd.DataFrame(rows, columns=["stage", "count", "pipeline stage", "time_ms"])


def timings_frame(result: Any) -> pd.DataFrame:
    """Every measured stage time, plus the total."""
    items = [(k, float(v)) for k, v in result.timings_ms.items()]
    items.append(("total", float(sum(v for _, v in items))))
    return pd.DataFrame(items, columns=["stage", "time_ms"])


def envelope_frame(result: Any) -> pd.DataFrame:
    """The packed envelope in order: position, band, tier (anchors only), role, fact, score, tokens,
    the first anchor a connector bridges (its placement reference, SPEC_NOTES §2.8), source type and
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
                "source_type": getattr(f, "source_type", None),
                "content": getattr(f, "content", ""),
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


def connectors_frame(result: Any, *, only_bridging: bool = True) -> pd.DataFrame:
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


def bridged_pairs_frame(result: Any, connector_id: str) -> pd.DataFrame:
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


def warnings_frame(result: Any) -> pd.DataFrame:
    """Data-quality warnings: those of this run (recency: future timestamps, unknown ages) and
    those the loader found in the CKF."""
    rows = [
        {"origin": "pipeline (recency)", "line": None, "field": None, "fact_id": None, "message": w}
        for w in result.warnings
    ]
    kb = result.corpus.kb
    for p in getattr(kb, "warnings", ()):
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


def fact_marks(result: Any, operator_statuses: Mapping[str, str] | None = None) -> dict[str, str]:
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
