"""The self-contained HTML report of the before / after SPEC-027 view, for stakeholders.

``build_html_report(before_after, figures)`` is a pure function of a
:class:`crp_core.analysis.baseline.BeforeAfter` record and plotly figures: one HTML string, no external
resource (plotly.js is embedded inline once, with the first figure; CSS is inline), so the file opens
offline. Every text from the CKF or the scenario is HTML-escaped.
"""
from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Protocol

from crp_core.analysis.compare import fmt_value

if TYPE_CHECKING:
    from crp_core.analysis.baseline import BeforeAfter, SideNumbers
    from crp_core.model import KnowledgeBase


class HTMLFigure(Protocol):
    """What the report needs from a figure (a plotly ``Figure``)."""

    def to_html(self, *, include_plotlyjs: bool, full_html: bool, config: Mapping[str, bool]) -> str: ...


CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px auto;max-width:1280px;color:#222;
padding:0 16px}
h1{font-size:1.6em;margin-bottom:4px}\
h2{font-size:1.25em;margin-top:28px;border-bottom:1px solid #ddd;padding-bottom:4px}
.meta{color:#555;font-size:.9em}
table{border-collapse:collapse;margin:8px 0;font-size:.9em}
th,td{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f4f6f8}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.better{color:#1b7f3b;font-weight:600}.worse{color:#b00020;font-weight:600}
.cols{display:grid;grid-template-columns:1fr 1fr;gap:16px}
.side h3{margin:6px 0}
.flag{display:inline-block;border-radius:4px;padding:0 5px;font-size:.75em;color:#fff;margin-right:3px}
.stale{background:#a15c00}.pair{background:#b00020}.dup{background:#7b4fb3}.only{background:#1f5fa8}
.fig{margin:8px 0 16px 0}
code{background:#f4f6f8;padding:0 3px;border-radius:3px}
.small{font-size:.85em;color:#555}
"""


def esc(text: object) -> str:
    return html.escape("" if text is None else str(text), quote=True)


def _numbers_table(ba: BeforeAfter) -> str:
    rows = []
    for r in ba.rows():
        b, a = r["SPEC-024 only"], r["SPEC-027"]
        cls = ""
        if isinstance(b, int) and isinstance(a, int) and r["measure"] not in ("facts in the envelope", "tokens used"):
            cls = "better" if a < b else ("worse" if a > b else "")
        rows.append(f"<tr><td>{esc(r['measure'])}</td><td class='num'>{esc(b)}</td>"
                    f"<td class='num {cls}'>{esc(a)}</td></tr>")
    rows.append(f"<tr><td>envelope overlap (Jaccard)</td><td class='num' colspan='2'>{ba.overlap:.2f}</td></tr>")
    return ("<table><tr><th>measure</th><th>SPEC-024 only</th><th>SPEC-027</th></tr>" + "".join(rows)
            + "</table>")


def _envelope_table(ba: BeforeAfter, side: SideNumbers, other_env: Sequence[str], kb: KnowledgeBase) -> str:
    in_pair = {f for p in side.contradictory_pairs for f in p}
    dups = set(side.duplicate_facts)
    stale = set(side.stale_in_envelope)
    other = set(other_env)
    rows = []
    for i, fid in enumerate(side.envelope):
        f = kb.get(fid)
        flags = []
        if fid in stale:
            flags.append(f"<span class='flag stale'>stale {ba.spec027_recency.get(fid, 1.0):.2f}</span>")
        if fid in in_pair:
            flags.append("<span class='flag pair'>contradiction</span>")
        if fid in dups:
            flags.append("<span class='flag dup'>fan-out duplicate</span>")
        if fid not in other:
            flags.append("<span class='flag only'>only here</span>")
        content = f.content if f is not None else ""
        meta = f"{f.source_type} · {f.status}" if f is not None else ""
        rows.append(f"<tr><td class='num'>{i + 1}</td><td><code>{esc(fid)}</code><br><span class='small'>"
                    f"{esc(meta)}</span><br>{''.join(flags)}</td><td>{esc(content)}</td></tr>")
    if not rows:
        rows.append("<tr><td colspan='3'>(empty envelope)</td></tr>")
    return "<table><tr><th>#</th><th>fact</th><th>content</th></tr>" + "".join(rows) + "</table>"


def _pairs_list(pairs: Sequence[tuple[str, str]], kb: KnowledgeBase) -> str:
    if not pairs:
        return "<p>None.</p>"
    items = []
    for a, b in pairs:
        fa, fb = kb.get(a), kb.get(b)
        items.append(f"<li><code>{esc(a)}</code>: {esc(fa.content if fa else '')}<br>"
                     f"<code>{esc(b)}</code>: {esc(fb.content if fb else '')}</li>")
    return "<ul>" + "".join(items) + "</ul>"


def _headers_table(ba: BeforeAfter) -> str:
    names = list(dict.fromkeys(list(ba.before.headers) + list(ba.after.headers)))
    rows = "".join(f"<tr><td><code>{esc(n)}</code></td><td>{esc(ba.before.headers.get(n, ''))}</td>"
                   f"<td>{esc(ba.after.headers.get(n, ''))}</td></tr>" for n in names)
    return "<table><tr><th>header</th><th>SPEC-024 only</th><th>SPEC-027</th></tr>" + rows + "</table>"


def figures_html(figures: Sequence[HTMLFigure]) -> list[str]:
    """Each figure as an HTML fragment; plotly.js inline with the first one only."""
    out = []
    for i, fig in enumerate(figures):
        out.append(fig.to_html(include_plotlyjs=(i == 0), full_html=False,
                               config={"displaylogo": False, "responsive": True}))
    return out


def build_html_report(ba: BeforeAfter, figures: Sequence[HTMLFigure] = (), *, title: str = "Before / after SPEC-027",
                      ckf_label: str = "", scenario_name: str = "", generated_at: datetime | None = None) -> str:
    """One self-contained HTML document of the before / after view (see the module docstring)."""
    full = ba.full
    kb = full.corpus.kb
    scen = full.scenario
    when = (generated_at or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC")
    cfg_diff = type(full.config)().diff(full.config)
    cfg = ", ".join(f"<code>{esc(k)}</code> = {esc(fmt_value(v))}" for k, (_d, v) in cfg_diff.items()) or "defaults"
    query = getattr(scen, "query", "") if scen is not None else ""
    scen_label = esc(scenario_name or getattr(scen, "name", ""))
    figs = "".join(f"<div class='fig'>{f}</div>" for f in figures_html(figures))
    fan = (f"fan-out width {ba.fanout_width}" if ba.before.fanout_duplicates is not None
           else "no fan-out in this scenario (width 0 or 1, or an empty ResidualSet)")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><style>{CSS}</style></head>
<body>
<h1>{esc(title)}</h1>
<p class="meta">CKF <b>{esc(ckf_label or kb.source)}</b> ({len(kb)} facts) · scenario <b>{scen_label}</b>
· now {esc(full.now.isoformat())} · {esc(fan)} · generated {esc(when)} by crp-inspect</p>
<p><b>Query:</b> {esc(query)}</p>
<p class="small">Configuration: {cfg}. <b>SPEC-024 only</b>: no recency factor, no contradiction resolution
(conflicting pairs detected but both facts handed to the model), naive fan-out (shared Coverage Set, every
branch pulled by the whole ResidualSet). <b>SPEC-027</b>: the full pipeline (recency weighting, authority
resolution, partitioned fan-out).</p>
<h2>The numbers</h2>
{_numbers_table(ba)}
<p class="small">Stale = SPEC-027 recency factor below 1.0 (past the fresh threshold of its TTL) or status STALE.
Contradictory pairs = value-conflicting pairs (cosine &gt; {full.config.contradiction_similarity:g}) with both facts in
the envelope; on the SPEC-027 side only tied pairs remain, each with its NOTE block.</p>
<h2>Plots</h2>
{figs or '<p>(no plots)</p>'}
<h2>Envelopes side by side</h2>
<div class="cols">
<div class="side"><h3>SPEC-024 only ({len(ba.before.envelope)} facts, {ba.before.tokens_used} tokens)</h3>
{_envelope_table(ba, ba.before, ba.after.envelope, kb)}</div>
<div class="side"><h3>SPEC-027 ({len(ba.after.envelope)} facts, {ba.after.tokens_used} tokens)</h3>
{_envelope_table(ba, ba.after, ba.before.envelope, kb)}</div>
</div>
<h2>Contradictory pairs handed to the model</h2>
<div class="cols"><div><h3>SPEC-024 only</h3>{_pairs_list(ba.before.contradictory_pairs, kb)}</div>
<div><h3>SPEC-027</h3>{_pairs_list(ba.after.contradictory_pairs, kb)}</div></div>
<h2>Response headers</h2>
{_headers_table(ba)}
</body></html>
"""
