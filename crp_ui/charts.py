"""Plotly figure builders for the dashboard pages.

Pure functions of crp_core records / the frames of :mod:`crp_ui.tables` -> ``go.Figure``; no
Streamlit, no score recomputed (the recency curve points come from
``crp_core.factors.recency.recency_factor``, the function the pipeline uses). Every text that comes from a
CKF (fact ids, contents) is HTML-escaped (:func:`crp_ui.render.esc`) before it reaches a plotly label or
hover text, because plotly interprets a subset of HTML in them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from crp_core.config import SOURCE_TYPES
from crp_core.factors.recency import recency_factor

from .render import esc

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
HEIGHT = 380


#: the layout every chart shares (margins, the legend under the plot)
LAYOUT: dict[str, Any] = {"margin": {"l": 10, "r": 10, "t": 50, "b": 10}, "legend": {"orientation": "h", "y": -0.18}}


def _layout(fig: go.Figure, title: str, height: int = HEIGHT, **kw: Any) -> go.Figure:
    fig.update_layout(title=dict(text=title, x=0.0, xanchor="left"), height=height, **LAYOUT, **kw)
    return fig


# ---- Overview ---------------------------------------------------------------------------------
def stage_funnel(funnel: pd.DataFrame) -> go.Figure:
    """Funnel of the stage counts (``crp_ui.tables.funnel_frame``); each stage is labelled with the
    measured time of the pipeline stage that produced its count."""
    labels = []
    for stage, t, ps in zip(funnel["stage"], funnel["time_ms"], funnel["pipeline stage"]):
        when = f"{t:.1f} ms" if isinstance(t, (int, float)) and math.isfinite(t) else "n/a"
        labels.append(f"{esc(stage)}<br><span style='font-size:10px;color:#666'>{when} · stage {esc(ps)}</span>")
    colours = ["#9aa5b1", "#7c8ea3", "#1f5fa8", "#e07b00", "#b00020", "#1b7f3b"]
    fig = go.Figure(
        go.Funnel(
            y=labels,
            x=list(funnel["count"]),
            textinfo="value",
            textposition="auto",
            marker=dict(color=colours[: len(funnel)]),
            hovertemplate="%{y}: %{x}<extra></extra>",
        )
    )
    fig.update_yaxes(automargin=True)
    return _layout(fig, "Stage funnel (count · stage time)", height=380, showlegend=False)


# ---- Breakdown: the CDR product -----------------------------------------------------------------
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
        if k == 0:
            measure.append("absolute")
            y.append(r.running_product)
            text.append(f"{r.multiplier:.4f}")
        else:
            measure.append("relative")
            y.append(r.running_product - prev)
            text.append(f"× {r.multiplier:.3f}")
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
            decreasing=dict(marker=dict(color="#b00020")),
            increasing=dict(marker=dict(color="#1b7f3b")),
            totals=dict(marker=dict(color="#1f5fa8")),
            hovertemplate="%{x}<br>%{text}<extra></extra>",
        )
    )
    top = max([1.0] + [float(v) for v in body["running_product"]])
    fig.update_yaxes(range=[0, top * 1.15], title="running product")
    # a plotly title does not wrap: a long id is shortened here (the fact card above shows it whole)
    return _layout(fig, f"CDR of {esc(fact_id, 36)}: running product", height=420, showlegend=False)


def _short_step(label: str) -> str:
    return {"importance weight": "importance", "recency factor": "× recency"}.get(
        label, "× " + label.split(" = ")[0].split(" (")[0]
    )


# ---- Breakdown: recency curves ------------------------------------------------------------------
def curve_ttls(config: Any, explicit_ttls: Iterable[float] = ()) -> list[tuple[float, str]]:
    """One curve per distinct TTL: each source type's TTL (types sharing a TTL share a curve),
    then each explicit fact TTL not already drawn. ``inf`` = no expiry. Sorted by TTL."""
    by_ttl: dict[float, list[str]] = {}
    for stype in SOURCE_TYPES:
        t = config.ttl_days[stype]
        by_ttl.setdefault(math.inf if t is None else float(t), []).append(stype)
    out = [(t, f"{_ttl_text(t)}: {', '.join(types)}") for t, types in by_ttl.items()]
    for t in sorted({float(t) for t in explicit_ttls if t is not None and not math.isnan(float(t))}):
        if t not in by_ttl:
            out.append((t, f"{_ttl_text(t)}: explicit ttl"))
    return sorted(out, key=lambda p: p[0])


def _ttl_text(t: float) -> str:
    return "no expiry" if math.isinf(t) else f"TTL {t:g} d"


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


#: points of a recency curve across the whole axis (where it is flat they only serve the hover readout)
CURVE_SPAN_POINTS = 16


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


def recency_settings(config: Any) -> tuple[Any, ...]:
    """The settings the recency chart reads from a config: stale floor, fresh fraction, TTL per source type."""
    return (
        float(config.stale_floor),
        float(config.fresh_fraction),
        tuple(config.ttl_days[stype] for stype in SOURCE_TYPES),
    )


def recency_chart(
    frame: pd.DataFrame, config: Any, *, selected: str | None = None, log_x: bool = False, n_points: int = 48
) -> go.Figure:
    """Recency factor vs age (SPEC-027 §3.2) for each TTL, scored facts as markers on their curve.

    ``frame``: breakdown rows (``age_days``, ``ttl_days``, ``ttl_source``, ``recency_factor``,
    ``recency_rule``, ``status``, ``fact_id``, ``source_type``). Facts with status STALE sit at the
    stale floor whatever their age (their own marker); facts of unknown age are not drawn.
    The traces and the layout are plain dicts given to one ``go.Figure`` call: plotly validates them
    once, instead of once per ``add_trace`` / ``add_hline`` (each of which also re-reads the layout).
    What the browser receives is kept small: each curve is drawn through ``n_points`` ages of its decay
    and its two kinks (flat elsewhere), coordinates are float32, and a fact marker's hover is one
    template per trace filled from ``customdata`` (id, source type, rule) instead of a string per point.
    """
    stale_floor, fresh_fraction = float(config.stale_floor), float(config.fresh_fraction)
    # only the columns drawn: row selections then copy 8 columns, not the breakdown's thirty
    known = frame.loc[frame["age_days"].notna().to_numpy(), list(RECENCY_COLUMNS)]
    explicit = known.loc[known["ttl_source"] == "explicit", "ttl_days"].tolist()
    curves = curve_ttls(config, explicit)
    finite = [t for t, _ in curves if not math.isinf(t)]
    ages_known = known["age_days"].to_numpy(dtype=float)
    max_age = max([1.0] + [t * 1.15 for t in finite] + [float(a) * 1.05 for a in ages_known])
    is_stale = ((known["status"] == "STALE") | (known["recency_rule"] == "stale_status")).to_numpy()
    stale, on_curve = known[is_stale], known[~is_stale]
    ttl_col = on_curve["ttl_days"].fillna(math.inf).to_numpy(dtype=float)
    traces: list[dict[str, Any]] = []
    for k, (ttl, label) in enumerate(curves):
        colour = CURVE_COLOURS[k % len(CURVE_COLOURS)]
        ages = _curve_ages(ttl, max_age, log_x, n_points, fresh_fraction)
        ys = recency_curve_points(ttl, ages, stale_floor=stale_floor, fresh_fraction=fresh_fraction)
        traces.append(
            dict(
                type="scatter",
                x=ages.astype(np.float32),
                y=ys.astype(np.float32),
                mode="lines",
                name=esc(label),
                legendgroup=str(k),
                line=dict(color=colour, width=2),
                hovertemplate=f"{esc(label)}<br>age %{{x:.1f}} d → %{{y:.3f}}<extra></extra>",
            )
        )
        on = (np.isinf(ttl_col) & math.isinf(ttl)) if math.isinf(ttl) else np.isclose(ttl_col, ttl)
        if on.any():
            traces.append(_fact_markers(on_curve[on], colour, f"facts ({_ttl_text(ttl)})", str(k), log_x))
    if len(stale):
        traces.append(_fact_markers(stale, "#a15c00", "status STALE → floor", "stale", log_x, symbol="x"))
    if selected is not None:
        sel = known[known["fact_id"] == selected]
        if len(sel):
            x = max(float(sel["age_days"].iloc[0]), 0.5) if log_x else float(sel["age_days"].iloc[0])
            traces.append(
                dict(
                    type="scatter",
                    x=[x],
                    y=[float(sel["recency_factor"].iloc[0])],
                    mode="markers",
                    name=f"selected: {esc(selected, 40)}",
                    marker=dict(symbol="star", size=18, color="gold", line=dict(color="black", width=1)),
                    hovertemplate=f"{esc(selected)}<extra></extra>",
                )
            )
    # the stale floor: a dotted line across the plot with its label under the right end
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
    layout = dict(
        LAYOUT,
        title=dict(text="Recency factor vs age, per TTL (markers: scored facts)", x=0.0, xanchor="left"),
        height=440,
        shapes=[floor_line],
        annotations=[floor_note],
        # the legend's rows start below the axis title (the shared -0.18 lets the title run into them)
        legend=dict(orientation="h", y=-0.26, yanchor="top"),
        xaxis=dict(
            title=dict(text="age (days)" + (" — log scale" if log_x else "")), type="log" if log_x else "linear"
        ),
        yaxis=dict(title=dict(text="recency factor"), range=[0, 1.08]),
    )
    return go.Figure(data=traces, layout=layout)


def _fact_markers(
    pts: pd.DataFrame, colour: str, name: str, group: str, log_x: bool, symbol: str = "circle"
) -> dict[str, Any]:
    ages = pts["age_days"].to_numpy(dtype=float)
    if log_x:
        ages = np.maximum(ages, 0.5)
    custom = [[esc(f, 60), esc(s), esc(r)] for f, s, r in zip(pts["fact_id"], pts["source_type"], pts["recency_rule"])]
    return dict(
        type="scatter",
        x=ages.astype(np.float32),
        y=pts["recency_factor"].to_numpy(dtype=np.float32),
        mode="markers",
        name=name,
        legendgroup=group,
        marker=dict(color=colour, size=8, symbol=symbol, line=dict(color="white", width=0.5)),
        customdata=custom,
        hovertemplate=MARKER_HOVER,
    )


#: a fact marker's hover: customdata = (escaped id, source type, recency rule)
MARKER_HOVER = (
    "%{customdata[0]}<br>%{customdata[1]} · rule %{customdata[2]}<br>age %{x:.1f} d → factor %{y:.4f}<extra></extra>"
)


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
            line=dict(color="#b00020", dash="dash", width=2),
            annotation_text=esc(threshold_label),
            annotation_position="top right",
        )
    fig.update_layout(barmode="stack")
    fig.update_xaxes(title=column)
    fig.update_yaxes(title="facts")
    return _layout(fig, title or f"Histogram of {column}")


# ---- Graph (CDGR) -------------------------------------------------------------------------------
def _stress_layout(n: int, edges: Sequence[tuple[int, int, float]], iterations: int) -> np.ndarray:
    """Stress-majorisation (SMACOF, weights 1/d^2) layout of one connected component, target distance
    = sqrt(hop distance), started from classical MDS; each axis scaled into [-1, 1]. Deterministic."""
    if n == 1:
        return np.zeros((1, 2))
    adj = np.zeros((n, n), dtype=bool)
    for i, j, _ in edges:
        adj[i, j] = adj[j, i] = True
    d = np.full((n, n), np.inf)
    for s in range(n):  # BFS from every node (components are small: the drawn anchors + connectors)
        d[s, s] = 0
        frontier, hop = np.array([s]), 0
        while frontier.size:
            hop += 1
            nxt = np.flatnonzero(adj[frontier].any(axis=0) & np.isinf(d[s]))
            d[s, nxt] = hop
            frontier = nxt
    d[np.isinf(d)] = d[np.isfinite(d)].max() + 1
    d = np.sqrt(d)  # target distance sqrt(hops): a dense core gets room next to long chains
    # classical MDS start
    j = np.eye(n) - 1.0 / n
    b = -0.5 * j @ (d**2) @ j
    vals, vecs = np.linalg.eigh(b)
    top = np.argsort(vals)[::-1][:2]
    x = vecs[:, top] * np.sqrt(np.maximum(vals[top], 1e-9))
    x += 1e-3 * np.c_[np.arange(n), -np.arange(n)]  # break exact symmetries deterministically
    w = np.zeros((n, n))
    off = ~np.eye(n, dtype=bool)
    w[off] = 1.0 / d[off] ** 2
    v = -w.copy()
    np.fill_diagonal(v, w.sum(axis=1))
    v_pinv = np.linalg.pinv(v)
    for _ in range(iterations):
        dist = np.linalg.norm(x[:, None] - x[None], axis=-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(dist > 1e-12, w * d / dist, 0.0)
        bz = -ratio
        np.fill_diagonal(bz, ratio.sum(axis=1))
        x = v_pinv @ bz @ x
    lo, hi = x.min(axis=0), x.max(axis=0)
    span = np.where(hi - lo > 1e-9, hi - lo, 1.0)
    return np.where(hi - lo > 1e-9, 2 * (x - lo) / span - 1, 0.0)


def components(n: int, edges: Sequence[tuple[int, int, float]]) -> list[list[int]]:
    """Connected components (lists of node positions), largest first, ties by smallest member."""
    parent = list(range(n))

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for i, j, _ in edges:
        ri, rj = find(i), find(j)
        if ri != rj:
            parent[max(ri, rj)] = min(ri, rj)
    groups: dict[int, list[int]] = {}
    for v in range(n):
        groups.setdefault(find(v), []).append(v)
    return sorted(groups.values(), key=lambda g: (-len(g), g[0]))


def spring_layout(n: int, edges: Sequence[tuple[int, int, float]], *, iterations: int = 100) -> np.ndarray:
    """Deterministic layout of ``n`` nodes: each connected component laid out by stress
    majorisation on hop distances; the largest fills [-1, 1]^2, the others sit
    in a grid of smaller cells to its right (x in (1.2, ...)), so an isolated node never squeezes
    the main component."""
    if n == 0:
        return np.zeros((0, 2))
    comps = components(n, edges)
    pos = np.zeros((n, 2))
    biggest = len(comps[0])
    rest = comps[1:]
    per_col = max(1, math.ceil(math.sqrt(len(rest) * 2))) if rest else 1
    cell = 2.0 / per_col
    for c, members in enumerate(comps):
        local = {v: i for i, v in enumerate(members)}
        sub = [(local[i], local[j], w) for i, j, w in edges if i in local and j in local]
        p = _stress_layout(len(members), sub, iterations)
        if c == 0:
            pos[members] = p
            continue
        r = max(0.15, 0.9 * math.sqrt(len(members) / biggest)) * cell / 2
        col, row = divmod(c - 1, per_col)
        centre = np.array([1.2 + cell / 2 + col * cell, 1.0 - cell / 2 - row * cell])
        pos[members] = centre + r * p
    return pos


def cdgr_elements(
    result: Any, *, include_candidates: bool = False, operator_statuses: Mapping[str, str] | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Nodes and edges of the CDGR picture.

    Nodes: anchors (+ extra anchors), selected connectors and, with ``include_candidates``, the
    connector candidates with bridge value > 0; ``operator_status`` is the status an operator gave
    the fact (``operator_statuses``: fact id -> status, only those that differ from the CKF), ""
    when none. Edges: the pipeline's ``graph_edges`` (among anchors and selected connectors) and,
    for candidates, the similarity-graph edges among the drawn nodes
    (``corpus.graph(config).edges(rows)``, weight = cosine).
    """
    marked = dict(operator_statuses or {})
    kb = result.corpus.kb
    cdgr, cdr = result.cdgr, result.cdr
    conn = cdgr.connectors
    cdr_pos = {int(r): i for i, r in enumerate(cdr.idx.tolist())}
    conn_pos = {int(r): i for i, r in enumerate(conn.idx.tolist())}
    in_env = {p.fact_id for p in result.envelope.order}
    suppressed = set(np.asarray(result.resolution.suppressed).tolist())
    rows: dict[int, str] = {}
    for r in np.concatenate([cdgr.anchors, cdgr.extra_anchors]).tolist():
        rows[int(r)] = "anchor"
    for r in cdgr.selected_connectors.tolist():
        rows.setdefault(int(r), "connector")
    if include_candidates:
        for i, r in enumerate(conn.idx.tolist()):
            if conn.bridge_value[i] > 0:
                rows.setdefault(int(r), "candidate")
    nodes = []
    for r, kind in rows.items():
        f = kb.facts[r]
        ci = conn_pos.get(r)
        nodes.append(
            {
                "row": r,
                "fact_id": f.fact_id,
                "kind": kind,
                "cdr_score": float(cdr.cdr_score[cdr_pos[r]]) if r in cdr_pos else np.nan,
                "bridge_value": float(conn.bridge_value[ci]) if ci is not None else np.nan,
                "connector_score": float(conn.connector_score[ci]) if ci is not None else np.nan,
                "in_envelope": f.fact_id in in_env,
                "suppressed": r in suppressed,
                "operator_status": marked.get(f.fact_id, ""),
                "content": f.content,
            }
        )
    node_df = pd.DataFrame(
        nodes,
        columns=[
            "row",
            "fact_id",
            "kind",
            "cdr_score",
            "bridge_value",
            "connector_score",
            "in_envelope",
            "suppressed",
            "operator_status",
            "content",
        ],
    )
    edges: dict[tuple[int, int], float] = {}
    for a, b, w in cdgr.graph_edges:
        edges[(min(a, b), max(a, b))] = float(w)
    if include_candidates and len(rows) > 1:
        ra, rb, ws = result.corpus.graph(result.config).edges(np.array(sorted(rows), dtype=np.int64))
        for a, b, w in zip(ra.tolist(), rb.tolist(), np.asarray(ws).tolist()):
            edges.setdefault((min(a, b), max(a, b)), float(w))
    edge_df = pd.DataFrame(
        [
            {"a": kb.facts[a].fact_id, "b": kb.facts[b].fact_id, "weight": w}
            for (a, b), w in sorted(edges.items())
            if a in rows and b in rows
        ],
        columns=["a", "b", "weight"],
    )
    return node_df, edge_df


def contradiction_edges(result: Any) -> pd.DataFrame:
    """The run's stage-4 pairs (SPEC-027 §2) as edges ``a``, ``b``, ``outcome`` (the arbitration's
    label: "<id> wins", "tie", "dismissed", "override: <id> wins"; "skipped" for a pair a fact of
    which an earlier pair already suppressed)."""
    from .conflicts_view import arbitration_label

    rows = [
        {"a": p.fact_a, "b": p.fact_b, "outcome": "skipped" if p.skipped else arbitration_label(p)}
        for p in result.resolution.pairs
    ]
    return pd.DataFrame(rows, columns=["a", "b", "outcome"])


def given_edges_frame(kb: Any) -> pd.DataFrame:
    """The producer's edges of the CKF (an SDK snapshot's, :func:`crp_core.io.ckf.sdk.given_edges`) as
    ``a``, ``b``, ``relation_type``, ``confidence``: not similarity edges, drawn as given."""
    from crp_core.io.ckf.sdk import given_edges

    rows = [
        {
            "a": e.source_id,
            "b": e.target_id,
            "relation_type": e.relation_type,
            "confidence": e.confidence,
            "edge_id": e.edge_id,
        }
        for e in given_edges(kb)
    ]
    return pd.DataFrame(rows, columns=["a", "b", "relation_type", "confidence", "edge_id"])


GIVEN_EDGE_COLOUR = "#1b7f5b"


#: how the Graph marks a fact the run or an operator took out: (legend name, symbol, colour)
NODE_MARKS = {
    "suppressed": ("suppressed (lost a contradiction)", "x-thin-open", "#b00020"),
    "operator": ("status set by an operator", "square-open", "#a15c00"),
}
CONTRADICTION_COLOUR = "#b00020"


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
    # edges, in width classes (a line trace has one width)
    if el:
        ws = np.array([w for _, _, w in el])
        width = 1.0 + 5.0 * np.clip((ws - edge_min) / max(1e-9, 1.0 - edge_min), 0, 1)
        for cls in np.unique(np.round(width)):
            xs, ys = [], []
            for (i, j, _), wd in zip(el, width):
                if round(wd) == cls:
                    xs += [pos[i, 0], pos[j, 0], None]
                    ys += [pos[i, 1], pos[j, 1], None]
            fig.add_trace(
                go.Scatter(
                    x=xs,
                    y=ys,
                    mode="lines",
                    line=dict(color="#9aa5b1", width=float(cls)),
                    hoverinfo="skip",
                    showlegend=False,
                )
            )
        mx = [(pos[i, 0] + pos[j, 0]) / 2 for i, j, _ in el]
        my = [(pos[i, 1] + pos[j, 1]) / 2 for i, j, _ in el]
        labels = [f"{w:.2f}" for _, _, w in el] if len(el) <= 60 else None
        fig.add_trace(
            go.Scatter(
                x=mx,
                y=my,
                mode="text" if labels else "markers",
                text=labels,
                textfont=dict(size=10, color="#555"),
                marker=dict(size=4, color="#9aa5b1"),
                hovertext=[f"{esc(ids[i], 40)} — {esc(ids[j], 40)}<br>weight (cosine) {w:.4f}" for i, j, w in el],
                hoverinfo="text",
                name="edge weight",
                showlegend=False,
            )
        )
    if highlight is not None and bridged_pairs:
        xs, ys = [], []
        for a, b in bridged_pairs:
            if a in at and b in at:
                xs += [pos[at[a], 0], pos[at[b], 0], None]
                ys += [pos[at[a], 1], pos[at[b], 1], None]
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=ys,
                mode="lines",
                line=dict(color="#b00020", width=2, dash="dash"),
                name=f"pairs bridged by {esc(highlight, 30)} (no direct edge)",
                hoverinfo="skip",
            )
        )
    if contradictions is not None and len(contradictions):
        xs, ys, mx, my, hover = [], [], [], [], []
        for a, b, outcome in contradictions[["a", "b", "outcome"]].itertuples(index=False):
            if a in at and b in at:
                xs += [pos[at[a], 0], pos[at[b], 0], None]
                ys += [pos[at[a], 1], pos[at[b], 1], None]
                mx.append((pos[at[a], 0] + pos[at[b], 0]) / 2)
                my.append((pos[at[a], 1] + pos[at[b], 1]) / 2)
                hover.append(f"contradiction {esc(a, 40)} ↔ {esc(b, 40)}<br>{esc(outcome, 80)}")
        if xs:
            fig.add_trace(
                go.Scatter(
                    x=xs,
                    y=ys,
                    mode="lines",
                    hoverinfo="skip",
                    name="contradiction (stage 4)",
                    line=dict(color=CONTRADICTION_COLOUR, width=2.5, dash="dot"),
                )
            )
            fig.add_trace(
                go.Scatter(
                    x=mx,
                    y=my,
                    mode="markers",
                    hovertext=hover,
                    hoverinfo="text",
                    marker=dict(size=9, color=CONTRADICTION_COLOUR, symbol="diamond-wide"),
                    name="contradiction outcome",
                    showlegend=False,
                )
            )
    if given is not None and len(given):
        _given_traces(fig, given, pos, at)
    names = {"anchor": "anchor", "connector": "connector (selected)", "candidate": "connector candidate"}
    for kind in ("anchor", "connector", "candidate"):
        sub = nodes[nodes["kind"] == kind]
        if not len(sub):
            continue
        idx = [at[f] for f in sub["fact_id"]]
        text, hover, size, line_w = [], [], [], []
        for r in sub.itertuples(index=False):
            label = esc(r.fact_id, 24)
            if kind != "anchor" and not math.isnan(r.bridge_value):
                label += f"<br>bridge {r.bridge_value:.2f}"
            text.append(label)
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
            hover.append("<br>".join(bits))
            hl = highlight is not None and (r.fact_id == highlight or any(r.fact_id in p for p in bridged_pairs))
            size.append(24 if hl else 16)
            line_w.append(3 if hl else 1)
        fig.add_trace(
            go.Scatter(
                x=pos[idx, 0],
                y=pos[idx, 1],
                mode="markers+text",
                text=text,
                textposition="top center",
                textfont=dict(size=11),
                name=names[kind],
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
        )
    for mark, column in (("suppressed", "suppressed"), ("operator", "operator_status")):
        if column not in nodes.columns:  # node frames built before operator marks existed
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
    x_hi = float(pos[:, 0].max()) if len(pos) else 1.0
    fig.update_xaxes(visible=False, range=[-1.25, max(1.25, x_hi + 0.3)])
    fig.update_yaxes(visible=False, range=[-1.2, 1.25])
    return _layout(fig, "CDGR: anchors and connectors (edge label = weight)", height=560)


def _given_traces(fig: go.Figure, given: pd.DataFrame, pos: np.ndarray, at: Mapping[str, int]) -> None:
    xs: list[float | None] = []
    ys: list[float | None] = []
    mx, my, hover = [], [], []
    for a, b, rel, conf in given[["a", "b", "relation_type", "confidence"]].itertuples(index=False):
        if a in at and b in at:
            xs += [pos[at[a], 0], pos[at[b], 0], None]
            ys += [pos[at[a], 1], pos[at[b], 1], None]
            mx.append(0.4 * pos[at[a], 0] + 0.6 * pos[at[b], 0])  # off the middle: a contradiction marker may sit there
            my.append(0.4 * pos[at[a], 1] + 0.6 * pos[at[b], 1])
            c = "" if conf is None or (isinstance(conf, float) and math.isnan(conf)) else f" · confidence {conf:.2f}"
            hover.append(f"given edge {esc(a, 40)} → {esc(b, 40)}<br>{esc(rel, 60)}{c}")
    if xs:
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=ys,
                mode="lines",
                hoverinfo="skip",
                name="given edge (SDK snapshot)",
                line=dict(color=GIVEN_EDGE_COLOUR, width=2, dash="dashdot"),
            )
        )
        fig.add_trace(
            go.Scatter(
                x=mx,
                y=my,
                mode="markers",
                hovertext=hover,
                hoverinfo="text",
                marker=dict(size=8, color=GIVEN_EDGE_COLOUR, symbol="triangle-up"),
                name="given edge relation",
                showlegend=False,
            )
        )


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
                marker_color="#d9b44a",
                hovertext=f"{other} tokens",
                hoverinfo="text",
            )
        )
    fig.add_vline(
        x=token_budget,
        line=dict(color="#b00020", dash="dash", width=2),
        annotation_text=f"budget {token_budget}",
        annotation_position="top left",
    )
    fig.update_layout(barmode="stack")
    fig.update_xaxes(title="tokens", range=[0, max(token_budget, tokens_used) * 1.05])
    fig.update_yaxes(visible=False)
    _layout(fig, f"Token use: {tokens_used} / {token_budget}", height=230)
    fig.update_layout(legend=dict(orientation="h", y=1.02, yanchor="bottom", x=1.0, xanchor="right"))
    return fig


def legend_names(fig: go.Figure) -> list[str]:
    """Names of the traces shown in the legend (tests and captions)."""
    return [t.name for t in fig.data if t.name and t.showlegend is not False]


__all__ = [
    "stage_funnel",
    "cdr_waterfall",
    "curve_ttls",
    "recency_curve_points",
    "recency_chart",
    "score_histogram",
    "spring_layout",
    "cdgr_elements",
    "cdgr_network",
    "token_budget_bar",
    "esc",
]
