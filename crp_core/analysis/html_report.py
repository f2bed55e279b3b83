"""The self-contained HTML report of the before / after SPEC-027 view, for stakeholders.

``build_html_report(before_after)`` is a pure function of a
:class:`crp_core.analysis.baseline.BeforeAfter` record: one HTML string written for a reader who is not
an engineer (a headline per SPEC-027 fix first, the relevance gate's note when the gate left anchor
places empty, then what was removed and why, where the token change comes from, the numbers and the
detail). It fetches nothing: CSS inline, and its two charts are inline SVG drawn here (no script at all),
so the file is small (well under 1 MB) and opens offline. Every text from the CKF or the scenario is
HTML-escaped, and so is the gate note. ``terms`` (term -> one-line definition) adds a short
glossary of the words the report uses.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from crp_core.analysis.compare import fmt_value
from crp_core.records import FANOUT_REACHING
from crp_core.relevance_gate import gate_note
from crp_core.support.text import counted

if TYPE_CHECKING:
    from crp_core.analysis.baseline import BeforeAfter, SideNumbers
    from crp_core.analysis.envelope_changes import EnvelopeChange
    from crp_core.analysis.report_inputs import ReportInputs
    from crp_core.model import KnowledgeBase

#: the report must stay below this size (tests hold it to it)
MAX_REPORT_BYTES = 1_000_000

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px auto;max-width:1180px;color:#222;
padding:0 16px;line-height:1.45}
h1{font-size:1.7em;margin-bottom:4px}
h2{font-size:1.25em;margin-top:30px;border-bottom:1px solid #ddd;padding-bottom:4px}
.meta{color:#555;font-size:.9em}
table{border-collapse:collapse;margin:8px 0;font-size:.92em;width:100%}
th,td{border:1px solid #ddd;padding:5px 8px;text-align:left;vertical-align:top}
th{background:#f4f6f8}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.better{color:#1b7f3b;font-weight:600}.worse{color:#b00020;font-weight:600}
.cols{display:grid;grid-template-columns:1fr 1fr;gap:16px}
.headline{display:grid;grid-template-columns:repeat(3,1fr);gap:12px}
.fix{border:1px solid #d5dbe1;border-left:5px solid #1f5fa8;border-radius:6px;padding:8px 12px;background:#f8fafc}
.fix h3{margin:0 0 4px 0;font-size:1em}
.gate{border:1px solid #e0c48a;border-left:5px solid #a15c00;border-radius:6px;padding:8px 12px;background:#fdf8ee;
margin:14px 0}
.gate h3{margin:0 0 4px 0;font-size:1em}
.flag{display:inline-block;border-radius:4px;padding:0 5px;font-size:.75em;color:#fff;margin:1px 3px 1px 0}
.expired{background:#b00020}.ageing{background:#a15c00}.pair{background:#6a1b9a}.dup{background:#7b4fb3}
.only{background:#1f5fa8}
.kind{font-weight:600;white-space:nowrap}
code{background:#f4f6f8;padding:0 3px;border-radius:3px;white-space:nowrap}
pre{background:#f4f6f8;padding:8px 10px;border-radius:4px;white-space:pre-wrap;overflow-wrap:anywhere}
pre code{white-space:inherit;padding:0}
.small{font-size:.85em;color:#555}
svg text{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif}
details{margin:8px 0}
dl.terms dt{font-weight:600;margin-top:6px}dl.terms dd{margin:0 0 0 16px}
@media (max-width:900px){.cols,.headline{grid-template-columns:1fr}}
"""
SIDE_COLOURS = {"SPEC-024 only": "#c0504d", "SPEC-027": "#2e8b57"}  # bad / good
STATE_COLOURS = {"fresh": "#2e8b57", "ageing": "#e0a000", "expired": "#b00020"}


def esc(text: object) -> str:
    return html.escape("" if text is None else str(text), quote=True)


def _content(kb: KnowledgeBase, fid: str) -> str:
    f = kb.get(fid)
    return f.content if f is not None else ""


# ---- charts: inline SVG --------------------------------------------------------------------------
def bar_chart_svg(
    title: str,
    categories: Sequence[str],
    series: Sequence[tuple[str, str, Sequence[float]]],
    *,
    stacked: bool = False,
    width: int = 540,
    height: int = 280,
) -> str:
    """A bar chart as an inline ``<svg>``: ``series`` = (name, colour, one value per category); grouped
    bars, or ``stacked``. Values are written on the bars (a grouped zero too, on the axis; a stacked segment
    only when tall enough to hold it); every label is escaped."""
    left, right, top, bottom = 40, 10, 34, 58
    plot_w, plot_h = width - left - right, height - top - bottom
    if stacked:
        top_value = max([sum(s[2][i] for s in series) for i in range(len(categories))] + [1])
    else:
        top_value = max([v for s in series for v in s[2]] + [1])
    scale = plot_h / (top_value * 1.15)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" aria-label="{esc(title)}">',
        f"<title>{esc(title)}</title>",
        f'<text x="{left}" y="18" font-size="14" font-weight="600" fill="#222">{esc(title)}</text>',
        f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" stroke="#999"/>',
    ]
    step = 1 if top_value <= 10 else max(1, round(top_value / 5))
    tick = 0
    while tick <= top_value * 1.15:
        y = top + plot_h - tick * scale
        out.append(
            f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}" stroke="#eee"/>'
            f'<text x="{left - 6}" y="{y + 4:.1f}" font-size="11" text-anchor="end" fill="#555">{tick}</text>'
        )
        tick += step
    group_w = plot_w / max(len(categories), 1)
    n = 1 if stacked else max(len(series), 1)
    bar_w = min(48.0, group_w * 0.7 / n)
    for ci, cat in enumerate(categories):
        x0 = left + ci * group_w + (group_w - bar_w * n) / 2
        base = 0.0
        for si, (name, colour, values) in enumerate(series):
            v = float(values[ci])
            h = v * scale
            x = x0 if stacked else x0 + si * bar_w
            y = top + plot_h - (base * scale if stacked else 0) - h
            out.append(
                f'<rect class="bar" data-series="{esc(name)}" data-category="{esc(cat)}" data-value="{v:g}" '
                f'x="{x:.1f}" y="{y:.1f}" width="{bar_w:.1f}" height="{max(h, 0):.1f}" fill="{colour}">'
                f"<title>{esc(name)}: {v:g}</title></rect>"
            )
            if not stacked or h >= 14:  # a grouped 0 is written on the axis: a bar too low to see, not one missing
                ty = y + h / 2 + 4 if stacked else y - 4
                fill = "#fff" if stacked else "#222"
                out.append(
                    f'<text x="{x + bar_w / 2:.1f}" y="{ty:.1f}" font-size="11" text-anchor="middle" '
                    f'fill="{fill}">{v:g}</text>'
                )
            base += v
        lines = cat.split("\n")
        for li, line in enumerate(lines):
            out.append(
                f'<text x="{left + ci * group_w + group_w / 2:.1f}" y="{top + plot_h + 16 + li * 13}" '
                f'font-size="11" text-anchor="middle" fill="#333">{esc(line)}</text>'
            )
    lx = left
    for name, colour, _values in series:
        out.append(
            f'<rect x="{lx}" y="{height - 14}" width="10" height="10" fill="{colour}"/>'
            f'<text x="{lx + 14}" y="{height - 5}" font-size="11" fill="#333">{esc(name)}</text>'
        )
        lx += 24 + 7 * len(name)
    out.append("</svg>")
    return "".join(out)


def charts_svg(ba: BeforeAfter) -> list[str]:
    """The report's two charts: what reaches the model (grouped), and each envelope by recency state."""
    b, a = ba.before, ba.after
    cats = ["expired facts", "ageing facts", "contradictory\npairs", "fan-out\nduplicates"]
    values = {s.label: list(s.reaching_model) for s in (b, a)}
    what = bar_chart_svg(
        "What reaches the model" + ("" if b.fanout_duplicates is not None else " (no fan-out)"),
        cats,
        [(k, SIDE_COLOURS[k], v) for k, v in values.items()],
    )
    states = ("fresh", "ageing", "expired")
    mix = {st: [sum(1 for f in s.envelope if ba.recency_state(f) == st) for s in (b, a)] for st in states}
    recency = bar_chart_svg(
        "The envelopes' facts by age",
        [b.label, a.label],
        [(st, STATE_COLOURS[st], mix[st]) for st in states],
        stacked=True,
    )
    return [what, recency]


# ---- sections ------------------------------------------------------------------------------------
def _headline(ba: BeforeAfter) -> str:
    cards = "".join(f"<div class='fix'><h3>{esc(fix)}</h3><p>{esc(text)}</p></div>" for fix, text in ba.headlines())
    return f"<div class='headline'>{cards}</div>"


def _gate_note_box(ba: BeforeAfter) -> str:
    """The relevance gate's note on the SPEC-027 run (docs/decisions/gate-note.md), or "" when it has none.
    The gate (SPEC-024 §2.6) is the same on both sides: the relevances and the facts it passes do not change."""
    note = gate_note(ba.full)
    if note is None:
        return ""
    return (
        "<div class='gate'><h3>The relevance gate held facts back</h3>"
        f"<p>{esc(note.message)}</p><p class='small'>The gate is the same on both sides; the counts are the "
        "SPEC-027 run's.</p></div>"
    )


def _numbers_table(ba: BeforeAfter) -> str:
    rows = []
    neutral = ("facts in the envelope", "tokens used", "of which removed at fan-in")
    for r in ba.rows():
        b, a = r["SPEC-024 only"], r["SPEC-027"]
        cls = ""
        if isinstance(b, int) and isinstance(a, int) and r["measure"] not in neutral:
            cls = "better" if a < b else ("worse" if a > b else "")
        rows.append(
            f"<tr><td>{esc(r['measure'])}</td><td class='num'>{esc(b)}</td><td class='num {cls}'>{esc(a)}</td></tr>"
        )
    rows.append(f"<tr><td>envelope overlap (Jaccard)</td><td class='num' colspan='2'>{ba.overlap:.2f}</td></tr>")
    return "<table><tr><th>measure</th><th>SPEC-024 only</th><th>SPEC-027</th></tr>" + "".join(rows) + "</table>"


def _changes_table(changes: Sequence[EnvelopeChange], empty: str) -> str:
    if not changes:
        return f"<p>{esc(empty)}</p>"
    rows = "".join(
        f"<tr><td><code>{esc(c.fact_id)}</code></td><td>{esc(c.content)}</td>"
        f"<td><span class='kind'>{esc(c.kind)}</span><br>{esc(c.reason)}</td>"
        f"<td class='num'>{c.tokens}</td></tr>"
        for c in changes
    )
    return "<table><tr><th>fact</th><th>text</th><th>why</th><th>tokens</th></tr>" + rows + "</table>"


def _tokens_section(ba: BeforeAfter) -> str:
    t = ba.tokens
    if t is None:
        return "<p>(no token figures)</p>"
    rows = [
        ("facts only the SPEC-024-only envelope packs (removed)", t.n_removed, -t.removed),
        ("facts only the SPEC-027 envelope packs (added)", t.n_added, t.added),
        (
            "NOTE blocks (tied conflicts explained to the model)",
            t.n_notes_after - t.n_notes_before,
            t.notes_after - t.notes_before,
        ),
        ("facts both pack", t.n_kept, t.kept_after - t.kept_before),
    ]
    body = "".join(f"<tr><td>{esc(w)}</td><td class='num'>{n}</td><td class='num'>{d:+d}</td></tr>" for w, n, d in rows)
    return (
        f"<p>{esc(t.sentence())}</p><table><tr><th>part</th><th>count</th><th>token change</th></tr>{body}"
        f"<tr><th>total</th><th></th><th class='num'>{t.delta:+d} ({t.before} -&gt; {t.after})</th></tr></table>"
    )


def _envelope_table(ba: BeforeAfter, side: SideNumbers, other_env: Sequence[str], kb: KnowledgeBase) -> str:
    in_pair = {f for p in side.contradictory_pairs for f in p}
    dups = set(side.packed_duplicate_facts)
    other = set(other_env)
    rows = []
    for i, fid in enumerate(side.envelope):
        f = kb.get(fid)
        flags = []
        state = ba.recency_state(fid)
        if state != "fresh":
            flags.append(f"<span class='flag {state}'>{state} {ba.spec027_recency.get(fid, 1.0):.2f}</span>")
        if fid in in_pair:
            flags.append("<span class='flag pair'>contradiction</span>")
        if fid in dups:
            flags.append("<span class='flag dup'>fan-out duplicate</span>")
        if fid not in other:
            flags.append("<span class='flag only'>only here</span>")
        meta = f"{f.source_type} · {f.status}" if f is not None else ""
        rows.append(
            f"<tr><td class='num'>{i + 1}</td><td><code>{esc(fid)}</code><br><span class='small'>"
            f"{esc(meta)}</span><br>{''.join(flags)}</td><td>{esc(f.content if f else '')}</td></tr>"
        )
    if not rows:
        rows.append("<tr><td colspan='3'>(empty envelope)</td></tr>")
    return "<table><tr><th>#</th><th>fact</th><th>text</th></tr>" + "".join(rows) + "</table>"


def _pairs_list(pairs: Sequence[tuple[str, str]], noted: Sequence[tuple[str, str]], kb: KnowledgeBase) -> str:
    if not pairs:
        return "<p>None.</p>"
    flagged = set(noted)
    items = []
    for a, b in pairs:
        note = " <span class='small'>(the model is told, with a NOTE block)</span>" if (a, b) in flagged else ""
        items.append(
            f"<li><code>{esc(a)}</code>: {esc(_content(kb, a))}<br>"
            f"<code>{esc(b)}</code>: {esc(_content(kb, b))}{note}</li>"
        )
    return "<ul>" + "".join(items) + "</ul>"


def _duplicates_list(side: SideNumbers, kb: KnowledgeBase) -> str:
    if side.fanout_duplicates is None:
        return "<p>No fan-out.</p>"
    if not side.duplicates:
        return "<p>None.</p>"
    packed = set(side.envelope)
    items = []
    for d in side.duplicates:
        branches = ", ".join(str(b) for b in d.branches)
        what = (
            "chosen by branches"
            if len(d.fact_ids) == 1
            else f"near-duplicates by cosine ({d.similarity:.3f}), branches"
        )
        facts = "<br>".join(
            f"<code>{esc(f)}</code>: {esc(_content(kb, f))}"
            + (" <span class='small'>(in the envelope)</span>" if f in packed else "")
            for f in d.fact_ids
        )
        items.append(f"<li>{facts}<br><span class='small'>{esc(what)} {esc(branches)}</span></li>")
    return "<ul>" + "".join(items) + "</ul>"


def _dup_label(side: SideNumbers) -> str:
    return "no fan-out" if side.fanout_duplicates is None else str(side.fanout_duplicates)


def _headers_table(ba: BeforeAfter) -> str:
    names = list(dict.fromkeys(list(ba.before.headers) + list(ba.after.headers)))
    rows = "".join(
        f"<tr><td><code>{esc(n)}</code></td><td>{esc(ba.before.headers.get(n, ''))}</td>"
        f"<td>{esc(ba.after.headers.get(n, ''))}</td></tr>"
        for n in names
    )
    return "<table><tr><th>header</th><th>SPEC-024 only</th><th>SPEC-027</th></tr>" + rows + "</table>"


def _terms(terms: Mapping[str, str]) -> str:
    if not terms:
        return ""
    items = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in terms.items())
    return f"<h2>Words used in this report</h2><dl class='terms'>{items}</dl>"


def _decisions_section(inputs: ReportInputs | None, changes: Sequence[EnvelopeChange]) -> str:
    """The operator decisions in force, as people's decisions (who, when, which pair, what), apart from
    what Fact Authority Resolution decided; those that changed the envelope(s) of this report marked."""
    if inputs is None or not inputs.decisions_in_force:
        return ""
    changed = {(c.fact_id, c.related) for c in changes if c.kind == "operator decision"}
    rows = []
    for d in inputs.decisions:
        hit = any({a, b} == {d.fact_a, d.fact_b} for a, b in changed)
        pair = f"<code>{esc(d.fact_a)}</code> | <code>{esc(d.fact_b)}</code>"
        rows.append(
            f"<tr><td class='num'>#{esc(d.decision_id)}</td><td>{pair}</td><td>{esc(d.what)}"
            f"{'<br><b>changed this context</b>' if hit else ''}</td>"
            f"<td>{esc(d.operator)} ({esc(d.role)}, {esc(d.origin)})</td><td>{esc(d.decided_at)}</td>"
            f"<td>{esc(d.note)}</td></tr>"
        )
    more = inputs.decisions_in_force - len(inputs.decisions)
    extra = f"<p class='small'>…and {more} more decisions in force, not listed.</p>" if more > 0 else ""
    return (
        "<h2>Decisions taken by people</h2><p>These pairs were decided by operators in the triage log "
        f"({esc(inputs.decisions_source)}), not by the algorithm. A fact such a decision left out is said as "
        "<i>operator decision</i> above, never as a Fact Authority Resolution loser.</p>"
        "<table><tr><th>entry</th><th>pair</th><th>decision</th><th>who</th><th>when (UTC)</th><th>note</th></tr>"
        + "".join(rows)
        + f"</table>{extra}"
    )


def _own_config(rows: tuple[tuple[str, str, str], ...]) -> str:
    """A scenario's own config keys over the report's configuration ("none" when it sets none)."""
    if not rows:
        return "none"
    return "; ".join(f"<code>{esc(k)}</code> {esc(d)} &rarr; {esc(v)}" for k, d, v in rows)


def _inputs_section(inputs: ReportInputs | None) -> str:
    """What the report ran on and the command that writes it again."""
    if inputs is None:
        return ""
    scen = "".join(
        f"<tr><td>{esc(s.name)}</td><td>{esc(s.query)}</td><td>{esc(s.now)}</td><td class='num'>{s.fanout_width}</td>"
        f"<td><code>{esc(s.file_digest or 'none: not read from a file')}</code></td>"
        f"<td>{_own_config(s.own_config)}</td></tr>"
        for s in inputs.scenarios
    )
    cfg = "".join(
        f"<tr><td><code>{esc(k)}</code></td><td>{esc(d)}</td><td>{esc(v)}</td></tr>"
        for k, d, v in inputs.config_changes
    )
    own = " (a scenario's own keys are in its row above)" if any(s.own_config for s in inputs.scenarios) else ""
    cfg_table = (
        f"<table><tr><th>key</th><th>default</th><th>this report</th></tr>{cfg}</table>"
        if cfg
        else f"<p>The report's configuration (<code>--config</code>, <code>--set</code>) keeps every key at its "
        f"default{own}.</p>"
    )
    command = (
        f"<p>Written again, from the same files, by:</p><pre><code>{esc(inputs.command)}</code></pre>"
        if inputs.command
        else ""
    )
    decided = (
        f"{counted(inputs.decisions_in_force, 'operator decision')} in force from {esc(inputs.decisions_source)}"
        if inputs.decisions_in_force
        else "no operator decision applied"
    )
    return (
        "<h2>What this report ran on</h2>"
        f"<p>CKF <b>{esc(inputs.ckf_label)}</b>, {inputs.ckf_facts} facts, fingerprint "
        f"<code>{esc(inputs.ckf_fingerprint)}</code>; {decided}.</p>"
        "<table><tr><th>scenario</th><th>question</th><th>now</th><th>fan-out width</th>"
        f"<th>file SHA-256</th><th>its own config over the table below</th></tr>{scen}</table>"
        f"<h3>Configuration</h3>{cfg_table}{command}"
    )


def build_html_report(
    ba: BeforeAfter,
    *,
    title: str = "Before / after SPEC-027",
    ckf_label: str = "",
    scenario_name: str = "",
    generated_at: datetime | None = None,
    terms: Mapping[str, str] | None = None,
    inputs: ReportInputs | None = None,
) -> str:
    """One self-contained HTML document of the before / after view (see the module docstring)."""
    full = ba.full
    kb = full.corpus.kb
    scen = full.scenario
    when = (generated_at or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC")
    cfg_diff = type(full.config)().diff(full.config)
    cfg = ", ".join(f"<code>{esc(k)}</code> = {esc(fmt_value(v))}" for k, (_d, v) in cfg_diff.items()) or "defaults"
    query = getattr(scen, "query", "") if scen is not None else ""
    scen_label = esc(scenario_name or getattr(scen, "name", ""))
    charts = "".join(f"<div>{svg}</div>" for svg in charts_svg(ba))
    fan = (
        f"fan-out width {ba.fanout_width}"
        if ba.before.fanout_duplicates is not None
        else "no fan-out in this scenario (width 0 or 1, or an empty ResidualSet)"
    )
    b, a = ba.before, ba.after
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><style>{CSS}</style></head>
<body>
<h1>{esc(title)}</h1>
<p class="meta">CKF <b>{esc(ckf_label or kb.source)}</b> ({len(kb)} facts) · scenario <b>{scen_label}</b>
· now {esc(full.now.isoformat())} · {esc(fan)} · generated {esc(when)} by crp-inspect</p>
<p><b>Question asked:</b> {esc(query)}</p>
<p>The same question was answered twice from the same knowledge base: once with the older retrieval
(<b>SPEC-024 only</b>) and once with the three SPEC-027 fixes. Each fix, in one sentence:</p>
{_headline(ba)}
{_gate_note_box(ba)}
<h2>What SPEC-027 removed from the context, and why</h2>
{_changes_table(ba.removed, "Nothing: every fact the older retrieval packed is still packed.")}
<h2>What SPEC-027 added in their place</h2>
{_changes_table(ba.entered, "Nothing new.")}
<h2>Why the token count changed</h2>
{_tokens_section(ba)}
<h2>The numbers</h2>
{_numbers_table(ba)}
<p class="small">Expired = older than its TTL (time to live) or marked STALE: SPEC-027 weights it at the stale
floor. Ageing = past the fresh part of its TTL but not expired: partly weighted down. Contradictory pairs =
facts giving different values for the same thing, both handed to the model; on the SPEC-027 side only ties
remain, each explained by a NOTE block. Fan-out duplicates = the same fact (or a near-identical one) picked
by two parallel branches.</p>
<div class="cols">{charts}</div>
<h2>Contradictory pairs handed to the model</h2>
<div class="cols"><div><h3>SPEC-024 only</h3>{_pairs_list(b.contradictory_pairs, b.noted_pairs, kb)}</div>
<div><h3>SPEC-027</h3>{_pairs_list(a.contradictory_pairs, a.noted_pairs, kb)}</div></div>
<h2>Fan-out duplicates</h2>
<div class="cols"><div><h3>SPEC-024 only ({esc(_dup_label(b))})</h3>
{_duplicates_list(b, kb)}</div>
<div><h3>SPEC-027 ({esc(_dup_label(a))})</h3>
{_duplicates_list(a, kb)}</div></div>
<h2>The two contexts side by side</h2>
<div class="cols">
<div><h3>SPEC-024 only ({len(b.envelope)} facts, {b.tokens_used} tokens)</h3>
{_envelope_table(ba, b, a.envelope, kb)}</div>
<div><h3>SPEC-027 ({len(a.envelope)} facts, {a.tokens_used} tokens)</h3>
{_envelope_table(ba, a, b.envelope, kb)}</div>
</div>
{_decisions_section(inputs, ba.removed)}
{_terms(terms or {})}
{_inputs_section(inputs)}
<details><summary>For engineers: configuration and response headers</summary>
<p class="small">Configuration: {cfg}. <b>SPEC-024 only</b>: no recency factor, no contradiction resolution
(conflicting pairs detected but both facts handed to the model), naive fan-out (shared Coverage Set, every
branch pulled by the whole ResidualSet). <b>SPEC-027</b>: the full pipeline (recency weighting, authority
resolution, partitioned fan-out).</p>
{_headers_table(ba)}
</details>
</body></html>
"""


# ---- the whole suite -----------------------------------------------------------------------------
def _arrow(b: int | None, a: int | None) -> str:
    """``before → after`` with the after side coloured better / worse (None: no fan-out)."""
    if b is None or a is None:
        return "<td class='num'>no fan-out</td>"
    cls = "better" if a < b else ("worse" if a > b else "")
    return f"<td class='num'>{b} → <span class='{cls}'>{a}</span></td>"


def _short(text: str, limit: int = 160) -> str:
    """``text`` cut at a word before ``limit`` characters, with an ellipsis when cut (the whole question is in
    "What this report ran on")."""
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0].rstrip(" ,;:") + "…"


def _suite_row(name: str, ba: BeforeAfter) -> str:
    b, a = ba.before, ba.after
    query = getattr(ba.full.scenario, "query", "") or ""
    decided = sum(1 for c in ba.removed if c.kind == "operator decision")
    losers = sum(1 for c in ba.removed if c.kind == "conflict loser")
    return (
        f"<tr><td>{esc(name)}</td><td>{esc(_short(query))}</td>"
        + _arrow(len(b.expired_in_envelope), len(a.expired_in_envelope))
        + _arrow(len(b.contradictory_pairs), len(a.contradictory_pairs))
        + _arrow(b.duplicates_reaching_model, a.duplicates_reaching_model)
        + f"<td class='num'>{b.tokens_used} → {a.tokens_used}</td>"
        f"<td class='num'>{losers}</td><td class='num'>{decided}</td></tr>"
    )


def _suite_details(name: str, ba: BeforeAfter) -> str:
    """One scenario of the suite behind a toggle: its headlines, the gate's note (named on the toggle too, so
    a closed toggle still says it), the facts SPEC-027 removed."""
    gate = _gate_note_box(ba)
    flag = " <span class='small'>(the relevance gate held facts back)</span>" if gate else ""
    return (
        f"<details><summary><b>{esc(name)}</b>: {esc(_short(getattr(ba.full.scenario, 'query', '') or ''))}{flag}"
        f"</summary>{_headline(ba)}{gate}<h3>Removed by SPEC-027, and why</h3>"
        f"{_changes_table(ba.removed, 'Nothing: every fact the older retrieval packed is still packed.')}</details>"
    )


def build_suite_html_report(
    entries: Sequence[tuple[str, BeforeAfter]],
    *,
    title: str = "Before / after SPEC-027, every scenario",
    ckf_label: str = "",
    generated_at: datetime | None = None,
    terms: Mapping[str, str] | None = None,
    inputs: ReportInputs | None = None,
) -> str:
    """One self-contained HTML document of the before / after view of every scenario of a suite: one
    chart and one table over the suite, then each scenario's three headlines and removed facts."""
    when = (generated_at or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC")
    n_facts = len(entries[0][1].full.corpus.kb) if entries else 0
    cats = ["expired facts", "ageing facts", "contradictory\npairs", "fan-out\nduplicates"]
    from crp_core.analysis.suite_before_after import SuiteBeforeAfter

    totals = SuiteBeforeAfter(tuple(entries)).totals()
    chart = bar_chart_svg(
        f"What reaches the model, {counted(len(entries), 'scenario')} together",
        cats,
        [(k, SIDE_COLOURS[k], list(v)) for k, v in totals.items()],
        width=720,
    )
    rows = "".join(_suite_row(name, ba) for name, ba in entries)
    details = "".join(_suite_details(name, ba) for name, ba in entries)
    removed = [c for _n, ba in entries for c in ba.removed]
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><style>{CSS}</style></head>
<body>
<h1>{esc(title)}</h1>
<p class="meta">CKF <b>{esc(ckf_label)}</b> ({n_facts} facts) · {counted(len(entries), "scenario")}
· generated {esc(when)} by crp-inspect</p>
<p>Each scenario's question was answered twice from the same knowledge base: once with the older retrieval
(<b>SPEC-024 only</b>) and once with the three SPEC-027 fixes. The chart adds up what reached the model over
every scenario; the table gives each scenario's numbers (before → after).</p>
<div>{chart}</div>
<table><tr><th>scenario</th><th>question</th><th>expired facts</th><th>contradictory pairs</th>
<th>{esc(FANOUT_REACHING)}</th><th>tokens</th><th>losers removed by Fact Authority Resolution</th>
<th>facts left out by operators' decisions</th></tr>{rows}</table>
<h2>Each scenario</h2>
{details}
{_decisions_section(inputs, removed)}
{_terms(terms or {})}
{_inputs_section(inputs)}
</body></html>
"""
