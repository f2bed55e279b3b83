"""``crp-inspect report``: the stakeholder HTML report of the before / after view, from the command line.

``report --ckf KB (--scenario FILE | --suite DIR [DIR ...]) --out FILE.html`` runs each scenario twice
(SPEC-024 only, and the full SPEC-027 pipeline, ``crp_core.analysis.baseline.before_after``) and writes
one self-contained HTML file: one scenario's report, or one over the whole suite
(``crp_core.analysis.html_report``). The operator decisions of ``--triage-db`` (default
``$CRP_INSPECT_TRIAGE_DB`` when it names an existing store) are in force and listed as people's
decisions. The report carries its inputs (CKF fingerprint, scenarios and their file digests, the
configuration keys that differ from the defaults, the decisions) and this command line.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from crp_core.cli.common import (
    TerminalProgress,
    add_input_args,
    check_writable,
    input_source_map,
    load_input_ckf,
    now_arg,
    write_output,
)
from crp_core.cli.operator_decisions import (
    add_triage_db_args,
    decisions_doc,
    decisions_line,
    operator_decisions,
    with_decisions,
)
from crp_core.config import layered_config
from crp_core.errors import ConfigError

if TYPE_CHECKING:
    from crp_core.analysis.baseline import BeforeAfter
    from crp_core.analysis.evaluate import PreparedSuite
    from crp_core.analysis.report_inputs import ReportInputs
    from crp_core.cli.common import Subparsers
    from crp_core.decisions import DecisionSet
    from crp_core.model import KnowledgeBase


def register(subparsers: Subparsers) -> None:
    p = subparsers.add_parser(
        "report",
        help="write the before / after HTML report of a scenario or a whole suite",
        description="Run each scenario with the older retrieval (SPEC-024 only) and with SPEC-027, and write the "
        "self-contained HTML report a stakeholder reads: one scenario (--scenario) or every scenario of a "
        "suite (--suite). Operator decisions of --triage-db (default $CRP_INSPECT_TRIAGE_DB) are in force. "
        "Configuration precedence: defaults < --config < the scenario's config < --set.",
    )
    add_input_args(p, scenario=False, now_help="the current time of every scenario (overrides each scenario's now)")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--scenario", metavar="PATH", help="one scenario file (.json or .toml)")
    which.add_argument("--suite", metavar="PATH", nargs="+", help="folders of scenarios and / or scenario files")
    p.add_argument("--out", metavar="FILE.html", required=True, help="where to write the report (atomically)")
    add_triage_db_args(p)
    p.add_argument(
        "--width", metavar="N", type=int, default=None, help="fan-out width of both sides (default: each scenario's)"
    )
    p.add_argument("--title", metavar="TEXT", default=None, help="the report's title")
    p.set_defaults(handler=_handle)


def _before_after(
    prepared: PreparedSuite, args: argparse.Namespace, decisions: DecisionSet | None
) -> tuple[tuple[str, BeforeAfter], ...]:
    """Each scenario's (name, before / after) (``crp_core.analysis.suite_before_after``)."""
    from crp_core.analysis.suite_before_after import suite_before_after

    return suite_before_after(
        prepared, layered_config(args.config), set_args=args.set_args, fanout_width=args.width, decisions=decisions
    ).entries


def report_inputs_of(
    args: argparse.Namespace,
    kb: KnowledgeBase,
    prepared: PreparedSuite,
    entries: tuple[tuple[str, BeforeAfter], ...],
    decisions: DecisionSet | None,
    db: str | None,
) -> ReportInputs:
    """What this report ran on, and the command line that writes it again."""
    from crp_core.analysis.report_inputs import (
        ReportInputs,
        ScenarioInput,
        config_changes,
        decision_lines,
        reproduce_command,
    )
    from crp_core.io.timeparse import format_timestamp
    from crp_core.support.digest import file_digest

    # the report's configuration is the suite's --config and --set; a scenario's own config table is
    # listed with that scenario (each scenario runs with both)
    base = layered_config(args.config).with_set_args(tuple(args.set_args))
    scenarios = tuple(
        ScenarioInput(
            item.name,
            item.scenario.query,
            format_timestamp(ba.full.now),
            ba.fanout_width,
            file_digest(item.path) if item.path else None,
            config_changes(ba.full.config, base),
        )
        for item, (_name, ba) in zip(prepared.suite, entries)
    )
    changes = config_changes(base)
    lines, in_force = decision_lines(decisions)
    command = reproduce_command(
        args.ckf,
        scenario=args.scenario,
        suite=args.suite or (),
        set_args=args.set_args,
        config_file=args.config,
        now=args.now,
        triage_db=db,
        no_triage_db=db is None,
        fanout_width=args.width,
        out=args.out,
    )
    return ReportInputs(
        ckf_label=os.path.basename(os.path.normpath(args.ckf)),
        ckf_fingerprint=kb.fingerprint,
        ckf_facts=len(kb),
        scenarios=scenarios,
        config_changes=changes,
        decisions=lines,
        decisions_in_force=in_force,
        decisions_source=f"triage database {db}" if db else "",
        command=command,
    )


def _handle(args: argparse.Namespace) -> int:
    from crp_core.analysis.evaluate import prepare_suite
    from crp_core.analysis.html_report import build_html_report, build_suite_html_report
    from crp_core.analysis.suite import load_suite
    from crp_core.corpus.prepared import prepare_corpus

    if args.width is not None and args.width < 0:
        raise ConfigError("--width must be >= 0")
    out = check_writable(args.out, "--out")
    now = now_arg(args.now)
    # --config and --set (a bad --set is refused before the CKF is read): the CKF's size limit and the
    # corpus's embedding model are read from them; each scenario adds its own config table when it runs
    config = layered_config(args.config, None, args.set_args)
    sources = [args.scenario] if args.scenario else list(args.suite)
    suite = load_suite(sources[0] if len(sources) == 1 and args.suite else sources)
    kb = load_input_ckf(
        args.ckf, lenient=args.lenient, max_bytes=config.ckf_max_bytes, source_map=input_source_map(args)
    )
    od = operator_decisions(args, kb)  # a store that cannot be read is refused before anything is embedded
    decisions, db = od.decisions, od.store
    shown = TerminalProgress()
    corpus = prepare_corpus(kb, cache_dir=args.cache_dir, config=config, progress=shown, notify=shown.note)
    corpus = with_decisions(corpus, od)
    prepared = prepare_suite(corpus, suite, now=now, decisions=decisions, check_ids=False)
    entries = _before_after(prepared, args, decisions)
    inputs = report_inputs_of(args, kb, prepared, entries, decisions, db)
    label = os.path.basename(os.path.normpath(args.ckf))
    if args.scenario:
        html = build_html_report(
            entries[0][1],
            title=args.title or "Before / after SPEC-027",
            ckf_label=label,
            scenario_name=prepared.suite.scenarios[0].name,
            inputs=inputs,
        )
    else:
        html = build_suite_html_report(
            entries,
            title=args.title or "Before / after SPEC-027, every scenario",
            ckf_label=label,
            inputs=inputs,
        )
    write_output(out, html, "--out")
    print(f"report written: {out} ({len(entries)} scenario(s), {len(html.encode()):,} bytes)", file=sys.stderr)
    sys.stderr.write(decisions_line(decisions_doc(od)))
    return 0
