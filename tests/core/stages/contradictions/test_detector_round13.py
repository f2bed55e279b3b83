"""The detector's thirteenth round (docs/decisions/detector-round13.md): one test per error class fixed, each with the
near miss the rule must keep. Hand-written sentences; none comes from a labelled corpus."""

from __future__ import annotations

from crp_core.stages.contradictions.clauses import analyse
from crp_core.stages.contradictions.swaps import segments
from crp_core.stages.contradictions.values import (
    DATE_SHIFTED,
    NEGATION_FLIP,
    NUMBER_CHANGED,
    learned_candidates,
    values_conflict,
)
from tests.support.detector_cases import patterns


def test_a_numbered_thing_opening_both_sentences_is_their_subject_for_the_learned_comparison() -> None:
    # each sentence opens with a numbered thing the other text lacks: its date or amount is another thing's,
    # so the learned comparison gets no value candidate (the rules already read these as two subjects)
    assert (
        learned_candidates("Lift 2 was last inspected on 3 March 2026.", "Lift 6 was last inspected on 17 March 2026.")
        == ()
    )
    assert learned_candidates("Pump 4 delivers 30 litres a minute.", "Pump 7 delivers 45 litres a minute.") == ()
    # the number after the name that opens the sentence, a possessive after it, a release after a lower-case name
    assert (
        values_conflict(
            "Kiln 3 is booked for its annual service on 4 June.", "Kiln 5's annual service is booked for 18 June."
        )
        is None
    )
    assert learned_candidates("maven 3.8 needs Java 7 or later.", "maven 3.9 needs Java 8 or later.") == ()
    # near misses: the same numbered thing with another value stays a conflict
    assert patterns(
        "Kiln 3 is booked for its annual service on 4 June.", "Kiln 3's annual service is booked for 18 June."
    ) == (DATE_SHIFTED,)
    assert patterns("Lift 2 was last inspected on 3 March 2026.", "Lift 2 was last inspected on 17 March 2026.") == (
        DATE_SHIFTED,
    )
    assert patterns("maven 3.8 needs Java 7 or later.", "maven 3.8 needs Java 8 or later.") == (NUMBER_CHANGED,)


def test_a_negation_without_a_condition_restates_an_exception_unless_it_holds() -> None:
    # "No X without C" / "X is forbidden unless C": one restriction, the learned comparison's polarity candidate
    # carries it (unless_restated) and the shipped weights no longer accept the flip
    a = "No visitor may enter the vault without a signed pass."
    b = "Entering the vault is forbidden unless the visitor holds a signed pass."
    (flip,) = learned_candidates(a, b)
    assert flip.patterns == (NEGATION_FLIP,) and flip.features["unless_restated"] == 1.0
    assert values_conflict(a, b) is None
    assert (
        values_conflict(
            "No fireworks are allowed on the pier without approval from the harbour office.",
            "Fireworks on the pier are prohibited unless the harbour office has approved them.",
        )
        is None
    )
    # near misses: another condition after "unless", and no "unless" at all, leave the feature at 0
    (other,) = learned_candidates(a, "Entering the vault is forbidden unless a guard is present.")
    assert other.features["unless_restated"] == 0.0
    assert patterns(
        "No fireworks are allowed on the pier without approval from the harbour office.",
        "Fireworks are allowed on the pier without approval from the harbour office.",
    ) == (NEGATION_FLIP,)


def test_a_number_after_a_measured_one_in_its_sentence_carries_that_unit_as_a_swap_item() -> None:
    # "every 50" names no unit: the sentence stated "every 10 hours" before it, so the swap candidate reads
    # "50" as 50 hours, and the two axles' intervals are crossed
    a = "Grease the front axle every 10 hours and the rear hub every 50 hours."
    b = "The rear hub needs greasing every 10 hours, the front axle every 50."
    (swap,) = learned_candidates(a, b)
    assert swap.features["kind_swap"] == 1.0 and swap.patterns == (NUMBER_CHANGED,)
    assert patterns(a, b) == (NUMBER_CHANGED,)
    # near misses: the same pairing is no conflict; a number with a noun after it keeps its own reading
    assert values_conflict(a, "The front axle needs greasing every 10 hours, the rear hub every 50.") is None
    assert (
        learned_candidates(
            "Flush the cold tank every 6 weeks and the hot tank every 9 weeks.",
            "The hot tank is flushed every 6 weeks, the cold tank every 9 pumps.",
        )
        == ()
    )


def test_a_time_unit_and_a_half_is_an_amount_wherever_it_stands() -> None:
    # "a year and a half" after a copula: 18 months (it was read only after a duration word such as "for")
    assert patterns("The warranty is a year and a half.", "The warranty is two years.") == (NUMBER_CHANGED,)
    assert patterns("A year and a half is the minimum term.", "The minimum term is 24 months.") == (NUMBER_CHANGED,)
    # near misses: the same amount in other units is no change; "and a half" after a duration word as before
    assert values_conflict("The crossing is a day and a half.", "The crossing is 36 hours.") is None
    assert values_conflict("The cheese ages for a year and a half.", "The cheese ages for 18 months.") is None


def test_a_range_of_days_before_a_month_is_one_date() -> None:
    # "12-13 July" is one date of two days: another range of days is a shifted date, not a changed number
    assert patterns("The fair runs on 12-13 July.", "The fair runs on 19-20 July.") == (DATE_SHIFTED,)
    assert patterns("The fair runs on 3\u20135 May 2026.", "The fair runs on 10\u201312 May 2026.") == (DATE_SHIFTED,)
    # near misses: a day inside the range states part of it; a day outside it is a shift; a dash with spaces
    # and a first number after the second stay two values
    assert values_conflict("The fair runs on 12-13 July.", "The fair opens on 12 July.") is None
    assert patterns("The fair runs on 12-13 July.", "The fair runs on 14 July.") == (DATE_SHIFTED,)
    assert [t.text for t in analyse("Rooms 14-3 July").tokens if t.date is not None] == ["3 July"]
    assert [t.text for t in analyse("The fair runs 3 \u2013 5 May 2026.").tokens if t.date is not None] == [
        "5 May 2026"
    ]


def test_an_amount_after_a_rate_of_its_currency_in_its_sentence_carries_that_rate_as_a_swap_item() -> None:
    # "45p" after "60p a minute" in one sentence is 45p a minute: both texts state the two rates, crossed
    a = "Hire of a diesel kart costs 60p per minute and an electric kart 45p per minute."
    b = "Electric karts are charged at 60p a minute, diesel karts at 45p."
    assert {k for k in segments(a).keys() & segments(b).keys() if k.startswith("#")} == {
        "#rate:money:GBP/min:0.6",
        "#rate:money:GBP/min:0.45",
    }
    # near miss: "each" gives the amount a rate of its own
    each = "Electric karts are charged at 60p a minute, diesel karts at 45p each."
    assert {k for k in segments(a).keys() & segments(each).keys() if k.startswith("#")} == {"#rate:money:GBP/min:0.6"}
