"""The detector's rules for classes seen across domains (docs/decisions/detector.md): one hand-written
case per rule with the near miss it must not flag. None of these sentences comes from a labelled corpus."""

from __future__ import annotations

import pytest

from crp_core.stages.contradictions.clauses import tokenize
from crp_core.stages.contradictions.lexicon import DATE, NUMBER
from crp_core.stages.contradictions.values import (
    DATE_SHIFTED,
    ENTITY_SUBSTITUTED,
    NUMBER_CHANGED,
)
from tests.support.detector_cases import patterns


# ---- years before 1900 after a word that introduces a date --------------------------------------------
@pytest.mark.parametrize(
    "text, kind",
    [
        ("The abbey was founded in 1132.", DATE),
        ("The guild has met since 1571.", DATE),
        ("The charter was signed on 3 June 1688.", DATE),
        ("The legacy service listens on port 1433.", NUMBER),
        ("The batch holds 1200 records.", NUMBER),
    ],
)
def test_old_year_needs_a_date_word(text: str, kind: str) -> None:
    four_digits = [t for t in tokenize(text) if any(c.isdigit() for c in t.text) and len(t.text) >= 4]
    assert four_digits[-1].kind == kind


@pytest.mark.parametrize(
    "a, b, expected",
    [
        ("The abbey was founded in 1132.", "The abbey was founded in 1138.", (DATE_SHIFTED,)),
        ("The lighthouse was first lit in 1791.", "In 1791 the lighthouse was first lit.", None),
        ("The batch holds 1200 records.", "The batch holds 1300 records.", (NUMBER_CHANGED,)),
    ],
)
def test_old_year_pairs(a: str, b: str, expected: tuple[str, ...] | None) -> None:
    assert patterns(a, b) == expected


# ---- a duration written in two units is one quantity --------------------------------------------------
@pytest.mark.parametrize(
    "text, seconds",
    [
        ("The ferry crossing takes 1 hour 40 minutes.", (6000.0, 6000.0)),
        ("Claims are settled within two weeks and three days.", (1468800.0, 1468800.0)),
        ("The lease notice is one month and ten days.", (3283200.0, 3542400.0)),
    ],
)
def test_compound_duration_is_one_quantity(text: str, seconds: tuple[float, float]) -> None:
    qs = [t.qty for t in tokenize(text) if t.qty is not None]
    assert len(qs) == 1 and qs[0].readings == (seconds,)


def test_two_durations_of_one_unit_stay_two() -> None:
    assert len([t for t in tokenize("Rest 20 minutes, 10 minutes more on hot days.") if t.qty is not None]) == 2


@pytest.mark.parametrize(
    "a, b, expected",
    [
        ("The ferry crossing takes 1 hour 40 minutes.", "The ferry crossing takes 100 minutes.", None),
        ("The ferry crossing takes 1 hour 40 minutes.", "The ferry crossing takes 110 minutes.", (NUMBER_CHANGED,)),
        ("Claims are settled within two weeks and three days.", "Claims are settled within 17 days.", None),
    ],
)
def test_compound_duration_pairs(a: str, b: str, expected: tuple[str, ...] | None) -> None:
    assert patterns(a, b) == expected


# ---- a changed subject: which thing, not a changed value -------------------------------------------------
@pytest.mark.parametrize(
    "a, b, expected",
    [
        # a designator before an auxiliary or a passive: two things share (or not) one property
        (
            "Tenants of Block 2 may keep a bicycle on the balcony.",
            "Tenants of Block 6 may keep a bicycle on the balcony.",
            None,
        ),
        (
            "Parcels for Zone 3 are sorted at the north depot.",
            "Parcels for Zone 8 are sorted at the north depot.",
            None,
        ),
        ("Pupils in Form 5 may bring phones.", "Pupils in Form 2 may not bring phones.", None),
        # a name or designator that opens the sentence, and another value that differs after it
        ("Canoes on Lake Orta must be back by 18:00.", "Canoes on Lake Maggiore must be back by 19:00.", None),
        ("Bay 4 reopens in March 2027.", "Bay 9 reopens in May 2027.", None),
        (
            "In Portugal, the fee is paid at the Loja do Cidadao.",
            "In Spain, the fee is paid at the Agencia Tributaria.",
            None,
        ),
        # the same subject: the value changed
        (
            "Parcels for Zone 3 are sorted at the north depot.",
            "Parcels for Zone 3 are sorted at the south depot.",
            (ENTITY_SUBSTITUTED,),
        ),
        ("Bay 4 reopens in March 2027.", "Bay 4 reopens in May 2027.", (DATE_SHIFTED,)),
        ("The archive of Hall 2 holds 4000 maps.", "The archive of Hall 2 holds 5000 maps.", (NUMBER_CHANGED,)),
        # after the verb a name is the value; "only" makes the subject the asserted value
        ("The spare key is kept in Locker 12.", "The spare key is kept in Locker 15.", (NUMBER_CHANGED,)),
        (
            "Only parcels for Zone 3 are sorted at the north depot.",
            "Only parcels for Zone 5 are sorted at the north depot.",
            (NUMBER_CHANGED,),
        ),
    ],
)
def test_changed_subject(a: str, b: str, expected: tuple[str, ...] | None) -> None:
    assert patterns(a, b) == expected


# ---- a passive after a modal is the predicate ------------------------------------------------------------
@pytest.mark.parametrize(
    "a, b, expected",
    [
        (
            "A lost passport must be reported to the consulate within 24 hours.",
            "Within 48 hours, a lost passport has to be notified to the consulate.",
            (NUMBER_CHANGED,),
        ),
        (
            "A lost passport must be reported to the consulate within 24 hours.",
            "Within a day, a lost passport has to be notified to the consulate.",
            None,
        ),
    ],
)
def test_passive_after_modal_is_predicate(a: str, b: str, expected: tuple[str, ...] | None) -> None:
    assert patterns(a, b) == expected


# ---- a lone capital letter inside a sentence is a symbol or designator -----------------------------------
@pytest.mark.parametrize(
    "a, b, expected",
    [
        (
            "Iron's symbol is Fe and tin's is Sn.",
            "Iron's symbol is Sn and tin's is Fe.",
            (ENTITY_SUBSTITUTED,),
        ),
        (
            "The vitamin made in the skin is vitamin D.",
            "The vitamin made in the skin is vitamin K.",
            (ENTITY_SUBSTITUTED,),
        ),
        ("Hydrogen's symbol is H and oxygen's is O.", "Oxygen's symbol is O and hydrogen's is H.", None),
        ("A fire door needs a closer.", "A fire door needs a closer and a seal.", None),
    ],
)
def test_single_capital_letter_is_a_name(a: str, b: str, expected: tuple[str, ...] | None) -> None:
    assert patterns(a, b) == expected
