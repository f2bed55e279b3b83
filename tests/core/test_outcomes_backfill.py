"""A fact the backfill passed over says what was in its way (stage 4 step 4, docs/reference/pipeline.md §4):
a value conflict or a near-duplicate of a kept fact, or an operator's decision on its pair with one; the
fact that took the slot says whose slot it took.

The corpus is ``tiny_case``'s (tests/support/sweep_case.py) plus P3, "port 2381", relevance .79 (CDR
.8 * .79 = .632: fourth, between F1 .640 and F2 .624), cosine with P1 .88 * .79 + .475 * .431 = .900 (above
contradiction_similarity .85, below dedup_similarity .95). P2 loses to P1 (authority .60 < .64) and its slot
goes down the pool: P3 first, which value-conflicts with the kept P1, then F2.
"""

from __future__ import annotations

import math

from crp_core.config import CRPConfig
from crp_core.decisions import pair_key
from crp_core.pipeline import run_pipeline
from tests.support.factories import fact, make_corpus
from tests.support.sweep_case import tiny_case


def _with_p3(dedup: float = 0.95):
    corpus, scen, _ = tiny_case()
    facts = list(corpus.kb.facts) + [
        fact("P3", "The etcd default client port is 2381.", modified_at="2026-05-01T00:00:00Z")
    ]
    a = (0.9 - 0.88 * 0.79) / math.sqrt(1 - 0.88**2)
    p3 = [0.79, a, math.sqrt(1 - 0.79**2 - a * a), 0, 0, 0]
    config = CRPConfig(graph_retrieval=False, envelope_fact_budget=3, dedup_similarity=dedup)
    return make_corpus(facts, [*corpus.vectors.tolist(), p3], config), scen, config


def _reasons(result) -> dict[str, str]:
    return {o.fact_id: o.reason for o in result.outcomes}


def test_a_value_conflict_with_a_kept_fact_is_said():
    corpus, scen, config = _with_p3()
    r = run_pipeline(corpus, scen, config)
    kb = corpus.kb
    assert [(kb.facts[c].fact_id, kb.facts[k].fact_id, why) for c, k, why in r.resolution.passed_over] == [
        ("P3", "P1", "value conflict")
    ]
    reasons = _reasons(r)
    assert reasons["P3"] == "not backfilled: value conflict with kept fact P1 (CDR rank 4 of 6)"
    assert reasons["F2"] == "backfill: took the slot of P2"


def test_a_near_duplicate_of_a_kept_fact_is_said():
    # dedup_similarity .89: P3 (cosine .900 with P1) is a near-duplicate first
    corpus, scen, config = _with_p3(dedup=0.89)
    reasons = _reasons(run_pipeline(corpus, scen, config))
    assert reasons["P3"] == "not backfilled: near-duplicate of kept fact P1 (CDR rank 4 of 6)"


def test_an_operators_decision_against_a_kept_fact_is_said():
    # an override of F2 by F1 (cosine .80 * .78 = .624: no conflict of the detector's): F2 does not backfill,
    # S (the last of the pool) takes the slot
    corpus, scen, config = _with_p3()
    decisions = {pair_key("F1", "F2"): {"kind": "override", "winner": "F1"}}
    r = run_pipeline(corpus, scen, config, decisions=decisions)
    reasons = _reasons(r)
    assert reasons["F2"] == "not backfilled: an operator decided it conflicts with kept fact F1 (CDR rank 5 of 6)"
    assert reasons["S"] == "backfill: took the slot of P2"
