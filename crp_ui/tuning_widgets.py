"""The widget groups the Tuning page's views share: the values a sweep runs, the sweep point a chart
click or a select box picks, a baseline config, one scenario's envelope diff with its explain-diff, and
a result kept in the session for the inputs it was made for.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

import pandas as pd
import streamlit as st
from plotly.graph_objects import Figure
from streamlit.delta_generator import DeltaGenerator

from crp_core import (
    AxisSpec,
    ConfigError,
    Corpus,
    CRPConfig,
    Digest,
    PipelineResult,
    Scenario,
    ScenarioVectors,
    compare_runs,
    dump_scenario,
    embed_scenario,
    grid_axis,
    is_bool_key,
    is_integer_key,
)

from . import cache, render, state
from . import tuning_view as tv
from .progress import Bar


def digest(*parts: str) -> str:
    """A short digest of ``parts`` (in order): a widget key part or a session key of the inputs a
    result was made for; kept in this session only."""
    d = Digest()
    for p in parts:  # a scenario read from JSON may hold a lone surrogate: its bytes as they are
        d.update(p.encode("utf-8", "surrogatepass")).update(b"\x00")
    return d.hex(24)


#: session key of the scenario's vectors: (inputs key, ScenarioVectors)
K_VECTORS = "crp.tuning.vectors"
#: session key of the widget values kept apart from their widgets: {widget key: value last drawn}
K_KEPT = "crp.tuning.kept"


def kept(key: str, default: Any) -> Any:
    """The value widget ``key`` had when last drawn, else ``default``: a widget's default. Streamlit drops
    a widget's value at the end of a run that does not draw it (the Tuning page draws only the open tab,
    and another page draws none), so a widget that must survive starts from this and calls :func:`keep`."""
    return state.kept_dict(K_KEPT).get(key, default)


def keep(key: str, value: Any) -> Any:
    """Keep ``value`` as widget ``key``'s value for its next first draw (see :func:`kept`); returns it."""
    state.kept_dict(K_KEPT)[key] = value
    return value


def sticky_index(key: str, options: Sequence[Any]) -> int:
    """The index of the option widget ``key`` had when last drawn (0 when none or no longer offered)."""
    got = kept(key, None)
    return list(options).index(got) if got in options else 0


def scenario_vectors(corpus: Corpus, scenario: Scenario) -> ScenarioVectors:
    """The scenario's vectors, embedded once per (corpus, scenario) in this session."""
    key = digest(cache.corpus_digest(corpus), dump_scenario(scenario, "json"))
    got = state.recall(K_VECTORS)
    if got is not None and got[0] == key:
        return cast(ScenarioVectors, got[1])
    v = embed_scenario(scenario, corpus, cache.embedder_for(corpus))
    state.remember(K_VECTORS, (key, v))
    return v


def inputs_key(corpus: Corpus, scenario: Scenario, config: CRPConfig, dkey: str) -> str:
    """A digest of what one run depends on: the corpus with its statuses, the scenario (with its
    embeddings), the config, now and the pair decisions (``dkey``)."""
    # the scenario JSON and the TOML once per object, not on every rerun
    return digest(
        cache.corpus_digest(corpus),
        cache.by_identity("scenario", scenario, lambda sc: dump_scenario(sc, "json")),
        cache.by_identity("config", config, CRPConfig.to_toml),
        scenario.now.isoformat() if scenario.now else "",
        dkey,
    )


def kept_result(key: str, inputs: str, *, empty: str, stale: str) -> Any:
    """The result a run stored under ``key`` as ``(inputs, result)``: None (``empty`` shown) when there
    is none; ``stale`` is shown when it was made for other inputs (it is shown, never silently dropped)."""
    got = state.recall(key)
    if got is None:
        st.info(empty)
        return None
    made_for, result = got
    if made_for != inputs:
        st.warning(stale)
    return result


def progress_bar(label: str) -> tuple[Bar, Callable[[int, int, str], None]]:
    """A bar counting scenario runs (with rate and time left) and the callback that feeds it."""
    bar = Bar(label.rstrip("…. "), unit="runs")

    def progress(done: int, total: int, what: str) -> None:
        bar.step(done, total, what)

    return bar, progress


def frame(df: pd.DataFrame, key: str, **kw: Any) -> None:
    """A whole-width table without its index (text cells made inert by ``render.dataframe``)."""
    render.dataframe(df, hide_index=True, width="stretch", key=key, **kw)


def baseline_picker(prefix: str, *, label: str = "Baseline config") -> tuple[str, CRPConfig] | None:
    """A baseline config: the defaults or an uploaded TOML, kept in the session under ``prefix``
    (None, with a message, while none is uploaded or the TOML is refused)."""
    c1, c2 = st.columns([1, 2])
    source = c1.radio(label, ["defaults", "uploaded TOML"], key=prefix + "base_source", horizontal=True)
    if source == "defaults":
        return "the defaults", CRPConfig()
    state.declare_unlinked(f"{label.lower()}: an uploaded TOML")
    up = c2.file_uploader("Baseline TOML", type=["toml"], key=prefix + "base_upload")
    if up is not None:
        state.remember(prefix + "base_toml", (up.name, up.getvalue().decode("utf-8", errors="replace")))
    saved = state.recall(prefix + "base_toml")
    if saved is None:
        st.info("Upload a config TOML (e.g. one saved from the sidebar or from Auto-tune) to compare against.")
        return None
    name, text = str(saved[0]), str(saved[1])
    try:
        base = CRPConfig.from_toml(text)
    except ConfigError as exc:
        st.error(f"{render.md_escape(name)} refused: {render.md_escape(exc)}")
        return None
    c2.caption(f"baseline: **{render.md_escape(name)}**")
    return name, base


def sweep_values(
    key: str,
    current: object,
    cols: Sequence[DeltaGenerator],
    *,
    prefix: str,
    count: int,
    max_count: int,
    count_key: str,
    named: tuple[str, str],
) -> tuple[Any, ...] | None:
    """The values a sweep of ``key`` runs: false / true for a flag, else the round grid of a range (from, to,
    about how many) in the three columns ``cols``, first offered around ``current``: ``grid_axis``, the grid
    ``crp-inspect sweep --param KEY=LO:HI:N`` runs, with ``current`` among its values, so one sweep gives the
    same points in both. The range widgets are keyed by the parameter only, so a range is kept when the
    scenario or the config changes. None (with the reason shown) when the range is refused. A sweep's settings
    are not in the link (it does not rerun the sweep): once they differ from their defaults (``default_key``,
    the range offered, ``count``) the notice names them: ``named`` is (what they are called, the parameter
    offered first)."""
    what, default_key = named
    if is_bool_key(key):
        cols[0].write("values: false, true")
        state.declare_settings(what, {"parameter": key}, {"parameter": default_key}, whole=True)
        return grid_axis(AxisSpec(key, False, True, 2), current).values
    lo, hi = tv.default_range(key, current)
    integer = is_integer_key(key)
    step = 1.0 if integer or key.startswith("ttl_days.") else 0.01
    fmt = "%d" if integer else ("%.1f" if key.startswith("ttl_days.") else "%.3f")
    k_start, k_stop = f"{prefix}start.{key}", f"{prefix}stop.{key}"
    start = keep(
        k_start, cols[0].number_input("from", value=kept(k_start, float(lo)), step=step, format=fmt, key=k_start)
    )
    stop = keep(k_stop, cols[1].number_input("to", value=kept(k_stop, float(hi)), step=step, format=fmt, key=k_stop))
    n = keep(
        count_key,
        cols[2].number_input(
            "values",
            min_value=2,
            max_value=max_count,
            value=int(kept(count_key, count)),
            step=1,
            key=count_key,
            help="About this many round values: the multiples of one step (1, 2 or 5 times a power of ten) "
            "between from and to, the step whose count is closest, plus the current value (the grid of "
            "crp-inspect sweep).",
        ),
    )
    state.declare_settings(
        what,
        {"parameter": key, "from": f"{float(start):g}", "to": f"{float(stop):g}", "values": int(n)},
        {"parameter": default_key, "from": f"{float(lo):g}", "to": f"{float(hi):g}", "values": count},
        whole=True,
    )
    try:
        return grid_axis(AxisSpec(key, float(start), float(stop), int(n)), current).values
    except ConfigError as exc:
        st.error(render.md_escape(exc))
        return None


def pick_point(figure: Callable[[int], Figure], labels: Sequence[str], *, prefix: str, label: str) -> int:
    """A sweep's chosen point: clicked on the chart (``figure(selected)``, markers carrying their point
    index) or picked in a select box of ``labels``; kept in the session under ``prefix``."""
    k_point, k_chart, k_pick = prefix + "point", prefix + "chart_point", prefix + "pick"
    point = min(max(int(state.recall(k_point, 0) or 0), 0), len(labels) - 1)
    event = st.plotly_chart(
        figure(point), key=prefix + "chart", on_select="rerun", selection_mode="points", width="stretch"
    )
    picked = tv.selected_point(event)
    if picked is not None and picked != state.recall(k_chart):
        state.remember(k_chart, picked)
        state.remember(k_point, picked)
        st.rerun()

    def on_pick() -> None:
        state.remember(k_point, list(labels).index(state.recall(k_pick)))

    state.remember(k_pick, labels[point])
    st.selectbox(label, labels, key=k_pick, on_change=on_pick)
    # a sweep's result is not rerun by a link: the notice names it with the point shown
    state.declare_unlinked(f"a sweep's result ({len(labels)} values; {label.lower()} {labels[point]})")
    return point


def diff_view(base: PipelineResult, cand: PipelineResult, corpus: Corpus, key: str) -> None:
    """One scenario's envelope diff (baseline -> candidate) with the explain-diff of each change and the
    conflicts whose winner flips."""
    diff = tv.envelope_diff_frame(
        [x.fact_id for x in base.envelope.order], [x.fact_id for x in cand.envelope.order], corpus.kb
    )
    cmp = compare_runs(base, cand)
    diff.insert(2, "why", [cmp.explain(f) if ch != "kept" else "" for f, ch in zip(diff["fact_id"], diff["change"])])
    frame(
        diff,
        key,
        column_config={
            "content": st.column_config.TextColumn("content", width="large"),
            "why": st.column_config.TextColumn("why", width="large"),
        },
    )
    if cmp.flips:
        st.markdown("**Conflicts whose winner flips**")
        frame(tv.flips_frame(cmp), key + ".flips")
