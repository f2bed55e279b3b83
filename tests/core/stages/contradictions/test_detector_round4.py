"""The detector's fourth round of rules (docs/decisions/detector-rewordings.md, "Round 4"): typed value roles
across reworded sentences and their guards, a clock time as a point in time and a number, a polarity word
against a bare assertion, the negating suffix ``-less``, more units and synonym concepts. One hand-written
case per rule with the near miss it must not flag; none of these sentences comes from a labelled corpus."""

from __future__ import annotations

from crp_core.stages.contradictions.clauses import analyse, tokenize
from crp_core.stages.contradictions.lexicon import negated_base
from crp_core.stages.contradictions.typed import acronym_keys, typed_diffs
from crp_core.stages.contradictions.values import (
    DATE_SHIFTED,
    ENTITY_SUBSTITUTED,
    MAGNITUDE_ALTERED,
    NEGATION_FLIP,
    NUMBER_CHANGED,
)
from tests.support.detector_cases import patterns


def typed(a: str, b: str) -> list[tuple[str, tuple[str, ...], tuple[str, ...]]]:
    """The typed-role rule alone: (pattern, tokens a, tokens b) of each diff."""
    return [(d.pattern, d.tokens_a, d.tokens_b) for d in typed_diffs(analyse(a), analyse(b))]


# ---- typed value roles: one value of a type on each side, the attribute named with other words ---------
def test_one_mass_on_each_side_of_a_rewording_is_compared() -> None:
    a, b = "The rated capacity of hoist 2 is 500 kg.", "Hoist 2 is rated for 0.8 tonnes."
    assert typed(a, b) == [(NUMBER_CHANGED, ("500 kg",), ("0.8 tonnes",))]
    assert patterns(a, b) == (NUMBER_CHANGED,)
    assert patterns(a, "Hoist 2 is rated for 0.5 tonnes.") is None  # the same mass in another unit


def test_one_temperature_in_another_scale_is_compared() -> None:
    a = "The outdoor pool's water is heated to 27 °C."
    assert typed(a, "Water in the outdoor pool is kept at 86 °F.") == [(NUMBER_CHANGED, ("27 °C",), ("86 °F",))]
    assert typed(a, "Water in the outdoor pool is kept at 80.6 °F.") == []


def test_a_scope_changed_with_the_typed_value_pairs_nothing() -> None:
    assert typed("A 200-seat hall is hired at a 15% deposit.", "A 400-seat hall is hired at a 25% deposit.") == []


def test_words_of_their_own_on_both_sides_are_two_attributes() -> None:
    assert typed("The trailer's tow bar weighs 40 kg.", "The trailer's maximum nose load is 75 kg.") == []


def test_a_name_on_one_side_only_scopes_the_typed_value() -> None:
    assert (
        typed("The rated capacity of hoist 2 is 500 kg.", "Hoist 2 is rated for 0.8 tonnes in the Leeds depot.") == []
    )


def test_a_capitalised_first_word_is_no_scoping_name() -> None:
    # "Note" opens the sentence with a capital: too weak a name to scope the value; "Leeds" is a name
    a = "The rated capacity of hoist 2 is 500 kg."
    assert typed(a, "Note that hoist 2 is rated for 0.8 tonnes.") == [(NUMBER_CHANGED, ("500 kg",), ("0.8 tonnes",))]
    assert typed(a, "Hoist 2 at Leeds is rated for 0.8 tonnes.") == []


def test_a_denial_against_an_assertion_pairs_no_typed_value() -> None:
    assert (
        typed(
            "Swimmers aged 14 need a signed waiver for 30 minutes.",
            "Swimmers do not need a signed waiver for 45 minutes.",
        )
        == []
    )


def test_a_value_both_texts_state_is_part_of_the_subject() -> None:
    # "2026" on both sides names the regatta; the one date left on each side is the typed value
    assert typed(
        "Entries for the 2026 regatta must be received by 3 April 2026.",
        "Send your 2026 regatta entry no later than 10 April 2026.",
    ) == [(DATE_SHIFTED, ("3",), ("10",))]


def test_one_name_on_each_side_in_the_same_statement_is_substituted() -> None:
    a = "Appeals go to the chief steward, Ana Ruiz."
    assert typed(a, "Appeals are handled by the chief steward, Tom Becker.") == [
        (ENTITY_SUBSTITUTED, ("Ana", "Ruiz"), ("Tom", "Becker"))
    ]
    assert typed(a, "Appeals are handled by the chief steward, Ana Ruiz.") == []
    # two names the other text lacks on one side: no single name to compare
    assert typed("Appeals go to the chief steward, Ana Ruiz, or Tom Becker.", "Appeals go to Lee Park.") == []


# ---- a clock time is a point in time and a number ----------------------------------------------------------
def test_a_changed_clock_time_is_a_changed_number() -> None:
    # a time of day is no date (round 18: the writing guide's DATE_SHIFTED is a date or a year)
    assert patterns("The canteen opens at 7 am.", "The canteen opens at 8 am.") == (NUMBER_CHANGED,)
    assert patterns("The canteen opens at 7 am.", "The canteen opens at 07:00.") is None


# ---- a polarity word on one side against a bare assertion ------------------------------------------------
def test_a_ban_against_a_permission_granted_with_may_is_a_flip() -> None:
    assert patterns(
        "Umbrellas are prohibited in the stadium for all spectators.",
        "Spectators may bring umbrellas into the stadium.",
    ) == (NEGATION_FLIP,)
    assert (
        patterns("Umbrellas are prohibited in the stadium.", "Spectators may not bring umbrellas into the stadium.")
        is None
    )


# ---- the negating suffix -less ----------------------------------------------------------------------------
def test_the_suffix_less_negates_its_base() -> None:
    assert negated_base("cordless") == "cord"
    assert negated_base("barbless") == "barb"
    assert negated_base("unless") == ""  # an exception
    assert negated_base("regardless") == ""
    assert negated_base("less") == ""  # no base


def test_a_suffix_flip_against_the_base_is_a_negation_flip() -> None:
    assert patterns("Cordless drills are required on the scaffold.", "Corded drills may be used on the scaffold.") == (
        NEGATION_FLIP,
    )
    assert (
        patterns("Cordless drills are required on the scaffold.", "Cordless drills are mandatory on the scaffold.")
        is None
    )


# ---- units ----------------------------------------------------------------------------------------------
def test_speeds_in_metres_per_second_and_millimetres_per_minute() -> None:
    assert patterns("The conveyor belt speed is 2 m/s.", "The conveyor belt runs at a speed of 9 km/h.") == (
        NUMBER_CHANGED,
    )
    assert patterns("The conveyor belt speed is 2 m/s.", "The conveyor belt runs at a speed of 7.2 km/h.") is None
    assert patterns("Feed rate: 30 mm/s.", "Feed at 1800 mm/min.") is None
    assert patterns("Feed rate: 30 mm/s.", "Feed at 2400 mm/min.") == (NUMBER_CHANGED,)


def test_a_spaced_t_after_a_number_is_tonnes() -> None:
    assert patterns("The pallet limit is 1.2 t.", "The pallet limit is 1,500 kg.") == (NUMBER_CHANGED,)
    assert patterns("The pallet limit is 1.2 t.", "The pallet limit is 1,200 kg.") is None


# ---- synonym concepts ---------------------------------------------------------------------------------
def test_opens_and_begins_name_one_start() -> None:
    assert patterns("The ski season opens on 1 December 2025.", "The ski season begins on 8 December 2025.") == (
        DATE_SHIFTED,
    )


def test_stop_and_end_name_one_end() -> None:
    a = "Security patches for the v2 router stop on 31 May 2026."
    assert patterns(a, "Security patches for the v2 router end on 31 May 2027.") == (DATE_SHIFTED,)
    assert patterns(a, "Security patches for the v2 router end on 31 May 2026.") is None


# ---- a share of a whole written as a fraction is a percentage ----------------------------------------------
def test_a_fraction_of_a_whole_is_a_percentage() -> None:
    a = "Members who cancel late forfeit 50% of the deposit."
    assert patterns(a, "Members who cancel late forfeit half of the deposit.") is None
    assert patterns(a, "Members who cancel late forfeit a quarter of the deposit.") == (MAGNITUDE_ALTERED,)
    assert (
        patterns(
            "The tank may be filled to 75% of its volume.", "The tank may be filled to three quarters of its volume."
        )
        is None
    )


def test_a_fraction_of_a_time_unit_stays_a_duration() -> None:
    assert patterns("The briefing lasts 45 minutes.", "The briefing lasts three quarters of an hour.") is None


# ---- an interval: a duration against a rate of one per duration ---------------------------------------------
def test_a_duration_and_an_every_rate_are_one_interval() -> None:
    a = "The goods lift is serviced every 4 weeks."
    assert typed(a, "The goods lift's maintenance interval is 6 weeks.") == [
        (NUMBER_CHANGED, ("4 weeks",), ("6 weeks",))
    ]
    assert typed(a, "The goods lift's maintenance interval is 28 days.") == []
    # a rate that is no "every" rate is no interval
    assert typed("The goods lift is serviced twice a week.", "The goods lift's maintenance interval is 6 weeks.") == []


# ---- fractions written as one character -------------------------------------------------------------------
def test_a_vulgar_fraction_is_its_value() -> None:
    assert patterns("Rest the dough for 1½ hours.", "Rest the dough for 90 minutes.") is None
    assert patterns("Rest the dough for 1½ hours.", "Rest the dough for 2 hours.") == (NUMBER_CHANGED,)
    assert patterns("Add ¾ cup of sugar.", "Add 0.75 cup of sugar.") is None
    assert patterns("Add ¾ cup of sugar.", "Add 0.5 cup of sugar.") == (NUMBER_CHANGED,)


# ---- number words joined by "and", battery charge -------------------------------------------------------
def test_and_before_a_hyphenated_number_word_continues_the_number() -> None:
    a = "The deposit is £475."
    assert patterns(a, "A deposit of four hundred and seventy-five pounds is taken.") is None
    assert patterns(a, "A deposit of four hundred and sixty-five pounds is taken.") == (NUMBER_CHANGED,)


def test_milliamp_hours_and_amp_hours_are_one_charge() -> None:
    assert patterns("The spare battery holds 1,500 mAh.", "The spare battery holds 1.5 Ah.") is None
    assert patterns("The spare battery holds 1,500 mAh.", "The spare battery holds 1.8 Ah.") == (NUMBER_CHANGED,)


# ---- acceptable / unacceptable join the permission group ------------------------------------------------
def test_acceptable_is_a_permission() -> None:
    a = "Using a phone while refuelling is unacceptable."
    assert patterns(a, "Using a phone while refuelling is acceptable.") == (NEGATION_FLIP,)
    assert patterns(a, "Using a phone while refuelling is prohibited.") is None


# ---- acronyms spelled by the first letters of the other text's words -------------------------------------
def test_an_acronym_and_its_words_are_one_attribute() -> None:
    a = "MTOW of the trainer is 1.1 t."
    assert acronym_keys(analyse(a), analyse("The trainer's maximum take-off weight is 1,200 kg.")) == frozenset(
        ["mtow", "maximum", "take-off", "weight"]
    )
    assert typed(a, "The trainer's maximum take-off weight is 1,200 kg.") == [
        (NUMBER_CHANGED, ("1.1 t",), ("1,200 kg",))
    ]
    assert typed(a, "The trainer's maximum take-off weight is 1,100 kg.") == []
    # letters that spell no run of the other text's words: no acronym, the name scopes the value
    assert acronym_keys(analyse(a), analyse("The trainer's empty weight is 1,200 kg.")) == frozenset()
    assert typed(a, "The trainer's empty weight is 1,200 kg.") == []


# ---- a duty imposed with "must" against a denied requirement ---------------------------------------------
def test_a_duty_imposed_with_must_flips_against_a_denied_requirement() -> None:
    b = "Skaters must wear helmets in the skate park."
    assert patterns("Helmets are not required in the skate park.", b) == (NEGATION_FLIP,)
    assert patterns("Helmets are optional in the skate park.", b) == (NEGATION_FLIP,)
    assert patterns("Helmets are required in the skate park.", b) is None


# ---- linked polarity groups: included is not billed -------------------------------------------------------
def test_included_against_charged_is_a_flip() -> None:
    b = "Bed linen is charged on top of the weekly rent."
    assert patterns("Bed linen is included in the weekly rent.", b) == (NEGATION_FLIP,)
    assert patterns("Bed linen is excluded from the weekly rent.", b) is None  # excluded and charged agree
    # an allowance with an amount is a scope: a charge beyond it is no flip
    assert (
        patterns(
            "The weekly rent includes up to 2 sets of bed linen.",
            "Extra bed linen is charged on top of the weekly rent.",
        )
        is None
    )


def test_yards_are_a_length() -> None:
    assert patterns("The practice range is shot at 20 yards.", "The practice range is shot at 18.29 metres.") is None
    assert patterns("The practice range is shot at 20 yards.", "The practice range is shot at 20 metres.") == (
        NUMBER_CHANGED,
    )


def test_an_approximate_a_unit_is_one_unit() -> None:
    a = "The battery runs for about 36 hours on a full charge."
    assert patterns(a, "A full charge lasts roughly a day and a half.") is None
    assert patterns(a, "A full charge lasts around a day.") == (NUMBER_CHANGED,)


def test_welcome_is_a_permission_and_waived_a_fee_not_charged() -> None:
    assert patterns("Cyclists are welcome on the towpath.", "No cyclists on the towpath.") == (NEGATION_FLIP,)
    assert patterns("Cyclists are welcome on the towpath.", "Cyclists are allowed on the towpath.") is None
    assert patterns("The booking fee is waived for members.", "Members are charged the booking fee.") == (
        NEGATION_FLIP,
    )
    assert patterns("The booking fee is waived for members.", "The booking fee is free for members.") is None
    assert patterns("The booking fee is waived for members.", "For members we waive the booking fee.") is None


def test_a_prefixed_word_against_its_base_in_a_hyphenated_word() -> None:
    assert patterns("The Lumo 3 housing is fully water-sealed.", "The Lumo 3 housing is unsealed against rain.") == (
        NEGATION_FLIP,
    )
    assert patterns("The Lumo 3 housing is fully water-sealed.", "The Lumo 3 housing is sealed against rain.") is None


def test_a_capitalised_word_that_ends_a_label_is_a_name() -> None:
    assert [t.sub for t in tokenize("Venue for the spring fair: Guildhall.") if t.text == "Guildhall"] == ["name"]
    assert [t.sub for t in tokenize("Venue: Guildhall and more.") if t.text == "Guildhall"] == ["weak"]
    assert patterns("The spring fair is held in the Corn Exchange.", "Venue for the spring fair: Guildhall.") == (
        ENTITY_SUBSTITUTED,
    )
    assert patterns("The spring fair is held in the Guildhall.", "Venue for the spring fair: Guildhall.") is None


# ---- designators are context: which thing a clause is about -------------------------------------------
def test_values_swapped_between_designated_things_are_changed() -> None:
    a = "Court 1 opens at 08:00 and Court 2 at 09:00."
    assert patterns(a, "Court 1 opens at 09:00 and Court 2 at 08:00.") == (NUMBER_CHANGED,)
    assert patterns(a, "Court 2 opens at 09:00 and Court 1 at 08:00.") is None


def test_values_swapped_between_attributive_durations_are_changed() -> None:
    a = "The one-year bond pays 3.1% and the three-year bond 3.6%."
    assert patterns(a, "The three-year bond pays 3.1%, the one-year bond 3.6%.") == (MAGNITUDE_ALTERED,)
    assert patterns(a, "The three-year bond pays 3.6%, the one-year bond 3.1%.") is None


def test_automatic_and_manual_are_opposite() -> None:
    assert patterns("Backups of the ledger are automatic.", "Backups of the ledger are manual.") == (NEGATION_FLIP,)
    assert patterns("Backups of the ledger are automatic.", "Backups of the ledger are automated.") is None


def test_a_count_of_one_thing_is_typed_by_it() -> None:
    a = "Two letters of recommendation are required."
    assert typed(a, "Applicants must provide three letters of recommendation.") == [
        (NUMBER_CHANGED, ("Two",), ("three",))
    ]
    assert typed(a, "Applicants must provide two letters of recommendation.") == []
    # counts of different things are a scope, not a typed value
    assert typed("Two referees sign the form.", "Three witnesses sign the form.") == []


def test_an_affix_flip_in_sentences_cut_into_clauses_differently_is_no_moved_negation() -> None:
    a = "The gel is suitable for children who are over six."
    assert patterns(a, "The gel is unsuitable for children, even those who are over six.") == (NEGATION_FLIP,)
    assert patterns(a, "The gel is suitable for children, even those who are over six.") is None
