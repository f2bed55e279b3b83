"""The detector's seventh round (docs/decisions/detector-round7.md): signed temperatures in words, a prefixed word
both texts write, "-free" as a negating suffix, a prefixed word against a derivation of its base, a list written in
another order, and the swap candidate's segments ("between X and Y"), labels (a number that names a thing) and items
(a capitalised word). One hand-written case per rule with the near miss it must not flag or must keep; none of these
sentences comes from a labelled corpus."""

from __future__ import annotations

from crp_core.stages.contradictions.clauses import analyse, tokenize
from crp_core.stages.contradictions.lexicon import negated_base
from crp_core.stages.contradictions.orders import reordered
from crp_core.stages.contradictions.values import (
    ENTITY_SUBSTITUTED,
    NEGATION_FLIP,
    NUMBER_CHANGED,
    learned_candidates,
)
from tests.support.detector_cases import patterns


def _rules(a: str, b: str) -> tuple[str, ...] | None:
    """The patterns the rules alone name, checked in both orders."""
    return patterns(a, b, learned=False)


def _temp(text: str) -> tuple[str, float, str]:
    t = next(t for t in tokenize(text) if t.qty is not None and t.qty.dim == "temp")
    assert t.qty is not None
    return (t.text, t.qty.base, t.qty.unit)


# ---- signed temperatures ----------------------------------------------------------------------------------------
def test_minus_in_words_is_the_sign_of_a_temperature() -> None:
    assert _temp("held at minus 25 degrees Celsius") == ("minus 25 degrees Celsius", -25.0, "degc")
    assert _temp("held at negative 13 °F") == ("negative 13 °F", -13.0, "degf")
    minus = [t.qty.base for t in tokenize("a score of minus 5 points") if t.qty is not None]
    assert minus == [5.0]  # no temperature: "minus" stays a word


def test_a_signed_temperature_compares_across_scales() -> None:
    a = "The freezer holds minus 25 degrees Celsius."
    assert _rules(a, "The freezer holds -25 °C.") is None
    assert _rules(a, "The freezer holds -13 °F.") is None  # -13 °F is -25 °C
    assert _rules(a, "The freezer holds -4 °F.") == (NUMBER_CHANGED,)  # -4 °F is -20 °C
    assert _rules(a, "The freezer holds 25 °C.") == (NUMBER_CHANGED,)


# ---- negating affixes -------------------------------------------------------------------------------------------
def test_a_prefixed_word_both_texts_write_is_shared() -> None:
    a = "Unsalted butter is used in the pastry."
    assert _rules(a, "The pastry uses unsalted butter.") is None
    assert _rules(a, "Unsalted butter is not used in the pastry.") == (NEGATION_FLIP,)


def test_free_after_a_hyphen_negates_its_base() -> None:
    assert (negated_base("gluten-free"), negated_base("free"), negated_base("carefree")) == ("gluten", "", "")
    a = "The biscuits are gluten-free."
    assert _rules(a, "The biscuits contain gluten.") == (NEGATION_FLIP,)
    assert _rules(a, "The biscuits contain sugar.") is None


def test_a_prefixed_word_counts_against_a_derivation_of_its_base() -> None:
    a = "Lavender plants are intolerant of drought."
    assert _rules("Lavender plants tolerate drought.", a) == (NEGATION_FLIP,)
    assert _rules(a, "Lavender plants cannot tolerate drought.") is None


# ---- lists in another order -------------------------------------------------------------------------------------
def test_a_list_in_another_order_is_no_conflict() -> None:
    a = "We stock oak, ash and beech boards."
    assert reordered(analyse(a), analyse("We stock beech, oak and ash boards."))
    assert _rules(a, "We stock beech, oak and ash boards.") is None
    assert not reordered(analyse(a), analyse("We stock beech, oak and pine boards."))


def test_items_keep_their_values_in_another_order() -> None:
    a = "Studios: Alpha (up to 4 people), Beta (up to 8 people) and Gamma (up to 15 people)."
    b = "Studios: Gamma (up to 15 people), Alpha (up to 4 people) and Beta (up to 8 people)."
    assert _rules(a, b) is None
    swapped = "Studios: Gamma (up to 4 people), Alpha (up to 15 people) and Beta (up to 8 people)."
    assert _rules(a, swapped) == (ENTITY_SUBSTITUTED,)


def test_respectively_binds_the_order() -> None:
    a, b = "Vans and trucks park in bays 1 and 2 respectively.", "Vans and trucks park in bays 2 and 1 respectively."
    assert not reordered(analyse(a), analyse(b))
    assert _rules(a, b) == (NUMBER_CHANGED,)


def test_between_x_and_y_is_one_item() -> None:
    a = "Route 5 runs between the harbour and the Museum, and Route 6 between the harbour and the Stadium."
    b = "Route 5 runs between the harbour and the Stadium, and Route 6 between the harbour and the Museum."
    assert not reordered(analyse(a), analyse(b))
    assert _rules(a, b) == (ENTITY_SUBSTITUTED,)


# ---- the swap candidate -----------------------------------------------------------------------------------------
def _swap_patterns(a: str, b: str) -> list[tuple[str, ...]]:
    return [c.patterns for c in learned_candidates(a, b) if c.features.get("kind_swap")]


def test_a_capitalised_item_is_its_word_and_a_named_number_a_label() -> None:
    a = "Mugs are packed in Box A and plates in Box B."
    assert _swap_patterns(a, "Plates are packed in Box A and mugs in Box B.") == [(ENTITY_SUBSTITUTED,)]
    assert _swap_patterns(a, "Mugs are packed in Box A and plates in Box B, by hand.") == []
    x, y = "Gate 3 serves the Lounge and Gate 4 serves the Spa.", "Gate 3 serves the Spa and Gate 4 serves the Lounge."
    assert _swap_patterns(x, y) == [(ENTITY_SUBSTITUTED,)]
    swap = next(c for c in learned_candidates(x, y) if c.features.get("kind_swap"))
    assert [(d.tokens_a, d.tokens_b) for d in swap.diffs] == [(("Lounge",), ("Spa",)), (("Spa",), ("Lounge",))]
    amounts = "Gate 3 opens 40 minutes and Gate 4 opens 25 minutes before departure."
    crossed = "Gate 3 opens 25 minutes and Gate 4 opens 40 minutes before departure."
    assert _swap_patterns(amounts, crossed) == [(NUMBER_CHANGED,)]  # the amounts are the items, the gates labels


# ---- fractions of a measure -------------------------------------------------------------------------------------
def test_half_a_measure_is_half_its_unit() -> None:
    halves = [(t.qty.dim, t.qty.unit, t.qty.base) for t in tokenize("half a tonne, half a litre") if t.qty]
    assert halves == [("mass", "t", 0.5), ("volume", "l", 0.5)]
    assert [t.qty for t in tokenize("half a page of notes") if t.qty] == []
    a = "Each skip takes at most half a tonne of rubble."
    assert _rules(a, "Each skip takes at most 500 kg of rubble.") is None
    assert _rules(a, "Each skip takes at most 400 kg of rubble.") == (NUMBER_CHANGED,)
