"""The per-source-type tables of the configuration (docs/reference/pipeline.md §2): the source types and
statuses a CKF may name, ``SourceTable`` (a value per source type) and the default TTLs, source
authorities and importance weights, with the cells that are this project's choice rather than a spec's."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

SOURCE_TYPES: tuple[str, ...] = (
    "regulatory",
    "official_documentation",
    "version_specific",
    "peer_reviewed",
    "internal",
    "community",
    "news",
    "web",
    "user_provided",
    "unverified",
)
STATUSES: tuple[str, ...] = ("ACTIVE", "STALE", "DELETED", "QUARANTINED")
#: statuses that are never retrieved, not even as connectors (SPEC-009 §2.2)
NEVER_RETRIEVED: frozenset[str] = frozenset({"DELETED", "QUARANTINED"})
DEFAULT_SOURCE_TYPE = "unverified"
DEFAULT_STATUS = "ACTIVE"
SECONDS_PER_DAY = 86400.0


@dataclass(frozen=True)
class SourceTable:
    """A value per source type (docs/reference/pipeline.md §2). For ``ttl_days`` a value of ``None`` means no expiry."""

    regulatory: float | None
    official_documentation: float | None
    version_specific: float | None
    peer_reviewed: float | None
    internal: float | None
    community: float | None
    news: float | None
    web: float | None
    user_provided: float | None
    unverified: float | None

    def __getitem__(self, source_type: str) -> float | None:
        if source_type not in SOURCE_TYPES:
            raise KeyError(source_type)
        return getattr(self, source_type)

    def as_dict(self) -> dict[str, float | None]:
        return {st: getattr(self, st) for st in SOURCE_TYPES}

    def replace(self, **changes: float | None) -> SourceTable:
        return dataclasses.replace(self, **changes)


#: default TTLs in days (SPEC-027 §3.5; None = no expiry). Cells marked * in docs/reference/ are ours.
DEFAULT_TTL_DAYS = SourceTable(
    regulatory=1825.0,
    official_documentation=365.0,
    version_specific=180.0,
    peer_reviewed=365.0,
    internal=365.0,
    community=365.0,
    news=30.0,
    web=365.0,
    user_provided=None,
    unverified=365.0,
)
#: source authority weights (SPEC-027 §2.3 / SPEC-009 §4.4)
DEFAULT_SOURCE_AUTHORITY = SourceTable(
    regulatory=0.90,
    official_documentation=0.80,
    version_specific=0.80,
    peer_reviewed=0.80,
    internal=0.75,
    community=0.75,
    news=0.75,
    web=0.70,
    user_provided=0.80,
    unverified=0.70,
)
#: default importance weights (SPEC-009 §4.4)
DEFAULT_IMPORTANCE = SourceTable(
    regulatory=0.90,
    official_documentation=0.80,
    version_specific=0.85,
    peer_reviewed=0.75,
    internal=0.70,
    community=0.60,
    news=0.50,
    web=0.50,
    user_provided=0.60,
    unverified=0.50,
)
#: table cells that are this project's defaults, not the specs' (the ``*`` of docs/reference/pipeline.md §2)
PROJECT_TABLE_CELLS: dict[str, frozenset[str]] = {
    "ttl_days": frozenset({"peer_reviewed", "internal", "community", "web", "unverified"}),
    "source_authority": frozenset({"peer_reviewed", "internal", "news", "web", "user_provided"}),
    "importance": frozenset({"community", "news", "unverified"}),
}
TABLE_KEYS: tuple[str, ...] = ("ttl_days", "source_authority", "importance")


#: the valid range of every numeric key, inclusive, enforced by every way a value comes in (defaults,
#: TOML, scenario ``config``, ``--set``, dashboard widgets and URLs all go through ``CRPConfig``). Upper
#: bounds keep a shared link or a typo from exhausting the machine (``candidate_k=10**9`` asked for a
#: 10^9-row result); values that only exceed the data (K above the fact count) are clamped where used.
RANGES: dict[str, tuple[float, float]] = {
    "cdr_min_relevance": (-1.0, 1.0),
    "min_novelty_floor": (0.0, 1.0),
    "coverage_penalty_cap": (0.0, 1.0),
    "stale_floor": (0.0, 1.0),
    "fresh_fraction": (0.0, 1.0),
    "ngram_step_penalty": (0.0, 1.0),
    "ngram_penalty_cap": (0.0, 1.0),
    "graph_edge_min": (-1.0, 1.0),
    "connector_budget": (0.0, 1.0),
    "min_connector_relevance": (-1.0, 1.0),
    "contradiction_similarity": (-1.0, 1.0),
    "dedup_similarity": (-1.0, 1.0),
    "fanin_dedup_similarity": (-1.0, 1.0),
    "branch_depth_weight": (0.0, 1.0),
    "authority_tie_tolerance": (0.0, 1.0),
    "winner_margin_warn": (0.0, 1.0),
    "near_conflict_margin": (0.0, 1.0),
    "candidate_k": (1, 10_000),
    "hnsw_m": (2, 128),
    "hnsw_ef_construction": (1, 4_000),
    "hnsw_ef_search": (1, 10_000),
    "ngram_n": (1, 32),
    "graph_k": (1, 1_000),
    "max_hops": (1, 8),
    "envelope_fact_budget": (1, 1_000),
    "token_budget": (1, 1_000_000),
    "kmeans_n_init": (1, 1_000),
    "kmeans_seed": (0, 2**32 - 1),
    "ckf_max_bytes": (1, 8 * 1024**3),
}
