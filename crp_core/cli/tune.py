"""``crp-inspect tune``: Optuna search over a suite (docs/decisions/suites.md §6).

Searches the TTL per source type, ``cdr_min_relevance``, ``contradiction_similarity`` and
``stale_floor`` (keys given with ``--set`` stay fixed) for ``--objective`` with TPE at ``--seed``,
``--trials`` trials in all (trial 0 is the starting configuration). ``--json`` prints
:func:`crp_core.report.tune_report` (``{"best": {"config", "metrics", ...}, "trials": [...]}``);
otherwise one line per trial as it finishes, then the best trial's configuration changes.
``--out best.toml`` saves the best configuration (a full config: ``crp-inspect check --config best.toml``).
"""
from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from crp_core.cli.check import add_suite_args, load_inputs, metrics_table
from crp_core.errors import ConfigError

if TYPE_CHECKING:
    from crp_core.analysis.tune import TrialRecord
    from crp_core.cli.common import Subparsers

_COLS = ("recall.mean", "leaks.total", "wrong_winners.total", "expired.total", "contradictions.total",
         "tokens.mean")


def register(subparsers: Subparsers) -> None:
    from crp_core.analysis.tune import OBJECTIVES

    p = subparsers.add_parser(
        "tune", help="search TTLs, the relevance gate, contradiction similarity and stale floor over a suite",
        description="Auto-tune the configuration over a suite of labelled scenarios with Optuna (TPE, fixed "
                    "seed). Objectives: " + "; ".join(f"{o.name}: {o.description}" for o in OBJECTIVES.values()))
    add_suite_args(p)
    p.add_argument("--objective", default="recall", choices=tuple(OBJECTIVES), help="what to optimise (default recall)")
    p.add_argument("--trials", type=int, required=True, metavar="N", help="number of trials, the start included")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="TPE sampler seed (default 0)")
    p.add_argument("--json", action="store_true", help="print the tuning report (one JSON object)")
    p.add_argument("--out", metavar="TOML", default=None, help="save the best configuration as TOML")
    p.set_defaults(handler=_handle)


def _line(t: TrialRecord) -> str:
    vals = "/".join(f"{v:.4f}" for v in t.values)
    cells = " ".join(f"{'-' if (v := t.metrics.get(c)) is None else format(v, '.3f'):>12}" for c in _COLS)
    return f"{t.number:>5} {vals:>16} {'yes' if t.feasible else 'no':>8} {cells}"


def _handle(args: argparse.Namespace) -> int:
    from crp_core.analysis.tune import tune
    from crp_core.report import dumps, tune_report

    if not 1 <= args.trials <= 10_000:
        raise ConfigError(f"--trials must be between 1 and 10000, got {args.trials}")
    inp = load_inputs(args)
    out = sys.stdout.write
    live = not args.json
    if live:
        out(f"tuning {args.objective} over {len(inp.prepared.suite)} scenario(s), {args.trials} trial(s), "
            f"seed {args.seed}\n\n{'trial':>5} {'value':>16} {'feasible':>8} "
            + " ".join(f"{c:>12}" for c in _COLS) + "\n")

    def progress(t: TrialRecord, done: int, total: int) -> None:
        if live:
            out(_line(t) + "\n")
            sys.stdout.flush()

    result = tune(inp.prepared.corpus, inp.prepared, inp.config, args.objective, args.trials, args.seed,
                  callback=progress, set_args=inp.set_args, known=inp.known)
    if args.out:
        try:
            result.best_config.save(args.out)
        except OSError as exc:
            raise ConfigError(f"--out: cannot write {args.out}: {exc.strerror or exc}") from None
    if args.json:
        out(dumps(tune_report(result)) + "\n")
        return 0
    best = result.best
    out(f"\nbest: trial {best.number} (value {'/'.join(f'{v:.4f}' for v in best.values)}, "
        f"{'feasible' if best.feasible else 'NOT feasible: ' + str(dict(best.violations))}); "
        f"the start was {'/'.join(f'{v:.4f}' for v in result.baseline.values)}\n")
    changes = inp.config.diff(result.best_config)
    for k, (a, b) in changes.items():
        out(f"  {k}: {a} -> {b}\n")
    if not changes:
        out("  (no change from the starting configuration)\n")
    out("\n" + metrics_table(best.metrics) + "\n")
    if args.out:
        out(f"\nbest configuration saved to {args.out}\n")
    out(f"\n{len(result.trials)} trials in {result.elapsed_ms / 1e3:.1f} s\n")
    return 0
