"""Time, pictured (SPEC-027 §2.3, §3.2): the winner of a conflict pair as ``now`` moves, and the envelope
over time (docs/decisions/timeline.md).

The numbers come from :func:`crp_core.pair_timeline` and :func:`crp_core.envelope_timeline_of`; this module
only draws them. Colours are semantic and follow the fact: a fact's band is green where it wins, red where it
loses, orange where the pair ties, whichever side (A or B) it is on; the authority lines are told apart by
their dash, not by a role colour. Every label drawn from data goes through :func:`crp_ui.render.esc`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from crp_core import (
    ConflictPair,
    CRPConfig,
    CRPError,
    EnvelopeTimeline,
    KnowledgeBase,
    PairTimeline,
    envelope_grid,
    envelope_timeline_of,
    flag_lines,
    pair_timeline,
    winner_flags,
)

from . import cache, render
from .chart_style import OUTCOME_COLOURS, titled
from .ckf_state import get_ckf
from .config_state import get_config
from .decisions import known_conflicts_in_force, pipeline_decisions
from .results import get_corpus
from .scenario_state import get_now, get_scenario

#: the colour of a fact's state in the pair at an instant: it wins, it loses, the pair ties
STATE_COLOURS: Mapping[str, str] = {
    "wins": OUTCOME_COLOURS["in envelope"],
    "loses": OUTCOME_COLOURS["suppressed"],
    "tie": OUTCOME_COLOURS["dropped (budget)"],
}
#: the authority line of side A and side B (identity by dash, colour neutral)
LINE_DASH: Mapping[str, str] = {"A": "solid", "B": "dash"}
LINE_COLOUR = "#3b4a5c"
#: markers of the exact instants a fact starts ageing (half its TTL at the default) and expires
MARK_SYMBOLS: Mapping[str, str] = {"ageing": "diamond-open", "expired": "x"}
NOW_COLOUR = "#111111"
FLAG_FILL = {
    "close": "rgba(255, 216, 102, 0.35)",
    "expired": "rgba(124, 142, 163, 0.18)",
    "unwritten": "rgba(0, 0, 0, 0.06)",
}
#: the envelope view: a fact in the envelope at an instant, or not
IN_COLOUR = OUTCOME_COLOURS["in envelope"]
OUT_COLOUR = "#eef0f3"


# ---- pure views ----------------------------------------------------------------------------------
def _state(winner: str | None, fact_id: str) -> str:
    if winner is None:
        return "tie"
    return "wins" if winner == fact_id else "loses"


def winner_segments(tl: PairTimeline) -> pd.DataFrame:
    """One row per stretch of constant winner and fact: side, fact_id, state (wins / loses / tie), start, end.
    The stretches are cut at the exact flips (:attr:`crp_core.PairTimeline.flips`), so a tie that lasts one
    instant (the flip itself) draws no band of its own."""
    cuts = [tl.times[0], *(f.at for f in tl.flips), tl.times[-1]]
    if tl.flips:
        winners = [tl.flips[0].before, *(f.after for f in tl.flips)]
    else:  # one winner over the whole range: the most frequent of the sweep (an exact tie lasts an instant)
        winners = [max(set(tl.winner), key=tl.winner.count)]
    rows = [
        {"side": side, "fact_id": fid, "state": _state(w, fid), "start": s, "end": e}
        for side, fid in (("A", tl.fact_a), ("B", tl.fact_b))
        for w, s, e in zip(winners, cuts[:-1], cuts[1:])
    ]
    return pd.DataFrame(rows, columns=["side", "fact_id", "state", "start", "end"])


def _spans(times: Sequence[datetime], on: np.ndarray) -> list[tuple[datetime, datetime]]:
    """The (start, end) runs of ``times`` where ``on`` holds."""
    out = []
    begin: int | None = None
    for i, flag in enumerate(on.tolist()):
        if flag and begin is None:
            begin = i
        if begin is not None and (not flag or i == len(times) - 1):
            out.append((times[begin], times[i]))
            begin = None
    return out


def instants_frame(tl: PairTimeline) -> pd.DataFrame:
    """The exact instants of the sweep: each fact's ageing and expiry, each flip of the winner, and ``now``;
    time order, with the winner and the margin there."""
    rows = [{"at": m.at, "fact_id": m.fact_id, "what": m.label} for m in tl.marks]
    rows += [
        {"at": f.at, "fact_id": f.after or "(tie)", "what": f"winner changes: {f.before or 'tie'} → {f.after or 'tie'}"}
        for f in tl.flips
    ]
    rows.append({"at": tl.now, "fact_id": "", "what": "now (this run)"})
    frame = pd.DataFrame(rows).sort_values("at", kind="stable").reset_index(drop=True)
    at = [tl.index_of(t) for t in frame["at"]]
    frame["winner"] = [tl.winner[i] or "tie" for i in at]
    frame["margin"] = [float(tl.margin[i]) for i in at]
    frame["relative margin"] = [float(tl.relative_margin[i]) for i in at]
    return frame


def strip_figure(tl: PairTimeline) -> go.Figure:
    """Authority of both facts over time (top) and the strip (bottom: one band per fact, coloured by its
    state), with the ageing / expiry markers, the flips, ``now``, and the close-call and both-expired spans."""
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.62, 0.38], vertical_spacing=0.06)
    ids = {"A": tl.fact_a, "B": tl.fact_b}
    label = {s: f"{s} · {render.esc(fid, 28)}" for s, fid in ids.items()}
    for side, values in (("A", tl.authority_a), ("B", tl.authority_b)):
        fig.add_trace(
            go.Scatter(
                x=list(tl.times),
                y=values,
                mode="lines",
                name=f"authority {label[side]}",
                line={"color": LINE_COLOUR, "dash": LINE_DASH[side], "width": 2},
                hovertemplate=f"{label[side]}<br>%{{x|%Y-%m-%d %H:%M}}: %{{y:.4f}}<extra></extra>",
            ),
            row=1,
            col=1,
        )
    _marks(fig, tl, label)
    _bands(fig, tl, label)
    _spans_and_lines(fig, tl)
    fig.update_yaxes(title_text="authority", rangemode="tozero", row=1, col=1)
    fig.update_yaxes(autorange="reversed", row=2, col=1)
    fig.update_xaxes(type="date", row=2, col=1)
    return titled(fig, "Winner over time", height=460, barmode="overlay")


def _marks(fig: go.Figure, tl: PairTimeline, label: Mapping[str, str]) -> None:
    side_of = {tl.fact_a: "A", tl.fact_b: "B"}
    for kind, symbol in MARK_SYMBOLS.items():
        ms = [m for m in tl.marks if m.kind == kind]
        if not ms:
            continue
        ys = [float((tl.authority_a if side_of[m.fact_id] == "A" else tl.authority_b)[tl.index_of(m.at)]) for m in ms]
        fig.add_trace(
            go.Scatter(
                x=[m.at for m in ms],
                y=ys,
                mode="markers",
                name="half TTL (starts ageing)" if kind == "ageing" and ms[0].label.startswith("half") else ms[0].label,
                marker={"symbol": symbol, "size": 11, "color": NOW_COLOUR, "line": {"width": 2}},
                text=[f"{label[side_of[m.fact_id]]}: {render.esc(m.label)}" for m in ms],
                hovertemplate="%{text}<br>%{x|%Y-%m-%d %H:%M}<extra></extra>",
            ),
            row=1,
            col=1,
        )


def _bands(fig: go.Figure, tl: PairTimeline, label: Mapping[str, str]) -> None:
    seg = winner_segments(tl)
    for state, colour in STATE_COLOURS.items():
        part = seg[seg["state"] == state]
        if part.empty:
            continue
        fig.add_trace(
            go.Bar(
                orientation="h",
                base=[s.isoformat() for s in part["start"]],
                x=[(e - s).total_seconds() * 1000.0 for s, e in zip(part["start"], part["end"])],
                y=[label[s] for s in part["side"]],
                name={"wins": "wins", "loses": "loses", "tie": "tie"}[state],
                marker={"color": colour},
                hovertemplate="%{y}: " + state + "<extra></extra>",
            ),
            row=2,
            col=1,
        )


def _spans_and_lines(fig: go.Figure, tl: PairTimeline) -> None:
    """The flagged spans, the unwritten starts, the flips and ``now`` as full-height shapes over the shared time
    axis, given to the layout at once (plotly's ``add_vrect`` / ``add_vline`` check the whole layout per shape)."""
    shapes: list[dict[str, object]] = []
    notes: list[dict[str, object]] = []
    for kind, on in (("close", tl.close_margin), ("expired", tl.both_expired)):
        shapes += [_band(s, e, FLAG_FILL[kind]) for s, e in _spans(tl.times, on)]
    written = 0  # notes stacked when both facts were written after the timeline's start
    for c in tl.clocks:  # before a fact's modified_at its age counts as 0 (SPEC-027 §3.2: a future timestamp)
        if c.modified_at is not None and c.modified_at > tl.times[0]:
            shapes.append(_band(tl.times[0], c.modified_at, FLAG_FILL["unwritten"]))
            # above the plot, ending at the instant: inside it the note sat on the bands
            notes.append(
                {
                    "x": c.modified_at,
                    "y": 1.0,
                    "xref": "x",
                    "yref": "paper",
                    "text": f"{render.esc(c.fact_id, 24)} written",
                    "showarrow": False,
                    "xanchor": "right",
                    "yanchor": "bottom",
                    "yshift": 14 * written,
                    "font": {"size": 10},
                }
            )
            written += 1
    shapes += [_line(f.at, {"color": STATE_COLOURS["tie"], "dash": "dot", "width": 1}) for f in tl.flips]
    shapes.append(_line(tl.now, {"color": NOW_COLOUR, "width": 2}))
    # "now" starts at its line, a "written" note ends at its instant: side by side whenever the fact was written
    # before now
    notes.append(
        {
            "x": tl.now,
            "y": 1.0,
            "xref": "x",
            "yref": "paper",
            "text": "now",
            "showarrow": False,
            "xanchor": "left",
            "yanchor": "bottom",
        }
    )
    fig.update_layout(shapes=shapes, annotations=notes)


def _band(x0: datetime, x1: datetime, fill: str) -> dict[str, object]:
    """A shaded span of time over both rows of the figure, behind its traces."""
    return {
        "type": "rect",
        "xref": "x",
        "yref": "paper",
        "x0": x0,
        "x1": x1,
        "y0": 0,
        "y1": 1,
        "fillcolor": fill,
        "line": {"width": 0},
        "layer": "below",
    }


def _line(x: datetime, line: Mapping[str, object]) -> dict[str, object]:
    """A vertical line at one instant over both rows of the figure."""
    return {"type": "line", "xref": "x", "yref": "paper", "x0": x, "x1": x, "y0": 0, "y1": 1, "line": dict(line)}


def envelope_figure(env: EnvelopeTimeline, highlight: Sequence[str] = (), *, now: datetime | None = None) -> go.Figure:
    """Facts as rows, instants as columns: a filled cell where the fact is in the envelope (``highlight``:
    the ids drawn first, marked ◆; the column of ``now`` is labelled so)."""
    order = [f for f in highlight if f in env.fact_ids] + [f for f in env.fact_ids if f not in highlight]
    rows = [env.fact_ids.index(f) for f in order]
    z = env.inside[rows].astype(int) if rows else np.zeros((0, len(env.times)), dtype=int)
    names = [("◆ " if f in highlight else "") + render.esc(f, 32) for f in order]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=[t.strftime("%Y-%m-%d") + (" (now)" if now is not None and t == now else "") for t in env.times],
            y=names,
            colorscale=[[0.0, OUT_COLOUR], [1.0, IN_COLOUR]],
            zmin=0,
            zmax=1,
            showscale=False,
            xgap=1,
            ygap=1,
            hovertemplate="%{y}<br>%{x}: %{z}<extra>1 = in the envelope</extra>",
        )
    )
    fig.update_yaxes(autorange="reversed", type="category", dtick=1)  # every fact labelled
    fig.update_xaxes(type="category", tickangle=-45)
    return titled(fig, "Envelope over time (filled: in the envelope)", height=max(220, 60 + 18 * len(order)))


# ---- Streamlit -----------------------------------------------------------------------------------
def flag_notes(
    pair: ConflictPair, kb: KnowledgeBase, statuses: Mapping[str, str], *, now: datetime, config: CRPConfig
) -> None:
    """A warning for each flag of the pair's winner at ``now`` (a close call, both facts expired)."""
    for line in flag_lines(winner_flags(pair, kb, config, now, statuses)):
        st.warning(render.md_escape(line[0].upper() + line[1:]), icon="⚠️")


def pair_time_section(
    pair: ConflictPair,
    kb: KnowledgeBase,
    statuses: Mapping[str, str],
    *,
    now: datetime,
    config: CRPConfig,
    key: str = "timestrip",
) -> None:
    """The pair's winner over time (chart and exact instants) and, with a scenario, the envelope over the
    same range (computed while its expander is open); ``key`` prefixes the elements' keys."""
    key = f"{key}.{pair.fact_a}.{pair.fact_b}"
    try:
        tl = pair_timeline(kb, pair.fact_a, pair.fact_b, config, now=now, statuses=statuses)
    except (KeyError, ValueError) as exc:
        st.caption(f"No winner over time for this pair: {render.md_escape(exc)}")
        return
    with st.expander("Winner over time", expanded=True):
        st.plotly_chart(strip_figure(tl), width="stretch", key=key + ".chart")
        st.caption(
            "By authority alone (source authority × recency × importance, SPEC-027 §2.3), an operator's "
            "decision on the pair aside. Band colours follow the fact: green while it wins, red while it "
            "loses, orange for a tie. ◇ half its TTL (it starts ageing), × its TTL (expired); yellow: a "
            f"close call (margin below {config.winner_margin_warn:.0%} of the larger authority); grey: both "
            "facts expired; black line: now. Before a fact's modified_at (the shaded start) its age counts as 0, "
            "as the pipeline counts a future timestamp."
        )
        render.dataframe(
            instants_frame(tl),
            hide_index=True,
            width="stretch",
            key=key + ".instants",
            column_config={
                "at": st.column_config.DatetimeColumn("at (UTC)", format="YYYY-MM-DD HH:mm:ss"),
                "margin": st.column_config.NumberColumn(format="%.4f"),
                "relative margin": st.column_config.NumberColumn(format="percent"),
            },
        )
    _envelope_section(tl, key)


def _envelope_section(tl: PairTimeline, key: str) -> None:
    box = render.remembered_expander("Envelope over time (this scenario)", key + ".envelope")
    with box:
        if box.open is False:  # built only while open: each instant is a pipeline run
            return
        if get_scenario() is None:
            st.caption("No scenario: pick one in the sidebar to see which facts its envelope holds over time.")
            return
        try:
            env = envelope_over(tl.times[0], tl.times[-1])
        except CRPError as exc:
            st.error(render.md_escape(exc))
            return
        if env is None:
            st.caption("No prepared CKF or scenario.")
            return
        st.plotly_chart(
            envelope_figure(env, (tl.fact_a, tl.fact_b), now=get_now()), width="stretch", key=key + ".envelope.chart"
        )
        st.caption(
            f"{len(env.fact_ids)} fact(s) in the envelope at some instant, {len(env.changing)} of them not at "
            "every instant; ◆ the pair's facts. Each column is the page's run at that instant (operator "
            "decisions and the known-conflict guard in force)."
        )


def envelope_over(start: datetime, end: datetime) -> EnvelopeTimeline | None:
    """The session's run (its corpus, scenario, config, decisions) at each instant of
    :func:`crp_core.envelope_grid` from ``start`` to ``end`` (and now), each cached like every run."""
    scenario, config = get_scenario(), get_config()
    if scenario is None or get_ckf() is None:
        return None
    corpus, base = get_corpus(), get_corpus(progress=False, decisions=False)
    if corpus is None or base is None:
        return None
    decisions, decisions_key = pipeline_decisions()
    times = envelope_grid(start, end, now=get_now())
    results = []
    for t in times:
        known, known_key = known_conflicts_in_force(base, config, t)
        results.append(
            cache.pipeline_result(
                corpus,
                scenario,
                config,
                t,
                decisions=decisions,
                decisions_key=decisions_key,
                known_conflicts=known,
                known_key=known_key,
            )
        )
    return envelope_timeline_of(times, results)
