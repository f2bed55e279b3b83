"""The detector's twenty-ninth round (docs/decisions/detector-round29.md): one test per error class fixed, each with
the near miss the change must keep. Hand-written sentences; none comes from a labelled corpus."""

from __future__ import annotations

from crp_core.stages.contradictions.clauses import analyse
from crp_core.stages.contradictions.lexicon import ENTITY, POLAR
from crp_core.stages.contradictions.values import DATE_SHIFTED, ENTITY_SUBSTITUTED, NEGATION_FLIP, values_conflict
from tests.support.detector_cases import patterns


def _kinds(text: str, word: str) -> list[tuple[str, str, str]]:
    return [(t.kind, t.sub, t.key) for t in analyse(text).tokens if t.text == word]


def test_a_place_and_its_adjective_share_one_key() -> None:
    # the lexicon's canonical name is keyed as a name is ("wales" -> "wal"), so the adjective meets the place
    assert _kinds("The Welsh scheme.", "Welsh")[0][2] == _kinds("A scheme in Wales.", "Wales")[0][2]
    assert _kinds("The French rules.", "French")[0][2] == _kinds("The rules in France.", "France")[0][2]
    assert values_conflict("The Welsh licensing scheme costs £20.", "The licensing scheme in Wales costs £20.") is None
    # near miss: another place is still another place
    assert patterns("The Welsh licensing scheme costs £20.", "The licensing scheme in Scotland costs £20.") == (
        ENTITY_SUBSTITUTED,
    )


def test_an_instruction_s_verb_opening_a_sentence_is_no_name() -> None:
    for text, word in [
        ("Weigh the tortoise every week.", "Weigh"),
        ("Cut each ribbon to length.", "Cut"),
        ("Rinse the jars in hot water.", "Rinse"),
        ("Contact the office first.", "Contact"),
    ]:
        assert _kinds(text, word)[0][0] != ENTITY, word
    # near miss: a capitalised word that is no common word still opens a sentence as a (weak) name
    assert [k[:2] for k in _kinds("Pike holds the keys to the hall.", "Pike")] == [(ENTITY, "weak")]


def test_on_before_a_day_or_a_month_says_when() -> None:
    assert _kinds("The dance is on Saturday 3 May 2025.", "on")[0][0] != POLAR
    assert _kinds("The fair is on May 3.", "on")[0][0] != POLAR
    assert patterns("The maypole dance is on Saturday 3 May.", "The maypole dance is on Monday 5 May.") == (
        DATE_SHIFTED,
    )
    # near miss: "on" after a form of be with no day after it is still switched on
    assert _kinds("The heater is on.", "on")[0][0] == POLAR
    assert patterns("The heater is on.", "The heater is off.", learned=False) == (NEGATION_FLIP,)
