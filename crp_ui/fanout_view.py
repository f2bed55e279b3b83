"""Pure helpers of the Fan-out simulator page (SPEC-027 §1): records -> frames, HTML, figures.

Nothing here imports Streamlit's runtime or recomputes a score: every number shown comes from the
:class:`~crp_core.records.FanoutResult` the pipeline returned (``steps``, ``naive_steps``, the branch
CDR tables). The only computation is presentation: the page's scenario/config overrides
(:func:`page_scenario`, :func:`page_config`), the 2-D PCA projection of the sub-query embeddings
(:func:`project_partitions`) and the alignment of the naive timeline with the partitioned one.

Untrusted text (fact contents, sub-query ids and texts) only reaches HTML (and the partition view's
SVG) through :func:`crp_ui.render.html_text`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from crp_core import RULE_KMEANS, RULE_ONE_EACH, RULE_SINGLE
from crp_core.config import CRPConfig
from crp_core.corpus.prepared import Corpus
from crp_core.headers import PARTITIONS as PARTITIONS_HEADER
from crp_core.model import Scenario
from crp_core.records import FANOUT_DUPLICATES, FanoutResult, FanoutRun, FanoutStep

from .render import html_text

#: the fan-out widths the page offers
MIN_WIDTH, MAX_WIDTH = 1, 8
#: PCA(n_components=2, random_state=PCA_SEED) on the ResidualSet sub-query vectors
PCA_SEED = 0
#: the time label of each step kind, in the style of SPEC-027 §1.1 (T0 read, T1 retrieve, T2 write, T3 merge)
STEP_TIME = {
    "parent": "T0",
    "partition": "T0",
    "snapshot": "T1",
    "retrieval": "T1",
    "additions": "T2",
    "merge": "T3",
    "dedup": "T3",
}
#: branch colours (partition view, chips); cycled beyond 8
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf")
ADDED_BG = "#fff3b0"  # highlight of the entries added at this step
DUP_BG = "#ffd6d6"  # highlight of a fact chosen by more than one branch


def attr(text: Any) -> str:
    """Text for an HTML attribute value: escaped like :func:`html_text`, line breaks as spaces."""
    s = "" if text is None else str(text)
    return html_text(s.replace("\r", " ").replace("\n", " "))


def branch_colour(branch: int | None) -> str:
    return "#555555" if branch is None else PALETTE[int(branch) % len(PALETTE)]


# ---- the page's overrides -------------------------------------------------------------------------
def clamp_width(width: Any) -> int:
    """The scenario's ``fanout_width`` as a value of the page's width control (1..8; 0 counts as 1)."""
    try:
        w = int(width)
    except (TypeError, ValueError):
        w = MIN_WIDTH
    return min(max(w, MIN_WIDTH), MAX_WIDTH)


def page_scenario(
    scenario: Scenario, *, width: int, residual_ids: Iterable[str], branch_depth_weight: float
) -> Scenario:
    """The scenario with the page's controls applied (``Scenario.with_residual``; this page only)."""
    return scenario.with_residual(residual_ids, fanout_width=width, depth_weight=branch_depth_weight)


def page_config(config: CRPConfig, branch_depth_weight: float) -> CRPConfig:
    """``config`` with the page's branch depth weight (``config.replace``; same object when unchanged)."""
    if float(branch_depth_weight) == float(config.branch_depth_weight):
        return config
    return config.replace(branch_depth_weight=float(branch_depth_weight))


def inactive_reason(width: int, residual_size: int) -> str:
    """Why fan-out does not run (SPEC_NOTES §1.2), '' when it does."""
    if int(width) <= 1:
        return (
            f"Width {int(width)}: no fan-out (SPEC_NOTES §1.2: 0 or 1 = no fan-out). One window retrieves "
            "sequentially, so there is nothing to partition and no "
            f"{PARTITIONS_HEADER} header. Choose a width of 2 or more."
        )
    if residual_size == 0:
        return (
            "The ResidualSet is empty (every sub-query is addressed): there is nothing left to fan out. "
            "Put some sub-queries back into the ResidualSet."
        )
    return ""


# ---- partition view (SPEC-027 §1.4) -----------------------------------------------------------------
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
                    "label": (sq.label or "") if sq else "",
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


def project_partitions(
    partitions: Sequence[Sequence[str]],
    vectors: Mapping[str, Any],
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
    from sklearn.decomposition import PCA

    by_id = {sq.id: sq for sq in scenario.sub_queries} if scenario is not None else {}
    members = [(b, sid) for b, part in enumerate(partitions) for sid in part]
    n = len(members)

    def unit(sid: str) -> np.ndarray:
        v = np.asarray(vectors[sid], dtype=np.float64).ravel()
        nrm = np.linalg.norm(v)
        return v / nrm if nrm > 0 else v

    x = np.stack([unit(s) for _, s in members]) if n else np.zeros((0, 0))
    cent = (
        np.stack([x[[i for i, (b, _) in enumerate(members) if b == p]].mean(axis=0) for p in range(len(partitions))])
        if n
        else np.zeros((0, 0))
    )
    extra_ids = [s for s in addressed_ids if s in vectors]
    extra = np.stack([unit(s) for s in extra_ids]) if extra_ids else None
    distinct = int(np.unique(np.round(x, 9), axis=0).shape[0]) if n else 0
    comps = min(2, n - 1, distinct - 1, x.shape[1] if n else 0) if n else 0
    comps = max(comps, 0)
    if comps == 0:
        xy = np.zeros((n, 2))
        cxy = np.zeros((len(partitions), 2))
        exy = np.zeros((len(extra_ids), 2))
        explained: tuple[float, ...] = ()
        note = (
            f"{n} distinct sub-query position(s) in the ResidualSet: nothing to project, shown at the "
            "origin. The partition rule still applies as stated."
            if n
            else "The ResidualSet is empty."
        )
    else:
        pca = PCA(n_components=comps, random_state=seed)
        proj = pca.fit_transform(x)

        def pad(a: np.ndarray) -> np.ndarray:
            return np.hstack([a, np.zeros((a.shape[0], 2 - comps))]) if comps < 2 else a

        xy = pad(proj)
        cxy = pad(pca.transform(cent))
        exy = pad(pca.transform(extra)) if extra is not None else np.zeros((0, 2))
        explained = tuple(float(v) for v in pca.explained_variance_ratio_)
        note = (
            f"PCA(n_components=2, random_state={seed}) fitted on the {n} ResidualSet sub-query embeddings "
            f"(L2-normalised); explained variance {', '.join(f'{v:.0%}' for v in explained)}."
        )
        if comps < 2:
            note = (
                f"Only {n} sub-queries ({distinct} distinct): one PCA component fitted "
                f"(random_state={seed}), shown on the x axis (y = 0)."
            )
    rows = []
    for (b, sid), (px, py) in zip(members, xy):
        sq = by_id.get(sid)
        rows.append(
            {
                "sub_query": sid,
                "label": (sq.label or "") if sq else "",
                "text": sq.text if sq else "",
                "partition": b,
                "kind": "residual",
                "x": float(px),
                "y": float(py),
            }
        )
    for sid, (px, py) in zip(extra_ids, exy):
        sq = by_id.get(sid)
        rows.append(
            {
                "sub_query": sid,
                "label": (sq.label or "") if sq else "",
                "text": sq.text if sq else "",
                "partition": -1,
                "kind": "addressed",
                "x": float(px),
                "y": float(py),
            }
        )
    points = pd.DataFrame(rows, columns=["sub_query", "label", "text", "partition", "kind", "x", "y"])
    centroids = pd.DataFrame(
        [
            {"partition": p, "x": float(cx), "y": float(cy), "size": len(partitions[p])}
            for p, (cx, cy) in enumerate(cxy)
        ],
        columns=["partition", "x", "y", "size"],
    )
    return Projection(points=points, centroids=centroids, explained=explained, components=comps, note=note)


#: the partition view's drawing area (SVG user units; the drawing scales to the column's width)
SVG_W, SVG_H, SVG_PAD = 460, 360, 40


def _short(text: Any, limit: int) -> str:
    s = "" if text is None else str(text)
    return s if len(s) <= limit else s[: limit - 1] + "…"


def partition_svg(proj: Projection) -> str:
    """The partition view as one inline SVG (HTML): the projected sub-queries coloured by partition and
    labelled with their id, the addressed ones as grey rings, each partition's centroid as a cross, axis
    titles with the explained variance, a legend below. Hovering a point shows its id and text (an SVG
    ``<title>``). The picture a plotly scatter would draw, without a plotly chart for the browser
    to load and lay out on every visit (nothing on it selects anything). Every id and text goes through
    :func:`attr` (escaped, line breaks as spaces)."""
    pts, cen = proj.points, proj.centroids
    xs = [float(v) for v in pts["x"]] + [float(v) for v in cen["x"]]
    ys = [float(v) for v in pts["y"]] + [float(v) for v in cen["y"]]
    x0, x1 = (min(xs), max(xs)) if xs else (-1.0, 1.0)
    y0, y1 = (min(ys), max(ys)) if ys else (-1.0, 1.0)
    # an axis with no spread (one point, or the y of a one-component fit) is centred on its value
    if x1 - x0 < 1e-9:
        x0, x1 = x0 - 1.0, x1 + 1.0
    if y1 - y0 < 1e-9:
        y0, y1 = y0 - 1.0, y1 + 1.0
    # a margin of 8 % of the spread on each side, so no marker or label sits on the frame
    mx, my = 0.08 * (x1 - x0), 0.08 * (y1 - y0)
    x0, x1, y0, y1 = x0 - mx, x1 + mx, y0 - my, y1 + my
    left, right, top, bottom = SVG_PAD, SVG_W - 16, 46, SVG_H - SVG_PAD

    def sx(v: float) -> float:
        return left + (v - x0) / (x1 - x0) * (right - left)

    def sy(v: float) -> float:
        return bottom - (v - y0) / (y1 - y0) * (bottom - top)

    labels = ["PC1", "PC2"]
    if proj.explained:
        labels = [f"PC{i + 1} ({v:.0%})" for i, v in enumerate(proj.explained)] + labels[len(proj.explained) :]
    out = [
        f'<rect x="{left - 12}" y="{top - 14}" width="{right - left + 24}" height="{bottom - top + 28}" '
        'fill="#fafafa" stroke="#e3e3e3"/>',
        f'<text x="{left - 12}" y="22" font-size="14" font-weight="600">Sub-query embeddings (PCA, 2-D)</text>',
        f'<text x="{(left + right) / 2:.1f}" y="{SVG_H - 10}" font-size="12" text-anchor="middle" '
        f'fill="#444">{attr(labels[0])}</text>',
        f'<text x="14" y="{(top + bottom) / 2:.1f}" font-size="12" text-anchor="middle" fill="#444" '
        f'transform="rotate(-90 14 {(top + bottom) / 2:.1f})">{attr(labels[1])}</text>',
    ]
    for r in pts.itertuples(index=False):
        px, py = sx(float(r.x)), sy(float(r.y))
        if r.kind == "addressed":
            tip = f"{r.sub_query} (addressed): {_short(r.text, 80)}"
            out.append(
                f'<g class="crp-pca-point" data-id="{attr(r.sub_query)}" data-partition="-1">'
                f'<title>{attr(tip)}</title><circle cx="{px:.1f}" cy="{py:.1f}" r="5" fill="none" '
                f'stroke="#999" stroke-width="2"/><text x="{px:.1f}" y="{py + 17:.1f}" font-size="11" '
                f'text-anchor="middle" fill="#888">{attr(_short(r.sub_query, 18))}</text></g>'
            )
        else:
            colour = branch_colour(int(r.partition))
            tip = f"{r.sub_query}: {_short(r.text, 80)} (partition {int(r.partition)})"
            out.append(
                f'<g class="crp-pca-point" data-id="{attr(r.sub_query)}" data-partition="{int(r.partition)}">'
                f'<title>{attr(tip)}</title><circle cx="{px:.1f}" cy="{py:.1f}" r="6.5" fill="{colour}" '
                f'stroke="#fff" stroke-width="1"/><text x="{px:.1f}" y="{py - 10:.1f}" font-size="11" '
                f'text-anchor="middle" fill="#333">{attr(_short(r.sub_query, 18))}</text></g>'
            )
    for c in cen.itertuples(index=False):
        px, py, colour = sx(float(c.x)), sy(float(c.y)), branch_colour(int(c.partition))
        out.append(
            f'<g class="crp-pca-centroid" data-partition="{int(c.partition)}"><title>centroid of partition '
            f"{int(c.partition)} ({int(c.size)} sub-queries)</title>"
            f'<path d="M{px - 7:.1f},{py - 7:.1f}L{px + 7:.1f},{py + 7:.1f}M{px - 7:.1f},{py + 7:.1f}'
            f'L{px + 7:.1f},{py - 7:.1f}" stroke="{colour}" stroke-width="3"/></g>'
        )
    parts = sorted({int(p) for p, k in zip(pts["partition"], pts["kind"]) if k == "residual"})
    swatch = (
        '<span style="display:inline-block;width:.75em;height:.75em;border-radius:50%;background:{c};'
        'margin:0 .3em 0 .9em;vertical-align:middle"></span>'
    )
    legend = [swatch.format(c=branch_colour(p)) + f"partition {p} (branch {p})" for p in parts]
    if (pts["kind"] == "addressed").any():
        legend.append(
            '<span style="display:inline-block;width:.6em;height:.6em;border-radius:50%;'
            'border:2px solid #999;margin:0 .3em 0 .9em;vertical-align:middle"></span>'
            "addressed (Coverage Set)"
        )
    if len(cen):
        legend.append('<span style="margin:0 .3em 0 .9em;font-weight:700">✕</span>centroids')
    return (
        f'<div class="crp-partition-view"><svg viewBox="0 0 {SVG_W} {SVG_H}" width="100%" role="img" '
        f'aria-label="Sub-query embeddings projected to 2-D (PCA), coloured by partition" '
        f'style="max-width:{SVG_W}px;font-family:sans-serif">{"".join(out)}</svg>'
        f'<div style="font-size:0.82em;color:#444;margin:-2px 0 4px -0.9em">'
        f"{''.join(f'<span style=white-space:nowrap>{item}</span> ' for item in legend)}</div></div>"
    )


# ---- stepper ----------------------------------------------------------------------------------------------
def step_time(step: FanoutStep) -> str:
    """T0..T3 of the step (the naive run carries its own label in ``detail.time``; 'Result' shows as T3)."""
    t = step.detail.get("time") if isinstance(step.detail, Mapping) else None
    if t:
        return "T3" if t == "Result" else str(t)
    return STEP_TIME.get(step.kind, "")


def actor(step: FanoutStep) -> str:
    """Who acts at this step: 'Branch k' or 'Parent'."""
    return "Parent" if step.branch is None else f"Branch {step.branch}"


def _what(step: FanoutStep) -> str:
    """The step's title without the time / branch prefix (the row shows those separately)."""
    t = step.title
    for p in ("T0: ", "T1: ", "T2: ", "Result: "):
        if t.startswith(p):
            t = t[len(p) :]
    if step.branch is not None:
        for p in (f"Branch {step.branch}: ", f"branch {step.branch} "):
            if t.startswith(p):
                t = t[len(p) :]
    return t


def step_label(step: FanoutStep) -> str:
    """The compact timeline row: ``T<n> · Branch k · <what happened>`` (plain text)."""
    return f"{step_time(step)} · {actor(step)} · {_what(step)}"


def naive_step_for(step: FanoutStep, naive_steps: Sequence[FanoutStep]) -> int:
    """The naive step shown beside a partitioned step: same phase, same branch.

    parent / partition / snapshot -> T0 (the naive branches read the shared set as it is); retrieval and
    additions of branch k -> the same of branch k; merge -> the last naive write; dedup -> the naive result.
    """
    if not naive_steps:
        return 0
    if step.kind in ("parent", "partition", "snapshot"):
        return 0
    if step.kind in ("retrieval", "additions"):
        for s in naive_steps:
            if s.kind == step.kind and s.branch == step.branch:
                return s.index
    if step.kind == "merge":
        adds = [s.index for s in naive_steps if s.kind == "additions"]
        return adds[-1] if adds else len(naive_steps) - 1
    return len(naive_steps) - 1


def chosen_by_several(run: FanoutRun) -> dict[str, tuple[int, ...]]:
    """Fact id -> the branches that chose it, for facts chosen by more than one branch."""
    by: dict[str, list[int]] = {}
    for b in run.branches:
        for fid in b.selected:
            by.setdefault(fid, []).append(b.branch)
    return {f: tuple(bs) for f, bs in by.items() if len(bs) > 1}


def duplicate_fact_ids(run: FanoutRun) -> frozenset[str]:
    """Every fact id named by a cross-branch duplicate of ``run`` (same fact or near-identical pair)."""
    return frozenset(run.duplicate_fact_ids)


def coverage_frame(step: FanoutStep, scenario: Scenario, config: CRPConfig) -> pd.DataFrame:
    """The Coverage Set visible at ``step``: one row per entry, ``added`` = new since the previous step.

    Depth and window are looked up, not computed: an addressed entry has the scenario's values, a branch
    addition has ``branch_depth_weight`` (what the branch writes, SPEC_NOTES §2.7).
    """
    by_id = {sq.id: sq for sq in scenario.sub_queries}
    addressed = {a.id: a for a in scenario.addressed}
    added = set(step.added)
    rows = []
    for sid in step.coverage:
        a = addressed.get(sid)
        sq = by_id.get(sid)
        rows.append(
            {
                "entry": sid,
                "label": (sq.label or "") if sq else "",
                "depth_weight": float(a.depth_weight) if a else float(config.branch_depth_weight),
                "origin": "addressed" if a else "branch addition",
                "added": sid in added,
            }
        )
    return pd.DataFrame(rows, columns=["entry", "label", "depth_weight", "origin", "added"])


def coverage_tips(frame: pd.DataFrame) -> dict[str, str]:
    """Hover text of each Coverage Set chip: origin and depth weight (from :func:`coverage_frame`)."""
    return {
        r.entry: f"{r.origin}, depth {r.depth_weight:g}" + (f", label {r.label}" if r.label else "")
        for r in frame.itertuples(index=False)
    }


def chips_html(
    ids: Sequence[str],
    *,
    highlight: Iterable[str] = (),
    kind: str = "cov",
    highlight_bg: str = ADDED_BG,
    empty: str = "(empty)",
    tips: Mapping[str, str] | None = None,
) -> str:
    """Inline chips for ids (escaped); ``highlight`` ones get a coloured background and a marker.

    Each chip carries ``data-id`` (escaped) and ``data-hl`` so tests can read what is shown; ``tips``
    (id -> text) become the chip's hover title (escaped).
    """
    hl = set(highlight)
    if not ids:
        return f'<span class="crp-{kind}-empty" style="color:#888">{html_text(empty)}</span>'
    out = []
    for i in ids:
        on = i in hl
        style = (
            "display:inline-block;border:1px solid #ccc;border-radius:10px;padding:0 7px;margin:1px 2px;"
            "font-family:monospace;font-size:0.82em;"
            + (f"background:{highlight_bg};border-color:#c9a400;font-weight:600;" if on else "background:#f4f4f4;")
        )
        mark = ("+ " if kind == "cov" else "⚠ ") if on else ""
        tip = f' title="{attr(tips[i])}"' if tips and i in tips else ""
        out.append(
            f'<span class="crp-{kind}" data-id="{attr(i)}" data-hl="{int(on)}"{tip} '
            f'style="{style}">{mark}{html_text(i)}</span>'
        )
    return "".join(out)


def timeline_html(
    steps: Sequence[FanoutStep],
    current: int,
    *,
    duplicates: Iterable[str] = (),
    show_facts: bool = True,
    title: str = "",
) -> str:
    """The timeline of SPEC-027 §1.1 up to ``current``: one row per step, the current one emphasised.

    Row: ``T<n> · Branch k · what happened`` then the facts reported at that step (duplicates
    highlighted) and the Coverage Set entries added at that step.
    """
    dups = set(duplicates)
    rows = []
    for s in steps[: current + 1]:
        cur = s.index == current
        colour = branch_colour(s.branch)
        style = f"border-left:4px solid {colour};padding:3px 8px;margin:2px 0;font-size:0.86em;" + (
            "background:#eef4ff;" if cur else "color:#444;"
        )
        head = (
            f'<b style="font-family:monospace">{html_text(step_time(s))}</b> · '
            f'<b style="color:{colour}">{html_text(actor(s))}</b> · {html_text(_what(s))}'
        )
        bits = []
        if show_facts and s.facts:
            bits.append("facts: " + chips_html(s.facts, highlight=dups, kind="fact", highlight_bg=DUP_BG))
        if s.added:
            bits.append("coverage +: " + chips_html(s.added, highlight=s.added))
        body = "".join(f'<div style="margin-top:2px">{b}</div>' for b in bits)
        rows.append(
            f'<div class="crp-step{" crp-current" if cur else ""}" data-index="{s.index}" '
            f'style="{style}">{head}{body}</div>'
        )
    head = f'<div style="font-weight:600;margin-bottom:4px">{html_text(title)}</div>' if title else ""
    return f'<div class="crp-timeline">{head}{"".join(rows)}</div>'


def step_facts_frame(
    step: FanoutStep, corpus: Corpus, *, duplicates: Mapping[str, Sequence[int]] | None = None
) -> pd.DataFrame:
    """The facts a retrieval step chose, with the branch's stored factors (partition-scoped relevance,
    residual pull, novelty against the snapshot / shared set, recency, CDR) and who else chose them."""
    cols = [
        "fact_id",
        "also_chosen_by",
        "cdr_score",
        "relevance",
        "residual_pull",
        "novelty",
        "recency_factor",
        "content",
        "rank",
    ]
    scores = list(step.detail.get("scores", [])) if isinstance(step.detail, Mapping) else []
    dup = duplicates or {}
    rows = []
    for rank, sc in enumerate(scores, 1):
        fid = sc["fact_id"]
        fact = corpus.kb.get(fid) if corpus is not None else None
        others = [b for b in dup.get(fid, ()) if b != step.branch]
        rows.append(
            {
                "rank": rank,
                "fact_id": fid,
                "relevance": sc["relevance"],
                "residual_pull": sc["residual_pull"],
                "novelty": sc["novelty"],
                "recency_factor": sc["recency_factor"],
                "cdr_score": sc["cdr_score"],
                "also_chosen_by": ", ".join(f"branch {b}" for b in others),
                "content": fact.content if fact is not None else "",
            }
        )
    return pd.DataFrame(rows, columns=cols)


def dedup_frame(run: FanoutRun) -> pd.DataFrame:
    """The cross-branch dedup report: one row per duplicate (which facts, which branches, kept)."""
    rows = []
    for d in run.duplicates:
        kept = next((f for f in d.fact_ids if f in run.merged), None)
        rows.append(
            {
                "fact_ids": " ~ ".join(d.fact_ids),
                "kind": "same fact" if len(d.fact_ids) == 1 else "near-identical (cosine)",
                "branches": ", ".join(str(b) for b in d.branches),
                "similarity": float(d.similarity),
                "kept": kept or "-",
            }
        )
    return pd.DataFrame(rows, columns=["fact_ids", "kind", "branches", "similarity", "kept"])


def branches_frame(run: FanoutRun) -> pd.DataFrame:
    """One row per branch: its sub-queries and picks (naive: round-robin assignment)."""
    return pd.DataFrame(
        [
            {
                "branch": b.branch,
                "sub_queries": ", ".join(b.sub_queries),
                "selected": len(b.selected),
                "facts": ", ".join(b.selected),
            }
            for b in run.branches
        ],
        columns=["branch", "sub_queries", "selected", "facts"],
    )


def picks(run: FanoutRun) -> int:
    """Facts chosen over all branches, with repeats."""
    return sum(len(b.selected) for b in run.branches)


def comparison_frame(fan: FanoutResult) -> pd.DataFrame:
    """The comparison strip: naive vs partitioned, read from the two runs.

    ``fan-out duplicates`` = ``FanoutRun.duplicate_count``, the cross-branch duplicates reported at fan-in
    (the count the before / after view and its report show too); ``distinct facts covered`` = facts
    kept after the fan-in dedup (``merged``); ``coverage entries after merge`` = parent Coverage Set size
    after fan-in (``coverage_depth``); ``facts chosen`` = picks over all branches, repeats included.
    """
    rows = []
    for name, get in (
        (FANOUT_DUPLICATES, lambda r: r.duplicate_count),
        ("distinct facts covered", lambda r: len(r.merged)),
        ("coverage entries after merge", lambda r: int(r.coverage_depth)),
        ("facts chosen (with repeats)", picks),
    ):
        rows.append({"measure": name, "naive": int(get(fan.naive)), "partitioned": int(get(fan.partitioned))})
    return pd.DataFrame(rows, columns=["measure", "naive", "partitioned"])


def _figure(label: str, value: int) -> str:
    return (
        f'<div><div style="font-size:0.75em;color:#777">{html_text(label)}</div>'
        f'<div style="font-size:1.45em;font-weight:600;line-height:1.2">{int(value)}</div></div>'
    )


def comparison_html(frame: pd.DataFrame) -> str:
    """The comparison strip as cards: each measure, naive next to partitioned (values are integers)."""
    cards = []
    for row in frame.itertuples(index=False):
        naive, part = int(row.naive), int(row.partitioned)
        dup = row.measure == FANOUT_DUPLICATES
        bg = ("#e9f7ef" if part < naive else "#fdecea" if part > naive else "#f4f4f4") if dup else "#f7f7f7"
        cards.append(
            f'<div class="crp-compare" data-measure="{attr(row.measure)}" data-naive="{naive}" '
            f'data-partitioned="{part}" style="flex:1;background:{bg};border:1px solid #ddd;border-radius:8px;'
            f'padding:6px 10px;min-width:0">'
            f'<div style="font-size:0.85em;color:#555;white-space:nowrap;overflow:hidden;text-overflow:ellipsis">'
            f"{html_text(row.measure)}</div>"
            f'<div style="display:flex;gap:14px">{_figure("naive", naive)}{_figure("partitioned", part)}</div>'
            f"</div>"
        )
    return f'<div class="crp-compare-strip" style="display:flex;gap:10px;margin:6px 0 10px 0">{"".join(cards)}</div>'


def parse_step_param(value: Any, n_steps: int) -> tuple[int, str]:
    """The URL ``step`` (1-based, as the page shows it) -> (0-based index, warning or '')."""
    if value in (None, ""):
        return 0, ""
    try:
        k = int(str(value).strip())
    except ValueError:
        return 0, f"step={value}: not a number; showing step 1"
    if n_steps <= 0:
        return 0, ""
    if k < 1 or k > n_steps:
        c = min(max(k, 1), n_steps)
        return c - 1, f"step={value}: out of range 1..{n_steps}; showing step {c}"
    return k - 1, ""
