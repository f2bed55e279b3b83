"""The detector's eleventh round (docs/decisions/detector-round11.md): one test per error class fixed, each with the
near miss the rule must keep. Hand-written sentences; none comes from a labelled corpus."""

from __future__ import annotations

from crp_core.stages.contradictions.values import (
    ENTITY_SUBSTITUTED,
    NUMBER_CHANGED,
    values_conflict,
)
from tests.support.detector_cases import patterns


def test_lengths_spelled_out_and_megapascals_are_units() -> None:
    # half a centimetre is 5 mm; 8 mm is another thickness
    assert values_conflict("The cutting mat is 5 mm thick.", "The cutting mat is half a centimetre thick.") is None
    assert patterns("The cutting mat is 8 mm thick.", "The cutting mat is half a centimetre thick.") == (
        NUMBER_CHANGED,
    )
    # 12 millimetres is 1.2 cm (American spelling too); 3 centimeters is 30 mm
    assert values_conflict("The washer is 12 millimetres wide.", "The washer is 1.2 cm wide.") is None
    assert patterns("The washer is 12 mm wide.", "The washer is 3 centimeters wide.") == (NUMBER_CHANGED,)
    # 1 MPa = 10 bar: 35 MPa is 350 bar, 45 MPa is not
    assert values_conflict("The hose is tested to 350 bar.", "The hose is tested to 35 MPa.") is None
    assert patterns("The hose is tested to 350 bar.", "The hose is tested to 45 MPa.") == (NUMBER_CHANGED,)
    assert values_conflict("The pipe is rated at 2 megapascals.", "The pipe is rated at 2,000 kPa.") is None


def test_a_scope_of_weekdays_is_no_substituted_phrase() -> None:
    # a set of weekdays that scopes the hours is which days, no value: a narrower or another scope is no conflict
    assert (
        values_conflict(
            "The bakery is open on weekdays from 7 am to 1 pm.", "The bakery is open on Thursdays from 7 am to 1 pm."
        )
        is None
    )
    assert (
        values_conflict(
            "The bakery is open on Saturdays from 7 am to 1 pm.", "The bakery is open on Thursdays from 7 am to 1 pm."
        )
        is None
    )
    # near misses: the hours changed under the same scope, and a weekday that is the value itself
    assert (
        values_conflict(
            "The bakery is open on weekdays from 7 am to 1 pm.", "The bakery is open on weekdays from 7 am to 3 pm."
        )
        is not None
    )
    assert patterns("The skip is emptied on Thursdays.", "The skip is emptied on Fridays.") != ()


def test_a_technical_noun_phrase_after_a_preposition_is_a_substituted_value() -> None:
    # one sentence of three differs in the agent after "with": a substituted entity, whatever its determiner
    before = "The frame was stripped. The joints were glued with hide glue. It was then waxed."
    after = "The frame was stripped. The joints were glued with polyurethane resin. It was then waxed."
    assert patterns(before, after) == (ENTITY_SUBSTITUTED,)
    assert patterns("Stains are lifted with acetone.", "Stains are lifted with isopropyl alcohol.") == (
        ENTITY_SUBSTITUTED,
    )
    # near misses: phrases of common words, and one word qualified on one side (a shared word), are left
    assert values_conflict("Rinse the jars in hot water.", "Rinse the jars in cold water.") is None
    assert values_conflict("Stains are lifted with acetone.", "Stains are lifted with warm acetone.") is None
    # and an adjective after a copula is a property, no named agent (a negating prefix keeps its own reading)
    assert values_conflict("The varnish is flammable.", "The varnish is inflammable.") is None


def test_a_number_after_a_lower_case_noun_before_the_verb_is_a_designator() -> None:
    # "settling tank 1" and "settling tank 2" are two tanks: each states its own volume
    assert (
        values_conflict(
            "Settling tank 1 has a working volume of 40 cubic metres.",
            "Settling tank 2 has a working volume of 55 cubic metres.",
        )
        is None
    )
    assert (
        values_conflict(
            "The spare pump 3 is rated at 20 litres per minute.", "The spare pump 4 is rated at 35 litres per minute."
        )
        is None
    )
    # near misses: the same tank with another volume, and an age after a participle, stay changed values
    assert patterns(
        "Settling tank 1 has a working volume of 40 cubic metres.",
        "Settling tank 1 has a working volume of 55 cubic metres.",
    ) == (NUMBER_CHANGED,)
    assert patterns("Children aged 4 are admitted free.", "Children aged 6 are admitted free.") == (NUMBER_CHANGED,)
    # left to the other rules: a numbered noun inside a prepositional phrase keeps its number a value
    assert patterns("The drain valve of tank 1 is 40 mm wide.", "The drain valve of tank 2 is 50 mm wide.") == (
        NUMBER_CHANGED,
    )
