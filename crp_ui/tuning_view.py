"""Frames and figures of the Tuning page: sweep plots, envelope diffs, config comparison and
the before / after SPEC-027 view. Pure functions of crp_core records (no Streamlit), so the HTML report
and the tests build exactly what the page shows. CKF text reaching a plotly label is escaped
(:func:`crp_ui.render.esc`); dataframes show it as plain text.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

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
SIDE_COLOURS = {"SPEC-024 only": "#9aa5b1", "SPEC-027": "#1f5fa8"}
RULE_ORDER = ("fresh", "decay", "expired", "stale_status", "timeless", "user_provided", "unknown_age", "future")
RULE_COLOURS = {
    "fresh": "#2e8b57",
    "decay": "#e0b000",
    "expired": "#b00020",
    "stale_status": "#a15c00",
    "timeless": "#1f5fa8",
    "user_provided": "#7b4fb3",
    "unknown_age": "#9aa5b1",
    "future": "#555555",
}


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


def default_range(key: str, current: Any) -> tuple[float, float]:
    """The sweep range offered first for ``key`` (its current value ``current``)."""
    if key.startswith("ttl_days."):
        base = 365.0 if current is None else float(current)
        return max(1.0, round(base * 0.1, 1)), round(base * 2.0, 1)
    if key.startswith(("source_authority.", "importance.")):
        return 0.1, 1.0
    if key in SWEEP_RANGES:
        return SWEEP_RANGES[key]
    c = float(current) if isinstance(current, (int, float)) and not isinstance(current, bool) else 1.0
    return (0.0, 1.0) if 0.0 <= c <= 1.0 else (max(1.0, c / 2), c * 2)


def value_label(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "none"
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


# ---- sweep -------------------------------------------------------------------------------------
def sweep_frame(res: Any) -> pd.DataFrame:
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


def _x(v: Any) -> Any:
    if isinstance(v, bool):
        return int(v)
    if v is None:
        return math.inf
    return v


def sweep_figure(res: Any, *, selected: int | None = None) -> go.Figure:
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


def selected_point(event: Any) -> int | None:
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


def envelope_diff_frame(baseline_env: Sequence[str], env: Sequence[str], kb: Any) -> pd.DataFrame:
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
def envelopes_side_by_side(cmp: Any) -> pd.DataFrame:
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


def fact_delta_frame(cmp: Any) -> pd.DataFrame:
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


def flips_frame(cmp: Any) -> pd.DataFrame:
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


def config_diff_frame(diff: Mapping[str, tuple[Any, Any]]) -> pd.DataFrame:
    return pd.DataFrame(
        [{"key": k, "baseline": value_label(a), "candidate": value_label(b)} for k, (a, b) in diff.items()],
        columns=["key", "baseline", "candidate"],
    )


# ---- before / after ----------------------------------------------------------------------------
def before_after_frame(ba: Any) -> pd.DataFrame:
    df = pd.DataFrame(ba.rows())
    return df.astype({"SPEC-024 only": str, "SPEC-027": str})


def side_envelope_frame(ba: Any, side: Any, other_env: Sequence[str]) -> pd.DataFrame:
    """One side's envelope in packed order: each fact's text, its SPEC-027 recency state and factor, and
    whether it is in a contradictory pair, named by a fan-out duplicate, or only on this side."""
    kb = ba.full.corpus.kb
    in_pair = {f for p in side.contradictory_pairs for f in p}
    dups = set(side.packed_duplicate_facts)
    other = set(other_env)
    rows = []
    for i, fid in enumerate(side.envelope):
        f = kb.get(fid)
        rows.append(
            {
                "#": i + 1,
                "fact_id": fid,
                "content": f.content if f else "",
                "recency": ba.recency_state(fid),
                "SPEC-027 recency": ba.spec027_recency.get(fid, 1.0),
                "in a contradictory pair": fid in in_pair,
                "fan-out duplicate": fid in dups,
                "only on this side": fid not in other,
                "status": f.status if f else "",
            }
        )
    return pd.DataFrame(rows, columns=SIDE_COLUMNS)


SIDE_COLUMNS = [
    "#",
    "fact_id",
    "content",
    "recency",
    "SPEC-027 recency",
    "in a contradictory pair",
    "fan-out duplicate",
    "only on this side",
    "status",
]


def changes_frame(changes: Sequence[Any]) -> pd.DataFrame:
    """Facts that left (or entered) the envelope: id, text, kind, why, tokens."""
    return pd.DataFrame(
        [
            {"fact_id": c.fact_id, "content": c.content, "kind": c.kind, "why": c.reason, "tokens": c.tokens}
            for c in changes
        ],
        columns=["fact_id", "content", "kind", "why", "tokens"],
    )


def pairs_frame(ba: Any, side: Any) -> pd.DataFrame:
    """One side's contradictory pairs handed to the model, with both texts."""
    kb = ba.full.corpus.kb
    noted = set(side.noted_pairs)

    def text(fid: str) -> str:
        f = kb.get(fid)
        return f.content if f else ""

    return pd.DataFrame(
        [
            {"fact_a": a, "text a": text(a), "fact_b": b, "text b": text(b), "NOTE block": (a, b) in noted}
            for a, b in side.contradictory_pairs
        ],
        columns=["fact_a", "text a", "fact_b", "text b", "NOTE block"],
    )


def duplicates_frame(ba: Any, side: Any) -> pd.DataFrame:
    """One side's fan-out duplicates: the facts (with text), the branches, whether packed."""
    kb = ba.full.corpus.kb
    packed = set(side.envelope)
    rows = []
    for d in side.duplicates:
        texts = [kb.get(f).content if kb.get(f) else "" for f in d.fact_ids]
        rows.append(
            {
                "facts": " ~ ".join(d.fact_ids),
                "content": " / ".join(texts),
                "branches": ", ".join(str(b) for b in d.branches),
                "similarity": float(d.similarity),
                "in the envelope": ", ".join(f for f in d.fact_ids if f in packed),
            }
        )
    return pd.DataFrame(rows, columns=["facts", "content", "branches", "similarity", "in the envelope"])


def before_after_bars(ba: Any) -> go.Figure:
    """Grouped bars: expired facts, ageing facts, contradictory pairs and fan-out duplicates, SPEC-024 only
    vs SPEC-027 (the same numbers as ``BeforeAfter.rows``)."""
    measures = [
        "expired facts<br>in the envelope",
        "ageing facts<br>in the envelope",
        "contradictory pairs<br>handed to the model",
        "fan-out<br>duplicates",
    ]
    b, a = ba.before, ba.after
    vals = {
        s.label: [
            len(s.expired_in_envelope),
            len(s.ageing_in_envelope),
            len(s.contradictory_pairs),
            s.fanout_duplicates or 0,
        ]
        for s in (b, a)
    }
    fig = go.Figure()
    for side, ys in vals.items():
        fig.add_trace(
            go.Bar(
                x=measures,
                y=ys,
                name=side,
                marker_color=SIDE_COLOURS[side],
                text=ys,
                textposition="outside",
                hovertemplate="%{y}<extra>" + side + "</extra>",
            )
        )
    top = max([1] + vals["SPEC-024 only"] + vals["SPEC-027"])
    fig.update_yaxes(
        range=[0, top * 1.25 + 0.5], title_text="count", dtick=1 if top <= 10 else None, tickformat="d", automargin=True
    )
    note = "" if b.fanout_duplicates is not None else " (no fan-out in this scenario)"
    fig.update_xaxes(tickangle=0)
    fig.update_layout(
        barmode="group",
        height=380,
        margin=dict(l=60, r=10, t=50, b=10),
        legend=dict(orientation="h", y=-0.18),
        title=dict(text="What reaches the model" + note, x=0.0, xanchor="left"),
    )
    return fig


def recency_mix_figure(ba: Any) -> go.Figure:
    """Stacked bars: the envelope's facts by the SPEC-027 §3.2 recency rule that applies to them."""
    fig = go.Figure()
    sides = [("SPEC-024 only", ba.before.envelope), ("SPEC-027", ba.after.envelope)]
    kb = ba.full.corpus.kb
    for rule in RULE_ORDER:
        ys = []
        for _side, env in sides:
            ys.append(sum(1 for f in env if ba.recency_rule.get(f) == rule))
        if not any(ys):
            continue
        fig.add_trace(
            go.Bar(
                x=[s for s, _ in sides],
                y=ys,
                name=rule,
                marker_color=RULE_COLOURS[rule],
                hovertemplate="%{x}: %{y} fact(s)<extra>" + rule + "</extra>",
            )
        )
    del kb
    n = max(len(ba.before.envelope), len(ba.after.envelope), 1)
    fig.update_yaxes(dtick=1 if n <= 10 else None, tickformat="d", automargin=True)
    fig.update_layout(
        barmode="stack",
        height=380,
        margin=dict(l=60, r=10, t=50, b=10),
        legend=dict(orientation="h", y=-0.18),
        yaxis_title="facts in the envelope",
        title=dict(text="Envelope facts by SPEC-027 recency rule", x=0.0, xanchor="left"),
    )
    return fig


def before_after_figures(ba: Any) -> list[go.Figure]:
    return [before_after_bars(ba), recency_mix_figure(ba)]
