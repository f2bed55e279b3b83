"""The one configuration object (docs/reference/config.md)."""

from __future__ import annotations

import math
from datetime import UTC

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crp_core.config import SOURCE_TYPES, CRPConfig, all_keys, describe, layered_config, origin
from crp_core.errors import ConfigError


def test_defaults_match_spec_notes():
    c = CRPConfig()
    expected = {
        "cdr_min_relevance": 0.55,
        "min_novelty_floor": 0.20,
        "coverage_penalty_cap": 0.80,
        "stale_floor": 0.30,
        "fresh_fraction": 0.5,
        "ngram_n": 6,
        "ngram_step_penalty": 0.15,
        "ngram_penalty_cap": 0.80,
        "candidate_k": 50,
        "hnsw_m": 16,
        "hnsw_ef_construction": 200,
        "hnsw_ef_search": 100,
        "graph_retrieval": True,
        "graph_k": 20,
        "graph_edge_min": 0.60,
        "max_hops": 2,
        "connector_budget": 0.30,
        "min_connector_relevance": 0.30,
        "envelope_fact_budget": 20,
        "token_budget": 2048,
        "contradiction_similarity": 0.85,
        "authority_tie_tolerance": 1e-9,
        "backfill": True,
        "dedup_similarity": 0.95,
        "fanin_dedup_similarity": 0.92,
        "branch_depth_weight": 0.70,
        "kmeans_seed": 0,
        "kmeans_n_init": 10,
    }
    for key, value in expected.items():
        assert getattr(c, key) == value, key
    # docs/reference/pipeline.md §2 table, row by row (ttl days / authority / importance)
    table = {
        "regulatory": (1825, 0.90, 0.90),
        "official_documentation": (365, 0.80, 0.80),
        "version_specific": (180, 0.80, 0.85),
        "peer_reviewed": (365, 0.80, 0.75),
        "internal": (365, 0.75, 0.70),
        "community": (365, 0.75, 0.60),
        "news": (30, 0.75, 0.50),
        "web": (365, 0.70, 0.50),
        "user_provided": (None, 0.80, 0.60),
        "unverified": (365, 0.70, 0.50),
    }
    for st_name, (ttl, auth, imp) in table.items():
        assert c.ttl_days[st_name] == ttl
        assert c.source_authority[st_name] == auth
        assert c.importance[st_name] == imp


def test_anchor_budget_is_floor_of_seventy_percent():
    assert CRPConfig().anchor_budget == 14  # floor(0.7 * 20)
    assert CRPConfig(envelope_fact_budget=7).anchor_budget == 4  # floor(4.9)
    assert CRPConfig(envelope_fact_budget=10).anchor_budget == 7  # 0.7 * 10 = 7.000000000000001 -> 7
    assert CRPConfig(graph_retrieval=False).anchor_budget == 20
    assert CRPConfig(envelope_fact_budget=1).anchor_budget == 1  # floor(0.7) = 0, but at least one anchor


def test_origin_marks_project_defaults():
    assert origin("cdr_min_relevance") == "spec"
    assert origin("envelope_fact_budget") == "project"
    assert origin("ttl_days.news") == "spec"
    assert origin("ttl_days.web") == "project"
    assert origin("importance.community") == "project"
    assert origin("source_authority.regulatory") == "spec"
    assert "SPEC-024" in describe("cdr_min_relevance")
    with pytest.raises(ConfigError):
        origin("nope")


def test_all_keys_expands_tables():
    keys = all_keys()
    assert "ttl_days.news" in keys and "importance.unverified" in keys
    assert len(keys) == len(set(keys)) == 33 + 3 * len(SOURCE_TYPES)  # 33 scalar keys, 3 tables


def test_toml_round_trip_including_no_expiry():
    c = CRPConfig().with_set_args(["ttl_days.news=60", 'ttl_days.web="none"', "graph_retrieval=false"])
    text = c.to_toml()
    assert 'user_provided = "none"' in text
    back = CRPConfig.from_toml(text)
    assert back == c
    assert back.ttl_days["web"] is None and back.ttl_days["news"] == 60.0


def test_set_args_parse_types_and_reject_unknown_or_wrong_type():
    c = CRPConfig().with_set_args(["cdr_min_relevance=0.6", "candidate_k=80", "backfill=off"])
    assert (c.cdr_min_relevance, c.candidate_k, c.backfill) == (0.6, 80, False)
    for bad, needle in [
        ("bogus=1", "unknown configuration key 'bogus'"),
        ("candidate_k=1.5", "whole number"),
        ("graph_retrieval=3", "true/false"),
        ("ttl_days.martian=3", "unknown source type 'martian'"),
        ("tables.news=3", "unknown configuration table"),
        ("importance.news=1.5", "between 0 and 1"),
        ("ttl_days.news=0", "positive"),
        ('cdr_min_relevance="high"', "expects a number"),
        ("noequals", "key=value"),
    ]:
        with pytest.raises(ConfigError, match=needle.replace("(", r"\(")):
            CRPConfig().with_set_args([bad])


@pytest.mark.parametrize(
    "assignment",
    ["token_budget=1500\nfoo=2", "token_budget=1500\nfoo", "token_budget=1500\r", "source_type_map.x=a\x1bb"],
)
def test_set_value_with_a_control_character_is_refused_not_cut(assignment):
    """Issue 32, hostile item 7: TOML read ``1500\nfoo=2`` as 1500 and dropped the rest in silence."""
    with pytest.raises(ConfigError) as err:
        CRPConfig().with_set_args([assignment])
    msg = str(err.value)
    assert "--set" in msg and repr(assignment) in msg and "control character U+00" in msg
    assert "\n" not in msg and "\r" not in msg and "\x1b" not in msg  # shown escaped, never raw


def test_bad_toml_is_a_config_error():
    with pytest.raises(ConfigError, match="not valid TOML"):
        CRPConfig.from_toml("cdr_min_relevance = [")
    with pytest.raises(ConfigError, match="unknown configuration key"):
        CRPConfig.from_toml("cdr_min_relevence = 0.5\n")


def test_diff_lists_changed_flat_keys():
    a = CRPConfig()
    b = a.with_overrides({"ttl_days": {"news": 45}, "token_budget": 1000})
    assert a.diff(b) == {"ttl_days.news": (30.0, 45.0), "token_budget": (2048, 1000)}


@given(st.floats(0.0, 1.0), st.floats(0.0, 1.0), st.integers(1, 200))
def test_any_valid_values_round_trip(floor, cap, budget):
    c = CRPConfig(min_novelty_floor=floor, coverage_penalty_cap=cap, envelope_fact_budget=budget)
    assert CRPConfig.from_toml(c.to_toml()) == c
    assert 1 <= c.anchor_budget <= budget
    assert math.isfinite(c.min_novelty_floor)


def test_kb_data_fingerprint_covers_every_fact_field():
    """A CKF differing only in a timestamp, TTL, source type, status or weight must not share
    cached results with the original (the dashboard keys its caches on the fingerprint)."""
    from dataclasses import replace
    from datetime import datetime

    from crp_core.model import Fact, KnowledgeBase

    base = Fact(
        "f1",
        "etcd default client port is 2379",
        source_type="official_documentation",
        modified_at=datetime(2026, 1, 1, tzinfo=UTC),
    )
    fp = KnowledgeBase((base,)).data_fingerprint
    variants = [
        replace(base, modified_at=datetime(2025, 1, 1, tzinfo=UTC)),
        replace(base, ingested_at=datetime(2025, 1, 1, tzinfo=UTC)),
        replace(base, ttl_kind="explicit", ttl_seconds=86400.0, ttl_text="P1D"),
        replace(base, ttl_kind="timeless", ttl_text="none"),
        replace(base, source_type="community"),
        replace(base, status="STALE"),
        replace(base, importance_weight=0.5),
        replace(base, metadata={"v": 1}),
        replace(base, content="etcd default client port is 4001"),
    ]
    fps = {KnowledgeBase((v,)).data_fingerprint for v in variants}
    assert fp not in fps and len(fps) == len(variants)
    assert KnowledgeBase((replace(base, line=7),)).data_fingerprint == fp  # where it came from is not data
    # the knowledge identity ignores statuses (operator decisions stay attached to a cleaned export)
    assert KnowledgeBase((replace(base, status="QUARANTINED"),)).fingerprint == KnowledgeBase((base,)).fingerprint


@pytest.mark.parametrize("beside", [False, True])
def test_kb_fingerprints_cover_the_vectors_whichever_way_they_are_hashed(monkeypatch, beside):
    """Large embeddings are hashed on a thread beside the facts (``data_fingerprint``): one changed bit, a row
    order or a model is still another key, and the same data the same key; the identity is unchanged by it."""
    import numpy as np

    from crp_core import model
    from crp_core.model import Fact, KnowledgeBase

    monkeypatch.setattr(model, "_BESIDE_BYTES", 0 if beside else 1 << 40)
    facts = (Fact("a", "etcd port is 2379"), Fact("b", "etcd port is 4001"))
    x = np.arange(8, dtype=np.float32).reshape(2, 4) + 1
    flipped = x.copy()
    flipped.view(np.uint32)[1, 3] ^= 1  # the last bit of one value
    kbs = [
        KnowledgeBase(facts, embeddings=x, embedding_model="m"),
        KnowledgeBase(facts, embeddings=flipped, embedding_model="m"),
        KnowledgeBase(facts, embeddings=x[::-1].copy(), embedding_model="m"),
        KnowledgeBase(facts, embeddings=x, embedding_model="other"),
        KnowledgeBase(facts),
    ]
    assert len({k.data_fingerprint for k in kbs}) == len(kbs) and len({k.fingerprint for k in kbs}) == len(kbs)
    again = KnowledgeBase(facts, embeddings=x.copy(), embedding_model="m")
    assert again.data_fingerprint == kbs[0].data_fingerprint and again.fingerprint == kbs[0].fingerprint
    monkeypatch.setattr(model, "_BESIDE_BYTES", 1 << 40 if beside else 0)
    assert KnowledgeBase(facts, embeddings=x, embedding_model="m").fingerprint == kbs[0].fingerprint


def test_layered_config_precedence(tmp_path):
    """defaults < --config file < scenario config < --set (docs/DECISIONS.md)."""
    from crp_core.config import layered_config

    path = tmp_path / "c.toml"
    path.write_text("token_budget = 1000\ncandidate_k = 60\ncdr_min_relevance = 0.5\n", encoding="utf-8")
    c = layered_config(str(path), {"candidate_k": 70, "cdr_min_relevance": 0.6}, ["cdr_min_relevance=0.65"])
    assert (c.token_budget, c.candidate_k, c.cdr_min_relevance) == (1000, 70, 0.65)
    assert layered_config() == CRPConfig()
    with pytest.raises(ConfigError, match="scenario config: unknown configuration key 'nope'"):
        layered_config(None, {"nope": 1})


# ---- valid ranges: one place, every entry point ----------------------------------------------------
@pytest.mark.parametrize(
    "assignment",
    [
        "candidate_k=1000000000",
        "graph_k=300000000",
        "kmeans_n_init=100000000",
        "token_budget=0",
        "max_hops=99",
        "hnsw_ef_search=-1",
        "stale_floor=1.5",
    ],
)
def test_out_of_range_values_are_refused_with_the_range(assignment):
    key = assignment.split("=")[0]
    with pytest.raises(ConfigError, match=rf"'{key}' must be .*between"):
        CRPConfig().with_set_args([assignment])


def test_every_numeric_key_has_a_range_that_holds_its_default():
    from dataclasses import fields

    from crp_core.config import RANGES, valid_range

    for f in fields(CRPConfig):
        if str(f.type) in ("int", "float"):
            lo, hi = valid_range(f.name)
            assert lo <= getattr(CRPConfig(), f.name) <= hi, f.name
    assert valid_range("graph_retrieval") is None and valid_range("known_conflict_action") is None
    assert RANGES["candidate_k"] == (1, 10_000)


@pytest.mark.parametrize(
    ("overrides", "needle"),
    [
        ({"candidate_k": {}}, "configuration key 'candidate_k' expects a whole number, got {}"),
        ({"graph_retrieval": {}}, "configuration key 'graph_retrieval' expects true/false, got {}"),
        ({"gossip": {}}, "unknown configuration key 'gossip'; the keys: docs/reference/config.md"),
        ({"candidate_k": {"a": 1}}, "configuration key 'candidate_k' expects a whole number, got {'a': 1}"),
    ],
)
def test_a_table_for_a_key_that_holds_a_value_is_refused(overrides, needle):
    """An empty table flattened to nothing: {"candidate_k": {}} (a scenario's config, TOML, --set) ran on
    the default without a word."""
    with pytest.raises(ConfigError) as ei:
        CRPConfig().with_overrides(overrides)
    assert str(ei.value) == needle
    with pytest.raises(ConfigError, match="expects a whole number, got {}"):
        CRPConfig().with_set_args(["candidate_k={}"])
    assert CRPConfig().with_overrides({"ttl_days": {}}) == CRPConfig()  # a table key may be given empty


@pytest.mark.parametrize(
    "key, said",
    [
        ("contradiction_similarty", "did you mean 'contradiction_similarity'?"),
        ("ttl_days_x", "did you mean 'ttl_days'?"),
        ("gossip", "the keys: docs/reference/config.md"),
    ],
)
def test_an_unknown_key_names_the_closest_keys(key, said):
    with pytest.raises(ConfigError) as exc:
        layered_config(overrides={key: 1})
    assert str(exc.value) == f"unknown configuration key {key!r}; {said}"


def test_an_unknown_table_names_the_closest_tables():
    with pytest.raises(ConfigError) as exc:
        layered_config(overrides={"ttl_day.news": 1})
    assert str(exc.value) == "unknown configuration table 'ttl_day' in key 'ttl_day.news'; did you mean 'ttl_days'?"
