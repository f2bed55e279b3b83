"""Frames and figures of the Tuning page: sweep plots, envelope diffs and the comparison of two configs;
the before / after SPEC-027 view (:mod:`crp_ui.before_after_view`) is re-exported here. Pure functions of
crp_core records (no Streamlit), so the HTML report and the tests build exactly what the page shows. CKF
text reaching a plotly label is escaped (:func:`crp_ui.render.esc`); dataframes show it as plain text.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from crp_core import Comparison, KnowledgeBase, SweepResult

from .before_after_view import (
    RULE_COLOURS,
    RULE_ORDER,
    SIDE_COLOURS,
    SIDE_COLUMNS,
    before_after_bars,
    before_after_figures,
    before_after_frame,
    changes_frame,
    duplicates_frame,
    pairs_frame,
    recency_mix_figure,
    side_envelope_frame,
)
from .render import esc

#: sweep series: (column, legend name, subplot row, colour)
SWEEP_SERIES: tuple[tuple[str, str, int, str], ...] = (
    ("jaccard", "envelope overlap with the baseline (Jaccard)", 1, "#1f5fa8"),
    ("mean_recency", "mean recency of the envelope", 1, "#2e8b57"),
    ("conflicts_resolved", "conflicts resolved", 2, "#1b7f3b"),
    ("conflicts_unresolved", "conflicts unresolved (tied)", 2, "#b00020"),
    ("recency_penalised", "recency-penalised facts", 2, "#a15c00"),
    ("entering", "facts entering the envelope", 3, "#7b4fb3"),
    ("leaving", "facts leaving the envelope", 3, "#8c564b"),
)
#: default ranges by key: (start, stop)
SWEEP_RANGES = {
    "cdr_min_relevance": (0.30, 0.80),
    "contradiction_similarity": (0.70, 0.98),
    "stale_floor": (0.0, 0.9),
    "min_novelty_floor": (0.0, 0.6),
    "fresh_fraction": (0.1, 0.9),
    "coverage_penalty_cap": (0.2, 1.0),
    "envelope_fact_budget": (5, 40),
    "fanout_width": (0, 6),
    "token_budget": (256, 4096),
    "candidate_k": (10, 150),
    "max_hops": (1, 4),
    "graph_k": (5, 40),
    "graph_edge_min": (0.4, 0.9),
}


def default_range(key: str, current: object) -> tuple[float, float]:
    """The sweep range offered first for ``key`` (its current value ``current``)."""
    if key.startswith("ttl_days."):
        base = float(current) if isinstance(current, (int, float)) else 365.0
        return max(1.0, round(base * 0.1, 1)), round(base * 2.0, 1)
    if key.startswith(("source_authority.", "importance.")):
        return 0.1, 1.0
    if key in SWEEP_RANGES:
        return SWEEP_RANGES[key]
    c = float(current) if isinstance(current, (int, float)) and not isinstance(current, bool) else 1.0
    return (0.0, 1.0) if 0.0 <= c <= 1.0 else (max(1.0, c / 2), c * 2)


def value_label(v: object) -> str:
    """A configuration value as the page writes it: true / false, none, a float without trailing zeros."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "none"
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


# ---- sweep -------------------------------------------------------------------------------------
def sweep_frame(res: SweepResult) -> pd.DataFrame:
    """One row per sweep point (the values in the order given), the plotted metrics as columns."""
    rows = []
    for i, p in enumerate(res.points):
        m = p.metrics()
        m["point"] = i
        m["value"] = value_label(p.value)
        m["x"] = _x(p.value)
        rows.append(m)
    cols = [
        "point",
        "value",
        "x",
        "jaccard",
        "mean_recency",
        "conflicts_resolved",
        "conflicts_unresolved",
        "recency_penalised",
        "entering",
        "leaving",
        "envelope_size",
        "tokens_used",
        "elapsed_ms",
    ]
    return pd.DataFrame(rows, columns=cols)


def _x(v: object) -> object:
    if isinstance(v, bool):
        return int(v)
    if v is None:
        return math.inf
    return v


def sweep_figure(res: SweepResult, *, selected: int | None = None) -> go.Figure:
    """Three stacked panels against the swept value: rates (Jaccard, mean recency), counts (conflicts,
    recency-penalised), envelope churn (entering / leaving). The baseline value is a dashed line;
    each marker carries its point index (``customdata``) for click selection."""
    df = sweep_frame(res)
    fig = make_subplots(
        rows=3,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.06,
        subplot_titles=(
            "overlap and recency (0-1)",
            "conflicts and recency-penalised facts",
            "envelope churn vs the baseline",
        ),
    )
    finite = df[df["x"].apply(lambda x: isinstance(x, (int, float)) and math.isfinite(float(x)))]
    for col, name, row, colour in SWEEP_SERIES:
        fig.add_trace(
            go.Scatter(
                x=[float(x) for x in finite["x"]],
                y=[float(y) for y in finite[col]],
                mode="lines+markers",
                name=name,
                legendgroup=str(row),
                line=dict(color=colour),
                marker=dict(size=8),
                customdata=[int(i) for i in finite["point"]],
                hovertemplate=f"{esc(res.key)} = %{{x}}<br>{esc(name)}: %{{y}}<extra>point %{{customdata}}</extra>",
            ),
            row=row,
            col=1,
        )
    if selected is not None and selected in set(finite["point"]):
        sx = finite.loc[finite["point"] == selected, "x"].iloc[0]
        fig.add_vline(x=sx, line=dict(color="#b00020", width=2))
    bx = _x(res.baseline.value)
    if isinstance(bx, (int, float)) and math.isfinite(float(bx)):
        fig.add_vline(x=bx, line=dict(color="#555", dash="dash", width=1))
    fig.update_yaxes(range=[-0.02, 1.05], row=1, col=1)
    fig.update_xaxes(title_text=esc(res.key), row=3, col=1)
    fig.update_layout(
        height=640,
        margin=dict(l=10, r=10, t=100, b=10),
        clickmode="event+select",
        legend=dict(orientation="h", y=-0.12),
        title=dict(
            text=f"Sweep of {esc(res.key)} ({len(res.points)} values)<br><sup>dashed line: the baseline "
            f"{esc(value_label(res.baseline.value))} · red line: the point shown below</sup>",
            x=0.0,
            xanchor="left",
            font=dict(size=14),
        ),
    )
    fig.update_yaxes(rangemode="tozero", row=2, col=1)
    fig.update_yaxes(rangemode="tozero", row=3, col=1)
    return fig


def selected_point(event: object) -> int | None:
    """The sweep point index a ``st.plotly_chart(on_select=...)`` event selected (first point), if any."""
    if not event:
        return None
    sel = event.get("selection") if isinstance(event, Mapping) else getattr(event, "selection", None)
    if not sel:
        return None
    points = sel.get("points") if isinstance(sel, Mapping) else getattr(sel, "points", None)
    for p in points or ():
        cd = p.get("customdata") if isinstance(p, Mapping) else None
        if isinstance(cd, (list, tuple)):
            cd = cd[0] if cd else None
        if cd is not None:
            try:
                return int(cd)
            except (TypeError, ValueError):
                continue
    return None


def envelope_diff_frame(baseline_env: Sequence[str], env: Sequence[str], kb: KnowledgeBase) -> pd.DataFrame:
    """Every fact of either envelope: its change (entered / left / kept) and positions, then content."""
    b_pos = {f: i + 1 for i, f in enumerate(baseline_env)}
    e_pos = {f: i + 1 for i, f in enumerate(env)}
    rows = []
    for fid in list(env) + [f for f in baseline_env if f not in e_pos]:
        change = "kept" if fid in b_pos and fid in e_pos else ("entered" if fid in e_pos else "left")
        f = kb.get(fid)
        rows.append(
            {
                "change": change,
                "fact_id": fid,
                "baseline position": b_pos.get(fid),
                "position": e_pos.get(fid),
                "source_type": f.source_type if f else "",
                "content": f.content if f else "",
            }
        )
    order = {"entered": 0, "left": 1, "kept": 2}
    df = pd.DataFrame(rows, columns=["change", "fact_id", "baseline position", "position", "source_type", "content"])
    return df.sort_values(by="change", key=lambda s: s.map(order), kind="stable").reset_index(drop=True)


# ---- compare -----------------------------------------------------------------------------------
def envelopes_side_by_side(cmp: Comparison) -> pd.DataFrame:
    """Packed position -> the baseline's and the candidate's fact at that position."""
    n = max(len(cmp.base_envelope), len(cmp.cand_envelope))
    cand, base = set(cmp.cand_envelope), set(cmp.base_envelope)
    rows = []
    for i in range(n):
        b = cmp.base_envelope[i] if i < len(cmp.base_envelope) else ""
        c = cmp.cand_envelope[i] if i < len(cmp.cand_envelope) else ""
        rows.append(
            {
                "position": i + 1,
                "baseline": b,
                "baseline fact left": bool(b) and b not in cand,
                "candidate": c,
                "candidate fact entered": bool(c) and c not in base,
            }
        )
    return pd.DataFrame(
        rows, columns=["position", "baseline", "baseline fact left", "candidate", "candidate fact entered"]
    )


def fact_delta_frame(cmp: Comparison) -> pd.DataFrame:
    """Per scored fact: CDR rank and score in both runs, the deltas, the envelope change, the roles;
    rows that changed first (largest |score delta| first)."""
    rows = []
    for d in cmp.facts:
        b, c = d.base, d.cand
        rows.append(
            {
                "fact_id": d.fact_id,
                "envelope": d.envelope_change,
                "base rank": b.cdr_rank if b else None,
                "cand rank": c.cdr_rank if c else None,
                "rank delta": d.rank_delta,
                "base score": b.cdr_score if b else None,
                "cand score": c.cdr_score if c else None,
                "score delta": d.score_delta,
                "base recency": b.factors["recency_factor"] if b else None,
                "cand recency": c.factors["recency_factor"] if c else None,
                "base role": b.role if b else "(not scored)",
                "cand role": c.role if c else "(not scored)",
            }
        )
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    changed = (
        (df["envelope"].isin(["entered", "left"]))
        | (df["score delta"].fillna(1).abs() > 0)
        | (df["base role"] != df["cand role"])
    )
    df["_changed"] = ~changed
    df["_abs"] = -df["score delta"].fillna(0).abs()
    return df.sort_values(["_changed", "_abs"], kind="stable").drop(columns=["_changed", "_abs"]).reset_index(drop=True)


def flips_frame(cmp: Comparison) -> pd.DataFrame:
    """The contradiction pairs whose outcome differs between the two runs, with both authorities."""
    rows = [
        {
            "fact_a": f.fact_a,
            "fact_b": f.fact_b,
            "baseline outcome": f.base_outcome,
            "candidate outcome": f.cand_outcome,
            "baseline authority": ", ".join(f"{k} {v:.4f}" for k, v in f.base_authority.items()),
            "candidate authority": ", ".join(f"{k} {v:.4f}" for k, v in f.cand_authority.items()),
        }
        for f in cmp.flips
    ]
    return pd.DataFrame(
        rows,
        columns=[
            "fact_a",
            "fact_b",
            "baseline outcome",
            "candidate outcome",
            "baseline authority",
            "candidate authority",
        ],
    )


def config_diff_frame(diff: Mapping[str, tuple[object, object]]) -> pd.DataFrame:
    """The keys the two configs set differently: the baseline's value and the candidate's."""
    return pd.DataFrame(
        [{"key": k, "baseline": value_label(a), "candidate": value_label(b)} for k, (a, b) in diff.items()],
        columns=["key", "baseline", "candidate"],
    )


__all__ = [
    "RULE_COLOURS",
    "RULE_ORDER",
    "SIDE_COLOURS",
    "SIDE_COLUMNS",
    "SWEEP_RANGES",
    "SWEEP_SERIES",
    "before_after_bars",
    "before_after_figures",
    "before_after_frame",
    "changes_frame",
    "config_diff_frame",
    "default_range",
    "duplicates_frame",
    "envelope_diff_frame",
    "envelopes_side_by_side",
    "fact_delta_frame",
    "flips_frame",
    "pairs_frame",
    "recency_mix_figure",
    "selected_point",
    "side_envelope_frame",
    "sweep_figure",
    "sweep_frame",
    "value_label",
]
