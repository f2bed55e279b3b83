"""The detector's learned comparison (candidates.py, learned.py; docs/decisions/detector-learned.md): the candidates
the rules' analysis proposes where the rules find nothing, their features, the verdicts with the shipped weights,
the ``detector_learned`` switch and the symmetry of ``values_conflict``."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crp_core.config import CRPConfig
from crp_core.records import ValueDiff
from crp_core.stages.contradictions import (
    DATE_SHIFTED,
    ENTITY_SUBSTITUTED,
    NEGATION_FLIP,
    NUMBER_CHANGED,
    resolve_contradictions,
)
from crp_core.stages.contradictions.learned import candidate_score, weights
from crp_core.stages.contradictions.values import conflict_check, learned_candidates, values_conflict
from tests.support.factories import fact, make_corpus
from tests.support.paths import TEST_DATA

#: amounts swapped between two labels, the labels reworded ("12 euros for adults" / "adults pay 6 euros")
TICKETS_A = "Tickets cost 12 euros for adults and 6 euros for children."
TICKETS_B = "Children pay 12 euros and adults pay 6 euros."
BUS_A = "The cap is £5 for buses and £8 for trains."
BUS_B = "Buses are capped at £8 and trains at £5."
#: a changed name in a reworded sentence
LAPTOP_A = "Every laptop issued to staff is a ThinkPad T14."
LAPTOP_B = "Staff laptops are, without exception, Latitude 5440 machines."
#: a changed date in a reworded sentence
FEDORA_A = "Security updates for Fedora 40 end in May 2025."
FEDORA_B = "Fedora 40 receives security fixes until November 2025."
#: a polarity flip through "no longer" against a polarity word of another group
LAKE_A = "The lake is no longer safe for swimming."
LAKE_B = "Swimming in the lake is fine."
#: negatives: a paraphrase, two subjects
SAUNA_A = "Members can book the sauna online."
SAUNA_B = "The sauna can be booked online by members."
FERRY_A = "The ferry to Skye leaves at 9:00."
FERRY_B = "The ferry to Mull leaves at 11:00."
POOL_A = "The pool opens at 7 am."
POOL_B = "The gym opens at 6 am."


def _diff(pattern: str, ta: str, tb: str, a: str, b: str) -> ValueDiff:
    sa, sb = a.index(ta), b.index(tb)
    return ValueDiff(pattern, (ta,), (tb,), (sa, sa + len(ta)), (sb, sb + len(tb)))


# ---- verdicts per candidate kind -----------------------------------------------------------------------
def test_a_swap_of_amounts_the_rules_miss_is_a_learned_changed_number():
    assert values_conflict(TICKETS_A, TICKETS_B, False) is None
    vc = values_conflict(TICKETS_A, TICKETS_B)
    assert vc is not None and vc.learned
    assert vc.patterns == (NUMBER_CHANGED,)
    # under each label, the amount one text states against the other's
    assert vc.diffs == (
        _diff(NUMBER_CHANGED, "12 euros", "6 euros", TICKETS_A, TICKETS_B),
        _diff(NUMBER_CHANGED, "6 euros", "12 euros", TICKETS_A, TICKETS_B),
    )


def test_a_swap_of_prices_between_two_fares_is_a_learned_changed_number():
    assert values_conflict(BUS_A, BUS_B, False) is None
    vc = values_conflict(BUS_A, BUS_B)
    assert vc is not None and vc.learned and vc.patterns == (NUMBER_CHANGED,)
    assert {(d.tokens_a, d.tokens_b) for d in vc.diffs} == {(("£5",), ("£8",)), (("£8",), ("£5",))}


def test_a_changed_name_the_rules_miss_is_a_learned_substitution():
    assert values_conflict(LAPTOP_A, LAPTOP_B, False) is None
    vc = values_conflict(LAPTOP_A, LAPTOP_B)
    assert vc is not None and vc.learned
    assert vc.patterns == (ENTITY_SUBSTITUTED,)
    assert vc.diffs == (_diff(ENTITY_SUBSTITUTED, "ThinkPad", "Latitude", LAPTOP_A, LAPTOP_B),)


def test_a_changed_month_the_rules_miss_is_a_learned_shifted_date():
    assert values_conflict(FEDORA_A, FEDORA_B, False) is None
    vc = values_conflict(FEDORA_A, FEDORA_B)
    assert vc is not None and vc.learned
    assert vc.patterns == (DATE_SHIFTED,)
    assert vc.diffs == (_diff(DATE_SHIFTED, "May", "November", FEDORA_A, FEDORA_B),)


def test_a_polarity_flip_is_proposed_but_its_weight_keeps_it_below_the_threshold():
    """The polarity candidate is weighed, and on the corpus it is a conflict with its pattern only where the two
    polarities oppose in one group: the shipped weights leave this flip ("safe" against "fine", a real one) to the
    rules, which miss it."""
    (cand,) = learned_candidates(LAKE_A, LAKE_B)
    assert cand.patterns == (NEGATION_FLIP,)
    assert candidate_score(weights(), cand.features) < weights().threshold
    assert values_conflict(LAKE_A, LAKE_B) is None


@pytest.mark.parametrize(
    ("a", "b", "n_candidates"),
    [(SAUNA_A, SAUNA_B, 0), (FERRY_A, FERRY_B, 2), (POOL_A, POOL_B, 1)],
    ids=["paraphrase", "another-island", "another-facility"],
)
def test_a_paraphrase_and_another_subject_stay_no_conflict(a, b, n_candidates):
    assert len(learned_candidates(a, b)) == n_candidates
    assert values_conflict(a, b) is None


def test_a_conflict_of_the_rules_is_theirs_whatever_the_switch():
    a, b = "Releases are cut from the main branch.", "Releases are cut from the develop branch."
    rules = values_conflict(a, b, False)
    assert rules is not None and not rules.learned
    assert values_conflict(a, b) == rules


# ---- features per family -------------------------------------------------------------------------------
def test_the_swap_candidate_s_features():
    (cand,) = learned_candidates(TICKETS_A, TICKETS_B)
    # the pair: "children" is the noun "child" (an irregular plural), so "Children" opening b is that word, not a
    # name. Plain words: a {adult, child, cost, for, ticket}, b {adult, child}: 2/5, a's own 3, b's 0. Loose words:
    # a {adult, child, fee, ticket, ^adul, ^chil, ^tick, ^ticke}, b {adult, child, pay, ^adul, ^chil}: 4/9
    assert cand.features == {
        "words": 0.4,
        "loose": 0.44,
        "plain": 0.4,
        "sent_same": 1.0,
        "own_min": 0.0,
        "own_max": 3.0,
        "sents": 1.0,
        "negs": 0.0,
        "polars": 2.0,
        # the swap: its kind and pattern, amounts among its items, how many swaps, other changed classes
        "kind_swap": 1.0,
        "pat_NUMBER_CHANGED": 1.0,
        "swap_values": 1.0,
        "swaps": 2.0,
        "other_changed": 0.0,
    }


def test_the_value_candidate_s_features():
    (cand,) = learned_candidates(FEDORA_A, FEDORA_B)
    f = cand.features
    # the value: its class and pattern, unstated and shared values of the class, the other classes changed
    assert (f["kind_date"], f["pat_DATE_SHIFTED"]) == (1.0, 1.0)
    assert (f["unstated"], f["unstated_max"], f["shared"], f["other_changed"]) == (2.0, 1.0, 0.0, 0.0)
    # the two values' contexts, clauses and sentences
    assert (f["ctx"], f["clause"], f["clause_score"], f["aligned"], f["sent_loose"]) == (0.43, 0.2, -1.0, 0.0, 0.4)
    assert (f["clause_own_min"], f["clause_own_max"]) == (2.0, 2.0)
    # the neighbours and the values themselves
    assert (f["next_same"], f["prev_same"], f["same_rank"], f["weak"]) == (1.0, 0.0, 1.0, 0.0)
    assert (f["bounds_differ"], f["log_ratio"]) == (0.0, 0.0)


def test_the_value_candidate_reads_the_ratio_of_two_amounts_in_half_decades():
    cand = next(
        c
        for c in learned_candidates("The tank holds 20 litres of water.", "The tank holds 2000 litres of water.")
        if "kind_typed" in c.features
    )
    assert cand.features["log_ratio"] == 2.0


def test_the_polarity_candidate_s_features():
    (cand,) = learned_candidates(LAKE_A, LAKE_B)
    assert cand.features == {
        "words": 0.5,
        "loose": 0.5,
        "plain": 0.44,
        "sent_same": 1.0,
        "own_min": 2.0,
        "own_max": 3.0,
        "sents": 1.0,
        "negs": 1.0,
        "polars": 0.0,
        "kind_polar": 1.0,
        "pat_NEGATION_FLIP": 1.0,
        "other_changed": 0.0,
        "sent_loose": 0.5,
        "flip_clauses": 1.0,
        # "no longer" on one side only; no polarity word on either side (no group opposed or agreeing)
        "neg_sides": 1.0,
        "clean_side": 1.0,
        "polar_opposed": 0.0,
        "polar_agree": 0.0,
        "gov_stated": 0.0,
        "neg_valued": 0.0,
        "only_sides": 0.0,
        # no "unless" in either text
        "unless_restated": 0.0,
        # "the lake" on both sides with no modifier before it: no noun narrowed
        "narrowed_flip": 0.0,
    }


# ---- the switch --------------------------------------------------------------------------------------------
def _corpus_rows() -> list[dict]:
    folder = TEST_DATA / "conflict_pairs"
    paths = [folder / "dev.jsonl", folder / "holdout.jsonl", *sorted((folder / "blind").glob("batch-*.jsonl"))]
    return [json.loads(line) for p in paths for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_the_switch_off_gives_the_rules_verdicts_and_on_adds_only_learned_ones():
    rules, learned = conflict_check(False), conflict_check(True)
    added = 0
    for row in _corpus_rows():
        off = rules(row["a"], row["b"])
        assert off == values_conflict(row["a"], row["b"], False)
        assert off is None or not off.learned
        on = learned(row["a"], row["b"])
        if off is not None:
            assert on == off
        elif on is not None:
            assert on.learned
            added += 1
    assert added > 0


def test_the_switch_reaches_stage_4():
    """Two facts whose only conflict is the learned one: one pair with the switch on, none with it off."""
    # cosine 1 / 1.09 = 0.917: above contradiction_similarity, below dedup_similarity
    corpus = make_corpus([fact("F1", TICKETS_A), fact("F2", TICKETS_B)], [[1.0, 0.3, 0.0], [1.0, 0.0, 0.3]])
    on = CRPConfig()
    off = on.replace(detector_learned=False)

    def run(config: CRPConfig):
        return resolve_contradictions(
            corpus, [0, 1], {0: "anchor", 1: "anchor"}, {0: 1.0, 1: 0.9}, [], {0: 1.0, 1: 0.3}, config, None
        )

    (pair,) = run(on).pairs
    assert pair.patterns == (NUMBER_CHANGED,) and pair.conflict.learned
    assert run(on).audit[0].data["learned"] is True
    assert run(off).pairs == ()


# ---- symmetry ------------------------------------------------------------------------------------------------
_TEXTS = sorted(
    {t for r in _corpus_rows()[::7] for t in (r["a"], r["b"])}
    | {TICKETS_A, TICKETS_B, BUS_A, BUS_B, LAPTOP_A, LAPTOP_B, FEDORA_A, FEDORA_B, LAKE_A, LAKE_B}
)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(_TEXTS), st.sampled_from(_TEXTS), st.booleans())
def test_found_ness_patterns_and_origin_are_symmetric(a, b, learned):
    """The rules compare a pair in a canonical order and mirror it, and the learned comparison runs inside that
    order: whether a conflict is found, its patterns and whether it is learned do not depend on the order."""
    ab, ba = values_conflict(a, b, learned), values_conflict(b, a, learned)
    assert (ab is None) == (ba is None)
    if ab is not None and ba is not None:
        assert ab.patterns == ba.patterns and ab.learned == ba.learned
        assert sorted((d.span_a, d.span_b) for d in ab.diffs) == sorted((d.span_b, d.span_a) for d in ba.diffs)
