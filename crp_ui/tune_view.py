"""Frames and figures of an auto-tune study over a suite (docs/decisions/suites.md): the trials, the best
value so far, the Pareto front of two metrics, the best trial against the base config, the searched keys.
Pure functions of the :class:`~crp_core.TuneResult` records (no Streamlit); titles reaching plotly are
escaped (:func:`crp_ui.render.esc`).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go

from crp_core import METRICS, GateFailure, Param, TrialRecord, TuneResult

from .render import esc
from .suite_common import MEAN_COLOUR, METRIC_INFO, number, over_the_suite, verdict


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
        how = over_the_suite(METRIC_INFO[name])
        row[f"{name} {how}"] = number(s.mean if how == "mean" else s.total)
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
            marker=dict(size=9, color=MEAN_COLOUR, symbol=["circle" if t.feasible else "circle-open" for t in trials]),
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
    return METRIC_INFO[key.split(".", 1)[0]].better == "higher"


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
        how = over_the_suite(m)
        v0 = number(b.mean if how == "mean" else b.total)
        v1 = number(s.mean if how == "mean" else s.total)
        rows.append(
            {
                "metric": m.name,
                "over the suite": how,
                "base (trial 0)": v0,
                f"best (trial {res.best.number})": v1,
                "verdict": verdict(m, v1, v0),
                "worst scenario (best)": s.worst_scenario or "",
            }
        )
    return pd.DataFrame(rows)


def params_frame(res: TuneResult) -> pd.DataFrame:
    """The searched keys: the base value and the best configuration's (the values a person came for, first),
    then the range searched."""
    base, best = res.baseline.params, res.best_params
    return pd.DataFrame(
        [
            {
                "key": p.key,
                "base": base.get(p.key),
                "best": best.get(p.key),
                "from": p.low,
                "to": p.high,
                "step": p.step,
                "log": p.log,
            }
            for p in res.space
        ]
    )


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
