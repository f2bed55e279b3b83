"""scan_config_key: the configuration fields the whole-CKF conflict scan reads (SPEC-027 §2, §3).

A cached scan is keyed by these fields only, so they must be every field ``scan_ckf`` reads: one test
records each attribute the scan reads from the configuration, another changes only the other fields and
expects the same scan.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from crp_core.analysis.scan import SCAN_CONFIG_FIELDS, clear_search_cache, scan_ckf, scan_config_key
from crp_core.config import DEFAULT_TTL_DAYS, CRPConfig
from tests.support.factories import fact, make_corpus

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def _corpus() -> Any:
    """Five facts about one port, all within cosine 0.9 of each other: four disagree with F1's value,
    F1/F2 tie on authority (same source, same age), F3 is older and a weaker source, F5 is expired."""
    facts = [
        fact("F1", "The default port of etcd is 2379", modified_at="2026-05-01"),
        fact("F2", "The default port of etcd is 4001", modified_at="2026-05-01"),
        fact("F3", "The default port of etcd is 2380", source_type="community", modified_at="2025-09-01"),
        fact("F4", "The default port of etcd is 10250", source_type="regulatory", modified_at="2026-04-01"),
        fact("F5", "The default port of etcd is 2381", source_type="news", modified_at="2025-01-01"),
    ]
    base = np.zeros(8)
    base[0] = 1.0
    vecs = []
    for i in range(len(facts)):
        v = base.copy()
        v[i + 1] = 0.3  # cosine between two facts: 1 / 1.09 = 0.917
        vecs.append(v)
    return make_corpus(facts, vecs)


class Recording:
    """A configuration that records the name of every attribute read from it."""

    def __init__(self, config: CRPConfig) -> None:
        self.config = config
        self.read: set[str] = set()

    def __getattr__(self, name: str) -> Any:
        self.read.add(name)
        return getattr(self.config, name)


def _summary(scan: Any) -> tuple:
    return (
        tuple(
            (p.fact_a, p.fact_b, p.kept, p.suppressed, p.tied, p.margin, p.decision, p.patterns, round(p.similarity, 6))
            for p in scan.pairs
        ),
        dict(scan.counts),
        scan.n_candidates,
        scan.n_facts,
        scan.threshold,
    )


def test_the_key_of_the_defaults_by_hand():
    key = scan_config_key(CRPConfig())
    assert [name for name, _ in key] == [
        "contradiction_similarity",
        "ttl_days",
        "stale_floor",
        "fresh_fraction",
        "source_authority",
        "importance",
        "authority_tie_tolerance",
        "detector_learned",
    ]
    assert key[0] == ("contradiction_similarity", 0.85)
    assert key[1] == ("ttl_days", DEFAULT_TTL_DAYS)
    assert key[2] == ("stale_floor", 0.30)
    assert hash(key) == hash(scan_config_key(CRPConfig()))


def test_the_scan_reads_only_the_keyed_fields():
    corpus = _corpus()
    for config in (CRPConfig(), CRPConfig(authority_tie_tolerance=0.5), CRPConfig(contradiction_similarity=0.5)):
        clear_search_cache()
        rec = Recording(config)
        scan = scan_ckf(corpus, rec, NOW)  # type: ignore[arg-type]
        assert scan.pairs, "the corpus must give pairs, or the arbitration's reads are not seen"
        assert rec.read <= set(SCAN_CONFIG_FIELDS), sorted(rec.read - set(SCAN_CONFIG_FIELDS))
        # the scan arbitrates by authority, so it reads the recency and authority fields too
        assert {"contradiction_similarity", "authority_tie_tolerance", "source_authority", "ttl_days"} <= rec.read


def test_the_check_reads_only_its_keyed_fields():
    """``check_ckf`` (pair search and text check) reads :data:`CHECK_CONFIG_FIELDS` alone: the dashboard keeps its
    result per those fields, and re-arbitrates for the others."""
    from crp_core.analysis.scan import CHECK_CONFIG_FIELDS, check_ckf

    assert set(CHECK_CONFIG_FIELDS) <= set(SCAN_CONFIG_FIELDS)
    clear_search_cache()
    rec = Recording(CRPConfig(contradiction_similarity=0.5))
    checked = check_ckf(_corpus(), rec)  # type: ignore[arg-type]
    assert checked.found, "the corpus must give conflicts, or the text check's reads are not seen"
    assert rec.read == set(CHECK_CONFIG_FIELDS), sorted(rec.read)
    assert scan_config_key(CRPConfig(), CHECK_CONFIG_FIELDS) == (
        ("contradiction_similarity", 0.85),
        ("detector_learned", True),
    )


def test_a_scan_field_changes_the_key_and_the_scan():
    corpus = _corpus()
    low, high = CRPConfig(contradiction_similarity=0.5), CRPConfig(contradiction_similarity=0.95)
    assert scan_config_key(low) != scan_config_key(high)
    assert scan_ckf(corpus, low, NOW).n_candidates == 10  # every pair of five facts: cosine 0.917
    assert scan_ckf(corpus, high, NOW).n_candidates == 0
    tied = CRPConfig(authority_tie_tolerance=0.5)
    assert scan_config_key(tied) != scan_config_key(CRPConfig())
    assert sum(p.tied for p in scan_ckf(corpus, tied, NOW).pairs) > sum(
        p.tied for p in scan_ckf(corpus, CRPConfig(), NOW).pairs
    )


def test_the_detector_switch_changes_the_key_and_the_scan():
    """Two facts whose only conflict is the one the detector's learned comparison finds (a swap of amounts)."""
    facts = [
        fact("T1", "Tickets cost 12 euros for adults and 6 euros for children.", modified_at="2026-05-01"),
        fact("T2", "Children pay 12 euros and adults pay 6 euros.", modified_at="2026-04-01"),
    ]
    corpus = make_corpus(facts, [np.array([1.0, 0.3, 0.0]), np.array([1.0, 0.0, 0.3])])
    off = CRPConfig(detector_learned=False)
    assert scan_config_key(off) != scan_config_key(CRPConfig())
    (pair,) = scan_ckf(corpus, CRPConfig(), NOW).pairs
    assert (pair.fact_a, pair.fact_b, pair.patterns, pair.conflict.learned) == ("T1", "T2", ("NUMBER_CHANGED",), True)
    assert scan_ckf(corpus, off, NOW).pairs == ()


OTHER_FIELDS = st.fixed_dictionaries(
    {},
    optional={
        "cdr_min_relevance": st.floats(0.0, 1.0),
        "candidate_k": st.integers(1, 500),
        "hnsw_ef_search": st.integers(10, 400),
        "min_novelty_floor": st.floats(0.0, 1.0),
        "graph_retrieval": st.booleans(),
        "graph_k": st.integers(1, 50),
        "graph_edge_min": st.floats(0.0, 1.0),
        "max_hops": st.integers(1, 3),
        "envelope_fact_budget": st.integers(1, 60),
        "token_budget": st.integers(64, 8192),
        "backfill": st.booleans(),
        "dedup_similarity": st.floats(0.5, 1.0),
        "known_conflict_action": st.sampled_from(["off", "flag", "pull_winner", "drop_loser"]),
        "branch_depth_weight": st.floats(0.0, 1.0),
    },
)


@settings(max_examples=40, deadline=None)
@given(changes=OTHER_FIELDS)
def test_other_fields_keep_the_key_and_the_scan(changes):
    corpus = _corpus()
    other = CRPConfig().with_overrides(changes)
    assert scan_config_key(other) == scan_config_key(CRPConfig())
    assert _summary(scan_ckf(corpus, other, NOW)) == _summary(scan_ckf(corpus, CRPConfig(), NOW))
