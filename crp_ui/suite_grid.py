"""The Suite tab's 2-D sweep: one suite metric over a round grid of two keys, drawn as a heatmap with the
current values marked (``crp_core.sweep_grid``; the grid rule is docs/reference/cli.md#sweep, the same as
``crp-inspect sweep``).

The suite and its config are the Suite tab's (:mod:`crp_ui.suite_source`); every point reuses its
``PreparedSuite``. The figure and the table are pure functions of the ``SuiteGrid`` (every metric of
every point is kept, so choosing another metric redraws without running again); :func:`grid_section`
draws the widgets. Keys: the sweepable configuration keys, ``fanout_width`` and ``now`` (dates).
"""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from crp_core import (
    METRICS,
    AxisSpec,
    ConfigError,
    CRPConfig,
    CRPError,
    GridAxis,
    PreparedSuite,
    SuiteGrid,
    format_timestamp,
    grid_axis,
    is_bool_key,
    is_integer_key,
    suite_current,
    sweep_grid,
    sweepable_keys,
)

from . import cache, history_tab, render, state
from . import tuning_view as tv
from .chart_style import titled
from .render import esc
from .suite_common import METRIC_INFO
from .suite_source import K
from .tuning_widgets import frame, keep, kept, kept_result, progress_bar, sticky_index

G = K + "grid."
K_GRID = G + "result"  # (inputs key, SuiteGrid)
NOW_KEY = "now"
#: the keys offered: every sweepable key but the text one, then now
TEXT_KEYS = frozenset({"known_conflict_action"})
#: the first two keys offered
DEFAULT_KEYS = ("ttl_days.official_documentation", "cdr_min_relevance")
MAX_TARGET = 30


def grid_keys() -> list[str]:
    """The keys the 2-D sweep offers: the Sweep tab's list (text keys left out), then ``now``."""
    return [k for k in sweepable_keys() if k not in TEXT_KEYS] + [NOW_KEY]


def metric_keys() -> list[str]:
    """Every suite metric a point keeps, from ``crp_core.METRICS``: ``<metric>.mean``, ``.worst`` and
    ``.total`` for counts (the keys of ``SuiteMetrics.flat()``)."""
    out = []
    for m in METRICS:
        out += [f"{m.name}.mean", f"{m.name}.worst"] + ([] if m.fraction else [f"{m.name}.total"])
    return out


def axis_label(v: Any) -> str:
    """A grid value as an axis tick: ISO 8601 for a time (the date alone at midnight), else the page's label."""
    if isinstance(v, datetime):
        text = format_timestamp(v)
        return text[:10] if text.endswith("T00:00:00Z") else text
    return tv.value_label(v)


def _better(metric: str) -> str:
    return METRIC_INFO[metric.split(".", 1)[0]].better


def grid_heatmap(grid: SuiteGrid, metric: str) -> go.Figure:
    """``metric`` at every point of a 2-D grid: rows the first key, columns the second, green the better
    end of the metric's direction; the current values marked by a ring (when both keys have one)."""
    rows, cols = grid.axes
    z = [[math.nan if v is None else float(v) for v in line] for line in grid.matrix(metric)]
    x = [axis_label(v) for v in cols.values]
    y = [axis_label(v) for v in rows.values]
    higher = _better(metric) == "higher"
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=x,
            y=y,
            colorscale="RdYlGn",
            reversescale=not higher,
            colorbar={"title": {"text": esc(metric)}},
            hovertemplate=f"{esc(rows.key)} = %{{y}}<br>{esc(cols.key)} = %{{x}}<br>{esc(metric)} = %{{z}}"
            "<extra></extra>",
            name=metric,
        )
    )
    ri, ci = rows.current_index, cols.current_index
    if ri is not None and ci is not None:
        fig.add_trace(
            go.Scatter(
                x=[x[ci]],
                y=[y[ri]],
                mode="markers",
                marker={"symbol": "circle-open", "size": 18, "color": "#111111", "line": {"width": 3}},
                name="current values",
                hovertemplate=f"current: {esc(rows.key)} = {esc(y[ri])}, {esc(cols.key)} = {esc(x[ci])}<extra></extra>",
            )
        )
    base = grid.baseline.metrics.flat().get(metric)
    title = (
        f"{esc(metric)} ({'higher' if higher else 'lower'} is better) over {esc(rows.key)} x {esc(cols.key)}; "
        f"baseline {'n/a' if base is None else f'{base:g}'}"
    )
    fig.update_xaxes(type="category", title_text=esc(cols.key))
    fig.update_yaxes(type="category", title_text=esc(rows.key))
    return titled(fig, title, height=max(380, 26 * len(y) + 160))


def grid_frame(grid: SuiteGrid, metric: str) -> pd.DataFrame:
    """The heatmap as a table: one row per value of the first key, one column per value of the second."""
    rows, cols = grid.axes
    df = pd.DataFrame(grid.matrix(metric), columns=[axis_label(v) for v in cols.values])
    df.insert(0, rows.key, [axis_label(v) for v in rows.values])
    return df


def points_frame(grid: SuiteGrid) -> pd.DataFrame:
    """Every point with every suite metric, the baseline first (as ``crp-inspect sweep --csv`` writes it)."""
    rows: list[dict[str, Any]] = [
        {"point": "baseline", **{a.key: "" for a in grid.axes}, **grid.baseline.metrics.flat()}
    ]
    for i, pt in enumerate(grid.points, start=1):
        rows.append({"point": str(i), **{a.key: axis_label(v) for a, v in zip(grid.axes, pt.values)}, **pt.metrics})
    return pd.DataFrame(rows)


# ---- widgets ---------------------------------------------------------------------------------------
def _as_datetime(d: date) -> datetime:
    return datetime(d.year, d.month, d.day, tzinfo=UTC)


def _range_inputs(key: str, current: Any, cols: list[DeltaGenerator], slot: str) -> AxisSpec | None:
    """From / to / how many of one axis (dates for ``now``), first offered around ``current``."""
    k_lo, k_hi, k_n = f"{G}{slot}.lo.{key}", f"{G}{slot}.hi.{key}", f"{G}{slot}.n"
    n = int(
        keep(
            k_n,
            cols[2].number_input(
                "about N values", min_value=2, max_value=MAX_TARGET, value=int(kept(k_n, 10)), step=1, key=k_n
            ),
        )
    )
    if key == NOW_KEY:
        mid = (current or datetime.now(UTC)).date()
        lo_d = keep(k_lo, cols[0].date_input("from", value=kept(k_lo, mid - timedelta(days=365)), key=k_lo))
        hi_d = keep(k_hi, cols[1].date_input("to", value=kept(k_hi, mid + timedelta(days=365)), key=k_hi))
        _declare_range(
            slot, (str(lo_d), str(hi_d), n), (str(mid - timedelta(days=365)), str(mid + timedelta(days=365)), 10)
        )
        return AxisSpec(key, _as_datetime(lo_d), _as_datetime(hi_d), n)
    if is_bool_key(key):
        cols[0].write("values: false, true")
        return AxisSpec(key, False, True, 2)
    lo, hi = tv.default_range(key, current)
    integer = is_integer_key(key)
    step = 1.0 if integer or key.startswith("ttl_days.") else 0.01
    fmt = "%d" if integer else ("%.1f" if key.startswith("ttl_days.") else "%.3f")
    start = keep(k_lo, cols[0].number_input("from", value=kept(k_lo, float(lo)), step=step, format=fmt, key=k_lo))
    stop = keep(k_hi, cols[1].number_input("to", value=kept(k_hi, float(hi)), step=step, format=fmt, key=k_hi))
    _declare_range(slot, (f"{float(start):g}", f"{float(stop):g}", n), (f"{float(lo):g}", f"{float(hi):g}", 10))
    return AxisSpec(key, float(start), float(stop), n)


def _declare_range(slot: str, got: tuple[str, str, int], default: tuple[str, str, int]) -> None:
    """An axis range that differs from the one first offered, named in the notice (a link does not rerun
    a 2-D sweep)."""
    names = ("from", "to", "about N values")
    state.declare_settings(
        f"the 2-D sweep's {slot} range", dict(zip(names, got)), dict(zip(names, default)), whole=True
    )


def _axis(p: PreparedSuite, config: CRPConfig, slot: str, label: str, default: str) -> GridAxis | None:
    keys = grid_keys()
    c0, c1, c2, c3 = st.columns([3, 2, 2, 2])
    wkey = f"{G}{slot}.key"
    index = keys.index(default) if kept(wkey, None) is None and default in keys else sticky_index(wkey, keys)
    key = str(keep(wkey, c0.selectbox(label, keys, index=index, key=wkey)))
    state.declare_settings(f"the 2-D sweep's {slot}", {"parameter": key}, {"parameter": default})
    try:
        current = suite_current(p.suite, config, key, p.nows)
        spec = _range_inputs(key, current, [c1, c2, c3], slot)
        return None if spec is None else grid_axis(spec, current)
    except ConfigError as exc:
        st.error(f"{render.md_escape(label)}: {render.md_escape(exc)}")
        return None


def _run(p: PreparedSuite, config: CRPConfig, axes: list[GridAxis]) -> SuiteGrid | None:
    bar, progress = progress_bar("2-D sweep:")
    try:
        return sweep_grid(p, config, axes, progress=progress, embedder=cache.embedder_for(p.corpus))
    except CRPError as exc:
        st.error(f"2-D sweep refused: {render.md_escape(exc)}")
        return None
    finally:
        bar.empty()


def grid_section(p: PreparedSuite, config: CRPConfig, inputs: str) -> None:
    """The 2-D sweep of the Suite tab over its prepared suite ``p`` at the suite ``config``."""
    st.subheader("Sweep two parameters over the suite (heatmap)")
    st.caption(
        "About N round values per key (multiples of 1, 2 or 5 times a power of ten; calendar steps for now) "
        "plus the key's current value; every point runs the whole suite. `now` replaces every scenario's now, "
        "`fanout_width` every scenario's width; a configuration key applies above each scenario's config table."
    )
    rows = _axis(p, config, "rows", "Rows: parameter", DEFAULT_KEYS[0])
    cols = _axis(p, config, "cols", "Columns: parameter", DEFAULT_KEYS[1])
    if rows is None or cols is None:
        return
    if rows.key == cols.key:
        st.info("Choose two different parameters.")
        return
    points = len(rows.values) * len(cols.values)
    st.caption(
        f"{len(rows.values)} x {len(cols.values)} = {points} points x {len(p.suite)} scenario(s), and the "
        "current settings once as the baseline; rows: "
        + render.md_escape(", ".join(axis_label(v) for v in rows.values))
        + " · columns: "
        + render.md_escape(", ".join(axis_label(v) for v in cols.values))
    )
    if st.button(f"Run 2-D sweep ({points + 1} suite runs)", type="primary", key=G + "run"):
        grid = _run(p, config, [rows, cols])
        if grid is not None:
            state.remember(K_GRID, (inputs, grid))
            keys = [rows.key, cols.key]  # kept in the experiment history at its base point (History tab)
            history_tab.record_run(
                p, config, grid.baseline.metrics, kind="sweep", summary={"keys": keys, "points": points}
            )
    grid = kept_result(
        K_GRID,
        inputs,
        empty="No 2-D sweep yet: choose two parameters and their ranges, then **Run 2-D sweep**.",
        stale="The suite, the CKF or the sidebar config changed since this 2-D sweep was run: it shows the "
        "earlier inputs. Run it again to update it.",
    )
    if grid is not None:
        _show(grid)


def _show(grid: SuiteGrid) -> None:
    metrics = metric_keys()
    mkey = G + "metric"
    metric = str(
        keep(
            mkey,
            st.selectbox("Metric", metrics, index=sticky_index(mkey, metrics), key=mkey),
        )
    )
    rows, cols = grid.axes
    state.declare_unlinked(f"a 2-D sweep's result ({rows.key} x {cols.key}; metric {metric})")
    st.plotly_chart(grid_heatmap(grid, metric), key=G + "heatmap", width="stretch")
    st.caption(
        f"Current values (ringed): {render.md_escape(rows.key)} = {render.md_escape(axis_label(rows.current))}, "
        f"{render.md_escape(cols.key)} = {render.md_escape(axis_label(cols.current))}; "
        f"{grid.runs} suite runs in {grid.total_ms / 1000:.1f} s."
    )
    frame(grid_frame(grid, metric), G + "matrix")
    with st.expander("Every point, every metric (table)"):
        frame(points_frame(grid), G + "points")
