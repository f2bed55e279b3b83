"""The detector's thirty-second round (docs/decisions/detector-round32.md): one test per error class fixed, each with
the near miss the change must keep. Hand-written sentences; none comes from a labelled corpus."""

from __future__ import annotations

import pytest

from crp_core.stages.contradictions.clauses import analyse
from crp_core.stages.contradictions.values import (
    DATE_SHIFTED,
    ENTITY_SUBSTITUTED,
    NUMBER_CHANGED,
    values_conflict,
)
from tests.support.detector_cases import patterns


def _percent(text: str, word: str) -> float | None:
    tok = next(t for t in analyse(text).tokens if t.text == word)
    return tok.qty.base * tok.qty.scale if tok.qty is not None and tok.qty.dim == "pct" else None


@pytest.mark.parametrize(
    ("text", "word", "percent"),
    [
        ("Members get one-third off every course.", "one-third", 100 / 3),
        ("Members get one-quarter off.", "one-quarter", 25.0),
        ("Students pay three-quarters less.", "three-quarters", 75.0),
        ("Season tickets cost two-thirds more.", "two-thirds", 200 / 3),
    ],
)
def test_a_hyphenated_fraction_before_off_is_a_share(text: str, word: str, percent: float) -> None:
    assert _percent(text, word) == pytest.approx(percent)


def test_a_hyphenated_fraction_elsewhere_keeps_its_reading() -> None:
    # no difference word after it: the fraction is no share of a price ("one-third" of nothing named)
    assert _percent("Fill the tank one-third full.", "one-third") is None
    # a quarter off and 25% off are one discount; a third off is another
    assert patterns("Members get 25% off.", "Members get one-quarter off.", learned=False) is None
    assert values_conflict("Members get one-third off.", "Members get one-quarter off.", learned=False) is not None


def test_a_name_and_the_acronym_of_its_words_are_one_name() -> None:
    a = "The hot sauce is rated at 2 million Scoville heat units."
    assert patterns(a, "The hot sauce measures 2,000,000 SHU.", learned=False) is None
    assert patterns(a, "The hot sauce measures 2,000,000 SHU.") is None
    # near miss: an acronym of other words is another name
    assert patterns(
        "Samples are checked by the Food Standards Agency.", "Samples are checked by the FDA.", learned=False
    ) == (ENTITY_SUBSTITUTED,)


def test_one_date_bounded_from_both_sides_is_two_tiers() -> None:
    early = "Tickets booked before 1 March 2026 cost £12."
    assert patterns(early, "Tickets booked on or after 1 March 2026 cost £15.", learned=False) is None
    assert patterns(early, "Tickets booked after 1 March 2026 cost £15.", learned=False) is None
    assert patterns("Entries sent prior to 5 May 2026 pay £8.", "Entries sent since 5 May 2026 pay £10.") is None
    # near misses: the same side of one date, or another date, is one tier that changed
    assert patterns(early, "Tickets booked before 1 March 2026 cost £15.", learned=False) == (NUMBER_CHANGED,)
    found = patterns(early, "Tickets booked after 2 March 2026 cost £15.", learned=False)
    assert found is not None and DATE_SHIFTED in found


@pytest.mark.parametrize(
    ("a", "b"),
    [
        # a sentence that bounds one date from both sides states both tiers itself
        (
            "Members pay £20 until 1 April 2025 and £25 after 1 April 2025.",
            "Members pay £20 until 1 April 2025 and £30 after 1 April 2025.",
        ),
        # a length of time before the bound makes the date an anchor: one deadline
        ("Invoices are payable 30 days after 1 June 2025.", "Invoices are payable 10 days before 1 June 2025."),
        (
            "Results are published the day after 1 May 2025 at 9am.",
            "Results are published the day before 1 May 2025 at 10am.",
        ),
        # the bounds follow other words: no two tiers of one rule
        (
            "The offer runs until 1 May 2025 and gives 20% off.",
            "The offer starts after 1 May 2025 and gives 30% off.",
        ),
    ],
)
def test_date_tiers_keep_one_rule_s_changed_value(a: str, b: str) -> None:
    assert patterns(a, b, learned=False) is not None


def test_an_acronym_of_ordinary_words_names_no_one() -> None:
    # "BT" spelled by "broadband technology" is no reading of the name: Sky replaces BT
    assert patterns("Our broadband comes from BT.", "Our broadband technology comes from Sky.", learned=False) == (
        ENTITY_SUBSTITUTED,
    )
    assert patterns("Company fuel is bought from BP.", "Business petrol is bought from Shell.", learned=False) == (
        ENTITY_SUBSTITUTED,
    )
