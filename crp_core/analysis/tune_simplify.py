"""The tuned configuration without the changes that do nothing (docs/decisions/tuning.md, "Auto-tune").

A search moves every key of its space, and the best trial carries all of its moves: on a suite that never
exercises a key (no scenario holds a fact of that source type, no pair near that threshold) the move is noise
that a person would copy into production. :func:`simplify` puts the best trial's keys back to their starting
values one at a time, in the space's order, keeping each revert that leaves every metric of the suite (every
scenario's, the summary's) exactly as the best trial had it: the configuration it returns gives the same suite
results with the fewest changes this greedy pass finds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from crp_core.analysis.evaluate import KnownMode, PreparedSuite, Reference, run_suite
from crp_core.analysis.tune_space import Param, config_value
from crp_core.config import CRPConfig

if TYPE_CHECKING:
    from crp_core.analysis.metrics import SuiteMetrics
    from crp_core.corpus.embedding import Embedder


@dataclass(frozen=True)
class Simplified:
    """The best trial's configuration with ``reverted`` keys back at their starting values (before ``--set``),
    and the suite runs that checked it (one per key the best trial moved)."""

    config: CRPConfig
    reverted: tuple[str, ...]
    runs: int


def _fingerprint(metrics: SuiteMetrics) -> tuple[object, ...]:
    """Every metric of the suite run: the summary's and each scenario's, in order."""
    return (tuple(metrics.flat().items()), tuple((m.name, tuple(m.values().items())) for m in metrics.scenarios))


def simplify(  # noqa: PLR0913  the suite, the two configurations, then run_suite's options keyword-only
    prepared: PreparedSuite,
    start: CRPConfig,
    best: CRPConfig,
    best_metrics: SuiteMetrics,
    space: Sequence[Param],
    *,
    set_args: Sequence[str] = (),
    reference: Reference = None,
    known: KnownMode = "auto",
    embedder: Embedder | None = None,
) -> Simplified:
    """``best`` with each key of ``space`` it moved put back to ``start``'s value when the suite's metrics stay
    those of ``best_metrics`` (see the module)."""
    target = _fingerprint(best_metrics)
    config = best
    reverted: list[str] = []
    runs = 0
    for p in space:
        was = p.value(config_value(start, p.key))
        if p.value(config_value(config, p.key)) == was:
            continue
        trial = config.with_overrides({p.key: was})
        run = run_suite(
            prepared, trial, set_args=set_args, reference=reference, known=known, keep_results=False, embedder=embedder
        )
        runs += 1
        if _fingerprint(run.metrics) == target:
            config = trial
            reverted.append(p.key)
    return Simplified(config, tuple(reverted), runs)
