"""The Tuning page's before / after view: what SPEC-024 alone hands to the model next to what SPEC-027
hands to it (expired and ageing facts, contradictory pairs, fan-out duplicates), side by side and as
figures. Pure functions of a :class:`~crp_core.BeforeAfter` record (no Streamlit), so the HTML report and
the tests build exactly what the page shows. Dataframes show CKF text as plain text.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go

from crp_core import BeforeAfter, EnvelopeChange, SideNumbers

from .chart_style import AGEING, BAD, EXPIRED, FRESH, GOOD, rule_words, wrap_label

#: bad / good: what the older retrieval hands over in red, SPEC-027 in green (the same in the HTML report)
SIDE_COLOURS = {"SPEC-024 only": BAD, "SPEC-027": GOOD}
RULE_ORDER = ("fresh", "decay", "expired", "stale_status", "timeless", "user_provided", "unknown_age", "future")
#: a rule's colour: fresh / ageing / expired in the recency-state colours, the rules that leave a fact at
#: 1.0 for another reason in colours of their own; the legend names a rule in the reader's words
RULE_COLOURS = {
    "fresh": FRESH,
    "decay": AGEING,
    "expired": EXPIRED,
    "stale_status": "#8b1a1a",
    "timeless": "#1f5fa8",
    "user_provided": "#7b4fb3",
    "unknown_age": "#9aa5b1",
    "future": "#555555",
}


def before_after_frame(ba: BeforeAfter) -> pd.DataFrame:
    """The numbers of both sides, one row per measure (``BeforeAfter.rows``), as text."""
    df = pd.DataFrame(ba.rows())
    return df.astype({"SPEC-024 only": str, "SPEC-027": str})


def side_envelope_frame(ba: BeforeAfter, side: SideNumbers, other_env: Sequence[str]) -> pd.DataFrame:
    """One side's envelope in packed order: each fact's text, its SPEC-027 recency state and factor, and
    whether it is in a contradictory pair, named by a fan-out duplicate, or only on this side."""
    kb = ba.full.corpus.kb
    in_pair = {f for p in side.contradictory_pairs for f in p}
    dups = set(side.packed_duplicate_facts)
    other = set(other_env)
    rows = []
    for i, fid in enumerate(side.envelope):
        f = kb.get(fid)
        rows.append(
            {
                "#": i + 1,
                "fact_id": fid,
                "content": f.content if f else "",
                "recency": ba.recency_state(fid),
                "SPEC-027 recency": ba.spec027_recency.get(fid, 1.0),
                "in a contradictory pair": fid in in_pair,
                "fan-out duplicate": fid in dups,
                "only on this side": fid not in other,
                "status": f.status if f else "",
            }
        )
    return pd.DataFrame(rows, columns=SIDE_COLUMNS)


SIDE_COLUMNS = [
    "#",
    "fact_id",
    "content",
    "recency",
    "SPEC-027 recency",
    "in a contradictory pair",
    "fan-out duplicate",
    "only on this side",
    "status",
]


def changes_frame(changes: Sequence[EnvelopeChange]) -> pd.DataFrame:
    """Facts that left (or entered) the envelope: id, text, kind, why, tokens."""
    return pd.DataFrame(
        [
            {"fact_id": c.fact_id, "content": c.content, "kind": c.kind, "why": c.reason, "tokens": c.tokens}
            for c in changes
        ],
        columns=["fact_id", "content", "kind", "why", "tokens"],
    )


def pairs_frame(ba: BeforeAfter, side: SideNumbers) -> pd.DataFrame:
    """One side's contradictory pairs handed to the model, with both texts; "NOTE block" says in words whether
    the model is told (a tied pair's NOTE), as the table renders its cells as text."""
    kb = ba.full.corpus.kb
    noted = set(side.noted_pairs)

    def text(fid: str) -> str:
        f = kb.get(fid)
        return f.content if f else ""

    return pd.DataFrame(
        [
            {
                "fact_a": a,
                "text a": text(a),
                "fact_b": b,
                "text b": text(b),
                "NOTE block": "yes (tied)" if (a, b) in noted else "no",
            }
            for a, b in side.contradictory_pairs
        ],
        columns=["fact_a", "text a", "fact_b", "text b", "NOTE block"],
    )


def duplicates_frame(ba: BeforeAfter, side: SideNumbers) -> pd.DataFrame:
    """One side's fan-out duplicates: the facts (with text), the branches, whether packed."""
    kb = ba.full.corpus.kb
    packed = set(side.envelope)
    rows = []
    for d in side.duplicates:
        texts = [f.content if (f := kb.get(fid)) else "" for fid in d.fact_ids]
        rows.append(
            {
                "facts": " ~ ".join(d.fact_ids),
                "content": " / ".join(texts),
                "branches": ", ".join(str(b) for b in d.branches),
                "similarity": float(d.similarity),
                "in the envelope": ", ".join(f for f in d.fact_ids if f in packed),
            }
        )
    return pd.DataFrame(rows, columns=["facts", "content", "branches", "similarity", "in the envelope"])


def before_after_bars(ba: BeforeAfter) -> go.Figure:
    """Grouped bars: expired facts, ageing facts, contradictory pairs and fan-out duplicates, SPEC-024 only
    vs SPEC-027 (the same numbers as ``BeforeAfter.rows``)."""
    # short, wrapped labels: the title says they are what reaches the model; four of them fit side by side in
    # half a 1280 px screen with the sidebar open
    measures = [
        wrap_label("expired facts"),
        wrap_label("ageing facts"),
        wrap_label("contradictory pairs"),
        wrap_label("fan-out duplicates"),
    ]
    vals = {s.label: list(s.reaching_model) for s in (ba.before, ba.after)}
    fig = go.Figure()
    for side, ys in vals.items():
        fig.add_trace(
            go.Bar(
                x=measures,
                y=ys,
                name=side,
                marker_color=SIDE_COLOURS[side],
                text=ys,
                textposition="outside",
                hovertemplate="%{y}<extra>" + side + "</extra>",
            )
        )
    top = max([1] + vals["SPEC-024 only"] + vals["SPEC-027"])
    fig.update_yaxes(
        range=[0, top * 1.25 + 0.5], title_text="count", dtick=1 if top <= 10 else None, tickformat="d", automargin=True
    )
    note = "" if ba.before.fanout_duplicates is not None else " (no fan-out in this scenario)"
    fig.update_xaxes(automargin=True)
    fig.update_layout(
        barmode="group",
        height=380,
        margin=dict(l=60, r=10, t=50, b=10),
        legend=dict(orientation="h", y=-0.18),
        title=dict(text="What reaches the model" + note, x=0.0, xanchor="left"),
    )
    return fig


def recency_mix_figure(ba: BeforeAfter) -> go.Figure:
    """Stacked bars: the envelope's facts by the SPEC-027 §3.2 recency rule that applies to them."""
    fig = go.Figure()
    sides = [("SPEC-024 only", ba.before.envelope), ("SPEC-027", ba.after.envelope)]
    for rule in RULE_ORDER:
        ys = []
        for _side, env in sides:
            ys.append(sum(1 for f in env if ba.recency_rule.get(f) == rule))
        if not any(ys):
            continue
        fig.add_trace(
            go.Bar(
                x=[s for s, _ in sides],
                y=ys,
                name=rule_words(rule),
                marker_color=RULE_COLOURS[rule],
                hovertemplate="%{x}: %{y} fact(s)<extra>" + rule_words(rule) + "</extra>",
            )
        )
    n = max(len(ba.before.envelope), len(ba.after.envelope), 1)
    fig.update_yaxes(dtick=1 if n <= 10 else None, tickformat="d", automargin=True)
    fig.update_layout(
        barmode="stack",
        height=380,
        margin=dict(l=60, r=10, t=50, b=10),
        legend=dict(orientation="h", y=-0.18),
        yaxis_title="facts in the envelope",
        title=dict(text="Envelope facts by recency (SPEC-027 §3.2)", x=0.0, xanchor="left"),
    )
    return fig


def before_after_figures(ba: BeforeAfter) -> list[go.Figure]:
    """The before / after figures, in page order."""
    return [before_after_bars(ba), recency_mix_figure(ba)]
