"""``crp-inspect run``: the SPEC-027 §4 pipeline over a CKF and a scenario (docs/reference/reports.md).

Configuration precedence (lowest to highest): built-in defaults < ``--config`` TOML file <
the scenario's ``config`` table < each ``--set key=value`` (in command-line order).
``--now`` overrides the scenario's ``now``. ``--json`` prints the report of
:func:`crp_core.report.run_report`; without it, a readable summary.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from crp_core.cli.common import (
    TerminalProgress,
    add_input_args,
    found_by,
    input_source_map,
    load_input_ckf,
    now_arg,
    warn_clamps,
)
from crp_core.cli.operator_decisions import (
    OperatorDecisions,
    add_triage_db_args,
    decisions_doc,
    decisions_line,
    operator_decisions,
    with_decisions,
)
from crp_core.config import CRPConfig, layered_config
from crp_core.io.timeparse import format_timestamp

if TYPE_CHECKING:
    from crp_core.cli.common import Subparsers
    from crp_core.model import KnowledgeBase, Scenario
    from crp_core.records import NearConflict, PipelineResult
    from crp_core.stages.known import KnownSource


def register(subparsers: Subparsers) -> None:
    p = subparsers.add_parser(
        "run",
        help="run the retrieval pipeline and print headers, envelope and conflicts",
        description="Run the CRP-SPEC-027 retrieval pipeline (candidates, CDR, CDGR, contradiction "
        "resolution, fan-out, packing) over a CKF for one scenario. Configuration precedence: "
        "defaults < --config < the scenario's config < --set.",
    )
    add_input_args(p, scenario=True, now_help="the current time the pipeline uses (overrides the scenario's)")
    p.add_argument("--json", action="store_true", help="print the machine-readable report (one JSON object)")
    p.add_argument(
        "--known-conflicts",
        choices=("scan", "none"),
        default="scan",
        help="where the known-conflict guard (config known_conflict_action) learns conflicts: the "
        "whole-CKF scan's pairs of the selected facts (default; only those pairs are searched and checked) "
        "or nowhere (the operator decisions in force still count)",
    )
    add_triage_db_args(p)
    p.set_defaults(handler=_handle)


def build_config(config_path: str | None, scenario: Scenario | None, set_args: list[str]) -> CRPConfig:
    """defaults < --config file < scenario.config < --set (documented precedence)."""
    return layered_config(config_path, scenario.config if scenario is not None else None, set_args)


def _handle(args: argparse.Namespace) -> int:
    from crp_core.corpus.prepared import embed_scenario, prepare_corpus
    from crp_core.io.scenario import load_scenario
    from crp_core.pipeline import run_pipeline
    from crp_core.report import dumps, run_report

    now = now_arg(args.now)
    scenario = load_scenario(args.scenario)
    config = build_config(args.config, scenario, args.set_args)
    kb = load_input_ckf(
        args.ckf, lenient=args.lenient, max_bytes=config.ckf_max_bytes, source_map=input_source_map(args)
    )
    shown = TerminalProgress()  # on a terminal only: embedding counts / ETA, a long index build
    od = operator_decisions(args, kb)  # a store that cannot be read is refused before anything is embedded
    corpus = prepare_corpus(kb, cache_dir=args.cache_dir, config=config, progress=shown, notify=shown.note)
    vectors = embed_scenario(scenario, corpus)
    decisions = od.decisions
    corpus = with_decisions(corpus, od)
    # one `now` for the scan and the run (the wall clock read once when neither --now nor the scenario says)
    now = now or scenario.now or datetime.now(UTC)
    known: KnownSource = ()
    if config.known_conflict_action != "off" and args.known_conflicts == "scan":
        from crp_core.analysis.known import SelectionKnownConflicts

        # the whole-CKF scan's conflicts of the run's selection, found when the guard checks it
        known = SelectionKnownConflicts(corpus, config, now, decisions)
    elif config.known_conflict_action != "off" and decisions is not None:
        from crp_core.analysis.known import known_conflicts

        known = known_conflicts(None, decisions)
    result = run_pipeline(
        corpus, scenario, config, vectors=vectors, now=now, decisions=decisions, known_conflicts=known
    )
    warn_clamps(result.asked_clamps)
    if args.json:
        doc = run_report(result)
        doc["operator_decisions"] = decisions_doc(od)
        sys.stdout.write(dumps(doc) + "\n")
        return 0
    _print_summary(result, kb, od)
    return 0


def _print_summary(result: PipelineResult, kb: KnowledgeBase, od: OperatorDecisions) -> None:
    out = sys.stdout.write
    out(f"now: {format_timestamp(result.now)}\n")
    if kb.skipped:
        out(f"lenient load: {len(kb.skipped)} bad fact(s) skipped\n")
    out(decisions_line(decisions_doc(od)))
    out("\nheaders\n")
    for k, v in result.headers.items():
        out(f"  {k}: {v}\n")
    _print_envelope(result)
    _print_conflicts(result)
    from crp_core.relevance_gate import gate_counts

    out(f"\nscored facts: {len(result.outcomes)} ({gate_counts(result).summary()})\n")
    if result.known_conflicts:
        out(f"\nknown-conflict guard ({len(result.known_conflicts)})\n")
        for f in result.known_conflicts:
            out(f"  {f.message}\n")
    # the guard's findings are warnings too (run --json, the dashboard); listed once here, in their own section
    guarded = {f.message for f in result.known_conflicts}
    rest = [w for w in result.warnings if w not in guarded]
    if rest:
        out(f"\nwarnings ({len(rest)})\n")
        for w in rest[:20]:
            out(f"  {w}\n")
        if len(rest) > 20:
            out(f"  ... and {len(rest) - 20} more\n")
    out("\ntimings (ms): " + ", ".join(f"{k} {v:.3f}" for k, v in result.timings_ms.items()) + "\n")


def _print_envelope(result: PipelineResult) -> None:
    from crp_core.relevance_gate import gate_note

    out = sys.stdout.write
    out("\nenvelope (packed order)\n")
    for i, p in enumerate(result.envelope.order, 1):
        extra = f" bridges {p.bridges_anchor}" if p.bridges_anchor else ""
        tier = p.tier or "no tier"  # connectors: their score never enters a tier (docs/reference/pipeline.md §6)
        # an anchor's score is its CDR (0..1), a connector's its connector score (a bridge value, unbounded)
        score = f"cdr={p.score:.4f}" if p.role == "anchor" else f"connector={p.score:.4f}"
        out(f"  {i:>3}. {p.fact_id:<20} {p.role:<9} {score} {tier}/{p.band} tokens={p.tokens}{extra}\n")
    env = result.envelope
    out(f"  tokens {env.tokens_used}/{env.token_budget}")
    if env.dropped_for_budget:
        out(f"; dropped for budget: {', '.join(env.dropped_for_budget)}")
    if env.dropped_unbridged:
        out(f"; dropped (fewer than two bridged anchors packed): {', '.join(env.dropped_unbridged)}")
    if env.dropped_pairs:
        shown = ", ".join(f"{p.fact_a}/{p.fact_b}" for p in env.dropped_pairs[:10])
        more = f" and {len(env.dropped_pairs) - 10} more" if len(env.dropped_pairs) > 10 else ""
        out(f"; tied pairs with a fact left out: {shown}{more}")
    out("\n")
    if env.empty_reason:
        out(f"  {env.empty_reason}\n")
    note = gate_note(result)
    if note is not None:
        out(f"  note: {note.message}\n")


def near_advice(n: NearConflict, ckf: str) -> str:
    """How to act on a near conflict, in one line: an operator's decision on the pair (a dismissal: not a conflict,
    no longer reported; an accept or an override: arbitrated in every run that packs both), or a lower threshold."""
    command = (
        f"crp-inspect triage record --ckf {shlex.quote(ckf or 'KB')} --pair {shlex.quote(n.fact_a)} "
        f"{shlex.quote(n.fact_b)} --kind dismiss --operator NAME"
    )
    return (
        f"an operator's decision settles one: {command} (not a conflict: no longer reported), or --kind accept / "
        "override --winner ID (arbitrated in every run that packs both); or lower contradiction_similarity"
    )


def _print_conflicts(result: PipelineResult) -> None:
    from crp_core.analysis.timeline import flag_lines, winner_flags

    out = sys.stdout.write
    pairs = result.resolution.pairs
    out(f"\nconflicts ({len(pairs)})\n")
    for pair in pairs:
        if pair.skipped:
            verdict = "skipped (a fact already suppressed)"
        elif pair.tied:
            verdict = "TIED: both kept with a NOTE"
        elif pair.suppressed is None:  # dismissed by an operator: not a conflict
            verdict = f"both kept ({pair.decision or 'no loser'})"
        else:
            verdict = f"kept {', '.join(pair.kept)}, suppressed {pair.suppressed}"
        if pair.decision is not None and pair.suppressed is not None:
            verdict += f" (operator: {pair.decision})"
        auth = ", ".join(f"{fid}={a.authority:.4f}" for fid, a in pair.authority.items())
        read = pair.patterns_text("/") + found_by(pair)
        out(f"  {pair.fact_a} vs {pair.fact_b}: cos={pair.similarity:.3f} {read}; authority {auth}; {verdict}\n")
        if not pair.skipped:  # as `conflicts` warns: a close call, or both facts past their TTL
            for line in flag_lines(winner_flags(pair, result.corpus.kb, result.config, result.now)):
                out(f"      WARNING: {line}\n")
    near = result.near_conflicts
    if near:
        top = result.config.contradiction_similarity
        out(f"near conflicts (packed, cosine just below contradiction_similarity {top:g}; not resolved)\n")
        for n in near:
            out(f"  {n.fact_a} vs {n.fact_b}: cos={n.similarity:.3f} {'/'.join(n.patterns)}; both reach the model\n")
        out(f"  {near_advice(near[0], result.corpus.kb.source)}\n")
