"""The envelope SPEC-027 would pack for a session window's question, beside the one the SDK packed
(docs/reference/sessions.md#spec-027-beside-the-sdk).

The window's question becomes a one-query scenario run through :func:`crp_core.pipeline.run_pipeline`
over the same knowledge base; every fact either envelope holds gets one line saying why it is in one
and not the other, read from the run's own records (:func:`crp_core.analysis.compare.fact_views`:
the CDR rank, the factors, the outcome and its reason). Nothing is recomputed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from crp_core.analysis.compare import FactView, fact_views

if TYPE_CHECKING:
    from crp_core.config import CRPConfig
    from crp_core.corpus.embedding import Embedder
    from crp_core.corpus.prepared import Corpus
    from crp_core.records import KnownConflict, PipelineResult

__all__ = ["EnvelopeSide", "FactSide", "spec027_beside", "side_sentence"]


@dataclass(frozen=True)
class FactSide:
    """One fact of either envelope: where each put it, and why SPEC-027 did what it did."""

    fact_id: str
    sdk_position: int | None  # 1-based first position in the SDK's packed list
    spec027_position: int | None  # 1-based position in SPEC-027's envelope
    view: FactView | None  # the SPEC-027 run's record of the fact (None: the run never scored it)
    explain: str  # one sentence

    @property
    def side(self) -> str:
        """``both``, ``sdk_only`` or ``spec027_only``."""
        if self.sdk_position is not None and self.spec027_position is not None:
            return "both"
        return "sdk_only" if self.sdk_position is not None else "spec027_only"


@dataclass(frozen=True)
class EnvelopeSide:
    """SPEC-027's envelope for the window's question beside the SDK's."""

    query: str
    query_source: str  # "transcript" (the trail's) or "--query"
    envelope: tuple[str, ...]  # SPEC-027's packed order
    tokens_used: int
    token_budget: int
    facts: tuple[FactSide, ...]  # the SDK's packed facts in its order, then SPEC-027's others in its order
    result: PipelineResult  # the run itself (every factor, for a view that explains further)

    @property
    def both(self) -> tuple[str, ...]:
        return tuple(f.fact_id for f in self.facts if f.side == "both")

    @property
    def sdk_only(self) -> tuple[str, ...]:
        return tuple(f.fact_id for f in self.facts if f.side == "sdk_only")

    @property
    def spec027_only(self) -> tuple[str, ...]:
        return tuple(f.fact_id for f in self.facts if f.side == "spec027_only")


def _factors(v: FactView) -> str:
    f = v.factors
    parts = [f"relevance {f['relevance']:.3f}", f"recency {f['recency_factor']:.2f}"]
    if f["recency_factor"] < 1.0 and math.isfinite(v.age_days):
        ttl = "no TTL" if math.isinf(v.ttl_days) else f"TTL {v.ttl_days:g} d"
        parts[-1] += f" ({v.recency_rule}: age {v.age_days:.0f} d, {ttl})"
    parts.append(f"importance {f['importance_weight']:.2f}")
    return ", ".join(parts)


def side_sentence(fact_id: str, sdk_pos: int | None, spec_pos: int | None, v: FactView | None) -> str:
    """Why the fact is where it is, in one sentence."""
    if sdk_pos is not None and spec_pos is not None:
        rank = f", CDR rank {v.cdr_rank}" if v is not None and v.cdr_rank is not None else ""
        return f"{fact_id}: packed by both (SDK position {sdk_pos}, SPEC-027 position {spec_pos}{rank})."
    if sdk_pos is not None:
        if v is None:
            return (
                f"{fact_id}: the SDK packed it at position {sdk_pos}; SPEC-027 never scored it "
                "(not among the candidates for this question)."
            )
        why = v.reason or v.role
        return (
            f"{fact_id}: the SDK packed it at position {sdk_pos}; SPEC-027 leaves it out: {why} "
            f"(score {v.cdr_score:.4f}: {_factors(v)})."
        )
    assert spec_pos is not None
    role = f"{v.role}, CDR rank {v.cdr_rank}" if v is not None and v.cdr_rank is not None else (v.role if v else "")
    score = f", score {v.cdr_score:.4f}: {_factors(v)}" if v is not None else ""
    return f"{fact_id}: SPEC-027 packs it at position {spec_pos} ({role}{score}); the SDK did not pack it."


def spec027_beside(
    corpus: Corpus,
    sdk_packed: Sequence[str],
    query: str,
    query_source: str,
    config: CRPConfig,
    now: datetime,
    *,
    embedder: Embedder | None = None,
    known_conflicts: Sequence[KnownConflict] = (),
) -> EnvelopeSide:
    """Run SPEC-027 for ``query`` and line its envelope up with ``sdk_packed`` (distinct ids, SDK order)."""
    from crp_core.corpus.prepared import embed_scenario
    from crp_core.model import Scenario
    from crp_core.pipeline import run_pipeline

    scenario = Scenario(query=query, now=now, name="session window")
    vectors = embed_scenario(scenario, corpus, embedder)
    result = run_pipeline(corpus, scenario, config, vectors=vectors, now=now, known_conflicts=known_conflicts)
    views: Mapping[str, FactView] = fact_views(result)
    env = tuple(p.fact_id for p in result.envelope.order)
    sdk_pos = {fid: i for i, fid in enumerate(sdk_packed, start=1)}
    spec_pos = {fid: i for i, fid in enumerate(env, start=1)}
    order = list(sdk_packed) + [f for f in env if f not in sdk_pos]
    facts = tuple(
        FactSide(
            f,
            sdk_pos.get(f),
            spec_pos.get(f),
            views.get(f),
            side_sentence(f, sdk_pos.get(f), spec_pos.get(f), views.get(f)),
        )
        for f in order
    )
    return EnvelopeSide(
        query,
        query_source,
        env,
        int(result.envelope.tokens_used),
        int(result.envelope.token_budget),
        facts,
        result,
    )
