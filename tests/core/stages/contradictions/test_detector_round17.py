"""The detector's seventeenth round (docs/decisions/detector-round17.md): one test per error class fixed, each with the
near miss the change must keep. Hand-written sentences; none comes from a labelled corpus."""

from __future__ import annotations

from crp_core.stages.contradictions.values import NEGATION_FLIP, values_conflict
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
