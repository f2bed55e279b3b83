"""``crp-inspect tune``: Optuna search over a suite (docs/decisions/suites.md §6).

Searches the space the engineer gives (``--param KEY=LO:HI[:log]``, repeatable, and a ``[space]`` table
of ``--space FILE.toml``; :mod:`crp_core.analysis.tune_space`), else the TTL per source type,
``cdr_min_relevance``, ``contradiction_similarity`` and ``stale_floor`` (keys given with ``--set`` stay
fixed), for ``--objective`` (a built-in objective or any suite metric's name) with TPE at ``--seed``,
``--trials`` trials in all (trial 0 is the starting configuration). The space and the objective are
checked before the CKF is read. ``--json`` prints :func:`crp_core.analysis.reports.tune_report`
(``{"best": {"config", "metrics", ...}, "trials": [...]}``); otherwise one line per trial as it finishes,
then the best trial's configuration changes, and when no trial is feasible, what made them infeasible.
``--out best.toml`` saves the keys of the best configuration that differ from the defaults, after comment
lines saying what produced them (:func:`crp_core.analysis.tune_toml.tuned_toml`; ``crp-inspect check --config
best.toml`` reads it): checked writable before the first trial, written atomically; if the write still
fails at the end, the result is printed first, then the error (exit 2). ``--seed`` outside 0 .. 2**32 - 1
is refused by argparse (exit 2).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from crp_core.cli.check import add_suite_args, load_inputs, metrics_table
from crp_core.cli.common import TerminalProgress, check_writable, visible, write_output
from crp_core.cli.operator_decisions import decisions_doc, decisions_line
from crp_core.errors import ConfigError

if TYPE_CHECKING:
    from crp_core.analysis.gate import GateFailure
    from crp_core.analysis.tune import TrialRecord, TuneResult
    from crp_core.analysis.tune_space import Param
    from crp_core.cli.common import Subparsers
    from crp_core.config import CRPConfig

_COLS = ("recall.mean", "leaks.total", "wrong_winners.total", "expired.total", "contradictions.total", "tokens.mean")


#: the seeds Optuna's TPE sampler (numpy's RandomState) accepts
SEED_MAX = 2**32 - 1


def seed_arg(value: str) -> int:
    """argparse ``type`` of ``--seed``: a whole number 0 .. 2**32 - 1 (exit 2 otherwise, before any work)."""
    try:
        n = int(value, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number between 0 and {SEED_MAX}, got {value!r}") from None
    if not 0 <= n <= SEED_MAX:
        raise argparse.ArgumentTypeError(f"must be between 0 and {SEED_MAX} (2**32 - 1), got {n}")
    return n


def register(subparsers: Subparsers) -> None:
    from crp_core.analysis.tune import OBJECTIVES, objective_names

    metric_names = [n for n in objective_names() if n not in OBJECTIVES]
    p = subparsers.add_parser(
        "tune",
        help="search the configuration (TTLs, the relevance gate, ... or a space you give) over a suite",
        description="Auto-tune the configuration over a suite of labelled scenarios with Optuna (TPE, fixed "
        "seed). Objectives: "
        + "; ".join(f"{o.name}: {o.description}" for o in OBJECTIVES.values())
        + "; or the name of a suite metric ("
        + ", ".join(metric_names)
        + "): its mean, maximised when higher is better, else minimised, each violation costing 1.",
    )
    add_suite_args(p)
    p.add_argument(
        "--objective",
        default="recall",
        metavar="NAME",
        help="what to optimise: " + ", ".join(objective_names()) + " (default recall)",
    )
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=LO:HI[:log]",
        help="search KEY over [LO, HI] (':log': on a log scale); repeatable; with --param or --space only the "
        "keys given are searched",
    )
    p.add_argument(
        "--space",
        metavar="TOML",
        default=None,
        help='a TOML file whose [space] table gives the searched keys: "ttl_days.news" = {lo = 7, hi = 730, '
        "log = true}; a --param of the same key replaces its entry",
    )
    p.add_argument("--trials", type=int, required=True, metavar="N", help="number of trials, the start included")
    p.add_argument(
        "--seed", type=seed_arg, default=0, metavar="S", help=f"TPE sampler seed, 0 to {SEED_MAX} (default 0)"
    )
    p.add_argument("--json", action="store_true", help="print the tuning report (one JSON object)")
    p.add_argument(
        "--out",
        metavar="TOML",
        default=None,
        help="save the keys of the best configuration that differ from the defaults as TOML, with a comment "
        "saying what produced them (checked writable before the first trial, written atomically)",
    )
    p.set_defaults(handler=_handle)


def _line(t: TrialRecord) -> str:
    vals = "/".join(f"{v:.4f}" for v in t.values)
    cells = " ".join(f"{'-' if (v := t.metrics.get(c)) is None else format(v, '.3f'):>12}" for c in _COLS)
    return f"{t.number:>5} {vals:>16} {'yes' if t.feasible else 'no':>8} {cells}"


def _handle(args: argparse.Namespace) -> int:
    from crp_core.analysis.reports import tune_report
    from crp_core.analysis.tune import no_feasible_message, objective_named, tune
    from crp_core.analysis.tune_space import space_including
    from crp_core.analysis.tune_toml import tuned_toml
    from crp_core.report import dumps

    if not 1 <= args.trials <= 10_000:
        raise ConfigError(f"--trials must be between 1 and 10000, got {args.trials}")
    objective_named(args.objective)  # an unknown name is refused before anything loads
    space = _engineer_space(args)
    if args.out:  # refused before the model loads and the trials run, not after
        check_writable(args.out, "--out")
    inp = load_inputs(args)
    if space is not None:  # a key the base config cannot start from is refused before the table's header
        space_including(space, inp.config)
    out = sys.stdout.write
    live = not args.json
    if live:
        out(decisions_line(decisions_doc(inp.decisions)))
        out(
            f"tuning {args.objective} over {len(inp.prepared.suite)} scenario(s), {args.trials} trial(s), "
            f"seed {args.seed}\n\n{'trial':>5} {'value':>16} {'feasible':>8} "
            + " ".join(f"{c:>12}" for c in _COLS)
            + "\n"
        )

    shown = TerminalProgress("tuning", "trials")  # with --json: counts and an ETA on a terminal's stderr

    def progress(t: TrialRecord, done: int, total: int) -> None:
        if live:
            out(_line(t) + "\n")
            sys.stdout.flush()
        else:
            shown(done, total)

    result = tune(
        inp.prepared.corpus,
        inp.prepared,
        inp.config,
        args.objective,
        args.trials,
        args.seed,
        callback=progress,
        space=space,
        set_args=inp.set_args,
        known=inp.known,
    )
    write_error: ConfigError | None = None
    if args.out:
        suite_name = ", ".join(str(s) for s in args.suite)
        try:
            write_output(args.out, tuned_toml(result, kb=str(args.ckf), suite=suite_name), "--out")
        except ConfigError as exc:
            write_error = exc  # said after the result is printed: a long study is not lost
    if args.json:
        doc = tune_report(result)
        doc["best"]["regressions"] = [_regression_dict(f) for f in result.best.regressions]
        doc["no_feasible_trial"] = no_feasible_message(result)
        doc["operator_decisions"] = decisions_doc(inp.decisions)
        out(dumps(doc) + "\n")
    else:
        _print_result(result, inp.config, saved=args.out if args.out and write_error is None else None)
    # -- experiment history (crp-inspect history; docs/decisions/history.md) ----------------------------
    from crp_core.cli.history import record_run, tune_summary

    record_run(args, "tune", inp, result.best.metrics, config=result.best_config, summary=tune_summary(result))
    # -- end experiment history --------------------------------------------------------------------------
    if write_error is not None:
        sys.stdout.flush()
        raise write_error
    return 0


def _engineer_space(args: argparse.Namespace) -> tuple[Param, ...] | None:
    """The space of ``--param`` and ``--space`` (None: neither given, the default space), checked."""
    from crp_core.analysis.tune_space import combine_space, param_from_flag, read_space_file

    if not args.param and not args.space:
        return None
    flags = [param_from_flag(item) for item in args.param]
    from_file = read_space_file(args.space) if args.space else ()
    pinned = [a.split("=", 1)[0].strip() for a in args.set_args]
    return combine_space(flags, from_file, pinned=pinned)


def _feasibility(result: TuneResult) -> str:
    """The best trial's feasibility, saying when a feasible trial still lowers a scenario's recall."""
    best = result.best
    if not best.feasible:
        return "NOT feasible: " + ", ".join(f"{k} {v:g}" for k, v in best.violations.items() if v > 0)
    drops = best.recall_drops
    if not drops:
        return "feasible"
    names = ", ".join(f"{visible(f.scenario)} {_num(f.bound)} -> {_num(f.value)}" for f in drops)
    return (
        f"feasible under {result.objective.name}, which counts no per-scenario regression, yet recall fell in "
        f"{len(drops)} scenario(s): {names}; --objective no_regression refuses such trials"
    )


def _num(v: float | None) -> str:
    return "undefined" if v is None else f"{v:g}"


def _regression_dict(f: GateFailure) -> dict[str, object]:
    return {"scenario": f.scenario, "metric": f.metric, "value": f.value, "start": f.bound}


def _print_result(result: TuneResult, base: CRPConfig, *, saved: str | None) -> None:
    from crp_core.analysis.tune import no_feasible_message

    out = sys.stdout.write
    best = result.best
    out("searched: " + ", ".join(visible(p.describe()) for p in result.space) + "\n")
    out(
        f"\nbest: trial {best.number} (value {'/'.join(f'{v:.4f}' for v in best.values)}, "
        f"{_feasibility(result)}); "
        f"the start was {'/'.join(f'{v:.4f}' for v in result.baseline.values)}\n"
    )
    changes = base.diff(result.best_config)
    for k, (a, b) in changes.items():
        out(f"  {k}: {a} -> {b}\n")
    if not changes:
        out("  (no change from the starting configuration)\n")
    if result.simplified is not None and result.simplified.reverted:
        out(
            f"  left at the start, as no suite metric moved with them ({result.simplified.runs} more suite runs): "
            + ", ".join(result.simplified.reverted)
            + "\n"
        )
    out("\n" + metrics_table(best.metrics) + "\n")
    if best.regressions:
        out(
            f"\nworse than at the start in {len(best.regressions)} scenario metric(s) (check --baseline with a "
            "baseline recorded at the starting config would fail; --objective no_regression avoids them):\n"
        )
        for f in best.regressions:
            out(f"  - {visible(f.scenario)}: {f.metric} {_num(f.value)} (start {_num(f.bound)})\n")
    if (why := no_feasible_message(result)) is not None:
        out(f"\n{visible(why)}\n")
    if saved:
        out(f"\nbest configuration (the keys that differ from the defaults) saved to {visible(saved)}\n")
    out(f"\n{len(result.trials)} trials in {result.elapsed_ms / 1e3:.1f} s\n")
