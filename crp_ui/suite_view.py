"""Frames and figures of the Tuning page's suite views: a suite run's metrics per scenario and over
the suite, a suite sweep (every metric against the value, the worst scenario as a band), and an
auto-tune study (trials, best so far, the Pareto front of two metrics). Pure functions of the
``crp_core.analysis`` records (no Streamlit), so tests check exactly what the page shows.
docs/decisions/suites.md §3 defines every metric; CKF text reaching a plotly label is escaped
(:func:`crp_ui.render.esc`), dataframes show it as plain text.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from crp_core.analysis.evaluate import SuiteRun, SuiteSweep
from crp_core.analysis.gate import GateFailure
from crp_core.analysis.metrics import METRICS, MetricInfo, ScenarioMetrics, SuiteMetrics
from crp_core.analysis.tune import Param, TrialRecord, TuneResult

from .render import esc
from .tuning_view import value_label

#: the metrics a suite sweep plots, in panel order (all of :data:`crp_core.analysis.metrics.METRICS`)
SWEEP_METRICS: tuple[MetricInfo, ...] = METRICS
_INFO: Mapping[str, MetricInfo] = {m.name: m for m in METRICS}
_MEAN = "#1f5fa8"
_WORST = "rgba(176, 0, 32, 0.18)"


def metric_label(name: str) -> str:
    """``recall (higher is better)``: the metric and its direction."""
    m = _INFO[name]
    return f"{m.name} ({m.better} is better)"


def _num(v: float | None) -> float | None:
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def scenario_frame(metrics: SuiteMetrics) -> pd.DataFrame:
    """One row per scenario: every metric's value, then the fact ids behind the counts."""
    rows = []
    for s in metrics.scenarios:
        row: dict[str, object] = {"scenario": s.name}
        for m in METRICS:
            row[m.name] = _num(s.value(m.name))
        row["max_tokens"] = s.max_tokens
        row["missing"] = ", ".join(s.missing)
        row["leaked"] = ", ".join(s.leaks)
        row["wrong winners"] = ", ".join(f"{w.loser} (winner {w.winner}: {w.winner_state})" for w in s.wrong_winners)
        row["expired packed"] = ", ".join(s.expired)
        row["contradictory pairs"] = ", ".join(f"{c.fact_a} / {c.fact_b}" for c in s.contradictions)
        rows.append(row)
    cols = [
        "scenario",
        *(m.name for m in METRICS),
        "max_tokens",
        "missing",
        "leaked",
        "wrong winners",
        "expired packed",
        "contradictory pairs",
    ]
    return pd.DataFrame(rows, columns=cols)


def summary_frame(metrics: SuiteMetrics, baseline: SuiteMetrics | None = None) -> pd.DataFrame:
    """One row per metric: mean, worst (and which scenario), total for counts; with ``baseline``
    (another run of the same suite) its mean and worst too, so a change reads as better or worse."""
    rows = []
    for m in METRICS:
        s = metrics.summary[m.name]
        row: dict[str, object] = {
            "metric": m.name,
            "better": m.better,
            "mean": _num(s.mean),
            "worst": _num(s.worst),
            "worst scenario": s.worst_scenario or "",
            "total": None if m.fraction else _num(s.total),
            "scenarios": s.count,
        }
        if baseline is not None:
            b = baseline.summary[m.name]
            row["baseline mean"] = _num(b.mean)
            row["baseline worst"] = _num(b.worst)
            row["verdict"] = verdict(m, s.mean, b.mean)
        row["definition"] = m.description
        rows.append(row)
    return pd.DataFrame(rows)


def verdict(m: MetricInfo, value: float | None, baseline: float | None) -> str:
    """``better`` / ``worse`` / ``same`` of ``value`` against ``baseline`` in the metric's direction."""
    if value is None or baseline is None:
        return ""
    if math.isclose(value, baseline, rel_tol=0.0, abs_tol=1e-12):
        return "same"
    up = value > baseline
    return "better" if up == (m.better == "higher") else "worse"


def scenario_delta_frame(run: SuiteRun, baseline: SuiteRun) -> pd.DataFrame:
    """Per scenario, each metric at ``run`` next to its value at ``baseline`` (the sweep's base)."""
    rows = []
    for s in run.metrics.scenarios:
        b = baseline.metrics.scenario(s.name)
        row: dict[str, object] = {"scenario": s.name}
        for m in METRICS:
            row[m.name] = _num(s.value(m.name))
            row[f"{m.name} (base)"] = _num(b.value(m.name))
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
            row[f"{m.name} mean"] = _num(s.mean)
            row[f"{m.name} worst"] = _num(s.worst)
            row[f"{m.name} worst scenario"] = s.worst_scenario or ""
        rows.append(row)
    return pd.DataFrame(rows)


def suite_sweep_figure(res: SuiteSweep, *, selected: int | None = None, baseline_value: object = None) -> go.Figure:
    """A panel per metric against the swept value: the suite mean as a line and the band between the
    mean and the worst scenario shaded; the baseline run (the sidebar config) as a dashed line, the
    point shown below as a red line. Markers carry their point index (``customdata``)."""
    df = suite_sweep_frame(res)
    finite = df[df["x"].notna()]
    n = len(SWEEP_METRICS)
    cols = 2
    rows = math.ceil(n / cols)
    fig = make_subplots(
        rows=rows,
        cols=cols,
        shared_xaxes=True,
        vertical_spacing=0.07,
        horizontal_spacing=0.08,
        subplot_titles=[metric_label(m.name) for m in SWEEP_METRICS],
    )
    xs = [float(x) for x in finite["x"]]
    for k, m in enumerate(SWEEP_METRICS):
        r, c = k // cols + 1, k % cols + 1
        mean = [_plot(v) for v in finite[f"{m.name} mean"]]
        worst = [_plot(v) for v in finite[f"{m.name} worst"]]
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
                fillcolor=_WORST,
                line=dict(color=_MEAN),
                marker=dict(size=7),
                name="suite mean (band: to the worst scenario)",
                legendgroup="mean",
                showlegend=k == 0,
                customdata=[[int(i), esc(w), _plot(v)] for i, w, v in zip(finite["point"], who, worst)],
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


def _plot(v: object) -> float | None:
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)  # type: ignore[arg-type]


# ---- auto-tune ---------------------------------------------------------------------------------
def trial_row(t: TrialRecord, space_keys: Sequence[str]) -> dict[str, object]:
    """One trial as a table row: number, objective value(s), feasibility, searched values, the
    suite means of the headline metrics."""
    row: dict[str, object] = {"trial": t.number}
    for i, v in enumerate(t.values):
        row["objective" if len(t.values) == 1 else f"objective {i + 1}"] = float(v)
    row["feasible"] = t.feasible
    for k in space_keys:
        row[k] = t.params.get(k)
    for name in ("recall", "leaks", "wrong_winners", "expired", "contradictions", "tokens"):
        s = t.metrics.summary[name]
        row[f"{name} {'mean' if _INFO[name].fraction or name == 'tokens' else 'total'}"] = _num(
            s.mean if _INFO[name].fraction or name == "tokens" else s.total
        )
    row["ms"] = round(t.elapsed_ms, 1)
    return row


def trials_frame(trials: Sequence[TrialRecord], space_keys: Sequence[str]) -> pd.DataFrame:
    """Every trial so far (trial 0 = the base config), in trial order."""
    return pd.DataFrame([trial_row(t, space_keys) for t in trials])


def trials_figure(
    trials: Sequence[TrialRecord], *, maximize: bool, best: int | None = None, title: str = ""
) -> go.Figure:
    """The first objective value of each trial (infeasible trials hollow) and the best value so far."""
    xs = [t.number for t in trials]
    ys = [float(t.values[0]) for t in trials]
    run: list[float] = []
    for y in ys:
        run.append(y if not run else (max(run[-1], y) if maximize else min(run[-1], y)))
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=xs,
            y=ys,
            mode="markers",
            name="trial",
            marker=dict(size=9, color=_MEAN, symbol=["circle" if t.feasible else "circle-open" for t in trials]),
            hovertemplate="trial %{x}<br>objective %{y}<extra></extra>",
        )
    )
    fig.add_trace(go.Scatter(x=xs, y=run, mode="lines", name="best so far", line=dict(color="#2e8b57", shape="hv")))
    if best is not None and best in xs:
        i = xs.index(best)
        fig.add_trace(
            go.Scatter(
                x=[xs[i]],
                y=[ys[i]],
                mode="markers",
                name="best trial",
                marker=dict(size=15, color="rgba(0,0,0,0)", line=dict(color="#b00020", width=3)),
            )
        )
    fig.update_layout(
        height=340,
        margin=dict(l=10, r=10, t=60, b=10),
        xaxis_title="trial",
        yaxis_title="objective (" + ("higher" if maximize else "lower") + " is better)",
        legend=dict(orientation="h", y=-0.25),
        title=dict(text=esc(title), x=0.0, xanchor="left", font=dict(size=14)),
    )
    return fig


def metric_direction(key: str) -> bool:
    """True when higher is better for a suite metric key such as ``recall.mean``."""
    return _INFO[key.split(".", 1)[0]].better == "higher"


def pareto_figure(res: TuneResult, x: str, y: str) -> tuple[go.Figure, tuple[TrialRecord, ...]]:
    """Every feasible trial on two suite metrics (keys of ``SuiteMetrics.flat``), the front that no
    other trial beats on both drawn as a line; infeasible trials greyed."""
    mx, my = metric_direction(x), metric_direction(y)
    front = res.pareto(x, y, maximize=(mx, my))
    ids = {t.number for t in front}
    fig = go.Figure()
    for feasible, colour, name in ((True, "#9aa5b1", "feasible trial"), (False, "#e0c0c0", "infeasible trial")):
        pts = [
            t
            for t in res.trials
            if t.feasible == feasible
            and t.number not in ids
            and t.metrics.get(x) is not None
            and t.metrics.get(y) is not None
        ]
        if pts:
            fig.add_trace(
                go.Scatter(
                    x=[t.metrics.get(x) for t in pts],
                    y=[t.metrics.get(y) for t in pts],
                    mode="markers",
                    name=name,
                    marker=dict(size=8, color=colour),
                    text=[f"trial {t.number}" for t in pts],
                    hovertemplate="%{text}<br>x %{x}<br>y %{y}<extra></extra>",
                )
            )
    if front:
        order = sorted(front, key=lambda t: float(t.metrics.get(x) or 0.0))
        fig.add_trace(
            go.Scatter(
                x=[t.metrics.get(x) for t in order],
                y=[t.metrics.get(y) for t in order],
                mode="lines+markers",
                name="Pareto front",
                line=dict(color="#b00020", shape="hv"),
                marker=dict(size=11, color="#b00020"),
                text=[f"trial {t.number}" for t in order],
                hovertemplate="%{text}<br>x %{x}<br>y %{y}<extra></extra>",
            )
        )
    fig.update_layout(
        height=380,
        margin=dict(l=10, r=10, t=60, b=10),
        xaxis_title=f"{esc(x)} ({'higher' if mx else 'lower'} is better)",
        yaxis_title=f"{esc(y)} ({'higher' if my else 'lower'} is better)",
        legend=dict(orientation="h", y=-0.25),
        title=dict(
            text=f"Pareto front: {len(front)} of {len(res.trials)} trials", x=0.0, xanchor="left", font=dict(size=14)
        ),
    )
    return fig, front


def best_vs_base_frame(res: TuneResult) -> pd.DataFrame:
    """The best trial against trial 0 (the base config): every suite metric, with a verdict."""
    best, base = res.best.metrics, res.baseline.metrics
    rows = []
    for m in METRICS:
        b, s = base.summary[m.name], best.summary[m.name]
        v0 = _num(b.mean if m.fraction or m.name == "tokens" else b.total)
        v1 = _num(s.mean if m.fraction or m.name == "tokens" else s.total)
        rows.append(
            {
                "metric": m.name,
                "over the suite": "mean" if m.fraction or m.name == "tokens" else "total",
                "base (trial 0)": v0,
                f"best (trial {res.best.number})": v1,
                "verdict": verdict(m, v1, v0),
                "worst scenario (best)": s.worst_scenario or "",
            }
        )
    return pd.DataFrame(rows)


def params_frame(res: TuneResult) -> pd.DataFrame:
    """The searched keys: range, base value, best value."""
    base, best = res.baseline.params, res.best.params
    return pd.DataFrame(
        [
            {
                "key": p.key,
                "from": p.low,
                "to": p.high,
                "step": p.step,
                "base": base.get(p.key),
                "best": best.get(p.key),
            }
            for p in res.space
        ]
    )


def flat_metric_keys(metrics: SuiteMetrics) -> list[str]:
    """Every key of ``SuiteMetrics.flat`` (``recall.mean`` ...), for the Pareto axes."""
    return list(metrics.flat())


def scenario_names(metrics: SuiteMetrics) -> list[str]:
    return [s.name for s in metrics.scenarios]


def scenario_detail(s: ScenarioMetrics) -> pd.DataFrame:
    """The envelope of one scenario's run, each fact with the labels it meets."""
    rows = []
    must = set(s.included)
    leaks = set(s.leaks)
    losers = {w.loser: w for w in s.wrong_winners}
    expired, ageing = set(s.expired), set(s.ageing)
    for pos, fid in enumerate(s.envelope, start=1):
        tags = []
        if fid in must:
            tags.append("must_include")
        if fid in leaks:
            tags.append("LEAK (must_exclude)")
        if fid in losers:
            tags.append(f"WRONG WINNER (loses to {losers[fid].winner})")
        if fid in expired:
            tags.append("expired")
        elif fid in ageing:
            tags.append("ageing")
        rows.append({"position": pos, "fact_id": fid, "recency": s.recency.get(fid), "labels": "; ".join(tags)})
    for fid in s.missing:
        rows.append({"position": None, "fact_id": fid, "recency": None, "labels": "must_include MISSING"})
    return pd.DataFrame(rows, columns=["position", "fact_id", "recency", "labels"])


def params_space_frame(space: Sequence[Param]) -> pd.DataFrame:
    """The search space before a study: each key with its range and grid step."""
    return pd.DataFrame(
        [{"key": p.key, "from": p.low, "to": p.high, "step": p.step} for p in space],
        columns=["key", "from", "to", "step"],
    )


def regressions_frame(failures: Sequence[GateFailure]) -> pd.DataFrame:
    """The (scenario, metric) pairs a trial is worse in than trial 0: its value and trial 0's."""
    return pd.DataFrame(
        [{"scenario": f.scenario, "metric": f.metric, "this trial": f.value, "trial 0": f.bound} for f in failures],
        columns=["scenario", "metric", "this trial", "trial 0"],
    )
