"""What-if sweeps: one parameter over a range of values, the pipeline run at each value.

``sweep(corpus, scenario, config, key, values)`` runs :func:`crp_core.pipeline.run_pipeline` once at
``config`` (the baseline point) and once per value with ``key`` changed, reusing the prepared corpus
(vectors, HNSW index, similarity graph) and the scenario's vectors (embedded once). Each point keeps
the metrics the Tuning page plots against the value and its envelope diff against the baseline:

* ``jaccard``: |E_v ∩ E_0| / |E_v ∪ E_0| over envelope fact ids (1.0 when both are empty);
* ``conflicts_resolved``: arbitrated pairs with a winner (a fact suppressed), ``conflicts_unresolved``:
  tied pairs (SPEC-027 §2.5); skipped pairs count in neither;
* ``recency_penalised``: the ``CRP-Context-Recency-Penalised`` header value (docs/reference/reports.md);
* ``mean_recency``: mean SPEC-027 §3.2 recency factor of the envelope facts (NaN for an empty envelope);
* ``entering`` / ``leaving``: envelope fact ids present only at this value / only at the baseline.

``key`` is any configuration key (docs/reference/config.md; dotted keys for the tables, e.g. ``ttl_days.news``)
or one of the scenario fields ``fanout_width`` and ``now`` (an aware datetime: time itself swept).
Keys that need a new HNSW index (``hnsw_m``, ``hnsw_ef_construction``) and ``ckf_max_bytes`` (loading
only) are refused; keys that change the similarity graph (``graph_k``, ``graph_edge_min``,
``hnsw_ef_search``) are accepted and the corpus builds (and caches) one graph per value
(``SweepResult.rebuilds_graph``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from crp_core.config import CRPConfig, all_keys
from crp_core.corpus.prepared import Corpus
from crp_core.errors import ConfigError

if TYPE_CHECKING:
    from crp_core.corpus.embedding import Embedder
    from crp_core.corpus.prepared import ScenarioVectors
    from crp_core.decisions import Decisions
    from crp_core.model import Scenario
    from crp_core.records import PipelineResult

#: the scenario fields a sweep may change besides the configuration keys
FANOUT_WIDTH = "fanout_width"
NOW = "now"
SCENARIO_KEYS: frozenset[str] = frozenset({FANOUT_WIDTH, NOW})
#: keys whose change needs a new HNSW index over the whole CKF: refused
REFUSED_KEYS: Mapping[str, str] = {
    "hnsw_m": "changing it rebuilds the HNSW index of the whole CKF for every value",
    "hnsw_ef_construction": "changing it rebuilds the HNSW index of the whole CKF for every value",
    "ckf_max_bytes": "it only limits CKF loading and does not change a run",
}
#: keys accepted although each value builds its own similarity graph (cached on the corpus)
GRAPH_KEYS: frozenset[str] = frozenset({"graph_k", "graph_edge_min", "hnsw_ef_search"})
#: the parameters the issue names, first in the Tuning page's list
FEATURED_KEYS: tuple[str, ...] = (
    "ttl_days.official_documentation",
    "cdr_min_relevance",
    "contradiction_similarity",
    "stale_floor",
    "min_novelty_floor",
    FANOUT_WIDTH,
    "envelope_fact_budget",
)

#: ``progress(done, total, value)`` (a swept value: a number, a bool, None / "none" for a TTL)
Progress = Callable[[int, int, Any], None]


def sweepable_keys() -> list[str]:
    """Every key a sweep accepts: the featured ones first, then the other config keys in definition order."""
    rest = [k for k in all_keys() if k not in REFUSED_KEYS and k not in FEATURED_KEYS]
    return list(FEATURED_KEYS) + rest


def check_key(key: str) -> None:
    """Raise :class:`ConfigError` (with the reason) for a key a sweep cannot vary."""
    if key in SCENARIO_KEYS:
        return
    if key in REFUSED_KEYS:
        raise ConfigError(f"cannot sweep {key!r}: {REFUSED_KEYS[key]}")
    if key not in all_keys():
        raise ConfigError(
            f"cannot sweep {key!r}: unknown configuration key (expected a key of docs/reference/config.md, "
            f"a dotted table key such as 'ttl_days.news', {FANOUT_WIDTH!r} or {NOW!r})"
        )


def point_inputs(scenario: Scenario, config: CRPConfig, key: str, value: Any) -> tuple[Scenario, CRPConfig]:
    """(scenario, config) of the run at ``key = value``; a bad value raises :class:`ConfigError`."""
    check_key(key)
    if key == FANOUT_WIDTH:
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or float(value) != int(value)
            or int(value) < 0
        ):
            raise ConfigError(f"fanout_width expects a whole number >= 0, got {value!r}")
        return scenario.replace(fanout_width=int(value)), config
    if key == NOW:
        if not isinstance(value, datetime) or value.tzinfo is None:
            raise ConfigError(f"now expects a date and time with a time zone, got {value!r}")
        return scenario.replace(now=value), config
    return scenario, config.with_overrides({key: value})


def current_value(scenario: Scenario, config: CRPConfig, key: str) -> Any:
    """The value ``key`` has in (scenario, config): the baseline point's x."""
    check_key(key)
    if key == FANOUT_WIDTH:
        return int(scenario.fanout_width or 0)
    if key == NOW:
        return scenario.now
    if "." in key:
        table, st = key.split(".", 1)
        return getattr(config, table)[st]
    return getattr(config, key)


def envelope_ids(result: PipelineResult) -> tuple[str, ...]:
    """Fact ids of the packed envelope, in packed order."""
    return tuple(p.fact_id for p in result.envelope.order)


def jaccard(a: Sequence[str], b: Sequence[str]) -> float:
    """|A ∩ B| / |A ∪ B| of two id collections (1.0 when both are empty)."""
    sa, sb = set(a), set(b)
    union = sa | sb
    return 1.0 if not union else len(sa & sb) / len(union)


def envelope_recency(result: PipelineResult) -> dict[str, float]:
    """fact id -> the run's recency factor for every envelope fact (from ``result.recency``)."""
    rec = result.recency
    kb = result.corpus.kb
    factor = {int(r): float(f) for r, f in zip(rec.idx.tolist(), rec.factor.tolist())}
    out: dict[str, float] = {}
    for fid in envelope_ids(result):
        row = kb.index_of(fid)
        if row in factor:
            out[fid] = factor[row]
    return out


def conflict_counts(result: PipelineResult) -> tuple[int, int]:
    """(pairs resolved with a winner, tied pairs), skipped pairs excluded."""
    resolved = sum(1 for p in result.resolution.pairs if not p.skipped and p.suppressed is not None)
    tied = sum(1 for p in result.resolution.pairs if not p.skipped and p.tied)
    return resolved, tied


@dataclass(frozen=True, eq=False)
class SweepPoint:
    """One run of a sweep: the metrics plotted against ``value`` and the envelope diff vs the baseline."""

    value: Any
    config: CRPConfig
    fanout_width: int
    envelope: tuple[str, ...]  # packed order
    jaccard: float
    entering: tuple[str, ...]  # in this envelope, not in the baseline's (packed order)
    leaving: tuple[str, ...]  # in the baseline envelope, not in this one (baseline order)
    conflicts_resolved: int
    conflicts_unresolved: int
    recency_penalised: int
    mean_recency: float
    tokens_used: int
    headers: Mapping[str, str]
    elapsed_ms: float  # wall time of this point's run
    result: PipelineResult | None = field(default=None, repr=False)  # kept for the page's diff view

    def metrics(self) -> dict[str, Any]:
        """The plotted numbers of this point, by name."""
        return {
            "value": self.value,
            "jaccard": self.jaccard,
            "conflicts_resolved": self.conflicts_resolved,
            "conflicts_unresolved": self.conflicts_unresolved,
            "recency_penalised": self.recency_penalised,
            "mean_recency": self.mean_recency,
            "entering": len(self.entering),
            "leaving": len(self.leaving),
            "envelope_size": len(self.envelope),
            "tokens_used": self.tokens_used,
            "elapsed_ms": self.elapsed_ms,
        }


@dataclass(frozen=True, eq=False)
class SweepResult:
    key: str
    values: tuple[Any, ...]
    baseline: SweepPoint  # the run at ``config`` (its value is the key's current value)
    points: tuple[SweepPoint, ...]  # one per value, in the order given
    rebuilds_graph: bool  # each value built its own similarity graph
    embed_ms: float  # embedding the scenario (0 when vectors were given)
    total_ms: float  # whole sweep, baseline run and embedding included

    def point_for(self, value: Any) -> SweepPoint:
        for p in self.points:
            if p.value == value:
                return p
        raise KeyError(value)


def make_point(
    result: PipelineResult, base_env: Sequence[str] | None, value: Any, elapsed_ms: float, fanout_width: int
) -> SweepPoint:
    """A :class:`SweepPoint` from a run (``base_env`` None: the run is the baseline itself)."""
    env = envelope_ids(result)
    base = env if base_env is None else tuple(base_env)
    base_set, env_set = set(base), set(env)
    rec = list(envelope_recency(result).values())
    resolved, tied = conflict_counts(result)
    from crp_core.headers import RECENCY

    return SweepPoint(
        value=value,
        config=result.config,
        fanout_width=fanout_width,
        envelope=env,
        jaccard=jaccard(env, base),
        entering=tuple(f for f in env if f not in base_set),
        leaving=tuple(f for f in base if f not in env_set),
        conflicts_resolved=resolved,
        conflicts_unresolved=tied,
        recency_penalised=int(result.headers.get(RECENCY, "0")),
        mean_recency=float(np.mean(rec)) if rec else math.nan,
        tokens_used=int(result.envelope.tokens_used),
        headers=dict(result.headers),
        elapsed_ms=elapsed_ms,
        result=result,
    )


def sweep(  # noqa: PLR0913  the corpus, scenario, config and swept key, then the run's options keyword-only
    corpus: Corpus,
    scenario: Scenario,
    config: CRPConfig,
    key: str,
    values: Sequence[Any],
    *,
    vectors: ScenarioVectors | None = None,
    decisions: Decisions = None,
    progress: Progress | None = None,
    embedder: Embedder | None = None,
    keep_results: bool = True,
) -> SweepResult:
    """Run the pipeline at ``config`` and at each ``key = value``.

    The scenario is embedded once (``vectors``: pass the ``ScenarioVectors`` to skip even that); the
    corpus's index and graph are reused. ``decisions``: operator pair decisions, handed to every run.
    ``progress(done, total, value)`` is called after each run (the baseline counts as run 0 of
    ``len(values) + 1``). Every value is checked before anything runs: a bad one raises
    :class:`ConfigError` naming its position.
    """
    from crp_core.pipeline import run_pipeline

    values = tuple(values)
    check_key(key)
    if not values:
        raise ConfigError(f"sweep of {key!r}: no values given")
    inputs = []
    for i, v in enumerate(values):
        try:
            inputs.append(point_inputs(scenario, config, key, v))
        except ConfigError as exc:
            raise ConfigError(f"sweep value {i + 1} of {len(values)} ({key} = {v!r}): {exc}") from None
    t0 = time.perf_counter()
    embed_ms = 0.0
    if vectors is None:
        from crp_core.corpus.prepared import embed_scenario

        vectors = embed_scenario(scenario, corpus, embedder)
        embed_ms = (time.perf_counter() - t0) * 1e3
    wall = datetime.now(UTC)  # one now for every point whose scenario has none
    total = len(values) + 1

    def run(s: Scenario, c: CRPConfig) -> tuple[PipelineResult, float]:
        t = time.perf_counter()
        now = s.now if s.now is not None else wall
        r = run_pipeline(corpus, s, c, vectors=vectors, now=now, embedder=embedder, decisions=decisions)
        return r, (time.perf_counter() - t) * 1e3

    base_result, base_ms = run(scenario, config)
    base_value = current_value(scenario, config, key)
    baseline = make_point(base_result, None, base_value, base_ms, int(scenario.fanout_width or 0))
    if progress is not None:
        progress(1, total, base_value)
    points = []
    for i, (v, (s, c)) in enumerate(zip(values, inputs)):
        r, ms = run(s, c)
        p = make_point(r, baseline.envelope, v, ms, int(s.fanout_width or 0))
        if not keep_results:
            p = _without_result(p)
        points.append(p)
        if progress is not None:
            progress(i + 2, total, v)
    if not keep_results:
        baseline = _without_result(baseline)
    return SweepResult(
        key=key,
        values=values,
        baseline=baseline,
        points=tuple(points),
        rebuilds_graph=key in GRAPH_KEYS,
        embed_ms=embed_ms,
        total_ms=(time.perf_counter() - t0) * 1e3,
    )


def _without_result(p: SweepPoint) -> SweepPoint:
    from dataclasses import replace

    return replace(p, result=None)


def is_integer_key(key: str) -> bool:
    if key == FANOUT_WIDTH:
        return True
    if "." in key:
        return False
    default = getattr(CRPConfig(), key, None)
    return isinstance(default, int) and not isinstance(default, bool)


def is_bool_key(key: str) -> bool:
    return "." not in key and isinstance(getattr(CRPConfig(), key, None), bool)
