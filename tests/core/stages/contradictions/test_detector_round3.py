"""The detector's third round of rules (docs/decisions/detector.md): wider rewordings, temperatures,
dimension adjectives, roots shared by derivations, polarity carried by one clause or by a denied
predicate, scope frames and scopes changed with their value. One hand-written case per rule with the
near miss it must not flag; none of these sentences comes from a labelled corpus."""

from __future__ import annotations

import pytest

from crp_core.stages.contradictions.clauses import tokenize
from crp_core.stages.contradictions.loose import Sentence, foreign, vocabulary
from crp_core.stages.contradictions.values import (
    ENTITY_SUBSTITUTED,
    MAGNITUDE_ALTERED,
    NEGATION_FLIP,
    NUMBER_CHANGED,
)
from tests.support.detector_cases import patterns


# ---- loose alignment: two foreign words on a side when three words are shared -----------------------
def test_a_rewording_with_a_new_verb_and_noun_still_pairs_its_value() -> None:
    assert patterns(
        "Members of the campus film society get 10% off cinema tickets.",
        "Cinema tickets are reduced by 25% for film society members.",
    ) == (MAGNITUDE_ALTERED,)


def test_sentences_whose_subjects_are_replaced_do_not_align() -> None:
    assert (
        patterns(
            "Junior members may book the squash court for 45 minutes.",
            "Visiting guests are allowed to book the squash court for 30 minutes.",
        )
        is None
    )


# ---- modifiers: on both sides, or before an attribute word, another subject ---------------------------
def test_a_modifier_on_one_side_away_from_the_attribute_word_is_a_rewording() -> None:
    assert patterns(
        "Applicants need a minimum portfolio score of 70, with no section below 50.",
        "A minimum portfolio score of 80 is required, with no single section below 50.",
    ) == (NUMBER_CHANGED,)


@pytest.mark.parametrize(
    "a, b",
    [
        # a modifier before an attribute word on one side: another attribute
        ("The fee for a library card is $10.", "The replacement fee for a library card is $5."),
        # a modifier on each side: two subjects
        ("Adult ticket holders may bring up to 4 guests.", "Up to 2 guests may be brought on a student ticket."),
    ],
)
def test_modifiers_that_name_another_subject_or_attribute_do_not_conflict(a: str, b: str) -> None:
    assert patterns(a, b) is None


# ---- two value classes changed in one reworded sentence: a scope and its value --------------------------
def test_a_changed_scope_beside_a_changed_value_is_another_subject() -> None:
    # reworded sentences (a foreign word keeps the clauses apart): the radio and the count both change
    a = "The hub accepts up to 12 wireless devices on its 2.4 GHz radio."
    assert patterns(a, "On its 5 GHz radio, the hub accepts up to 24 devices.") is None
    # the same scope: one changed value
    b = "The hub accepts up to 12 wireless devices on its 5 GHz radio."
    assert patterns(b, "On its 5 GHz radio, the hub accepts up to 24 devices.") == (NUMBER_CHANGED,)


# ---- temperatures -----------------------------------------------------------------------------------------
def test_temperatures_are_read_in_kelvin() -> None:
    q = [t.qty for t in tokenize("Store at 68 °F, below 25°C or 30 degrees Celsius; a 90° turn.") if t.qty]
    assert [(x.dim, x.unit, x.base) for x in q] == [
        ("temp", "degf", 68.0),
        ("temp", "degc", 25.0),
        ("temp", "degc", 30.0),
        ("", "", 90.0),
    ]
    assert q[1].readings == ((298.15, 298.15),)


@pytest.mark.parametrize(
    "a, b, expected",
    [
        ("Water boils at 100 °C at sea level.", "Water boils at 212 °F at sea level.", None),
        ("The record high in the valley is 104 °F.", "The valley's all-time record high is 40 °C.", None),
        ("Serve the sauce at 65 °C.", "Serve the sauce at 75 °C.", (NUMBER_CHANGED,)),
        ("The vault is kept at 50 °F.", "The vault is kept at 18 °C.", (NUMBER_CHANGED,)),
    ],
)
def test_temperatures_compare_across_scales(a: str, b: str, expected: tuple[str, ...] | None) -> None:
    assert patterns(a, b) == expected


# ---- dimension adjectives, derivations of one root ------------------------------------------------------
def test_a_dimension_adjective_is_its_noun() -> None:
    assert patterns("Hallways must be at least 60 inches wide.", "The minimum hallway width is 4 feet.") == (
        NUMBER_CHANGED,
    )


def test_derivations_sharing_a_six_letter_root_are_one_word() -> None:
    s_a = Sentence(frozenset(["registr", "elect", "general"]), {}, {}, "")
    # "registr(ation)" / "register": all but two letters of the shorter key shared
    assert foreign(s_a, vocabulary({"register", "elect", "general"}), frozenset()) == []
    # "constraint" / "construct": six letters shared, too few of the longer word
    s_c = Sentence(frozenset(["constraint"]), {}, {}, "")
    assert foreign(s_c, vocabulary({"construct"}), frozenset()) == ["constraint"]


# ---- polarity: the clause that carries it, a denied predicate stated bare, covers / excludes ---------------
@pytest.mark.parametrize(
    "a, b",
    [
        (
            "These air filters are washable and do not require periodic replacement.",
            "Periodic replacement of these air filters is required.",
        ),
        (
            "Gift cards are sold at the front desk, but they cannot be refunded.",
            "Gift cards can be refunded at the front desk.",
        ),
        ("Opened software cannot be exchanged.", "Opened software can be exchanged within the usual period."),
        (
            "Flood damage to basements is covered under the home policy.",
            "The home policy excludes flood damage to basements.",
        ),
    ],
)
def test_polarity_flips_carried_by_one_clause_or_a_bare_predicate(a: str, b: str) -> None:
    assert patterns(a, b) == (NEGATION_FLIP,)


def test_a_noun_of_the_denied_verb_is_no_flip() -> None:
    assert patterns("Python 3.8 is no longer supported.", "Support for Python 3.8 ended in October 2024.") is None


# ---- scope frames and capitalised acronyms ----------------------------------------------------------------
@pytest.mark.parametrize(
    "a, b, expected",
    [
        # a scope frame ("In the US, ...") names the subject: two jurisdictions
        ("In the US, cider may contain up to 8.5% alcohol.", "In the UK, cider may contain up to 7.5% alcohol.", None),
        # the same frame on both sides: a changed value
        (
            "In the US, cider may contain up to 8.5% alcohol.",
            "In the US, cider may contain up to 7.5% alcohol.",
            (MAGNITUDE_ALTERED,),
        ),
    ],
)
def test_scope_frames(a: str, b: str, expected: tuple[str, ...] | None) -> None:
    assert patterns(a, b) == expected


def test_an_all_capital_word_that_is_a_glued_unit_is_an_acronym() -> None:
    toks = [t for t in tokenize("Shipping to the US takes 5 days; 20us of latency.") if t.kind in ("entity", "number")]
    assert [(t.text, t.kind) for t in toks] == [("US", "entity"), ("5 days", "number"), ("20us", "number")]
    assert toks[2].qty is not None and toks[2].qty.dim == "time"


def test_a_named_value_still_changes_under_the_same_frame() -> None:
    assert patterns(
        "In the EU, appeals are heard by the Tribunal.", "In the EU, appeals are heard by the Ombudsman."
    ) == (ENTITY_SUBSTITUTED,)
