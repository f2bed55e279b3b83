"""Before / after SPEC-027, the story the demo tells, on hand-computed synthetic cases: expired facts
apart from ageing ones, why each fact left or entered the envelope, where the token change comes from,
the headline per fix, and one fan-out duplicate count.

Token counts: the test corpora use the word estimate ceil(words * 1.3) (docs/reference/pipeline.md §6); a fact line
``[<id>] <content>`` costs its content's count plus that of ``[<id>]`` (one word: 2 tokens).
  S  "The scheduler runs with the legacy queue mode enabled."  9 words -> 12, line 14
  P1 "The etcd default client port is 2379."                    7 words -> 10, line 12
  P2 "The etcd default client port is 2380."                    7 words -> 10, line 12
  F1 "Snapshots are taken every six hours on atlas."            8 words -> 11, line 13
  F2 "Defragmentation runs weekly during the maintenance window." 7 words -> 10, line 12
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from crp_core.analysis.baseline import before_after, token_change
from crp_core.analysis.metrics import scenario_metrics
from crp_core.config import CRPConfig
from crp_core.factors.recency import recency_state
from crp_core.model import Expectations
from crp_core.pipeline import run_pipeline
from tests.support.factories import fact, make_corpus, make_scenario
from tests.support.sweep_case import NOW, tiny_case

#: tiny_case with a 180-day TTL for official documentation: F1 (135 days old) is then ageing,
#: 1 - 0.7 * (135 - 90) / (180 - 90) = 0.65; P1 / P2 / F2 (31 days) stay fresh, S (882 days) expired
AGEING = CRPConfig(graph_retrieval=False, envelope_fact_budget=3).with_overrides(
    {"ttl_days.official_documentation": 180}
)


def test_expired_and_ageing_are_counted_apart():
    corpus, scen, config = tiny_case(AGEING)
    ba = before_after(corpus, scen, config)
    # CDR with recency: P1 .704, P2 .696, F2 .624, F1 .8*.80*.65 = .416, S .216; P2 suppressed, F1 backfills
    assert sorted(ba.after.envelope) == ["F1", "F2", "P1"] and sorted(ba.before.envelope) == ["P1", "P2", "S"]
    assert ba.spec027_recency["F1"] == pytest.approx(0.65) and ba.recency_rule["F1"] == "decay"
    assert ba.before.expired_in_envelope == ("S",) and ba.before.ageing_in_envelope == ()
    assert ba.after.expired_in_envelope == () and ba.after.ageing_in_envelope == ("F1",)
    rows = {r["measure"]: (r["SPEC-024 only"], r["SPEC-027"]) for r in ba.rows()}
    assert rows["expired facts in the envelope"] == (1, 0)
    assert rows["ageing facts in the envelope"] == (0, 1)
    assert rows["tokens used"] == (14 + 12 + 12, 12 + 13 + 12)
    assert ba.recency_state("F1") == "ageing" and ba.recency_state("S") == "expired"
    assert ba.recency_state("P1") == "fresh"


def test_one_definition_of_expired_and_ageing_with_the_suite_metrics():
    """The view and the suite metrics read the same rule table (crp_core.factors.recency.recency_state)."""
    corpus, scen, config = tiny_case(AGEING)
    full = run_pipeline(corpus, scen, config)
    m = scenario_metrics(full, Expectations())
    ba = before_after(corpus, scen, config, full=full)
    assert m.expired == ba.after.expired_in_envelope and m.ageing == ba.after.ageing_in_envelope
    assert [recency_state(r) for r in ("expired", "stale_status", "decay", "fresh", "timeless")] == [
        "expired",
        "expired",
        "ageing",
        "fresh",
        "fresh",
    ]


def test_what_spec027_removed_and_why():
    corpus, scen, config = tiny_case()
    ba = before_after(corpus, scen, config)
    removed = {c.fact_id: c for c in ba.removed}
    assert list(removed) == list(ba.only_before) and set(removed) == {"S", "P2"}
    s, p2 = removed["S"], removed["P2"]
    assert s.kind == "expired" and s.content == "The scheduler runs with the legacy queue mode enabled."
    assert s.reason.startswith("expired (882 days old, TTL 365 days): recency 0.30")
    assert s.tokens == 14
    # authority: P1 .80 * 1 * .8 = .64 > P2 .75 * 1 * .8 = .60
    assert p2.kind == "conflict loser" and p2.related == "P1" and p2.tokens == 12
    assert p2.reason == "suppressed as the conflict loser to P1 (authority 0.6000 < 0.6400 (NUMBER_CHANGED))"
    entered = {c.fact_id: c for c in ba.entered}
    assert set(entered) == {"F1", "F2"} and entered["F2"].related == "P2"  # F2 backfills P2's slot
    assert entered["F2"].reason == "backfill: took the slot of P2"
    assert entered["F1"].content == "Snapshots are taken every six hours on atlas." and entered["F1"].tokens == 13


def test_the_token_change_adds_up():
    corpus, scen, config = tiny_case()
    t = before_after(corpus, scen, config).tokens
    assert t is not None
    assert (t.before, t.after, t.delta) == (38, 37, -1)
    assert (t.removed, t.n_removed, t.added, t.n_added) == (14 + 12, 2, 13 + 12, 2)
    assert (t.kept_before, t.kept_after, t.n_kept) == (12, 12, 1)
    assert (t.notes_before, t.notes_after) == (0, 0)
    assert t.delta == (t.added - t.removed) + (t.kept_after - t.kept_before) + (t.notes_after - t.notes_before)
    assert t.sentence() == (
        "SPEC-027 uses 1 fewer token (38 → 37) with the same number of facts (3 → 3): the 2 "
        "facts it removed cost 26 tokens (13 a fact); the 2 facts it added cost 25 (12 a fact). "
        "Net: -1 from the facts that changed."
    )


def _tie_case():
    """T1 / T2 tie exactly (same source, dates, importance), cosine .9999 (> .85), NUMBER_CHANGED; L is an
    expired, longer fact (official_documentation, 2024) the baseline packs in their place."""
    facts = [
        fact(
            "L", "The legacy scheduler queue mode stays enabled on every node of the cluster.", modified_at="2024-01-01"
        ),
        fact("T1", "The etcd peer port is 2380.", modified_at="2026-05-01"),
        fact("T2", "The etcd peer port is 2381.", modified_at="2026-05-01"),
    ]
    t2 = [0.85, math.sqrt(1 - 0.85**2), 0, 0]
    vecs = [[0.9, 0, 0, math.sqrt(1 - 0.81)], [0.86, math.sqrt(1 - 0.86**2), 0, 0], t2]
    config = CRPConfig(graph_retrieval=False, envelope_fact_budget=2)
    return make_corpus(facts, vecs, config), make_scenario([1, 0, 0, 0]), config


def test_a_note_block_is_in_the_token_change():
    """Relevance L .90, T1 .86, T2 .85. SPEC-024 only (recency 1): anchors L .72, T1 .688; T1 / T2 detected but
    dismissed, so T2 (not selected) stays out: {L, T1}. SPEC-027: L .8*.9*.3 = .216, so anchors T1, T2; tied,
    both packed with their NOTE block: {T1, T2}.
    Lines: L 13 words -> 17 + 2 = 19; T1 / T2 6 words -> 8 + 2 = 10 each.
    NOTE: 20 header words + "[The etcd peer port is 2380.]" 6 + "[... 2381.]" 6 = 32 words -> 42 tokens."""
    corpus, scen, config = _tie_case()
    ba = before_after(corpus, scen, config)
    assert sorted(ba.before.envelope) == ["L", "T1"] and sorted(ba.after.envelope) == ["T1", "T2"]
    t = ba.tokens
    assert t is not None
    assert (t.before, t.after) == (19 + 10, 10 + 10 + 42)
    assert (t.removed, t.added, t.notes_after, t.n_notes_after) == (19, 10, 42, 1)
    assert ba.after.note_tokens == 42 and ba.after.noted_pairs == (("T1", "T2"),)
    # fewer tokens of facts, yet more tokens in all: the NOTE block telling the model about the tie
    assert t.sentence().startswith("SPEC-027 uses 33 more tokens (29 → 62) with the same number of facts (2 → 2)")
    assert "NOTE blocks telling the model about tied conflicts cost 42 tokens (1 block; before: 0)" in t.sentence()
    assert t.sentence().endswith("Net: -9 from the facts that changed, +42 from NOTE blocks.")
    assert ba.removed[0].kind == "expired" and ba.removed[0].fact_id == "L"
    heads = dict(ba.headlines())
    assert (
        "With SPEC-027: 1 (1 tied, each flagged to the model by a NOTE block)"
        in heads["Contradictions → pairs handed to the model"]
    )


def test_token_change_of_an_envelope_with_itself_is_zero():
    corpus, scen, config = tiny_case()
    env = run_pipeline(corpus, scen, config).envelope
    t = token_change(env, env)
    assert t.delta == 0 and t.removed == t.added == 0 and t.n_kept == len(env.order)


def test_headlines_name_the_three_fixes():
    corpus, scen, config = tiny_case()
    heads = before_after(corpus, scen, config).headlines()
    assert [h for h, _ in heads] == [
        "Fan-out race → duplicates",
        "Contradictions → pairs handed to the model",
        "Stale facts → expired facts packed",
    ]
    text = dict(heads)
    assert text["Fan-out race → duplicates"].startswith("This scenario does not fan out (width 0)")
    assert text["Contradictions → pairs handed to the model"] == (
        "Without SPEC-027, 1 contradictory pair reached the model with no warning. With SPEC-027: 0; "
        "1 losing fact removed by Fact Authority Resolution."
    )
    assert text["Stale facts → expired facts packed"] == (
        "Without SPEC-027, 1 expired fact (past the TTL, or marked STALE) counted at full weight. With SPEC-027: 0. "
        "Ageing facts (still within the TTL, partly weighted down): 0 → 0."
    )


def test_one_duplicate_count_everywhere():
    """The before / after numbers and the Fan-out page's comparison strip read FanoutRun.duplicate_count of
    the same run; the facts flagged in an envelope are the packed ones among its duplicates' facts.
    Case: the Fan-out view tests' three topics, two sub-queries each, width 3 (round-robin branches mix the
    topics, so the naive race repeats facts)."""
    from crp_ui.fanout_view import comparison_frame
    from tests.support.fanout_topics import DIM, topic_vectors

    facts, vecs, subs, topics = topic_vectors()
    corpus = make_corpus(facts, vecs)
    scen = make_scenario(
        topics.sum(axis=0), sub_queries=subs + [("done", np.eye(DIM)[4])], addressed=[("done", 0.9)], fanout_width=3
    )
    ba = before_after(corpus, scen, CRPConfig())
    before_fan, after_fan = ba.baseline.result.fanout, ba.full.fanout
    assert before_fan is not None and after_fan is not None
    naive = before_fan.naive  # the race under SPEC-024 scoring (the Fan-out page shows it under SPEC-027's)
    assert ba.before.fanout_duplicates == naive.duplicate_count == len(naive.duplicates) > 0
    assert ba.after.fanout_duplicates == after_fan.partitioned.duplicate_count == 0
    # the same record gives the same number on the Fan-out page's comparison strip
    assert (
        comparison_frame(before_fan).set_index("measure").loc["fan-out duplicates", "naive"]
        == ba.before.fanout_duplicates
    )
    rows = {r["measure"]: r["SPEC-024 only"] for r in ba.rows()}
    assert rows["fan-out duplicates"] == naive.duplicate_count
    # the naive race removes none at fan-in: every duplicate reaches the model; SPEC-027's partitions none here
    assert rows["fan-out duplicates reaching the model"] == naive.duplicate_count
    assert {r["measure"]: r["SPEC-027"] for r in ba.rows()}["fan-out duplicates reaching the model"] == 0
    named = naive.duplicate_fact_ids
    assert set(named) == {f for d in naive.duplicates for f in d.fact_ids} and len(named) == len(set(named))
    assert ba.before.packed_duplicate_facts == tuple(f for f in ba.before.envelope if f in set(named))
    heads = dict(ba.headlines())
    assert (
        f"{_plural(naive.duplicate_count, 'duplicate')}, each handed on by more than one branch "
        f"({len(ba.before.packed_duplicate_facts)} of those facts also packed in the parent's envelope)"
    ) in heads["Fan-out race → duplicates"]


def _plural(k: int, word: str) -> str:
    return f"{k} {word}{'' if k == 1 else 's'}"


def test_an_operators_decision_is_never_credited_to_fact_authority_resolution():
    """P1 (authority .64) beats P2 (.60) by Fact Authority Resolution; an operator overrides it: P2 wins, and
    P1's removal is the operator's, said with the true arithmetic, and counted apart in the headline."""
    corpus, scen, config = tiny_case()
    decisions = {"P1|P2": {"kind": "override", "winner": "P2"}}
    ba = before_after(corpus, scen, config, decisions=decisions)
    removed = {c.fact_id: c for c in ba.removed}
    p1 = removed["P1"]
    assert (p1.kind, p1.related) == ("operator decision", "P2")
    assert p1.reason == (
        "left out in favour of P2 by an operator's override decision (authority 0.6400 vs 0.6000) (NUMBER_CHANGED)"
    )
    (contradictions,) = [text for fix, text in ba.headlines() if fix.startswith("Contradictions")]
    assert (
        contradictions.endswith("; 1 fact left out by operators' decisions (triage), not by the algorithm.")
        and "Fact Authority Resolution" not in contradictions
    )


def test_authorities_are_printed_with_the_digits_that_tell_them_apart():
    from crp_core.outcomes import authority_pair_text

    assert authority_pair_text(0.6, 0.64) == ("0.6000", "0.6400")
    assert authority_pair_text(0.52501, 0.52502) == ("0.52501", "0.52502")
    assert authority_pair_text(0.525, 0.525 + 3e-10) == ("0.5250000000", "0.5250000003")
    assert authority_pair_text(0.525, 0.525) == ("0.5250", "0.5250")  # equal: a tie, no digits invented


def _toward(rel: float, axis: int) -> list[float]:
    out = [0.0] * 6
    out[0], out[axis] = rel, math.sqrt(1 - rel * rel)
    return out


def test_a_contradictory_pair_no_longer_selected_is_said_so():
    """S (depth 40) and S2 (depth 60), both expired, share axis 1 (cosine > .99: a conflict): without recency
    CDR S .8*.90 = .72 and S2 .8*.89 = .712 beat P .56 and Q .52, so SPEC-024's envelope of 2 packs the pair;
    with recency (0.3) S .216 and S2 .2136 lose to P and Q. Neither is a conflict loser: the headline says the
    pair is gone because other facts were selected, not that Fact Authority Resolution removed anything."""
    facts = [
        fact("S", "The legacy queue depth is 40.", modified_at="2024-01-01T00:00:00Z"),
        fact("S2", "The legacy queue depth is 60.", modified_at="2024-01-01T00:00:00Z"),
        fact("P", "Snapshots are taken every six hours on atlas.", modified_at="2026-05-01T00:00:00Z"),
        fact("Q", "Defragmentation runs weekly during the maintenance window.", modified_at="2026-05-01T00:00:00Z"),
    ]
    config = CRPConfig(graph_retrieval=False, envelope_fact_budget=2)
    corpus = make_corpus(facts, [_toward(0.90, 1), _toward(0.89, 1), _toward(0.70, 2), _toward(0.65, 3)], config)
    ba = before_after(corpus, make_scenario([1, 0, 0, 0, 0, 0], now=NOW), config)
    assert ba.before.envelope == ("S", "S2") and ba.after.envelope == ("P", "Q")
    assert ba.before.contradictory_pairs == (("S", "S2"),) and {c.kind for c in ba.removed} == {"expired"}
    (contradictions,) = [text for fix, text in ba.headlines() if fix.startswith("Contradictions")]
    assert contradictions == (
        "Without SPEC-027, 1 contradictory pair reached the model with no warning. With SPEC-027: 0; 1 pair no "
        "longer packed together (other facts selected)."
    )


def test_a_race_without_duplicates_is_not_told_as_picking_twice():
    """One sub-query per topic, one branch each (the Fan-out view tests' topics s0a, s1a, s2a, width 3): the
    naive race repeats nothing, and the headline says so rather than "picked the same material twice: 0"."""
    from tests.support.fanout_topics import topic_vectors

    facts, vecs, subs, topics = topic_vectors()
    scen = make_scenario(topics.sum(axis=0), sub_queries=[subs[0], subs[2], subs[4]], fanout_width=3)
    ba = before_after(make_corpus(facts, vecs), scen, CRPConfig())
    assert ba.before.fanout_duplicates == 0 and ba.after.fanout_duplicates == 0
    assert dict(ba.headlines())["Fan-out race → duplicates"] == (
        "Without SPEC-027 the 3 parallel branches raced on one shared Coverage Set; here they happened not to pick "
        "the same material twice (0 duplicates). With partitioned sub-queries and read-only snapshots: 0 "
        "duplicates reaching the model."
    )


def test_a_near_copy_left_out_for_its_fresher_twin_is_said_as_a_duplicate():
    """OLD and NEW say the same (cos .9995 > dedup_similarity); OLD is closer to the query (.95 against .94) but
    304 of its 365 days old. Without recency OLD is the anchor and NEW is skipped as its near-duplicate; with
    SPEC-027's recency NEW outscores it and OLD is skipped. The story says OLD left as NEW's near-copy (the Story
    listed the two near-identical sentences as removed and added with nothing joining them)."""
    from tests.support.near_conflict_world import unit

    facts = [
        fact(
            "OLD",
            "Every response carries a Request-Id header; support asks for it.",
            modified_at="2025-08-01",
            ttl="P365D",
        ),
        fact(
            "NEW",
            "Every response carries a Request-Id header, and support asks for it.",
            modified_at="2026-05-01",
            ttl="P365D",
        ),
    ]
    config = CRPConfig(graph_retrieval=False, envelope_fact_budget=2)
    corpus = make_corpus(facts, [unit(0.95, 0.312), unit(0.94, 0.341)], config)
    ba = before_after(corpus, make_scenario([1, 0, 0, 0, 0, 0]), config)
    assert (ba.before.envelope, ba.after.envelope) == (("OLD",), ("NEW",))
    (old,) = ba.removed
    cos = math.fsum(x * y for x, y in zip(unit(0.95, 0.312), unit(0.94, 0.341), strict=True))
    rows = {corpus.kb.facts[int(r)].fact_id: i for i, r in enumerate(ba.full.cdr.idx)}
    factor = float(ba.full.cdr.recency_factor[rows["OLD"]])
    assert (old.fact_id, old.kind, old.related) == ("OLD", "duplicate", "NEW")
    assert old.reason == (
        f"a near-duplicate of NEW (cos {cos:.3f}, SPEC-003 §6.6), packed in its place; "
        f"ageing (304 of 365 days of its TTL): recency {factor:.2f} lowered its score"
    )
