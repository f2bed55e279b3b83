"""Running a suite: every scenario through the pipeline under one configuration, then the metrics
(docs/decisions/suites.md §3-§4).

``prepare_suite(corpus, suite)`` embeds every scenario once (the corpus is prepared already: vectors,
HNSW index, graph cache) and resolves each scenario's ``now`` once; ``run_suite(prepared, config)``
runs the scenarios at a configuration reusing all of it, so a new config costs only pipeline runs
(as :func:`crp_core.analysis.sweep.sweep` does for one scenario). ``sweep_suite`` runs one key over a
range of values for the whole suite.

Configuration precedence per scenario is the CLI's (``crp_core.config.layered_config``): ``config``
(the CLI's ``--config``, or a tuning trial's config) < the scenario's ``config`` table < ``set_args``.
The labels are never handed to the pipeline.

**Known-conflict guard** (docs/decisions/known-conflicts.md). ``known="auto"`` (the default) feeds
the guard only where a scenario's resolved ``known_conflict_action`` is ``pull_winner`` or
``drop_loser``: with ``flag`` (the default action) and ``off`` the guard never changes the envelope,
so every metric is the same with or without it. ``known="scan"`` always feeds it (the flags then
appear in the kept results, as ``crp-inspect run`` shows them); ``known="none"`` never does. The guard
learns the whole-CKF scan's conflicts of each run's selection (``SelectionKnownConflicts``); the
checked pairs of a selection are kept per config (every ``now`` shares them).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from crp_core.analysis.metrics import ScenarioMetrics, SuiteMetrics, scenario_metrics, suite_metrics
from crp_core.analysis.suite import Suite, SuiteScenario, require_known_ids
from crp_core.config import CRPConfig, layered_config
from crp_core.corpus.prepared import Corpus, ScenarioVectors, embed_scenario
from crp_core.errors import ConfigError
from crp_core.model import Scenario
from crp_core.support.blas import blas_threads as limit_blas_threads

if TYPE_CHECKING:
    from crp_core.analysis.known import RowChecks, SelectionKnownConflicts
    from crp_core.analysis.scan import ScanConfigKey
    from crp_core.corpus.embedding import Embedder
    from crp_core.decisions import DecisionSet
    from crp_core.records import PipelineResult

__all__ = [
    "PreparedSuite",
    "prepare_suite",
    "SuiteRun",
    "run_suite",
    "SuitePoint",
    "SuiteSweep",
    "sweep_suite",
    "KnownMode",
    "Progress",
    "Reference",
]

KnownMode = Literal["auto", "scan", "none"]
#: ``progress(done, total, label)`` after each scenario run (``label``: "<scenario>" or "<value>: <scenario>")
Progress = Callable[[int, int, str], None]
_GUARD_ACTIONS = frozenset({"pull_winner", "drop_loser"})


@dataclass(frozen=True, eq=False)
class PreparedSuite:
    """A suite ready to run over one corpus: each scenario's vectors (embedded once) and ``now``."""

    corpus: Corpus
    suite: Suite
    vectors: tuple[ScenarioVectors, ...]  # suite order
    nows: tuple[datetime, ...]  # suite order: the scenario's now, else the wall clock read once
    embed_ms: float
    decisions: DecisionSet | None = None
    # the config fields the scan reads -> the checked pairs per selection; (reference config TOML, known
    # mode) -> envelopes per scenario (the known mode decides whether the guard runs, so it can change them)
    _scans: dict[ScanConfigKey, RowChecks] = field(default_factory=dict, repr=False)
    _references: dict[tuple[str, KnownMode], tuple[tuple[str, ...], ...]] = field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return len(self.suite)

    @property
    def reference_runs(self) -> tuple[tuple[str, KnownMode], ...]:
        """(reference config TOML, known mode) of each reference run whose envelopes are kept."""
        return tuple(self._references)

    def select(self, names: Sequence[str]) -> PreparedSuite:
        """The prepared sub-suite of ``names`` (vectors shared, suite order kept)."""
        sub = self.suite.select(names)
        keep = [i for i, s in enumerate(self.suite) if s.name in set(sub.names)]
        return PreparedSuite(
            self.corpus,
            sub,
            tuple(self.vectors[i] for i in keep),
            tuple(self.nows[i] for i in keep),
            self.embed_ms,
            self.decisions,
        )

    def known_for(self, config: CRPConfig, now: datetime) -> SelectionKnownConflicts:
        """The known conflicts of the whole-CKF scan at ``config`` and ``now``, found for each run's selection
        (the checked pairs of a selection cached per config)."""
        from crp_core.analysis.known import RowChecks, SelectionKnownConflicts
        from crp_core.analysis.scan import scan_config_key

        key = scan_config_key(config)
        checks = self._scans.get(key)
        if checks is None:
            checks = self._scans[key] = RowChecks(self.corpus, config)
        return SelectionKnownConflicts(self.corpus, config, now, self.decisions, checks=checks)


def prepare_suite(
    corpus: Corpus,
    suite: Suite,
    *,
    embedder: Embedder | None = None,
    now: datetime | None = None,
    decisions: DecisionSet | None = None,
    check_ids: bool = True,
) -> PreparedSuite:
    """Embed every scenario of ``suite`` once (its given embeddings, else the corpus's model, cached).

    ``now`` overrides every scenario's ``now`` (the CLI's ``--now``); a scenario without one runs at
    the wall clock read once here. ``check_ids``: refuse (:class:`SuiteError`) expect tables naming
    facts the CKF does not hold. ``decisions``: operator decisions (already applied to ``corpus``'s
    statuses by the caller) handed to stage 4 and to the known-conflict scan."""
    if check_ids:
        require_known_ids(suite, corpus.kb)
    t = time.perf_counter()
    vectors = tuple(embed_scenario(s.scenario, corpus, embedder) for s in suite)
    embed_ms = (time.perf_counter() - t) * 1e3
    wall = datetime.now(UTC)
    nows = tuple(_aware(now or s.scenario.now or wall) for s in suite)
    return PreparedSuite(corpus, suite, vectors, nows, embed_ms, decisions)


def _aware(dt: datetime) -> datetime:
    return dt if dt.tzinfo is not None else dt.replace(tzinfo=UTC)


@dataclass(frozen=True, eq=False)
class SuiteRun:
    """A suite run at one configuration: the resolved config and the metrics of every scenario."""

    config: CRPConfig  # the base (before each scenario's config table and set_args)
    set_args: tuple[str, ...]
    configs: tuple[CRPConfig, ...]  # per scenario, resolved (suite order)
    metrics: SuiteMetrics
    results: tuple[PipelineResult, ...] | None  # None when not kept
    reference: CRPConfig | None  # the config the overlap is measured against
    elapsed_ms: float

    def scenario(self, name: str) -> ScenarioMetrics:
        return self.metrics.scenario(name)

    def result(self, name: str) -> PipelineResult:
        """The kept :class:`PipelineResult` of one scenario (for the envelope diff / explain-diff)."""
        if self.results is None:
            raise KeyError(f"results were not kept for this run ({name!r})")
        return self.results[self.metrics.scenarios.index(self.metrics.scenario(name))]


def _resolve(item: SuiteScenario, config: CRPConfig, set_args: Sequence[str]) -> CRPConfig:
    try:
        return layered_config(config, item.scenario.config, set_args)
    except ConfigError as exc:
        raise ConfigError(f"scenario {item.name}: {exc}") from None


def _run_one(
    prepared: PreparedSuite, i: int, scenario: Scenario, config: CRPConfig, known: KnownMode, embedder: Embedder | None
) -> PipelineResult:
    from crp_core.pipeline import run_pipeline

    now = prepared.nows[i]
    guard = config.known_conflict_action != "off" and (
        known == "scan" or (known == "auto" and config.known_conflict_action in _GUARD_ACTIONS)
    )
    kc = prepared.known_for(config, now) if guard else ()
    return run_pipeline(
        prepared.corpus,
        scenario,
        config,
        vectors=prepared.vectors[i],
        now=now,
        embedder=embedder,
        decisions=prepared.decisions,
        known_conflicts=kc,
    )


def _reference_envelopes(
    prepared: PreparedSuite, reference: CRPConfig, known: KnownMode, embedder: Embedder | None
) -> tuple[tuple[str, ...], ...]:
    key = (reference.to_toml(), known)
    got = prepared._references.get(key)
    if got is None:
        got = tuple(
            tuple(
                p.fact_id
                for p in _run_one(
                    prepared, i, item.scenario, _resolve(item, reference, ()), known, embedder
                ).envelope.order
            )
            for i, item in enumerate(prepared.suite)
        )
        prepared._references[key] = got
    return got


#: what ``reference=`` takes: a config, None (the defaults, ``CRPConfig()``) or False (no overlap)
Reference = CRPConfig | Literal[False] | None


def _reference_config(reference: Reference) -> CRPConfig | None:
    """The reference config a run measures its overlap against: None (the argument) means the
    defaults, False means none."""
    if reference is False:
        return None
    return CRPConfig() if reference is None else reference


def run_suite(  # noqa: PLR0913  the suite and its config, then the run's options keyword-only
    prepared: PreparedSuite,
    config: CRPConfig,
    *,
    set_args: Sequence[str] = (),
    reference: Reference = None,
    known: KnownMode = "auto",
    keep_results: bool = True,
    progress: Progress | None = None,
    embedder: Embedder | None = None,
    scenario_overrides: Mapping[str, Any] | None = None,
    blas_threads: int | None = 1,
) -> SuiteRun:
    """Run every scenario at ``config`` (under its own config table and ``set_args``) and measure it.

    ``reference``: the config whose envelopes ``overlap`` compares with (None, the default: the defaults;
    False: no overlap), run once per prepared suite and known mode, and cached. ``scenario_overrides``:
    changes applied to every resolved config after the layering (a sweep value). ``blas_threads``: BLAS
    threads while the suite runs (1 by default, :func:`crp_core.support.blas.blas_threads`; None:
    unchanged). Every config is resolved before anything runs: a bad ``set_args`` item raises
    :class:`ConfigError` naming the scenario."""
    t0 = time.perf_counter()
    set_args = tuple(set_args)
    configs = tuple(_resolve(item, config, set_args) for item in prepared.suite)
    if scenario_overrides:
        configs = tuple(c.with_overrides(dict(scenario_overrides)) for c in configs)
    results = []
    with limit_blas_threads(blas_threads):
        for i, (item, c) in enumerate(zip(prepared.suite, configs)):
            results.append(_run_one(prepared, i, item.scenario, c, known, embedder))
            if progress is not None:
                progress(i + 1, len(configs), item.name)
        ref_config = _reference_config(reference)
        refs = _envelopes_to_compare(prepared, ref_config, known, embedder, (config, set_args, configs, results))
        per = [
            scenario_metrics(r, item.expect, name=item.name, reference=ref)
            for item, r, ref in zip(prepared.suite, results, refs)
        ]
        return SuiteRun(
            config=config,
            set_args=set_args,
            configs=configs,
            metrics=suite_metrics(per),
            results=tuple(results) if keep_results else None,
            reference=ref_config,
            elapsed_ms=(time.perf_counter() - t0) * 1e3,
        )


def _envelopes_to_compare(
    prepared: PreparedSuite,
    reference: CRPConfig | None,
    known: KnownMode,
    embedder: Embedder | None,
    this_run: tuple[CRPConfig, tuple[str, ...], tuple[CRPConfig, ...], Sequence[PipelineResult]],
) -> Sequence[tuple[str, ...] | None]:
    """Each scenario's envelope at the ``reference`` config (None: no overlap measured), for ``this_run``
    (its config, ``set_args``, resolved configs and results) to be compared with."""
    config, set_args, configs, results = this_run
    if reference is None:
        return [None] * len(results)
    key = (reference.to_toml(), known)
    if (
        key not in prepared._references
        and not set_args
        and config.to_toml() == key[0]
        and all(c == _resolve(item, reference, ()) for item, c in zip(prepared.suite, configs))
    ):
        # this run is the reference run itself: its envelopes serve (no second run)
        prepared._references[key] = tuple(tuple(p.fact_id for p in r.envelope.order) for r in results)
    return _reference_envelopes(prepared, reference, known, embedder)


@dataclass(frozen=True, eq=False)
class SuitePoint:
    """One value of a suite sweep and the suite run at it."""

    value: Any
    run: SuiteRun


@dataclass(frozen=True, eq=False)
class SuiteSweep:
    key: str
    values: tuple[Any, ...]
    baseline: SuiteRun  # the run at the sweep's config
    points: tuple[SuitePoint, ...]
    total_ms: float


def sweep_suite(  # noqa: PLR0913  the suite, its config and the swept key, then run_suite's options keyword-only
    prepared: PreparedSuite,
    config: CRPConfig,
    key: str,
    values: Sequence[Any],
    *,
    set_args: Sequence[str] = (),
    reference: Reference = None,
    known: KnownMode = "auto",
    keep_results: bool = False,
    progress: Progress | None = None,
    embedder: Embedder | None = None,
) -> SuiteSweep:
    """Run the suite at ``config`` and at each ``key = value`` (the value applied to every scenario's
    resolved config, above its config table and ``set_args``, as :func:`crp_core.analysis.sweep.sweep`
    applies it to one). ``fanout_width`` is refused here (a scenario field, not a config key).
    ``progress(done, total, label)`` after each scenario run. Every value is checked first."""
    from crp_core.analysis.sweep import check_key

    t0 = time.perf_counter()
    check_key(key)
    if key == "fanout_width":
        raise ConfigError(f"a suite sweep varies configuration keys; {key!r} is not one")
    values = tuple(values)
    if not values:
        raise ConfigError(f"suite sweep of {key!r}: no values given")
    for i, v in enumerate(values):
        try:
            config.with_overrides({key: v})
        except ConfigError as exc:
            raise ConfigError(f"sweep value {i + 1} of {len(values)} ({key} = {v!r}): {exc}") from None
    n = len(prepared.suite)
    total = n * (len(values) + 1)

    def stepped(offset: int, label: str) -> Progress | None:
        if progress is None:
            return None
        return lambda done, _t, name: progress(offset + done, total, f"{label}: {name}")

    baseline = run_suite(
        prepared,
        config,
        set_args=set_args,
        reference=reference,
        known=known,
        keep_results=keep_results,
        progress=stepped(0, "baseline"),
        embedder=embedder,
    )
    points = []
    for j, v in enumerate(values):
        run = run_suite(
            prepared,
            config,
            set_args=set_args,
            reference=reference,
            known=known,
            keep_results=keep_results,
            progress=stepped(n * (j + 1), repr(v)),
            embedder=embedder,
            scenario_overrides={key: v},
        )
        points.append(SuitePoint(value=v, run=run))
    return SuiteSweep(
        key=key, values=values, baseline=baseline, points=tuple(points), total_ms=(time.perf_counter() - t0) * 1e3
    )
