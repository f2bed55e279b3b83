"""The Fan-out page's partition view (SPEC-027 §1.4): the rule that split the ResidualSet, the partitions
as a table, and the sub-query embeddings projected to 2-D (PCA) as a plotly scatter coloured by partition.

The projection is presentation only (a picture of what k-means clustered); the partitions themselves are
the pipeline's (``FanoutResult.partitioned.partitions``). Ids and texts reach plotly labels and hover text
through :func:`crp_ui.render.esc` (plotly interprets a subset of HTML there).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from crp_core import RULE_KMEANS, RULE_ONE_EACH, RULE_SINGLE, FanoutResult, Scenario, SubQuery

from .chart_style import LABEL_HALO
from .render import esc
from .theme import branch_colour

#: PCA(n_components=2, random_state=PCA_SEED) on the ResidualSet sub-query vectors
PCA_SEED = 0


def rule_text(rule: str, residual_size: int, width: int) -> str:
    """The rule of SPEC-027 §1.4 that produced the partitions, in words."""
    if rule == RULE_ONE_EACH:
        return (
            f"|ResidualSet| = {residual_size} <= width {width}: one sub-query per partition "
            f"({residual_size} partition(s))."
        )
    if rule == RULE_KMEANS:
        return (
            f"|ResidualSet| = {residual_size} > width {width}: k-means (k = {width}) on the sub-query "
            "embeddings (L2-normalised, random_state = kmeans_seed, n_init = kmeans_n_init)."
        )
    if rule == RULE_SINGLE:
        return "Width 1: a single partition (sequential behaviour)."
    return str(rule)


def _label(sq: SubQuery | None) -> str:
    return (sq.label or "") if sq else ""


#: the partition table's columns as shown, from :func:`partitions_frame`'s (the branch names the partition)
PARTITION_COLUMNS = {"branch": "branch", "sub_query": "sub-query", "label": "label", "text": "text"}


def partitions_table(frame: pd.DataFrame) -> pd.DataFrame:
    """:func:`partitions_frame` as the page shows it: a short list drawn whole (``render.table`` wraps each
    cell in its column: a dataframe in the partition view's narrow column cut the sub-queries' text), the
    partition number left out (the branch names it), and the label column when no sub-query has one."""
    columns = [c for c in PARTITION_COLUMNS if c != "label" or frame["label"].astype(bool).any()]
    return frame[columns].rename(columns=PARTITION_COLUMNS)


def partitions_frame(fan: FanoutResult, scenario: Scenario) -> pd.DataFrame:
    """One row per ResidualSet sub-query: its partition (= branch), id, label and text."""
    by_id = {sq.id: sq for sq in scenario.sub_queries}
    rows = []
    for b, part in enumerate(fan.partitioned.partitions):
        for sid in part:
            sq = by_id.get(sid)
            rows.append(
                {
                    "partition": b,
                    "branch": f"Branch {b}",
                    "sub_query": sid,
                    "label": _label(sq),
                    "text": sq.text if sq else "",
                }
            )
    return pd.DataFrame(rows, columns=["partition", "branch", "sub_query", "label", "text"])


@dataclass(frozen=True)
class Projection:
    """The 2-D PCA view of the sub-query embeddings (partition view)."""

    points: pd.DataFrame  # sub_query, label, text, partition (-1: addressed), kind ("residual"/"addressed"), x, y
    centroids: pd.DataFrame  # partition, x, y, size
    explained: tuple[float, ...]  # explained variance ratio of the components used
    components: int  # 0, 1 or 2
    note: str  # how it was projected (method, seed) and any degenerate case


def _unit(v: object) -> np.ndarray:
    """A vector L2-normalised (a zero vector stays as it is)."""
    x = np.asarray(v, dtype=np.float64).ravel()
    n = np.linalg.norm(x)
    return x / n if n > 0 else x


def _fit(
    x: np.ndarray, cent: np.ndarray, extra: np.ndarray, comps: int, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[float, ...]]:
    """PCA with ``comps`` components fitted on ``x``; ``x``, the centroids and the extra points projected and
    padded to two columns, with the explained variance ratios."""
    from sklearn.decomposition import PCA

    pca = PCA(n_components=comps, random_state=seed)
    proj = pca.fit_transform(x)

    def pad(a: np.ndarray) -> np.ndarray:
        return np.hstack([a, np.zeros((a.shape[0], 2 - comps))]) if comps < 2 else a

    exy = pad(pca.transform(extra)) if len(extra) else np.zeros((0, 2))
    return pad(proj), pad(pca.transform(cent)), exy, tuple(float(v) for v in pca.explained_variance_ratio_)


def _note(n: int, distinct: int, comps: int, explained: tuple[float, ...], seed: int) -> str:
    """How the projection was made, in words (and the degenerate cases)."""
    if comps == 0:
        if not n:
            return "The ResidualSet is empty."
        return (
            f"{n} distinct sub-query position(s) in the ResidualSet: nothing to project, shown at the "
            "origin. The partition rule still applies as stated."
        )
    if comps < 2:
        return (
            f"Only {n} sub-queries ({distinct} distinct): one PCA component fitted "
            f"(random_state={seed}), shown on the x axis (y = 0)."
        )
    return (
        f"PCA(n_components=2, random_state={seed}) fitted on the {n} ResidualSet sub-query embeddings "
        f"(L2-normalised); explained variance {', '.join(f'{v:.0%}' for v in explained)}."
    )


def _point_rows(
    ids: Sequence[tuple[int, str]], xy: np.ndarray, kind: str, by_id: Mapping[str, SubQuery]
) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for (b, sid), (px, py) in zip(ids, xy):
        sq = by_id.get(sid)
        rows.append(
            {
                "sub_query": sid,
                "label": _label(sq),
                "text": sq.text if sq else "",
                "partition": b,
                "kind": kind,
                "x": float(px),
                "y": float(py),
            }
        )
    return rows


def project_partitions(
    partitions: Sequence[Sequence[str]],
    vectors: Mapping[str, object],
    *,
    scenario: Scenario | None = None,
    addressed_ids: Sequence[str] = (),
    seed: int = PCA_SEED,
) -> Projection:
    """PCA(n_components=2, random_state=seed) fitted on the ResidualSet sub-query vectors.

    The vectors are L2-normalised first (what k-means clustered). Each partition's centroid is the
    mean of its members' normalised vectors, projected with the same PCA; addressed sub-queries
    (the Coverage Set) are projected too, for context, but do not take part in the fit. With one
    sub-query there is nothing to fit (the point sits at the origin); with two, one component is
    fitted (y = 0). Deterministic: the full SVD solver is used for these sizes, and
    ``random_state`` is fixed anyway.
    """
    by_id = {sq.id: sq for sq in scenario.sub_queries} if scenario is not None else {}
    members = [(b, sid) for b, part in enumerate(partitions) for sid in part]
    n = len(members)
    extra_ids = [s for s in addressed_ids if s in vectors]
    x = np.stack([_unit(vectors[s]) for _, s in members]) if n else np.zeros((0, 0))
    extra = np.stack([_unit(vectors[s]) for s in extra_ids]) if extra_ids else np.zeros((0, 0))
    distinct = int(np.unique(np.round(x, 9), axis=0).shape[0]) if n else 0
    comps = max(min(2, n - 1, distinct - 1, x.shape[1]), 0) if n else 0
    explained: tuple[float, ...] = ()
    if comps == 0:
        xy, cxy, exy = np.zeros((n, 2)), np.zeros((len(partitions), 2)), np.zeros((len(extra_ids), 2))
    else:
        groups = [[i for i, (b, _) in enumerate(members) if b == p] for p in range(len(partitions))]
        cent = np.stack([x[g].mean(axis=0) for g in groups])
        xy, cxy, exy, explained = _fit(x, cent, extra, comps, seed)
    points = pd.DataFrame(
        _point_rows(members, xy, "residual", by_id)
        + _point_rows([(-1, s) for s in extra_ids], exy, "addressed", by_id),
        columns=["sub_query", "label", "text", "partition", "kind", "x", "y"],
    )
    centroids = pd.DataFrame(
        [
            {"partition": p, "x": float(cx), "y": float(cy), "size": len(partitions[p])}
            for p, (cx, cy) in enumerate(cxy)
        ],
        columns=["partition", "x", "y", "size"],
    )
    return Projection(
        points=points,
        centroids=centroids,
        explained=explained,
        components=comps,
        note=_note(n, distinct, comps, explained, seed),
    )


def _short(text: object, limit: int) -> str:
    s = "" if text is None else str(text)
    return s if len(s) <= limit else s[: limit - 1] + "…"


def _partition_trace(pts: pd.DataFrame, partition: int) -> go.Scatter:
    """The ResidualSet sub-queries of one partition, in its branch's colour, labelled with their id."""
    return go.Scatter(
        x=pts["x"].tolist(),
        y=pts["y"].tolist(),
        mode="markers+text",
        name=f"partition {partition} (branch {partition})",
        text=[esc(s, 18) for s in pts["sub_query"]],
        # labels above and below in turn, so two close members of a partition keep readable labels
        textposition=["top center" if i % 2 == 0 else "bottom center" for i in range(len(pts))],
        textfont={"size": 11, "shadow": LABEL_HALO},
        cliponaxis=False,
        marker={"size": 12, "color": branch_colour(partition), "line": {"color": "white", "width": 1}},
        customdata=[[esc(s), partition] for s in pts["sub_query"]],
        hovertext=[
            f"{esc(s)}: {esc(_short(t, 80))} (partition {partition})" for s, t in zip(pts["sub_query"], pts["text"])
        ],
        hoverinfo="text",
    )


def partition_figure(proj: Projection) -> go.Figure:
    """The partition view: the projected sub-queries coloured by partition and labelled with their id, the
    addressed ones as grey rings, each partition's centroid as a cross, axis titles with the explained
    variance. Hovering a point shows its id and text."""
    pts, cen = proj.points, proj.centroids
    residual = pts[pts["kind"] == "residual"]
    traces = [_partition_trace(residual[residual["partition"] == p], p) for p in sorted(set(residual["partition"]))]
    addressed = pts[pts["kind"] == "addressed"]
    if len(addressed):
        traces.append(
            go.Scatter(
                x=addressed["x"].tolist(),
                y=addressed["y"].tolist(),
                mode="markers+text",
                name="addressed (Coverage Set)",
                text=[esc(s, 18) for s in addressed["sub_query"]],
                textposition="bottom center",
                textfont={"size": 11, "color": "#888", "shadow": LABEL_HALO},
                marker={"size": 10, "color": "rgba(0,0,0,0)", "line": {"color": "#999", "width": 2}},
                customdata=[[esc(s), -1] for s in addressed["sub_query"]],
                hovertext=[
                    f"{esc(s)} (addressed): {esc(_short(t, 80))}"
                    for s, t in zip(addressed["sub_query"], addressed["text"])
                ],
                hoverinfo="text",
            )
        )
    if len(cen):
        traces.append(
            go.Scatter(
                x=cen["x"].tolist(),
                y=cen["y"].tolist(),
                mode="markers",
                name="centroids",
                marker={
                    "symbol": "x-thin",
                    "size": 14,
                    "line": {"width": 3, "color": [branch_colour(int(p)) for p in cen["partition"]]},
                },
                customdata=[[int(p), int(s)] for p, s in zip(cen["partition"], cen["size"])],
                hovertemplate="centroid of partition %{customdata[0]} (%{customdata[1]} sub-queries)<extra></extra>",
            )
        )
    labels = [f"PC{i + 1} ({v:.0%})" for i, v in enumerate(proj.explained)] + ["PC1", "PC2"][len(proj.explained) :]
    fig = go.Figure(data=traces)
    fig.update_layout(
        title={"text": "Sub-query embeddings (PCA, 2-D)", "x": 0.0, "xanchor": "left"},
        height=400,
        margin={"l": 40, "r": 30, "t": 40, "b": 10},  # room for the labels of the outermost points
        legend={"orientation": "h", "y": -0.2, "yanchor": "top"},
        xaxis={"title": {"text": labels[0]}, "zeroline": False},
        yaxis={"title": {"text": labels[1]}, "zeroline": False},
    )
    return fig
