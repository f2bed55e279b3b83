"""The Score breakdown page's recency chart (SPEC-027 §3.2): the recency factor against age for each TTL,
the scored facts as markers on their curve.

The curve points come from :func:`crp_core.recency_factor`, the function the pipeline uses; the markers are
the breakdown rows' stored factors. A marker is filled with its fact's recency state (fresh / ageing /
expired: :data:`crp_ui.chart_style.RECENCY_STATE_COLOURS`) and outlined in its curve's colour; a legend key
names the states. Ids and rules reach plotly's hover text through :func:`crp_ui.render.esc`, rules in
the reader's words (:func:`crp_ui.chart_style.rule_words`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from crp_core import SOURCE_TYPES, CRPConfig, recency_factor

from .chart_style import CURVE_COLOURS, EXPIRED, LAYOUT, RECENCY_STATE_COLOURS, RULE_STATES, rule_words
from .render import esc

#: points of a recency curve across the whole axis (where it is flat they only serve the hover readout)
CURVE_SPAN_POINTS = 16

#: the breakdown columns the recency chart reads
RECENCY_COLUMNS = (
    "fact_id",
    "source_type",
    "status",
    "age_days",
    "ttl_days",
    "ttl_source",
    "recency_factor",
    "recency_rule",
)

#: a fact marker's hover: customdata = (escaped id, source type, recency rule in the reader's words)
MARKER_HOVER = (
    "%{customdata[0]}<br>%{customdata[1]} · %{customdata[2]}<br>age %{x:.1f} d → factor %{y:.4f}<extra></extra>"
)
#: a fact whose status is STALE: expired whatever its age
STALE_COLOUR = EXPIRED
#: the legend name's ending of a TTL no scored fact has (drawn only when clicked in the legend)
NO_FACT_SUFFIX = " (no fact here)"
#: the legend entries of the marker fills
STATE_KEY = {"fresh": "fresh fact", "ageing": "ageing fact", "expired": "expired fact"}


def _ttl_text(t: float) -> str:
    return "no expiry" if math.isinf(t) else f"TTL {t:g} d"


def curve_ttls(config: CRPConfig, explicit_ttls: Iterable[float] = ()) -> list[tuple[float, str]]:
    """One curve per distinct TTL: each source type's TTL (types sharing a TTL share a curve), then each TTL
    facts give themselves (their ``ttl``, ``none`` included) not already drawn; a type's curve that such facts
    share says so too. ``inf`` = no expiry. Sorted by TTL."""
    by_ttl: dict[float, list[str]] = {}
    for stype in SOURCE_TYPES:
        t = config.ttl_days[stype]
        by_ttl.setdefault(math.inf if t is None else float(t), []).append(stype)
    own = {float(t) for t in explicit_ttls if t is not None and not math.isnan(float(t))}
    out = [
        (t, f"{_ttl_text(t)}: {', '.join(types)}" + (", facts' own ttl" if t in own else ""))
        for t, types in by_ttl.items()
    ]
    out += [(t, f"{_ttl_text(t)}: explicit ttl") for t in sorted(own - set(by_ttl))]
    return sorted(out, key=lambda p: p[0])


def recency_curve_points(ttl_days: float, ages: np.ndarray, *, stale_floor: float, fresh_fraction: float) -> np.ndarray:
    """``recency_factor`` (the pipeline's function) at each age, for an ACTIVE fact."""
    ttl = None if math.isinf(ttl_days) else ttl_days
    return np.array(
        [
            recency_factor(float(a), ttl, status="ACTIVE", stale_floor=stale_floor, fresh_fraction=fresh_fraction)
            for a in ages
        ],
        dtype=np.float64,
    )


def _curve_ages(ttl: float, max_age: float, log_x: bool, n: int, fresh_fraction: float) -> np.ndarray:
    """Ages a curve is drawn through: its two kinks exactly, ``n`` points over the decay between them
    (straight in age, so on a log axis it needs them to look right) and a few over the whole axis."""
    lo = 0.5 if log_x else 0.0
    space = np.geomspace if log_x else np.linspace
    parts = [space(lo, max_age, CURVE_SPAN_POINTS)]
    if not math.isinf(ttl):
        fresh = fresh_fraction * ttl
        parts.append(np.array([a for a in (fresh, ttl) if lo <= a <= max_age]))  # the two kinks, exactly
        start, stop = max(lo, fresh), min(ttl, max_age)
        if stop > start:
            parts.append(space(start, stop, n))
    return np.unique(np.concatenate(parts))


def recency_settings(config: CRPConfig) -> tuple[float, float, tuple[float | None, ...]]:
    """The settings the recency chart reads from a config: stale floor, fresh fraction, TTL per source type."""
    return (
        float(config.stale_floor),
        float(config.fresh_fraction),
        tuple(config.ttl_days[stype] for stype in SOURCE_TYPES),
    )


def _fact_markers(
    pts: pd.DataFrame, colour: str, name: str, group: str, log_x: bool, symbol: str = "circle"
) -> dict[str, Any]:
    ages = pts["age_days"].to_numpy(dtype=float)
    if log_x:
        ages = np.maximum(ages, 0.5)
    rules = pts["recency_rule"].tolist()
    custom = [[esc(f, 60), esc(s), esc(rule_words(r))] for f, s, r in zip(pts["fact_id"], pts["source_type"], rules)]
    fills = [RECENCY_STATE_COLOURS.get(RULE_STATES.get(r, "fresh"), colour) for r in rules]
    return dict(
        type="scatter",
        x=ages.astype(np.float32),
        y=pts["recency_factor"].to_numpy(dtype=np.float32),
        mode="markers",
        name=name,
        legendgroup=group,
        marker=dict(color=fills, size=9, symbol=symbol, line=dict(color=colour, width=1.5)),
        customdata=custom,
        hovertemplate=MARKER_HOVER,
    )


def _with_ttl(ttls: np.ndarray, ttl: float) -> np.ndarray:
    """Which of ``ttls`` (``inf``: no expiry) are ``ttl``."""
    hits: np.ndarray = np.isinf(ttls) if math.isinf(ttl) else np.isclose(ttls, ttl)
    return hits


def _curve_traces(
    on_curve: pd.DataFrame,
    held: np.ndarray,
    curves: list[tuple[float, str]],
    max_age: float,
    config: CRPConfig,
    *,
    log_x: bool,
    n: int,
) -> list[dict[str, Any]]:
    """Each TTL's curve, then the markers of the facts on it.

    A TTL no scored fact has (``held``: every scored fact's TTL, STALE facts and facts of unknown age included;
    a source type the run scored no fact of) stays in the legend, named so, but is not drawn until the reader
    clicks it (``visible="legendonly"``): the chart shows the curves of this run first. When no scored fact
    has any of the TTLs, every curve is drawn."""
    stale_floor, fresh_fraction = float(config.stale_floor), float(config.fresh_fraction)
    ttl_col = on_curve["ttl_days"].fillna(math.inf).to_numpy(dtype=float)
    has = [bool(_with_ttl(held, ttl).any()) for ttl, _ in curves]
    traces: list[dict[str, Any]] = []
    for k, (ttl, label) in enumerate(curves):
        colour = CURVE_COLOURS[k % len(CURVE_COLOURS)]
        ages = _curve_ages(ttl, max_age, log_x, n, fresh_fraction)
        ys = recency_curve_points(ttl, ages, stale_floor=stale_floor, fresh_fraction=fresh_fraction)
        on = _with_ttl(ttl_col, ttl)
        hidden = any(has) and not has[k]
        traces.append(
            dict(
                type="scatter",
                x=ages.astype(np.float32),
                y=ys.astype(np.float32),
                mode="lines",
                name=esc(label) + (NO_FACT_SUFFIX if hidden else ""),
                legendgroup=str(k),
                line=dict(color=colour, width=2),
                hovertemplate=f"{esc(label)}<br>age %{{x:.1f}} d → %{{y:.3f}}<extra></extra>",
                visible="legendonly" if hidden else True,
            )
        )
        if on.any():
            traces.append(_fact_markers(on_curve[on], colour, f"facts ({_ttl_text(ttl)})", str(k), log_x))
    return traces


def _state_key(states: set[str]) -> list[dict[str, Any]]:
    """Legend-only entries: the fill of a fresh, an ageing and an expired fact (those drawn)."""
    return [
        dict(
            type="scatter",
            x=[None],
            y=[None],
            mode="markers",
            name=STATE_KEY[state],
            legendgroup="state",
            marker=dict(color=RECENCY_STATE_COLOURS[state], size=9, symbol="circle"),
            hoverinfo="skip",
        )
        for state in STATE_KEY
        if state in states
    ]


def _selected_trace(known: pd.DataFrame, selected: str, log_x: bool) -> dict[str, Any] | None:
    """A star on the selected fact (None when it has no known age)."""
    sel = known[known["fact_id"] == selected]
    if not len(sel):
        return None
    x = max(float(sel["age_days"].iloc[0]), 0.5) if log_x else float(sel["age_days"].iloc[0])
    return dict(
        type="scatter",
        x=[x],
        y=[float(sel["recency_factor"].iloc[0])],
        mode="markers",
        name=f"selected: {esc(selected, 40)}",
        marker=dict(symbol="star", size=18, color="gold", line=dict(color="black", width=1)),
        hovertemplate=f"{esc(selected)}<extra></extra>",
    )


def _recency_layout(stale_floor: float, log_x: bool) -> dict[str, Any]:
    """The chart's layout: the stale floor as a dotted line across the plot, its label under the right end."""
    floor_line = dict(
        type="line",
        xref="x domain",
        x0=0,
        x1=1,
        yref="y",
        y0=stale_floor,
        y1=stale_floor,
        line=dict(color="#999", dash="dot"),
    )
    floor_note = dict(
        text=f"stale_floor {stale_floor:g}",
        xref="x domain",
        x=1,
        xanchor="right",
        yref="y",
        y=stale_floor,
        yanchor="top",
        showarrow=False,
    )
    return dict(
        LAYOUT,
        title=dict(text="Recency factor vs age, per TTL (markers: scored facts)", x=0.0, xanchor="left"),
        height=560,
        shapes=[floor_line],
        annotations=[floor_note],
        # the shared legend under the axis title: its rows (one per TTL, the states) take their room from the
        # figure's height, the axes make room for their labels
        xaxis=dict(
            title=dict(text="age (days)" + (" — log scale" if log_x else "")),
            type="log" if log_x else "linear",
            automargin=True,
        ),
        yaxis=dict(title=dict(text="recency factor"), range=[0, 1.08], automargin=True),
    )


def recency_chart(
    frame: pd.DataFrame, config: CRPConfig, *, selected: str | None = None, log_x: bool = False, n_points: int = 48
) -> go.Figure:
    """Recency factor vs age (SPEC-027 §3.2) for each TTL, scored facts as markers on their curve.

    ``frame``: breakdown rows (:data:`RECENCY_COLUMNS`). Facts with status STALE sit at the stale floor
    whatever their age (their own marker); facts of unknown age are not drawn. The traces and the layout
    are plain dicts given to one ``go.Figure`` call (plotly validates them once). What the browser receives
    is kept small: each curve is drawn through ``n_points`` ages of its decay and its two kinks (flat
    elsewhere), coordinates are float32, and a fact marker's hover is one template per trace filled from
    ``customdata`` (id, source type, rule) instead of a string per point.
    """
    # only the columns drawn: row selections then copy 8 columns, not the breakdown's thirty
    known = frame.loc[frame["age_days"].notna().to_numpy(), list(RECENCY_COLUMNS)]
    explicit = known.loc[known["ttl_source"].isin(("explicit", "timeless")), "ttl_days"].tolist()
    curves = curve_ttls(config, explicit)
    finite = [t for t, _ in curves if not math.isinf(t)]
    ages_known = known["age_days"].to_numpy(dtype=float)
    max_age = max([1.0] + [t * 1.15 for t in finite] + [float(a) * 1.05 for a in ages_known])
    is_stale = ((known["status"] == "STALE") | (known["recency_rule"] == "stale_status")).to_numpy()
    stale, on_curve = known[is_stale], known[~is_stale]
    held = frame["ttl_days"].fillna(math.inf).to_numpy(dtype=float)
    traces = _curve_traces(on_curve, held, curves, max_age, config, log_x=log_x, n=n_points)
    if len(stale):
        traces.append(_fact_markers(stale, STALE_COLOUR, "status STALE → expired (floor)", "stale", log_x, symbol="x"))
    traces += _state_key({RULE_STATES.get(r, "fresh") for r in known["recency_rule"]})
    star = _selected_trace(known, selected, log_x) if selected is not None else None
    if star is not None:
        traces.append(star)
    return go.Figure(data=traces, layout=_recency_layout(float(config.stale_floor), log_x))
