"""What every plotly figure of the dashboard shares: the colours of roles, bands and outcomes, the
default height and the layout (margins, the legend under the plot)."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

ROLE_COLOURS = {"anchor": "#1f5fa8", "connector": "#e07b00", "candidate": "#9aa5b1", "gated": "#c9ced6"}
BAND_COLOURS = {"primacy": "#1f5fa8", "middle": "#7c8ea3", "recency": "#2e8b57"}
OUTCOME_COLOURS = {
    "in envelope": "#1b7f3b",
    "suppressed": "#b00020",
    "dropped (budget)": "#a15c00",
    "not selected": "#7c8ea3",
    "gated": "#c9ced6",
}
CURVE_COLOURS = (
    "#1f5fa8",
    "#e07b00",
    "#2e8b57",
    "#b00020",
    "#7b4fb3",
    "#8c564b",
    "#d62790",
    "#17becf",
    "#bcbd22",
    "#555555",
)
#: a budget or threshold line drawn across a chart
LIMIT_COLOUR = "#b00020"
HEIGHT = 380

#: the layout every chart shares (margins, the legend under the plot)
LAYOUT: dict[str, Any] = {"margin": {"l": 10, "r": 10, "t": 50, "b": 10}, "legend": {"orientation": "h", "y": -0.18}}


def titled(fig: go.Figure, title: str, height: int = HEIGHT, **kw: Any) -> go.Figure:
    """``fig`` with its title (left-aligned), height and the shared layout (``kw``: more layout keys)."""
    fig.update_layout(title={"text": title, "x": 0.0, "xanchor": "left"}, height=height, **LAYOUT, **kw)
    return fig


def legend_names(fig: go.Figure) -> list[str]:
    """Names of the traces shown in the legend (tests and captions)."""
    return [t.name for t in fig.data if t.name and t.showlegend is not False]
