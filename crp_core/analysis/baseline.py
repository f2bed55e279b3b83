"""Before / after SPEC-027: the same scenario through SPEC-024-only retrieval and through
the full SPEC-027 §4 pipeline, with the numbers the stakeholder view puts side by side.

The SPEC-024-only baseline omits the three SPEC-027 fixes and nothing else:

* **no recency factor** (SPEC-027 §3): the run uses ``stale_floor = 1.0``; the SPEC-027 §3.2 formula
  then gives 1.0 on every branch (fresh, decay ``1 - 0 * x``, expired, STALE status), so CDR and
  connector scores carry a factor of exactly 1.0;
* **no contradiction resolution** (SPEC-027 §2): every value-conflicting pair is still *detected* in
  stage 4 (so the view can count the pairs handed to the model) but left alone, both facts kept: the
  run hands stage 4 a decision set that dismisses every pair (the operator "dismiss" path of
  ``crp_core.stages.contradictions.resolve``: no winner, no suppression, no NOTE block, no backfill).
  SPEC-003 §6.6 dedup of non-conflicting near-duplicates predates SPEC-027 and still applies;
* **naive fan-out** (SPEC-027 §1.1): the branches behave as stage 5's ``naive`` run (round-robin
  sub-queries, residual pull over the whole ResidualSet, one shared Coverage Set read at dispatch).

No pipeline module needed a hook for this: both switches go through existing parameters.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from crp_core.analysis.sweep import envelope_ids, jaccard
from crp_core.config import CRPConfig
from crp_core.corpus.prepared import Corpus

if TYPE_CHECKING:
    from crp_core.corpus.embedding import Embedder
    from crp_core.corpus.prepared import ScenarioVectors
    from crp_core.model import KnowledgeBase, Scenario
    from crp_core.records import ConflictPair, FanoutRun, PipelineResult
    from crp_core.stages.contradictions.arbitration import Decisions

#: the recency floor that turns the SPEC-027 §3.2 factor into a constant 1.0
NO_RECENCY_FLOOR = 1.0
DISMISS = {"kind": "dismiss", "winner": None}


class DismissEveryPair(Mapping[str, Mapping[str, Any]]):
    """A stage-4 decision set that dismisses every pair (SPEC-024: no contradiction resolution)."""

    def __getitem__(self, key: str) -> Mapping[str, Any]:
        return DISMISS

    def get(self, key: str, default: Any = None) -> Mapping[str, Any]:  # noqa: ARG002
        return DISMISS

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 1  # never "empty": stage 4 consults it for every pair

    def __contains__(self, key: object) -> bool:
        return True


def spec024_config(config: CRPConfig) -> CRPConfig:
    """``config`` with the recency factor switched off (``stale_floor = 1.0``)."""
    return config.replace(stale_floor=NO_RECENCY_FLOOR)


@dataclass(frozen=True, eq=False)
class BaselineRun:
    """The SPEC-024-only run: the PipelineResult of the switched-off pipeline and what it hands over."""

    result: PipelineResult  # recency 1.0, every pair dismissed; its fanout holds both runs
    config: CRPConfig  # the configuration asked for (the run used ``spec024_config(config)``)
    envelope: tuple[str, ...]  # packed order
    conflict_pairs: tuple[ConflictPair, ...]  # detected among the selected facts, both facts kept
    fanout: FanoutRun | None  # the naive mode's run, or None without fan-out

    @property
    def headers(self) -> Mapping[str, str]:
        return self.result.headers


def run_spec024_baseline(corpus: Corpus, scenario: Scenario, config: CRPConfig, *,
                         vectors: ScenarioVectors | None = None, now: datetime | None = None,
                         embedder: Embedder | None = None) -> BaselineRun:
    """The scenario through SPEC-024-only retrieval (see the module docstring)."""
    from crp_core.pipeline import run_pipeline

    result = run_pipeline(corpus, scenario, spec024_config(config), vectors=vectors, now=now, embedder=embedder,
                          decisions=DismissEveryPair())
    pairs = tuple(p for p in result.resolution.pairs if not p.skipped)
    return BaselineRun(result=result, config=config, envelope=envelope_ids(result), conflict_pairs=pairs,
                       fanout=result.fanout.naive if result.fanout is not None else None)


# ---- the side-by-side numbers ---------------------------------------------------------------------
@dataclass(frozen=True)
class SideNumbers:
    """What one side hands to the model."""

    label: str
    envelope: tuple[str, ...]
    stale_in_envelope: tuple[str, ...]  # SPEC-027 recency factor < 1.0, or status STALE
    contradictory_pairs: tuple[tuple[str, str], ...]  # value-conflicting pairs with both facts packed
    fanout_duplicates: int | None  # cross-branch duplicates of the fan-out (None: no fan-out)
    duplicate_facts: tuple[str, ...]  # fact ids named in those duplicates
    tokens_used: int
    headers: Mapping[str, str]


@dataclass(frozen=True, eq=False)
class BeforeAfter:
    before: SideNumbers  # SPEC-024 only
    after: SideNumbers  # SPEC-027
    overlap: float  # Jaccard of the two envelopes
    only_before: tuple[str, ...]
    only_after: tuple[str, ...]
    spec027_recency: Mapping[str, float]  # fact id -> SPEC-027 recency factor, every fact of either envelope
    recency_rule: Mapping[str, str]  # fact id -> SPEC-027 §3.2 rule that applied
    baseline: BaselineRun
    full: PipelineResult  # the SPEC-027 pipeline's run
    fanout_width: int

    def rows(self) -> list[dict[str, Any]]:
        """The numbers side by side (one row per measure) for tables and the HTML report."""
        def dup(x: int | None) -> int | str:
            return "no fan-out" if x is None else x

        b, a = self.before, self.after
        return [
            {"measure": "facts in the envelope", "SPEC-024 only": len(b.envelope), "SPEC-027": len(a.envelope)},
            {"measure": "stale facts in the envelope", "SPEC-024 only": len(b.stale_in_envelope),
             "SPEC-027": len(a.stale_in_envelope)},
            {"measure": "contradictory pairs handed to the model", "SPEC-024 only": len(b.contradictory_pairs),
             "SPEC-027": len(a.contradictory_pairs)},
            {"measure": "duplicate fan-out facts", "SPEC-024 only": dup(b.fanout_duplicates),
             "SPEC-027": dup(a.fanout_duplicates)},
            {"measure": "tokens used", "SPEC-024 only": b.tokens_used, "SPEC-027": a.tokens_used},
        ]


def _stale(ids: tuple[str, ...], factor: Mapping[str, float], kb: KnowledgeBase) -> tuple[str, ...]:
    return tuple(f for f in ids if factor.get(f, 1.0) < 1.0 or kb.facts[kb.index_of(f)].status == "STALE")


def _packed_pairs(pairs: Iterable[ConflictPair], packed: set[str]) -> tuple[tuple[str, str], ...]:
    return tuple((p.fact_a, p.fact_b) for p in pairs if not p.skipped and p.fact_a in packed and p.fact_b in packed)


def _dups(run: FanoutRun | None) -> tuple[int | None, tuple[str, ...]]:
    if run is None:
        return None, ()
    ids = tuple(dict.fromkeys(f for d in run.duplicates for f in d.fact_ids))
    return len(run.duplicates), ids


def before_after(corpus: Corpus, scenario: Scenario, config: CRPConfig, *, vectors: ScenarioVectors | None = None,
                 decisions: Decisions = None, fanout_width: int | None = None, embedder: Embedder | None = None,
                 full: PipelineResult | None = None) -> BeforeAfter:
    """Run both sides and count. ``fanout_width`` overrides the scenario's for both sides;
    ``decisions`` (operator pair decisions) apply to the SPEC-027 side; ``full`` reuses an existing
    SPEC-027 PipelineResult of exactly (corpus, scenario, config)."""
    from crp_core.factors.recency import compute_recency
    from crp_core.pipeline import run_pipeline

    if fanout_width is not None and int(fanout_width) != int(scenario.fanout_width or 0):
        scenario = scenario.replace(fanout_width=int(fanout_width))
        full = None
    now = scenario.now if scenario.now is not None else datetime.now(UTC)
    if vectors is None:
        from crp_core.corpus.prepared import embed_scenario

        vectors = embed_scenario(scenario, corpus, embedder)
    if full is None:
        full = run_pipeline(corpus, scenario, config, vectors=vectors, now=now, embedder=embedder,
                            decisions=decisions)
    base = run_spec024_baseline(corpus, scenario, config, vectors=vectors, now=now, embedder=embedder)
    kb = corpus.kb
    before_env, after_env = base.envelope, envelope_ids(full)
    ids = tuple(dict.fromkeys(before_env + after_env))
    rows = np.array([kb.index_of(f) for f in ids], dtype=np.int64)
    rec = compute_recency(kb, rows, full.now, full.config)  # the SPEC-027 factor of every packed fact
    factor = {f: float(x) for f, x in zip(ids, rec.factor.tolist())}
    rule = dict(zip(ids, rec.rule))
    b_dups, b_ids = _dups(base.fanout)
    a_dups, a_ids = _dups(full.fanout.partitioned if full.fanout is not None else None)
    before = SideNumbers("SPEC-024 only", before_env, _stale(before_env, factor, kb),
                         _packed_pairs(base.conflict_pairs, set(before_env)), b_dups, b_ids,
                         int(base.result.envelope.tokens_used), dict(base.headers))
    after = SideNumbers("SPEC-027", after_env, _stale(after_env, factor, kb),
                        _packed_pairs(full.resolution.pairs, set(after_env)), a_dups, a_ids,
                        int(full.envelope.tokens_used), dict(full.headers))
    return BeforeAfter(before=before, after=after, overlap=jaccard(before_env, after_env),
                       only_before=tuple(f for f in before_env if f not in set(after_env)),
                       only_after=tuple(f for f in after_env if f not in set(before_env)),
                       spec027_recency=factor, recency_rule=rule, baseline=base, full=full,
                       fanout_width=int(scenario.fanout_width or 0))
