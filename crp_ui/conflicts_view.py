"""Pure helpers of the Conflict triage page (SPEC-027 §2): conflict records -> DataFrames,
plotly figures and escaped, highlighted HTML. Nothing here reads widgets or session state.

Highlighting builds HTML only from escaped pieces: a text is cut at the ``ValueDiff`` character
spans, every piece goes through :func:`crp_ui.render.html_text` (``html.escape`` + Markdown markers
as entities), and only the differing slices are wrapped in ``<mark>``. Raw fact text never reaches
``unsafe_allow_html``.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from crp_core import headers
from crp_core.model import KnowledgeBase
from crp_core.records import Authority, ConflictPair
from crp_core.stages.contradictions import EVENT_DISMISSED, EVENT_RESOLVED, PATTERNS
from crp_core.stages.packing import note_block
from crp_core.triage.quality import DetectorQuality

from .render import STATUS_COLOURS, badge, html_text

#: highlight colour per pattern (SPEC-005 §5.3 names)
PATTERN_COLOURS: Mapping[str, str] = {
    "NUMBER_CHANGED": "#ffd866",
    "ENTITY_SUBSTITUTED": "#ffb3c7",
    "NEGATION_FLIP": "#c9b6ff",
    "DATE_SHIFTED": "#9fe0c9",
    "MAGNITUDE_ALTERED": "#ffc59e",
}
GAP_MARK = "∅"  # shown where the other text has a token this one lacks (e.g. the negation)
AUTHORITY_PARTS: tuple[tuple[str, str], ...] = (
    ("source_authority", "source authority"),
    ("recency_factor", "recency factor"),
    ("importance_weight", "importance"),
    ("authority", "authority"),
)
DECIDED_CHOICES = ("all", "undecided", "decided")
QUEUE_COLUMNS = (
    "pair",
    "fact_a",
    "fact_b",
    "patterns",
    "similarity",
    "authority_a",
    "authority_b",
    "margin",
    "arbitration",
    "source_a",
    "source_b",
    "status_a",
    "status_b",
    "decision",
    "decided_by",
    "decided_at",
    "decided",
    "text_a",
    "text_b",
    "marks",
)


# ---- highlighting --------------------------------------------------------------------------------
def merge_spans(spans: Iterable[tuple[int, int, str]], length: int) -> list[tuple[int, int, tuple[str, ...]]]:
    """Clamp spans to ``[0, length]``, sort them and merge overlapping ones (their patterns united).

    A zero-width span (a token the other text has and this one lacks) is kept as an insertion
    point; one that falls strictly inside a highlighted slice is absorbed by it.
    """
    items = []
    for s, e, pat in spans:
        s = max(0, min(length, int(s)))
        e = max(s, min(length, int(e)))
        items.append((s, e, str(pat)))
    items.sort(key=lambda t: (t[0], t[1], t[2]))
    merged: list[list[Any]] = []
    for s, e, pat in items:
        if merged:
            ps, pe, pats = merged[-1]
            if (pe > ps and s < pe) or (s, e) == (ps, pe):  # overlaps a highlighted slice / same point
                merged[-1][1] = max(pe, e)
                pats.add(pat)
                continue
        merged.append([s, e, {pat}])
    return [(s, e, tuple(sorted(p))) for s, e, p in merged]


def highlight_html(text: str, spans: Iterable[tuple[int, int, str]]) -> str:
    """``text`` as safe HTML with each differing slice in ``<mark>`` (title = pattern names).

    Every piece of ``text`` is escaped separately (:func:`html_text`); a zero-width span shows
    :data:`GAP_MARK` where the other text holds the differing token.
    """
    text = "" if text is None else str(text)
    out: list[str] = []
    pos = 0
    for s, e, pats in merge_spans(spans, len(text)):
        out.append(html_text(text[pos:s]))
        colour = PATTERN_COLOURS.get(pats[0], "#ffd866")
        title = html.escape(", ".join(pats), quote=True)
        if e > s:
            out.append(
                f'<mark class="crp-diff" title="{title}" style="background:{colour};padding:0 2px;'
                f'border-radius:3px">{html_text(text[s:e])}</mark>'
            )
        else:
            out.append(
                f'<mark class="crp-gap" title="{title}: the other fact has a token here" '
                f'style="background:{colour};padding:0 2px;border-radius:3px">{GAP_MARK}</mark>'
            )
        pos = e
    out.append(html_text(text[pos:]))
    return "".join(out)


def side_spans(pair: ConflictPair, side: str) -> list[tuple[int, int, str]]:
    """The character spans of ``pair``'s diffs in fact ``side`` ("a" or "b"), with their pattern."""
    if side not in ("a", "b"):
        raise ValueError(f"side must be 'a' or 'b', got {side!r}")
    return [(*(d.span_a if side == "a" else d.span_b), d.pattern) for d in pair.conflict.diffs]


def authority_arithmetic(a: Authority) -> str:
    """``source authority x recency factor x importance = authority`` with the numbers."""
    return f"{a.source_authority:.4g} × {a.recency_factor:.4f} × {a.importance_weight:.4g} = {a.authority:.4f}"


def fact_side_html(fact: Any, text_html: str, auth: Authority | None, role: str, *, status: str | None = None) -> str:
    """One side of a pair: id, source type, status, role badge, highlighted text, authority."""
    status = status or getattr(fact, "status", "ACTIVE")
    role_colour = {
        "winner": "#1b7f3b",
        "suppressed": "#b00020",
        "tied": "#a15c00",
        "kept": "#3b5b92",
        "dismissed": "#6b6b6b",
        "winner (override)": "#1b7f3b",
    }.get(role, "#444")
    head = (
        f"<code>{html_text(fact.fact_id)}</code> "
        + badge(getattr(fact, "source_type", ""), "#3b5b92")
        + badge(status, STATUS_COLOURS.get(status, "#444"))
        + (badge(role, role_colour) if role else "")
    )
    arith = ""
    if auth is not None:
        arith = (
            f'<div style="font-size:0.85em;color:#333;margin-top:6px">authority = '
            f"{html_text(authority_arithmetic(auth))}</div>"
        )
    return (
        f'<div class="crp-conflict-side" style="border:1px solid #ddd;border-radius:6px;padding:8px 10px;'
        f'margin-bottom:8px">{head}<div style="margin-top:6px;line-height:1.6">{text_html}</div>{arith}</div>'
    )


# ---- the deciding fields of a pair ---------------------------------------------------------------
#: the rows of the evidence table, in display order: what a case is decided on
EVIDENCE_FIELDS: tuple[str, ...] = (
    "source_type",
    "source_id",
    "source_location",
    "modified_at",
    "ingested_at",
    "age at now",
    "TTL",
    "recency rule",
    "status in the CKF",
    "status in force",
    "source authority",
    "recency factor",
    "importance",
    "authority",
)


def _ts(v: Any) -> str:
    from crp_core.io.timeparse import format_timestamp

    return "-" if v is None else format_timestamp(v)


def _days(v: float) -> str:
    return f"{v:,.1f} d" if math.isfinite(v) else "no expiry"


def ttl_origin(fact: Any, ttl_days: float, source_type: str) -> str:
    """The TTL in force and where it comes from: the fact's own ``ttl`` or its source type's default."""
    kind = getattr(fact, "ttl_kind", "default")
    if kind == "timeless":
        return "none: timeless (the fact's own ttl)"
    if kind == "explicit":
        own = getattr(fact, "ttl_text", None) or _days(ttl_days)
        return f"{own} = {_days(ttl_days)} (the fact's own ttl)"
    if not math.isfinite(ttl_days):
        return f"no expiry (no default TTL for {source_type})"
    return f"{_days(ttl_days)} (default for {source_type})"


def _rule(rule: str, ckf_status: str, in_force: str) -> str:
    """The recency rule of a fact as loaded, corrected for an operator's status mark."""
    if in_force == ckf_status:
        return rule
    if in_force == "STALE":
        return "stale_status (operator mark)"
    return f"{rule} (before the operator's {in_force} mark)"


def pair_evidence(pair: ConflictPair, kb: KnowledgeBase, attrs: Any, statuses: Mapping[str, str]) -> pd.DataFrame:
    """One row per deciding field (:data:`EVIDENCE_FIELDS`): the value for fact A, for fact B and
    whether they differ. ``kb`` is the CKF as loaded, ``attrs`` its ``fact_attributes`` at the run's
    ``now`` (age, TTL, rule), ``statuses`` the operators' statuses in force; the authority components
    are those the arbitration used (``pair.authority``)."""
    from crp_core.factors.recency import RULES

    cols: list[dict[str, str]] = []
    for fid in (pair.fact_a, pair.fact_b):
        f = kb.get(fid)
        auth = pair.authority.get(fid)
        if f is None:
            cols.append({k: "-" for k in EVIDENCE_FIELDS})
            continue
        r = kb.index_of(fid)
        age = float(attrs.age_days[r])
        imp_origin = "the fact's own" if f.importance_weight is not None else f"default for {f.source_type}"
        in_force = statuses.get(fid, f.status)
        cols.append(
            {
                "source_type": f.source_type,
                "source_id": f.source_id or "-",
                "source_location": f.source_location or "-",
                "modified_at": _ts(f.modified_at),
                "ingested_at": _ts(f.ingested_at),
                "age at now": "unknown" if math.isnan(age) else _days(age),
                "TTL": ttl_origin(f, float(attrs.ttl_days[r]), f.source_type),
                "recency rule": _rule(RULES[int(attrs.rule[r])], f.status, in_force),
                "status in the CKF": f.status,
                "status in force": in_force + (" (operator)" if in_force != f.status else ""),
                "source authority": "-" if auth is None else f"{auth.source_authority:.4g}",
                "recency factor": "-" if auth is None else f"{auth.recency_factor:.4f}",
                "importance": "-" if auth is None else f"{auth.importance_weight:.4g} ({imp_origin})",
                "authority": "-" if auth is None else f"{auth.authority:.4f}",
            }
        )
    rows = [
        {"field": k, "a": cols[0][k], "b": cols[1][k], "differs": cols[0][k] != cols[1][k]} for k in EVIDENCE_FIELDS
    ]
    return pd.DataFrame(rows, columns=["field", "a", "b", "differs"])


def evidence_html(frame: pd.DataFrame, fact_a: str, fact_b: str) -> str:
    """The evidence table as escaped HTML: field | A | B, rows whose values differ highlighted and
    flagged with "≠" (every cell through :func:`html_text`)."""
    head = (
        f'<tr><th style="text-align:left;padding:4px 8px;width:16%">field</th>'
        f'<th style="text-align:left;padding:4px 8px;width:40%">A · <code>{html_text(fact_a)}</code></th>'
        f'<th style="text-align:left;padding:4px 8px;width:40%">B · <code>{html_text(fact_b)}</code></th>'
        f'<th style="padding:4px 8px;width:4%"></th></tr>'
    )
    body = []
    for r in frame.itertuples(index=False):
        if r.differs:
            a = f'<mark style="background:#ffd866;padding:0 2px">{html_text(r.a)}</mark>'
            b = f'<mark style="background:#ffd866;padding:0 2px">{html_text(r.b)}</mark>'
            style, flag = ' class="crp-differs" style="background:#fff8dc"', "≠"
        else:
            a, b, style, flag = html_text(r.a), html_text(r.b), "", ""
        body.append(
            f'<tr{style}><td style="padding:3px 8px;color:#444">{html_text(r.field)}</td>'
            f'<td style="padding:3px 8px;word-break:break-word">{a}</td>'
            f'<td style="padding:3px 8px;word-break:break-word">{b}</td>'
            f'<td style="padding:3px 8px;font-weight:bold;color:#a15c00">{flag}</td></tr>'
        )
    return (
        f'<table class="crp-evidence" style="width:100%;border-collapse:collapse;font-size:0.9em;'
        f'margin:4px 0 10px 0">{head}{"".join(body)}</table>'
    )


def differing_fields(frame: pd.DataFrame) -> list[str]:
    """The fields whose values differ between the two facts (evidence order)."""
    return [str(f) for f, d in zip(frame["field"], frame["differs"]) if d]


# ---- roles and outcomes --------------------------------------------------------------------------
def role_of(pair: ConflictPair, fact_id: str) -> str:
    """How the arbitration treated ``fact_id``: winner / suppressed / tied / kept / dismissed."""
    if pair.decision == "dismiss":
        return "dismissed"
    if pair.tied:
        return "tied"
    if pair.suppressed == fact_id:
        return "suppressed"
    if pair.suppressed is not None and fact_id in pair.kept:
        return "winner (override)" if pair.decision == "override" else "winner"
    return "kept"


def outcome_text(pair: ConflictPair) -> str:
    """One line: the winner and the suppressed fact, the tie, the dismissal or the skip."""
    if pair.skipped:
        return "skipped: a fact of the pair was already suppressed by an earlier pair"
    if pair.decision == "dismiss":
        return "dismissed by an operator: not a conflict, both facts kept"
    if pair.tied:
        return "tie: neither fact suppressed; the envelope carries a NOTE block"
    if pair.suppressed is not None:
        winner = pair.kept[0] if pair.kept else "?"
        how = "operator override" if pair.decision == "override" else "higher authority"
        return f"{winner} wins ({how}); {pair.suppressed} suppressed"
    return "kept both"


def arbitration_label(pair: ConflictPair) -> str:
    """Short queue label: "tie", "dismissed", "<id> wins" or "override: <id> wins"."""
    if pair.decision == "dismiss":
        return "dismissed"
    if pair.tied:
        return "tie"
    if pair.suppressed is not None and pair.kept:
        return ("override: " if pair.decision == "override" else "") + f"{pair.kept[0]} wins"
    return "kept both"


def arbitration_short(pair: ConflictPair) -> str:
    """The arbitration without ids, short enough for a metric: "tie", "A wins", "override: B wins"...
    (A / B are the pair's sides; long ids would be cut in a metric, see :func:`arbitration_label`)."""
    if pair.decision == "dismiss":
        return "dismissed"
    if pair.tied:
        return "tie"
    if pair.suppressed is not None and pair.kept:
        side = "A" if pair.kept[0] == pair.fact_a else "B"
        return ("override: " if pair.decision == "override" else "") + f"{side} wins"
    return "kept both"


# ---- authority table and chart -------------------------------------------------------------------
def authority_frame(pair: ConflictPair) -> pd.DataFrame:
    """One row per fact: the components of SPEC-027 §2.3, the product, the arithmetic, the role."""
    rows = []
    for fid in (pair.fact_a, pair.fact_b):
        a = pair.authority[fid]
        rows.append(
            {
                "fact_id": fid,
                "source_type": a.source_type,
                "source_authority": a.source_authority,
                "recency_factor": a.recency_factor,
                "importance_weight": a.importance_weight,
                "authority": a.authority,
                "arithmetic": authority_arithmetic(a),
                "role": role_of(pair, fid),
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            "fact_id",
            "source_type",
            "source_authority",
            "recency_factor",
            "importance_weight",
            "authority",
            "arithmetic",
            "role",
        ],
    )


#: the two facts' bar colours (A, B), shared by the HTML bars and the plotly figure
AUTHORITY_COLOURS = ("#3b5b92", "#e07b39")


def authority_bars_html(pair: ConflictPair) -> str:
    """The authority components (and the product) of both facts as horizontal bars, one HTML block.

    What :func:`authority_figure` draws (every component is in [0, 1]), without a plotly chart: the
    browser lays out a few styled ``div``s instead of loading and running plotly on every visit, and
    nothing here is interactive. Ids go through ``html_text``; everything else is numbers and static
    styles."""
    ids = (pair.fact_a, pair.fact_b)
    legend = " ".join(
        f'<span style="display:inline-block;width:.8em;height:.8em;background:{AUTHORITY_COLOURS[i]};'
        f'margin:0 .3em 0 .8em;vertical-align:middle"></span>{"AB"[i]} · {html_text(fid)} '
        f"({html_text(role_of(pair, fid))})"
        for i, fid in enumerate(ids)
    )
    rows = []
    for key, label in AUTHORITY_PARTS:
        bars = []
        for i, fid in enumerate(ids):
            v = float(getattr(pair.authority[fid], key))
            width = 0.0 if not math.isfinite(v) else min(max(v, 0.0), 1.0) * 100
            bars.append(
                f'<div style="display:flex;align-items:center;gap:.4em;margin:1px 0">'
                f'<span style="width:1.2em;color:#666">{"AB"[i]}</span>'
                f'<div style="flex:1;background:#eef0f4;height:.9em;border-radius:2px">'
                f'<div style="width:{width:.2f}%;height:100%;background:{AUTHORITY_COLOURS[i]};'
                f'border-radius:2px"></div></div><span style="width:4.5em;text-align:right;'
                f'font-variant-numeric:tabular-nums">{v:.3f}</span></div>'
            )
        rows.append(
            f'<div style="display:flex;gap:.8em;align-items:center;margin:.25em 0">'
            f'<div style="width:9em;font-size:.9em">{html_text(label)}</div>'
            f'<div style="flex:1">{"".join(bars)}</div></div>'
        )
    return (
        f'<div class="crp-authority-bars" style="margin:.2em 0 .6em 0">'
        f'<div style="font-size:.9em;margin-bottom:.2em"><b>authority = source authority × recency factor '
        f"× importance</b>{legend}</div>{''.join(rows)}</div>"
    )


def authority_table_html(pair: ConflictPair) -> str:
    """The SPEC-027 §2.3 components of both facts as an HTML table (what :func:`authority_frame` holds:
    fact, source authority, recency, importance, authority, the arithmetic, the role), one row per fact.
    Ids, source types and roles go through ``html_text``; the rest are numbers."""
    th = 'style="text-align:left;padding:3px 8px;border-bottom:1px solid #ddd;font-weight:600"'
    num = 'style="text-align:right;padding:3px 8px;font-variant-numeric:tabular-nums"'
    head = "".join(
        f"<th {th}>{html_text(h)}</th>"
        for h in ("fact_id", "source type", "source auth.", "recency", "importance", "authority", "arithmetic", "role")
    )
    rows = []
    for i, fid in enumerate((pair.fact_a, pair.fact_b)):
        a = pair.authority[fid]
        rows.append(
            f'<tr data-fact="{html_text(fid)}">'
            f'<td style="padding:3px 8px">{"AB"[i]} · <code>{html_text(fid)}</code></td>'
            f'<td style="padding:3px 8px">{html_text(a.source_type)}</td>'
            + "".join(f"<td {num}>{float(getattr(a, k)):.4f}</td>" for k, _ in AUTHORITY_PARTS)
            + f'<td style="padding:3px 8px">{html_text(authority_arithmetic(a))}</td>'
            f'<td style="padding:3px 8px">{html_text(role_of(pair, fid))}</td></tr>'
        )
    return (
        f'<table class="crp-authority" style="width:100%;border-collapse:collapse;font-size:0.9em;'
        f'margin:4px 0 6px 0"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
    )


def authority_html(pair: ConflictPair) -> str:
    """The authority table and its bars in one HTML block (one element for the browser to lay out)."""
    return authority_table_html(pair) + authority_bars_html(pair)


def _stat(label: str, value: str) -> str:
    return (
        f'<div class="crp-stat" style="flex:1;min-width:8em"><div style="font-size:0.85em;color:#555">'
        f'{html_text(label)}</div><div class="crp-stat-value" style="font-size:1.6em;line-height:1.3">'
        f"{html_text(value)}</div></div>"
    )


def pair_head_html(pair: ConflictPair) -> str:
    """The selected pair's heading in one HTML block: both ids, which is A and which B, the cosine
    similarity, the authority margin, the arbitration (short, then in full). Ids are escaped."""
    a, b = html_text(pair.fact_a), html_text(pair.fact_b)
    stats = (
        _stat("cosine similarity", f"{pair.similarity:.4f}")
        + _stat("authority margin", f"{pair.margin:.4f}")
        + _stat("arbitration", arbitration_short(pair))
    )
    return (
        f'<div class="crp-pair-head"><h3 style="margin:0.4em 0 0.1em 0;padding:0">{a} ↔ {b}</h3>'
        f'<div style="font-size:0.875em;color:#666">A = <code>{a}</code> · B = <code>{b}</code></div>'
        f'<div style="display:flex;gap:1em;flex-wrap:wrap;margin:0.6em 0 0.2em 0">{stats}</div>'
        f'<div style="font-size:0.875em;color:#666">Arbitration: {html_text(arbitration_label(pair))}</div></div>'
    )


def pair_case_html(pair: ConflictPair, kb: KnowledgeBase, attrs: Any, statuses: Mapping[str, str]) -> str:
    """Both sides of a pair next to each other (texts with the differing tokens highlighted, role and
    authority arithmetic), then the evidence table (:func:`evidence_html`) and the fields that differ:
    one HTML block. ``kb`` is the CKF as loaded, ``attrs`` its ``fact_attributes``, ``statuses`` the
    operators' statuses in force. The two cards sit side by side while the page is wide enough."""
    sides = []
    for fid, side in ((pair.fact_a, "a"), (pair.fact_b, "b")):
        fact = kb.get(fid)
        if fact is None:
            sides.append(f'<div class="crp-conflict-side">{html_text(fid)}: not in this CKF</div>')
            continue
        body = highlight_html(fact.content, side_spans(pair, side))
        sides.append(
            fact_side_html(
                fact, body, pair.authority.get(fid), role_of(pair, fid), status=statuses.get(fid, fact.status)
            )
        )
    evidence = pair_evidence(pair, kb, attrs, statuses)
    differ = differing_fields(evidence)
    note = (
        f"Fields that differ (highlighted): {html_text(', '.join(differ))}"
        if differ
        else "No deciding field differs: only the texts do."
    )
    return (
        f'<div class="crp-pair-case"><div style="display:grid;grid-template-columns:repeat(auto-fit,'
        f'minmax(16em,1fr));gap:1em">{"".join(sides)}</div>'
        f"{evidence_html(evidence, pair.fact_a, pair.fact_b)}"
        f'<div class="crp-differ-note" style="font-size:0.875em;color:#666;margin-bottom:0.5em">{note}</div></div>'
    )


def authority_figure(pair: ConflictPair, *, height: int = 300) -> go.Figure:
    """Grouped bars: each authority component (and the product) side by side for the two facts."""
    fig = go.Figure()
    colours = AUTHORITY_COLOURS
    for i, fid in enumerate((pair.fact_a, pair.fact_b)):
        a = pair.authority[fid]
        ys = [float(getattr(a, k)) for k, _ in AUTHORITY_PARTS]
        fig.add_trace(
            go.Bar(
                name=f"{fid} ({role_of(pair, fid)})",
                x=[lbl for _, lbl in AUTHORITY_PARTS],
                y=ys,
                text=[f"{y:.3f}" for y in ys],
                textposition="outside",
                marker_color=colours[i],
                hovertemplate=f"{html.escape(fid)}<br>%{{x}} = %{{y:.6f}}<extra></extra>",
            )
        )
    fig.update_layout(
        barmode="group",
        height=height,
        margin=dict(l=10, r=10, t=34, b=10),
        yaxis=dict(range=[0, 1.15], title="value"),
        xaxis=dict(tickangle=0),
        title=dict(text="authority = source authority × recency factor × importance", font=dict(size=13)),
        legend=dict(orientation="v", x=1.01, y=1),
        uniformtext=dict(minsize=9, mode="hide"),
    )
    return fig


# ---- triage queue --------------------------------------------------------------------------------
def _decision_summary(d: Any) -> str:
    if d is None:
        return ""
    if d.kind == "override":
        return f"override: {d.winner} wins"
    if d.kind == "accept":
        return "accepted" + (f" ({d.winner} wins)" if d.winner else "")
    if d.kind == "dismiss":
        return "dismissed (not a conflict)"
    if d.kind == "mark_status":
        return f"{d.target_fact} marked {d.new_status}"
    return str(d.kind)


def queue_frame(scan: Any, kb: Any, ds: Any) -> pd.DataFrame:
    """The triage queue: one row per conflict pair of the whole-CKF scan, in triage order (ties
    first, then the smallest authority margin; dismissed pairs last).

    ``status_a`` / ``status_b`` are the statuses in force (the CKF's, then the operators'); a pair
    is ``decided`` when it has a decision of its own or an operator took one of its facts out of
    retrieval (QUARANTINED / DELETED: the conflict can no longer reach an envelope).
    """
    from crp_core.config import NEVER_RETRIEVED

    statuses = dict(ds.statuses)
    rows = []
    for p in scan.pairs:
        fa, fb = kb.get(p.fact_a), kb.get(p.fact_b)
        sa = statuses.get(p.fact_a, fa.status if fa is not None else "")
        sb = statuses.get(p.fact_b, fb.status if fb is not None else "")
        latest = ds.latest.get(p_key(p))
        removed = [fid for fid in (p.fact_a, p.fact_b) if statuses.get(fid) in NEVER_RETRIEVED]
        summary = _decision_summary(latest)
        if removed and (latest is None or latest.kind != "mark_status" or latest.target_fact not in removed):
            extra = ", ".join(f"{fid} {statuses[fid]}" for fid in removed)
            summary = f"{summary}; {extra}" if summary else extra
        rows.append(
            {
                "pair": p_key(p),
                "fact_a": p.fact_a,
                "fact_b": p.fact_b,
                "patterns": ", ".join(p.patterns),
                "similarity": p.similarity,
                "authority_a": p.authority[p.fact_a].authority,
                "authority_b": p.authority[p.fact_b].authority,
                "margin": p.margin,
                "arbitration": arbitration_label(p),
                "source_a": p.authority[p.fact_a].source_type,
                "source_b": p.authority[p.fact_b].source_type,
                "status_a": sa,
                "status_b": sb,
                "decision": summary,
                "decided_by": latest.operator if latest is not None else "",
                "decided_at": latest.decided_at if latest is not None else "",
                "decided": latest is not None or bool(removed),
                "text_a": fa.content if fa is not None else "",
                "text_b": fb.content if fb is not None else "",
                "marks": pair_marks(p, fa, fb, statuses),
            }
        )
    frame = pd.DataFrame(rows, columns=list(QUEUE_COLUMNS))
    return frame.astype(
        {
            "similarity": "float64",
            "authority_a": "float64",
            "authority_b": "float64",
            "margin": "float64",
            "decided": "bool",
        }
    )


def pair_marks(pair: ConflictPair, fa: Any, fb: Any, statuses: Mapping[str, str]) -> str:
    """What happens to the pair's facts, by side: "B suppressed", "A STALE (operator)", ... ("" when
    nothing): the stage-4 loser and every fact whose status an operator changed."""
    bits = []
    for side, fid, f in (("A", pair.fact_a, fa), ("B", pair.fact_b, fb)):
        if pair.suppressed == fid:
            bits.append(f"{side} suppressed")
        s = statuses.get(fid)
        if f is not None and s is not None and s != f.status:
            bits.append(f"{side} {s} (operator)")
    return " · ".join(bits)


def p_key(pair: ConflictPair) -> str:
    """The triage store's key of the pair (``crp_core.triage.pair_key``)."""
    from crp_core.triage import pair_key

    return pair_key(pair.fact_a, pair.fact_b)


def filter_queue(
    frame: pd.DataFrame,
    *,
    patterns: Sequence[str] = (),
    source_types: Sequence[str] = (),
    statuses: Sequence[str] = (),
    decided: str = "all",
) -> pd.DataFrame:
    """Rows showing any of ``patterns``, with a fact of any of ``source_types`` / ``statuses``
    (an empty selection does not filter), and ``decided`` in "all" / "undecided" / "decided"."""
    if decided not in DECIDED_CHOICES:
        raise ValueError(f"decided must be one of {DECIDED_CHOICES}, got {decided!r}")
    mask = pd.Series(True, index=frame.index)
    if patterns:
        want = set(patterns)
        mask &= frame["patterns"].map(lambda s: bool(want & set(filter(None, s.split(", ")))))
    if source_types:
        mask &= frame["source_a"].isin(source_types) | frame["source_b"].isin(source_types)
    if statuses:
        mask &= frame["status_a"].isin(statuses) | frame["status_b"].isin(statuses)
    if decided == "undecided":
        mask &= ~frame["decided"]
    elif decided == "decided":
        mask &= frame["decided"]
    return frame[mask]


def queue_counts(frame: pd.DataFrame) -> dict[str, int]:
    """Counts at the top of the queue: pairs, ties, undecided, decided, dismissed, and per pattern."""
    out = {
        "pairs": int(len(frame)),
        "ties": int((frame["arbitration"] == "tie").sum()),
        "undecided": int((~frame["decided"]).sum()),
        "decided": int(frame["decided"].sum()),
        "dismissed": int((frame["arbitration"] == "dismissed").sum()),
    }
    for pat in PATTERNS:
        out[pat] = int(frame["patterns"].map(lambda s, p=pat: p in s.split(", ")).sum())
    return out


def pair_label(row: Mapping[str, Any]) -> str:
    """Selectbox label of a queue row: the pair and its pattern(s) (its state is shown beside it)."""
    return f"{row['fact_a']} ↔ {row['fact_b']} · {row['patterns']}"


# ---- envelope (current run) ----------------------------------------------------------------------
def envelope_pairs_frame(result: Any) -> pd.DataFrame:
    """The run's contradiction pairs in processing order (skipped ones included)."""
    rows = []
    for p in result.resolution.pairs:
        rows.append(
            {
                "fact_a": p.fact_a,
                "fact_b": p.fact_b,
                "patterns": ", ".join(p.patterns),
                "similarity": p.similarity,
                "authority_a": p.authority[p.fact_a].authority,
                "authority_b": p.authority[p.fact_b].authority,
                "margin": p.margin,
                "outcome": arbitration_label(p) if not p.skipped else "skipped",
                "suppressed": p.suppressed or "",
                "decision": p.decision or "",
                "skipped": p.skipped,
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            "fact_a",
            "fact_b",
            "patterns",
            "similarity",
            "authority_a",
            "authority_b",
            "margin",
            "outcome",
            "suppressed",
            "decision",
            "skipped",
        ],
    )


def audit_event_for(result: Any, pair: ConflictPair) -> Any:
    """The run's ``CONTRADICTION_RESOLVED`` (or ``CONTRADICTION_DISMISSED``) event of ``pair``, or None."""
    for ev in result.resolution.audit:
        if ev.event in (EVENT_RESOLVED, EVENT_DISMISSED) and (ev.data.get("fact_a"), ev.data.get("fact_b")) == (
            pair.fact_a,
            pair.fact_b,
        ):
            return ev
    return None


def note_in_envelope(result: Any, pair: ConflictPair) -> str | None:
    """The NOTE block of a tied pair exactly as the envelope carries it (either fact first), or None."""
    kb = result.corpus.kb
    fa, fb = kb.get(pair.fact_a), kb.get(pair.fact_b)
    if fa is None or fb is None:
        return None
    for note in (note_block(fa.content, fb.content), note_block(fb.content, fa.content)):
        if note in result.envelope.notes and note in result.envelope.text:
            return note
    return None


def operator_effects_frame(result: Any, ds: Any, base_kb: Any) -> pd.DataFrame:
    """Operator statuses in force for facts of this CKF, and what they did to this run."""
    in_env = {pf.fact_id for pf in result.envelope.order}
    scored = {f.fact_id for f in result.outcomes}
    rows = []
    for fid, status in sorted(ds.statuses.items()):
        f = base_kb.get(fid)
        if f is None:
            continue
        d = ds.status_decisions.get(fid)
        effect = {
            "QUARANTINED": "never retrieved",
            "DELETED": "never retrieved",
            "STALE": "recency factor = stale_floor",
            "ACTIVE": "retrievable, CKF status overridden",
        }[status]
        rows.append(
            {
                "fact_id": fid,
                "status in CKF": f.status,
                "operator status": status,
                "effect": effect,
                "scored in this run": fid in scored,
                "in envelope": fid in in_env,
                "by": d.operator if d is not None else "",
                "at": d.decided_at if d is not None else "",
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            "fact_id",
            "status in CKF",
            "operator status",
            "effect",
            "scored in this run",
            "in envelope",
            "by",
            "at",
        ],
    )


def envelope_change(before: Any, after: Any) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(facts that left the envelope, facts that entered it) from run ``before`` to run ``after``,
    each in the packed order of the run that holds them."""
    b = [pf.fact_id for pf in before.envelope.order]
    a = [pf.fact_id for pf in after.envelope.order]
    return tuple(f for f in b if f not in set(a)), tuple(f for f in a if f not in set(b))


def effect_frame(before: Any, after: Any) -> pd.DataFrame:
    """The run without the operators' decisions next to the run with them (what they changed)."""

    def summary(r: Any) -> dict[str, str]:
        res = r.resolution
        dismissed = sum(1 for p in res.pairs if p.decision == "dismiss")
        return {
            headers.CONFLICTS: str(r.headers.get(headers.CONFLICTS, "")),
            "conflict pairs (arbitrated / tied / dismissed)": f"{res.detected} / {res.unresolved} / {dismissed}",
            "suppressed facts": ", ".join(r.corpus.kb.facts[int(i)].fact_id for i in res.suppressed) or "-",
            "NOTE blocks in the envelope": str(len(r.envelope.notes)),
            "facts in the envelope": str(len(r.envelope.order)),
        }

    sb, sa = summary(before), summary(after)
    rows = [{"": k, "without operator decisions": sb[k], "with them (this run)": sa[k]} for k in sb]
    return pd.DataFrame(rows, columns=["", "without operator decisions", "with them (this run)"])


def history_frame(decisions: Sequence[Any]) -> pd.DataFrame:
    """Audit log rows (oldest first): id, when, who, kind, winner, target, status, note."""
    rows = [
        {
            "id": d.id,
            "decided_at": d.decided_at,
            "operator": d.operator,
            "kind": d.kind,
            "winner": d.winner or "",
            "target_fact": d.target_fact or "",
            "new_status": d.new_status or "",
            "note": d.note,
            "pair": d.pair_key,
        }
        for d in decisions
    ]
    return pd.DataFrame(
        rows, columns=["id", "decided_at", "operator", "kind", "winner", "target_fact", "new_status", "note", "pair"]
    )


def quality_frame(quality: DetectorQuality) -> pd.DataFrame:
    """Precision of the detector per pattern, as the operators' decisions judge it."""
    return pd.DataFrame(
        [
            {
                "pattern": q.pattern,
                "confirmed": q.confirmed,
                "dismissed": q.dismissed,
                "labelled": q.labelled,
                "precision": "-" if q.precision is None else f"{q.precision:.2f}",
            }
            for q in quality.per_pattern
        ]
    )


def overruled_frame(quality: DetectorQuality, kb: KnowledgeBase) -> pd.DataFrame:
    """The pairs operators dismissed or overrode, with both texts (shown as plain text cells)."""
    rows = []
    for p in quality.overruled:
        fa, fb = kb.get(p.fact_a), kb.get(p.fact_b)
        rows.append(
            {
                "fact_a": p.fact_a,
                "fact_b": p.fact_b,
                "decision": "dismissed" if p.kind == "dismiss" else f"override: {p.winner} wins",
                "patterns": ", ".join(p.patterns) or "(none today)",
                "text_a": fa.content if fa else "",
                "text_b": fb.content if fb else "",
                "operator": p.operator,
                "note": p.note,
            }
        )
    return pd.DataFrame(
        rows, columns=["fact_a", "fact_b", "decision", "patterns", "text_a", "text_b", "operator", "note"]
    )


# ---- the crprotocol SDK's supersessions (docs/decisions/sdk-snapshots.md) -----------------------
#: the queue's SDK column text by verdict (crp_core.analysis.sdk_agreement)
SDK_LABELS = {"agrees": "SDK: agrees", "disagrees": "SDK: disagrees", "silent": "SDK silent"}


def sdk_agreement_of(scan: Any, kb: KnowledgeBase, config: Any) -> Any:
    """The agreement of the scan's pairs with the SDK's ``superseded_by`` (independent and as loaded, at the
    scan's time and with its ``config``); None for a CKF without SDK data."""
    from crp_core.analysis.sdk_agreement import has_sdk_data, sdk_agreement

    return sdk_agreement(scan.pairs, kb, config, scan.now) if has_sdk_data(kb) else None


def sdk_label(rec: Any) -> str:
    """The queue cell: the independent verdict, and the as-loaded one when it differs."""
    label = SDK_LABELS[rec.independent.verdict]
    if rec.as_loaded.verdict != rec.independent.verdict:
        label += f" (as loaded: {rec.as_loaded.verdict})"
    return label


def with_sdk_column(frame: pd.DataFrame, agreement: Any) -> pd.DataFrame:
    """The queue with an ``sdk`` column (:func:`sdk_label`) when the CKF came from an SDK snapshot."""
    if agreement is None:
        return frame
    out = frame.copy()
    labels = []
    for a, b in zip(frame["fact_a"], frame["fact_b"]):
        rec = agreement.of(a, b)
        labels.append(sdk_label(rec) if rec is not None else "")
    out["sdk"] = labels
    return out


def sdk_summary(agreement: Any) -> str:
    """One line: the independent counts, the as-loaded ones, and the unpaired supersessions."""
    return (
        f"SDK supersessions vs SPEC-027 on its own (the SDK's STALE read as ACTIVE): "
        f"{agreement.count('agrees')} agree · {agreement.count('disagrees')} disagree · "
        f"{agreement.count('silent')} SDK silent — as loaded (STALE in force, stale-floor recency): "
        f"{agreement.count('agrees', as_loaded=True)} agree · {agreement.count('disagrees', as_loaded=True)} "
        f"disagree · {len(agreement.unpaired)} SDK supersession(s) in no conflict pair"
    )


def _preferred(j: Any) -> str:
    if j.winner is not None:
        return f"prefers {j.winner}"
    return "dismissed by an operator" if j.reason.startswith("an operator dismissed") else "a tie (both kept)"


def sdk_verdict_lines(rec: Any) -> tuple[str, str]:
    """The selected pair's two judgements in words (plain text; the page escapes them):
    ``SPEC-027 on its own: prefers X — SDK superseded Y: disagrees (...)`` and the as-loaded line."""
    a, b = rec.authority_a, rec.authority_b
    if rec.sdk_superseded is not None:
        by = b.fact_id if rec.sdk_superseded == a.fact_id else a.fact_id
        sdk = f"SDK superseded {rec.sdk_superseded} by {by}"
    else:
        sdk = "SDK superseded neither fact by the other"
    ind = rec.independent
    why = (
        f" ({ind.reason})" if ind.verdict == "silent" and rec.sdk_superseded is None and "outside" in ind.reason else ""
    )
    own = (
        f"SPEC-027 on its own ({a.fact_id} {a.authority:.4f} vs {b.fact_id} {b.authority:.4f}"
        + (f"; {', '.join(rec.neutralised)} read as ACTIVE" if rec.neutralised else "")
        + f"): {_preferred(ind)} — {sdk}: {ind.verdict}{why}"
    )
    loaded = (
        f"As loaded (the SDK's STALE in force, operator decisions applied): {_preferred(rec.as_loaded)} — "
        f"{sdk}: {rec.as_loaded.verdict}"
    )
    return own, loaded


def sdk_authority_frame(rec: Any) -> pd.DataFrame:
    """The independent arbitration's SPEC-027 §2.3 components, one row per fact of the pair."""
    rows = [
        {
            "fact_id": x.fact_id,
            "source_type": x.source_type,
            "source_authority": x.source_authority,
            "recency_factor": x.recency_factor,
            "importance_weight": x.importance_weight,
            "authority": x.authority,
            "status read as": "ACTIVE (the SDK's STALE neutralised)" if x.fact_id in rec.neutralised else "as loaded",
        }
        for x in (rec.authority_a, rec.authority_b)
    ]
    return pd.DataFrame(rows)
