"""authority_of and resolve_contradictions on tiny corpora built from explicit vectors
(SPEC-027 §2.3-2.5, SPEC-003 §6.6, docs/reference/pipeline.md §4)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crp_core.config import CRPConfig
from crp_core.corpus.prepared import Corpus
from crp_core.model import Fact, KnowledgeBase
from crp_core.stages.contradictions import (
    EVENT_DISMISSED,
    EVENT_RESOLVED,
    NUMBER_CHANGED,
    authority_of,
    resolve_contradictions,
    tied_rows,
)
from crp_core.stages.tie_groups import note_block
from crp_core.triage import pair_key

CFG = CRPConfig()
NOW = datetime(2026, 6, 1, tzinfo=UTC)
DIM = 16
EPS = 0.33  # e0 + EPS * e_k: cos between two such facts = 1 / (1 + EPS^2) = 0.9018 (> 0.85, < 0.95)

PORT_2379 = "The etcd default client port is 2379"
PORT_4001 = "The etcd default client port is 4001"
PORT_5000 = "The etcd default client port is 5000"
PARA_2379 = "etcd uses 2379 as its default client port"


def topic_vec(topic: int, k: int, eps: float = EPS, extra: tuple[int, float] | None = None) -> np.ndarray:
    """A vector near the axis ``topic`` (0..3), tilted by ``eps`` towards its own axis ``4 + k``."""
    v = np.zeros(DIM)
    v[topic] = 1.0
    v[4 + k] = eps
    if extra is not None:
        v[extra[0]] += extra[1]
    return v


def make_corpus(specs: list[dict]) -> Corpus:
    facts = tuple(
        Fact(
            fact_id=s["id"],
            content=s["text"],
            source_type=s.get("source", "official_documentation"),
            importance_weight=s.get("importance"),
            modified_at=s.get("modified_at"),
            status=s.get("status", "ACTIVE"),
            line=i + 1,
        )
        for i, s in enumerate(specs)
    )
    kb = KnowledgeBase(facts=facts)
    return Corpus.from_vectors(kb, np.array([s["vec"] for s in specs], dtype=np.float32), "test", CFG)


def cos(corpus: Corpus, i: int, j: int) -> float:
    return float(corpus.vectors[i] @ corpus.vectors[j])


def run(corpus, selected, recency, *, pool=(), scores=None, config=CFG, decisions=None, now=None):
    scores = scores if scores is not None else {r: 1.0 - 0.01 * r for r in range(corpus.n)}
    roles = {r: "anchor" for r in selected}
    return resolve_contradictions(corpus, selected, roles, scores, list(pool), recency, config, decisions, now=now)


# ---- authority_of (SPEC-027 §2.3) ---------------------------------------------------------------------
def test_authority_by_hand():
    current = Fact("F1", PORT_2379, source_type="official_documentation")
    legacy = Fact("F2", PORT_4001, source_type="official_documentation")
    a1 = authority_of(current, 1.0, CFG)
    a2 = authority_of(legacy, 0.30, CFG)
    # 0.80 (official_documentation) x 1.0 (fresh) x 0.80 (default importance) = 0.64
    assert (a1.source_authority, a1.recency_factor, a1.importance_weight) == (0.80, 1.0, 0.80)
    assert a1.authority == pytest.approx(0.64, abs=1e-12)
    # 0.80 x 0.30 (past its ttl) x 0.80 = 0.192
    assert a2.authority == pytest.approx(0.192, abs=1e-12)
    assert a1.fact_id == "F1" and a1.source_type == "official_documentation"


def test_authority_explicit_importance_and_other_source_types():
    # regulatory 0.90 x 0.65 x explicit 0.5 = 0.2925
    a = authority_of(Fact("R", "x", source_type="regulatory", importance_weight=0.5), 0.65, CFG)
    assert a.importance_weight == 0.5 and a.authority == pytest.approx(0.2925, abs=1e-12)
    # community 0.75 x 1.0 x default 0.60 = 0.45
    c = authority_of(Fact("C", "x", source_type="community"), 1.0, CFG)
    assert c.authority == pytest.approx(0.45, abs=1e-12)
    # the tables come from the config
    cfg = CFG.with_overrides({"source_authority.community": 0.5, "importance.community": 0.4})
    assert authority_of(Fact("C", "x", source_type="community"), 1.0, cfg).authority == pytest.approx(0.2)


# ---- winner, loser, audit ------------------------------------------------------------------------------
def test_higher_authority_wins_and_loser_is_suppressed():
    corpus = make_corpus(
        [
            {"id": "F1", "text": PORT_2379, "vec": topic_vec(0, 0)},
            {"id": "F2", "text": PORT_4001, "vec": topic_vec(0, 1), "source": "community"},
            {"id": "Z", "text": "Pods are scheduled onto nodes by the scheduler", "vec": topic_vec(1, 2)},
        ]
    )
    assert cos(corpus, 0, 1) > 0.85
    res = run(corpus, [0, 1, 2], {0: 1.0, 1: 0.30, 2: 1.0})
    assert res.selected.tolist() == [0, 2]
    assert res.suppressed.tolist() == [1]
    assert res.detected == 1 and res.unresolved == 0
    (pair,) = res.pairs
    assert (pair.fact_a, pair.fact_b) == ("F1", "F2")
    assert pair.patterns == (NUMBER_CHANGED,)
    assert pair.kept == ("F1",) and pair.suppressed == "F2" and not pair.tied and not pair.skipped
    # F1: 0.80 x 1.0 x 0.80 = 0.64 ; F2: community 0.75 x 0.30 x 0.60 = 0.135 ; margin 0.505
    assert pair.authority["F1"].authority == pytest.approx(0.64)
    assert pair.authority["F2"].authority == pytest.approx(0.135)
    assert pair.margin == pytest.approx(0.505)
    assert pair.similarity == pytest.approx(1 / (1 + EPS**2), abs=1e-6)
    (ev,) = res.audit
    assert ev.event == EVENT_RESOLVED
    assert ev.data["winner"] == "F1" and ev.data["suppressed"] == "F2" and ev.data["tied"] is False
    assert ev.data["patterns"] == [NUMBER_CHANGED]
    assert ev.data["authority"]["F2"] == {
        "source_type": "community",
        "source_authority": 0.75,
        "recency_factor": 0.30,
        "importance_weight": 0.60,
        "authority": pytest.approx(0.135),
    }
    assert res.notes == () and res.deduplicated == () and res.backfilled == ()


def test_similar_but_below_threshold_is_not_a_pair():
    corpus = make_corpus(
        [
            {"id": "F1", "text": PORT_2379, "vec": topic_vec(0, 0, eps=0.8)},
            {"id": "F2", "text": PORT_4001, "vec": topic_vec(0, 1, eps=0.8)},
        ]
    )
    assert cos(corpus, 0, 1) < 0.85  # 1 / 1.64 = 0.61
    res = run(corpus, [0, 1], {0: 1.0, 1: 0.3})
    assert res.pairs == () and res.selected.tolist() == [0, 1]


# ---- backfill ----------------------------------------------------------------------------------------
def test_backfill_takes_the_next_non_conflicting_candidate():
    corpus = make_corpus(
        [
            {"id": "F1", "text": PORT_2379, "vec": topic_vec(0, 0)},
            {"id": "F2", "text": PORT_4001, "vec": topic_vec(0, 1)},
            {"id": "X", "text": PORT_5000, "vec": topic_vec(0, 2)},  # conflicts with the kept F1
            {"id": "Y", "text": PARA_2379, "vec": topic_vec(0, 0, extra=(4 + 3, 0.05))},  # near-duplicate of F1
            {"id": "Z", "text": "Pods are scheduled onto nodes by the scheduler", "vec": topic_vec(1, 4)},
            {"id": "W", "text": "The API server validates requests", "vec": topic_vec(2, 5)},
        ]
    )
    assert cos(corpus, 0, 3) > 0.95 and cos(corpus, 0, 2) > 0.85
    res = run(corpus, [0, 1], {0: 1.0, 1: 0.3}, pool=[1, 2, 3, 4, 5])
    assert res.suppressed.tolist() == [1]
    assert res.backfilled == ((4, 1),)  # X conflicts with F1, Y duplicates F1, F2 is already selected
    assert res.selected.tolist() == [0, 4]  # Z takes F2's slot


def test_backfill_off_and_deleted_candidates():
    specs = [
        {"id": "F1", "text": PORT_2379, "vec": topic_vec(0, 0)},
        {"id": "F2", "text": PORT_4001, "vec": topic_vec(0, 1)},
        {"id": "D", "text": "Deleted fact about pods", "vec": topic_vec(1, 2), "status": "DELETED"},
        {"id": "Z", "text": "Pods are scheduled onto nodes by the scheduler", "vec": topic_vec(2, 3)},
    ]
    corpus = make_corpus(specs)
    off = run(corpus, [0, 1], {0: 1.0, 1: 0.3}, pool=[2, 3], config=CFG.replace(backfill=False))
    assert off.backfilled == () and off.selected.tolist() == [0]
    on = run(corpus, [0, 1], {0: 1.0, 1: 0.3}, pool=[2, 3])
    assert on.backfilled == ((3, 1),)  # the DELETED fact is never a backfill


def test_backfill_candidate_is_checked_against_earlier_backfills():
    corpus = make_corpus(
        [
            {"id": "A1", "text": PORT_2379, "vec": topic_vec(0, 0)},
            {"id": "A2", "text": PORT_4001, "vec": topic_vec(0, 1)},
            {"id": "B1", "text": "The scheduler retries a pod 3 times", "vec": topic_vec(1, 2)},
            {"id": "B2", "text": "The scheduler retries a pod 5 times", "vec": topic_vec(1, 3)},
            {"id": "P1", "text": "The API server timeout is 60 seconds", "vec": topic_vec(2, 4)},
            {"id": "P2", "text": "The API server timeout is 30 seconds", "vec": topic_vec(2, 5)},
        ]
    )
    res = run(corpus, [0, 1, 2, 3], {0: 1.0, 1: 0.3, 2: 1.0, 3: 0.3}, pool=[4, 5])
    # A2 and B2 lose; P1 fills A2's slot; P2 conflicts with the backfilled P1, so B2's slot stays empty
    assert res.suppressed.tolist() == [1, 3]
    assert res.backfilled == ((4, 1),)
    assert res.selected.tolist() == [0, 4, 2]


# ---- ties --------------------------------------------------------------------------------------------
def test_tie_keeps_both_with_the_note_block():
    corpus = make_corpus(
        [
            {"id": "F1", "text": PORT_2379, "vec": topic_vec(0, 0)},
            {"id": "F2", "text": PORT_4001, "vec": topic_vec(0, 1)},
        ]
    )
    res = run(corpus, [1, 0], {0: 1.0, 1: 1.0})
    (pair,) = res.pairs
    assert pair.tied and pair.suppressed is None and pair.kept == ("F1", "F2") and pair.margin == 0.0
    assert res.suppressed.size == 0 and res.selected.tolist() == [1, 0]
    assert res.detected == 1 and res.unresolved == 1
    expected = (
        "NOTE: The following two facts conflict and could not be automatically\n"
        "arbitrated. Treat with caution and prefer the more specific:\n"
        f"  [{PORT_2379}]\n  [{PORT_4001}]"
    )
    assert res.notes == (expected,) == (note_block(PORT_2379, PORT_4001),)
    (ev,) = res.audit
    assert ev.event == EVENT_RESOLVED and ev.data["tied"] is True and ev.data["suppressed"] is None
    assert ev.data["winner"] is None
    assert tied_rows(res, corpus.kb) == ((0, 1),)


def test_tie_tolerance_comes_from_the_config():
    corpus = make_corpus(
        [
            {"id": "F1", "text": PORT_2379, "vec": topic_vec(0, 0)},
            {"id": "F2", "text": PORT_4001, "vec": topic_vec(0, 1)},
        ]
    )
    # 0.64 vs 0.80 x 0.99 x 0.80 = 0.6336: margin 0.0064
    strict = run(corpus, [0, 1], {0: 1.0, 1: 0.99})
    assert strict.pairs[0].suppressed == "F2"
    loose = run(corpus, [0, 1], {0: 1.0, 1: 0.99}, config=CFG.replace(authority_tie_tolerance=0.01))
    assert loose.pairs[0].tied and loose.pairs[0].suppressed is None


# ---- skipped pairs, processing order ----------------------------------------------------------------------
def test_pair_with_an_already_suppressed_fact_is_skipped_and_not_counted():
    corpus = make_corpus(
        [
            {"id": "A", "text": PORT_2379, "vec": topic_vec(0, 0)},
            {"id": "B", "text": PORT_4001, "vec": topic_vec(0, 1)},
            {"id": "C", "text": PARA_2379, "vec": topic_vec(0, 2)},  # agrees with A
        ]
    )
    # A 0.64, B 0.80 x 0.5 x 0.80 = 0.32, C 0.80 x 0.2 x 0.80 = 0.128
    res = run(corpus, [0, 1, 2], {0: 1.0, 1: 0.5, 2: 0.2})
    assert [(p.fact_a, p.fact_b, p.skipped) for p in res.pairs] == [("A", "B", False), ("B", "C", True)]
    skipped = res.pairs[1]
    assert skipped.suppressed is None and not skipped.tied and skipped.kept == ("C",)
    assert res.detected == 1  # the skipped pair is not counted
    assert len(res.audit) == 1  # nor arbitrated
    assert res.selected.tolist() == [0, 2]  # C survives although it would have lost to B


def test_processing_order_is_by_higher_authority_then_ids():
    corpus = make_corpus(
        [
            {"id": "a", "text": PORT_2379, "vec": topic_vec(0, 0)},
            {"id": "b", "text": PORT_4001, "vec": topic_vec(0, 1)},
            {"id": "c", "text": PORT_5000, "vec": topic_vec(0, 2)},
            {"id": "d", "text": "The etcd default client port is 6000", "vec": topic_vec(0, 3)},
        ]
    )
    factors = {0: 0.5, 1: 1.0, 2: 0.4, 3: 0.45}  # authority = 0.64 x factor: b > a > d > c
    res = run(corpus, [3, 2, 1, 0], factors)
    assert [(p.fact_a, p.fact_b) for p in res.pairs] == [
        ("a", "b"),
        ("b", "c"),
        ("b", "d"),  # max authority 0.64 (b), then by ids
        ("a", "c"),
        ("a", "d"),  # max 0.32 (a): both skipped (a suppressed)
        ("c", "d"),  # max 0.288 (d): skipped
    ]
    assert [p.skipped for p in res.pairs] == [False, False, False, True, True, True]
    assert res.suppressed.tolist() == [0, 2, 3]
    assert res.selected.tolist() == [1]


# ---- SPEC-003 §6.6 dedup only for non-conflicting pairs -------------------------------------------------
def test_dedup_only_applies_to_pairs_that_do_not_conflict():
    corpus = make_corpus(
        [
            {"id": "A", "text": PORT_2379, "vec": topic_vec(0, 0)},
            {"id": "A2", "text": PARA_2379, "vec": topic_vec(0, 0, extra=(4 + 3, 0.05))},
            {"id": "B", "text": PORT_4001, "vec": topic_vec(0, 0, extra=(4 + 4, 0.04))},
        ]
    )
    assert cos(corpus, 0, 1) > 0.95 and cos(corpus, 0, 2) > 0.95 and cos(corpus, 1, 2) > 0.95
    scores = {0: 0.5, 1: 0.9, 2: 0.99}
    res = run(corpus, [0, 1, 2], {0: 1.0, 1: 1.0, 2: 0.3}, scores=scores)
    # A vs A2 agree: near-duplicates, A2 (higher score) kept. B conflicts with both: arbitrated by
    # authority although it has the highest score and cos > 0.95.
    assert res.deduplicated == ((0, 1),)
    assert [(p.fact_a, p.fact_b, p.suppressed) for p in res.pairs] == [("A2", "B", "B")]
    assert res.selected.tolist() == [1]


# ---- operator decisions ---------------------------------------------------------------------
def two_facts():
    return make_corpus(
        [
            {"id": "F1", "text": PORT_2379, "vec": topic_vec(0, 0)},
            {"id": "F2", "text": PORT_4001, "vec": topic_vec(0, 1)},
        ]
    )


def test_dismissed_pair_is_listed_not_arbitrated():
    corpus = two_facts()
    res = run(corpus, [0, 1], {0: 1.0, 1: 0.3}, decisions={pair_key("F2", "F1"): {"kind": "dismiss", "winner": None}})
    (pair,) = res.pairs
    assert pair.decision == "dismiss" and pair.suppressed is None and not pair.tied
    assert res.selected.tolist() == [0, 1] and res.notes == ()
    assert [e.event for e in res.audit] == [EVENT_DISMISSED]


def test_override_makes_the_operator_choice_win():
    corpus = two_facts()
    res = run(corpus, [0, 1], {0: 1.0, 1: 0.3}, decisions={pair_key("F1", "F2"): {"kind": "override", "winner": "F2"}})
    (pair,) = res.pairs
    assert pair.decision == "override" and pair.suppressed == "F1" and pair.kept == ("F2",)
    assert res.selected.tolist() == [1]
    accept = run(corpus, [0, 1], {0: 1.0, 1: 0.3}, decisions={pair_key("F1", "F2"): {"kind": "accept", "winner": None}})
    assert accept.pairs[0].decision == "accept" and accept.pairs[0].suppressed == "F2"


# ---- a pair an operator says conflicts is arbitrated wherever step 1 left it (docs/decisions/triage.md) ----------
def far_apart():
    """F1 and F3 on orthogonal axes (cosine 0.0, far below contradiction_similarity 0.85); texts the detector
    reads no value difference in."""
    return make_corpus(
        [
            {"id": "F1", "text": PORT_2379, "vec": topic_vec(0, 0)},
            {"id": "F3", "text": "Peers talk over a separate port", "vec": topic_vec(1, 1)},
        ]
    )


def test_an_override_below_the_similarity_threshold_still_decides():
    corpus = far_apart()
    assert run(corpus, [0, 1], {0: 1.0, 1: 0.3}).pairs == ()  # no operator: no pair
    res = run(corpus, [0, 1], {0: 1.0, 1: 0.3}, decisions={pair_key("F1", "F3"): {"kind": "override", "winner": "F3"}})
    (pair,) = res.pairs
    assert (pair.fact_a, pair.fact_b, pair.similarity) == ("F1", "F3", 0.0)
    assert pair.patterns == () and pair.conflict.diffs == ()  # the detector read no difference: the operator did
    assert pair.asserted and pair.by_decision_only
    assert pair.decision == "override" and pair.suppressed == "F1" and res.selected.tolist() == [1]
    assert [e.event for e in res.audit] == [EVENT_RESOLVED] and res.detected_count == 1


def test_an_asserted_pair_below_the_threshold_carries_the_difference_the_detector_reads():
    corpus = make_corpus(
        [
            {"id": "F1", "text": PORT_2379, "vec": topic_vec(0, 0)},
            {"id": "F2", "text": PORT_4001, "vec": topic_vec(1, 1)},  # cosine 0.0: step 1 never reads the texts
        ]
    )
    assert run(corpus, [0, 1], {0: 1.0, 1: 0.3}).pairs == ()
    res = run(corpus, [0, 1], {0: 1.0, 1: 0.3}, decisions={pair_key("F1", "F2"): {"kind": "override", "winner": "F2"}})
    (pair,) = res.pairs
    assert pair.patterns == (NUMBER_CHANGED,) and not pair.by_decision_only
    assert [(d.tokens_a, d.tokens_b) for d in pair.conflict.diffs] == [(("2379",), ("4001",))]
    assert pair.suppressed == "F1" and pair.similarity == 0.0


def test_an_accept_below_the_threshold_lets_authority_decide_and_a_dismissal_adds_nothing():
    corpus = far_apart()
    # F1 fresh (recency 1.0), F3 stale (0.3), both official: authority 1.0 * 1.0 * 0.5 = 0.5 against 0.15
    res = run(corpus, [0, 1], {0: 1.0, 1: 0.3}, decisions={pair_key("F3", "F1"): {"kind": "accept", "winner": None}})
    (pair,) = res.pairs
    assert pair.decision == "accept" and pair.suppressed == "F3" and res.selected.tolist() == [0]
    dismissed = run(
        corpus, [0, 1], {0: 1.0, 1: 0.3}, decisions={pair_key("F1", "F3"): {"kind": "dismiss", "winner": None}}
    )
    assert dismissed.pairs == () and dismissed.selected.tolist() == [0, 1]
    # a decision on a pair the selection does not hold both of adds nothing
    elsewhere = {pair_key("F1", "F9"): {"kind": "override", "winner": "F9"}}
    assert run(corpus, [0, 1], {0: 1.0, 1: 0.3}, decisions=elsewhere).pairs == ()


def test_a_decided_near_duplicate_is_arbitrated_not_deduplicated():
    corpus = make_corpus(
        [
            {"id": "F1", "text": PORT_2379, "vec": topic_vec(0, 0, eps=0.1)},
            {"id": "F2", "text": PARA_2379, "vec": topic_vec(0, 1, eps=0.1)},
        ]
    )
    assert cos(corpus, 0, 1) > CFG.dedup_similarity  # 1 / 1.01 = 0.990
    plain = run(corpus, [0, 1], {0: 1.0, 1: 1.0})
    assert plain.pairs == () and plain.deduplicated == ((1, 0),)  # the paraphrase: the lower score dropped
    res = run(corpus, [0, 1], {0: 1.0, 1: 1.0}, decisions={pair_key("F1", "F2"): {"kind": "override", "winner": "F2"}})
    assert res.deduplicated == () and res.pairs[0].decision == "override" and res.selected.tolist() == [1]


def test_backfill_never_brings_back_an_operators_loser_beside_its_winner():
    """A and B conflict (A fresh wins, B suppressed); W is kept; the pool's next fact L lost to W by an
    operator's override: L does not take B's slot, as a fact value-conflicting with a kept one does not."""
    corpus = make_corpus(
        [
            {"id": "A", "text": PORT_2379, "vec": topic_vec(0, 0)},
            {"id": "B", "text": PORT_4001, "vec": topic_vec(0, 1)},
            {"id": "W", "text": "Peers talk over a separate port", "vec": topic_vec(1, 2)},
            {"id": "L", "text": "Snapshots are written every hour", "vec": topic_vec(2, 3)},
        ]
    )
    recency = {0: 1.0, 1: 0.3, 2: 1.0, 3: 1.0}
    plain = run(corpus, [0, 1, 2], recency, pool=[3])
    assert plain.backfilled == ((3, 1),) and plain.selected.tolist() == [0, 3, 2]
    decided = run(
        corpus, [0, 1, 2], recency, pool=[3], decisions={pair_key("W", "L"): {"kind": "override", "winner": "W"}}
    )
    assert decided.backfilled == () and decided.selected.tolist() == [0, 2]
    # a dismissal says nothing against L
    dismissed = run(
        corpus, [0, 1, 2], recency, pool=[3], decisions={pair_key("W", "L"): {"kind": "dismiss", "winner": None}}
    )
    assert dismissed.backfilled == ((3, 1),)


def test_a_decided_fact_is_kept_over_its_near_duplicate():
    """B (an override's winner over A) and its paraphrase C are near-duplicates, C scoring higher: without
    the decision dedup keeps C; with it B is kept (the decision names it), C dropped, and A loses to B."""
    corpus = make_corpus(
        [
            {"id": "A", "text": "Peers talk over a separate port", "vec": topic_vec(1, 2)},
            {"id": "B", "text": PORT_2379, "vec": topic_vec(0, 0, eps=0.1)},
            {"id": "C", "text": PARA_2379, "vec": topic_vec(0, 1, eps=0.1)},
        ]
    )
    scores = {0: 0.5, 1: 0.6, 2: 0.9}
    plain = run(corpus, [0, 1, 2], {0: 1.0, 1: 1.0, 2: 1.0}, scores=scores)
    assert plain.deduplicated == ((1, 2),) and plain.selected.tolist() == [0, 2]
    res = run(
        corpus, [0, 1, 2], {0: 1.0, 1: 1.0, 2: 1.0}, scores=scores,
        decisions={pair_key("A", "B"): {"kind": "override", "winner": "B"}},
    )  # fmt: skip
    assert res.deduplicated == ((2, 1),) and res.selected.tolist() == [1]
    assert [(p.fact_a, p.fact_b, p.suppressed, p.asserted) for p in res.pairs] == [("A", "B", "A", True)]


def test_a_skipped_asserted_pair_keeps_its_flag():
    """A beats B (values differ, above the threshold); an operator accepted B / C, which the detector reads
    no difference in: processed after A / B (lower authorities), it is skipped, and still says so."""
    corpus = make_corpus(
        [
            {"id": "A", "text": PORT_2379, "vec": topic_vec(0, 0)},
            {"id": "B", "text": PORT_4001, "vec": topic_vec(0, 1)},
            {"id": "C", "text": "Peers talk over a separate port", "vec": topic_vec(1, 2)},
        ]
    )
    res = run(
        corpus, [0, 1, 2], {0: 1.0, 1: 0.3, 2: 0.5}, decisions={pair_key("B", "C"): {"kind": "accept", "winner": None}}
    )
    first, second = res.pairs
    assert (first.fact_a, first.fact_b, first.asserted, first.skipped) == ("A", "B", False, False)
    assert {second.fact_a, second.fact_b} == {"B", "C"} and second.skipped and second.decision is None
    assert second.asserted and second.by_decision_only
    assert second.patterns_text() == "none read: an operator's decision"


def test_asserted_pairs_reads_the_decisions_or_the_pairs_alike():
    from crp_core.stages.contradictions.arbitration import asserted_pairs

    ids = ["a", "b", "c", "d"]
    few = {
        pair_key("d", "a"): {"kind": "override", "winner": "a"},
        pair_key("b", "c"): {"kind": "accept", "winner": None},
        pair_key("a", "b"): {"kind": "dismiss", "winner": None},
        pair_key("a", "z"): {"kind": "accept", "winner": None},
    }
    want = [(0, 3), (1, 2)]
    assert asserted_pairs(ids, few) == want  # 4 decisions <= 6 pairs: the decisions are read
    many = dict(few, **{pair_key(f"x{i}", f"y{i}"): {"kind": "accept", "winner": None} for i in range(10)})
    assert asserted_pairs(ids, many) == want  # 14 decisions > 6 pairs: the pairs are read
    assert asserted_pairs(ids, None) == [] and asserted_pairs(ids, {}) == []


def test_bad_decision_is_refused():
    corpus = two_facts()
    with pytest.raises(ValueError, match="override winner"):
        run(corpus, [0, 1], {0: 1.0, 1: 0.3}, decisions={pair_key("F1", "F2"): {"kind": "override", "winner": "X"}})
    with pytest.raises(ValueError, match="unknown kind"):
        run(corpus, [0, 1], {0: 1.0, 1: 0.3}, decisions={pair_key("F1", "F2"): {"kind": "maybe"}})


# ---- recency from the pipeline table, or computed for missing rows ----------------------------------------------
def test_missing_recency_rows_are_computed_at_now():
    from crp_core.factors.recency import compute_recency

    corpus = make_corpus(
        [
            {"id": "F1", "text": PORT_2379, "vec": topic_vec(0, 0), "modified_at": NOW - timedelta(days=30)},
            {"id": "F2", "text": PORT_4001, "vec": topic_vec(0, 1), "modified_at": NOW - timedelta(days=400)},
        ]
    )
    table = compute_recency(corpus.kb, np.array([0]), NOW, CFG)
    res = run(corpus, [0, 1], table, now=NOW)
    pair = res.pairs[0]
    # F2 is 400 days old, past its 365-day ttl: factor 0.30; 0.80 x 0.30 x 0.80 = 0.192
    assert pair.authority["F2"].recency_factor == pytest.approx(0.30)
    assert pair.authority["F2"].authority == pytest.approx(0.192)
    assert pair.suppressed == "F2"
    with pytest.raises(ValueError, match="no `now`"):
        run(corpus, [0, 1], table)


# ---- properties ----------------------------------------------------------------------------------------
VALUES = (2379, 4001, 2380)
SOURCES = ("official_documentation", "community", "regulatory", "web")
FACTORS = (1.0, 0.65, 0.3)


@st.composite
def tiny_corpora(draw):
    n = draw(st.integers(min_value=2, max_value=8))
    specs, factors = [], {}
    for i in range(n):
        value = draw(st.sampled_from(VALUES))
        specs.append(
            {
                "id": f"f{draw(st.integers(0, 99)):02d}_{i}",
                "text": f"The etcd default client port is {value}",
                "vec": topic_vec(0, i),
                "source": draw(st.sampled_from(SOURCES)),
                "importance": draw(st.sampled_from((None, 0.5, 0.8))),
            }
        )
        factors[i] = draw(st.sampled_from(FACTORS))
    perm = draw(st.permutations(list(range(n))))
    return specs, factors, perm


@settings(max_examples=80, deadline=None)
@given(data=tiny_corpora())
def test_property_resolution_invariants(data):
    specs, factors, perm = data
    corpus = make_corpus(specs)
    rows = list(range(len(specs)))
    res = run(corpus, rows, factors)
    final = set(res.selected.tolist())
    ids = [s["id"] for s in specs]
    for p in res.pairs:
        if p.skipped:
            continue
        a, b = ids.index(p.fact_a), ids.index(p.fact_b)
        # an arbitrated pair never loses both facts: its winner (or both, when tied) stays selected
        assert {a, b} & final
        if p.tied:
            assert a in final and b in final  # a tied fact is never suppressed
        else:
            winner = p.kept[0]
            assert ids.index(winner) in final and p.suppressed != winner
    # every two facts left in the envelope agree (all texts are on one topic, cos 0.90)
    left = sorted(final)
    tied_pairs = {(p.fact_a, p.fact_b) for p in res.pairs if p.tied and not p.skipped}
    for i in left:
        for j in left:
            if i < j and specs[i]["text"] != specs[j]["text"]:
                assert tuple(sorted((ids[i], ids[j]))) in tied_pairs
    # the result does not depend on the order of the selected rows
    res2 = run(corpus, [rows[k] for k in perm], factors)
    assert set(res2.selected.tolist()) == final
    assert set(res2.suppressed.tolist()) == set(res.suppressed.tolist())
    key = lambda r: [(p.fact_a, p.fact_b, p.kept, p.suppressed, p.tied, p.skipped) for p in r.pairs]  # noqa: E731
    assert key(res2) == key(res)
    assert res2.notes == res.notes


def test_audit_event_carries_roles_and_a_triage_decision_set_is_accepted():
    from crp_core.triage import Decision, DecisionSet

    corpus = two_facts()
    res = resolve_contradictions(
        corpus, [0, 1], {0: "anchor", 1: "connector"}, {0: 0.5, 1: 0.4}, [], {0: 1.0, 1: 0.3}, CFG
    )
    assert res.audit[0].data["roles"] == {"F1": "anchor", "F2": "connector"}
    ds = DecisionSet.from_decisions(
        [
            Decision.override("F2", "F1", winner="F2", operator="ops"),
            Decision.override("F2", "F1", winner="F1", operator="ops"),  # latest wins
            Decision.dismiss("F1", "F2", operator="ops"),
        ]
    )
    res2 = resolve_contradictions(
        corpus, [0, 1], {0: "anchor", 1: "anchor"}, {0: 0.5, 1: 0.4}, [], {0: 1.0, 1: 0.3}, CFG, ds
    )
    assert res2.pairs[0].decision == "dismiss" and res2.selected.tolist() == [0, 1]


# ---- diffs describe fact_a's text; pair order ignores float noise ---------------------------------------
def test_diffs_are_computed_against_fact_a_when_ids_sort_against_selection_order():
    # "z-first" is selected first but fact_a is "a-second" (ids sort the other way)
    texts = {
        "z-first": "In every release, the etcd default client port is 2379",
        "a-second": "The etcd default client port is 4001",
    }
    corpus = make_corpus(
        [
            {"id": "z-first", "text": texts["z-first"], "vec": topic_vec(0, 0)},
            {"id": "a-second", "text": texts["a-second"], "vec": topic_vec(0, 1), "source": "community"},
        ]
    )
    res = run(corpus, [0, 1], {0: 1.0, 1: 1.0})
    (pair,) = res.pairs
    assert (pair.fact_a, pair.fact_b) == ("a-second", "z-first")
    (d,) = [d for d in pair.conflict.diffs if d.pattern == NUMBER_CHANGED]
    assert texts[pair.fact_a][d.span_a[0] : d.span_a[1]] == "4001"
    assert texts[pair.fact_b][d.span_b[0] : d.span_b[1]] == "2379"
    assert d.tokens_a == ("4001",) and d.tokens_b == ("2379",)


def test_pair_order_uses_authority_rounded_to_twelve_decimals():
    # 0.8 * 0.65 * 0.9 and 0.9 * 0.65 * 0.8 differ by one ulp: the order falls to the fact ids
    assert 0.8 * 0.65 * 0.9 != 0.9 * 0.65 * 0.8
    assert round(0.8 * 0.65 * 0.9, 12) == round(0.9 * 0.65 * 0.8, 12)
    from crp_core.analysis.scan import triage_order
    from crp_core.records import Authority, ConflictPair, ValueConflict

    def pair(a: str, b: str, margin: float) -> ConflictPair:
        auth = {a: Authority(a, "web", 0.7, 1.0, 0.5, 0.35), b: Authority(b, "web", 0.7, 1.0, 0.5, 0.35 - margin)}
        return ConflictPair(
            a, b, 0.9, (NUMBER_CHANGED,), ValueConflict((NUMBER_CHANGED,), ()), auth, (a,), b, False, margin=margin
        )

    noisy = pair("b1", "b2", abs(0.8 * 0.65 * 0.9 - 0.9 * 0.65 * 0.8) + 0.1)
    clean = pair("a1", "a2", 0.1)
    assert sorted([noisy, clean], key=triage_order)[0] is clean


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n_kept=st.integers(0, 12), n_pool=st.integers(1, 70), spread=st.floats(0.02, 0.5))
def test_the_screened_backfill_check_is_the_exact_one(seed, n_kept, n_pool, spread):
    """``BackfillScreen.obstacle`` (bit masks of one product per block of pool rows, the exact check near a
    threshold) decides every pool row as ``backfill_obstacle`` does, naming the same kept fact in its way, as the
    backfill walks the pool and keeps what fits (blocks of 32 rows: pools longer than a block, kept rows added
    mid-block)."""
    from crp_core.stages.contradictions.backfill import BackfillScreen, backfill_obstacle
    from tests.support.factories import fact, make_corpus

    rng = np.random.default_rng(seed)
    n = n_kept + n_pool
    base = rng.normal(size=(2, 12))
    vecs = base[rng.integers(0, 2, n)] + spread * rng.normal(size=(n, 12))
    texts = [f"the gateway timeout is {int(rng.integers(1, 4))} seconds" for _ in range(n)]
    corpus = make_corpus([fact(f"F{i}", texts[i]) for i in range(n)], vecs)
    config = CRPConfig()
    kept = list(range(n_kept))
    pool = np.arange(n_kept, n, dtype=np.int64)
    screen = BackfillScreen(corpus.vectors, pool, kept, config)
    for i in range(pool.size):
        want = backfill_obstacle(int(pool[i]), kept, corpus.vectors, corpus.kb, config)
        assert screen.obstacle(i, corpus.kb, config) == want
        if want is None:
            kept.append(int(pool[i]))
            screen.kept(i)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 24))
def test_the_array_processing_order_is_the_python_sort(seed, n_facts):
    """Many conflicting pairs are ordered with one lexsort; it gives the order of the plain sort by (rounded
    higher authority descending, smaller id, larger id), authorities one ulp apart and tied included."""
    from types import SimpleNamespace

    from crp_core.records import Authority
    from crp_core.stages.contradictions import resolve as r

    rng = np.random.default_rng(seed)
    ids = [f"F{k:03d}" for k in rng.permutation(n_facts).tolist()]
    levels = [0.52, 0.8 * 0.65 * 0.9, 0.9 * 0.65 * 0.8, 0.7]
    auth = {
        k: Authority("x", "t", 1.0, 1.0, 1.0, float(levels[int(rng.integers(len(levels)))])) for k in range(n_facts)
    }
    pairs = [(a, b) for a in range(n_facts) for b in range(a + 1, n_facts) if rng.random() < 0.6]
    live = r._Conflicts([a for a, _ in pairs], [b for _, b in pairs], [None] * len(pairs))
    sel = SimpleNamespace(ids=ids)
    sel._order_key = lambda pq, au: r._Selection._order_key(sel, pq, au)
    sel._order_array = lambda lv, au: r._Selection._order_array(sel, lv, au)
    saved, r._ARRAY_ORDER = r._ARRAY_ORDER, 2  # the array path from two pairs on
    try:
        got = r._Selection._processing_order(sel, live, auth)
    finally:
        r._ARRAY_ORDER = saved
    want = sorted(range(len(pairs)), key=lambda i: r._Selection._order_key(sel, pairs[i], auth))
    assert got == want


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from([0.52, 0.8 * 0.65 * 0.9, 0.9 * 0.65 * 0.8, 0.7, 0.7 + 1e-12, float("nan"), 0.0]),
            st.sampled_from([0.52, 0.8 * 0.65 * 0.9, 0.9 * 0.65 * 0.8, 0.7, 0.7 - 1e-12, float("nan"), 0.0]),
        ),
        min_size=1,
        max_size=30,
    ),
    st.sampled_from([0.0, 1e-9, 0.01]),
)
def test_ties_and_losers_at_once_are_the_outcome_of_each_pair(values, tolerance):
    """Stage 4 reads every pair's tie and loser off the authorities at once: what ``outcome`` gives each pair
    without an operator decision, NaN and one-ulp differences included."""
    from crp_core.records import Authority
    from crp_core.stages.contradictions import outcome
    from crp_core.stages.contradictions.arbitration import tied_and_losers

    config = CFG.replace(authority_tie_tolerance=tolerance)
    a = np.array([x for x, _ in values])
    b = np.array([y for _, y in values])
    pos_a, pos_b = np.arange(len(values)), np.arange(len(values)) + 100
    tied, losers = tied_and_losers(a, b, pos_a, pos_b, config)
    for k, (x, y) in enumerate(values):
        kept, suppressed, is_tied, _ = outcome(
            Authority("A", "t", 1.0, 1.0, 1.0, x), Authority("B", "t", 1.0, 1.0, 1.0, y), config, None, None
        )
        assert bool(tied[k]) == is_tied
        if not is_tied:
            assert suppressed == ("A" if losers[k] == pos_a[k] else "B")
