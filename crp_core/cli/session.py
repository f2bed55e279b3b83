"""``crp-inspect session``: what a crprotocol session handed its model, judged by SPEC-027
(docs/reference/sessions.md, docs/reference/cli.md#session).

Reads the session's audit trail (``<session>.audit.jsonl``, streamed) and the knowledge base it ran on
(``--ckf``: an SDK snapshot, the session's closing snapshot, or any CKF), re-checks the trail's hash
chain and anchor, and for every window sets the SDK's packed facts beside SPEC-027's verdict on them;
lists the facts the session wrote back from its model's answers with what they contradict or restate.
``--json`` prints :func:`crp_core.analysis.session_report.session_report_dict`. Exit 1 when the chain is
broken or the anchor differs (a verdict), 2 when an input is refused.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from typing import TYPE_CHECKING

from crp_core.cli.common import TerminalProgress, add_input_args, input_source_map, load_input_ckf, now_arg, visible
from crp_core.config import layered_config
from crp_core.io.timeparse import format_timestamp

if TYPE_CHECKING:
    from crp_core.analysis.session import SessionReport, WindowVerdict, WritebackFact
    from crp_core.cli.common import Subparsers
    from crp_core.io.session import AuditTrail
    from crp_core.records import ConflictPair

#: facts listed per window in the text output's SPEC-027 comparison (the JSON report has them all)
SHOWN = 8


def register(subparsers: Subparsers) -> None:
    p = subparsers.add_parser(
        "session",
        help="check a crprotocol session's audit trail and judge what it packed and wrote back",
        description="Read a crprotocol session audit trail (<session>.audit.jsonl, streamed) with the knowledge "
        "base it ran on: re-check the hash chain and the anchor, set each window's packed facts beside "
        "SPEC-027's verdict (contradictory pairs, superseded, expired and ageing facts, near-duplicates, and "
        "the envelope SPEC-027 would pack for the window's question), and list the facts the session wrote "
        "back from its model's answers. Exit 1 when the chain is broken or the anchor differs.",
    )
    p.add_argument("audit", metavar="AUDIT.jsonl", help="the session's audit trail (the SDK's crp_sessions/ folder)")
    add_input_args(p, scenario=False, now_help="the instant recency is computed at (default: the trail's last entry)")
    p.add_argument(
        "--query",
        metavar="TEXT",
        default=None,
        help="the question of the windows whose trail carries no transcript (the SPEC-027 envelope beside the SDK's)",
    )
    p.add_argument(
        "--before",
        metavar="PATH",
        default=None,
        help="the knowledge base the session started from: its ids absent from --ckf are the session's own facts",
    )
    p.add_argument(
        "--anchor",
        metavar="PATH",
        default=None,
        help="the SDK's anchor file (default: AUDIT.jsonl.anchor.json when it exists)",
    )
    p.add_argument("--json", action="store_true", help="print the machine-readable report (one JSON object)")
    p.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    from crp_core.analysis.session import analyse_session
    from crp_core.analysis.session_report import session_report_dict
    from crp_core.corpus.prepared import prepare_corpus
    from crp_core.io.session import read_audit
    from crp_core.report import dumps

    now = now_arg(args.now)
    config = layered_config(args.config, None, args.set_args)
    trail = read_audit(args.audit, anchor=args.anchor)
    source_map = input_source_map(args)
    kb = load_input_ckf(args.ckf, lenient=args.lenient, max_bytes=config.ckf_max_bytes, source_map=source_map)
    before = None
    if args.before:
        before = load_input_ckf(args.before, lenient=args.lenient, max_bytes=config.ckf_max_bytes, source_map=None)
    shown = TerminalProgress()
    corpus = prepare_corpus(kb, cache_dir=args.cache_dir, config=config, progress=shown, notify=shown.note)
    report = analyse_session(trail, corpus, config, now=now, query=args.query, before=before)
    if args.json:
        sys.stdout.write(dumps(session_report_dict(report, kb_path=args.ckf)) + "\n")
    else:
        _print(report, args.ckf)
    broken = trail.chain.verdict == "broken" or (trail.anchor is not None and trail.anchor.verdict == "differs")
    return 1 if broken else 0


# ---- text output ----------------------------------------------------------------------------------
def _print(r: SessionReport, kb_path: str) -> None:
    out = sys.stdout.write
    _print_chain(r.trail)
    kb = r.kb
    out(
        f"\nknowledge base {visible(kb_path)} ({kb.fmt or 'ckf'}, {len(kb):,} facts); recency at "
        f"{format_timestamp(r.now)} ({r.now_source})\n"
    )
    for m in r.messages:
        out(f"  ! {visible(m)}\n")
    for v in r.windows:
        _print_window(v, r)
    if r.trail.windows_total > len(r.windows):
        out(f"\n... and {r.trail.windows_total - len(r.windows):,} more window(s), counted, not analysed\n")
    _print_writeback(r)


def _print_chain(t: AuditTrail) -> None:
    out = sys.stdout.write
    c = t.chain
    who = f"session {visible(c.session_id)}" if c.session_id else "no session"
    model = f", model {visible(t.model)}" if t.model else ""
    version = f", crprotocol {visible(t.protocol_version)}" if t.protocol_version else ""
    out(f"audit {visible(t.path)}: {who}{model}{version}\n")
    seqs = f" (sequences {c.first_sequence}-{c.last_sequence})" if c.entries else ""
    out(f"chain: {c.verdict.upper()}, {c.entries:,} entries checked{seqs} in {t.lines:,} lines\n")
    if c.first_break is not None:
        out(f"  first break: {visible(c.first_break.message)}\n")
        for b in c.breaks[1:6]:
            out(f"  then: {visible(b.message)}\n")
        if c.breaks_total > 6:
            out(f"  ... {c.breaks_total} breaks in all\n")
    if c.missing_entries:
        out(f"  entries missing: {c.missing_entries:,}\n")
    closed = (
        "closed by compliance.session_closed" if c.closed else "NOT closed: no compliance.session_closed at the end"
    )
    out(f"  {closed}{' (the file was cut mid-entry)' if c.truncated else ''}\n")
    out(
        f"  signatures: {c.signed:,} HMAC (not verifiable: the session's key never leaves the SDK), "
        f"{c.receipts:,} Ed25519 receipts (not checked)\n"
    )
    if c.reformatted_total:
        out(
            f"  {c.reformatted_total:,} line(s) not as the SDK writes them (hashed values unchanged): "
            f"{', '.join(map(str, c.reformatted[:10]))}\n"
        )
    if c.foreign_total:
        f = c.foreign[0]
        out(f"  {c.foreign_total:,} entries of another session (first: line {f.line}, {visible(f.session_id)})\n")
    if t.unknown_total:
        kinds = Counter(u.event_type for u in t.unknown_events)
        out(
            f"  {t.unknown_total:,} entries of unknown event types, kept: "
            f"{', '.join(f'{visible(k)} x{n}' for k, n in kinds.most_common(5))}\n"
        )
    for p in t.problems[:10]:
        out(f"  problem: {visible(p)}\n")
    if t.problems_total > 10:
        out(f"  ... {t.problems_total} problems in all\n")
    a = t.anchor
    out(f"  anchor: {a.verdict}: {visible(a.message)}\n" if a is not None else "  anchor: none beside the trail\n")


def _pair_line(p: ConflictPair) -> str:
    if p.tied:
        verdict = f"a tie (authority {p.authority[p.fact_a].authority:.3f} each)"
    elif p.decision == "dismiss":
        verdict = "dismissed by an operator"
    else:
        win = p.kept[0]
        lose = p.fact_b if win == p.fact_a else p.fact_a
        verdict = (
            f"SPEC-027 keeps {visible(win)} (authority {p.authority[win].authority:.3f} vs "
            f"{p.authority[lose].authority:.3f})"
        )
    return f"{visible(p.fact_a)} / {visible(p.fact_b)}  {p.patterns_text('+')}: {verdict}"


def _print_window(v: WindowVerdict, r: SessionReport) -> None:
    out = sys.stdout.write
    w = v.window
    out(f"\nwindow {w.index} {visible(w.window_id) or '(no id)'} (line {w.line})\n")
    if w.query is not None:
        out(f"  question (transcript): {visible(w.query)!r}\n")
    n_book = sum(1 for p in w.packed if p.bookend)
    out(f"  SDK packed {len(v.packed)} distinct facts ({w.packed_total} listed, {n_book} as bookends)\n")
    if v.pairs:
        out(f"  contradictory pairs packed together ({len(v.pairs)}):\n")
        for p in v.pairs:
            out(f"    {_pair_line(p)}\n")
    by_id = {p.fact_id: p for p in v.packed}
    for label, ids in (
        ("superseded / STALE packed", v.superseded),
        ("expired packed", v.expired),
        ("ageing packed", v.ageing),
    ):
        if ids:
            items = []
            for fid in ids:
                f = by_id[fid]
                age = f", age {f.age_days:.0f} d" if f.age_days is not None else ""
                sup = f", superseded by {visible(f.superseded_by)}" if f.superseded_by else ""
                rec = f"recency {f.recency_factor:.2f}" if f.recency_factor is not None else "recency unknown"
                items.append(f"{visible(fid)} ({rec}{age}{sup})")
            out(f"  {label} ({len(ids)}): {', '.join(items)}\n")
    for d in v.near_duplicates:
        out(f"  near-duplicates packed: {visible(d.fact_id)} ~ {visible(d.duplicate_of)} (cosine {d.cosine:.3f})\n")
    if v.writeback_packed:
        out(f"  written back by an earlier window and packed: {', '.join(map(visible, v.writeback_packed))}\n")
    _print_findings(v)
    e = v.envelope
    if e is None:
        out(f"  SPEC-027 envelope: {v.envelope_note}\n")
        return
    out(
        f"  SPEC-027 envelope for {'the transcript' if e.query_source == 'transcript' else '--query'}'s question: "
        f"{len(e.envelope)} facts ({e.tokens_used}/{e.token_budget} tokens); both {len(e.both)}, "
        f"SDK only {len(e.sdk_only)}, SPEC-027 only {len(e.spec027_only)}\n"
    )
    diff = [s for s in e.facts if s.side != "both"]
    for s in diff[:SHOWN]:
        out(f"    {'+' if s.side == 'spec027_only' else '-'} {visible(s.explain)}\n")
    if len(diff) > SHOWN:
        out(f"    ... {len(diff) - SHOWN} more (--json lists every fact)\n")


def _print_findings(v: WindowVerdict) -> None:
    out = sys.stdout.write
    if v.findings:
        kinds = Counter(c.finding.kind for c in v.findings)
        agree = sum(1 for c in v.findings if c.agrees)
        out(
            f"  SDK findings: {', '.join(f'{k} {n}' for k, n in sorted(kinds.items()))}; {agree} name facts ours name\n"
        )
        seen: set[tuple[str, tuple[str, ...]]] = set()
        for c in v.findings:
            key = (c.finding.kind, c.fact_ids)
            if c.finding.kind == "omission" and (key in seen or not c.agrees):
                continue
            seen.add(key)
            facts = f" [{', '.join(map(visible, c.fact_ids))}]" if c.fact_ids else ""
            ours = f" -> agrees with {', '.join(map(visible, c.ours))}" if c.ours else " -> ours silent"
            out(f"    {c.finding.kind} (line {c.finding.line}): {visible(c.finding.detail)}{facts}{ours}\n")
    else:
        out("  SDK findings: none\n")
    silent = [o.key for o in v.ours if not o.sdk_kinds]
    if silent:
        out(f"  ours the SDK was silent on: {', '.join(map(visible, silent))}\n")


def _writeback_line(wb: WritebackFact, r: SessionReport) -> list[str]:
    where = f"window {wb.window_index}" if wb.window_index is not None else f"window {visible(wb.window_id) or '?'}"
    conf = f", confidence {wb.confidence:.2f}" if wb.confidence is not None else ""
    f = r.kb.get(wb.fact_id)
    st = f", {f.source_type}" if f is not None else ""
    lines = [f"{visible(wb.fact_id)} ({where}{conf}{st}): {visible(wb.content)!r}"]
    for p in wb.contradicts:
        lines.append(f"  contradicts: {_pair_line(p)}")
    if wb.restates is not None:
        revived = ": a superseded value revived" if wb.restates_status == "STALE" else ""
        r_ = wb.restates
        lines.append(f"  restates {visible(r_.duplicate_of)} ({wb.restates_status}, cosine {r_.cosine:.3f}){revived}")
    if wb.packed_in:
        lines.append(f"  packed again in window(s) {', '.join(map(str, wb.packed_in))}")
    return lines


def _print_writeback(r: SessionReport) -> None:
    out = sys.stdout.write
    bad = sum(1 for wb in r.writeback if wb.contradicts)
    out(
        f"\nwrite-back: {len(r.writeback)} fact(s) the session wrote from its model's answers, "
        f"{bad} contradicting the KB\n"
    )
    for wb in r.writeback:
        for line in _writeback_line(wb, r):
            out(f"  {line}\n")
    if r.merged:
        out(f"extracted but not kept under their own id ({len(r.merged)}):\n")
        for m in r.merged:
            same = f" same text as {', '.join(map(visible, m.same_text_as))}" if m.same_text_as else " in no fact"
            out(f"  window {m.window_index}: {visible(m.text_preview)!r}:{same}\n")
