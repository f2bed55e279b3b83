"""``crp-inspect fanout``: partitioned vs naive fan-out for a scenario (SPEC-027 §1, docs/reference/pipeline.md §5, §4).

Runs the whole pipeline (``crp_core.pipeline.run_pipeline``, whose stage 5 is
``crp_core.stages.fanout.run_fanout``) and prints ``fanout_report`` as JSON (``--json``, byte-identical for
the same input) or a readable summary: partitions, each branch's picks, duplicates naive vs
partitioned. Configuration precedence (lowest first): defaults, ``--config`` TOML, the scenario's own
``config``, ``--set``. ``--width`` replaces the scenario's ``fanout_width``; ``--now`` its ``now``.
Exit status 0 on success; bad input raises a :class:`crp_core.errors.CRPError` (printed by the
dispatcher, status 2).
"""

from __future__ import annotations

import argparse
from datetime import datetime
from typing import TYPE_CHECKING, Any

from crp_core import headers
from crp_core.cli.common import (
    TerminalProgress,
    add_input_args,
    input_source_map,
    load_input_ckf,
    warn_clamps,
)
from crp_core.cli.operator_decisions import (
    add_triage_db_args,
    decisions_doc,
    decisions_line,
    operator_decisions,
    with_decisions,
)
from crp_core.config import CRPConfig, layered_config
from crp_core.errors import Problem, ScenarioError

if TYPE_CHECKING:
    from crp_core.cli.common import Subparsers
    from crp_core.model import Scenario


def register(subparsers: Subparsers) -> None:
    p = subparsers.add_parser(
        "fanout",
        help="partitioned vs naive fan-out of a scenario (SPEC-027 §1)",
        description="Run the pipeline for a scenario and show the fan-out partitions, each branch's "
        "picks, and the cross-branch duplicates of the naive shared-coverage run versus the "
        "partitioned run.",
    )
    add_input_args(
        p, scenario=True, now_help="the time the pipeline treats as now (ISO 8601; replaces the scenario's now)"
    )
    p.add_argument(
        "--width",
        type=int,
        default=None,
        metavar="N",
        help="fan-out width (replaces the scenario's fanout_width; 0 or 1 = no fan-out)",
    )
    p.add_argument("--json", action="store_true", help="print the JSON report (docs/reference/reports.md)")
    add_triage_db_args(p)  # the operator decisions in force, as in run and the dashboard
    p.set_defaults(handler=_handle)


def build_config(scenario: Scenario, config_path: str | None, set_args: list[str]) -> CRPConfig:
    """Defaults < ``--config`` TOML < scenario ``config`` < ``--set``."""
    return layered_config(config_path, scenario.config, set_args)


def _scenario_overrides(scenario: Scenario, width: int | None, now_text: str | None) -> Scenario:
    from crp_core.io.timeparse import parse_timestamp

    changes: dict[str, int | datetime] = {}
    if width is not None:
        if width < 0:
            raise ScenarioError("--width refused", [Problem(0, "fanout_width", f"must be >= 0, got {width}")])
        changes["fanout_width"] = width
    if now_text is not None:
        try:
            changes["now"] = parse_timestamp(now_text)
        except ValueError as exc:
            raise ScenarioError("--now refused", [Problem(0, "now", str(exc))]) from None
    return scenario.replace(**changes) if changes else scenario


def fanout_cli_report(args: argparse.Namespace) -> dict[str, Any]:
    """Load, run the pipeline and return ``fanout_report`` plus the run's identification, for the parsed
    arguments of ``crp-inspect fanout`` (an SDK snapshot's source types by
    :func:`~crp_core.cli.common.input_source_map`)."""
    from crp_core.corpus.prepared import prepare_corpus
    from crp_core.io.scenario import load_scenario
    from crp_core.pipeline import run_pipeline
    from crp_core.report import clamp_dict, fanout_report

    source_map = input_source_map(args)
    scenario = _scenario_overrides(load_scenario(args.scenario), args.width, args.now)
    config = build_config(scenario, args.config, list(args.set_args or []))
    kb = load_input_ckf(args.ckf, lenient=args.lenient, max_bytes=config.ckf_max_bytes, source_map=source_map)
    od = operator_decisions(args, kb)  # a store that cannot be read is refused before anything is embedded
    shown = TerminalProgress()  # on a terminal only: embedding counts / ETA, a long index build
    corpus = prepare_corpus(kb, cache_dir=args.cache_dir, config=config, progress=shown, notify=shown.note)
    result = run_pipeline(with_decisions(corpus, od), scenario, config, decisions=od.decisions)
    warn_clamps(result.asked_clamps)
    report = fanout_report(result.fanout, result.headers)
    residual = [sq.id for sq in scenario.residual_set]
    return {
        "scenario": scenario.name or args.scenario,
        "fanout_width": scenario.fanout_width,
        "residual_set": residual,
        "addressed": [a.id for a in scenario.addressed],
        **report,
        "clamps": [clamp_dict(c) for c in result.clamps],
        "operator_decisions": decisions_doc(od),
    }


def _handle(args: argparse.Namespace) -> int:
    from crp_core.report import dumps

    report = fanout_cli_report(args)
    if args.json:
        print(dumps(report))
    else:
        print(render_summary(report))
    return 0


def render_summary(report: dict[str, Any]) -> str:
    """Readable summary: partitions, per-branch picks, duplicates naive vs partitioned."""
    lines = [
        f"scenario: {report['scenario']}",
        f"ResidualSet ({len(report['residual_set'])}): {', '.join(report['residual_set']) or '-'}"
        f"   addressed: {', '.join(report['addressed']) or '-'}",
    ]
    said = decisions_line(report.get("operator_decisions") or {})
    if said:
        lines.append(said.rstrip("\n"))
    if not report["active"]:
        lines.append(
            f"fan-out inactive (fanout_width {report['fanout_width']}; needs width >= 2 and a non-empty ResidualSet)"
        )
        return "\n".join(lines)
    lines.append(
        f"{headers.PARTITIONS}: {report['headers'][headers.PARTITIONS]}"
        f"   (width {report['width']}, rule: {report['rule']})"
    )
    lines.append(
        "what each branch would choose for its own sub-queries (SPEC-027 §1); the envelope `run` packs is the "
        "parent's, chosen for the scenario's query, which the fan-out does not change"
    )
    for mode, run in (("partitioned", report), ("naive (shared Coverage Set, round-robin)", report["naive"])):
        lines.append("")
        lines.append(f"== {mode}")
        for b in run["branches"]:
            lines.append(f"  branch {b['branch']}: sub-queries [{', '.join(b['sub_queries'])}]")
            lines.append(f"    selected: {', '.join(b['selected']) or '-'}")
            lines.append(f"    coverage additions: {', '.join(b['coverage_additions'])}")
        fan = run["fan_in"]
        lines.append(
            f"  fan-in: coverage depth {fan['coverage_depth']}, merged {len(fan['merged'])} fact(s), "
            f"{len(fan['duplicates'])} duplicate(s): {_split(fan)}"
        )
        for d in fan["duplicates"]:
            what = (
                f"{d['fact_ids'][0]} chosen by branches {d['branches']}"
                if len(d["fact_ids"]) == 1
                else f"{d['fact_ids'][0]} ~ {d['fact_ids'][1]} (cos {d['similarity']:.4f}) across branches "
                f"{d['branches']}"
            )
            fate = f"removed at fan-in, kept {d['kept'] or '-'}" if d["removed_at_fan_in"] else "reaches the model"
            lines.append(f"    - {what}; {fate}")
    lines.append("")
    naive_fan, part_fan = report["naive"]["fan_in"], report["fan_in"]
    lines.append(
        f"duplicates: naive {len(naive_fan['duplicates'])} vs partitioned {len(part_fan['duplicates'])}"
        f"   reaching the model: naive {naive_fan['duplicates_reaching_model']} vs partitioned "
        f"{part_fan['duplicates_reaching_model']}"
    )
    return "\n".join(lines)


def _split(fan_in: dict[str, Any]) -> str:
    """A run's duplicates split by their fate at fan-in (SPEC-027 §1.6)."""
    tail = "" if fan_in["dedup"] else " (no fan-in dedup)"
    return (
        f"{fan_in['duplicates_removed_at_fan_in']} removed at fan-in, "
        f"{fan_in['duplicates_reaching_model']} reaching the model{tail}"
    )
