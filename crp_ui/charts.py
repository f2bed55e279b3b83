"""Plotly figure builders for the dashboard pages, one name space for the pages.

Pure functions of crp_core records / the frames of :mod:`crp_ui.tables` -> ``go.Figure``; no Streamlit, no
score recomputed. Every text that comes from a CKF (fact ids, contents) is HTML-escaped
(:func:`crp_ui.render.esc`) before it reaches a plotly label or hover text, because plotly interprets a
subset of HTML in them. This module draws the Overview's funnel, the Score breakdown's CDR waterfall and
histograms, the envelope's token bar and a conflict pair's authority bars; the recency chart
(:mod:`crp_ui.recency_chart`) and the Graph's network (:mod:`crp_ui.graph_frames`,
:mod:`crp_ui.graph_chart`, :mod:`crp_ui.graph_layout`) have modules of their own, re-exported here.
"""

from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go

from crp_core import ConflictPair

from .chart_style import (
    BAD,
    BAND_COLOURS,
    CURVE_COLOURS,
    GOOD,
    HEIGHT,
    LAYOUT,
    LEGEND_ABOVE,
    LIMIT_COLOUR,
    OUTCOME_COLOURS,
    PAIR_ROLE_COLOURS,
    ROLE_COLOURS,
    legend_names,
    titled,
    wrap_label,
)
from .conflict_case import authority_arithmetic, role_of
from .graph_chart import CONTRADICTION_COLOUR, GIVEN_EDGE_COLOUR, NODE_MARKS, cdgr_network
from .graph_frames import cdgr_elements, contradiction_edges, given_edges_frame
from .graph_layout import components, spring_layout
from .recency_chart import (
    CURVE_SPAN_POINTS,
    MARKER_HOVER,
    NO_FACT_SUFFIX,
    RECENCY_COLUMNS,
    curve_ttls,
    recency_chart,
    recency_curve_points,
    recency_settings,
)
from .render import esc

#: the funnel's bar colours, stage by stage
FUNNEL_COLOURS = ("#9aa5b1", "#7c8ea3", "#1f5fa8", "#e07b00", "#b00020", GOOD)
NOTE_COLOUR = "#d9b44a"


# ---- Overview ---------------------------------------------------------------------------------
def stage_funnel(funnel: pd.DataFrame) -> go.Figure:
    """Funnel of the stage counts (``crp_ui.tables.funnel_frame``); each stage is labelled with the
    measured time of the pipeline stage that produced its count."""
    labels = []
    for stage, t, ps in zip(funnel["stage"], funnel["time_ms"], funnel["pipeline stage"]):
        when = f"{t:.1f} ms" if isinstance(t, (int, float)) and math.isfinite(t) else "n/a"
        # plotly's own label markup (drawn as SVG text, not page HTML); a <sub> would make plotly insert
        # zero-width spaces, which the page must never carry
        labels.append(f"{esc(stage)}<br><span style='font-size:10px;color:#666'>{when} · stage {esc(ps)}</span>")
    fig = go.Figure(
        go.Funnel(
            y=labels,
            x=list(funnel["count"]),
            textinfo="value",
            textposition="auto",
            marker=dict(color=list(FUNNEL_COLOURS[: len(funnel)])),
            hovertemplate="%{y}: %{x}<extra></extra>",
        )
    )
    fig.update_yaxes(automargin=True)
    return titled(fig, "Stage funnel (count · stage time)", height=380, showlegend=False)


# ---- Breakdown: the CDR product -----------------------------------------------------------------
def _short_step(label: str) -> str:
    """A product step's axis label: its factor's name, wrapped (:func:`crp_ui.chart_style.wrap_label`)."""
    short = {"importance weight": "importance", "recency factor": "× recency"}.get(
        label, "× " + label.split(" = ")[0].split(" (")[0]
    )
    return wrap_label(short)


def cdr_waterfall(steps: pd.DataFrame, fact_id: str) -> go.Figure:
    """Waterfall of the running product of the CDR score (``crp_ui.tables.cdr_steps``): the first
    bar is the importance weight, each next bar the change of the running product when it is
    multiplied by the next factor (labelled ``× factor``), the last bar the stored CDR score."""
    body = steps.iloc[:-1]
    final = float(steps.iloc[-1]["running_product"])
    x, y, measure, text = [], [], [], []
    prev = 0.0
    for k, r in enumerate(body.itertuples(index=False)):
        x.append(_short_step(r.step))
        measure.append("absolute" if k == 0 else "relative")
        y.append(r.running_product if k == 0 else r.running_product - prev)
        text.append(f"{r.multiplier:.4f}" if k == 0 else f"× {r.multiplier:.3f}")
        prev = r.running_product
    x.append("CDR score")
    measure.append("total")
    y.append(final)
    text.append(f"{final:.4f}")
    fig = go.Figure(
        go.Waterfall(
            x=x,
            y=y,
            measure=measure,
            text=text,
            textposition="outside",
            textfont=dict(size=13),
            connector=dict(line=dict(color="#888", width=1)),
            decreasing=dict(marker=dict(color=BAD)),
            increasing=dict(marker=dict(color=GOOD)),
            totals=dict(marker=dict(color="#1f5fa8")),
            hovertemplate="%{x}<br>%{text}<extra></extra>",
        )
    )
    top = max([1.0] + [float(v) for v in body["running_product"]])
    fig.update_yaxes(range=[0, top * 1.15], title="running product", automargin=True)
    fig.update_xaxes(automargin=True)
    # a plotly title does not wrap: a long id is shortened here (the fact card above shows it whole)
    return titled(fig, f"CDR of {esc(fact_id, 36)}: running product", height=420, showlegend=False)


# ---- Breakdown: histograms --------------------------------------------------------------------
def score_histogram(
    frame: pd.DataFrame,
    column: str,
    *,
    threshold: float | None,
    threshold_label: str,
    colour_by: str = "outcome",
    title: str | None = None,
    nbins: int = 40,
) -> go.Figure:
    """Stacked histogram of ``column`` coloured by ``colour_by``, a vertical line at ``threshold``."""
    fig = go.Figure()
    vals = frame[column].dropna()
    lo, hi = (float(vals.min()), float(vals.max())) if len(vals) else (0.0, 1.0)
    if threshold is not None:
        lo, hi = min(lo, threshold), max(hi, threshold)
    size = (hi - lo) / nbins if hi > lo else 0.05
    groups = list(OUTCOME_COLOURS) if colour_by == "outcome" else sorted(frame[colour_by].dropna().unique())
    for g in groups:
        sub = frame.loc[frame[colour_by] == g, column].dropna()
        if len(sub) == 0:
            continue
        fig.add_trace(
            go.Histogram(
                x=sub.tolist(),
                name=esc(g),
                marker_color=OUTCOME_COLOURS.get(g),
                xbins=dict(start=lo, end=hi + size, size=size),
                hovertemplate=f"{esc(g)}: %{{y}} facts in %{{x}}<extra></extra>",
            )
        )
    if threshold is not None:
        fig.add_vline(
            x=threshold,
            line=dict(color=LIMIT_COLOUR, dash="dash", width=2),
            annotation_text=esc(threshold_label),
            annotation_position="top right",
        )
    fig.update_layout(barmode="stack")
    fig.update_xaxes(title=column)
    fig.update_yaxes(title="facts")
    return titled(fig, title or f"Histogram of {column}")


# ---- Envelope ----------------------------------------------------------------------------------
def token_budget_bar(envelope: pd.DataFrame, token_budget: int, tokens_used: int) -> go.Figure:
    """One stacked bar: each packed fact's tokens in envelope order, coloured by band, against the
    token budget (dashed line)."""
    fig = go.Figure()
    shown: set[str] = set()
    for r in envelope.itertuples(index=False):
        fig.add_trace(
            go.Bar(
                y=["envelope"],
                x=[r.tokens],
                orientation="h",
                name=r.band,
                legendgroup=r.band,
                showlegend=r.band not in shown,
                marker_color=BAND_COLOURS.get(r.band, "#888"),
                marker_line=dict(color="white", width=1),
                hovertext=f"#{r.position} {esc(r.fact_id, 60)} · {r.band} · {r.tokens} tokens",
                hoverinfo="text",
            )
        )
        shown.add(r.band)
    other = int(tokens_used) - int(envelope["tokens"].sum()) if len(envelope) else int(tokens_used)
    if other > 0:
        fig.add_trace(
            go.Bar(
                y=["envelope"],
                x=[other],
                orientation="h",
                name="NOTE blocks",
                marker_color=NOTE_COLOUR,
                hovertext=f"{other} tokens",
                hoverinfo="text",
            )
        )
    fig.add_vline(
        x=token_budget,
        line=dict(color=LIMIT_COLOUR, dash="dash", width=2),
        annotation_text=f"budget {token_budget}",
        annotation_position="top left",
    )
    fig.update_layout(barmode="stack")
    fig.update_xaxes(title="tokens", range=[0, max(token_budget, tokens_used) * 1.05])
    fig.update_yaxes(visible=False)
    titled(fig, f"Token use: {tokens_used} / {token_budget}", height=230)
    fig.update_layout(legend=LEGEND_ABOVE)  # the bar is one row high: its legend goes above it
    return fig


# ---- Conflicts: the authority of both facts of a pair ----------------------------------------------
def authority_bars(pair: ConflictPair) -> go.Figure:
    """One horizontal bar per fact of ``pair``: its SPEC-027 §2.3 authority, the arithmetic as the bar's
    text, coloured by the fact's role (winner / suppressed / tied / kept / dismissed:
    :data:`crp_ui.chart_style.PAIR_ROLE_COLOURS`), so the winner keeps its colour whichever side it is on."""
    fig = go.Figure()
    top = 0.0
    shown: set[str] = set()
    for side, fid in (("A", pair.fact_a), ("B", pair.fact_b)):
        auth = pair.authority.get(fid)
        if auth is None:
            continue
        role = role_of(pair, fid)
        top = max(top, float(auth.authority))
        fig.add_trace(
            go.Bar(
                y=[f"{side} · {esc(fid, 28)}"],
                x=[float(auth.authority)],
                orientation="h",
                name=role,
                legendgroup=role,
                showlegend=role not in shown,  # one legend entry per role: a tie's two facts share "tied"
                marker_color=PAIR_ROLE_COLOURS.get(role, "#888"),
                text=[esc(authority_arithmetic(auth))],
                textposition="outside",
                cliponaxis=False,
                hovertemplate=f"{esc(fid)}: {role}<br>authority %{{x:.4f}}<extra></extra>",
            )
        )
        shown.add(role)
    fig.update_xaxes(title="authority", range=[0, max(top, 1e-9) * 1.6], automargin=True)
    fig.update_yaxes(autorange="reversed", automargin=True)
    return titled(fig, "Authority (colour: the fact's role)", height=220)


__all__ = [
    "BAND_COLOURS",
    "CONTRADICTION_COLOUR",
    "CURVE_COLOURS",
    "CURVE_SPAN_POINTS",
    "GIVEN_EDGE_COLOUR",
    "HEIGHT",
    "LAYOUT",
    "MARKER_HOVER",
    "NODE_MARKS",
    "NO_FACT_SUFFIX",
    "NOTE_COLOUR",
    "authority_bars",
    "OUTCOME_COLOURS",
    "RECENCY_COLUMNS",
    "ROLE_COLOURS",
    "cdgr_elements",
    "cdgr_network",
    "cdr_waterfall",
    "components",
    "contradiction_edges",
    "curve_ttls",
    "esc",
    "given_edges_frame",
    "legend_names",
    "recency_chart",
    "recency_curve_points",
    "recency_settings",
    "score_histogram",
    "spring_layout",
    "stage_funnel",
    "titled",
    "token_budget_bar",
]
