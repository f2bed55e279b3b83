"""What every plotly figure of the dashboard shares: the colours of roles, bands and outcomes, the
default height and the layout (margins, the legend under the plot and its axis labels), and the words a reader
sees for a recency rule.

The semantic colours are defined here once: :data:`GOOD` / :data:`BAD` for better / worse (the
before / after bars, a step that raises or lowers a score, a fact in the envelope or suppressed) and
:data:`WINNER` / :data:`LOSER` / :data:`TIE` for an arbitrated pair, which follow the fact's role, never its
position (A / B), so a winner keeps its colour when ``now`` moves.
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

#: a white halo around a label drawn over lines (a graph's node ids and edge weights stay legible where an
#: edge runs under them)
LABEL_HALO = "0 0 2px #fff, 0 0 2px #fff, 0 0 3px #fff"
#: better / worse (what SPEC-027 hands to the model next to what the older retrieval hands to it)
GOOD = "#2e8b57"
BAD = "#c0504d"
#: the roles of the two facts of an arbitrated pair (SPEC-027 §2.3-2.5), by role, never by side
WINNER = GOOD
LOSER = BAD
TIE = "#a15c00"
#: the role of a fact in a conflict pair (:func:`crp_ui.conflict_case.role_of`) -> its colour
PAIR_ROLE_COLOURS = {
    "winner": WINNER,
    "winner (override)": WINNER,
    "suppressed": LOSER,
    "tied": TIE,
    "kept": "#1f5fa8",
    "dismissed": "#9aa5b1",
}
#: a fact's recency state (SPEC-027 §3.2: fresh, ageing while its factor falls, expired at the floor)
FRESH = GOOD
AGEING = "#e0a000"
EXPIRED = "#b00020"
RECENCY_STATE_COLOURS = {"fresh": FRESH, "ageing": AGEING, "expired": EXPIRED}
#: what a reader sees for each SPEC-027 §3.2 recency rule id (the ids stay in data, CSV and JSON):
#: the state first (fresh / ageing / expired), then why
RULE_WORDS = {
    "fresh": "fresh",
    "decay": "ageing",
    "expired": "expired (past its TTL)",
    "stale_status": "expired (status STALE)",
    "timeless": "fresh (timeless)",
    "user_provided": "fresh (user provided)",
    "unknown_age": "fresh (unknown age)",
    "future": "fresh (future timestamp)",
}
#: the recency state of each rule id (the same split as ``crp_core``'s expired / ageing counts)
RULE_STATES = {rule: words.split(" ")[0] for rule, words in RULE_WORDS.items()}


def rule_words(rule: str) -> str:
    """The words a reader sees for recency rule ``rule`` (the id itself when it is not a known rule)."""
    return RULE_WORDS.get(rule, rule)


ROLE_COLOURS = {"anchor": "#1f5fa8", "connector": "#e07b00", "candidate": "#9aa5b1", "gated": "#c9ced6"}
BAND_COLOURS = {"primacy": "#1f5fa8", "middle": "#7c8ea3", "recency": "#2e8b57"}
OUTCOME_COLOURS = {
    "in envelope": GOOD,
    "suppressed": BAD,
    "dropped (budget)": "#a15c00",
    "not selected": "#7c8ea3",
    "gated": "#c9ced6",
}
#: one colour per recency curve (TTL): none of them red, green or amber, the colours of a fact's recency
#: state that fill the markers on the curves
CURVE_COLOURS = (
    "#1f5fa8",
    "#7b4fb3",
    "#17becf",
    "#8c564b",
    "#d62790",
    "#555555",
    "#0b3d6b",
    "#a05195",
    "#9aa5b1",
    "#5f9ea0",
)
#: a budget or threshold line drawn across a chart
LIMIT_COLOUR = "#b00020"
HEIGHT = 380

#: the layout every chart shares: the margins, and the legend under the plot, anchored to the figure's bottom edge
#: (``yref="container"``) so that plotly makes room for its rows below the x axis's tick labels and title (with
#: the axes' ``automargin``, :func:`titled`); a legend placed at a fraction of the plot's height under it lay
#: over the ticks of a short chart
LAYOUT: dict[str, Any] = {
    "margin": {"l": 10, "r": 10, "t": 50, "b": 10},
    "legend": {"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom"},
}
#: a legend above the plot, right-aligned (the title keeps the left): for a chart with no room under its axis
LEGEND_ABOVE: dict[str, Any] = {
    "orientation": "h",
    "yref": "paper",
    "y": 1.02,
    "yanchor": "bottom",
    "x": 1.0,
    "xanchor": "right",
}


#: the longest line of a wrapped category label (characters): at the narrowest chart column of a 1280 px
#: screen with the sidebar open, six such labels side by side do not touch
LABEL_LINE = 11


def wrap_label(text: str, width: int = LABEL_LINE) -> str:
    """``text`` broken into lines of at most ``width`` characters at its spaces (plotly's ``<br>``); a word
    longer than ``width`` keeps a line of its own. ``text`` must already be escaped when it comes from data."""
    lines: list[str] = []
    for word in text.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return "<br>".join(lines)


def titled(fig: go.Figure, title: str, height: int = HEIGHT, **kw: Any) -> go.Figure:
    """``fig`` with its title (left-aligned), height and the shared layout (``kw``: more layout keys); every axis
    makes room for its labels (``automargin``), so the legend under the plot starts below them."""
    fig.update_layout(title={"text": title, "x": 0.0, "xanchor": "left"}, height=height, **LAYOUT, **kw)
    fig.update_xaxes(automargin=True)
    fig.update_yaxes(automargin=True)
    return fig


def legend_names(fig: go.Figure) -> list[str]:
    """Names of the traces shown in the legend (tests and captions)."""
    return [t.name for t in fig.data if t.name and t.showlegend is not False]
