"""Before / after SPEC-027: the SPEC-024-only baseline really omits the three fixes.

Numbers from ``tiny_case`` (test_sweep): with recency, S (expired, .30) scores .216 and leaves the top 3;
P1/P2 conflict and P2 (authority .60 < .64) is suppressed. Without recency S scores .72 (rank 1) and
no pair is arbitrated: the SPEC-024-only envelope is {S, P1, P2}.
"""

from __future__ import annotations

import math

import pytest

from crp_core.analysis.baseline import DismissEveryPair, before_after, run_spec024_baseline, spec024_config
from crp_core.config import CRPConfig
from crp_core.pipeline import run_pipeline
from tests.support.factories import fact, make_corpus, make_scenario
from tests.support.paths import REPO_ROOT
from tests.support.sweep_case import tiny_case


def test_baseline_keeps_the_stale_fact_and_both_facts_of_the_pair():
    corpus, scen, config = tiny_case()
    full = run_pipeline(corpus, scen, config)
    base = run_spec024_baseline(corpus, scen, config)
    assert sorted(base.envelope) == ["P1", "P2", "S"]
    # the stale fact SPEC-027 demotes is in the baseline envelope, not in SPEC-027's
    assert "S" in base.envelope and "S" not in [p.fact_id for p in full.envelope.order]
    # the pair SPEC-027 suppresses: detected by both, suppressed only by SPEC-027
    assert [p.suppressed for p in full.resolution.pairs] == ["P2"]
    assert [(p.fact_a, p.fact_b, p.suppressed, p.tied) for p in base.conflict_pairs] == [("P1", "P2", None, False)]
    assert "P2" in base.envelope and len(base.result.resolution.suppressed) == 0
    assert base.result.envelope.notes == ()  # no NOTE block: the model is not told
    # recency factor exactly 1.0 for every scored fact, CDR = importance * relevance
    assert set(base.result.cdr.recency_factor.tolist()) == {1.0}
    pos = {corpus.kb.facts[int(i)].fact_id: k for k, i in enumerate(base.result.cdr.idx)}
    assert base.result.cdr.cdr_score[pos["S"]] == pytest.approx(0.8 * 0.90)
    assert base.result.headers["CRP-Context-Recency-Penalised"] == "0"
    assert base.config == config and base.result.config == spec024_config(config)


def test_before_after_numbers():
    corpus, scen, config = tiny_case()
    ba = before_after(corpus, scen, config)
    assert ba.before.expired_in_envelope == ("S",)  # SPEC-027 factor .30
    assert ba.after.expired_in_envelope == () and ba.after.ageing_in_envelope == ()
    assert ba.before.contradictory_pairs == (("P1", "P2"),)
    assert ba.after.contradictory_pairs == ()
    assert ba.before.fanout_duplicates is None and ba.after.fanout_duplicates is None  # no fan-out
    assert ba.spec027_recency["S"] == pytest.approx(0.30) and ba.recency_rule["S"] == "expired"
    assert ba.overlap == pytest.approx(1 / 5)  # {P1} / {S, P1, P2, F1, F2}
    assert set(ba.only_before) == {"S", "P2"} and set(ba.only_after) == {"F1", "F2"}
    rows = {r["measure"]: (r["SPEC-024 only"], r["SPEC-027"]) for r in ba.rows()}
    assert rows["expired facts in the envelope"] == (1, 0)
    assert rows["ageing facts in the envelope"] == (0, 0)
    assert rows["contradictory pairs handed to the model"] == (1, 0)
    assert rows["fan-out duplicates"] == ("no fan-out", "no fan-out")


def test_status_stale_counts_and_tied_pair_counts_on_the_after_side():
    # X is STALE (factor = stale_floor), T1/T2 an exact authority tie: both stay, with a NOTE, in SPEC-027 too
    facts = [
        fact("X", "Queue mode legacy applies to the scheduler.", status="STALE", modified_at="2026-05-20"),
        fact("T1", "The etcd peer port is 2380.", modified_at="2026-05-01"),
        fact("T2", "The etcd peer port is 2381.", modified_at="2026-05-01"),
    ]
    t2 = [0.85, math.sqrt(1 - 0.85**2), 0, 0]
    vecs = [[0.9, 0, 0, math.sqrt(1 - 0.81)], [0.86, math.sqrt(1 - 0.86**2), 0, 0], t2]
    config = CRPConfig(graph_retrieval=False, envelope_fact_budget=3)
    corpus = make_corpus(facts, vecs, config)
    ba = before_after(corpus, make_scenario([1, 0, 0, 0]), config)
    assert "X" in ba.before.expired_in_envelope  # status STALE: expired whatever its age
    assert ("T1", "T2") in ba.after.contradictory_pairs  # tied: handed over with a NOTE
    assert ("T1", "T2") in ba.before.contradictory_pairs


def test_naive_fanout_duplicates_on_the_before_side(synthetic_sample_dir):
    from crp_core.corpus.prepared import prepare_corpus
    from crp_core.io.ckf import load_ckf
    from crp_core.io.scenario import load_scenario

    kb = load_ckf(str(synthetic_sample_dir / "knowledge_base.jsonl"))
    scen = load_scenario(str(synthetic_sample_dir / "scenarios" / "demo.json"))
    config = CRPConfig()
    corpus = prepare_corpus(kb, config=config)
    ba = before_after(corpus, scen, config, fanout_width=2)
    assert ba.fanout_width == 2
    assert ba.before.fanout_duplicates == len(ba.baseline.fanout.duplicates) == ba.baseline.fanout.duplicate_count
    assert ba.before.duplicates == ba.baseline.fanout.duplicates
    assert set(ba.before.packed_duplicate_facts) == set(ba.before.duplicate_facts) & set(ba.before.envelope)
    assert ba.baseline.fanout.mode == "naive" and ba.full.fanout.partitioned.mode == "partitioned"
    assert ba.after.fanout_duplicates == len(ba.full.fanout.partitioned.duplicates)
    assert ba.after.fanout_duplicates <= ba.before.fanout_duplicates


def test_dismiss_every_pair_mapping():
    d = DismissEveryPair()
    assert d.get("a|b")["kind"] == "dismiss" and "x" in d and len(d) == 1 and list(d) == []


@pytest.mark.model
def test_sample_scenario_baseline_omits_the_fixes():
    """ai_act_compliance (sample_ckf/README): stale facts and a planted conflict (C07: a 2025 web summary
    suppressed by SPEC-027) reach the SPEC-024-only envelope."""

    from crp_core.corpus.embedding import default_embedder
    from crp_core.corpus.prepared import embed_scenario, prepare_corpus
    from crp_core.io.ckf import load_ckf
    from crp_core.io.scenario import load_scenario

    root = REPO_ROOT / "sample_ckf"
    kb = load_ckf(str(root / "knowledge_base.jsonl"))
    scen = load_scenario(str(root / "scenarios" / "ai_act_compliance.json"))
    config = CRPConfig().with_overrides(dict(scen.config or {}))
    embedder = default_embedder()
    corpus = prepare_corpus(kb, embedder=embedder, config=config)
    vectors = embed_scenario(scen, corpus, embedder)
    ba = before_after(corpus, scen, config, vectors=vectors, embedder=embedder)
    after_env = set(ba.after.envelope)
    demoted = [f for f in ba.before.expired_in_envelope if f not in after_env]
    assert demoted, "a stale fact SPEC-027 demotes is in the SPEC-024-only envelope"
    suppressed = {p.suppressed for p in ba.full.resolution.pairs if p.suppressed}
    assert suppressed and suppressed <= set(ba.before.envelope) | set(
        f for p in ba.baseline.conflict_pairs for f in (p.fact_a, p.fact_b)
    )
    assert any(s in ba.before.envelope for s in suppressed)
    assert len(ba.before.contradictory_pairs) > len(ba.after.contradictory_pairs)
    # the STALE gov-0154 (sample README) is scored at recency 1.0 by the baseline, at stale_floor by SPEC-027
    rows = {ba.baseline.result.corpus.kb.facts[int(r)].fact_id: i for i, r in enumerate(ba.baseline.result.cdr.idx)}
    assert ba.baseline.result.cdr.recency_factor[rows["gov-0154"]] == 1.0


def _dismissed_p1_p2(kind: str, winner: str | None = None):
    from crp_core.decisions import pair_key

    return {pair_key("P1", "P2"): {"kind": kind, "winner": winner}}


def test_a_pair_operators_dismissed_is_no_contradiction_handed_to_the_model():
    # dismissed as "not a conflict": both facts stay (P1 .704, P2 .696, F1 .640 fill the budget of 3); the
    # SPEC-027 side hands over no contradiction, as `check` counts it; the SPEC-024 side packs the same two
    # facts and is judged by the same word: no contradiction there either (before -> after is 0 -> 0, not a
    # 1 -> 0 SPEC-027 did not make)
    corpus, scen, config = tiny_case()
    ba = before_after(corpus, scen, config, decisions=_dismissed_p1_p2("dismiss"))
    assert set(ba.after.envelope) == {"P1", "P2", "F1"}
    assert {"P1", "P2"} <= set(ba.before.envelope)
    assert ba.after.contradictory_pairs == () and ba.after.noted_pairs == ()
    assert ba.before.contradictory_pairs == ()
    rows = {r["measure"]: (r["SPEC-024 only"], r["SPEC-027"]) for r in ba.rows()}
    assert rows["contradictory pairs handed to the model"] == (0, 0)
    # without the dismissal the SPEC-024 side hands the pair over and SPEC-027 resolves it
    plain = before_after(corpus, scen, config)
    assert plain.before.contradictory_pairs == (("P1", "P2"),) and plain.after.contradictory_pairs == ()


def test_an_accepted_pair_loses_by_authority_an_override_by_the_operator():
    corpus, scen, config = tiny_case()
    accepted = before_after(corpus, scen, config, decisions=_dismissed_p1_p2("accept"))
    (p2,) = [c for c in accepted.removed if c.fact_id == "P2"]
    # the operator only confirmed the conflict: Fact Authority Resolution chose the loser (.60 < .64)
    assert p2.kind == "conflict loser" and p2.related == "P1"
    assert "accept decision (authority 0.6000 vs 0.6400)" in p2.reason
    # an override naming authority's own winner changes nothing either
    same = before_after(corpus, scen, config, decisions=_dismissed_p1_p2("override", "P1"))
    assert [c.kind for c in same.removed if c.fact_id == "P2"] == ["conflict loser"]
    overridden = before_after(corpus, scen, config, decisions=_dismissed_p1_p2("override", "P2"))
    (p1,) = [c for c in overridden.removed if c.fact_id == "P1"]
    assert p1.kind == "operator decision" and p1.related == "P2"
