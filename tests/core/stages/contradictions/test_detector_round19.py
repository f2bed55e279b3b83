"""The detector's nineteenth round (docs/decisions/detector-round19.md): one test per error class fixed, each with the
near miss the change must keep. Hand-written sentences; none comes from a labelled corpus."""

from __future__ import annotations

from crp_core.stages.contradictions.clauses import tokenize
from crp_core.stages.contradictions.lexicon import DATE, NUMBER
from crp_core.stages.contradictions.values import (
    DATE_SHIFTED,
    ENTITY_SUBSTITUTED,
    MAGNITUDE_ALTERED,
    NEGATION_FLIP,
    NUMBER_CHANGED,
    values_conflict,
)
from tests.support.detector_cases import patterns


def _token(text: str, word: str):
    (tok,) = [t for t in tokenize(text) if t.text == word]
    return tok


def test_half_before_a_determiner_is_a_share_of_the_noun_phrase_it_opens() -> None:
    # "half the standard fare" is 50 % of it, as "half of the standard fare" is
    half = _token("Pensioners pay half the standard fare.", "half")
    assert half.kind == NUMBER and half.qty is not None and (half.qty.dim, half.qty.base) == ("pct", 50.0)
    a = "Pensioners pay half the standard fare."
    assert patterns(a, "Pensioners pay 70% of the standard fare.", learned=False) == (MAGNITUDE_ALTERED,)
    assert values_conflict(a, "Pensioners pay 50% of the standard fare.") is None
    # near misses: before a time "half" measures no share ("half the day" is a duration, "half the time" an idiom)
    assert _token("The crew rests for half the day.", "half").kind != NUMBER
    assert _token("The lift is out of service half the time.", "half").kind != NUMBER


def test_dates_that_keep_their_places_while_the_names_beside_them_cross_label_the_slots() -> None:
    # the names moved between two fixed weekdays: the change is of the names, not of the dates
    a = "Mr Byrne leads the Tuesday walk and Mrs Patel leads the Friday walk."
    b = "Mrs Patel leads the Tuesday walk and Mr Byrne leads the Friday walk."
    assert patterns(a, b, learned=False) == (ENTITY_SUBSTITUTED,)
    c = "Coach Anna runs the Tuesday class and coach Ben runs the Friday class."
    d = "Coach Ben runs the Tuesday class and coach Anna runs the Friday class."
    assert patterns(c, d, learned=False) == (ENTITY_SUBSTITUTED,)
    # near miss: the dates cross while the names keep their places, a shifted date
    e = "Anna leads the walk on Tuesday and Ben leads it on Friday."
    f = "Anna leads the walk on Friday and Ben leads it on Tuesday."
    assert patterns(e, f, learned=False) == (DATE_SHIFTED,)


def test_a_list_in_another_order_compares_its_last_and_as_written() -> None:
    # "Open and Championship" / "Intermediate and Novice": the lexer reads the two "and"s apart, the list is one
    a = "Entries are taken for Bronze, Silver, Open and Gold."
    b = "Entries are taken for Gold, Open, Silver and Bronze."
    assert values_conflict(a, b, False) is None
    assert values_conflict(a, b) is None
    # near miss: an item replaced is still a changed name
    assert patterns(a, "Entries are taken for Gold, Open, Silver and Platinum.", learned=False) == (ENTITY_SUBSTITUTED,)


def test_may_after_a_preposition_of_time_is_the_month() -> None:
    assert _token("The ferry runs from May to October.", "May").kind == DATE
    assert _token("No fires are lit until May.", "May").kind == DATE
    # near miss: the modal verb opening a sentence stays a word
    assert _token("May visitors bring dogs?", "May").kind != DATE


def test_a_date_inside_a_span_the_other_text_states_is_a_part_of_the_span() -> None:
    # one month of the season, no season moved
    a = "The ferry runs from May to October."
    assert values_conflict(a, "The ferry runs in August.") is None
    # a span that wraps the year's end, "November to February", holds January
    assert values_conflict("Gritting runs from November to February.", "Gritting runs in January.") is None
    # near misses: a date outside the span, another span, a date that ends the period
    assert patterns(a, "The ferry runs in December.", learned=False) == (DATE_SHIFTED,)
    assert patterns(a, "The ferry runs from June to October.", learned=False) == (DATE_SHIFTED,)
    assert patterns(a, "The ferry service ends in August.") == (DATE_SHIFTED,)


def test_permission_and_obligation_words_in_other_forms_join_their_polarity_groups() -> None:
    # "off-limits" denies what "allowed" grants; "unrestricted" grants what "may not" denies
    a = "Walkers are allowed on the quarry path after dusk."
    assert patterns(a, "After dusk the quarry path is off-limits to walkers.", learned=False) == (NEGATION_FLIP,)
    b = "Fishing from the north jetty is unrestricted on weekdays."
    assert patterns(b, "Fishing from the north jetty is disallowed on weekdays.", learned=False) == (NEGATION_FLIP,)
    # "non-negotiable" obliges as "mandatory" does, against "optional"
    c = "Helmets are non-negotiable on the high ropes course."
    assert patterns(c, "Helmets are optional on the high ropes course.", learned=False) == (NEGATION_FLIP,)
    # near misses: the same permission in both forms is no flip
    assert values_conflict("Dogs are prohibited in the orchard.", "The orchard is off-limits to dogs.") is None
    assert values_conflict(c, "Helmets are mandatory on the high ropes course.") is None


def test_a_qualifier_one_text_adds_to_all_the_other_says_scopes_its_value() -> None:
    # the second text says all the first says plus "in the Paris office": the value of a narrower scope
    a = "Invoices are kept for 6 years."
    b = "Invoices are kept for 10 years in the Paris office."
    assert values_conflict(a, b) is None
    # near misses: the same sentences without the qualifier, or in other words, keep their changed number
    assert patterns(a, "Invoices are kept for 10 years.") == (NUMBER_CHANGED,)
    assert patterns(a, "Invoices are retained for 10 years.") == (NUMBER_CHANGED,)


def test_the_dates_of_the_two_ends_of_one_period_are_two_attributes() -> None:
    # the opening and the closing of one registration: two dates of two ends, no date moved
    a = "Booking for the summer regatta opens on 2 March."
    b = "Booking for the summer regatta closes on 14 April."
    assert values_conflict(a, b) is None
    # the rules' pairing keeps the two ends apart too
    c = "The bird survey starts on Monday, 6 May 2024."
    assert values_conflict(c, "The bird survey is expected to finish by Friday, 17 May 2024.", False) is None
    # near misses: one end on both sides keeps its shifted date, and "closes from" opens a closure
    assert patterns(b, "Booking for the summer regatta closes on 21 April.") == (DATE_SHIFTED,)
    c = "The east car park closes for resurfacing from 3 June 2026."
    d = "Resurfacing works will shut the east car park starting 3 June 2027."
    assert patterns(c, d) == (DATE_SHIFTED,)


def test_a_percentage_taken_off_a_whole_and_the_share_left_are_one_value() -> None:
    # 35% less than the adult fare is 65% of it
    a = "Seniors pay 35% less than the adult fare."
    assert values_conflict(a, "Seniors pay 65% of the adult fare.") is None
    assert (
        values_conflict("The load is kept 20% below the rated limit.", "The load is kept at 80% of the rated limit.")
        is None
    )
    # near miss: the complement of another figure is still another magnitude
    assert patterns(a, "Seniors pay 50% of the adult fare.", learned=False) == (MAGNITUDE_ALTERED,)


def test_two_texts_that_split_one_quantity_by_its_bounds_speak_of_two_subjects() -> None:
    # "up to 2 kg" / "heavier than 2 kg": light and heavy parcels, each with its own price
    assert _token("Parcels heavier than 2 kg cost £6 to send.", "2 kg").qty.bound == 1
    a = "Parcels up to 2 kg cost £3.50 to send."
    assert values_conflict(a, "Parcels heavier than 2 kg cost £6 to send.") is None
    # near misses: one side of the split on both texts keeps its changed price, and a bound alone reversed is a flip
    assert patterns(a, "Parcels up to 2 kg cost £6 to send.", learned=False) == (NUMBER_CHANGED,)
    assert patterns("Riders must be at least 16.", "Riders must be at most 16.", learned=False) == (NEGATION_FLIP,)


def test_n_times_before_a_possessive_determiner_is_a_multiplier() -> None:
    # "five times its own weight" multiplies the weight, as "3x its own weight" does
    a = "The hoist can lift five times its own weight."
    assert _token(a, "five times").qty.dim == "x"
    assert patterns(a, "The hoist can lift 3x its own weight.", learned=False) == (MAGNITUDE_ALTERED,)
    assert patterns(a, "The hoist can lift twice its own weight.", learned=False) == (MAGNITUDE_ALTERED,)
    assert values_conflict(a, "The hoist can lift 5x its own weight.") is None
    # near miss: "N times" with no thing multiplied after it is a count
    assert _token("Retry the request three times.", "three times").qty.dim == "times"


def test_the_stone_is_a_unit_of_mass() -> None:
    # 14 lb: "16 stone" is 101.6 kg, another system's figure read within 1.5 %
    assert _token("The bench is rated to 16 stone.", "16 stone").qty.dim == "mass"
    a = "The bench is rated to 16 stone."
    assert values_conflict(a, "The bench is rated to 102 kg.") is None
    # near miss: a load in kilograms far from it is another load
    assert patterns(a, "The bench is rated to 150 kg.", learned=False) == (NUMBER_CHANGED,)


def test_opposed_qualifiers_separate_a_flip_too() -> None:
    # juniors and seniors: the permissions of two kinds of one thing, no flip
    assert values_conflict("Juniors may not use the main pool.", "Senior members may use the main pool.") is None
    a = "Sparring is not permitted for junior belts at the grading."
    assert values_conflict(a, "Sparring is permitted for senior belts at the grading.") is None
    # near miss: one kind on both sides keeps its flip
    assert patterns(a, "Sparring is permitted for junior belts at the grading.") == (NEGATION_FLIP,)


def test_two_kinds_named_by_modifiers_of_their_own_separate_a_flip() -> None:
    # annual and daily permits: two kinds of permit, each with its own requirement
    a = "Annual parking permits require proof of address."
    assert values_conflict(a, "Daily parking permits do not require proof of address.") is None
    # near miss: one kind on both sides keeps its flip
    assert patterns(a, "Annual parking permits do not require proof of address.") == (NEGATION_FLIP,)


def test_a_weekday_right_before_a_date_is_part_of_that_date() -> None:
    # a week later is the same weekday: read apart, "Saturday" stated the other date and the shift went unread
    a = "The village regatta takes place on Saturday 14 June 2025."
    assert _token(a, "Saturday 14 June 2025").kind == DATE
    assert patterns(a, "The village regatta is scheduled for 21 June 2025.", learned=False) == (DATE_SHIFTED,)
    # near misses: the same date with or without its weekday is one date, and another weekday is another date
    assert values_conflict(a, "The village regatta is on 14 June 2025.") is None
    assert values_conflict(a, "The village regatta is on Saturday, June 14th, 2025.") is None
