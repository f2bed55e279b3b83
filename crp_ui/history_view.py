"""Frames and the figure of the Tuning page's History tab (docs/decisions/history.md): the experiments kept
(``crp_core.list_experiments``) as a table, any number of them side by side (metrics, configuration changes
from the defaults), one metric over time. Pure functions of ``crp_core.Experiment`` records (no Streamlit),
so tests check exactly what the tab shows. Text from the records reaching a plotly label is escaped
(:func:`crp_ui.render.esc`); dataframes show it as plain text.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go

from crp_core import Experiment

from .chart_style import CURVE_COLOURS
from .render import esc
from .suite_common import MEAN_COLOUR
from .tuning_view import value_label

#: the metrics the runs table shows as columns (every metric is in the comparison)
TABLE_METRICS = ("recall.mean", "leaks.total", "wrong_winners.total", "tokens.mean")
#: the columns of the runs table
RUN_COLUMNS = ("id", "recorded", "kind", "by", "kb", "suite", "changed keys", *TABLE_METRICS, "note")
#: a kept value that equals the default, in the configuration comparison
AT_DEFAULT = "(default)"


def when(e: Experiment) -> pd.Timestamp:
    """When ``e`` was recorded, as a UTC timestamp (NaT when it has no time)."""
    return pd.to_datetime(e.recorded_at, utc=True, errors="coerce")


def runs_frame(found: Sequence[Experiment]) -> pd.DataFrame:
    """One row per experiment, in the order given (newest first from the store)."""
    rows = [
        {
            "id": e.id,
            "recorded": when(e),
            "kind": e.kind,
            "by": e.recorded_by,
            "kb": e.kb_name or "",
            "suite": e.suite_name or "",
            "changed keys": len(e.config_diff),
            **{m: e.metrics.get(m) for m in TABLE_METRICS},
            "note": e.note,
        }
        for e in found
    ]
    return pd.DataFrame(rows, columns=list(RUN_COLUMNS))


def metric_keys(found: Sequence[Experiment]) -> list[str]:
    """Every metric any of the experiments holds, in the order first met."""
    seen: dict[str, None] = {}
    for e in found:
        seen.update(dict.fromkeys(e.metrics))
    return list(seen)


def _col(e: Experiment) -> str:
    return f"#{e.id}"


def compare_frame(found: Sequence[Experiment]) -> pd.DataFrame:
    """One row per metric, one column per experiment (``#id``); None where a run lacks the metric."""
    rows = [{"metric": m, **{_col(e): e.metrics.get(m) for e in found}} for m in metric_keys(found)]
    return pd.DataFrame(rows, columns=["metric", *(_col(e) for e in found)])


def config_frame(found: Sequence[Experiment]) -> pd.DataFrame:
    """One row per configuration key any of the experiments changed from the defaults: the default, then
    each run's value (:data:`AT_DEFAULT` where the run kept the default)."""
    keys: dict[str, object] = {}
    for e in found:
        for k, (default, _v) in e.config_diff.items():
            keys.setdefault(k, default)
    rows = [
        {
            "key": k,
            "default": value_label(d),
            **{_col(e): value_label(e.config_diff[k][1]) if k in e.config_diff else AT_DEFAULT for e in found},
        }
        for k, d in keys.items()
    ]
    return pd.DataFrame(rows, columns=["key", "default", *(_col(e) for e in found)])


def about_frame(found: Sequence[Experiment]) -> pd.DataFrame:
    """What each compared run was: kind, when, by whom, on which knowledge base and suite, its note."""
    rows = [
        {
            "experiment": _col(e),
            "kind": e.kind,
            "recorded": when(e),
            "by": e.recorded_by,
            "kb": e.kb_name or "",
            "kb fingerprint": (e.kb_fingerprint or "")[:12],
            "suite": e.suite_name or "",
            "suite fingerprint": (e.suite_fingerprint or "")[:12],
            "note": e.note,
        }
        for e in found
    ]
    return pd.DataFrame(
        rows,
        columns=["experiment", "kind", "recorded", "by", "kb", "kb fingerprint", "suite", "suite fingerprint", "note"],
    )


def _series(e: Experiment) -> tuple[str, str]:
    """What a line joins: runs over one knowledge base and one suite, by their fingerprints (two suites
    of one name are two series: their numbers are not comparable)."""
    return (e.kb_fingerprint or "", e.suite_fingerprint or "")


def _series_name(metric: str, runs: Sequence[Experiment], several_kbs: bool) -> str:
    e = runs[0]
    name = f"{metric} · {e.suite_name or 'no suite'} {(e.suite_fingerprint or '')[:8]}".rstrip()
    return esc(name + (f" on {e.kb_name or 'a knowledge base'}" if several_kbs else ""), 80)


def metric_figure(found: Sequence[Experiment], metric: str, *, selected: Sequence[int] = ()) -> go.Figure:
    """``metric`` of every experiment that holds it against the time it was recorded (oldest to newest), one
    line per knowledge base and suite (one line, named ``metric``, when the runs share both); the runs in
    ``selected`` (ids) ringed. Hover: the id, kind, who and the note's start."""
    pts = sorted(
        ((when(e), e) for e in found if e.metrics.get(metric) is not None and not pd.isna(when(e))),
        key=lambda p: (p[0], p[1].id or 0),
    )
    groups: dict[tuple[str, str], list[tuple[pd.Timestamp, Experiment]]] = {}
    for t, e in pts:
        groups.setdefault(_series(e), []).append((t, e))
    several_kbs = len({kb for kb, _suite in groups}) > 1
    fig = go.Figure()
    for i, members in enumerate(groups.values()):
        fig.add_trace(
            go.Scatter(
                x=[t.to_pydatetime() for t, _ in members],
                y=[e.metrics[metric] for _, e in members],
                mode="lines+markers",
                name=esc(metric) if len(groups) == 1 else _series_name(metric, [e for _, e in members], several_kbs),
                line=dict(color=MEAN_COLOUR if i == 0 else CURVE_COLOURS[i % len(CURVE_COLOURS)]),
                marker=dict(size=8),
                customdata=[[e.id, esc(e.kind), esc(e.recorded_by, 40), esc(e.note, 60)] for _, e in members],
                hovertemplate=(
                    "#%{customdata[0]} %{customdata[1]} by %{customdata[2]}<br>%{x}<br>"
                    f"{esc(metric)} %{{y}}<br>%{{customdata[3]}}<extra></extra>"
                ),
            )
        )
    ring = [(t, e) for t, e in pts if e.id in set(selected)]
    if ring:
        fig.add_trace(
            go.Scatter(
                x=[t.to_pydatetime() for t, _ in ring],
                y=[e.metrics[metric] for _, e in ring],
                mode="markers",
                name="selected",
                marker=dict(size=16, color="rgba(0,0,0,0)", line=dict(color="#b00020", width=2)),
                hoverinfo="skip",
            )
        )
    fig.update_layout(
        height=380,
        margin=dict(l=10, r=10, t=60, b=10),
        xaxis_title="recorded (UTC)",
        yaxis_title=esc(metric),
        legend=dict(orientation="h", y=-0.2),
        title=dict(
            text=f"{esc(metric)} over time ({len(pts)} run(s))<br><sup>red rings: the runs selected above</sup>",
            x=0.0,
            xanchor="left",
            font=dict(size=14),
        ),
    )
    return fig


__all__ = [
    "AT_DEFAULT",
    "RUN_COLUMNS",
    "TABLE_METRICS",
    "about_frame",
    "compare_frame",
    "config_frame",
    "metric_figure",
    "metric_keys",
    "runs_frame",
    "when",
]
