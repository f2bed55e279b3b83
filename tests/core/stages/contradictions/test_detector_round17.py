"""The detector's seventeenth round (docs/decisions/detector-round17.md): one test per error class fixed, each with the
near miss the change must keep. Hand-written sentences; none comes from a labelled corpus."""

from __future__ import annotations

from crp_core.stages.contradictions.values import NEGATION_FLIP, NUMBER_CHANGED, learned_candidates, values_conflict
from tests.support.detector_cases import patterns

RESIDENTS = "Residents park free at the leisure centre."


def test_a_prefixed_word_beside_its_own_base_names_a_second_group_and_flips_nothing() -> None:
    # "Non-residents ...; residents ...": the text speaks of two groups, and states the other text's fact for one
    two_groups = "Non-residents pay £3 to park at the leisure centre; residents park free."
    assert values_conflict(RESIDENTS, two_groups, False) is None
    assert values_conflict(RESIDENTS, two_groups) is None
    # near miss: the prefixed word alone still turns the other text's base around
    assert patterns(RESIDENTS, "Non-residents park free at the leisure centre.") == (NEGATION_FLIP,)
    # near miss: against a negation the prefixed word still reads as one with it, base beside or not
    unlabelled = "Any sample left unlabelled on arrival is discarded; labelled samples go to the freezer."
    assert values_conflict("Samples not labelled on arrival are discarded.", unlabelled) is None


BEACH = "Dogs may not go on the beach until October."


def test_only_closing_a_time_phrase_states_the_restriction_of_not_until() -> None:
    # "from October only" is "only from October": the time before which the negation forbids
    assert values_conflict(BEACH, "Dogs are allowed on the beach from October only.", False) is None
    assert values_conflict(BEACH, "Dogs are allowed on the beach from October only.") is None
    # near misses: a plain assertion, and an "only" that closes no time phrase, still flip the negation
    assert patterns(BEACH, "Dogs are allowed on the beach.") == (NEGATION_FLIP,)
    assert patterns(BEACH, "Only dogs on a lead are allowed on the beach.") == (NEGATION_FLIP,)


def test_opposed_qualifiers_one_on_each_side_name_two_kinds_of_one_thing() -> None:
    # "Half-day" / "Full-day", "upper" / "lower": the values of two kinds, no changed value
    assert values_conflict("Half-day kayak trips cost £40.", "Full-day kayak trips cost £70.") is None
    assert values_conflict("The upper car park closes at 6 pm.", "The lower car park closes at 8 pm.") is None
    # near misses: one kind on both sides, and both kinds on each side (a swap), keep the changed values
    assert patterns("Adult day tickets cost £12.", "Adult day tickets cost £14.") == (NUMBER_CHANGED,)
    both = "Adult day tickets cost £12 and child day tickets £6."
    assert patterns(both, "Adult day tickets cost £6 and child day tickets £12.") == (NUMBER_CHANGED,)


TERMINAL = "The ferry terminal will be closed on 3 May."


def _polar_agree(a: str, b: str) -> float:
    (cand,) = [c for c in learned_candidates(a, b) if c.patterns == (NEGATION_FLIP,)]
    return cand.features["polar_agree"]


def test_a_polarity_word_the_other_text_names_as_a_noun_is_a_polarity_both_assert() -> None:
    # "will be closed" / "the closure ... takes place": the learned flip candidate reads one state, not a flip
    assert _polar_agree(TERMINAL, "The closure of the ferry terminal takes place on 3 May.") == 1.0
    # near miss: a noun of the opposite state ("opening") is no derivation of "closed"
    assert _polar_agree(TERMINAL, "The opening of the ferry terminal takes place on 3 May.") == 0.0
