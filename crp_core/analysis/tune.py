"""Auto-tuning over a suite with Optuna (docs/decisions/suites.md §6).

``tune(corpus, suite, base_config, objective, trials, seed)`` searches the TTL of each source type,
the relevance gate (``cdr_min_relevance``), the contradiction similarity and the stale floor (docs/reference/
§5 keys; :func:`default_space`) with Optuna's TPE sampler at a fixed seed for a bounded number of
trials. Trial 0 is exactly the base configuration (each range widened to hold the base value,
:func:`space_including`), so the best trial is never worse than where the search started. Every trial
runs the whole suite through :func:`crp_core.analysis.evaluate.run_suite` on the prepared suite (the
corpus and every scenario embedded once), keeps its metrics and its regression gate (the expect
thresholds and trial 0 as the baseline, :func:`gate_vs_start`); ``callback(trial, done, total)`` is
called after each.

Objectives (:data:`OBJECTIVES`): ``recall`` (maximise mean must_include recall, each leak, wrong
winner, scenario over ``max_tokens`` and broken expect bound costing 1), ``no_regression``
(``recall``, and each per-scenario regression against trial 0 costing 1: a feasible trial passes
``check`` against a baseline recorded at the start), ``integrity`` (minimise the facts that should not
reach the model: leaks + wrong winners + expired facts packed + contradictions without a NOTE, less the
mean recall as a tie-break below one failure), and ``recall_tokens`` (two objectives: mean recall up,
mean tokens down, leaks / wrong winners / over-budget scenarios / broken bounds as Optuna constraints)
for a Pareto front (:meth:`TuneResult.pareto`).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import numpy as np

from crp_core.analysis.evaluate import KnownMode, PreparedSuite, Reference, prepare_suite, run_suite
from crp_core.analysis.gate import GateFailure, GateResult, MetricsBaseline, gate
from crp_core.analysis.metrics import METRICS, MetricInfo, SuiteMetrics
from crp_core.analysis.suite import Suite
from crp_core.analysis.tune_simplify import Simplified
from crp_core.analysis.tune_simplify import simplify as simplified
from crp_core.analysis.tune_space import (
    TTL_SCALE,
    TUNING_RANGES,
    Param,
    config_value,
    default_space,
    space_including,
)
from crp_core.config import CRPConfig
from crp_core.errors import ConfigError

if TYPE_CHECKING:
    import optuna

    from crp_core.corpus.embedding import Embedder
    from crp_core.corpus.prepared import Corpus

__all__ = [
    "Param",
    "Objective",
    "OBJECTIVES",
    "objective_named",
    "TrialRecord",
    "TuneResult",
    "tune",
    "default_space",
    "TUNING_RANGES",
    "TTL_SCALE",
    "Direction",
    "SEED_MAX",
    "gate_vs_start",
    "thresholds_broken",
    "regressions",
    "start_baseline",
    "space_including",
    "objective_names",
    "VIOLATIONS",
    "violation_counts",
    "no_feasible_message",
]

#: the seeds the TPE sampler accepts (numpy's RandomState): 0 .. 2**32 - 1
SEED_MAX = 2**32 - 1

Direction = Literal["maximize", "minimize"]


#: ``evaluate(metrics, gate)``: ``gate`` is the suite's gate verdict against trial 0 (None: not computed)
Evaluate = Callable[[SuiteMetrics, "GateResult | None"], tuple[tuple[float, ...], Mapping[str, float]]]


@dataclass(frozen=True)
class Objective:
    """A named objective: ``evaluate(metrics, gate) -> (values, violations)``; ``directions`` per value,
    ``targets`` the suite metric keys the values stand for. ``gate`` (:func:`gate_vs_start`; the built-in
    objectives accept None, then leave it out) adds the ``thresholds`` violation (and, for
    ``no_regression``, ``regressions``)."""

    name: str
    description: str
    directions: tuple[Direction, ...]
    targets: tuple[str, ...]
    evaluate: Evaluate = field(compare=False, repr=False)

    @property
    def multi(self) -> bool:
        return len(self.directions) > 1


def thresholds_broken(g: GateResult | None) -> float:
    """Expect bounds of the gate verdict ``g`` broken, other than ``max_tokens`` (counted as ``over_tokens``)."""
    return 0.0 if g is None else float(sum(1 for f in g.failures if f.kind == "threshold" and f.source != "max_tokens"))


def regressions(g: GateResult | None) -> float:
    """(scenario, metric) pairs of ``g`` worse than at trial 0, on the metrics ``check --baseline`` gates
    (recall lower; leaks, wrong winners, expired, contradictions, duplicates higher)."""
    return 0.0 if g is None else float(sum(1 for f in g.failures if f.kind == "baseline"))


def _violations(m: SuiteMetrics, g: GateResult | None, *, no_regression: bool = False) -> dict[str, float]:
    v = {
        "leaks": float(m.summary["leaks"].total or 0.0),
        "wrong_winners": float(m.summary["wrong_winners"].total or 0.0),
        "over_tokens": float(sum(1 for s in m.scenarios if s.over_tokens)),
    }
    if g is not None:
        v["thresholds"] = thresholds_broken(g)
        if no_regression:
            v["regressions"] = regressions(g)
    return v


def _recall(m: SuiteMetrics) -> float:
    return float(m.summary["recall"].mean or 0.0)


def _recall_objective(m: SuiteMetrics, g: GateResult | None = None) -> tuple[tuple[float, ...], Mapping[str, float]]:
    v = _violations(m, g)
    return (_recall(m) - sum(v.values()),), v


def _no_regression_objective(
    m: SuiteMetrics, g: GateResult | None = None
) -> tuple[tuple[float, ...], Mapping[str, float]]:
    v = _violations(m, g, no_regression=True)
    return (_recall(m) - sum(v.values()),), v


def _integrity_objective(m: SuiteMetrics, g: GateResult | None = None) -> tuple[tuple[float, ...], Mapping[str, float]]:
    v = {"over_tokens": float(sum(1 for s in m.scenarios if s.over_tokens))}
    if g is not None:
        v["thresholds"] = thresholds_broken(g)
    unnoted = sum(1 for s in m.scenarios for c in s.contradictions if not c.noted)
    failures = (
        float(m.summary["leaks"].total or 0.0)
        + float(m.summary["wrong_winners"].total or 0.0)
        + float(m.summary["expired"].total or 0.0)
        + unnoted
    )
    return (failures - _recall(m) + sum(v.values()),), v


def _recall_tokens_objective(
    m: SuiteMetrics, g: GateResult | None = None
) -> tuple[tuple[float, ...], Mapping[str, float]]:
    return (_recall(m), float(m.summary["tokens"].mean or 0.0)), _violations(m, g)


def start_baseline(start: SuiteMetrics) -> MetricsBaseline:
    """Trial 0's per-scenario metrics as a baseline (what ``check --write-baseline`` records at the base config)."""
    return MetricsBaseline(scenarios={s.name: s.values() for s in start.scenarios}, source="trial 0")


def gate_vs_start(metrics: SuiteMetrics, suite: Suite, start: SuiteMetrics | None) -> GateResult:
    """The regression gate of ``crp-inspect check`` on a trial: each scenario's expect thresholds and,
    with ``start`` (trial 0's metrics), the baseline comparison against it. A trial without violations
    therefore passes ``check`` with a baseline recorded at the base configuration."""
    return gate(metrics, suite, start_baseline(start) if start is not None else None)


OBJECTIVES: Mapping[str, Objective] = {
    "recall": Objective(
        "recall",
        "maximise mean must_include recall; each must_exclude leak, wrong winner and scenario over its "
        "max_tokens subtracts 1, and each broken expect bound (max_leaks, max_wrong_winners included) 1 more",
        ("maximize",),
        ("recall.mean",),
        _recall_objective,
    ),
    "no_regression": Objective(
        "no_regression",
        "as recall, and each scenario metric the regression gate compares "
        "that is worse than at trial 0 subtracts 1: a feasible trial passes check against "
        "a baseline recorded at the starting config",
        ("maximize",),
        ("recall.mean",),
        _no_regression_objective,
    ),
    "integrity": Objective(
        "integrity",
        "minimise leaks + wrong winners + expired facts packed + contradictions "
        "without a NOTE (+1 per scenario over max_tokens and per other broken expect bound), "
        "minus the mean recall as a tie-break",
        ("minimize",),
        ("leaks.total", "wrong_winners.total", "expired.total", "contradictions.total"),
        _integrity_objective,
    ),
    "recall_tokens": Objective(
        "recall_tokens",
        "maximise mean recall and minimise mean tokens (a Pareto front); "
        "leaks, wrong winners, scenarios over max_tokens and broken expect bounds are "
        "constraints",
        ("maximize", "minimize"),
        ("recall.mean", "tokens.mean"),
        _recall_tokens_objective,
    ),
}


def _metric_objective(info: MetricInfo) -> Objective:
    """The objective of one suite metric: its mean, maximised when higher is better, else minimised, each
    violation (as ``recall``'s) costing 1 against it; a trial where no scenario defines the metric has the
    ``undefined`` violation."""
    name = info.name
    maximize = info.better == "higher"

    def evaluate(m: SuiteMetrics, g: GateResult | None = None) -> tuple[tuple[float, ...], Mapping[str, float]]:
        v = _violations(m, g)
        mean = m.get(f"{name}.mean")
        v["undefined"] = 1.0 if mean is None else 0.0
        pen = sum(v.values())
        x = float(mean or 0.0)
        return ((x - pen) if maximize else (x + pen),), v

    how = "maximise" if maximize else "minimise"
    return Objective(
        name,
        f"{how} the mean {name} ({info.description}); each must_exclude leak, wrong winner and scenario over "
        "its max_tokens costs 1, and each broken expect bound (max_leaks, max_wrong_winners included) 1 more",
        ("maximize" if maximize else "minimize",),
        (f"{name}.mean",),
        evaluate,
    )


def objective_names() -> tuple[str, ...]:
    """Every objective :func:`objective_named` accepts: the built-in ones (:data:`OBJECTIVES`), then the
    name of every suite metric (:data:`crp_core.analysis.metrics.METRICS`) that is not one of them."""
    return tuple(OBJECTIVES) + tuple(m.name for m in METRICS if m.name not in OBJECTIVES)


def objective_named(name: str) -> Objective:
    """The built-in objective ``name``, else the objective of the suite metric ``name``
    (:func:`_metric_objective`)."""
    if name in OBJECTIVES:
        return OBJECTIVES[name]
    info = next((m for m in METRICS if m.name == name), None)
    if info is None:
        raise ConfigError(f"unknown objective {name!r}; expected one of {', '.join(objective_names())}")
    return _metric_objective(info)


@dataclass(frozen=True, eq=False)
class TrialRecord:
    """One trial: the searched values, the config they give, the suite metrics and the objective."""

    number: int  # 0 = the base configuration
    params: Mapping[str, float]
    config: CRPConfig  # base config with params (before set_args)
    values: tuple[float, ...]  # objective values (penalties included for single objectives)
    violations: Mapping[str, float]  # constraint name -> amount (0 = satisfied)
    metrics: SuiteMetrics
    elapsed_ms: float
    #: the regression gate of the trial: its expect thresholds and (after trial 0) trial 0's metrics as
    #: the baseline; ``regressions`` counts its baseline failures whatever the objective
    gate: GateResult | None = None

    @property
    def regressions(self) -> tuple[GateFailure, ...]:
        """The (scenario, metric) pairs worse than at trial 0 (what ``check --baseline`` would fail on,
        with a baseline recorded at the starting config)."""
        return tuple(f for f in self.gate.failures if f.kind == "baseline") if self.gate is not None else ()

    @property
    def recall_drops(self) -> tuple[GateFailure, ...]:
        """The scenarios whose recall is below trial 0's (a must_include fact trial 0 packed is no longer
        packed): regressions of every objective, violations of ``no_regression``."""
        return tuple(f for f in self.regressions if f.metric == "recall")

    @property
    def feasible(self) -> bool:
        return all(v <= 0 for v in self.violations.values())

    @property
    def value(self) -> float:
        return self.values[0]


#: ``callback(trial, done, total)`` after each trial
Callback = Callable[[TrialRecord, int, int], None]


def _dominates(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] >= b[0] and a[1] >= b[1] and (a[0] > b[0] or a[1] > b[1])


@dataclass(frozen=True, eq=False)
class TuneResult:
    objective: Objective
    space: tuple[Param, ...]
    seed: int
    sampler: str
    base_config: CRPConfig
    set_args: tuple[str, ...]
    trials: tuple[TrialRecord, ...]
    best: TrialRecord
    elapsed_ms: float
    simplified: Simplified | None = None  # the best trial without its moves that change no suite metric

    @property
    def best_config(self) -> CRPConfig:
        """The full configuration of the best trial (simplified: the same suite metrics with fewer changes),
        ``--set`` items applied: save it as TOML."""
        config = self.simplified.config if self.simplified is not None else self.best.config
        return config.with_set_args(self.set_args) if self.set_args else config

    @property
    def best_params(self) -> dict[str, float]:
        """The searched values of :attr:`best_config`: the best trial's, those it reverted at trial 0's."""
        reverted = self.simplified.reverted if self.simplified is not None else ()
        return {k: self.trials[0].params[k] if k in reverted else v for k, v in self.best.params.items()}

    @property
    def baseline(self) -> TrialRecord:
        """Trial 0: the base configuration."""
        return self.trials[0]

    def pareto(
        self, x: str, y: str, *, maximize: tuple[bool, bool] = (True, False), feasible_only: bool = True
    ) -> tuple[TrialRecord, ...]:
        """The trials no other trial beats on both suite metrics ``x`` and ``y`` (keys of
        :meth:`SuiteMetrics.flat`, e.g. ``"recall.mean"`` and ``"tokens.mean"``), ordered by ``x``
        best first. Trials where either is undefined are left out."""
        pts: list[tuple[TrialRecord, tuple[float, float]]] = []
        for t in self.trials:
            if feasible_only and not t.feasible:
                continue
            vx, vy = t.metrics.get(x), t.metrics.get(y)
            if vx is None or vy is None:
                continue
            pts.append((t, (vx if maximize[0] else -vx, vy if maximize[1] else -vy)))
        front = [(t, p) for t, p in pts if not any(_dominates(q, p) for _, q in pts)]
        seen: set[tuple[float, float]] = set()
        out = []
        for t, p in sorted(front, key=lambda tp: (-tp[1][0], -tp[1][1], tp[0].number)):
            if p not in seen:  # equal points: the earliest trial stands for them
                seen.add(p)
                out.append(t)
        return tuple(out)


def _pick_best(objective: Objective, trials: Sequence[TrialRecord]) -> TrialRecord:
    pool = [t for t in trials if t.feasible] or list(trials)
    if objective.multi:
        d = objective.directions
        key = lambda t: tuple(v if dd == "maximize" else -v for v, dd in zip(t.values, d))  # noqa: E731
        return max(pool, key=lambda t: (key(t), -t.number))
    sign = 1.0 if objective.directions[0] == "maximize" else -1.0
    return max(
        pool,
        key=lambda t: (
            round(sign * t.value, 9),
            -_failures(t.metrics),
            -float(t.metrics.summary["tokens"].mean or 0.0),
            -t.number,
        ),
    )


#: the counts of facts that should not reach the model, summed for the tie-break between equal trials
TIE_BREAK_COUNTS: tuple[str, ...] = ("leaks", "wrong_winners", "expired", "contradictions", "duplicates")


def _failures(m: SuiteMetrics) -> float:
    """Leaks + wrong winners + expired facts + contradictory pairs + fan-out duplicates over the suite."""
    return sum(float(m.summary[k].total or 0.0) for k in TIE_BREAK_COUNTS)


def _suggest(trial: optuna.trial.Trial, p: Param) -> float:
    """Trial ``trial``'s value of ``p``: on its uniform grid, or log-uniform (whole numbers for a whole step)."""
    if p.log and p.whole:
        return float(trial.suggest_int(p.key, int(p.low), int(p.high), log=True))
    if p.log:
        return p.round(trial.suggest_float(p.key, p.low, p.high, log=True))
    return p.round(trial.suggest_float(p.key, p.low, p.high, step=p.step))


def _check_defined(obj: Objective, m: SuiteMetrics) -> None:
    """Refuse a study whose objective no scenario of the suite defines at the starting configuration."""
    for target in obj.targets:
        if target.endswith(".mean") and m.get(target) is None:
            name = target.rsplit(".", 1)[0]
            raise ConfigError(
                f"objective {obj.name!r}: no scenario of the suite defines the metric {name!r} at the starting "
                "configuration (its labels are missing from every scenario), so there is nothing to optimise"
            )


def _check_seed(seed: object) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= int(seed) <= SEED_MAX:
        raise ConfigError(f"seed must be a whole number between 0 and {SEED_MAX} (2**32 - 1), got {seed!r}")
    return int(seed)


def tune(  # noqa: PLR0913  the study's inputs, then its options and run_suite's keyword-only
    corpus: Corpus,
    suite: Suite | PreparedSuite,
    base_config: CRPConfig,
    objective: str | Objective = "recall",
    trials: int = 20,
    seed: int = 0,
    *,
    callback: Callback | None = None,
    space: Sequence[Param] | None = None,
    set_args: Sequence[str] = (),
    reference: Reference = None,
    known: KnownMode = "auto",
    startup_trials: int | None = None,
    embedder: Embedder | None = None,
    simplify: bool = True,
) -> TuneResult:
    """Search ``space`` (default :func:`default_space`) for ``objective`` with TPE (``seed``, 0 .. 2**32 - 1),
    ``trials`` trials in all, trial 0 being exactly ``base_config`` (each parameter's range widened to
    hold its value, :func:`space_including`). ``suite`` may be a :class:`PreparedSuite` (reused).
    ``reference``: the overlap's reference config (None: the defaults; False: no overlap). Every trial
    is gated like ``crp-inspect check`` (:func:`gate_vs_start`; ``TrialRecord.gate``): broken expect bounds
    are violations of every objective, per-scenario regressions against trial 0 of ``no_regression``.
    ``simplify``: the best configuration keeps only the moves that change a suite metric (tune_simplify)."""
    import optuna

    if isinstance(trials, bool) or not isinstance(trials, (int, np.integer)) or not 1 <= trials <= 10_000:
        raise ConfigError(f"trials must be between 1 and 10000, got {trials!r}")
    seed = _check_seed(seed)
    obj = objective_named(objective) if isinstance(objective, str) else objective
    prepared = suite if isinstance(suite, PreparedSuite) else prepare_suite(corpus, suite, embedder=embedder)
    pinned = [a.split("=", 1)[0].strip() for a in set_args]
    params = tuple(space) if space is not None else default_space(prepared.corpus, base_config, pinned=pinned)
    if not params:
        raise ConfigError("nothing to tune: the search space is empty")
    params = space_including(params, base_config)
    start_values: dict[str, float | int] = {p.key: p.value(config_value(base_config, p.key)) for p in params}
    for p in params:
        base_config.with_overrides({p.key: p.low}).with_overrides({p.key: p.high})  # a bad bound raises here
    t0 = time.perf_counter()
    records: list[TrialRecord] = []

    def constraints(ft: optuna.trial.FrozenTrial) -> Sequence[float]:
        return list(ft.user_attrs.get("violations", [0.0]))

    # Optuna 5 reads constraints set on each trial (Trial.set_constraint); Optuna 4 takes a constraints_func
    per_trial = hasattr(optuna.trial.Trial, "set_constraint")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        sampler = optuna.samplers.TPESampler(
            seed=int(seed),
            n_startup_trials=startup_trials if startup_trials is not None else min(10, trials),
            constraints_func=constraints if obj.multi and not per_trial else None,
        )
    verbosity = optuna.logging.get_verbosity()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    try:
        study = optuna.create_study(sampler=sampler, directions=list(obj.directions))
        study.enqueue_trial(
            {p.key: int(v) if p.log and p.whole else float(v) for p, v in zip(params, start_values.values())}
        )

        def run_trial(trial: optuna.trial.Trial) -> float | Sequence[float]:
            t = time.perf_counter()
            suggested = {p.key: p.value(_suggest(trial, p)) for p in params}
            values_ = dict(start_values) if not records else suggested  # trial 0: exactly the base config
            config = base_config.with_overrides(values_) if records else base_config
            run = run_suite(
                prepared,
                config,
                set_args=set_args,
                reference=reference,
                known=known,
                keep_results=False,
                embedder=embedder,
            )
            verdict = gate_vs_start(run.metrics, prepared.suite, records[0].metrics if records else None)
            if not records and obj.name not in OBJECTIVES:
                _check_defined(obj, run.metrics)
            vals, viol = obj.evaluate(run.metrics, verdict)
            trial.set_user_attr("violations", [float(v) for v in viol.values()])
            if obj.multi and per_trial:
                for name, amount in viol.items():
                    trial.set_constraint(name, float(amount))
            rec = TrialRecord(
                number=trial.number,
                params=values_,
                config=config,
                values=tuple(vals),
                violations=dict(viol),
                metrics=run.metrics,
                elapsed_ms=(time.perf_counter() - t) * 1e3,
                gate=verdict,
            )
            records.append(rec)
            if callback is not None:
                callback(rec, len(records), trials)
            return vals[0] if len(vals) == 1 else list(vals)

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            study.optimize(run_trial, n_trials=int(trials))
    finally:
        optuna.logging.set_verbosity(verbosity)
    done = tuple(records)
    best = _pick_best(obj, done)
    lean = None
    if simplify:
        lean = simplified(
            prepared,
            base_config,
            best.config,
            best.metrics,
            params,
            set_args=set_args,
            reference=reference,
            known=known,
            embedder=embedder,
        )
    return TuneResult(
        objective=obj,
        space=params,
        seed=seed,
        sampler="TPESampler",
        base_config=base_config,
        set_args=tuple(set_args),
        trials=done,
        best=best,
        elapsed_ms=(time.perf_counter() - t0) * 1e3,
        simplified=lean,
    )


#: what each violation of a trial stands for (the "no feasible trial" message)
VIOLATIONS: Mapping[str, str] = {
    "leaks": "must_exclude facts packed",
    "wrong_winners": "losers of an expected conflict packed",
    "over_tokens": "scenarios over their expect.max_tokens",
    "thresholds": "other expect bounds broken",
    "regressions": "scenario metrics worse than at trial 0, a scenario's recall below trial 0's among them",
    "undefined": "no scenario defines the objective's metric",
}


def violation_counts(trials: Sequence[TrialRecord]) -> dict[str, int]:
    """Violation name -> the number of ``trials`` that have it, most frequent first (ties in name order)."""
    counts: dict[str, int] = {}
    for t in trials:
        for name, amount in t.violations.items():
            if amount > 0:
                counts[name] = counts.get(name, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def no_feasible_message(result: TuneResult, *, top: int = 3) -> str | None:
    """What made every trial infeasible (None when a trial is feasible): each violation with the number of
    trials that have it and what it stands for, what trial 0 already broke, and the (scenario, metric) pairs
    most often worse than at trial 0."""
    trials = result.trials
    if any(t.feasible for t in trials):
        return None
    n = len(trials)
    parts = [
        f"{name} in {k} of {n} trial(s) ({VIOLATIONS.get(name, name)})" for name, k in violation_counts(trials).items()
    ]
    msg = f"no feasible trial: every one of the {n} trial(s) broke a constraint: " + "; ".join(parts) + "."
    start = {k: v for k, v in result.baseline.violations.items() if v > 0}
    if start:
        msg += " Trial 0 (the starting configuration) already has " + ", ".join(f"{k} {v:g}" for k, v in start.items())
        msg += ": a feasible trial has to remove them as well."
    pairs: dict[tuple[str, str], int] = {}
    for t in trials:
        for f in t.regressions:
            pairs[(f.scenario, f.metric)] = pairs.get((f.scenario, f.metric), 0) + 1
    if pairs:
        most = sorted(pairs.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
        msg += " Worse than at trial 0 most often: " + ", ".join(f"{s} {m} ({k} trial(s))" for (s, m), k in most) + "."
    return msg
