"""``crp-inspect sweep``: a suite run at every point of a round grid over one or two keys
(docs/reference/cli.md#sweep, :mod:`crp_core.analysis.sweep_grid`).

``--param KEY=LO:HI:N`` (once or twice) gives each axis: about ``N`` round values between ``LO`` and
``HI`` plus the key's current value (the base configuration's, ``--set`` included; for ``now`` and
``fanout_width`` the value every scenario shares). Output: with one key, one line per value; with two,
the matrix of ``--metric`` (default ``recall.mean``); ``--json`` the whole grid
(:func:`~crp_core.analysis.sweep_grid.grid_report`), ``--csv`` one row per point with every suite metric.
Progress goes to stderr on a terminal only. Every error names its flag and exits 2.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from datetime import datetime
from typing import TYPE_CHECKING, Any

from crp_core.cli.check import add_suite_args, load_inputs
from crp_core.cli.common import TerminalProgress, visible
from crp_core.cli.operator_decisions import decisions_doc, decisions_line
from crp_core.errors import ConfigError

if TYPE_CHECKING:
    from crp_core.analysis.sweep_grid import AxisSpec, SuiteGrid
    from crp_core.cli.common import Subparsers

#: the columns of the one-key table
_COLS = ("recall.mean", "leaks.total", "wrong_winners.total", "expired.total", "contradictions.total", "tokens.mean")


def register(subparsers: Subparsers) -> None:
    p = subparsers.add_parser(
        "sweep",
        help="run a suite over a round grid of one or two keys (now and fanout_width included)",
        description="Run every scenario of a suite at each point of a grid: --param KEY=LO:HI:N once (one key) "
        "or twice (a 2-D grid). N is a target: the grid has about N round values (multiples of 1, 2 or 5 "
        "times a power of ten; calendar steps for now) plus the key's current value. Keys: configuration "
        "keys (dotted for the tables, e.g. ttl_days.news), now (dates or times, e.g. "
        "now=2026-01-01:2027-12-31:12) and fanout_width.",
    )
    add_suite_args(p)
    p.add_argument(
        "--param",
        action="append",
        required=True,
        metavar="KEY=LO:HI:N",
        help="a swept key, its range and the target number of values (give it twice for a 2-D grid)",
    )
    p.add_argument(
        "--metric",
        default="recall.mean",
        metavar="NAME",
        help="the suite metric of the text matrix of a 2-D sweep (default recall.mean; e.g. leaks.total)",
    )
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print the whole grid (one JSON object)")
    fmt.add_argument("--csv", action="store_true", help="print one CSV row per point (baseline first)")
    p.set_defaults(handler=_handle)


def _specs(params: list[str]) -> list[AxisSpec]:
    from crp_core.analysis.sweep_grid import parse_axis

    if len(params) > 2:
        raise ConfigError(f"--param: a sweep has one or two keys, got {len(params)}")
    specs = []
    for text in params:
        try:
            specs.append(parse_axis(text))
        except ConfigError as exc:
            raise ConfigError(f"--param {visible(text)}: {exc}") from None
    if len(specs) == 2 and specs[0].key == specs[1].key:
        raise ConfigError(f"--param: the two swept keys are both {specs[0].key!r}")
    return specs


def _check_metric(name: str) -> None:
    from crp_core.analysis.metrics import METRICS

    keys = [f"{m.name}.{s}" for m in METRICS for s in ("mean", "worst", "total") if s != "total" or not m.fraction]
    if name not in keys:
        raise ConfigError(f"--metric: unknown suite metric {visible(name)!r}; expected one of {', '.join(keys)}")


def _handle(args: argparse.Namespace) -> int:
    from crp_core.analysis.sweep_grid import facts_after, grid_axis, grid_report, suite_current, sweep_grid
    from crp_core.report import dumps

    specs = _specs(args.param)  # refused before the CKF loads
    _check_metric(args.metric)
    inp = load_inputs(args)
    effective = inp.config.with_set_args(inp.set_args)
    axes = []
    for text, spec in zip(args.param, specs):
        current = suite_current(inp.prepared.suite, effective, spec.key, inp.prepared.nows)
        try:
            axes.append(grid_axis(spec, current))
        except ConfigError as exc:
            raise ConfigError(f"--param {visible(text)}: {exc}") from None
    shown = TerminalProgress("sweep", "suite runs")
    try:
        grid = sweep_grid(
            inp.prepared,
            inp.config,
            axes,
            set_args=inp.set_args,
            known=inp.known,
            progress=lambda done, total, _label: shown(done, total),
        )
    except ConfigError as exc:
        raise ConfigError(f"--param: {exc}") from None
    if args.json:
        doc = grid_report(grid, suite_source=inp.prepared.suite.source, ckf_source=inp.kb.source, kb=inp.kb)
        doc["operator_decisions"] = decisions_doc(inp.decisions)
        sys.stdout.write(dumps(doc) + "\n")
    elif args.csv:
        sys.stdout.write(csv_text(grid))
    else:
        sys.stdout.write(decisions_line(decisions_doc(inp.decisions)))
        _print_text(grid, args.metric, f"{len(inp.prepared.suite)} scenario(s) over {visible(inp.kb.source)}")
        _print_facts_after(facts_after(inp.kb, grid))
    # -- experiment history (crp-inspect history; docs/decisions/history.md) ----------------------------
    from crp_core.cli.history import record_run, sweep_summary

    keys = [a.key for a in axes]
    record_run(args, "sweep", inp, grid.baseline.metrics, summary=sweep_summary(keys, len(grid.points)))
    # -- end experiment history --------------------------------------------------------------------------
    return 0


def csv_text(grid: SuiteGrid) -> str:
    """One row per point (the baseline first), the axis keys then every suite metric; text cells that
    would read as a formula neutralised."""
    from crp_core.analysis.sweep_grid import grid_rows
    from crp_core.support.spreadsheet import csv_cell

    rows = grid_rows(grid)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(list(rows[0]))
    for row in rows:
        w.writerow([csv_cell("" if v is None else v) for v in row.values()])
    return buf.getvalue()


def _print_facts_after(after: list[tuple[datetime, int]]) -> None:
    """A time sweep's instants that precede facts of the CKF: their age counts as 0 there (as every run warns),
    so a point before the CKF's last date reads them as fresh."""
    if not after:
        return
    out = sys.stdout.write
    out("\nnote: at these instants some facts of the CKF were not written yet; their age counts as 0 (fresh):\n")
    for when, n in after:
        out(f"  now {_show(when)}: {n} fact(s) dated after it\n")


def _show(v: Any) -> str:
    if isinstance(v, datetime):
        from crp_core.io.timeparse import format_timestamp

        return format_timestamp(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "none"
    return f"{v:g}" if isinstance(v, float) else str(v)


def _num(v: float | None) -> str:
    if v is None:
        return "-"
    return f"{v:.0f}" if float(v).is_integer() else f"{v:.3f}"


def _cells(metrics: dict[str, float | None]) -> str:
    return " ".join(f"{_num(metrics[c]):>{len(c)}}" for c in _COLS)


def _print_text(grid: SuiteGrid, metric: str, what: str) -> None:
    out = sys.stdout.write
    keys = " x ".join(f"{a.key} ({len(a.values)} values)" for a in grid.axes)
    out(f"sweep of {keys}: {len(grid.points)} point(s), {what}; * marks the current value\n\n")
    if len(grid.axes) == 1:
        axis = grid.axes[0]
        width = max(len(axis.key), *(len(_show(v)) + 2 for v in axis.values))
        out(f"{axis.key:>{width}} " + " ".join(c for c in _COLS) + "\n")
        out(f"{'baseline':>{width}} " + _cells(grid.baseline.metrics.flat()) + "\n")
        for p in grid.points:
            mark = "* " if p.values[0] == axis.current else ""
            out(f"{mark + _show(p.values[0]):>{width}} " + _cells(p.metrics) + "\n")
    else:
        rows, cols = grid.axes
        matrix = grid.matrix(metric)
        heads = [("*" if v == cols.current else "") + _show(v) for v in cols.values]
        cw = max(8, *(len(h) for h in heads))
        rw = max(len(rows.key), *(len(_show(v)) + 2 for v in rows.values))
        out(
            f"{metric} (rows: {rows.key}, columns: {cols.key}); baseline {_num(grid.baseline.metrics.flat()[metric])}\n"
        )
        out(f"{'':>{rw}} " + " ".join(f"{h:>{cw}}" for h in heads) + "\n")
        for v, line in zip(rows.values, matrix):
            mark = "* " if v == rows.current else ""
            out(f"{mark + _show(v):>{rw}} " + " ".join(f"{_num(x):>{cw}}" for x in line) + "\n")
    out(f"\n{grid.runs} suite run(s) in {grid.total_ms / 1e3:.1f} s\n")
