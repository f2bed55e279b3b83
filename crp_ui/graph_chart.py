"""The Graph page's network drawn (SPEC-025): anchors and connectors of a run with their similarity edges,
the stage-4 contradictions, the facts the run or an operator took out, and the producer's own edges of an
SDK snapshot, from the frames of :mod:`crp_ui.graph_frames`. Every id and text reaches plotly's labels and
hover text through :func:`crp_ui.render.esc` (plotly interprets a subset of HTML there).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .chart_style import BAD, LABEL_HALO, LOSER, ROLE_COLOURS, titled
from .graph_layout import label_sides, spring_layout
from .render import esc

GIVEN_EDGE_COLOUR = "#1b7f5b"
CONTRADICTION_COLOUR = BAD
EDGE_COLOUR = "#9aa5b1"
#: how the Graph marks a fact the run or an operator took out: (legend name, symbol, colour)
NODE_MARKS = {
    "suppressed": ("suppressed (lost a contradiction)", "x-thin-open", LOSER),
    "operator": ("status set by an operator", "square-open", "#a15c00"),
}
#: node kinds in drawing order, with their legend names
NODE_KINDS = {"anchor": "anchor", "connector": "connector (selected)", "candidate": "connector candidate"}
#: a node label's width per character and height per line at the 11 px font, pixels (for placing labels)
LABEL_CHAR_PX = 6.2
LABEL_LINE_PX = 14.0


# ---- drawing -------------------------------------------------------------------------------------
Positions = np.ndarray  # (n, 2) node positions, rows in the node frame's order
Edge = tuple[int, int, float]


def _segments(pos: Positions, pairs: Sequence[tuple[int, int]]) -> tuple[list[float | None], list[float | None]]:
    """x and y of line segments between node pairs, separated by gaps (one line trace draws them all)."""
    xs: list[float | None] = []
    ys: list[float | None] = []
    for i, j in pairs:
        xs += [float(pos[i, 0]), float(pos[j, 0]), None]
        ys += [float(pos[i, 1]), float(pos[j, 1]), None]
    return xs, ys


#: the most similarity edges whose weights are written on the chart (more: on hover only)
MAX_EDGE_LABELS = 60


def _weight_traces(fig: go.Figure, el: Sequence[Edge], pos: Positions, edge_min: float) -> None:
    """The similarity edges in width classes (a line trace has one width)."""
    ws = np.array([w for _, _, w in el])
    width = 1.0 + 5.0 * np.clip((ws - edge_min) / max(1e-9, 1.0 - edge_min), 0, 1)
    for cls in np.unique(np.round(width)):
        xs, ys = _segments(pos, [(i, j) for (i, j, _), wd in zip(el, width) if round(wd) == cls])
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=ys,
                mode="lines",
                line=dict(color=EDGE_COLOUR, width=float(cls)),
                hoverinfo="skip",
                showlegend=False,
            )
        )


def _weight_labels(fig: go.Figure, el: Sequence[Edge], pos: Positions, ids: Sequence[str]) -> None:
    """The edges' weights as labels at their middles, up to :data:`MAX_EDGE_LABELS` edges (hover: both ids and
    the cosine); drawn over the contradiction and given links, whose markers sit on the same middles."""
    labels = [f"{w:.2f}" for _, _, w in el] if len(el) <= MAX_EDGE_LABELS else None
    fig.add_trace(
        go.Scatter(
            x=[(pos[i, 0] + pos[j, 0]) / 2 for i, j, _ in el],
            y=[(pos[i, 1] + pos[j, 1]) / 2 for i, j, _ in el],
            mode="text" if labels else "markers",
            text=labels,
            textfont=dict(size=10, color="#555", shadow=LABEL_HALO),
            marker=dict(size=4, color=EDGE_COLOUR),
            hovertext=[f"{esc(ids[i], 40)} — {esc(ids[j], 40)}<br>weight (cosine) {w:.4f}" for i, j, w in el],
            hoverinfo="text",
            name="edge weight",
            showlegend=False,
        )
    )


def _bridged_trace(
    pos: Positions, at: Mapping[str, int], highlight: str, pairs: Sequence[tuple[str, str]]
) -> go.Scatter:
    """The anchor pairs the highlighted connector bridges (no direct edge), as dashed red gaps."""
    xs, ys = _segments(pos, [(at[a], at[b]) for a, b in pairs if a in at and b in at])
    return go.Scatter(
        x=xs,
        y=ys,
        mode="lines",
        line=dict(color=CONTRADICTION_COLOUR, width=2, dash="dash"),
        name=f"pairs bridged by {esc(highlight, 30)} (no direct edge)",
        hoverinfo="skip",
    )


def _link_traces(
    fig: go.Figure,
    pos: Positions,
    links: Sequence[tuple[int, int, str]],
    *,
    style: Mapping[str, Any],
    at_fraction: float,
) -> None:
    """Links between drawn facts (contradictions, given edges): one line trace and one marker per link at
    ``at_fraction`` of its length carrying the hover text. ``style``: the line's name, colour and dash and
    the marker's name, symbol and size."""
    if not links:
        return
    xs, ys = _segments(pos, [(i, j) for i, j, _ in links])
    colour = style["colour"]
    fig.add_trace(
        go.Scatter(
            x=xs,
            y=ys,
            mode="lines",
            hoverinfo="skip",
            name=style["name"],
            line=dict(color=colour, width=style["width"], dash=style["dash"]),
        )
    )
    f = at_fraction
    fig.add_trace(
        go.Scatter(
            x=[(1 - f) * pos[i, 0] + f * pos[j, 0] for i, j, _ in links],
            y=[(1 - f) * pos[i, 1] + f * pos[j, 1] for i, j, _ in links],
            mode="markers",
            hovertext=[h for _, _, h in links],
            hoverinfo="text",
            marker=dict(size=style["size"], color=colour, symbol=style["symbol"]),
            name=style["marker"],
            showlegend=False,
        )
    )


def _contradiction_links(contradictions: pd.DataFrame, at: Mapping[str, int]) -> list[tuple[int, int, str]]:
    return [
        (at[a], at[b], f"contradiction {esc(a, 40)} ↔ {esc(b, 40)}<br>{esc(outcome, 80)}")
        for a, b, outcome in contradictions[["a", "b", "outcome"]].itertuples(index=False)
        if a in at and b in at
    ]


def _given_links(given: pd.DataFrame, at: Mapping[str, int]) -> list[tuple[int, int, str]]:
    out = []
    for a, b, rel, conf in given[["a", "b", "relation_type", "confidence"]].itertuples(index=False):
        if a in at and b in at:
            c = "" if conf is None or (isinstance(conf, float) and math.isnan(conf)) else f" · confidence {conf:.2f}"
            out.append((at[a], at[b], f"given edge {esc(a, 40)} → {esc(b, 40)}<br>{esc(rel, 60)}{c}"))
    return out


def _node_hover(r: Any, kind: str) -> str:
    """A node's hover text: id and kind, its scores, where it ended, an operator's status, its text."""
    bits = [f"<b>{esc(r.fact_id, 60)}</b> · {kind}"]
    if not math.isnan(r.cdr_score):
        bits.append(f"CDR {r.cdr_score:.4f}")
    if not math.isnan(r.bridge_value):
        bits.append(f"bridge value {r.bridge_value:.4f} · connector score {r.connector_score:.4f}")
    bits.append("in envelope" if r.in_envelope else ("suppressed" if r.suppressed else "not in envelope"))
    op_status = getattr(r, "operator_status", "")
    if op_status:
        bits.append(f"status {esc(op_status)} set by an operator")
    bits.append(esc(r.content, 120))
    return "<br>".join(bits)


def _node_label(r: Any, kind: str) -> list[str]:
    """A node's label lines: the id (and a connector's bridge value)."""
    lines = [esc(r.fact_id, 24)]
    if kind != "anchor" and not math.isnan(r.bridge_value):
        lines.append(f"bridge value {r.bridge_value:.2f}")
    return lines


def _label_sides(
    labels: Sequence[list[str]], pos: Positions, ranges: tuple[tuple[float, float], tuple[float, float]]
) -> list[str]:
    """Each node's label side, chosen so labels keep off each other and off the markers (dense graphs drew
    ids over ids); sizes from the label's characters (``labels``: each node's lines) at the 11 px font."""
    sizes = [(LABEL_CHAR_PX * max(len(x) for x in lines), LABEL_LINE_PX * len(lines)) for lines in labels]
    return label_sides(pos, sizes, ranges)


def _node_trace(
    sub: pd.DataFrame,
    kind: str,
    pos: Positions,
    at: Mapping[str, int],
    emphasised: set[str],
    placed: tuple[Sequence[list[str]], Mapping[str, str]],
) -> go.Scatter:
    """The nodes of one kind: markers labelled with the id (and a connector's bridge value), each label on
    its side. ``placed``: every node's label lines in node order and each node's side, as placed."""
    labels, sides = placed
    text, hover, size, line_w = [], [], [], []
    for r in sub.itertuples(index=False):
        text.append("<br>".join(labels[at[r.fact_id]]))
        hover.append(_node_hover(r, kind))
        size.append(24 if r.fact_id in emphasised else 16)
        line_w.append(3 if r.fact_id in emphasised else 1)
    idx = [at[f] for f in sub["fact_id"]]
    return go.Scatter(
        x=pos[idx, 0],
        y=pos[idx, 1],
        mode="markers+text",
        text=text,
        textposition=[sides[f] for f in sub["fact_id"]],
        textfont=dict(size=11, shadow=LABEL_HALO),
        name=NODE_KINDS[kind],
        hovertext=hover,
        hoverinfo="text",
        customdata=list(sub["fact_id"]),
        marker=dict(
            size=size,
            color=ROLE_COLOURS[kind],
            symbol="circle" if kind == "anchor" else "diamond",
            line=dict(color="black", width=line_w),
        ),
    )


def _mark_traces(fig: go.Figure, nodes: pd.DataFrame, pos: Positions, at: Mapping[str, int]) -> None:
    """A red cross over each fact stage 4 suppressed, an amber square around each an operator re-marked."""
    for mark, column in (("suppressed", "suppressed"), ("operator", "operator_status")):
        if column not in nodes.columns:  # a node frame without operator marks
            continue
        sub = nodes[nodes[column].astype(bool)]
        if not len(sub):
            continue
        name, symbol, colour = NODE_MARKS[mark]
        idx = [at[f] for f in sub["fact_id"]]
        fig.add_trace(
            go.Scatter(
                x=pos[idx, 0],
                y=pos[idx, 1],
                mode="markers",
                name=name,
                hoverinfo="skip",
                customdata=list(sub["fact_id"]),
                marker=dict(
                    size=30 if mark == "operator" else 22, symbol=symbol, color=colour, line=dict(color=colour, width=3)
                ),
            )
        )


CONTRADICTION_STYLE = {
    "name": "contradiction (stage 4)",
    "colour": CONTRADICTION_COLOUR,
    "width": 2.5,
    "dash": "dot",
    "marker": "contradiction outcome",
    "symbol": "diamond-wide",
    "size": 9,
}
GIVEN_STYLE = {
    "name": "given edge (SDK snapshot)",
    "colour": GIVEN_EDGE_COLOUR,
    "width": 2,
    "dash": "dashdot",
    "marker": "given edge relation",
    "symbol": "triangle-up",
    "size": 8,
}


def cdgr_network(
    nodes: pd.DataFrame,
    edges: pd.DataFrame,
    *,
    highlight: str | None = None,
    bridged_pairs: Sequence[tuple[str, str]] = (),
    edge_min: float = 0.6,
    contradictions: pd.DataFrame | None = None,
    given: pd.DataFrame | None = None,
) -> go.Figure:
    """Network of anchors and connectors (SPEC-025): edge width and label = weight, connector
    labels carry their bridge value. ``highlight``: a connector whose ``bridged_pairs`` (anchor
    pairs with no direct edge) are drawn as dashed red gaps. ``contradictions``
    (:func:`contradiction_edges`): dotted red edges between the members of each stage-4 pair. Facts
    stage 4 suppressed get a red cross over their marker, facts an operator re-marked an amber
    square; each has its legend entry. ``given`` (:func:`given_edges_frame`): the producer's edges
    between drawn facts, dash-dot green, ``relation_type`` on hover."""
    ids = list(nodes["fact_id"])
    at = {f: i for i, f in enumerate(ids)}
    el = [(at[a], at[b], w) for a, b, w in edges[["a", "b", "weight"]].itertuples(index=False) if a in at and b in at]
    pos = spring_layout(len(ids), el)
    fig = go.Figure()
    if el:
        _weight_traces(fig, el, pos, edge_min)
    if highlight is not None and bridged_pairs:
        fig.add_trace(_bridged_trace(pos, at, highlight, bridged_pairs))
    if contradictions is not None and len(contradictions):
        _link_traces(fig, pos, _contradiction_links(contradictions, at), style=CONTRADICTION_STYLE, at_fraction=0.5)
    if given is not None and len(given):  # off the middle: a contradiction marker may sit there
        _link_traces(fig, pos, _given_links(given, at), style=GIVEN_STYLE, at_fraction=0.6)
    if el:
        _weight_labels(fig, el, pos, ids)
    emphasised = set()
    if highlight is not None:
        emphasised = {f for f in ids if f == highlight or any(f in p for p in bridged_pairs)}
    x_hi = float(pos[:, 0].max()) if len(pos) else 1.0
    ranges = ((-1.25, max(1.25, x_hi + 0.3)), (-1.2, 1.25))
    # each node's label lines, built once: the same lines are placed and drawn
    labels = [_node_label(r, str(r.kind)) for r in nodes.itertuples(index=False)]
    sides = dict(zip(ids, _label_sides(labels, pos, ranges), strict=True))
    for kind in NODE_KINDS:
        sub = nodes[nodes["kind"] == kind]
        if len(sub):
            fig.add_trace(_node_trace(sub, kind, pos, at, emphasised, (labels, sides)))
    _mark_traces(fig, nodes, pos, at)
    fig.update_xaxes(visible=False, range=list(ranges[0]))
    fig.update_yaxes(visible=False, range=list(ranges[1]))
    weights = "edge label = weight" if len(el) <= MAX_EDGE_LABELS else "edge width = weight, on hover at its middle"
    return titled(fig, f"CDGR: anchors and connectors ({weights})", height=560)
