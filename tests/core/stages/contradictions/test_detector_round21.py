"""The detector's twenty-first round (docs/decisions/detector-round21.md): one test per error class fixed, each with
the near miss the change must keep. Hand-written sentences; none comes from a labelled corpus."""

from __future__ import annotations

from crp_core.stages.contradictions.candidates import FEATURE_NAMES, parity
from crp_core.stages.contradictions.clauses import analyse
from crp_core.stages.contradictions.learned import weights
from crp_core.stages.contradictions.values import (
    ENTITY_SUBSTITUTED,
    MAGNITUDE_ALTERED,
    NEGATION_FLIP,
    NUMBER_CHANGED,
    learned_candidates,
    values_conflict,
)
from tests.support.detector_cases import patterns


def _values(a: str, b: str) -> list[float | None]:
    """The ``other_subject`` feature of each changed-number candidate of the pair."""
    return [c.features.get("other_subject") for c in learned_candidates(a, b) if NUMBER_CHANGED in c.patterns]


def test_the_rules_subject_test_is_a_feature_of_the_learned_value() -> None:
    # two airlines, each opening its sentence: the rules read two subjects; the learned value carries that reading
    a = "At Kestrel Airways the checked baggage allowance is 23 kg."
    assert _values(a, "Osprey Air sets its checked baggage allowance at 20 kg.") == [1.0]
    # and the weights count it against a conflict
    assert weights().coefficients[FEATURE_NAMES.index("other_subject")] < 0
    # near miss: one airline on both sides is one subject
    assert _values(a, "Kestrel Airways sets its checked baggage allowance at 20 kg.") == [0.0]


def test_a_prefixed_group_is_read_in_a_sentence_with_no_auxiliary() -> None:
    # "non-member" and "member" name two groups; the sentence has no modal or form of be, so the words before the
    # value are its subject: no flip and no changed price
    a = "A non-member day pass costs £12 at the leisure centre."
    assert values_conflict(a, "A member day pass costs £6 at the leisure centre.") is None
    # near miss: one group on both sides keeps its changed price
    b = "A member day pass costs £9 at the leisure centre."
    assert patterns(b, "A member day pass costs £6 at the leisure centre.", learned=False) == (NUMBER_CHANGED,)


def test_an_affixed_word_both_texts_state_counts_for_neither_whatever_its_reading() -> None:
    # "Sugar-free" opening a sentence reads as a name, "sugar-free" inside one as a denied "sugar": one word in both
    # texts, so the two negations alone decide the polarity (both deny)
    a = "Sugar-free syrup is never used for the children's menu."
    b = "The children's menu does not use sugar-free syrup."
    da, db = analyse(a), analyse(b)
    assert parity(da, db) == parity(db, da)
    assert values_conflict(a, b, False) is None
    # near miss: a text with no negation against the denial still differs in polarity
    c = analyse("Sugar-free syrup is always used for the children's menu.")
    assert parity(c, db) != parity(db, c)


def test_avoiding_something_denies_it() -> None:
    # "Avoid lifting" says what "Do not lift" says, and the opposite of "may lift"
    a = "Avoid lifting heavy shopping for two weeks after the operation."
    assert patterns(a, "You may lift heavy shopping during the two weeks after the operation.", learned=False) == (
        NEGATION_FLIP,
    )
    # near miss: two denials in other words are no flip
    assert values_conflict(a, "Do not lift heavy shopping for two weeks after the operation.") is None


def test_a_name_a_text_also_states_is_added_not_substituted() -> None:
    # "also issued by the Town Hall": one more issuer beside the Harbour Office
    a = "Parking permits for the Elm Street car park are issued by the Harbour Office."
    b = "Parking permits for the Elm Street car park are also issued by the Town Hall."
    assert values_conflict(a, b) is None
    # near miss: without "also" the issuer is another one
    c = "Parking permits for the Elm Street car park are issued by the Town Hall."
    assert patterns(a, c, learned=False) == (ENTITY_SUBSTITUTED,)


def test_nothing_except_restates_only() -> None:
    a = "Volunteers only need to bring a packed lunch."
    assert values_conflict(a, "Volunteers need to bring nothing except a packed lunch.") is None
    # near miss: "nothing" alone still denies
    b = "Volunteers need to bring a packed lunch."
    assert patterns("Volunteers need to bring nothing.", b) == (NEGATION_FLIP,)


def test_a_kilo_is_a_kilogram() -> None:
    a = "Each bag of pellets holds half a kilo."
    assert patterns(a, "Each bag of pellets contains 250 g.", learned=False) == (NUMBER_CHANGED,)
    # near miss: the same mass in grams
    assert values_conflict(a, "Each bag of pellets contains 500 g.") is None


def test_n_times_what_it_was_is_a_multiplier() -> None:
    a = "The parking fine is now four times what it was in 2015."
    assert patterns(a, "Since 2015 the parking fine has grown 3x.", learned=False) == (MAGNITUDE_ALTERED,)
    # near miss: the same multiplier written "4x"
    assert values_conflict(a, "Since 2015 the parking fine has grown 4x.") is None


def test_two_scopes_of_weekdays_separate_the_learned_comparisons_values() -> None:
    # Saturdays and weekdays: two timetables, each with its own price; the learned comparison proposes no changed
    # price between them, as the rules already read none
    a = "On Saturdays the studio tour costs £14."
    assert not [c for c in learned_candidates(a, "On weekdays the studio tour costs £11.") if c.diffs]
    assert values_conflict(a, "On weekdays the studio tour costs £11.") is None
    # near miss: one scope on both sides keeps its changed price
    assert [c for c in learned_candidates(a, "On Saturdays the studio tour costs £11.") if NUMBER_CHANGED in c.patterns]
