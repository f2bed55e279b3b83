"""What-if sweeps: every point equals a separate pipeline run at that value; the metrics and
the envelope diff are those of that run. ``tiny_case`` (also used by test_compare / test_baseline)
is a 6-d corpus whose cosines and CDR scores are computed by hand below."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crp_core.analysis.sweep import (
    FANOUT_WIDTH,
    check_key,
    jaccard,
    point_inputs,
    sweep,
    sweepable_keys,
)
from crp_core.config import CRPConfig
from crp_core.errors import ConfigError
from crp_core.pipeline import run_pipeline
from tests.support.factories import vectors_for
from tests.support.paths import REPO_ROOT
from tests.support.sweep_case import tiny_case


def env(result) -> list[str]:
    return [p.fact_id for p in result.envelope.order]


def assert_same_run(a, b) -> None:
    """Two PipelineResults are the same run: envelope, headers, every CDR factor, the pairs."""
    assert env(a) == env(b)
    assert dict(a.headers) == dict(b.headers)
    assert a.envelope.text == b.envelope.text
    np.testing.assert_array_equal(a.cdr.idx, b.cdr.idx)
    for name in ("relevance", "novelty", "recency_factor", "importance_weight", "ngram_penalty", "cdr_score"):
        np.testing.assert_array_equal(getattr(a.cdr, name), getattr(b.cdr, name))
    assert [(p.fact_a, p.fact_b, p.suppressed, p.tied) for p in a.resolution.pairs] == [
        (p.fact_a, p.fact_b, p.suppressed, p.tied) for p in b.resolution.pairs
    ]
    assert (a.fanout is None) == (b.fanout is None)
    if a.fanout is not None:
        for mode in ("partitioned", "naive"):
            ra, rb = getattr(a.fanout, mode), getattr(b.fanout, mode)
            assert ra.partitions == rb.partitions and ra.merged == rb.merged
            assert [d.fact_ids for d in ra.duplicates] == [d.fact_ids for d in rb.duplicates]


def test_the_tiny_case_is_what_the_docstring_says():
    corpus, scen, config = tiny_case()
    r = run_pipeline(corpus, scen, config)
    assert sorted(env(r)) == ["F1", "F2", "P1"]
    pos = {corpus.kb.facts[int(i)].fact_id: k for k, i in enumerate(r.cdr.idx)}
    assert r.cdr.cdr_score[pos["S"]] == pytest.approx(0.8 * 0.90 * 0.30)
    assert r.cdr.cdr_score[pos["F1"]] == pytest.approx(0.8 * 0.80)
    assert [p.suppressed for p in r.resolution.pairs] == ["P2"]


def test_ttl_sweep_points_equal_separate_runs_and_carry_the_diff():
    corpus, scen, config = tiny_case()
    values = [100.0, 365.0, 1000.0, 2000.0]
    seen = []
    res = sweep(
        corpus, scen, config, "ttl_days.official_documentation", values, progress=lambda d, t, v: seen.append((d, t, v))
    )
    assert seen == [(1, 5, 365.0), (2, 5, 100.0), (3, 5, 365.0), (4, 5, 1000.0), (5, 5, 2000.0)]
    assert res.baseline.value == 365.0 and sorted(res.baseline.envelope) == ["F1", "F2", "P1"]
    for v, p in zip(values, res.points):
        separate = run_pipeline(corpus, scen, config.with_overrides({"ttl_days.official_documentation": v}))
        assert_same_run(p.result, separate)
        assert p.envelope == tuple(env(separate))
    by = {p.value: p for p in res.points}
    # ttl 2000 d: fresh until 1000 d, S (age 882 d) gets recency 1.0 -> CDR .72, rank 1: envelope S, P1, F1
    # (P2 still suppressed, backfilled by F1: .64 > F2 .624)
    p = by[2000.0]
    assert sorted(p.envelope) == ["F1", "P1", "S"]
    assert p.entering == ("S",) and p.leaving == ("F2",)
    assert p.jaccard == pytest.approx(2 / 4)  # {P1, F1} / {S, P1, F1, F2}
    assert p.conflicts_resolved == 1 and p.conflicts_unresolved == 0
    # ttl 100 d: F1 (135 d) expired -> .30, P1/P2/F2 (31 d) fresh (<= 50 d); S expired: Recency-Penalised = 2
    # envelope P1, F2 and the backfill of P2's slot: S .216 vs F1 .8*.8*.3 = .192 -> S
    p = by[100.0]
    assert sorted(p.envelope) == ["F2", "P1", "S"]
    assert p.recency_penalised == 2
    # mean recency of the envelope: P1 1.0, F2 1.0, S .30 -> 2.3 / 3
    assert p.mean_recency == pytest.approx(2.3 / 3)
    assert by[365.0].jaccard == 1.0 and by[365.0].entering == () and by[365.0].leaving == ()


def test_fanout_width_and_gate_points_equal_separate_runs(synthetic_sample_dir):
    from crp_core.corpus.prepared import prepare_corpus
    from crp_core.io.ckf import load_ckf
    from crp_core.io.scenario import load_scenario

    kb = load_ckf(str(synthetic_sample_dir / "knowledge_base.jsonl"))
    scen = load_scenario(str(synthetic_sample_dir / "scenarios" / "demo.json"))
    config = CRPConfig()
    corpus = prepare_corpus(kb, config=config)
    res = sweep(corpus, scen, config, FANOUT_WIDTH, [0, 2, 3])
    for w, p in zip([0, 2, 3], res.points):
        separate = run_pipeline(corpus, scen.replace(fanout_width=w), config)
        assert_same_run(p.result, separate)
        assert p.fanout_width == w
        assert (p.result.fanout is not None) == (w > 1)
    res = sweep(corpus, scen, config, "cdr_min_relevance", [0.0, 0.3, 0.9])
    for v, p in zip([0.0, 0.3, 0.9], res.points):
        assert_same_run(p.result, run_pipeline(corpus, scen, config.replace(cdr_min_relevance=v)))
    assert len(res.points[2].envelope) <= len(res.points[0].envelope)


def test_graph_keys_are_accepted_index_keys_refused():
    corpus, scen, config = tiny_case(CRPConfig(envelope_fact_budget=3))
    res = sweep(corpus, scen, config, "graph_edge_min", [0.5, 0.9])
    assert res.rebuilds_graph
    for v, p in zip([0.5, 0.9], res.points):
        assert_same_run(p.result, run_pipeline(corpus, scen, config.replace(graph_edge_min=v)))
    for key in ("hnsw_m", "hnsw_ef_construction", "ckf_max_bytes"):
        with pytest.raises(ConfigError, match=f"cannot sweep '{key}'"):
            sweep(corpus, scen, config, key, [4])
    with pytest.raises(ConfigError, match="unknown configuration key"):
        check_key("ttl_days.nonsense")
    assert "hnsw_m" not in sweepable_keys() and sweepable_keys()[0] == "ttl_days.official_documentation"


def test_a_bad_value_is_refused_before_anything_runs():
    corpus, scen, config = tiny_case()
    calls = []
    with pytest.raises(ConfigError, match=r"sweep value 2 of 3 \(stale_floor = 1.5\)"):
        sweep(corpus, scen, config, "stale_floor", [0.2, 1.5, 0.4], progress=lambda *a: calls.append(a))
    assert calls == []
    with pytest.raises(ConfigError, match="fanout_width expects a whole number"):
        point_inputs(scen, config, FANOUT_WIDTH, -1)
    with pytest.raises(ConfigError, match="no values"):
        sweep(corpus, scen, config, "stale_floor", [])


def test_scenario_is_embedded_once(monkeypatch):
    import crp_core.corpus.prepared as corpus_mod

    corpus, scen, config = tiny_case()
    calls = []
    real = corpus_mod.embed_scenario
    monkeypatch.setattr(corpus_mod, "embed_scenario", lambda *a, **k: calls.append(1) or real(*a, **k))
    res = sweep(corpus, scen, config, "stale_floor", [0.1, 0.2, 0.5])
    assert calls == [1]
    assert len(res.points) == 3
    vecs = vectors_for(scen, corpus)
    calls.clear()
    sweep(corpus, scen, config, "stale_floor", [0.1], vectors=vecs)
    assert calls == []


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(floor=st.floats(0.0, 1.0), budget=st.integers(1, 5))
def test_diff_invariants(floor, budget):
    """entering / leaving / Jaccard are the set differences of the two envelopes, whatever the values."""
    corpus, scen, config = tiny_case()
    res = sweep(corpus, scen, config, "stale_floor", [floor])
    p = res.points[0]
    base, cur = set(res.baseline.envelope), set(p.envelope)
    assert set(p.entering) == cur - base and set(p.leaving) == base - cur
    assert p.jaccard == pytest.approx(len(base & cur) / len(base | cur))
    assert jaccard([], []) == 1.0
    res = sweep(corpus, scen, config, "envelope_fact_budget", [budget])
    assert len(res.points[0].envelope) <= budget


@pytest.mark.model
def test_sample_scenario_sweep_equals_separate_runs():

    from crp_core.corpus.embedding import default_embedder
    from crp_core.corpus.prepared import embed_scenario, prepare_corpus
    from crp_core.io.ckf import load_ckf
    from crp_core.io.scenario import load_scenario

    root = REPO_ROOT / "sample_ckf"
    kb = load_ckf(str(root / "knowledge_base.jsonl"))
    scen = load_scenario(str(root / "scenarios" / "etcd_upgrade.json"))
    config = CRPConfig().with_overrides(dict(scen.config or {}))
    embedder = default_embedder()
    corpus = prepare_corpus(kb, embedder=embedder, config=config)
    vectors = embed_scenario(scen, corpus, embedder)
    values = [30.0, 180.0, 730.0]
    res = sweep(corpus, scen, config, "ttl_days.official_documentation", values, vectors=vectors, embedder=embedder)
    for v, p in zip(values, res.points):
        separate = run_pipeline(
            corpus, scen, config.with_overrides({"ttl_days.official_documentation": v}), embedder=embedder
        )
        assert_same_run(p.result, separate)
    assert res.points[0].recency_penalised >= res.points[2].recency_penalised
    assert datetime(2026, 1, 1, tzinfo=UTC) < res.baseline.result.now
