"""The detector's twenty-fifth round (docs/decisions/detector-round25.md): one test per error class fixed, each with
the near miss the change must keep. Hand-written sentences; none comes from a labelled corpus."""

from __future__ import annotations

import pytest

from crp_core.stages.contradictions.clauses import analyse
from crp_core.stages.contradictions.shares import PROPORTION_MAX
from crp_core.stages.contradictions.spans import range_units
from crp_core.stages.contradictions.values import (
    ENTITY_SUBSTITUTED,
    MAGNITUDE_ALTERED,
    NUMBER_CHANGED,
    values_conflict,
)
from tests.support.detector_cases import patterns


def _quantities(text: str) -> list[tuple[str, str, str, float]]:
    return [(t.text, t.qty.dim, t.qty.unit, t.qty.base) for t in analyse(text).tokens if t.qty is not None]


def test_the_low_end_of_a_range_takes_the_unit_of_its_high_end() -> None:
    # "35–55 mm" is 35 mm to 55 mm: the same range as 3.5 to 5.5 cm, whatever joins the ends
    assert _quantities("Pebbles are 35–55 mm across.")[0] == ("35", "length", "mm", 35.0)
    for a, b in [
        ("Pebbles are 35–55 mm across.", "Pebbles are 3.5 to 5.5 cm across."),
        ("Pebbles are 35-55 mm across.", "Pebbles are 3.5 - 5.5 cm across."),
        ("The hose holds between 2 and 3 bar.", "The hose holds between 200 and 300 kPa."),
    ]:
        assert values_conflict(a, b) is None, (a, b)
    # near miss: a changed end is still a changed number, and "and" without "between" joins no range
    a = "Pebbles are 35–55 mm across."
    assert patterns(a, "Pebbles are 3.5 to 6 cm across.", learned=False) == (NUMBER_CHANGED,)
    assert _quantities("Pick 2 and 5 kg bags.")[0][1] == ""


def test_a_range_end_borrows_a_measure_not_a_clock_time_nor_a_smaller_high_end() -> None:
    # a clock time is no measure from zero; a "range" whose second number is smaller is no range
    assert _quantities("Doors open 9 to 17:30.")[0][1] == ""
    assert _quantities("Teams of 12 to 4 players.")[0][1] == ""
    assert _quantities("Countdown from 10 to 0 seconds.")[0][1] == ""


def test_a_temperature_range_reads_its_low_end_on_the_same_scale() -> None:
    t = analyse("Store it between 2 and 8 °C.").tokens
    low = next(x for x in t if x.qty is not None)
    assert low.qty is not None and low.qty.dim == "temp" and low.qty.readings == ((275.15, 275.15),)
    # near miss: the high end's scale is read once: 35.6 °F is 2 °C, 50 °F is 10 °C, a changed end
    assert values_conflict("Store it between 2 and 8 °C.", "Store it between 35.6 and 46.4 °F.") is None
    b = "Store it between 35.6 and 50 °F."
    assert patterns("Store it between 2 and 8 °C.", b, learned=False) == (NUMBER_CHANGED,)


def test_a_proportion_of_two_counts_is_the_share_it_states() -> None:
    assert _quantities("Nine in ten parcels arrive on time.") == [("Nine in ten", "pct", "%", 90.0)]
    assert _quantities("1 out of 4 kettles fails the test.") == [("1 out of 4", "pct", "%", 25.0)]
    # the same share as a percentage is no conflict; another share is a changed figure
    a = "Nine in ten parcels arrive on time."
    assert values_conflict(a, "90% of parcels arrive on time.") is None
    assert values_conflict("One in five kettles fails the test.", "20% of kettles fail the test.") is None
    assert patterns(a, "60% of parcels arrive on time.", learned=False) == (MAGNITUDE_ALTERED,)
    assert patterns(a, "Seven in ten parcels arrive on time.", learned=False) == (MAGNITUDE_ALTERED,)


@pytest.mark.parametrize(
    "text",
    [
        "Platform 3 in 2019 was rebuilt.",  # a year is no whole
        "Score 6 in 5 minutes.",  # the whole has a unit: no count
        "Five in one kit.",  # a whole of one
        "Seven in four weeks.",
        "Twelve in ten.",  # a part larger than the whole
        f"One in {PROPORTION_MAX + 1} tickets wins.",  # beyond the largest whole read
    ],
)
def test_two_numbers_that_state_no_proportion_stay_numbers(text: str) -> None:
    assert not [q for q in _quantities(text) if q[1] == "pct"]


def test_the_range_pass_keeps_every_other_token() -> None:
    # no range: the token list passes through unchanged
    toks = list(analyse("The kiln fires at 1200 degrees for 9 hours.").tokens)
    text = "The kiln fires at 1200 degrees for 9 hours."
    assert range_units(toks, text) == toks


def test_working_weeks_are_five_working_days() -> None:
    a = "Refunds are paid within 10 working days."
    assert values_conflict(a, "Refunds are paid within two working weeks.") is None
    assert values_conflict(a, "Refunds are paid within 2 business weeks.") is None
    # near miss: three working weeks are fifteen working days, and a calendar week is no working week
    assert patterns(a, "Refunds are paid within three working weeks.", learned=False) == (NUMBER_CHANGED,)
    assert _quantities("Refunds are paid within two weeks.")[0][1] == "time"


def test_an_acronym_spells_a_name_across_its_connecting_words() -> None:
    # "Marine and Coastal Survey Agency" is MCSA: "and" gives no letter
    a = "Permits are issued by the Marine and Coastal Survey Agency."
    assert values_conflict(a, "The MCSA issues the permits.") is None
    b = "Levies go to the Board of Trade Standards."
    assert values_conflict(b, "The BTS collects the levies.") is None
    # near miss: an acronym the words do not spell is another body
    assert patterns(a, "The MCA issues the permits.") == (ENTITY_SUBSTITUTED,)


def test_an_acronym_its_own_text_spells_out_is_a_symbol_of_its_own() -> None:
    # both texts name the quotation; the symbols differ (SQT is its initials, written as a symbol)
    a = "Contracts settle on the settlement quotation total, listed under the symbol QST."
    b = "The settlement quotation total that contracts settle on is listed under the symbol SQT."
    assert patterns(a, b) == (ENTITY_SUBSTITUTED,)


def test_a_place_and_its_adjective_name_one_place() -> None:
    a = "Councils in Scotland set their own parking fines."
    assert values_conflict(a, "Scottish councils set their own parking fines.") is None
    # near miss: another nation's adjective is another place
    assert patterns(a, "Welsh councils set their own parking fines.", learned=False) == (ENTITY_SUBSTITUTED,)


def test_a_possessive_unit_is_the_unit() -> None:
    # "one week's allowance" is an allowance of one week, as "two weeks' allowance" is of two
    a = "Carers receive a bonus equal to one week's fee each spring."
    assert values_conflict(a, "Carers receive a bonus equal to 7 days' fee each spring.") is None
    # near miss: two weeks are another length
    b = "Carers receive a bonus equal to two weeks' fee each spring."
    assert patterns(a, b, learned=False) == (NUMBER_CHANGED,)


def test_an_area_in_acres_or_hectares_is_one_area() -> None:
    # 40 acres are 16.19 ha; 1 ha is 10,000 square metres
    a = "The orchard lease covers 40 acres."
    assert values_conflict(a, "The orchard lease covers 16.19 hectares.") is None
    assert values_conflict("The meadow is 3 ha.", "The meadow is 30,000 square metres.") is None
    # near miss: another area is a changed number
    assert patterns(a, "The orchard lease covers 25 hectares.", learned=False) == (NUMBER_CHANGED,)
    assert patterns("The meadow is 3 ha.", "The meadow is 40,000 square metres.", learned=False) == (NUMBER_CHANGED,)


@pytest.mark.parametrize(
    ("bounded", "limit"),
    [
        ("Trenches may be no deeper than 40 cm.", "The trench depth limit is 40 centimetres."),
        ("Loads must not be heavier than 25 kg.", "The load limit is 25 kilograms."),
        ("Boats may go no faster than 6 knots in the harbour.", "The harbour speed limit for boats is 6 knots."),
    ],
)
def test_a_negated_comparative_of_measure_is_a_bound_not_a_flip(bounded: str, limit: str) -> None:
    # "no deeper than 40 cm" is an upper bound of 40 cm: the limit the other text states, no negation
    assert values_conflict(bounded, limit) is None
    # near miss: the bound with another figure is a changed number
    changed = bounded.replace("40 cm", "60 cm").replace("25 kg", "30 kg").replace("6 knots", "8 knots")
    assert patterns(bounded, changed, learned=False) == (NUMBER_CHANGED,)


def test_a_negation_that_opens_its_clause_is_no_bound_of_a_later_comparative() -> None:
    # "No vehicle heavier than 3.5 t may enter" denies entry to heavy vehicles: the same as "not allowed"
    a = "Vehicles over 3.5 tonnes are not allowed in the yard."
    assert values_conflict(a, "No vehicle heavier than 3,500 kg may enter the yard.") is None
    b = "Fireworks may not be sold to anyone under the age of 18."
    assert values_conflict(b, "No one younger than 18 may be sold fireworks.") is None
