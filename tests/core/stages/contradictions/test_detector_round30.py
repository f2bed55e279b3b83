"""The detector's thirtieth round (docs/decisions/detector-round30.md): one test per error class fixed, each with the
near miss the change must keep. Hand-written sentences; none comes from a labelled corpus."""

from __future__ import annotations

from crp_core.stages.contradictions.clauses import analyse, sentence_days
from crp_core.stages.contradictions.lexicon import ENTITY
from crp_core.stages.contradictions.modifiers import narrowed_nouns
from crp_core.stages.contradictions.values import NUMBER_CHANGED, values_conflict
from tests.support.detector_cases import patterns


def _numbers(text: str) -> list[tuple[str, float]]:
    return [(t.text, t.qty.base) for t in analyse(text).tokens if t.qty is not None]


def test_half_a_dozen_is_six() -> None:
    assert _numbers("Each box holds half a dozen eggs.") == [("half a dozen", 6.0)]
    assert _numbers("Half a dozen eggs fit in a box.") == [("Half a dozen", 6.0)]
    assert values_conflict("Each egg box holds half a dozen eggs.", "Each egg box holds six eggs.") is None
    assert patterns("Each egg box holds half a dozen eggs.", "Each egg box holds ten eggs.", learned=False) == (
        NUMBER_CHANGED,
    )
    # near misses: a dozen is still twelve, half an hour still thirty minutes
    assert _numbers("Each box holds a dozen eggs.") == [("dozen", 12.0)]
    assert _numbers("It takes half an hour.") == [("hour", 0.5)]


def test_a_capitalised_verb_before_its_object_is_no_name() -> None:
    for text, word in [("Steep the heads for 48 hours.", "Steep"), ("Drizzle a little syrup on top.", "Drizzle")]:
        assert [t.kind for t in analyse(text).tokens if t.text == word] != [ENTITY], word
    # near miss: a name opening a sentence before its verb stays a (weak) name
    assert [(t.kind, t.sub) for t in analyse("Pike holds the keys.").tokens if t.text == "Pike"] == [(ENTITY, "weak")]


def test_a_compound_modifier_names_the_same_kind() -> None:
    a, b = analyse("Flower heads steep for a day."), analyse("Elderflower heads steep for a day.")
    assert not narrowed_nouns(a, b)
    # near miss: two modifiers of which neither closes the other still narrow the noun to two kinds
    assert narrowed_nouns(analyse("Rose heads steep for a day."), b)


def test_a_day_s_exception_is_another_attribute() -> None:
    general = "Donkey rides run between 10 am and 5 pm."
    assert values_conflict(general, "On Sundays, rides run from 11 am to 4 pm.") is None
    assert values_conflict("The office opens at 9am.", "On Mondays, the office opens at 10am.") is None
    # near misses: the same days on both sides compare their values; a named weekend or a possessive's weekday
    assert patterns("Rides run from 10 am on Sundays.", "On Sundays, rides run from 11 am.", learned=False) == (
        NUMBER_CHANGED,
    )
    assert sentence_days("Over the Easter weekend, six knights compete.") == (frozenset(),)
    assert sentence_days("Riverside Bingo's Saturday jackpot pays 52 numbers.") == (frozenset({"6"}),)
    assert patterns(
        "Four knights compete at the tournament over the Easter weekend.",
        "Over the Easter weekend, six knights compete at the tournament.",
        learned=False,
    ) == (NUMBER_CHANGED,)
