"""The detector's twentieth round (docs/decisions/detector-round20.md): one test per error class fixed, each with the
near miss the change must keep. Hand-written sentences; none comes from a labelled corpus."""

from __future__ import annotations

from crp_core.stages.contradictions.candidates import polarity_features
from crp_core.stages.contradictions.clauses import analyse, tokenize
from crp_core.stages.contradictions.lexicon import ENTITY, FUNC
from crp_core.stages.contradictions.values import (
    DATE_SHIFTED,
    ENTITY_SUBSTITUTED,
    MAGNITUDE_ALTERED,
    NEGATION_FLIP,
    NUMBER_CHANGED,
    learned_candidates,
    values_conflict,
)
from tests.support.detector_cases import patterns


def _token(text: str, word: str):
    (tok,) = [t for t in tokenize(text) if t.text == word]
    return tok


def test_opposed_qualifiers_separate_the_learned_comparisons_values() -> None:
    # adults and children: two kinds of one ticket, each with its own price; the learned comparison proposes no
    # changed price between them, as the rules already read none
    a = "Adult tickets for the harbour cruise cost £18 when booked online."
    b = "A child's ticket for the harbour cruise is £9 if you book on the website."
    assert not [c for c in learned_candidates(a, b) if NUMBER_CHANGED in c.patterns]
    assert values_conflict(a, b) is None
    # near miss: one kind on both sides keeps its changed price
    c = "Adult tickets for the harbour cruise are £24 if you book on the website."
    assert [c for c in learned_candidates(a, c) if NUMBER_CHANGED in c.patterns]


def test_more_opposed_qualifiers_name_two_kinds_of_one_thing() -> None:
    # freight and passenger trains, the summer and the winter timetable, the last and the next service
    a = "Freight trains on the Kelso branch are limited to 35 mph."
    assert values_conflict(a, "Passenger trains on the Kelso branch may run at 55 mph.") is None
    c = "The summer timetable of the island ferry starts on 28 March."
    assert values_conflict(c, "The winter timetable of the island ferry starts on 24 October.") is None
    e = "The boiler's last annual service was carried out on 4 March 2025."
    assert values_conflict(e, "The boiler's next annual service is due on 4 March 2026.") is None
    # the compass points name two parts of one place
    g = "Bins in the north ward are collected every Tuesday at 7 am."
    assert values_conflict(g, "Bins in the south ward are collected every Tuesday at 9 am.") is None
    # near misses: one kind on both sides keeps its changed value
    assert patterns(a, "Freight trains on the Kelso branch are limited to 55 mph.") == (NUMBER_CHANGED,)
    assert patterns(c, "The summer timetable of the island ferry starts on 4 April.") == (DATE_SHIFTED,)
    assert patterns(g, "Bins in the north ward are collected every Tuesday at 9 am.") == (NUMBER_CHANGED,)


def test_a_percentage_off_or_a_discount_is_the_part_taken_off_the_whole() -> None:
    # 25% off the fare is three quarters of it, one value in two forms
    a = "Students get 25% off the standard day fare."
    assert values_conflict(a, "Students pay three quarters of the standard day fare.") is None
    assert values_conflict("Members receive a 40% discount on court hire.", "Members pay 60% of court hire.") is None
    # near miss: the share left of another figure is another magnitude
    assert patterns(a, "Students pay half the standard day fare.", learned=False) == (MAGNITUDE_ALTERED,)


def test_a_capital_i_right_after_a_name_is_a_roman_numeral() -> None:
    # "Phase I" names a phase as "Phase II" does: two phases, each with its own figure
    a = "Volunteers in Phase I trials receive £40 per visit."
    assert _token(a, "Phase I").kind == ENTITY
    assert values_conflict(a, "Volunteers in Phase II trials receive £65 per visit.", False) is None
    assert (
        values_conflict("Grade I buildings make up 2% of the register.", "Grade II buildings make up 92% of it.")
        is None
    )
    # near misses: one phase on both sides keeps its changed fee; the pronoun keeps its reading
    assert patterns(a, "Volunteers in Phase I trials receive £65 per visit.", learned=False) == (NUMBER_CHANGED,)
    assert _token("On Monday I will call the clinic.", "I").kind == FUNC
    assert _token("Yesterday I called the clinic.", "I").kind == FUNC


def test_a_side_of_a_bound_split_with_a_value_of_its_own_is_another_subject() -> None:
    # small boats pay a share less than the standard fee, large boats the standard fee: two sides of one split
    a = "Mooring fees for boats under 8 metres are 40% lower than the standard rate."
    b = "Boats over 8 metres pay the standard mooring rate."
    assert values_conflict(a, b, False) is None
    # near misses: the reversed bound alone is still a flip, and so is a bound alone reversed
    c = "Boats under 8 metres pay the standard mooring rate."
    assert patterns(c, b, learned=False) == (NEGATION_FLIP,)
    assert patterns("Riders must be at least 16.", "Riders must be at most 16.", learned=False) == (NEGATION_FLIP,)


def test_a_negating_prefix_against_its_asserted_base_is_an_opposed_polarity() -> None:
    # "unsafe" denies the "safe" the other text asserts: the two state one word with opposite signs
    a = "Vials that have been frozen are still safe to use and can be given as normal."
    b = "Vials that have been frozen are unsafe to use and must be thrown away."
    assert polarity_features(analyse(a), analyse(b))["polar_opposed"] == 1.0
    assert patterns(a, b) == (NEGATION_FLIP,)
    # near miss: against a text that negates too ("not safe"), the prefix is no assertion against a bare base
    c = "Vials that have been frozen are not safe to use and must be thrown away."
    assert polarity_features(analyse(c), analyse(b))["polar_opposed"] == 0.0


def test_a_negation_against_a_polarity_word_the_other_text_asserts_is_an_opposed_polarity() -> None:
    # "not part of" denies the "included" the other text asserts of the same towels
    a = "Towels are included in the day pass."
    b = "Towels are not part of the day pass and cost extra at reception."
    assert polarity_features(analyse(a), analyse(b))["polar_opposed"] == 1.0
    assert patterns(a, b) == (NEGATION_FLIP,)
    # near miss: two denials assert nothing against each other
    c = "Towels are not included in the day pass."
    assert polarity_features(analyse(c), analyse(b))["polar_opposed"] == 0.0
    assert values_conflict(c, b) is None


def test_a_time_of_day_with_minutes_glued_to_am_or_pm_keeps_its_minutes() -> None:
    # "9:30am" is one time of day, and the digits after the point of "4.30pm" are minutes
    assert _token("Orders close at 9:30am.", "9:30am").qty.base == 570.0
    assert _token("The gates shut at 4.30pm.", "4.30pm").qty.base == 990.0
    a = "Packed lunches must be ordered by 9:30am on the day."
    assert patterns(a, "The deadline for packed lunch orders is 10am on the day.") == (NUMBER_CHANGED,)
    assert patterns("The gates shut at 4.30pm.", "The gates shut at 4pm.", learned=False) == (NUMBER_CHANGED,)
    # near misses: the same time in other forms is one value, and a period after "pm" still ends the sentence
    assert values_conflict(a, "The deadline for packed lunch orders is 9.30 am on the day.") is None
    assert values_conflict("The gates shut at 4.30pm.", "The gates shut at 16:30.") is None
    assert [t.text for t in tokenize("Orders close at 9:30pm. Late orders wait.")][3:5] == ["9:30pm", "."]


def test_the_cubic_centimetre_is_a_unit_of_volume() -> None:
    # an engine's "125 cc" is 125 ml, so 0.125 litres restates it and 0.25 litres changes it
    assert _token("Learner bikes are limited to 125 cc.", "125 cc").qty.dim == "volume"
    a = "Learner bikes are limited to 125 cc."
    assert values_conflict(a, "Learner bikes may have engines of up to 0.125 litres.") is None
    # near miss: a capacity far from it is another capacity
    assert patterns(a, "Learner bikes are limited to 0.25 litres.", learned=False) == (NUMBER_CHANGED,)


def test_immunisation_is_no_prefixed_word() -> None:
    # "immunisation" begins like "im-" before "m" but negates nothing: the team it names was changed
    assert _token("Send the forms to the immunisation team.", "immunisation").sub != "negpfx"
    a = "Send the signed consent forms to the immunisation team by Friday."
    assert patterns(a, "Send the signed consent forms to the school office team by Friday.") == (ENTITY_SUBSTITUTED,)
    # near miss: a word with a negating prefix keeps it ("impassable" is "passable" denied)
    assert _token("The ford is impassable after rain.", "impassable").sub == "negpfx"


def test_two_capitalised_names_joined_by_of_or_for_are_one_name() -> None:
    # "Joint Council for Qualifications" is one name, whose parts the acronym "JCQ" spells
    a = "Entries are checked by the Joint Council for Qualifications."
    assert _token(a, "Joint Council for Qualifications").kind == ENTITY
    assert values_conflict(a, "Entries are checked by the JCQ.", False) is None
    # near misses: another name after the same link is a changed name, and a lower-case word after the link ends it
    b = "Entries are checked by the Joint Council for Examinations."
    assert patterns(a, b, learned=False) == (ENTITY_SUBSTITUTED,)
    assert _token("Rooms at the Royal Hotel for guests cost £90.", "Royal Hotel").kind == ENTITY
