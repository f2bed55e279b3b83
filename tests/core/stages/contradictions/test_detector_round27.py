"""The detector's twenty-seventh round (docs/decisions/detector-round27.md): one test per error class fixed, each with
the near miss the change must keep. Hand-written sentences; none comes from a labelled corpus."""

from __future__ import annotations

from crp_core.stages.contradictions.clauses import analyse
from crp_core.stages.contradictions.lexicon import ENTITY, WORD
from crp_core.stages.contradictions.subjects import compound_kinds
from crp_core.stages.contradictions.values import (
    ENTITY_SUBSTITUTED,
    MAGNITUDE_ALTERED,
    NEGATION_FLIP,
    NUMBER_CHANGED,
    values_conflict,
)
from tests.support.detector_cases import patterns


def _units(text: str) -> list[tuple[str, str, str, tuple[tuple[float, float], ...]]]:
    return [(t.text, t.qty.dim, t.qty.unit, t.qty.readings) for t in analyse(text).tokens if t.qty is not None]


def test_a_time_of_day_in_words_is_read_in_both_halves_of_the_day() -> None:
    assert _units("Breakfast is at half past nine.") == [
        ("half past nine", "clock", "clock12", ((570.0, 570.0), (1290.0, 1290.0)))
    ]
    assert _units("Doors open at quarter to ten.")[0][3][0] == (585.0, 585.0)
    assert _units("Come at quarter past 8.")[0][3][0] == (495.0, 495.0)
    # either half of the day states it; another time is a changed number
    assert values_conflict("Breakfast is at 09:30.", "Breakfast is at half past nine.") is None
    assert values_conflict("Dinner is at 21:30.", "Dinner is at half past nine.") is None
    assert patterns("Breakfast is at 08:30.", "Breakfast is at half past nine.", learned=False) == (NUMBER_CHANGED,)
    # near misses: no hour after the words, or no hour of a clock, is no time of day
    assert _units("Half past the hour the bell rings.") == []
    assert _units("It is half past 13.") == [("13", "", "", ((13.0, 13.0),))]


def test_joules_and_foot_pounds_are_energies() -> None:
    assert _units("It delivers 500 joules.")[0][:3] == ("500 joules", "energy", "J")
    a = "Bullets must deliver at least 1,700 foot-pounds."
    assert values_conflict(a, "Bullets must deliver at least 2,305 joules.") is None
    assert patterns(a, "Bullets must deliver at least 1,700 joules.", learned=False) == (NUMBER_CHANGED,)
    # near miss: an upper-case J stays a letter (a bay, a grade), no unit
    assert _units("Stand at bay 12 J.")[0][2] == ""


def test_an_acronym_glued_to_a_word_names_the_acronym() -> None:
    toks = [(t.text, t.kind) for t in analyse("Only DEFRA-exempt stoves may burn wood.").tokens]
    assert ("DEFRA", ENTITY) in toks and ("exempt", WORD) in toks
    assert values_conflict("Only DEFRA-exempt stoves may burn wood.", "Only stoves DEFRA lists may burn wood.") is None
    assert values_conflict("The centre is NHS-funded.", "The centre is funded by the NHS.") is None
    # near misses: another body is a substitution; the flip around the glued word stays
    assert patterns("Fitters must be OFTEC-registered.", "Fitters must be HETAS-registered.") == (ENTITY_SUBSTITUTED,)
    a, b = "FAA-approved units are permitted.", "Units are not permitted, even if FAA-approved."
    assert patterns(a, b, learned=False) == (NEGATION_FLIP,)


def test_two_first_parts_of_one_hyphenated_word_name_two_kinds() -> None:
    a, b = "A single-cylinder softener costs £85 to service.", "A twin-cylinder softener costs £110 to service."
    assert compound_kinds(analyse(a), analyse(b))
    assert values_conflict(a, b) is None
    c, d = "Kiln-dried logs hold under 20% moisture.", "Air-dried logs hold under 25% moisture."
    assert values_conflict(c, d) is None
    # near misses: the same kind with another price; numbers in words state a value; a symbol of two letters
    assert patterns(a, "A single-cylinder softener costs £110 to service.", learned=False) == (NUMBER_CHANGED,)
    assert patterns("The lesson is a one-hour session.", "The lesson is a two-hour session.") == (NUMBER_CHANGED,)
    c, d = "A lead-equivalent apron stops 95% of scatter.", "A Pb-equivalent apron stops 80% of scatter."
    assert not compound_kinds(analyse(c), analyse(d))
    assert patterns(c, d, learned=False) == (MAGNITUDE_ALTERED,)
