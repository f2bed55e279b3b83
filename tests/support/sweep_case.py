"""``tiny_case``: a 6-d corpus whose cosines and CDR scores are computed by hand, shared by the sweep,
compare, baseline, HTML-report and before/after tests."""

from __future__ import annotations

import math

from crp_core.config import CRPConfig
from tests.support.factories import fact, make_corpus, make_scenario

NOW = "2026-06-01T00:00:00Z"


def _v(rel: float, axis: int, dim: int = 6) -> list[float]:
    """A unit vector with cosine ``rel`` to the query e0, the rest on axis ``axis``."""
    v = [0.0] * dim
    v[0] = rel
    v[axis] = math.sqrt(1.0 - rel * rel)
    return v


def tiny_case(config: CRPConfig | None = None):
    """(corpus, scenario, config).

    Query e0; no coverage, no prior outputs, so novelty = 1, n-gram factor = 1 and
    CDR = importance * relevance * recency. Graph retrieval off, budget 3 (3 anchors).
      S  official_documentation, modified 2024-01-01 (age 882 d >= ttl 365: expired, recency 0.30), rel .90
      P1 official_documentation, modified 2026-05-01 (age 31 d), rel .88, "port is 2379"
      P2 community, importance 0.8 explicit, modified 2026-05-01, rel .87, "port is 2380" (NUMBER_CHANGED)
      F1 official_documentation, modified 2026-01-17 (age 135 d: fresh under ttl 365, decay under 180), rel .80
      F2 official_documentation, modified 2026-05-01, rel .78
    Cosines: P1.P2 = .88*.87 + sqrt(1-.88^2)*sqrt(1-.87^2) = .7656 + .4750*.4931 = .9998 (> .85, a conflict);
    every other pair shares only e0: at most .90*.88 = .792 (< .85, no conflict, no dedup).
    CDR with recency: S .8*.90*.30 = .216, P1 .8*.88 = .704, P2 .8*.87 = .696, F1 .8*.80 = .640, F2 .8*.78 = .624.
    Authority (source authority * recency * importance): P1 .80*1*.8 = .64 > P2 .75*1*.8 = .60: P2 suppressed,
    its slot backfilled by F2. SPEC-027 envelope {P1, F1, F2}.
    Without recency S scores .8*.90 = .720 (rank 1): the SPEC-024-only envelope is {S, P1, P2}.
    """
    facts = [
        fact("S", "The scheduler runs with the legacy queue mode enabled.", modified_at="2024-01-01T00:00:00Z"),
        fact("P1", "The etcd default client port is 2379.", modified_at="2026-05-01T00:00:00Z"),
        fact(
            "P2",
            "The etcd default client port is 2380.",
            source_type="community",
            importance_weight=0.8,
            modified_at="2026-05-01T00:00:00Z",
        ),
        fact("F1", "Snapshots are taken every six hours on atlas.", modified_at="2026-01-17T00:00:00Z"),
        fact("F2", "Defragmentation runs weekly during the maintenance window.", modified_at="2026-05-01T00:00:00Z"),
    ]
    p2 = [0.87, math.sqrt(1 - 0.87**2), 0, 0, 0, 0]
    vecs = [_v(0.90, 5), _v(0.88, 1), p2, _v(0.80, 3), _v(0.78, 4)]
    config = config or CRPConfig(graph_retrieval=False, envelope_fact_budget=3)
    corpus = make_corpus(facts, vecs, config)
    scen = make_scenario([1, 0, 0, 0, 0, 0], now=NOW)
    return corpus, scen, config
