"""The detector's tenth round (docs/decisions/detector-round10.md): one test per error class fixed, each with the
near miss the rule must keep. Hand-written sentences; none comes from a labelled corpus."""

from __future__ import annotations

from crp_core.stages.contradictions.values import (
    ENTITY_SUBSTITUTED,
    NEGATION_FLIP,
    NUMBER_CHANGED,
    tokenize,
    values_conflict,
)
from tests.support.detector_cases import patterns


def _names(text: str) -> list[str]:
    return [t.text for t in tokenize(text) if t.kind == "entity"]


def test_a_capital_a_after_a_name_is_a_designator_not_the_article() -> None:
    # "Hangar A" / "Hangar C" are two subjects: what each houses is no changed value
    assert _names("Hangar A houses a Cessna trainer.") == ["Hangar A", "Cessna"]
    assert values_conflict("Hangar A houses a Cessna trainer.", "Hangar C houses a Piper trainer.") is None
    # and a swap between two designated places is found
    assert patterns("Crates go to Dock A and drums to Dock B.", "Drums go to Dock A and crates to Dock B.") == (
        ENTITY_SUBSTITUTED,
    )
    # near misses: the article before a capitalised word, and "A" opening a sentence, stay the article
    assert _names("The Lighthouse Keepers Meet A Storm tonight.") == ["Lighthouse Keepers Meet", "Storm"]
    assert _names("A Cessna trainer is kept in Hangar A.") == ["Cessna", "Hangar A"]
    assert patterns("Hangar A houses a Cessna trainer.", "Hangar A houses a Piper trainer.") == (ENTITY_SUBSTITUTED,)


def test_a_standard_s_number_names_a_standard() -> None:
    # a standards body's code and its number are one name: another standard is a substituted entity
    assert _names("Workshop gloves must conform to EN 388.") == ["Workshop", "EN 388"]
    assert patterns("Gloves for the workshop must conform to EN 388.", "Workshop gloves must meet EN 407.") == (
        ENTITY_SUBSTITUTED,
    )
    # near miss: another code before a number keeps the number a value ("HTTP 404" is a status code, a count)
    assert patterns("Error pages return HTTP 404.", "Error pages return HTTP 410.") == (NUMBER_CHANGED,)


def test_square_and_cubic_units_are_areas_and_volumes() -> None:
    # 20 m2 is 215.3 square feet: the same area in two systems; 400 square feet is 37.2 m2
    assert values_conflict("The garden plot measures 20 square metres.", "The garden plot measures 215 sq ft.") is None
    assert patterns("The garden plot measures 20 square metres.", "The garden plot measures 400 square feet.") == (
        NUMBER_CHANGED,
    )
    # a cubic metre is the m3 of the units table
    assert patterns("The skip holds 6 cubic metres.", "The skip holds 8 m3.") == (NUMBER_CHANGED,)
    assert values_conflict("The skip holds 6 cubic metres.", "The skip holds 6 m3.") is None


def test_a_fraction_in_words_of_a_measure_is_that_measure() -> None:
    # "three-quarters of an inch" is 0.75 in (no share of 75 %), against half an inch and 0.75 inches
    assert patterns("The hem allowance is three-quarters of an inch.", "The hem allowance is half an inch.") == (
        NUMBER_CHANGED,
    )
    assert (
        values_conflict("The hem allowance is three-quarters of an inch.", "The hem allowance is 0.75 inches.") is None
    )
    # near miss: a fraction of something that is no unit stays a share
    assert patterns("Three-quarters of the seats are reserved.", "Half of the seats are reserved.") == (
        "MAGNITUDE_ALTERED",
    )


def test_millibars_are_a_pressure() -> None:
    assert values_conflict("The burner is set to 20 mbar.", "The burner is set to 0.02 bar.") is None
    assert patterns("The burner is set to 20 mbar.", "The burner is set to 0.2 bar.") == (NUMBER_CHANGED,)


def test_not_until_restates_only_at_or_an_obligation_before() -> None:
    # "not ... until X" is the restriction "only after X" and "must ... before": the same statement
    assert (
        values_conflict(
            "Passengers are allowed on deck only after the safety drill.",
            "Passengers are not allowed on deck until the safety drill.",
        )
        is None
    )
    assert (
        values_conflict(
            "Apprentices must pass the theory test before they are given a key.",
            "No key is given to an apprentice until the theory test is passed.",
        )
        is None
    )
    # near misses: against a plain "until", and against "only before", the negation is a flip
    assert patterns("The kiosk is open until noon.", "The kiosk is not open until noon.") == (NEGATION_FLIP,)
    assert patterns("Dogs are allowed only before 9am.", "Dogs are not allowed until 9am.") == (NEGATION_FLIP,)


def test_an_acronym_of_a_name_s_initials_is_that_name() -> None:
    assert values_conflict("Lockers are assigned by Harbour Ferry Services.", "Lockers are assigned by HFS.") is None
    # near miss: an acronym of other initials is another name
    assert patterns("Lockers are assigned by Harbour Ferry Services.", "Lockers are assigned by HPA.") == (
        ENTITY_SUBSTITUTED,
    )


def test_a_map_scale_is_a_ratio_and_names_a_series_before_a_noun() -> None:
    # "1:10,000" is no time of day; before "plans" it says which plans, so the spacings are of two subjects
    assert (
        values_conflict(
            "On the 1:10,000 plans the grid spacing is 100 metres.",
            "The grid spacing used on the 1:5,000 plans is 50 metres.",
        )
        is None
    )
    # near misses: a changed scale is a changed number; a time of day stays one
    assert patterns("The survey plans are drawn at 1:10,000.", "The survey plans are drawn at 1:5,000.") == (
        NUMBER_CHANGED,
    )
    assert patterns("The ferry leaves at 9:15.", "The ferry leaves at 9:45.") == (NUMBER_CHANGED,)


def test_a_leading_quantifier_does_not_hide_a_substituted_phrase() -> None:
    # "Any lost property ..." against "Lost property ...": the sentences differ in the one complement
    assert patterns(
        "Lost property must be handed to the steward.",
        "Any lost property must be handed to the club secretary.",
        learned=False,
    ) == (ENTITY_SUBSTITUTED,)
    # near miss: the same complement on both sides is no change
    assert (
        values_conflict(
            "Lost property must be handed to the steward.", "Any lost property must be handed to the steward."
        )
        is None
    )


def test_opposite_bounds_on_one_number_with_another_change_are_two_brackets() -> None:
    # a tiered rule: the charge of lawns over 500 m2 and the charge of lawns under 500 m2
    assert (
        values_conflict(
            "The mowing charge is £40 per visit for lawns of over 500 square metres.",
            "For lawns of under 500 square metres the mowing charge is £25 per visit.",
        )
        is None
    )
    # near miss: the bounds reversed with nothing else changed stay a flip
    assert patterns(
        "The mowing charge is £40 per visit for lawns of over 500 square metres.",
        "The mowing charge is £40 per visit for lawns of under 500 square metres.",
    ) == (NEGATION_FLIP,)
