"""The detector's rules for language nobody tuned it to (docs/decisions/detector.md, "Reworded
statements" and after): one focused, hand-written case per rule, each with the near miss it must not
flag. None of these sentences comes from a labelled corpus."""

from __future__ import annotations

import pytest

from crp_core.stages.contradictions.clauses import tokenize
from crp_core.stages.contradictions.lexicon import negated_base
from crp_core.stages.contradictions.values import (
    DATE_SHIFTED,
    ENTITY_SUBSTITUTED,
    NEGATION_FLIP,
    NUMBER_CHANGED,
)
from tests.support.detector_cases import patterns


# ---- loose sentence alignment: one changed value in reworded sentences ------------------------------
@pytest.mark.parametrize(
    "a, b, expected",
    [
        (
            "Divers must wait at least 18 hours before boarding a flight.",
            "Before they board a flight, divers need a minimum of 24 hours of waiting.",
            (NUMBER_CHANGED,),
        ),
        (
            "Ferries to the island sail every 40 minutes in summer.",
            "In summer there is a ferry to the island every 30 minutes.",
            (NUMBER_CHANGED,),
        ),
        (
            "Hikers must carry at least 2 litres of water on the ridge trail.",
            "On the ridge trail, each hiker needs a minimum of 3 litres of water.",
            (NUMBER_CHANGED,),
        ),
        (
            "Quarterly dues for the rowing club are payable on 3 April 2026.",
            "The rowing club collects its quarterly dues on 10 April 2026.",
            (DATE_SHIFTED,),
        ),
    ],
)
def test_a_reworded_sentence_with_one_changed_value_conflicts(a: str, b: str, expected: tuple[str, ...]) -> None:
    assert patterns(a, b) == expected


@pytest.mark.parametrize(
    "a, b",
    [
        # a substitution next to a shared word: two subjects
        ("The front brake pads wear out after 40,000 km.", "The rear brake pads wear out after 60,000 km."),
        # a modifier of a shared word on one side only narrows the subject
        ("The fee for a library card is $10.", "The replacement fee for a library card is $5."),
        # another word in the same slot, even a generic noun: another attribute
        ("The pump warm-up timeout is 5 seconds.", "The pump warm-up period is 50 seconds."),
        # two foreign words on a side: too far apart to be one statement
        (
            "Junior members may book the squash court for 45 minutes.",
            "Visiting guests are allowed to book the squash court for 30 minutes.",
        ),
        # the same value in another form
        ("The crossing takes an hour and a half.", "The crossing takes 90 minutes."),
        ("The tour lasts a quarter of an hour.", "The tour lasts 15 minutes."),
    ],
)
def test_reworded_sentences_about_other_things_do_not_conflict(a: str, b: str) -> None:
    assert patterns(a, b) is None


def test_a_release_number_belongs_to_its_subject() -> None:
    assert patterns("gradle 8.4 requires Java 17 or newer.", "gradle 8.5 requires Java 21 or newer.") is None
    assert patterns("gradle 8.4 requires Java 17 or newer.", "gradle 8.4 requires Java 21 or newer.") == (
        NUMBER_CHANGED,
    )


# ---- bounds written around the number -------------------------------------------------------------
def test_bounds_after_the_number_and_negated_verbs() -> None:
    assert patterns("Riders must be 14 or older.", "Riders must be at least 14.") is None
    assert patterns("Riders must be 14 or older.", "Riders must be 16 or older.") == (NUMBER_CHANGED,)
    assert patterns("A bag must not exceed 23 kg.", "A bag may weigh up to 23 kg.") is None
    assert patterns("A bag must not exceed 23 kg.", "A bag may weigh at least 23 kg.") == (NEGATION_FLIP,)


# ---- units ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "a, b, conflict",
    [
        ("The parcel limit is 2 kg.", "The parcel limit is 2000 g.", False),
        ("The trail is 8 km long.", "The trail is 5 miles long.", False),  # 8.05 km: a rounded conversion
        ("The trail is 8 km long.", "The trail is 7 miles long.", True),
        ("Each kilowatt-hour costs 30p.", "Each kilowatt-hour costs £0.30.", False),
    ],
)
def test_physical_units_and_pence(a: str, b: str, conflict: bool) -> None:
    assert (patterns(a, b) is not None) is conflict


# ---- days as scope -----------------------------------------------------------------------------------
def test_a_day_inside_a_range_narrows_the_scope() -> None:
    assert (
        patterns("The pool opens Tuesday to Saturday, 7 a.m. to 9 p.m.", "On Thursdays the pool opens 7 a.m. to 9 p.m.")
        is None
    )
    assert patterns("The bakery opens at 06:00 on weekdays.", "On Sundays the bakery opens at 08:00.") is None
    assert patterns("The market runs on weekends.", "The market runs on Saturdays.") is None
    assert patterns("The market runs on Tuesdays.", "The market runs on Fridays.") == (DATE_SHIFTED,)


# ---- negation carried by a determiner, "no longer", prefixes, charges ----------------------------------
@pytest.mark.parametrize(
    "a, b",
    [
        ("Dogs are allowed on the beach.", "No dogs on the beach."),
        ("Cash and cheques are accepted at the kiosk.", "No cash or cheques at the kiosk."),
        ("The ferry still stops at Kirkwall.", "The ferry no longer stops at Kirkwall."),
        ("The old bridge is passable in winter.", "The old bridge is impassable in winter."),
        ("Nightly backups are affected by the outage.", "Nightly backups are unaffected by the outage."),
        ("The vouchers are refundable.", "The vouchers are non-refundable."),
        ("Parking at the clinic is free of charge.", "Parking at the clinic is charged."),
        ("Towels are provided at no extra cost.", "Towels are billed separately."),
        ("Online renewal is available to members.", "Members are unable to renew online."),
    ],
)
def test_negations_without_not(a: str, b: str) -> None:
    assert patterns(a, b) == (NEGATION_FLIP,)


@pytest.mark.parametrize(
    "a, b",
    [
        # two negatives saying the same thing, the negation in another clause
        (
            "Refuelling is not permitted when passengers are aboard.",
            "A plane that has passengers aboard cannot refuel.",
        ),
        # a prefixed word against a text that never states its base or a negation: only a word
        ("Unopened jars keep for a year.", "Jars keep for a year in the pantry."),
        # exceptions: "inflammable" means "flammable"
        ("The solvent is flammable.", "The solvent is inflammable."),
        ("Both statements are incomplete.", "Neither statement is complete."),
    ],
)
def test_negations_that_agree(a: str, b: str) -> None:
    assert patterns(a, b) is None


def test_negated_base() -> None:
    assert negated_base("unaffected") == "affected"
    assert negated_base("non-refundable") == "refundable"
    assert negated_base("impassable") == "passable"
    assert negated_base("irregular") == "regular"
    assert negated_base("inflammable") == "" and negated_base("import") == "" and negated_base("unit") == ""
    assert negated_base("imagine") == ""  # "im" before a letter other than p, b, m is no prefix


# ---- names: code, one-letter designators, lower-case noun phrases ---------------------------------------
@pytest.mark.parametrize(
    "a, b",
    [
        ("Deploy from the `release` branch.", "Deploy from the `trunk` branch."),
        ("The shuttle leaves from Bay D.", "The shuttle leaves from Bay K."),
        ("Complaints go to the shift supervisor before noon.", "Complaints go to the store owner before noon."),
        ("The meeting point is the north gate.", "The meeting point is the car park."),
    ],
)
def test_names_of_any_case(a: str, b: str) -> None:
    assert patterns(a, b) == (ENTITY_SUBSTITUTED,)


def test_the_object_of_a_verb_is_which_thing_not_a_value() -> None:
    assert patterns("Clean the kitchen filter every week.", "Clean the bathroom filter every week.") is None


def test_lists_of_names_in_another_order() -> None:
    assert (
        patterns("The festival hosts Oslo, Bergen and Tromso.", "The festival hosts Tromso, Oslo and Bergen.") is None
    )


def test_weekday_ranges_are_one_date() -> None:
    (tok,) = [t for t in tokenize("Open Monday to Wednesday.") if t.date is not None]
    assert [r[3] for r in tok.date.readings] == [1, 2, 3]  # type: ignore[union-attr]


def test_a_bound_between_a_number_and_its_rate() -> None:
    (tok,) = [t for t in tokenize("Save £200 or more each month.") if t.qty is not None]
    assert tok.qty is not None and tok.qty.dim == "rate:money" and tok.qty.bound == 1


def test_a_degree_sign_ends_no_initial() -> None:
    # "8 °C." ends its sentence ("J. Smith" does not): the second sentence is compared on its own
    sentence_ends = [t.text for t in tokenize("Store the milk below 5 °C. Discard it after 3 days.") if t.key == "sent"]
    assert sentence_ends == [".", "."]
    assert [t.text for t in tokenize("Dr J. Smith signs.") if t.key == "sent"] == ["."]
