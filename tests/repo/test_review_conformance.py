"""Independent spec-conformance review of crp_core against the project reference (docs/reference/).

Each test pins one sentence of docs/reference/ with hand-computed values (arithmetic in comments).
"""

from __future__ import annotations

import numpy as np
import pytest

from crp_core.config import CRPConfig
from crp_core.pipeline import run_pipeline
from crp_core.stages.packing import PackItem, pack_envelope, word_counter
from tests.support.factories import fact, make_corpus, make_scenario

IDS = ["a", "b", "c", "x"]


def _pack_corpus():
    facts = [fact(i, f"content of {i}") for i in IDS]
    return make_corpus(facts, np.eye(len(IDS)), token_counts=[5] * len(IDS))


# ---- docs/reference/pipeline.md §6: tiers on each anchor's CDR / the best *anchor* CDR; connectors never enter a tier
def test_packing_tiers_use_the_best_anchor_score_connectors_never_enter_a_tier():
    """Envelope scores: anchors a .50, b .45, c .20; connector x 1.00 (bridges a-b).

    Best anchor CDR = .50 (the connector's 1.00 is on another scale), so the ratios are a 1.0 ->
    critical, b .90 -> critical, c .40 -> supporting. Sandwich [critical[0], critical[-1]] = [a, b],
    supporting [c], critical[1:-1] = []: [a, b, c]. x's first bridged anchor is a, in the primacy block
    (positions 1-2): x goes right after that block, before c.
    """
    corpus = _pack_corpus()
    items = [
        PackItem(0, "anchor", 0.50),
        PackItem(1, "anchor", 0.45),
        PackItem(2, "anchor", 0.20),
        PackItem(3, "connector", 1.00, (0, 1)),
    ]
    env = pack_envelope(corpus, items, config=CRPConfig(), count_tokens=word_counter)
    assert [p.fact_id for p in env.order] == ["a", "b", "x", "c"]
    tiers = {p.fact_id: p.tier for p in env.order}
    assert tiers == {"a": "critical", "b": "critical", "c": "supporting", "x": None}


# ---- docs/reference/reports.md: `crp-inspect fanout` prints partitions, headers, branches, fan_in
# "and the same for naive"
def test_fanout_report_naive_carries_the_same_keys_headers_included():
    """Two residual sub-queries, width 2 -> fan-out active (one sub-query per partition).

    The naive run has no disjoint coverage partitions (SPEC-027 §1.7 counts partitions created), so its
    headers drop CRP-Context-Coverage-Partitions; its Coverage-Depth is the naive shared set's size after
    T2: 1 addressed + 2 written = 3.
    """
    from crp_core.headers import PARTITIONS as PARTITIONS_HEADER
    from crp_core.report import fanout_report

    facts = [fact("f1", "alpha one", ttl="none"), fact("f2", "beta two", ttl="none")]
    corpus = make_corpus(facts, [[1, 0, 0], [0, 1, 0]])
    scen = make_scenario(
        [1, 1, 0],
        sub_queries=[("c", [0, 0, 1]), ("s1", [1, 0, 0]), ("s2", [0, 1, 0])],
        addressed=[("c", 0.5)],
        fanout_width=2,
    )
    result = run_pipeline(corpus, scen)
    rep = fanout_report(result.fanout, result.headers)
    for key in ("partitions", "headers", "branches", "fan_in"):
        assert key in rep and key in rep["naive"], key
    assert rep["headers"][PARTITIONS_HEADER] == "2"
    assert PARTITIONS_HEADER not in rep["naive"]["headers"]
    assert rep["naive"]["headers"]["CRP-Context-Coverage-Depth"] == "3"
    assert rep["naive"]["fan_in"]["coverage_depth"] == 3
    # every other header is the run's own
    others = {k: v for k, v in rep["headers"].items() if k not in (PARTITIONS_HEADER, "CRP-Context-Coverage-Depth")}
    assert {k: v for k, v in rep["naive"]["headers"].items() if k != "CRP-Context-Coverage-Depth"} == others


# ---- docs/reference/pipeline.md §4: processing order, skipped pairs, count -------------------------------------------
def test_three_way_conflict_order_skip_and_count():
    """A, B, C pairwise cos > 0.85 and NUMBER_CHANGED (2379 / 4001 / 2380); ``now`` 2026-06-01.

    authority = source_authority * recency * importance:
      A official_documentation, fresh:      0.80 * 1.0 * 0.80 = 0.64
      B version_specific, status STALE:     0.80 * 0.30 * 0.85 = 0.204
      C community, fresh:                   0.75 * 1.0 * 0.60 = 0.45
    Pair order (higher authority desc, then ids): (A,B) .64, (A,C) .64, (B,C) .45.
    A suppresses B, A suppresses C, (B,C) is skipped: listed, not arbitrated, not counted -> header "2".
    """
    e = np.eye(3)
    facts = [
        fact("A", "etcd default client port is 2379", modified_at="2026-05-01"),
        fact(
            "B",
            "etcd default client port is 4001",
            source_type="version_specific",
            status="STALE",
            modified_at="2026-05-01",
        ),
        fact("C", "etcd default client port is 2380", source_type="community", modified_at="2026-05-01"),
    ]
    corpus = make_corpus(facts, [e[0], e[0] + 0.2 * e[1], e[0] + 0.2 * e[2]])
    result = run_pipeline(corpus, make_scenario([1, 0, 0]))
    pairs = [(p.fact_a, p.fact_b, p.suppressed, p.tied, p.skipped) for p in result.resolution.pairs]
    assert pairs == [("A", "B", "B", False, False), ("A", "C", "C", False, False), ("B", "C", None, False, True)]
    auth = result.resolution.pairs[0].authority
    assert auth["A"].authority == pytest.approx(0.64) and auth["B"].authority == pytest.approx(0.204)
    assert result.resolution.pairs[1].authority["C"].authority == pytest.approx(0.45)
    assert result.headers["CRP-Context-Conflicts-Resolved"] == "2"
    events = [e for e in result.audit if e.event == "CONTRADICTION_RESOLVED"]
    assert [(ev.data["fact_a"], ev.data["fact_b"], ev.data["winner"]) for ev in events] == [
        ("A", "B", "A"),
        ("A", "C", "A"),
    ]
    assert [p.fact_id for p in result.envelope.order] == ["A"]


# ---- docs/reference/pipeline.md §1: K per query AND per sub-query, relevance = cos(fact, QUERY) ----------------------
def test_sub_query_only_candidate_keeps_query_relevance():
    """candidate_k = 1: the query's top-1 is Q (e0), the sub-query's top-1 is S (e1).

    S enters through the sub-query search, but its relevance is cos(S, query) = cos(e1, e0 + 0.5 e1)
    = 0.5 / sqrt(1.25) = 0.4472 < 0.55: gated out (still in the candidate record, passed_gate False).
    """
    facts = [fact("Q", "query fact"), fact("S", "sub-query fact"), fact("Z", "far fact")]
    corpus = make_corpus(facts, [[1, 0, 0], [0, 1, 0], [0, 0, 1]])
    scen = make_scenario([1, 0.5, 0], sub_queries=[("s1", [0, 1, 0])])
    result = run_pipeline(corpus, scen, CRPConfig(candidate_k=1))
    cand = result.candidates
    got = {
        corpus.kb.facts[int(r)].fact_id: (float(rel), bool(ok))
        for r, rel, ok in zip(cand.idx, cand.relevance, cand.passed_gate)
    }
    assert set(got) == {"Q", "S"}
    assert got["S"][0] == pytest.approx(0.5 / np.sqrt(1.25), abs=1e-6) and got["S"][1] is False
    assert got["Q"][0] == pytest.approx(1 / np.sqrt(1.25), abs=1e-6) and got["Q"][1] is True


# ---- docs/reference/pipeline.md §2: clamp from below, residual pull zero cases ---------------------------------------
def test_negative_coverage_score_clamps_to_zero_penalty_and_pull_needs_both_sets():
    """Coverage Set = {c: e0 reversed, depth .9}; fact F = e0: coverage_score = .9 * -1 / .9 = -1.0,
    penalty = clamp(-1, 0, .8) = 0, novelty = 1.0. ResidualSet {r: e1}: pull = cos(F, e1) = 0.
    Fact G = (e0 + e1)/sqrt 2: pull = 0.7071; coverage = -0.7071 -> penalty 0.
    With no addressed sub-query (Coverage Set empty) the pull is 0 even though the ResidualSet is not.
    """
    s2 = np.sqrt(0.5)
    facts = [fact("F", "first", ttl="none"), fact("G", "second", ttl="none")]
    corpus = make_corpus(facts, [[1, 0], [s2, s2]])
    scen = make_scenario([1, 0], sub_queries=[("c", [-1, 0]), ("r", [0, 1])], addressed=[("c", 0.9)])
    cdr = run_pipeline(corpus, scen).cdr
    pos = {corpus.kb.facts[int(r)].fact_id: i for i, r in enumerate(cdr.idx)}
    f, g = pos["F"], pos["G"]
    assert cdr.coverage_score[f] == pytest.approx(-1.0, abs=1e-6)
    assert cdr.coverage_penalty[f] == 0.0 and cdr.novelty[f] == 1.0
    assert cdr.residual_pull[f] == pytest.approx(0.0, abs=1e-6)
    assert cdr.residual_pull[g] == pytest.approx(s2, abs=1e-6)
    assert cdr.coverage_penalty[g] == 0.0
    empty_cov = run_pipeline(corpus, make_scenario([1, 0], sub_queries=[("r", [0, 1])]))
    assert np.all(empty_cov.cdr.residual_pull == 0.0)
    assert empty_cov.headers["CRP-Context-Coverage-Depth"] == "0"
    assert empty_cov.headers["CRP-Context-Coverage-Score"] == "1.00"
    # Coverage Set non-empty, ResidualSet empty (everything addressed) -> pull 0
    all_done = run_pipeline(corpus, make_scenario([1, 0], sub_queries=[("r", [0, 1])], addressed=[("r", 0.5)]))
    assert np.all(all_done.cdr.residual_pull == 0.0)


# ---- docs/reference/reports.md (Recency-Penalised) + docs/reference/pipeline.md §3 (connector score, recency) ----
def test_recency_penalised_counts_connector_candidates_not_gated_out_facts():
    """Geometry of test_pipeline's A-B-D chain plus E, orthogonal to everything (no edge, relevance 0).

    A, D fresh anchors (relevance 0.56). B: relevance 0, gated out in stage 1 but a connector candidate
    (edges to A and D, cos 0.646225). B modified 2025-09-01, now 2026-06-01: age 273 d, ttl 365 d,
    fresh 182.5 d: factor = 1 - 0.7 * (273 - 182.5) / 182.5 = 0.652877.
    connector_score = bridge 0.646225 * novelty 1 * recency 0.652877 * max(0, 0.30) = 0.126571.
    E: modified 2019-01-01 (expired, 0.30) but gated out and no connector candidate -> not counted.
    Recency-Penalised = |{B}| = 1.
    """
    g = np.array([[1, 0.3, 0.78], [0.3, 1, 0.78], [0.78, 0.78, 1]])
    low = np.linalg.cholesky(g)
    b = 0.56
    a = np.sqrt(1 - b * b)
    vec = [np.r_[a * low[0], b, 0], np.r_[a * low[1], b, 0], np.r_[low[2], 0, 0], np.r_[0, 0, 0, 0, 1.0]]
    facts = [
        fact("A", "pods receive new IPs when rescheduled", modified_at="2026-05-01"),
        fact("D", "stale DNS caches delay endpoint propagation", modified_at="2026-05-01"),
        fact("B", "services track pod endpoints through label selectors", modified_at="2025-09-01"),
        fact("E", "an unrelated and very old remark", modified_at="2019-01-01"),
    ]
    corpus = make_corpus(facts, np.array(vec))
    r = run_pipeline(corpus, make_scenario([0, 0, 0, 1.0, 0]))
    conn = r.cdgr.connectors
    i = conn.idx.tolist().index(2)
    assert conn.recency_factor[i] == pytest.approx(1 - 0.7 * 90.5 / 182.5, abs=1e-9)
    assert conn.connector_score[i] == pytest.approx(0.646225 * 0.652877 * 0.30, abs=1e-5)
    assert 3 not in conn.idx.tolist()
    assert r.headers["CRP-Context-Recency-Penalised"] == "1"
    # two anchors form the primacy block; the connector follows it (docs/reference/pipeline.md §6)
    assert [p.fact_id for p in r.envelope.order] == ["A", "D", "B"]


# ---- docs/reference/config.md: every key with its default, literally as listed ------------------------------------
DOCUMENTED_DEFAULTS = dict(
    cdr_min_relevance=0.55,
    min_novelty_floor=0.20,
    coverage_penalty_cap=0.80,
    stale_floor=0.30,
    fresh_fraction=0.5,
    ngram_n=6,
    ngram_step_penalty=0.15,
    ngram_penalty_cap=0.80,
    candidate_k=50,
    hnsw_m=16,
    hnsw_ef_construction=200,
    hnsw_ef_search=100,
    graph_retrieval=True,
    graph_k=20,
    graph_edge_min=0.60,
    max_hops=2,
    connector_budget=0.30,
    min_connector_relevance=0.30,
    envelope_fact_budget=20,
    token_budget=2048,
    contradiction_similarity=0.85,
    authority_tie_tolerance=1e-9,
    backfill=True,
    dedup_similarity=0.95,
    fanin_dedup_similarity=0.92,
    branch_depth_weight=0.70,
    kmeans_seed=0,
    kmeans_n_init=10,
)


def test_every_spec_notes_5_key_has_its_default_and_type():
    c = CRPConfig()
    for key, want in DOCUMENTED_DEFAULTS.items():
        got = getattr(c, key)
        assert got == want and type(got) is type(want), (key, got, want)
    # tables (docs/reference/pipeline.md §2), ttl in days, None = no expiry
    assert c.ttl_days.as_dict() == dict(
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
    assert c.source_authority.as_dict() == dict(
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
    assert c.importance.as_dict() == dict(
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
    # anchors = floor(0.7 * 20) = 14 (docs/reference/pipeline.md §3)
    assert c.anchor_budget == 14


@pytest.mark.parametrize(
    "assignment, fragment",
    [
        ("no_such_key=1", "unknown configuration key"),
        ("candidate_k=2.5", "whole number"),
        ("graph_retrieval=1", "true/false"),
        ("ttl_days.gossip=3", "unknown source type"),
        ("importance.news=none", "expects a number"),
        ("stale_floor=abc", "expects a number"),
    ],
)
def test_set_unknown_key_or_wrong_type_is_a_clear_error(assignment, fragment):
    from crp_core.errors import ConfigError

    with pytest.raises(ConfigError, match=fragment):
        CRPConfig().with_set_args([assignment])


def test_set_dotted_table_keys():
    c = CRPConfig().with_set_args(["ttl_days.news=60", "ttl_days.regulatory=none", "source_authority.web=0.65"])
    assert c.ttl_days.news == 60.0 and c.ttl_days.regulatory is None and c.source_authority.web == 0.65
