"""The detector's third round of rules (docs/decisions/detector.md): wider rewordings, temperatures,
dimension adjectives, roots shared by derivations, polarity carried by one clause or by a denied
predicate, scope frames and scopes changed with their value. One hand-written case per rule with the
near miss it must not flag; none of these sentences comes from a labelled corpus."""

from __future__ import annotations

import pytest

from crp_core.stages.contradictions.clauses import tokenize
from crp_core.stages.contradictions.loose import Sentence, aligned, foreign, vocabulary
from crp_core.stages.contradictions.values import (
    DATE_SHIFTED,
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


# ---- subjects: owners, bounded groups ------------------------------------------------------------------------
def test_an_owner_named_in_the_other_text_is_the_same_subject() -> None:
    # "Sow" (an imperative read as a name) against "Beans": beans are named in both texts
    assert patterns(
        "Sow bean seeds about two weeks after the last frost.",
        "Beans should be sown roughly four weeks after the last frost.",
    ) == (NUMBER_CHANGED,)


@pytest.mark.parametrize(
    "a, b, expected",
    [
        # a bounded group with another changed value: which group
        (
            "Members under 18 pay a joining fee of 10% of the annual rate.",
            "Members over 65 pay a joining fee of 5% of the annual rate.",
            None,
        ),
        # the bound alone changes: the threshold of one group
        ("Children under 12 travel free.", "Children under 10 travel free.", (NUMBER_CHANGED,)),
        # a bound at the start of the sentence is no group
        ("At least 25 volunteers must attend.", "At least 30 volunteers must attend.", (NUMBER_CHANGED,)),
    ],
)
def test_bounded_groups(a: str, b: str, expected: tuple[str, ...] | None) -> None:
    assert patterns(a, b) == expected


# ---- word forms: hyphenated words, irregular verbs, glued releases, prefix exceptions ----------------------------
def test_a_hyphenated_word_is_present_where_its_parts_are() -> None:
    assert patterns(
        "The council must collect the bins within 5 days of the tenant moving out.",
        "Within 3 days after move-out, the bins have to be collected by the council.",
    ) == (NUMBER_CHANGED,)


def test_irregular_past_forms_are_their_verb() -> None:
    assert patterns("The council does not pay for tree removal.", "Tree removal is paid for by the council.") == (
        NEGATION_FLIP,
    )


def test_a_name_glued_to_its_release_is_the_name_and_release_apart() -> None:
    assert (
        patterns("On Alpine 3.19, the default ruby is ruby3.2.", "Alpine 3.19 ships Ruby 3.2 as its default ruby.")
        is None
    )


def test_an_inflected_prefix_exception_is_no_negation() -> None:
    toks = tokenize("Student discounts apply; disasters are rare; the interpreter is fast.")
    assert [(t.kind, t.sub) for t in toks if t.text in ("discounts", "disasters", "interpreter")] == [("word", "")] * 3


# ---- units ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "a, b, expected",
    [
        ("Each cable is 2 m long.", "Each cable is 200 cm long.", None),
        ("Each cable is 2 m long.", "Each cable is 150 cm long.", (NUMBER_CHANGED,)),
        ("The tank holds 1.5 m³ of water.", "The tank holds 1500 litres of water.", None),
        ("Each bottle holds 75 cl.", "Each bottle holds 0.7 litres.", (NUMBER_CHANGED,)),
        ("The job times out after 5m.", "The job times out after 300 seconds.", None),
    ],
)
def test_metres_and_volumes(a: str, b: str, expected: tuple[str, ...] | None) -> None:
    assert patterns(a, b) == expected


# ---- polarity: qualifiers, lists, superlatives ---------------------------------------------------------------------
@pytest.mark.parametrize(
    "a, b",
    [
        # the clause matched to a qualifier of the other sentence ("even with ...")
        (
            "Pets are allowed with the manager's written approval.",
            "Pets are prohibited, even with the manager's written approval.",
        ),
        # a name stated only in the qualifier
        (
            "CE-marked portable heaters are permitted in the dormitory.",
            "Portable heaters are not permitted in the dormitory, even if CE-marked.",
        ),
    ],
)
def test_a_qualifier_does_not_hide_a_flip(a: str, b: str) -> None:
    assert patterns(a, b) == (NEGATION_FLIP,)


@pytest.mark.parametrize(
    "a, b",
    [
        # the same list in another order before one negation
        (
            "Kites, drones and fireworks are not permitted on the pier.",
            "Fireworks, kites and drones are not permitted on the pier.",
        ),
        # "no other ... as" states a superlative
        ("Lake Baikal is the deepest lake in the world.", "No other lake in the world is as deep as Lake Baikal."),
    ],
)
def test_reorders_and_superlatives_are_no_flip(a: str, b: str) -> None:
    assert patterns(a, b) is None


# ---- symbols ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "a, b, expected",
    [
        (
            "The default shell is set to zsh on new accounts.",
            "The default shell is set to fish on new accounts.",
            (ENTITY_SUBSTITUTED,),
        ),
        (
            "Dependencies are installed with pnpm in CI.",
            "Dependencies are installed with yarn in CI.",
            (ENTITY_SUBSTITUTED,),
        ),
        # common words in that place: another thing, not a symbol
        ("Clean the kitchen filter every week.", "Clean the bathroom filter every week.", None),
    ],
)
def test_lower_case_symbols(a: str, b: str, expected: tuple[str, ...] | None) -> None:
    assert patterns(a, b) == expected


# ---- numbers in words ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, dim, seconds_or_count",
    [
        ("The session lasts a half hour.", "time", 1800.0),
        ("Book a half-day slot.", "time", 43200.0),
        ("Bring two dozen cups.", "", 24.0),
        ("Bring a dozen cups.", "", 12.0),
    ],
)
def test_halves_and_dozens(text: str, dim: str, seconds_or_count: float) -> None:
    q = [t.qty for t in tokenize(text) if t.qty is not None]
    assert [(x.dim, x.readings) for x in q] == [(dim, ((seconds_or_count, seconds_or_count),))]


def test_a_half_hour_is_thirty_minutes() -> None:
    assert patterns("Late returns are charged £2 per half hour.", "Late returns are charged £2 per 30 minutes.") is None
    assert patterns("The tour lasts a half hour.", "The tour lasts 45 minutes.") == (NUMBER_CHANGED,)


def test_a_word_moved_next_to_a_shared_word_is_no_substitution() -> None:
    # "emergency" stands where "after-hours" stood, but the first text says "emergency" too
    assert patterns(
        "Emergency after-hours repairs are handled by the Northgate depot.",
        "After hours, emergency repairs go to the Southgate depot to be handled.",
    ) == (ENTITY_SUBSTITUTED,)
    # another word in the slot, absent from the first text: another thing
    assert patterns("The pump warm-up timeout is 5 seconds.", "The pump warm-up period is 50 seconds.") is None


# ---- designators ----------------------------------------------------------------------------------------------------
def test_a_model_designation_is_no_duration_and_a_designator_no_amount() -> None:
    toks = [
        t for t in tokenize("Four Vulcan 2D boosters lift the Atlas 5 core stage.") if t.kind in ("number", "entity")
    ]
    assert [(t.text, t.kind) for t in toks] == [
        ("Four", "number"),
        ("Vulcan", "entity"),
        ("2D", "entity"),
        ("Atlas", "entity"),
        ("5", "number"),
    ]
    assert patterns(
        "Five Vulcan 2D boosters lift the Atlas 5 core stage.",
        "The core stage of Atlas 5 is lifted by three Vulcan 2D boosters.",
    ) == (NUMBER_CHANGED,)


def test_midnight_after_to_or_and_is_a_clock_time() -> None:
    assert patterns("The bar serves from 6 pm to midnight.", "The bar serves from 6 pm to 12 am.") is None
    assert patterns("Quiet hours run from 10 pm to midnight.", "Quiet hours run from 10 pm to 11 pm.") == (
        NUMBER_CHANGED,
    )


def test_derivations_count_as_shared_words() -> None:
    # "register" / "registr(ation)": two exact words shared of five, three with the derivation
    a = frozenset(["deadlin", "elect", "general", "register", "vot"])
    b = frozenset(["clos", "elect", "general", "registr", "voter"])
    sa, sb = Sentence(a, {}, {}, ""), Sentence(b, {}, {}, "")
    assert aligned(sa, sb, vocabulary(set(a)), vocabulary(set(b)), frozenset())
    c = frozenset(["clos", "elect", "general", "count", "poll"])  # no derivation: two of five shared
    assert not aligned(sa, Sentence(c, {}, {}, ""), vocabulary(set(a)), vocabulary(set(c)), frozenset())


@pytest.mark.parametrize(
    "a, b, expected",
    [
        ("Parking at the depot is free for staff.", "Staff pay for parking at the depot.", (NEGATION_FLIP,)),
        (
            "Residents on the Assist tariff are no longer charged for collection.",
            "Assist tariff residents pay collection charges.",
            (NEGATION_FLIP,),
        ),
        # a payment that states a value: the value is compared, not the polarity
        ("Staff pay £2 for parking at the depot.", "Staff pay £3 for parking at the depot.", (NUMBER_CHANGED,)),
    ],
)
def test_paying_is_being_charged(a: str, b: str, expected: tuple[str, ...]) -> None:
    assert patterns(a, b) == expected


def test_years_old_is_an_age_that_compares_with_a_plain_number() -> None:
    assert patterns("Applicants must be at least 18 years old.", "Applicants must be at least 21.") == (NUMBER_CHANGED,)
    assert patterns("Applicants must be at least 18 years old.", "Applicants must be 18 or older.") is None


@pytest.mark.parametrize(
    "a, b, expected",
    [
        (
            "Lost passes must be reported to Campus Security and then to Brightway support.",
            "Lost passes must be reported to Campus Security and then to the council's parking office.",
            (ENTITY_SUBSTITUTED,),
        ),
        (
            "Spills in the lab are cleaned with Virkon.",
            "Spills in the lab are cleaned with sodium hypochlorite.",
            (ENTITY_SUBSTITUTED,),
        ),
        # common words on both sides and no name: which thing
        ("Spills in the lab are cleaned with warm water.", "Spills in the lab are cleaned with soapy water.", None),
    ],
)
def test_a_name_against_a_noun_phrase_after_a_preposition(a: str, b: str, expected: tuple[str, ...] | None) -> None:
    assert patterns(a, b) == expected


@pytest.mark.parametrize(
    "a, b, expected",
    [
        # a permission granted with a modal against its denial
        (
            "Kites are not allowed anywhere on the beach.",
            "Kites may be flown in marked zones of the beach.",
            (NEGATION_FLIP,),
        ),
        ("Kites are allowed anywhere on the beach.", "Kites may be flown in marked zones of the beach.", None),
        # a modal against another polarity group is no permission
        ("Tickets are not refundable after the show.", "Tickets can be exchanged after the show.", None),
    ],
)
def test_a_modal_grants_a_permission(a: str, b: str, expected: tuple[str, ...] | None) -> None:
    assert patterns(a, b) == expected


def test_scheduled_and_expected_frame_the_statement() -> None:
    assert patterns(
        "Harbour Lane is scheduled to reopen to cyclists on 4 May.",
        "Harbour Lane is expected to reopen to cyclists on 11 May.",
    ) == (DATE_SHIFTED,)
