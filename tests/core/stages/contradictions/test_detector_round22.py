"""The detector's twenty-second round (docs/decisions/detector-round22.md): one test per error class fixed, each with
the near miss the change must keep. Hand-written sentences; none comes from a labelled corpus."""

from __future__ import annotations

from crp_core.stages.contradictions.clauses import analyse
from crp_core.stages.contradictions.values import ENTITY_SUBSTITUTED, NEGATION_FLIP, NUMBER_CHANGED, values_conflict
from tests.support.detector_cases import patterns


def test_a_period_named_by_a_word_is_its_length() -> None:
    # "every quarter" is every 3 months, "each fortnight" every 14 days, "£90 a quarter" a rate over 3 months
    a = "The fire alarm panel is serviced every quarter."
    assert patterns(a, "The fire alarm panel is serviced every six months.", learned=False) == (NUMBER_CHANGED,)
    assert values_conflict(a, "The fire alarm panel is serviced every three months.") is None
    b = "Allotment holders are invoiced £90 a quarter."
    assert values_conflict(b, "Allotment holders are invoiced £360 a year.") is None
    assert values_conflict("Bins are emptied each fortnight.", "Bins are emptied every 14 days.") is None
    assert values_conflict("Bins are emptied fortnightly.", "Bins are emptied every two weeks.") is None
    # near miss: "a quarter hour" is a fraction of an hour, no period of three months
    assert not [t for t in analyse("Visitors are admitted every quarter hour.").tokens if t.qty is not None]


def test_radioactivity_is_read_in_becquerels_and_curies() -> None:
    # 1 mCi is 37 MBq: the same activity in two systems
    a = "The tracer vial is calibrated to 20 mCi at noon."
    assert values_conflict(a, "The tracer vial is calibrated to 740 MBq at noon.") is None
    assert values_conflict("The sealed source holds 3 GBq.", "The sealed source holds 3000 MBq.") is None
    # near miss: another activity in the other system is a changed number
    assert patterns(a, "The tracer vial is calibrated to 925 MBq at noon.", learned=False) == (NUMBER_CHANGED,)


def test_the_price_of_each_further_unit_is_another_kind_of_price() -> None:
    # the entry of one dog and each dog beyond it are two prices
    a = "Entering one dog in the show costs £12."
    assert values_conflict(a, "Each additional dog costs £5 to enter in the show.") is None
    # near miss: both texts pricing the further dogs state one price, changed
    b = "Each additional dog costs £5 to enter in the show."
    assert patterns(b, "Every further dog costs £7 to enter in the show.", learned=False) == (NUMBER_CHANGED,)


def test_a_nuclide_is_one_name_in_every_notation() -> None:
    # "Cobalt-60", "Co-60" and "60Co" name one nuclide: only the supplier changes
    a = "Cobalt-60 teletherapy sources are bought from Nordion."
    b = "Co-60 teletherapy sources are bought from Rosatom."
    assert patterns(a, b, learned=False) == (ENTITY_SUBSTITUTED,)
    c = "60Co teletherapy sources are bought from Nordion."
    assert values_conflict(a, c) is None
    d = "The clinic treats thyroid cancer with Iodine-131."
    assert values_conflict(d, "The clinic treats thyroid cancer with 131I.") is None
    # near miss: another mass number is another nuclide
    assert patterns(d, "The clinic treats thyroid cancer with I-125.", learned=False) == (ENTITY_SUBSTITUTED,)


def test_inter_and_under_are_no_negating_prefixes() -> None:
    # "interrupted" is no "in-" + "terrupted": both texts deny the same need
    a = "Dialysis does not need to be interrupted for the CT scan."
    assert values_conflict(a, "There is no need to stop dialysis for the CT scan.") is None
    # near miss: "interminable" is "in-" + "terminable", and turns its base round
    assert patterns("The lease is interminable.", "The lease is terminable.", learned=False) == (NEGATION_FLIP,)
