"""The detector's fifteenth round (docs/decisions/detector-round15.md): one test per error class fixed, each with the
near miss the change must keep. Hand-written sentences; none comes from a labelled corpus."""

from __future__ import annotations

from crp_core.stages.contradictions.lexicon import negated_base
from crp_core.stages.contradictions.values import NEGATION_FLIP, NUMBER_CHANGED, values_conflict
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


ENTRIES = "Entries must be submitted at least 10 days before the show."


def test_a_moment_bound_before_a_lead_time_bounds_the_lead_time_the_other_way() -> None:
    # "no later than 10 days before" the show is "at least 10 days before" it: no flip, and no conflict
    assert values_conflict(ENTRIES, "Submit your entry no later than 10 days before the show.") is None
    assert values_conflict(ENTRIES, "Submit your entry no later than 10 days prior to the show.") is None
    # "no earlier than 3 hours before" is "up to 3 hours before"
    early = "Guests may check in up to 3 hours before departure."
    assert values_conflict(early, "Guests may check in no earlier than 3 hours before departure.") is None
    # near misses: another lead time is a changed number (not a flip as well), and a bound the other way
    # stays a flip
    assert patterns(ENTRIES, "Submit your entry no later than 7 days before the show.") == (NUMBER_CHANGED,)
    assert patterns(early, "Guests may check in no earlier than 2 hours before departure.") == (NUMBER_CHANGED,)
    assert patterns(ENTRIES, "Entries must be submitted at most 10 days before the show.") == (NEGATION_FLIP,)
    assert patterns(early, "Guests may check in at least 3 hours before departure.") == (NEGATION_FLIP,)


def test_a_duration_after_a_moment_or_a_bound_of_the_duration_itself_keeps_its_bound() -> None:
    # "after" the show is no lead time, and "at least" bounds the duration itself: the bounds still differ
    late = "Refunds are paid no later than 10 days after the show."
    assert patterns(late, "Refunds are paid at least 10 days after the show.") == (NEGATION_FLIP,)
