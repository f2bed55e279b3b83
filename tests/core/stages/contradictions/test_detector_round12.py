"""The detector's twelfth round (docs/decisions/detector-round12.md): one test per error class fixed, each with the
near miss the rule must keep. Hand-written sentences; none comes from a labelled corpus."""

from __future__ import annotations

from crp_core.stages.contradictions.values import (
    ENTITY_SUBSTITUTED,
    NEGATION_FLIP,
    NUMBER_CHANGED,
    values_conflict,
)
from tests.support.detector_cases import patterns


def test_the_fluid_ounce_is_a_volume() -> None:
    # 1 US fl oz = 29.5735 ml: 8 fl oz is 236.6 ml (within the 1.5 % of a unit of another system), 300 ml is not
    assert values_conflict("Each can holds 8 fl oz of broth.", "Each can holds 237 ml of broth.") is None
    assert patterns("Each can holds 8 fl oz of broth.", "Each can holds 300 ml of broth.") == (NUMBER_CHANGED,)
    assert values_conflict("The jug takes 16 fluid ounces.", "The jug takes 473 ml.") is None
    assert patterns("The jug takes 16 fluid ounces.", "The jug takes 0.6 litres.") == (NUMBER_CHANGED,)
    # near miss: "oz" alone stays a mass (8 oz = 226.8 g)
    assert values_conflict("Each bag holds 8 oz of flour.", "Each bag holds 227 g of flour.") is None


def test_a_rate_marker_belongs_to_the_number_nearest_before_it() -> None:
    # "per week" is the rate of "two classes", not of "3": "Level 3" names a group, so two groups, no conflict
    assert (
        values_conflict(
            "Level 3 swimmers attend two sessions per week.", "Level 5 swimmers attend four sessions per week."
        )
        is None
    )
    # near misses: the same group with another rate stays a changed number; a rate after its own number is read
    assert patterns(
        "Level 3 swimmers attend two sessions per week.", "Level 3 swimmers attend four sessions per week."
    ) == (NUMBER_CHANGED,)
    assert values_conflict("The van makes 14 deliveries per day.", "The van makes 98 deliveries per week.") is None


def test_the_low_end_and_the_high_end_of_a_range_are_two_attributes() -> None:
    # the minimum and the maximum of one quantity are two attributes: no changed value between them
    assert (
        values_conflict(
            "The minimum water temperature in the hatchery tanks is 8 degrees.",
            "The maximum water temperature in the hatchery tanks is 14 degrees.",
        )
        is None
    )
    assert values_conflict("The lowest fare on the route is £12.", "The highest fare on the route is £40.") is None
    # near misses: one end changed stays a conflict, on either end
    assert patterns(
        "The minimum water temperature in the hatchery tanks is 8 degrees.",
        "The minimum water temperature in the hatchery tanks is 6 degrees.",
    ) == (NUMBER_CHANGED,)
    assert patterns("The maximum stay at the hostel is 14 nights.", "The maximum stay at the hostel is 10 nights.") == (
        NUMBER_CHANGED,
    )


def test_a_list_restated_in_another_order_in_a_reworded_sentence_is_no_change() -> None:
    # the same three codes in another order, the sentence turned from passive to active: the same set
    assert (
        values_conflict(
            "Warning levels W1, W2 and W3 are posted on harbour boards.",
            "Harbour boards post warning levels W2, W3 and W1.",
        )
        is None
    )
    # near misses: an item replaced stays a substitution; values with labels between them swapped stay a change
    assert patterns(
        "Warning levels W1, W2 and W3 are posted on harbour boards.",
        "Harbour boards post warning levels W2, W4 and W1.",
    ) == (ENTITY_SUBSTITUTED,)
    assert patterns(
        "The client port is 7001 and the gossip port is 7002.", "The client port is 7002 and the gossip port is 7001."
    ) == (NUMBER_CHANGED,)


def test_a_duration_after_for_is_no_interval() -> None:
    # how long a record is kept against how often a check is made: two attributes, no interval in two forms
    assert values_conflict("Boiler logs must be kept for 6 months.", "Boilers must be serviced every 4 weeks.") is None
    # near misses: an interval against a rate stays compared (equal: no conflict; changed: a changed number)
    assert (
        values_conflict("The boiler service interval is 4 weeks.", "The boiler is serviced every four weeks.") is None
    )
    assert patterns("The boiler service interval is 6 weeks.", "The boiler is serviced every four weeks.") == (
        NUMBER_CHANGED,
    )


def test_not_outside_a_place_restates_only_inside_it() -> None:
    # a negation that governs "outside" against "only inside" the same place: one restriction, no flip
    assert (
        values_conflict(
            "Sample jars must not be opened outside the clean room.",
            "Sample jars may only be opened inside the clean room.",
        )
        is None
    )
    assert (
        values_conflict("Darts are never thrown outside the oche area.", "Darts are thrown only within the oche area.")
        is None
    )
    # near misses: "outside" against "outside", and "not outside" against a plain "inside", stay flips
    assert patterns(
        "Sample jars must not be opened outside the clean room.", "Sample jars may be opened outside the clean room."
    ) == (NEGATION_FLIP,)
    assert patterns("Bins are not kept outside the gate.", "Bins are kept outside the gate.") == (NEGATION_FLIP,)


def test_refused_denies_what_allowed_asserts() -> None:
    # "refused" is the negative of "allowed": a refusal against a denied permission is one statement
    assert (
        values_conflict(
            "Dogs without a muzzle will not be allowed on the ferry.", "Dogs without a muzzle are refused on the ferry."
        )
        is None
    )
    # near misses: a refusal against a permission is a flip, as "denied" is
    assert patterns("Late entries are allowed at the desk.", "Late entries are refused at the desk.") == (
        NEGATION_FLIP,
    )
    assert patterns("Late entries are allowed at the desk.", "Late entries are denied at the desk.") == (NEGATION_FLIP,)


def test_an_article_before_the_first_item_of_a_list_belongs_to_it() -> None:
    # "Pack a torch, ..." / "Pack a map, ...": the shared "a" opens the first item on both sides, a list reordered
    assert (
        values_conflict(
            "Pack a torch, a whistle and a map for the hike.", "Pack a map, a whistle and a torch for the hike."
        )
        is None
    )
    # near miss: an item replaced is no reordering, article or not (the A30 against the A39)
    assert patterns("Take the A30, the A38 and the M5 to Exeter.", "Take the M5, the A38 and the A39 to Exeter.") == (
        ENTITY_SUBSTITUTED,
    )
