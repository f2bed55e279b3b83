"""The detector's eighth round (docs/decisions/detector-round8.md): fractions and minor units written after a measure
in words, "a factor of N", the period of a frequency adverb, two groups named by a negating prefix in the subject, a
negating prefix on a polarity word, and the learned comparison's modifier-swap candidate. One hand-written case per
rule with the near miss it must not flag or must keep; none of these sentences comes from a labelled corpus."""

from __future__ import annotations

from crp_core.stages.contradictions.candidates import FEATURE_NAMES
from crp_core.stages.contradictions.clauses import analyse, tokenize
from crp_core.stages.contradictions.lexicon import POLAR
from crp_core.stages.contradictions.modifiers import modifier_swap
from crp_core.stages.contradictions.values import (
    ENTITY_SUBSTITUTED,
    MAGNITUDE_ALTERED,
    NEGATION_FLIP,
    NUMBER_CHANGED,
    learned_candidates,
)
from tests.support.detector_cases import patterns


def _rules(a: str, b: str) -> tuple[str, ...] | None:
    """The patterns the rules alone name, checked in both orders."""
    return patterns(a, b, learned=False)


def _amounts(text: str) -> list[tuple[str, float, str]]:
    return [(t.text, t.qty.base, t.qty.unit) for t in tokenize(text) if t.qty is not None]


# ---- measures in words ------------------------------------------------------------------------------------------
def test_a_fraction_after_a_duration_adds_to_it() -> None:
    assert _amounts("The class runs for an hour and a quarter.") == [("an hour and a quarter", 1.25, "h")]
    assert _amounts("It takes two days and three quarters.") == [("two days and three quarters", 2.75, "d")]
    assert _amounts("It takes two days and a half.") == [("two days and a half", 2.5, "d")]
    # "and three quarter" (a plural count with a singular part) and "and a quarters" are no fractions
    assert _amounts("It takes two days and a quarters.")[0][1] == 2.0


def test_an_hour_and_a_quarter_is_75_minutes() -> None:
    a = "Each class runs for an hour and a quarter."
    assert _rules(a, "Each class runs for 75 minutes.") is None
    assert _rules(a, "Each class runs for 90 minutes.") == (NUMBER_CHANGED,)


def test_minor_units_after_an_amount_in_words() -> None:
    assert _amounts("The fare is three dollars and fifty cents.") == [("three dollars and fifty cents", 3.5, "USD")]
    assert _amounts("The fare is two pounds and 20 pence.") == [("two pounds and 20 pence", 2.2, "GBP")]
    a = "The basic fare is $3.50."
    assert _rules(a, "The basic fare is three dollars and fifty cents.") is None
    assert _rules(a, "The basic fare is three dollars and twenty cents.") == (NUMBER_CHANGED,)


def test_a_factor_of_n_is_a_multiplier() -> None:
    assert _amounts("Downtime fell by a factor of five.") == [("factor of five", 5.0, "x")]
    a = "The new pumps reduced energy use fivefold."
    assert _rules(a, "The new pumps reduced energy use by a factor of five.") is None
    assert _rules(a, "The new pumps reduced energy use by a factor of three.") == (MAGNITUDE_ALTERED,)
    assert _amounts("The five of us met.")[0][2] == ""  # no factor before it: a count


def test_a_frequency_adverb_is_the_middle_of_its_periods() -> None:
    a = "Fire drills must be held monthly."
    assert _rules(a, "Every month, the crew has to carry out a fire drill.") is None
    assert _rules(a, "Every week, the crew has to carry out a fire drill.") == (NUMBER_CHANGED,)
    assert (
        _rules("Fire drills must be held yearly.", "Every 12 months, the crew has to carry out a fire drill.") is None
    )


# ---- a negating prefix in the subject ---------------------------------------------------------------------------
def test_a_prefixed_subject_with_the_same_predicate_is_another_group() -> None:
    a = "Members can reserve lanes up to 5 days in advance."
    assert _rules(a, "Non-members can reserve lanes up to 2 days in advance.") is None
    assert _rules(a, "Members can reserve lanes up to 2 days in advance.") == (NUMBER_CHANGED,)


def test_a_prefixed_subject_with_another_predicate_stays_a_negation() -> None:
    a = "Unleaded fuel is mandatory for the hire boats."
    assert _rules(a, "Leaded fuel may be used in the hire boats.") == (NEGATION_FLIP,)
    assert _rules("Refunds are available.", "Refunds are unavailable.") == (NEGATION_FLIP,)


# ---- a negating prefix on a polarity word -----------------------------------------------------------------------
def test_a_prefixed_polarity_word_is_its_group_turned_round() -> None:
    toks = [t for t in tokenize("Glass bottles are disallowed on the terrace.") if t.kind == POLAR]
    assert [(t.key, t.sign) for t in toks] == [("#allow", -1)]
    a = "Glass bottles are allowed on the terrace."
    assert _rules(a, "Glass bottles are disallowed on the terrace.") == (NEGATION_FLIP,)
    assert (
        _rules("Glass bottles are disallowed on the terrace.", "Glass bottles are not allowed on the terrace.") is None
    )


def test_a_prefixed_polarity_word_before_a_noun_names_a_kind() -> None:
    assert not [t for t in tokenize("Store unopened jars in a cool place.") if t.kind == POLAR]
    assert _rules("Store unopened jars in a cool place.", "Unopened jars should be stored in a cool place.") is None


# ---- the modifier-swap candidate --------------------------------------------------------------------------------
def test_a_modifier_swapped_before_a_shared_noun_is_a_candidate() -> None:
    assert {"kind_mod", "mod_words"} <= set(FEATURE_NAMES)
    a = "The evening feed at Elm Farm is given in the brick barn."
    b = "Elm Farm's evening feed happens in the timber barn."
    da, db = analyse(a), analyse(b)
    mod = modifier_swap(da, db)
    assert mod is not None
    assert (da.tokens[mod[0]].text, db.tokens[mod[2]].text) == ("brick", "timber")
    cands = [c for c in learned_candidates(a, b) if c.features.get("kind_mod")]
    assert len(cands) == 1 and cands[0].patterns == (ENTITY_SUBSTITUTED,)
    assert cands[0].features["mod_words"] == 2.0


def test_no_modifier_swap_in_a_subject_or_a_stated_modifier() -> None:
    # the modifier opens the sentence (a subject: which thing), not a complement
    assert modifier_swap(analyse("Brick barns are cleaned daily."), analyse("Timber barns are cleaned daily.")) is None
    # the other text states the modifier too: it moved, it did not change
    a = analyse("The feed is given in the brick barn.")
    assert modifier_swap(a, analyse("In the timber barn, the brick feed is given.")) is None
