"""Pipeline records -> pandas DataFrames for the dashboard pages, one name space for the pages.

Pure functions of a :class:`~crp_core.PipelineResult`: no Streamlit, no score is recomputed. The breakdown
table is built from the report's columns (:func:`crp_core.fact_columns`, the CLI's ``--json`` rows,
docs/reference/reports.md), so the dashboard, its CSV download and the CLI report show the same numbers. Frames are
memoised per result object (results are immutable and cached by the shell), so a rerun that only changes a
filter does not rebuild them. The frames of a run's other views live in :mod:`crp_ui.run_frames`,
re-exported here.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from crp_core import Digest, PipelineResult, WeakMemo, csv_cell, fact_columns, run_report

from .run_frames import (
    bridged_pairs_frame,
    connectors_frame,
    envelope_frame,
    fact_marks,
    funnel_frame,
    tie_groups_frame,
    timings_frame,
    warnings_frame,
    with_marks,
)

_T = TypeVar("_T")

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

#: product steps of the CDR score (docs/reference/pipeline.md §2): (label, column, how the column enters)
CDR_STEPS: tuple[tuple[str, str, str], ...] = (
    ("importance weight", "importance_weight", "start"),
    ("effective relevance = max(relevance, residual pull)", "effective_relevance", "times"),
    ("novelty = max(1 - coverage penalty, floor)", "novelty", "times"),
    ("recency factor", "recency_factor", "times"),
    ("1 - n-gram penalty", "ngram_penalty", "one_minus"),
)

#: values derived from one result object, held as long as the result lives (results are immutable): its
#: report, its breakdown frame, and the figures and frames of :func:`memo` (at most ``MEMO_PER_RESULT``)
MEMO_PER_RESULT = 32
_REPORTS: WeakMemo[PipelineResult, None, dict[str, Any]] = WeakMemo(1)
_FRAMES: WeakMemo[PipelineResult, None, pd.DataFrame] = WeakMemo(1)
_MEMO: WeakMemo[PipelineResult, Hashable, Any] = WeakMemo(MEMO_PER_RESULT)


def memo(result: PipelineResult, key: Hashable, build: Callable[[], _T]) -> _T:
    """``build()`` once per (result object, key): figures and frames derived from an immutable
    result are rebuilt only when their parameters change (the ``MEMO_PER_RESULT`` last used are kept per
    result; a ``None`` value is not kept). Callers must not mutate what they get back."""
    got: _T = _MEMO.get_or_build(result, key, build)
    return got


def frame_digest(frame: pd.DataFrame, columns: Iterable[str]) -> str:
    """A digest of ``frame[columns]``'s values in row order (names, dtypes and row count included): a key
    of the process-wide figure memo (``cache.memo_shared``), never stored."""
    cols = list(columns)
    d = Digest(repr((cols, [str(frame[c].dtype) for c in cols], len(frame))))
    for c in cols:
        col = frame[c]
        if isinstance(col.dtype, np.dtype) and col.dtype.kind in "biuf":  # plain numbers: their bytes
            d.update(np.ascontiguousarray(col.to_numpy()).data)  # the memoryview of its buffer
        else:  # text, objects, nullable numbers: each value's repr (None, NaN and "None" stay apart)
            d.update("\x1f".join(map(repr, col.tolist())).encode("utf-8", "surrogatepass"))
        d.update(b"\x1e")
    return d.hex()


def report_of(result: PipelineResult) -> dict[str, Any]:
    """:func:`crp_core.run_report` of ``result``, computed once per result object."""
    return _REPORTS.get_or_build(result, None, lambda: run_report(result))


def outcome_of(row: dict[str, Any]) -> str:
    """Where a fact ended: in envelope, suppressed (contradiction loser), dropped for the token
    budget, gated (relevance below the gate), else not selected."""
    return _outcome(
        row.get("in_envelope"),
        row.get("suppressed"),
        row.get("reason", ""),
        row.get("role"),
        row.get("passed_gate", True),
    )


def _outcome(in_envelope: object, suppressed: object, reason: object, role: object, passed_gate: object) -> str:
    if in_envelope:
        return "in envelope"
    if suppressed:
        return "suppressed"
    if str(reason).startswith("selected but dropped"):
        return "dropped (budget)"
    if role == "gated" or not passed_gate:
        return "gated"
    return "not selected"


#: the breakdown frame's float columns (None -> NaN)
FLOAT_COLUMNS = (
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


def breakdown_frame(result: PipelineResult) -> pd.DataFrame:
    """One row per scored fact (stage-1 candidates, then stage-3 connector candidates) with every
    factor, as in the JSON report (``facts``), plus ``outcome`` (:func:`build_breakdown_frame`), built once
    per result object. Read-only: do not mutate it."""
    return _FRAMES.get_or_build(result, None, lambda: build_breakdown_frame(result))


def build_breakdown_frame(result: PipelineResult) -> pd.DataFrame:
    """The breakdown frame of ``result``, built from the report's columns (:func:`crp_core.fact_columns`),
    each in its final dtype, in one ``DataFrame`` call (no per-fact row dicts)."""
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
        if col in FLOAT_COLUMNS:
            cols[col] = _floats(values)
        elif col == "ngram_overlap":
            cols[col] = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce").fillna(0).astype("int64")
        elif col == "position":
            cols[col] = pd.array([np.nan if v is None else v for v in values], dtype="Int64")
        else:
            cols[col] = pd.Series(values, dtype=object) if empty else values
    return pd.DataFrame(cols, columns=names)


def breakdown_csv(result: PipelineResult) -> str:
    """The breakdown table as CSV text (:func:`safe_csv`)."""
    return safe_csv(breakdown_frame(result))


def safe_csv(frame: pd.DataFrame) -> str:
    """A table as CSV text for a spreadsheet: lists joined with ';', floats unrounded, text cells a spreadsheet
    would read as a formula neutralised by :func:`crp_core.csv_cell`, numbers kept as numbers."""
    df = frame.copy()
    for col in df.columns:
        if not pd.api.types.is_numeric_dtype(df[col]):  # text and list columns (object or str dtype)
            df[col] = df[col].map(lambda v: csv_cell(_cell(v)))
    return str(df.to_csv(index=False))


def _cell(v: object) -> object:
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


def cdr_steps(row: pd.Series[Any]) -> pd.DataFrame:
    """The CDR product of one breakdown row, factor by factor (docs/reference/pipeline.md §2).

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


__all__ = [
    "BREAKDOWN_COLUMNS",
    "CDR_STEPS",
    "FLOAT_COLUMNS",
    "MEMO_PER_RESULT",
    "OUTCOMES",
    "breakdown_csv",
    "breakdown_frame",
    "bridged_pairs_frame",
    "build_breakdown_frame",
    "cdr_steps",
    "connectors_frame",
    "frame_digest",
    "envelope_frame",
    "fact_marks",
    "filter_breakdown",
    "funnel_frame",
    "memo",
    "n_pages",
    "outcome_of",
    "page_of",
    "report_of",
    "sort_breakdown",
    "tie_groups_frame",
    "timings_frame",
    "warnings_frame",
    "with_marks",
]
