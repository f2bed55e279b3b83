"""The detector's fifteenth round (docs/decisions/detector-round15.md): one test per error class fixed, each with the
near miss the change must keep. Hand-written sentences; none comes from a labelled corpus."""

from __future__ import annotations

from crp_core.stages.contradictions.lexicon import negated_base
from crp_core.stages.contradictions.values import NEGATION_FLIP, values_conflict
from tests.support.detector_cases import patterns

PICKUP = "In-store pickup is offered for online orders."


def test_a_hyphen_after_in_marks_a_preposition_not_a_negating_prefix() -> None:
    # "in-store", "in-house", "in-flight": the preposition joined to its noun, no negation of "store"
    assert negated_base("in-store") == ""
    assert negated_base("in-house") == ""
    assert negated_base("in-flight") == ""
    # near misses: the prefix written solid, and "non-" (a hyphenated negating prefix), still negate
    assert negated_base("incomplete") == "complete"
    assert negated_base("non-refundable") == "refundable"
    assert negated_base("unaffected") == "affected"


def test_a_fact_restated_with_an_in_hyphen_word_is_no_flip() -> None:
    # the second text states the same in-store pickup; round 14 read its lower-case "in-store" as "store" with a
    # negating prefix (the capitalised one opening the first text is read as a name) and flagged a flip
    assert values_conflict(PICKUP, "The shop also offers in-store pickup for online orders.") is None
    assert values_conflict("In-flight meals are included in the fare.", "The fare includes in-flight meals.") is None
    # near miss: a real negation of the same fact stays a flip
    assert patterns(PICKUP, "In-store pickup is not offered for online orders.") == (NEGATION_FLIP,)
