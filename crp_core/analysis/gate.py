"""The regression gate: a suite run checked against each scenario's thresholds and a recorded
baseline (docs/decisions/suites.md §5; ``crp-inspect check``).

A **threshold** is a bound in a scenario's ``expect`` table (:data:`crp_core.model.GATE_THRESHOLDS`:
``min_recall``, ``max_leaks``, ..., ``max_tokens``); a metric beyond it fails. A **baseline** is a
metrics file written by ``crp-inspect check --write-baseline`` (the shape of
:func:`crp_core.analysis.reports.suite_metrics_report`); every metric marked ``vs_baseline`` in
:data:`crp_core.analysis.metrics.METRICS` fails when it is worse than the baseline's value for the
same scenario (recall lower, a count higher; ``tolerance`` absorbs float noise, and a metric's own
tolerance in ``tolerances`` - ``check --tolerance METRIC=X`` - lets a noisy metric move by X from the
baseline before it fails). A scenario of the baseline missing from the suite, or one new to it, is a
note, not a failure.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from crp_core.analysis.evaluate import KnownMode, PreparedSuite, SuiteRun, run_suite
from crp_core.analysis.metrics import METRICS, ScenarioMetrics, SuiteMetrics
from crp_core.analysis.suite import Suite
from crp_core.config import CORPUS_KEYS, CRPConfig, layered_config, show_value
from crp_core.errors import MAX_PROBLEMS, ConfigError, CRPError, Problem, ValidationError, capped
from crp_core.io.ckf.sdk_facts import is_finite_number
from crp_core.io.located import json_error_message, json_with_lines
from crp_core.model import GATE_THRESHOLDS
from crp_core.support.files import read_regular_file

__all__ = [
    "GateFailure",
    "GateResult",
    "MetricsBaseline",
    "gate",
    "read_baseline",
    "baseline_from_report",
    "BASELINE_KIND",
    "TOLERANCE",
    "parse_tolerances",
    "UnexercisedKey",
    "unexercised_keys",
]

#: ``kind`` of the metrics report of ``crp-inspect check --json``, also its ``--write-baseline`` file
#: (:func:`crp_core.analysis.reports.suite_metrics_report`): the baseline the gate reads
SUITE_METRICS_KIND = "crp-inspect/suite-metrics"
BASELINE_KIND = SUITE_METRICS_KIND
#: the layout of the metrics file this gate reads (``version`` of the file; absent is read as this one)
BASELINE_VERSION = 1
_BY_NAME = {m.name: m for m in METRICS}
#: the default tolerance of every comparison: float noise only
TOLERANCE = 1e-9


@dataclass(frozen=True)
class GateFailure:
    """One metric of one scenario beyond its bound: ``source`` is the threshold's key
    (``"min_recall"``) or ``"baseline"``."""

    scenario: str
    metric: str
    value: float | None
    bound: float
    source: str
    kind: Literal["threshold", "baseline"]
    #: the metric's own tolerance against the baseline (``check --tolerance``); None: the default
    tolerance: float | None = None

    @property
    def message(self) -> str:
        shown = "undefined" if self.value is None else f"{self.value:g}"
        if self.kind == "baseline":
            allowed = "" if self.tolerance is None else f" by more than its tolerance {self.tolerance:g}"
            return f"{self.scenario}: {self.metric} {shown} is worse than the baseline's {self.bound:g}{allowed}"
        op = ">=" if self.source.startswith("min_") else "<="
        return f"{self.scenario}: {self.metric} {shown} breaks expect.{self.source} (must be {op} {self.bound:g})"


@dataclass(frozen=True)
class MetricsBaseline:
    """Per-scenario metric values recorded by an earlier check."""

    scenarios: Mapping[str, Mapping[str, float | None]] = field(hash=False)
    ckf_fingerprint: str | None = None
    source: str = ""
    #: operator decisions in force when it was recorded, and their digest (None: the file does not say)
    decisions_in_force: int | None = None
    decisions_digest: str | None = None


@dataclass(frozen=True)
class GateResult:
    failures: tuple[GateFailure, ...]
    notes: tuple[str, ...]
    checked: int  # bounds compared (thresholds + baseline values)

    @property
    def passed(self) -> bool:
        return not self.failures


def _decisions_note(baseline: MetricsBaseline, decisions: tuple[int, str] | None) -> str:
    """The note for a baseline recorded with other operator decisions in force than ``decisions`` (this
    run's count and digest), or silent about them while this run applies some; "" when nothing to say."""
    if decisions is None:
        return ""
    count, digest = decisions
    before = baseline.decisions_in_force
    if before is None:
        if not count:
            return ""
        return (
            f"the baseline {baseline.source} does not say which operator decisions were in force; this run "
            f"applies {count}"
        )
    other = before != count or (baseline.decisions_digest is not None and baseline.decisions_digest != digest)
    if not other:
        return ""
    return (
        f"the baseline {baseline.source} was recorded with other operator decisions in force ({before} there, "
        f"{count} in this run)"
    )


def gate(
    metrics: SuiteMetrics,
    suite: Suite,
    baseline: MetricsBaseline | None = None,
    *,
    ckf_fingerprint: str | None = None,
    decisions: tuple[int, str] | None = None,
    tolerance: float = TOLERANCE,
    tolerances: Mapping[str, float] | None = None,
) -> GateResult:
    """Check every scenario's metrics against its thresholds and against ``baseline``.

    ``tolerance`` absorbs float noise in every comparison; ``tolerances`` (metric -> amount, from
    :func:`parse_tolerances`) widens the baseline comparison of those metrics only: an ``expect``
    threshold is the bound its author wrote and keeps the default. A baseline recorded over another CKF, or
    with other operator decisions in force than this run's (``decisions``: their count and digest), or
    silent about them while this run applies some, gets a note."""
    failures: list[GateFailure] = []
    notes: list[str] = []
    checked = _threshold_failures(metrics, suite, tolerance, failures)
    if baseline is None and tolerances:
        notes.append(f"a tolerance ({', '.join(tolerances)}) widens only a baseline comparison: no baseline given")
    if baseline is not None:
        if ckf_fingerprint and baseline.ckf_fingerprint and ckf_fingerprint != baseline.ckf_fingerprint:
            notes.append(
                f"the baseline {baseline.source} was recorded over another CKF (fingerprint "
                f"{baseline.ckf_fingerprint[:12]}, this one {ckf_fingerprint[:12]})"
            )
        note = _decisions_note(baseline, decisions)
        if note:
            notes.append(note)
        names = {sm.name for sm in metrics.scenarios}
        for name in baseline.scenarios:
            if name not in names:
                notes.append(f"scenario {name!r} of the baseline is not in the suite")
        own = dict(tolerances or {})
        checked += _baseline_failures(metrics, baseline, (tolerance, own), failures, notes)
    return GateResult(tuple(failures), tuple(notes), checked)


def _threshold_failures(metrics: SuiteMetrics, suite: Suite, tolerance: float, failures: list[GateFailure]) -> int:
    """Each scenario's metrics against its ``expect`` thresholds: failures appended, checks counted."""
    checked = 0
    for sm in metrics.scenarios:
        expect = suite.get(sm.name).expect
        for key, metric, how in GATE_THRESHOLDS:
            if key not in expect.thresholds:
                continue
            bound = float(expect.thresholds[key])
            value = sm.value(metric)
            checked += 1
            bad = value is None or (value < bound - tolerance if how == "min" else value > bound + tolerance)
            if bad:
                failures.append(GateFailure(sm.name, metric, value, bound, key, "threshold"))
    return checked


def _baseline_failures(
    metrics: SuiteMetrics,
    baseline: MetricsBaseline,
    tolerance: tuple[float, Mapping[str, float]],
    failures: list[GateFailure],
    notes: list[str],
) -> int:
    """Each scenario's metrics against the baseline's (``tolerance``: the default and each metric's own):
    failures and new scenarios appended, checks counted."""
    default, own = tolerance
    checked = 0
    for sm in metrics.scenarios:
        base = baseline.scenarios.get(sm.name)
        if base is None:
            notes.append(f"scenario {sm.name!r} is new (not in the baseline)")
            continue
        for m in METRICS:
            if not m.vs_baseline or base.get(m.name) is None:
                continue
            bound = float(base[m.name])  # type: ignore[arg-type]  # None excluded above
            value = sm.value(m.name)
            checked += 1
            tol = max(own.get(m.name, default), default)
            worse = value is None or (value < bound - tol if m.better == "higher" else value > bound + tol)
            if worse:
                failures.append(GateFailure(sm.name, m.name, value, bound, "baseline", "baseline", own.get(m.name)))
    return checked


def parse_tolerances(items: Sequence[str]) -> dict[str, float]:
    """``METRIC=X`` items (``check --tolerance``, repeatable) -> metric -> X: how far a metric may move
    from the baseline, the worse way, before the gate fails it. The metric is one the gate compares
    with a baseline (:data:`crp_core.analysis.metrics.METRICS` ``vs_baseline``); X a finite number >= 0;
    a metric given twice, an unknown one or a bad X raises :class:`ConfigError` naming the item."""
    gated = [m.name for m in METRICS if m.vs_baseline]
    out: dict[str, float] = {}
    for item in items:
        name, sep, raw = item.partition("=")
        name = name.strip()
        if not sep:
            raise ConfigError(f"--tolerance expects METRIC=X, got {show_value(item)}")
        if name not in _BY_NAME:
            raise ConfigError(
                f"--tolerance {show_value(item)}: unknown metric {show_value(name)}; expected one of {', '.join(gated)}"
            )
        if not _BY_NAME[name].vs_baseline:
            raise ConfigError(
                f"--tolerance {show_value(item)}: {name} is not compared with a baseline (bound it in the "
                f"scenario's expect table); metrics with a tolerance: {', '.join(gated)}"
            )
        try:
            value = float(raw.strip())
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and value >= 0):
            raise ConfigError(f"--tolerance {show_value(item)}: X must be a finite number >= 0, got {show_value(raw)}")
        if name in out:
            raise ConfigError(f"--tolerance {show_value(item)}: {name} is given twice")
        out[name] = value
    return out


def _number(v: Any) -> bool:
    """None or a finite number a float holds (a JSON integer of 400 digits overflows float())."""
    return v is None or is_finite_number(v)


def baseline_from_report(
    doc: Any, source: str = "", *, locate: Callable[[tuple[str | int, ...]], int] | None = None
) -> MetricsBaseline:
    """The :class:`MetricsBaseline` of a metrics report (a parsed JSON document); a bad document
    raises :class:`ValidationError` naming the field (and its line, given ``locate(path) -> line``
    over the document's text; at most :data:`crp_core.errors.MAX_PROBLEMS` listed)."""
    what = f"baseline {source} refused" if source else "baseline refused"
    line = locate or _no_line
    if not isinstance(doc, Mapping) or doc.get("kind") != BASELINE_KIND:
        where = line(("kind",)) if isinstance(doc, Mapping) else 0
        raise ValidationError(
            what,
            [
                Problem(
                    where,
                    "kind",
                    f"not a metrics file of crp-inspect check (expected kind "
                    f"{BASELINE_KIND!r}; write one with --write-baseline)",
                )
            ],
        )
    version = doc.get("version", BASELINE_VERSION)
    if isinstance(version, bool) or version != BASELINE_VERSION:  # a newer layout is not read as this one
        raise ValidationError(
            what,
            [
                Problem(
                    line(("version",)),
                    "version",
                    f"metrics file version {show_value(version)}; this crp-inspect reads version {BASELINE_VERSION}",
                )
            ],
        )
    scen = doc.get("scenarios")
    if not isinstance(scen, Mapping):
        raise ValidationError(
            what,
            [
                Problem(
                    line(("scenarios",)) if "scenarios" in doc else 0,
                    "scenarios",
                    "must be an object: scenario name -> its metrics",
                )
            ],
        )
    problems: list[Problem] = []
    total = 0

    def bad(path: tuple[str | int, ...], fieldname: str, msg: str) -> None:
        nonlocal total
        total += 1
        if len(problems) < MAX_PROBLEMS:
            problems.append(Problem(line(path), fieldname, msg))

    out: dict[str, dict[str, float | None]] = {}
    for name, body in scen.items():
        vals = body.get("metrics") if isinstance(body, Mapping) else None
        if not isinstance(vals, Mapping):
            at: tuple[str | int, ...] = ("scenarios", name) + (("metrics",) if isinstance(body, Mapping) else ())
            bad(at, f"scenarios.{name}.metrics", "must be an object: metric -> value")
            continue
        row: dict[str, float | None] = {}
        for k, v in vals.items():
            if k not in _BY_NAME:
                continue  # metrics added later are ignored by an older gate, and vice versa
            if not _number(v):
                bad(
                    ("scenarios", name, "metrics", k),
                    f"scenarios.{name}.metrics.{k}",
                    f"must be a number or null, got {show_value(v)}",
                )
                continue
            row[k] = None if v is None else float(v)
        out[str(name)] = row
    if problems:
        raise ValidationError(what, capped(sorted(problems, key=lambda p: p.line), total))
    fp = doc.get("ckf", {}).get("fingerprint") if isinstance(doc.get("ckf"), Mapping) else None
    od = doc.get("operator_decisions")
    n = od.get("in_force") if isinstance(od, Mapping) else None
    digest = od.get("digest") if isinstance(od, Mapping) else None
    return MetricsBaseline(
        scenarios=out,
        ckf_fingerprint=fp if isinstance(fp, str) else None,
        source=source,
        decisions_in_force=n if isinstance(n, int) and not isinstance(n, bool) and n >= 0 else None,
        decisions_digest=digest if isinstance(digest, str) else None,
    )


#: largest baseline metrics file read (a few hundred bytes per scenario)
MAX_BASELINE_BYTES = 64 * 1024 * 1024


def _no_line(path: tuple[str | int, ...]) -> int:
    return 0


def read_baseline(path: str | os.PathLike[str]) -> MetricsBaseline:
    """Load a metrics file written by ``crp-inspect check --write-baseline``.

    Only a regular file is read (a FIFO, socket, device or link loop is refused at once), at most
    :data:`MAX_BASELINE_BYTES`; problems name their line (the document is parsed again with
    positions only when there is one)."""
    path = os.fspath(path)
    what = f"baseline {path} refused"
    data = read_regular_file(path, max_bytes=MAX_BASELINE_BYTES, what="baseline")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValidationError(what, [Problem(0, "file", f"not UTF-8 text (offset {exc.start})")]) from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValidationError(what, [Problem(exc.lineno, "json", f"invalid JSON: {json_error_message(exc)}")]) from None
    except (ValueError, RecursionError) as exc:  # too deep, or an integer beyond 4300 digits
        raise ValidationError(what, [Problem(0, "json", f"invalid JSON: {str(exc)[:200]}")]) from None
    located: list[Callable[[tuple[str | int, ...]], int]] = []

    def locate(p: tuple[str | int, ...]) -> int:
        if not located:
            try:
                located.append(json_with_lines(text)[1])
            except (ValueError, RecursionError):
                located.append(_no_line)
        return located[0](p)

    return baseline_from_report(doc, path, locate=locate)


# ---- configuration keys no scenario exercises -------------------------------------------------------
@dataclass(frozen=True)
class UnexercisedKey:
    """A configuration key the user changed (``--config`` / ``--set``) that no scenario of the suite
    exercises: set back to the value each scenario would have without the change, no scenario's
    envelope (facts and order) or metric moves. ``value`` is the value checked, ``default`` the default."""

    key: str
    value: Any
    default: Any


def unexercised_keys(
    prepared: PreparedSuite, run: SuiteRun, *, known: KnownMode = "auto"
) -> tuple[UnexercisedKey, ...]:
    """The keys of ``run``'s configuration (its base config with its ``set_args``) that differ from the
    defaults and that no scenario exercises (docs/decisions/suites.md §5).

    For each such key and each scenario, in suite order: the value the scenario would run with without
    the user's change is its own ``config`` table's, else the default; a scenario whose resolved value
    is already that one is not reached by the change. A reached scenario is run again with only that key
    set back (every other setting as in ``run``); the first whose envelope or metrics (``overlap`` aside,
    which follows the envelope) differ shows the key exercised, and the rest are not run. A re-run the
    pipeline refuses counts as exercised. Cost: at most one run of each reached scenario per changed key."""
    changed = CRPConfig().diff(run.config.with_set_args(run.set_args))
    out: list[UnexercisedKey] = []
    for key, (default, value) in changed.items():
        if key in CORPUS_KEYS:  # the corpus's own (its model): exercised by every scenario, never re-run here
            continue
        if not _exercised(prepared, run, key, known):
            out.append(UnexercisedKey(key, value, default))
    return tuple(out)


def _exercised(prepared: PreparedSuite, run: SuiteRun, key: str, known: KnownMode) -> bool:
    for i, item in enumerate(prepared.suite):
        without = layered_config(CRPConfig(), item.scenario.config).diff(run.configs[i])
        if key not in without:
            continue  # the change does not reach this scenario (its own config table sets the key)
        # the one scenario, sharing the prepared suite's caches (the whole-CKF scans); no reference run
        one = dataclasses.replace(
            prepared,
            suite=Suite((item,), prepared.suite.source),
            vectors=(prepared.vectors[i],),
            nows=(prepared.nows[i],),
        )
        try:
            again = run_suite(
                one,
                run.config,
                set_args=run.set_args,
                scenario_overrides={key: without[key][0]},
                reference=False,
                known=known,
                keep_results=False,
            )
        except CRPError:
            return True
        if _moved(run.metrics.scenario(item.name), again.metrics.scenarios[0]):
            return True
    return False


def _moved(a: ScenarioMetrics, b: ScenarioMetrics) -> bool:
    """The envelope (facts, order) or a metric other than ``overlap`` differs."""
    if a.envelope != b.envelope:
        return True
    va, vb = a.values(), b.values()
    return any(va[m] != vb[m] for m in va if m != "overlap")
