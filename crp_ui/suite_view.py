"""Frames and figures of the Tuning page's suite views: a suite run's metrics per scenario and over
the suite, and a suite sweep (every metric against the value, the worst scenario as a band); an auto-tune
study's views (:mod:`crp_ui.tune_view`) are re-exported here. Pure functions of the crp_core suite records
(no Streamlit), so tests check exactly what the page shows. docs/decisions/suites.md §3 defines every
metric; CKF text reaching a plotly label is escaped (:func:`crp_ui.render.esc`), dataframes show it as plain
text.
"""

from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from crp_core import METRICS, RANKING_METRICS, MetricInfo, ScenarioMetrics, SuiteMetrics, SuiteRun, SuiteSweep

from .render import esc
from .suite_common import MEAN_COLOUR, metric_label, number, verdict
from .tune_view import (
    best_vs_base_frame,
    metric_direction,
    params_frame,
    params_space_frame,
    pareto_figure,
    regressions_frame,
    trial_row,
    trials_figure,
    trials_frame,
)
from .tuning_view import value_label

#: the metrics a suite sweep plots, in panel order (all of :data:`crp_core.METRICS`)
SWEEP_METRICS: tuple[MetricInfo, ...] = METRICS
#: metrics of an ``expect`` label few suites carry: shown only where a scenario defines them
LABELLED_ONLY: tuple[str, ...] = ("false_conflicts",)
#: the band between the suite mean and the worst scenario
WORST_BAND = "rgba(176, 0, 32, 0.18)"


#: the column of the graded-relevant facts a scenario's first 10 envelope facts leave out
RELEVANT_MISSING = "graded 1+ not in the first 10"
#: the column of a scenario's pairs labelled no conflict that stage 4 flagged
FALSE_FLAGS = "falsely flagged pairs"


def ranked(*runs: SuiteMetrics | None) -> bool:
    """A scenario of one of ``runs`` has graded relevance (its ranking metrics are defined)."""
    return any(r is not None and r.summary[m].count for r in runs for m in RANKING_METRICS)


def shown_metrics(*runs: SuiteMetrics | None) -> tuple[MetricInfo, ...]:
    """The metrics a view shows: all of them, the ranking ones only when a run defines them, and those of a
    label few suites carry (:data:`LABELLED_ONLY`) only when a run defines them."""
    hidden = set() if ranked(*runs) else set(RANKING_METRICS)
    hidden |= {n for n in LABELLED_ONLY if not any(r is not None and r.summary[n].count for r in runs)}
    return tuple(m for m in METRICS if m.name not in hidden)


def scenario_frame(metrics: SuiteMetrics) -> pd.DataFrame:
    """One row per scenario: every metric's value (the ranking metrics when a scenario has graded
    relevance), then the fact ids behind the counts."""
    shown = shown_metrics(metrics)
    graded = ranked(metrics)
    rows = []
    for s in metrics.scenarios:
        row: dict[str, object] = {"scenario": s.name}
        for m in shown:
            row[m.name] = number(s.value(m.name))
        row["max_tokens"] = s.max_tokens
        row["missing"] = ", ".join(s.missing)
        row["leaked"] = ", ".join(s.leaks)
        row["wrong winners"] = ", ".join(f"{w.loser} (winner {w.winner}: {w.winner_state})" for w in s.wrong_winners)
        row["expired packed"] = ", ".join(s.expired)
        row["contradictory pairs"] = ", ".join(f"{c.fact_a} / {c.fact_b}" for c in s.contradictions)
        if s.false_conflicts:
            row[FALSE_FLAGS] = ", ".join(f"{a} / {b}" for a, b in s.false_conflicts)
        if graded:
            row[RELEVANT_MISSING] = ", ".join(f"{f} ({s.relevance.get(f, 0)})" for f in s.relevant_missing)
        rows.append(row)
    cols = [
        "scenario",
        *(m.name for m in shown),
        "max_tokens",
        "missing",
        "leaked",
        "wrong winners",
        "expired packed",
        "contradictory pairs",
        *((FALSE_FLAGS,) if any(s.false_conflicts for s in metrics.scenarios) else ()),
        *((RELEVANT_MISSING,) if graded else ()),
    ]
    return pd.DataFrame(rows, columns=cols)


def summary_frame(metrics: SuiteMetrics, baseline: SuiteMetrics | None = None) -> pd.DataFrame:
    """One row per metric: mean, worst (and which scenario), total for counts; with ``baseline``
    (another run of the same suite) its mean and worst too, so a change reads as better or worse."""
    rows = []
    for m in shown_metrics(metrics, baseline):
        s = metrics.summary[m.name]
        row: dict[str, object] = {
            "metric": m.name,
            "better": m.better,
            "mean": number(s.mean),
            "worst": number(s.worst),
            "worst scenario": s.worst_scenario or "",
            "total": None if m.fraction else number(s.total),
            "scenarios": s.count,
        }
        if baseline is not None:
            b = baseline.summary[m.name]
            row["baseline mean"] = number(b.mean)
            row["baseline worst"] = number(b.worst)
            row["verdict"] = verdict(m, s.mean, b.mean)
        row["definition"] = m.description
        rows.append(row)
    return pd.DataFrame(rows)


def scenario_delta_frame(run: SuiteRun, baseline: SuiteRun) -> pd.DataFrame:
    """Per scenario, each metric at ``run`` next to its value at ``baseline`` (the sweep's base)."""
    rows = []
    for s in run.metrics.scenarios:
        b = baseline.metrics.scenario(s.name)
        row: dict[str, object] = {"scenario": s.name}
        for m in shown_metrics(run.metrics, baseline.metrics):
            row[m.name] = number(s.value(m.name))
            row[f"{m.name} (base)"] = number(b.value(m.name))
        row["entering"] = ", ".join(sorted(set(s.envelope) - set(b.envelope)))
        row["leaving"] = ", ".join(sorted(set(b.envelope) - set(s.envelope)))
        rows.append(row)
    return pd.DataFrame(rows)


# ---- suite sweep -------------------------------------------------------------------------------
def _x(v: object) -> float | None:
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float)) and math.isfinite(float(v)):
        return float(v)
    return None


def suite_sweep_frame(res: SuiteSweep) -> pd.DataFrame:
    """One row per swept value: the mean and worst of every metric over the suite."""
    rows = []
    for i, p in enumerate(res.points):
        row: dict[str, object] = {"point": i, "value": value_label(p.value), "x": _x(p.value)}
        for m in METRICS:
            s = p.run.metrics.summary[m.name]
            row[f"{m.name} mean"] = number(s.mean)
            row[f"{m.name} worst"] = number(s.worst)
            row[f"{m.name} worst scenario"] = s.worst_scenario or ""
        rows.append(row)
    return pd.DataFrame(rows)


def suite_sweep_figure(res: SuiteSweep, *, selected: int | None = None, baseline_value: object = None) -> go.Figure:
    """A panel per metric against the swept value: the suite mean as a line and the band between the
    mean and the worst scenario shaded; the baseline run (the sidebar config) as a dashed line, the
    point shown below as a red line. Markers carry their point index (``customdata``)."""
    df = suite_sweep_frame(res)
    finite = df[df["x"].notna()]
    panels = shown_metrics(*(p.run.metrics for p in res.points))
    n = len(panels)
    cols = 2
    rows = math.ceil(n / cols)
    fig = make_subplots(
        rows=rows,
        cols=cols,
        shared_xaxes=True,
        vertical_spacing=0.07,
        horizontal_spacing=0.08,
        subplot_titles=[metric_label(m.name) for m in panels],
    )
    xs = [float(x) for x in finite["x"]]
    for k, m in enumerate(panels):
        r, c = k // cols + 1, k % cols + 1
        mean = [number(v) for v in finite[f"{m.name} mean"]]
        worst = [number(v) for v in finite[f"{m.name} worst"]]
        who = list(finite[f"{m.name} worst scenario"])
        fig.add_trace(
            go.Scatter(x=xs, y=worst, mode="lines", line=dict(width=0), showlegend=False, hoverinfo="skip"),
            row=r,
            col=c,
        )
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=mean,
                mode="lines+markers",
                fill="tonexty",
                fillcolor=WORST_BAND,
                line=dict(color=MEAN_COLOUR),
                marker=dict(size=7),
                name="suite mean (band: to the worst scenario)",
                legendgroup="mean",
                showlegend=k == 0,
                customdata=[[int(i), esc(w), number(v)] for i, w, v in zip(finite["point"], who, worst)],
                hovertemplate=(
                    f"{esc(res.key)} = %{{x}}<br>{esc(m.name)} mean %{{y}}<br>worst %{{customdata[2]}} "
                    f"(%{{customdata[1]}})<extra>point %{{customdata[0]}}</extra>"
                ),
            ),
            row=r,
            col=c,
        )
        if m.fraction:
            fig.update_yaxes(range=[-0.03, 1.05], row=r, col=c)
        else:
            fig.update_yaxes(rangemode="tozero", row=r, col=c)
    if selected is not None and selected in set(finite["point"]):
        sx = float(finite.loc[finite["point"] == selected, "x"].iloc[0])
        fig.add_vline(x=sx, line=dict(color="#b00020", width=2))
    bx = _x(baseline_value)
    if bx is not None:
        fig.add_vline(x=bx, line=dict(color="#555", dash="dash", width=1))
    fig.update_xaxes(title_text=esc(res.key), row=rows, col=1)
    fig.update_xaxes(title_text=esc(res.key), row=rows - (1 if n % cols else 0), col=2)
    fig.update_layout(
        height=230 * rows + 120,
        margin=dict(l=10, r=10, t=90, b=10),
        clickmode="event+select",
        legend=dict(orientation="h", y=-0.06),
        title=dict(
            text=(
                f"Suite sweep of {esc(res.key)}: {len(res.points)} values x "
                f"{len(res.baseline.metrics.scenarios)} scenarios<br><sup>line: suite mean · band: "
                f"to the worst scenario · dashed: the sidebar value "
                f"{esc(value_label(baseline_value))} · red: the point shown below</sup>"
            ),
            x=0.0,
            xanchor="left",
            font=dict(size=14),
        ),
    )
    return fig


def flat_metric_keys(metrics: SuiteMetrics) -> list[str]:
    """Every key of ``SuiteMetrics.flat`` (``recall.mean`` ...), for the Pareto axes."""
    return list(metrics.flat())


def scenario_names(metrics: SuiteMetrics) -> list[str]:
    """The suite's scenarios, in suite order."""
    return [s.name for s in metrics.scenarios]


def _labels(s: ScenarioMetrics, fid: str, graded: bool) -> str:
    """The labels an envelope fact meets (``; ``-joined)."""
    tags = []
    if fid in s.included:
        tags.append("must_include")
    if fid in s.leaks:
        tags.append("LEAK (must_exclude)")
    loser = next((w for w in s.wrong_winners if w.loser == fid), None)
    if loser is not None:
        tags.append(f"WRONG WINNER (loses to {loser.winner})")
    if fid in s.expired:
        tags.append("expired")
    elif fid in s.ageing:
        tags.append("ageing")
    if graded and fid in s.relevant_missing:
        tags.append("graded relevant, past rank 10")
    return "; ".join(tags)


def scenario_detail(s: ScenarioMetrics) -> pd.DataFrame:
    """The envelope of one scenario's run, each fact with the labels it meets; with graded relevance
    a ``grade`` column (0: not graded) and a row for each graded-relevant fact not packed."""
    graded = s.value("ndcg@10") is not None
    rows: list[dict[str, object]] = [
        {"position": pos, "fact_id": fid, "recency": s.recency.get(fid), "labels": _labels(s, fid, graded)}
        for pos, fid in enumerate(s.envelope, start=1)
    ]
    rows += [{"position": None, "fact_id": f, "recency": None, "labels": "must_include MISSING"} for f in s.missing]
    if graded:
        packed = set(s.envelope) | set(s.missing)
        rows += [
            {"position": None, "fact_id": f, "recency": None, "labels": "graded relevant, NOT PACKED"}
            for f in s.relevant_missing
            if f not in packed
        ]
        for row in rows:
            row["grade"] = s.relevance.get(str(row["fact_id"]), 0)
    cols = ["position", "fact_id", "recency", *(("grade",) if graded else ()), "labels"]
    return pd.DataFrame(rows, columns=cols)


__all__ = [
    "FALSE_FLAGS",
    "RELEVANT_MISSING",
    "SWEEP_METRICS",
    "best_vs_base_frame",
    "flat_metric_keys",
    "metric_direction",
    "metric_label",
    "pareto_figure",
    "ranked",
    "params_frame",
    "params_space_frame",
    "regressions_frame",
    "scenario_delta_frame",
    "scenario_detail",
    "scenario_frame",
    "scenario_names",
    "shown_metrics",
    "suite_sweep_figure",
    "suite_sweep_frame",
    "summary_frame",
    "trial_row",
    "trials_figure",
    "trials_frame",
    "verdict",
]
