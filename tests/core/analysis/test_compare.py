"""Compare two configs: per-fact rank / score deltas, winner flips, and an explain-diff that
names the factor (and the config change) that moved a fact. Numbers from ``tiny_case`` (test_sweep)."""

from __future__ import annotations

import pytest

from crp_core.analysis.compare import compare_runs, factor_effects, fmt_value
from crp_core.pipeline import run_pipeline
from tests.support.sweep_case import tiny_case


def _runs(**changes):
    corpus, scen, config = tiny_case()
    base = run_pipeline(corpus, scen, config)
    cand = run_pipeline(corpus, scen, config.with_overrides(changes))
    return compare_runs(base, cand)


def test_explain_names_recency_and_the_ttl_change():
    # F1 is 135 days old. ttl 365: fresh until 182.5 d -> recency 1.0, CDR .8*.80 = .640 (rank 3 after P1 .704,
    # P2 .696). ttl 180: fresh until 90 d, decay 1 - .7*(135-90)/90 = .65 -> CDR .640*.65 = .416, rank 4 (after F2 .624)
    cmp = _runs(**{"ttl_days.official_documentation": 180})
    d = cmp.delta("F1")
    assert (d.base.cdr_rank, d.cand.cdr_rank, d.rank_delta) == (3, 4, 1)
    assert d.score_delta == pytest.approx(0.416 - 0.640)
    text = cmp.explain("F1")
    assert text.startswith("F1: ranked lower (CDR rank 3 -> 4, score 0.6400 -> 0.4160)")
    assert "because recency 1.00 -> 0.65 after ttl_days.official_documentation 365 -> 180" in text
    assert "rule fresh -> decay" in text and "age 135.0 d" in text
    assert cmp.config_diff == {"ttl_days.official_documentation": (365.0, 180.0)}


def test_explain_names_the_largest_factor_first():
    # importance .8 -> .7 (|ln(.7/.8)| = .134) and recency 1 -> .65 (|ln .65| = .431): recency leads
    cmp = _runs(**{"ttl_days.official_documentation": 180, "importance.official_documentation": 0.7})
    text = cmp.explain("F1")
    assert "because recency 1.00 -> 0.65" in text
    assert "(also importance 0.80 -> 0.70 after importance.official_documentation 0.8 -> 0.7)" in text
    effects = factor_effects(cmp.delta("F1").base, cmp.delta("F1").cand)
    assert [e[0] for e in effects] == ["recency_factor", "importance_weight"]
    # P2 has an explicit importance (0.8): the community default does not feed it, and its score is unchanged
    cmp = _runs(**{"importance.community": 0.1})
    assert cmp.explain("P2").startswith("P2: unchanged (CDR rank 2, score 0.6960")
    # importance alone: P1's CDR .704 -> .5*.88 = .44
    cmp = _runs(**{"importance.official_documentation": 0.5})
    assert "because importance 0.80 -> 0.50 after importance.official_documentation 0.8 -> 0.5" in cmp.explain("P1")


def test_gate_change_is_named():
    # gate .85: only P1 (.88), P2 (.87), S (.90) pass; F1 (.80) fails
    cmp = _runs(cdr_min_relevance=0.85)
    text = cmp.explain("F1")
    assert "because relevance 0.800 now fails the gate after cdr_min_relevance 0.55 -> 0.85" in text
    assert "Outcome: anchor (in envelope) -> gated" in text
    assert cmp.delta("F1").envelope_change == "left"


def test_winner_flip_and_envelopes_side_by_side():
    # community authority .75 -> .90: P2 .90*1*.8 = .72 > P1 .80*1*.8 = .64: P1 is suppressed now, F2 fills the slot
    cmp = _runs(**{"source_authority.community": 0.9})
    assert len(cmp.flips) == 1
    f = cmp.flips[0]
    assert (f.fact_a, f.fact_b, f.base_outcome, f.cand_outcome) == ("P1", "P2", "P1", "P2")
    assert f.cand_authority["P2"] == pytest.approx(0.72) and f.base_authority["P2"] == pytest.approx(0.60)
    assert sorted(cmp.base_envelope) == ["F1", "F2", "P1"] and sorted(cmp.cand_envelope) == ["F1", "F2", "P2"]
    assert cmp.entering == ("P2",) and cmp.leaving == ("P1",)
    assert cmp.jaccard == pytest.approx(2 / 4)
    # P1's own score did not move; its outcome did, and the outcome says where it ended on each side
    text = cmp.explain("P1")
    assert "Outcome: anchor (in envelope) -> anchor (suppressed)" in text
    assert "Outcome: anchor (suppressed) -> anchor (in envelope)" in cmp.explain("P2")
    assert "did not change" in text and "suppressed by P2" in text


def test_union_of_scored_facts_and_unknown_fact():
    cmp = _runs(stale_floor=0.5)
    assert {d.fact_id for d in cmp.facts} == {"S", "P1", "P2", "F1", "F2"}
    assert [d.fact_id for d in cmp.facts][:2] == ["P1", "P2"]  # base CDR order
    # S: recency .30 -> .50 after stale_floor .3 -> .5; CDR .216 -> .36, still rank 5
    assert "scored higher" in cmp.explain("S")
    assert "recency 0.30 -> 0.50 after stale_floor 0.3 -> 0.5" in cmp.explain("S")
    with pytest.raises(KeyError, match="scored by neither run"):
        cmp.explain("nope")
    assert cmp.explain("P1") == "P1: unchanged (CDR rank 1, score 0.7040, anchor, in the envelope)"
    assert fmt_value(365.0) == "365" and fmt_value(None) == "none" and fmt_value(True) == "true"


def test_fact_scored_by_one_run_only():
    from crp_core.config import CRPConfig
    from tests.support.factories import fact, make_corpus, make_scenario

    # A is the anchor; C is reachable only through the graph (relevance .30, gated out and not a stage-1
    # candidate when candidate_k = 1). With max_hops 1 vs 2 nothing changes here, but graph retrieval off
    # removes the connector candidates entirely.
    facts = [fact("A", "alpha one"), fact("B", "beta two"), fact("C", "gamma three")]
    vecs = [[1, 0, 0], [0.7, 0.714, 0], [0.3, 0.95, 0.08]]
    corpus = make_corpus(facts, vecs, CRPConfig(candidate_k=1))
    scen = make_scenario([1, 0, 0])
    base = run_pipeline(corpus, scen, CRPConfig(candidate_k=1, envelope_fact_budget=2))
    cand = run_pipeline(corpus, scen, CRPConfig(candidate_k=1, envelope_fact_budget=2, graph_retrieval=False))
    cmp = compare_runs(base, cand)
    only = [d for d in cmp.facts if d.cand is None]
    assert only, "graph walk found connector candidates in the base run"
    text = cmp.explain(only[0].fact_id)
    assert "scored only in the baseline run" in text and "graph_retrieval true -> false" in text
