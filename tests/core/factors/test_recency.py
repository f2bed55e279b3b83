"""Recency factor (SPEC-027 §3.2, §3.5; docs/reference/pipeline.md §2): exact values and every edge case."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crp_core.config import CRPConfig
from crp_core.factors.recency import compute_recency, concat_recency, lookup, recency_factor
from tests.support.factories import fact, make_kb

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def ago(days: float) -> datetime:
    return NOW - timedelta(days=days)


# ---- the scalar formula: docs/reference/pipeline.md §2 examples, ttl = 365 days ------------------------------
@pytest.mark.parametrize(
    "age, expected",
    [
        (100.0, 1.0),  # 100 <= fresh = 0.5 * 365 = 182.5
        (182.5, 1.0),  # exactly the fresh threshold
        # 1 - 0.7 * (273.75 - 182.5) / (365 - 182.5) = 1 - 0.7 * 0.5 = 0.65
        (273.75, 0.65),
        (365.0, 0.30),  # age >= ttl: the floor
        (1000.0, 0.30),
    ],
)
def test_spec_notes_examples(age, expected):
    assert recency_factor(age, 365.0) == pytest.approx(expected, abs=1e-12)


def test_300_days_to_four_places():
    # 1 - 0.7 * (300 - 182.5) / 182.5 = 1 - 0.7 * 0.643835... = 0.549315...
    assert round(recency_factor(300.0, 365.0), 4) == 0.5493


def test_stale_status_wins_over_everything():
    assert recency_factor(1.0, 365.0, status="STALE") == 0.30
    assert recency_factor(None, None, status="STALE") == 0.30
    assert recency_factor(1.0, 365.0, status="STALE", stale_floor=0.25) == 0.25


def test_no_expiry_unknown_age_and_future():
    assert recency_factor(10_000.0, None) == 1.0
    assert recency_factor(10_000.0, float("inf")) == 1.0
    assert recency_factor(None, 365.0) == 1.0
    assert recency_factor(float("nan"), 365.0) == 1.0
    assert recency_factor(-50.0, 365.0) == 1.0  # future: age 0


def test_configurable_floor_and_fresh_fraction():
    # fresh = 0.25 * 100 = 25; 1 - (1 - 0.5) * (50 - 25) / (100 - 25) = 1 - 0.5/3 = 0.8333...
    assert recency_factor(50.0, 100.0, stale_floor=0.5, fresh_fraction=0.25) == pytest.approx(1 - 0.5 / 3)


# ---- the vectorised table ---------------------------------------------------------------------
def _table(facts, config=CRPConfig(), now=NOW):
    kb = make_kb(facts)
    return compute_recency(kb, np.arange(len(facts)), now, config)


def test_default_ttl_by_source_type():
    facts = [
        fact("doc", source_type="official_documentation", modified_at=ago(300)),  # ttl 365
        fact("news", source_type="news", modified_at=ago(20)),  # ttl 30: 1 - 0.7 * 5/15
        fact("reg", source_type="regulatory", modified_at=ago(1000)),  # ttl 1825: fresh until 912.5
        fact("ver", source_type="version_specific", modified_at=ago(180)),  # ttl 180: expired
    ]
    t = _table(facts)
    assert t.factor[0] == pytest.approx(0.549315068493, abs=1e-9)
    assert t.factor[1] == pytest.approx(1 - 0.7 * 5 / 15)
    # 1 - 0.7 * (1000 - 912.5) / 912.5
    assert t.factor[2] == pytest.approx(1 - 0.7 * 87.5 / 912.5)
    assert t.factor[3] == pytest.approx(0.30)
    assert t.rule == ("decay", "decay", "decay", "expired")
    assert t.ttl_source == ("default",) * 4
    assert list(t.ttl_days) == [365.0, 30.0, 1825.0, 180.0]
    assert t.fresh_days[0] == pytest.approx(182.5)


def test_config_ttl_override_changes_the_default():
    cfg = CRPConfig().with_overrides({"ttl_days": {"news": 60}})
    t = _table([fact("news", source_type="news", modified_at=ago(20))], cfg)
    assert t.factor[0] == 1.0 and t.ttl_days[0] == 60.0  # 20 <= 30 = fresh


def test_explicit_ttl_beats_default():
    t = _table([fact("a", source_type="news", modified_at=ago(20), ttl="P1Y")])
    assert t.factor[0] == 1.0 and t.ttl_source == ("explicit",) and t.ttl_days[0] == 365.0


def test_timeless_and_user_provided():
    facts = [
        fact("timeless", ttl="none", modified_at=ago(10_000)),
        fact("user", source_type="user_provided", modified_at=ago(10_000)),
        # user_provided with an explicit ttl decays like any other fact: 1 - 0.7 * (45 - 30) / 30
        fact("user_ttl", source_type="user_provided", modified_at=ago(45), ttl="P60D"),
    ]
    t = _table(facts)
    assert list(t.factor[:2]) == [1.0, 1.0]
    assert t.factor[2] == pytest.approx(1 - 0.7 * 15 / 30)
    assert t.rule == ("timeless", "user_provided", "decay")
    assert t.ttl_source == ("timeless", "default", "explicit")
    assert np.isinf(t.ttl_days[0]) and np.isinf(t.ttl_days[1])


def test_stale_status_wins_in_the_table():
    facts = [
        fact("s1", status="STALE", modified_at=ago(1)),
        fact("s2", status="STALE", ttl="none"),
        fact("s3", status="STALE", source_type="user_provided"),
        fact("s4", status="STALE"),
    ]
    t = _table(facts)
    assert list(t.factor) == [0.30] * 4
    assert set(t.rule) == {"stale_status"}


def test_unknown_age_gives_one_and_a_warning():
    t = _table([fact("nodate", line=7)])
    assert t.factor[0] == 1.0 and t.rule == ("unknown_age",) and np.isnan(t.age_days[0])
    assert len(t.warnings) == 1 and "'nodate'" in t.warnings[0] and "line 7" in t.warnings[0]


def test_future_timestamp_counts_as_age_zero_with_a_warning():
    t = _table([fact("future", modified_at=NOW + timedelta(days=3), line=2)])
    assert t.factor[0] == 1.0 and t.age_days[0] == 0.0 and t.rule == ("future",)
    assert len(t.warnings) == 1 and "after now" in t.warnings[0]


def test_modified_at_defaults_to_ingested_at():
    t = _table([fact("ing", ingested_at=ago(300))])
    assert t.factor[0] == pytest.approx(0.549315068493, abs=1e-9)


def test_vectorised_matches_scalar():
    rng = np.random.default_rng(3)
    types = ["official_documentation", "news", "regulatory", "version_specific", "web"]
    facts = [fact(f"f{i}", source_type=types[i % 5], modified_at=ago(float(rng.uniform(0, 2500)))) for i in range(60)]
    cfg = CRPConfig()
    t = _table(facts, cfg)
    for i, f in enumerate(facts):
        expected = recency_factor(t.age_days[i], cfg.ttl_days[f.source_type])
        assert t.factor[i] == pytest.approx(expected, abs=1e-12)
    assert not t.factor.flags.writeable


def test_concat_and_lookup():
    facts = [fact("a", modified_at=ago(300)), fact("b", modified_at=ago(1)), fact("c", status="STALE")]
    kb = make_kb(facts)
    t1 = compute_recency(kb, np.array([2, 0]), NOW, CRPConfig())
    t2 = compute_recency(kb, np.array([0, 1]), NOW, CRPConfig())
    both = concat_recency(t1, t2)
    assert list(both.idx) == [2, 0, 1]
    assert list(lookup(both.idx, both.factor, np.array([1, 2]))) == [1.0, 0.30]
    with pytest.raises(KeyError):
        lookup(t1.idx, t1.factor, np.array([1]))


# ---- the per-run attribute table every stage indexes -------------------------------------------------
def test_fact_attributes_once_per_kb_now_and_config():
    from crp_core.factors.recency import fact_attributes

    kb = make_kb(
        [
            fact("a", modified_at=ago(273.75)),
            fact("b", source_type="community", importance_weight=0.4, modified_at=ago(10)),
            fact("c", source_type="news", modified_at=ago(31)),
        ]
    )
    attrs = fact_attributes(kb, NOW, CRPConfig())
    assert fact_attributes(kb, NOW, CRPConfig()) is attrs  # cached: computed once
    assert fact_attributes(kb, NOW, CRPConfig(stale_floor=0.2)) is not attrs
    # a: official documentation, ttl 365 d, age 273.75 d -> 0.65; b: 10 d of 365 -> 1.0; c: news, 31 d >= 30 -> floor
    assert attrs.factor.tolist() == pytest.approx([0.65, 1.0, 0.30], abs=1e-12)
    assert attrs.importance.tolist() == [0.80, 0.4, 0.50]  # explicit weight wins over the source default
    assert attrs.source_authority.tolist() == [0.80, 0.75, 0.75]
    table = attrs.recency(np.array([2, 0]))
    assert table.idx.tolist() == [2, 0] and table.rule == ("expired", "decay")
    assert compute_recency(kb, np.array([2, 0]), NOW, CRPConfig()).factor.tolist() == table.factor.tolist()


@settings(max_examples=80, deadline=None)
@given(data=st.data(), rows=st.lists(st.integers(0, 60), min_size=1, max_size=40, unique=True), ascending=st.booleans())
def test_lookup_realigns_sorted_and_unsorted_tables_as_a_dict_would(data, rows, ascending):
    table = sorted(rows) if ascending else rows
    values = [float(k) + 0.5 for k in range(len(table))]
    first = dict(zip(table, values))
    wanted = data.draw(st.lists(st.sampled_from(table), max_size=30))
    got = lookup(np.array(table, dtype=np.int64), np.array(values), np.array(wanted, dtype=np.int64))
    assert got.tolist() == [first[r] for r in wanted]
    with pytest.raises(KeyError):
        lookup(np.array(table, dtype=np.int64), np.array(values), np.array([*wanted, 61], dtype=np.int64))


@settings(max_examples=200, deadline=None)
@given(
    table=st.lists(st.integers(0, 40), max_size=30),
    rows=st.lists(st.integers(0, 40), max_size=30),
    ascending=st.booleans(),
)
def test_row_positions_finds_the_first_table_position_of_each_row(table, rows, ascending):
    """Every path of ``row_positions`` (an ascending table, distinct ascending rows, the sorted fallback,
    a row in the table twice): the first table position holding each row, and whether there is one."""
    from crp_core.factors.recency import row_positions

    if ascending:
        rows = sorted(set(rows))
    t, r = np.array(table, dtype=np.int64), np.array(rows, dtype=np.int64)
    pos, found = row_positions(t, r)
    assert pos.shape == found.shape == r.shape
    for i, row in enumerate(rows):
        where = [j for j, v in enumerate(table) if v == row]
        assert bool(found[i]) == bool(where)
        if where:
            assert int(pos[i]) == where[0]
        elif table:
            assert 0 <= int(pos[i]) < len(table)
