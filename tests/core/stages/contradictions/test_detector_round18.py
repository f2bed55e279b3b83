"""The detector's eighteenth round (docs/decisions/detector-round18.md): one test per error class fixed, each with the
near miss the change must keep. Hand-written sentences; none comes from a labelled corpus."""

from __future__ import annotations

from crp_core.stages.contradictions.clauses import tokenize
from crp_core.stages.contradictions.lexicon import DATE, ENTITY, POLAR, WORD, stem
from crp_core.stages.contradictions.values import (
    DATE_SHIFTED,
    ENTITY_SUBSTITUTED,
    NEGATION_FLIP,
    NUMBER_CHANGED,
    learned_candidates,
    values_conflict,
)
from tests.support.detector_cases import patterns


def _kind(text: str, word: str) -> str:
    (tok,) = [t for t in tokenize(text) if t.text.startswith(word)]
    return tok.kind


def test_a_quarter_shaped_code_after_the_noun_it_names_is_a_name_not_a_part_of_a_year() -> None:
    # "berth H2": which berth, so two berths with two limits are two subjects, no changed value
    assert _kind("Barges moored at berth H2 are charged by the hour.", "H2") == ENTITY
    a = "Mooring at berth H1 is restricted to 3 nights."
    b = "Mooring at berth H4 is restricted to 5 nights."
    assert values_conflict(a, b, False) is None
    assert values_conflict(a, b) is None
    # near misses: after a preposition or an article, or before a year, the code is still a half or a quarter
    assert _kind("The audit closes in H2.", "H2") == DATE
    assert _kind("The Q3 figures were late.", "Q3") == DATE
    assert _kind("Berth Q1 2027 bookings open soon.", "Q1") == DATE
    assert patterns("The audit closes in H1.", "The audit closes in H2.") == (DATE_SHIFTED,)


def test_a_polarity_word_the_other_text_lacks_is_another_value_of_another_subject() -> None:
    # "free" / "£30" after two named subjects: two places, each with its own charge, no changed name
    a = "Parking at the Harbour Road site is free."
    b = "Parking at the Mill Lane site costs £30."
    assert values_conflict(a, b, False) is None
    # near miss: another name with the same polarity word says nothing more of its own, and stays a changed name
    assert patterns(a, "Parking at the Mill Lane site is free.") == (ENTITY_SUBSTITUTED,)


def test_a_measure_s_adjective_beside_the_measure_s_noun_names_which_thing_is_measured() -> None:
    # "the length ... of the long bay" / "... of the short bay": two bays, each with its own length
    a = "Shelf length in the long bay is 240 cm."
    b = "Shelf length in the short bay is 180 cm."
    assert values_conflict(a, b, False) is None
    assert values_conflict(a, b) is None
    # near misses: the adjective alone states the measure, and one bay on both sides keeps its changed length
    assert patterns("The shelf is 240 cm long.", "The shelf length is 180 cm.") == (NUMBER_CHANGED,)
    assert patterns(a, "Shelf length in the long bay is 180 cm.") == (NUMBER_CHANGED,)


def test_falls_on_says_when_something_happens_and_is_no_decrease() -> None:
    a = "The harvest supper falls on 3 October this year."
    b = "This year the harvest supper is on the 3rd of October."
    assert _kind(a, "falls") == WORD
    # no polarity word on either side: the learned comparison weighs no flip between the two
    assert not [c for c in learned_candidates(a, b) if NEGATION_FLIP in c.patterns]
    # near miss: a fall by or to an amount is still the decrease of its group
    assert _kind("Attendance falls by 10% in winter.", "falls") == POLAR
    assert patterns("Attendance rises in winter.", "Attendance falls in winter.") == (NEGATION_FLIP,)


def test_a_contracted_negation_before_exceed_states_a_cap_as_must_not_exceed_does() -> None:
    a = "Service charges are capped at 3% above the base rate."
    b = "Service charges cannot exceed the base rate plus 3%."
    assert values_conflict(a, b, False) is None
    assert values_conflict(a, "Service charges must not exceed the base rate plus 3%.", False) is None
    # near miss: "cannot" before another verb is still a negation
    assert patterns("Service charges can be refunded.", "Service charges cannot be refunded.") == (NEGATION_FLIP,)


def test_a_changed_time_of_day_is_one_pattern_a_changed_number() -> None:
    # the writing guide's DATE_SHIFTED is a date or a year; a time of day is a number of the clock
    assert patterns("The library opens at 9:30 am.", "The library opens at 10:00.") == (NUMBER_CHANGED,)
    assert patterns("Gate 1 opens at 18:00 and Gate 2 at 18:30.", "Gate 1 opens at 18:30 and Gate 2 at 18:00.") == (
        NUMBER_CHANGED,
    )
    # the learned comparison still weighs a time of day as the point in time it is
    reworded = [c for c in learned_candidates("Doors open at 7 pm.", "Guests are admitted from 19:30.") if c.patterns]
    assert [c.patterns for c in reworded] == [(NUMBER_CHANGED,)]
    assert reworded[0].features["pat_DATE_SHIFTED"] == 1.0
    # near misses: a changed date is still a shifted date, and one time in two forms is no change
    assert patterns("The library reopens on 3 May.", "The library reopens on 5 May.") == (DATE_SHIFTED,)
    assert patterns("The library opens at 9:30 am.", "The library opens at 09:30.") is None


def test_the_past_form_of_a_verb_in_ee_shares_the_verb_s_stem() -> None:
    # "guaranteed" / "guarantee": one predicate, so the denied one turns the stated one round
    assert stem("guaranteed") == stem("guarantee") == "guarante"
    assert stem("agreed") == stem("agree")
    a = "Deliveries on bank holidays are guaranteed."
    assert patterns(a, "We do not guarantee deliveries on bank holidays.") == (NEGATION_FLIP,)
    # near misses: the predicate stated on both sides is no flip; a past form of another verb keeps its stem
    assert values_conflict(a, "We guarantee deliveries on bank holidays.") is None
    assert stem("needed") == "need"


def test_a_prefixed_word_opening_its_sentence_before_a_noun_names_a_kind_of_it() -> None:
    # "Unguided tours" / "Evening tours ... are guided": two kinds of tour, each with its own modifier
    a = "Evening tours of the mill are guided by a volunteer."
    b = "Unguided tours of the mill start every morning."
    assert values_conflict(a, b, False) is None
    assert values_conflict(a, b) is None
    # near miss: without a modifier of its own, the other text asserts the base of every tour, and the prefix denies it
    assert patterns("Tours of the mill are guided by a volunteer.", b) == (NEGATION_FLIP,)


def test_a_hedged_measure_in_another_unit_is_read_as_a_rounded_figure() -> None:
    # 50 ft is 15.24 m: "roughly 15 metres" rounds it, within 5 % of its value
    a = "The cable run to the shed is 50 feet."
    assert values_conflict(a, "The cable run to the shed is roughly 15 metres.", False) is None
    # near misses: unhedged, the figure is read as written; hedged, a figure far off is still another value
    assert patterns(a, "The cable run to the shed is 15 metres.") == (NUMBER_CHANGED,)
    assert patterns(a, "The cable run to the shed is roughly 12 metres.") == (NUMBER_CHANGED,)
