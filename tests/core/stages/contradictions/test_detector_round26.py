"""The detector's twenty-sixth round (docs/decisions/detector-round26.md): one test per error class fixed, each with
the near miss the change must keep. Hand-written sentences; none comes from a labelled corpus."""

from __future__ import annotations

from crp_core.stages.contradictions.clauses import Doc, analyse
from crp_core.stages.contradictions.lexicon import ENTITY, POLAR
from crp_core.stages.contradictions.orders import LIST_ITEMS_MAX, listed_alike
from crp_core.stages.contradictions.values import (
    DATE_SHIFTED,
    ENTITY_SUBSTITUTED,
    NEGATION_FLIP,
    NUMBER_CHANGED,
    values_conflict,
)
from tests.support.detector_cases import patterns


def _polar(text: str) -> list[tuple[str, str, int]]:
    return [(t.text, t.key, t.sign) for t in analyse(text).tokens if t.kind == POLAR]


def _units(text: str) -> list[tuple[str, str, float]]:
    return [(t.text, t.qty.unit, t.qty.base) for t in analyse(text).tokens if t.qty is not None]


def test_free_to_a_verb_and_its_object_is_a_permission() -> None:
    assert _polar("Tenants are free to sublet the flat.") == [("free", "#allow", 1)]
    a = "Tenants are free to sublet the flat."
    assert patterns(a, "Tenants may not sublet the flat.", learned=False) == (NEGATION_FLIP,)
    assert values_conflict(a, "Tenants may sublet the flat.") is None
    # near misses: free to a group, or free to use, is free of charge
    assert _polar("Entry is free to members.") == [("free", "#charged", -1)]
    assert _polar("The app is free to use.") == [("free", "#charged", -1)]
    assert patterns("Entry is free to members.", "Entry is charged to members.", learned=False) == (NEGATION_FLIP,)


def test_no_separate_charge_is_free_of_charge() -> None:
    assert _polar("There is no separate charge for parking.") == [("no separate charge", "#charged", -1)]
    assert values_conflict("Parking is free.", "There is no separate charge for parking.") is None
    # near miss: a charge stated against it is still denied
    assert patterns("Parking is charged.", "There is no separate charge for parking.", learned=False) == (
        NEGATION_FLIP,
    )


def test_a_scope_frame_with_its_own_values_is_another_subject() -> None:
    # "In Wales, ..." against "... in Cornwall ...": another scope, whose date may differ
    a = "In Wales, the ferry season opens on 3 April."
    assert values_conflict(a, "The ferry season in Cornwall opens on 9 May.") is None
    # near miss: the same scope with another date is a shifted date
    assert patterns(a, "In Wales, the ferry season opens on 9 May.", learned=False) == (DATE_SHIFTED,)


def test_one_list_of_words_in_another_order_swaps_nothing() -> None:
    a, b = "We take payment by cheque, card or cash.", "Payment is accepted in cash, cheque or card."
    assert listed_alike(analyse(a), analyse(b))
    assert values_conflict(a, b) is None
    assert values_conflict("Orders ship by courier, post or van.", "Delivery is by van, courier or post.") is None
    # near misses: values swapped between two labels, and a list that ranks its items, keep their reading
    c, d = "Apples are picked in May, and pears in July.", "Pears are picked in May, and apples in July."
    assert not listed_alike(analyse(c), analyse(d))
    assert patterns(c, d) == (ENTITY_SUBSTITUTED,)
    e, f = "Prizes go to the oak, ash and elm entries.", "Prizes go to the elm, oak and ash entries, in that order."
    assert not listed_alike(analyse(e), analyse(f))
    assert not listed_alike(analyse(a), analyse("Payment is accepted in cash, cheque or voucher."))
    # a text of more items than any list is not read as one (the test stays bounded on hostile text)
    many = [f"w{k}" for k in range(LIST_ITEMS_MAX + 2)]

    def lists(n: int) -> tuple[Doc, Doc]:
        return analyse("We sell " + ", ".join(many[:n]) + "."), analyse(
            "We stock " + ", ".join(many[n - 1 :: -1]) + "."
        )

    assert listed_alike(*lists(5))
    assert not listed_alike(*lists(LIST_ITEMS_MAX + 2))


def test_a_word_between_a_count_and_its_time_unit_names_which_kind() -> None:
    assert _units("The course lasts five teaching days.")[0][1:] == ("d", 5.0)
    assert _units("Refunds take ten calendar days.")[0][1:] == ("d", 10.0)
    assert patterns("The course lasts 6 days.", "The course lasts five teaching days.", learned=False) == (
        NUMBER_CHANGED,
    )
    assert values_conflict("The course lasts 5 days.", "The course lasts five teaching days.") is None
    # near misses: a polarity word stays the value, a name or function word is no kind of unit
    assert _units("Members get 3 free days.")[0][1] == ""
    assert _units("We close 2 Easter days.")[0][1] == ""
    assert _units("It takes 3 more days.")[0][1] == ""


def test_a_name_after_pre_or_mid_is_the_name_stated() -> None:
    pre = next(t for t in analyse("Order now for pre-Christmas delivery.").tokens if t.kind == ENTITY)
    bare = next(t for t in analyse("It arrives before Christmas.").tokens if t.kind == ENTITY)
    assert pre.key == bare.key
    a = "Orders placed by 18 December arrive before Christmas."
    assert values_conflict(a, "Order by 18 December for pre-Christmas delivery.") is None
    assert patterns(a, "Order by 15 December for pre-Christmas delivery.", learned=False) == (DATE_SHIFTED,)
    # near miss: "non-EU" names another group than "EU"
    non = next(t for t in analyse("Fees differ for non-EU students.").tokens if t.kind == ENTITY)
    eu = next(t for t in analyse("Fees differ for EU students.").tokens if t.kind == ENTITY)
    assert non.key != eu.key
    assert values_conflict("EU students pay £9,250.", "Non-EU students pay £20,000.") is None
