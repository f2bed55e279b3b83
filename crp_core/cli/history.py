"""``crp-inspect history``: the experiments kept in the decision database (docs/decisions/history.md).

* ``history [--db PATH] [--json] [--kb NAME] [--suite NAME] [--kind K] [--limit N] [--offset N]``: the
  experiments, newest first (``--kb`` / ``--suite``: a name or a fingerprint);
* ``history --compare ID ID ...``: their metrics side by side, then the configuration keys any of them
  changed from the defaults.

``--db`` defaults to ``$CRP_INSPECT_TRIAGE_DB``, else ``.crp_triage.sqlite`` (the dashboard's default).
A database that does not exist holds no experiments: nothing is created by reading. :func:`record_run` is
what ``check``, ``tune`` and ``sweep`` call after a successful run (unless ``--no-history`` or
``$CRP_INSPECT_HISTORY=off``); a history that cannot be written is said on stderr, the run's exit status
is kept.
"""

from __future__ import annotations

import argparse
import getpass
import os
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from crp_core.cli.common import visible
from crp_core.errors import CRPError

if TYPE_CHECKING:
    from crp_core.analysis.evaluate import PreparedSuite
    from crp_core.analysis.metrics import SuiteMetrics
    from crp_core.analysis.tune import TuneResult
    from crp_core.cli.common import Subparsers
    from crp_core.cli.operator_decisions import OperatorDecisions
    from crp_core.config import CRPConfig
    from crp_core.history.records import Experiment
    from crp_core.model import KnowledgeBase


class RunInputs(Protocol):
    """What a suite command loaded (``crp_core.cli.check.SuiteInputs``): the knowledge base, the prepared
    suite, the base configuration and the ``--set`` items."""

    @property
    def kb(self) -> KnowledgeBase: ...
    @property
    def prepared(self) -> PreparedSuite: ...
    @property
    def config(self) -> CRPConfig: ...
    @property
    def set_args(self) -> tuple[str, ...]: ...
    @property
    def decisions(self) -> OperatorDecisions: ...


#: the metric columns of the listing
LIST_METRICS = ("recall.mean", "leaks.total", "wrong_winners.total", "tokens.mean")
NOTE_CHARS = 40


def register(subparsers: Subparsers) -> None:
    from crp_core.history import KINDS, MAX_LIST

    p = subparsers.add_parser(
        "history",
        help="list the experiments kept (check, sweep, tune, dashboard suite runs) or compare some",
        description="List the experiments kept in the decision database, newest first, or compare some side "
        "by side (--compare). The database is --db, else $CRP_INSPECT_TRIAGE_DB, else .crp_triage.sqlite.",
    )
    p.add_argument("--db", metavar="PATH", default=None, help="the database (an SQLite file or a postgresql:// URL)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--kb", metavar="NAME", default=None, help="only this knowledge base (file name or fingerprint)")
    p.add_argument("--suite", metavar="NAME", default=None, help="only this suite (folder name or fingerprint)")
    p.add_argument("--kind", choices=KINDS, default=None, help="only this kind of experiment")
    p.add_argument("--limit", type=int, default=20, metavar="N", help=f"at most N experiments (1 to {MAX_LIST})")
    p.add_argument("--offset", type=int, default=0, metavar="N", help="skip the N newest first (paging)")
    p.add_argument("--compare", type=int, nargs="+", metavar="ID", default=None, help="compare these experiments")
    p.set_defaults(handler=_handle)


def add_history_args(p: argparse.ArgumentParser) -> None:
    """``--no-history`` and ``--history-note`` (check, tune, sweep)."""
    p.add_argument(
        "--no-history",
        action="store_true",
        help="do not keep this run in the experiment history (crp-inspect history)",
    )
    p.add_argument("--history-note", metavar="TEXT", default="", help="a note kept with this run in the history")


def _db(args: argparse.Namespace) -> str:
    from crp_core.history import history_db_path

    return str(args.db or history_db_path())


def _absent(target: str) -> bool:
    return "://" not in target and not os.path.exists(target)


def _handle(args: argparse.Namespace) -> int:
    from crp_core.history import ExperimentStore
    from crp_core.report import dumps

    target = _db(args)
    if _absent(target):
        found: list[Experiment] = []
        if args.compare:
            raise CRPError(f"no experiment history at {target} (the database does not exist)")
    else:
        with ExperimentStore(target, create=False, readonly=True) as store:
            if args.compare:
                found = store.get(args.compare)
            else:
                found = store.list(kb=args.kb, suite=args.suite, kind=args.kind, limit=args.limit, offset=args.offset)
    if args.json:
        doc: dict[str, Any] = {"database": target, "experiments": [e.to_dict() for e in found]}
        sys.stdout.write(dumps(doc) + "\n")
    elif args.compare:
        sys.stdout.write(compare_text(found) + "\n")
    else:
        sys.stdout.write(list_text(found, target) + "\n")
    return 0


def _num(v: object) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.0f}" if v.is_integer() else f"{v:.3f}"
    return visible(v)


def _when(e: Experiment) -> str:
    return (e.recorded_at or "")[:19].replace("T", " ")


def _note(text: str) -> str:
    first = text.splitlines()[0] if text else ""
    return visible(first[:NOTE_CHARS] + ("..." if len(first) > NOTE_CHARS or "\n" in text else ""))


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], right: set[int]) -> list[str]:
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(head)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    body = [line(r).rstrip() for r in rows]
    top = line(head).rstrip()
    return [top, "-" * max([len(top)] + [len(b) for b in body]), *body]


def list_text(found: Sequence[Experiment], target: str) -> str:
    """The listing: one line per experiment, the changed keys counted, a few metrics, the note's start."""
    if not found:
        return f"no experiments in {visible(target)}"
    head = ["id", "recorded (UTC)", "kind", "by", "kb", "suite", "changed", "verdict", *LIST_METRICS, "note"]
    rows = [
        [
            str(e.id),
            _when(e),
            e.kind,
            visible(e.recorded_by),
            visible(e.kb_name or "-"),
            visible(e.suite_name or "-"),
            str(len(e.config_diff)),
            _verdict(e),
            *(_num(e.metrics.get(m)) for m in LIST_METRICS),
            _note(e.note),
        ]
        for e in found
    ]
    right = {0, 6, *range(8, 8 + len(LIST_METRICS))}
    return "\n".join([f"{len(found)} experiment(s) in {visible(target)}, newest first", "", *_table(head, rows, right)])


def _verdict(e: Experiment) -> str:
    """A check's gate verdict as kept ("FAIL 1/51", "PASS", "recorded"); "-" for other runs."""
    got = (e.summary or {}).get("verdict")
    if not isinstance(got, str):
        return "-"
    broken, checked = (e.summary or {}).get("bounds_broken"), (e.summary or {}).get("bounds_checked")
    return f"FAIL {broken}/{checked}" if got == "FAIL" else visible(got)


def _union(maps: Sequence[Mapping[str, Any]]) -> list[str]:
    seen: dict[str, None] = {}
    for m in maps:
        seen.update(dict.fromkeys(m))
    return list(seen)


def compare_text(found: Sequence[Experiment]) -> str:
    """The experiments side by side: who / what / when, every metric, every configuration key changed."""
    cols = [f"#{e.id}" for e in found]
    about = [
        ["kind", *(e.kind for e in found)],
        ["recorded (UTC)", *(_when(e) for e in found)],
        ["by", *(visible(e.recorded_by) for e in found)],
        ["kb", *(visible(e.kb_name or "-") for e in found)],
        ["suite", *(visible(e.suite_name or "-") for e in found)],
    ]
    metrics = [[visible(k), *(_num(e.metrics.get(k)) for e in found)] for k in _union([e.metrics for e in found])]
    right = set(range(1, len(found) + 1))
    out = _table(["", *cols], about, set()) + [""] + _table(["metric", *cols], metrics, right)
    keys = _union([e.config_diff for e in found])
    if keys:
        defaults = {k: e.config_diff[k][0] for e in found for k in e.config_diff}
        rows = [
            [visible(k), _num(defaults[k]), *(_num(e.config_diff[k][1]) if k in e.config_diff else "=" for e in found)]
            for k in keys
        ]
        out += ["", *_table(["config key", "default", *cols], rows, right | {len(found) + 1})]
        out.append("(=: the default)")
    else:
        out += ["", "every experiment ran at the defaults"]
    notes = [f"#{e.id}: {visible(e.note, newlines=False)}" for e in found if e.note]
    return "\n".join(out + ([""] + notes if notes else []))


def os_user() -> str:
    """The operating-system user running the command ("unknown" when it cannot be told)."""
    try:
        return getpass.getuser() or "unknown"
    except (OSError, KeyError, ImportError):
        return "unknown"


def record_run(
    args: argparse.Namespace,
    kind: str,
    inp: RunInputs,
    metrics: SuiteMetrics,
    *,
    config: CRPConfig | None = None,
    summary: Mapping[str, Any] | None = None,
) -> int | None:
    """Keep a successful run of ``check`` / ``tune`` / ``sweep`` in the history (the id, or None when not
    kept): ``config`` (default: the inputs' config with ``--set``) against the defaults, the suite's
    metrics (:meth:`SuiteMetrics.flat`), the OS user; the summary says the operator decisions in force.
    Says where it went, or why not, on stderr."""
    from crp_core.cli.operator_decisions import decisions_doc
    from crp_core.history import Experiment, experiment_inputs, history_enabled, record_experiment

    if getattr(args, "no_history", False) or not history_enabled():
        return None
    used = config if config is not None else inp.config.with_set_args(inp.set_args)
    target = _db(argparse.Namespace(db=None))
    try:
        e = Experiment(
            kind=kind,
            recorded_by=os_user(),
            metrics=metrics.flat(),
            summary={**(summary or {}), "operator_decisions": decisions_doc(inp.decisions)},
            note=str(getattr(args, "history_note", "") or ""),
            origin="cli",
            **experiment_inputs(inp.kb, inp.prepared.suite, used),
        )
        done = record_experiment(target, e)
    except CRPError as exc:
        sys.stderr.write(f"crp-inspect: note: this run was not kept in the experiment history: {exc}\n")
        return None
    sys.stderr.write(f"kept as experiment #{done.id} in {visible(target)} (crp-inspect history)\n")
    return done.id


def tune_summary(result: TuneResult) -> dict[str, Any]:
    """The small summary a tune keeps: objective, trials, seed, the best trial, its values and parameters."""
    best = result.best
    return {
        "objective": result.objective.name,
        "trials": len(result.trials),
        "seed": result.seed,
        "best_trial": best.number,
        "best_values": [float(v) for v in best.values],
        "feasible": best.feasible,
        "params": {k: float(v) for k, v in best.params.items()},
    }


def sweep_summary(keys: Sequence[str], points: int, best: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The small summary a sweep keeps: the keys swept, the number of grid points and, when the sweep names
    one, its best point (key -> value). For ``record_run(args, "sweep", inputs, metrics, summary=...)``,
    with the metrics of the run at the sweep's base configuration."""
    out: dict[str, Any] = {"keys": [str(k) for k in keys], "points": int(points)}
    if best is not None:
        out["best"] = {str(k): v for k, v in best.items()}
    return out
