"""``crp-inspect check``: the regression gate over a suite (docs/decisions/suites.md §5).

Runs every scenario of ``--suite`` (a folder or scenario files) over the CKF at the configuration
(defaults < ``--config`` < the scenario's ``config`` < ``--set``), prints the metrics table and, under
each broken bound, the fact ids behind it (or, with ``--json``, the
:func:`crp_core.analysis.reports.suite_metrics_report` object with the gate's verdict), and exits 1
when a metric breaks a threshold of its scenario's ``expect`` table or is worse than the ``--baseline``
metrics file, 0 otherwise. ``--tolerance METRIC=X`` (repeatable) lets a metric move by X from the
baseline before it fails. ``--write-baseline PATH`` records this run's metrics as a
baseline (checked writable before the run, written atomically); a recording exits 0 once the file is
written, the gate's verdict printed but not applied. Configuration keys set with ``--config`` /
``--set`` that no scenario exercises are reported (text, and ``unexercised_keys`` in ``--json``).
Bad input (CKF, suite, config, baseline, a tolerance, an output path that cannot be written) exits 2
with the problems listed, no traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from crp_core.cli.common import (
    TerminalProgress,
    add_input_args,
    check_writable,
    input_source_map,
    load_input_ckf,
    now_arg,
    visible,
    write_output,
)
from crp_core.cli.history import add_history_args
from crp_core.cli.operator_decisions import (
    OperatorDecisions,
    add_triage_db_args,
    decisions_doc,
    decisions_line,
    operator_decisions,
    with_decisions,
)
from crp_core.config import CRPConfig, layered_config
from crp_core.errors import ConfigError

if TYPE_CHECKING:
    from crp_core.analysis.evaluate import KnownMode, PreparedSuite
    from crp_core.analysis.gate import GateResult, UnexercisedKey
    from crp_core.analysis.metrics import SuiteMetrics
    from crp_core.cli.common import Subparsers
    from crp_core.model import KnowledgeBase

#: columns of the metrics table: (metric, header, width)
TABLE: tuple[tuple[str, str, int], ...] = (
    ("recall", "recall", 6),
    ("leaks", "leaks", 5),
    ("wrong_winners", "wrong", 5),
    ("expired", "expired", 7),
    ("ageing", "ageing", 6),
    ("contradictions", "contra", 6),
    ("conflicts_detected", "detected", 8),
    ("false_conflicts", "false", 5),
    ("duplicates", "dups", 4),
    ("tokens", "tokens", 6),
    ("overlap", "overlap", 7),
)
#: the ranking columns, shown when a scenario of the suite has graded relevance
RANKING_TABLE: tuple[tuple[str, str, int], ...] = (
    ("ndcg@10", "ndcg@10", 7),
    ("mrr", "mrr", 5),
    ("precision@10", "p@10", 5),
    ("recall@10", "r@10", 5),
)
_FRACTION_COLUMNS = frozenset({"recall", "overlap", "ndcg@10", "mrr", "precision@10", "recall@10"})


def add_suite_args(p: argparse.ArgumentParser) -> None:
    """``--ckf --suite --config --set --now --lenient --cache-dir --known-conflicts`` (check and tune)."""
    add_input_args(p, scenario=False, now_help="the current time of every scenario (overrides each scenario's now)")
    p.add_argument(
        "--suite",
        required=True,
        metavar="PATH",
        nargs="+",
        help="folders of scenarios (sub-folders included) and / or scenario files, one suite",
    )
    p.add_argument(
        "--known-conflicts",
        choices=("auto", "scan", "none"),
        default="auto",
        help="whether the known-conflict guard learns the whole-CKF scan's conflicts of each run's selection: "
        "auto (only where known_conflict_action is pull_winner or drop_loser, the actions that change the "
        "envelope), scan (always), none",
    )
    add_triage_db_args(p)  # the operator decisions in force, as in run and the dashboard
    add_history_args(p)  # --no-history, --history-note (crp_core/cli/history.py)


def register(subparsers: Subparsers) -> None:
    p = subparsers.add_parser(
        "check",
        help="run a suite of labelled scenarios and fail on a regression",
        description="Run every scenario of a suite, print the metrics (must_include recall, must_exclude leaks, "
        "wrong winners, expired facts packed, contradictions, fan-out duplicates, tokens, overlap with "
        "the defaults) and exit 1 when a metric breaks its scenario's expect threshold or is worse "
        "than the baseline. Configuration precedence: defaults < --config < the scenario's config < "
        "--set.",
    )
    add_suite_args(p)
    p.add_argument("--baseline", metavar="JSON", default=None, help="metrics file of an earlier check to compare with")
    p.add_argument(
        "--write-baseline",
        metavar="JSON",
        default=None,
        help="record this run's metrics file here (written atomically; exit 0 once written, the "
        "gate's verdict printed but not applied)",
    )
    p.add_argument(
        "--tolerance",
        metavar="METRIC=X",
        action="append",
        default=[],
        help="let METRIC move by X (the worse way) from the --baseline before it fails, e.g. duplicates=2 "
        "(repeatable; metrics the baseline gates; default: float noise only)",
    )
    p.add_argument("--json", action="store_true", help="print the metrics report (one JSON object)")
    p.set_defaults(handler=_handle)


@dataclass(frozen=True, eq=False)
class SuiteInputs:
    """What check and tune load: the CKF, the prepared suite and the base configuration."""

    kb: KnowledgeBase
    prepared: PreparedSuite
    config: CRPConfig  # defaults < --config (each scenario's table and --set come on top)
    set_args: tuple[str, ...]
    known: KnownMode
    decisions: OperatorDecisions = OperatorDecisions()


def load_inputs(args: argparse.Namespace) -> SuiteInputs:
    """Load and check everything before any run: a bad CKF, suite, config or ``--set`` raises a CRPError."""
    from crp_core.analysis.evaluate import prepare_suite
    from crp_core.analysis.suite import load_suite
    from crp_core.corpus.prepared import prepare_corpus

    now = now_arg(args.now)
    config = layered_config(args.config)
    set_args = tuple(args.set_args)
    effective = config.with_set_args(set_args)  # a bad --set is refused before the CKF is read
    suite = load_suite(args.suite[0] if len(args.suite) == 1 else args.suite)
    kb = load_input_ckf(
        args.ckf, lenient=args.lenient, max_bytes=config.ckf_max_bytes, source_map=input_source_map(args)
    )
    shown = TerminalProgress()  # on a terminal only: embedding counts / ETA, a long index build
    # the corpus is prepared at the effective config: its embedding model may come from --set
    od = operator_decisions(args, kb)  # a store that cannot be read is refused before anything is embedded
    corpus = prepare_corpus(kb, cache_dir=args.cache_dir, config=effective, progress=shown, notify=shown.note)
    prepared = prepare_suite(with_decisions(corpus, od), suite, now=now, decisions=od.decisions)
    return SuiteInputs(kb, prepared, config, set_args, args.known_conflicts, od)


def _cell(v: float | None, width: int, fraction: bool) -> str:
    if v is None:
        return f"{'-':>{width}}"
    return f"{v:>{width}.3f}" if fraction else f"{v:>{width}.0f}" if float(v).is_integer() else f"{v:>{width}.2f}"


def metrics_table(metrics: SuiteMetrics) -> str:
    """The per-scenario table with mean and worst rows (plain text); the ranking columns only when a
    scenario defines them (a scenario with ``expect.relevance``)."""
    ranked = any(metrics.summary[m].count for m, _, _ in RANKING_TABLE)
    table = TABLE + (RANKING_TABLE if ranked else ())
    name_w = max([len("scenario")] + [len(visible(s.name)) for s in metrics.scenarios])
    head = f"{'scenario':<{name_w}} " + " ".join(f"{h:>{w}}" for _, h, w in table)
    lines = [head, "-" * len(head)]
    for s in metrics.scenarios:
        lines.append(
            f"{visible(s.name):<{name_w}} "
            + " ".join(_cell(s.value(m), w, m in _FRACTION_COLUMNS) for m, _, w in table)
        )
    lines.append("-" * len(head))
    for row in ("mean", "worst"):
        lines.append(
            f"{row:<{name_w}} "
            + " ".join(
                _cell(getattr(metrics.summary[m], row), w, row == "mean" or m in _FRACTION_COLUMNS) for m, _, w in table
            )
        )
    return "\n".join(lines)


#: fact ids listed per broken bound; more are counted
MAX_IDS = 12


def id_list(ids: list[str]) -> str:
    """Fact ids for one line of text: the first :data:`MAX_IDS`, the rest counted."""
    shown = ", ".join(visible(i) for i in ids[:MAX_IDS])
    return shown + (f" and {len(ids) - MAX_IDS} more" if len(ids) > MAX_IDS else "")


def failure_facts(metrics: SuiteMetrics, scenario: str, metric: str) -> str:
    """The fact ids behind a broken bound of ``metric`` in ``scenario`` (``""`` when the metric names
    none, e.g. tokens): missing must_include facts, leaked must_exclude facts, packed losers with their
    winner, expired / ageing facts packed, contradictory pairs, fan-out duplicates, undetected pairs, or
    the facts entering / leaving the reference envelope."""
    try:
        sm = metrics.scenario(scenario)
    except KeyError:
        return ""
    if metric == "recall":
        return f"missing: {id_list(list(sm.missing))}" if sm.missing else ""
    if metric == "wrong_winners":
        return "packed loser(s): " + id_list(
            [f"{w.loser} (winner {w.winner}, {w.winner_state.replace('_', ' ')})" for w in sm.wrong_winners]
        )
    if metric == "contradictions":
        return "pairs packed: " + id_list([f"{c.fact_a} + {c.fact_b}" for c in sm.contradictions])
    if metric == "duplicates":
        return "duplicates: " + id_list([" = ".join(d) for d in sm.duplicates])
    if metric == "conflicts_detected":
        return "not detected: " + id_list([f"{a} + {b}" for a, b in sm.conflicts_undetected])
    if metric == "false_conflicts":
        return "flagged though labelled no conflict: " + id_list([f"{a} + {b}" for a, b in sm.false_conflicts])
    if metric == "overlap":
        moved = [f"+{f}" for f in sm.entering] + [f"-{f}" for f in sm.leaving]
        return f"against the reference envelope: {id_list(moved)}" if moved else ""
    if metric in ("ndcg@10", "mrr", "precision@10", "recall@10"):
        return _ranking_facts(sm.envelope, sm.grades, sm.relevant_missing)
    named = {"leaks": ("leaked", sm.leaks), "expired": ("expired", sm.expired), "ageing": ("ageing", sm.ageing)}
    if metric in named and named[metric][1]:
        label, ids = named[metric]
        return f"{label}: {id_list(list(ids))}"
    return ""


def _ranking_facts(envelope: tuple[str, ...], grades: tuple[int, ...], missing: tuple[str, ...]) -> str:
    """The first ten envelope facts with their grades, and the relevant facts outside them."""
    top = [f"{f} ({g})" for f, g in zip(envelope[:10], grades[:10])]
    text = f"first 10 (grade): {id_list(top)}" if top else "the envelope is empty"
    return text + (f"; graded 1+ outside them: {id_list(list(missing))}" if missing else "")


def unexercised_text(keys: tuple[UnexercisedKey, ...]) -> str:
    """One line per key the suite does not exercise (``""`` when every changed key is exercised)."""
    if not keys:
        return ""
    lines = [
        f"note: {len(keys)} configuration key(s) you changed that no scenario of the suite exercises "
        "(set back to the default, no scenario's envelope or metrics change):"
    ]
    lines += [f"  - {visible(k.key)} = {visible(str(k.value))} (default {visible(str(k.default))})" for k in keys]
    return "\n".join(lines) + "\n"


def _print_verdict(
    inp: SuiteInputs,
    metrics: SuiteMetrics,
    verdict: GateResult,
    recorded_to: str | None,
    unexercised: tuple[UnexercisedKey, ...] = (),
) -> None:
    """The readable summary: the metrics table, the gate's notes, the keys no scenario exercises, the
    verdict, where a baseline went."""
    out = sys.stdout.write
    out(
        f"suite {visible(inp.prepared.suite.source)}: {len(inp.prepared.suite)} scenario(s) over "
        f"{visible(inp.kb.source)} ({len(inp.kb)} facts)\n"
    )
    out(decisions_line(decisions_doc(inp.decisions)))
    out("\n")
    out(metrics_table(metrics) + "\n\n")
    for note in verdict.notes:
        out(f"note: {visible(note)}\n")
    out(unexercised_text(unexercised))
    if verdict.passed and not verdict.checked:
        # must_include / must_exclude / conflicts are reported, not gated: only min_ / max_ bounds fail a suite
        out("PASS: 0 bound(s) checked: no scenario sets a min_ or max_ bound, so the labels above gate nothing\n")
    elif verdict.passed:
        out(f"PASS: {verdict.checked} bound(s) checked\n")
    else:
        out(f"{'NOT GATED' if recorded_to else 'FAIL'}: {len(verdict.failures)} of {verdict.checked} bound(s) broken\n")
        for f in verdict.failures:
            out(f"  - {visible(f.message)}\n")
            facts = failure_facts(metrics, f.scenario, f.metric)
            if facts:
                out(f"      {facts}\n")
    if recorded_to:
        out(f"baseline written to {visible(recorded_to)} (recording: exit 0 whatever the gate says)\n")


def _handle(args: argparse.Namespace) -> int:
    from crp_core.analysis.evaluate import run_suite
    from crp_core.analysis.gate import gate, parse_tolerances, read_baseline, unexercised_keys
    from crp_core.analysis.reports import suite_metrics_report
    from crp_core.report import dumps, plain

    tolerances = parse_tolerances(args.tolerance)  # a bad item is refused before anything is read
    if args.write_baseline:  # refused before the suite runs, not after
        check_writable(args.write_baseline, "--write-baseline")
    baseline = read_baseline(args.baseline) if args.baseline else None
    inp = load_inputs(args)
    shown = TerminalProgress("suite", "scenario runs")  # on a terminal only
    run = run_suite(
        inp.prepared,
        inp.config,
        set_args=inp.set_args,
        known=inp.known,
        keep_results=False,
        progress=lambda done, total, _name: shown(done, total),
    )
    verdict = gate(
        run.metrics,
        inp.prepared.suite,
        baseline,
        ckf_fingerprint=inp.kb.fingerprint,
        decisions=(inp.decisions.in_force, inp.decisions.digest),
        tolerances=tolerances,
    )
    unexercised = unexercised_keys(inp.prepared, run, known=inp.known)
    effective = inp.config.with_set_args(inp.set_args)

    def report(with_gate: bool) -> dict[str, object]:
        doc = suite_metrics_report(
            run.metrics,
            config=effective,
            ckf_source=inp.kb.source,
            ckf_fingerprint=inp.kb.fingerprint,
            suite_source=inp.prepared.suite.source,
            set_args=inp.set_args,
            gate=verdict if with_gate else None,
        )
        doc["operator_decisions"] = decisions_doc(inp.decisions)
        return doc

    # writing a baseline is recording: exit 0 once written; the gate's verdict is still printed
    write_error: ConfigError | None = None
    if args.write_baseline:
        try:
            write_output(args.write_baseline, dumps(report(False)) + "\n", "--write-baseline")
        except ConfigError as exc:
            write_error = exc  # raised after the results are printed: the run is not lost
    recorded = bool(args.write_baseline) and write_error is None
    if args.json:
        doc = report(True)
        if recorded:
            doc["baseline_written"] = os.fspath(args.write_baseline)
        doc["tolerances"] = dict(tolerances)
        doc["unexercised_keys"] = [
            {"key": k.key, "value": plain(k.value), "default": plain(k.default)} for k in unexercised
        ]
        sys.stdout.write(dumps(doc) + "\n")
    else:
        _print_verdict(inp, run.metrics, verdict, os.fspath(args.write_baseline) if recorded else None, unexercised)
    # -- experiment history (crp-inspect history; docs/decisions/history.md) ----------------------------
    from crp_core.cli.history import record_run

    gated = {
        "verdict": "recorded" if args.write_baseline else ("PASS" if verdict.passed else "FAIL"),
        "bounds_checked": verdict.checked,
        "bounds_broken": len(verdict.failures),
        "baseline": bool(args.baseline),
        "tolerances": {k: float(v) for k, v in (tolerances or {}).items()},
    }
    record_run(args, "check", inp, run.metrics, summary=gated)
    # -- end experiment history --------------------------------------------------------------------------
    if write_error is not None:
        sys.stdout.flush()
        raise write_error
    if recorded:
        return 0
    return 0 if verdict.passed else 1
