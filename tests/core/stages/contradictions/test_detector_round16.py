"""The detector's sixteenth round (docs/decisions/detector-round16.md): one test per error class fixed, each with the
near miss the change must keep. Hand-written sentences; none comes from a labelled corpus."""

from __future__ import annotations

from crp_core.stages.contradictions.lexicon import stem
from crp_core.stages.contradictions.values import (
    ENTITY_SUBSTITUTED,
    MAGNITUDE_ALTERED,
    NUMBER_CHANGED,
    learned_candidates,
    values_conflict,
)
from tests.support.detector_cases import patterns

PARKING = "Season ticket holders get 20% off parking."
COVER = "Students receive 25% off the cover charge."


def test_a_fraction_that_sizes_a_change_is_the_percentage_it_is() -> None:
    # "by a third", "by roughly half", "by two-thirds": the size of a change, compared with a percentage
    assert patterns(PARKING, "Parking is discounted by a third for season ticket holders.") == (MAGNITUDE_ALTERED,)
    waits = "Waiting times fell by 40% after the new rota."
    assert patterns(waits, "After the new rota, waiting times fell by roughly half.") == (MAGNITUDE_ALTERED,)
    cut = "The surcharge was cut by two-thirds last year."
    assert patterns(cut, "Last year the surcharge fell by 40%.") == (MAGNITUDE_ALTERED,)
    # near misses: the same share restated is no conflict; "a third party" and "half an hour" are no share
    assert values_conflict(PARKING, "Parking is discounted by a fifth for season ticket holders.") is None
    assert values_conflict("Waiting times fell by 50%.", "Waiting times fell by roughly half.") is None
    assert values_conflict("The audit was carried out by a third party.", "The audit was done by 20% of staff.") is None
    late = "The last tram was put back by half an hour."
    assert patterns(late, "The last tram was put back by 20 minutes.") == (NUMBER_CHANGED,)


def test_a_fraction_before_off_or_cheaper_is_a_discount_of_that_percentage() -> None:
    assert patterns(COVER, "Students get a third off the cover charge.") == (MAGNITUDE_ALTERED,)
    assert patterns(COVER, "For students the cover charge is one fifth cheaper.") == (MAGNITUDE_ALTERED,)
    # near miss: the same discount in words
    assert values_conflict(COVER, "Students get a quarter off the cover charge.") is None


def test_one_in_n_things_is_a_share_of_them() -> None:
    crates = "Inspectors sample one in four incoming crates."
    assert patterns("Inspectors sample 10% of incoming crates.", crates) == (MAGNITUDE_ALTERED,)
    # near misses: the same share is no conflict; "one in 2 days" is no share (a duration follows it)
    assert values_conflict("Inspectors sample 25% of incoming crates.", crates) is None
    assert values_conflict("The café opens one in 2 days.", "The café opens on 20% of days.") is None


def test_a_hyphenated_fraction_after_an_article_is_a_share() -> None:
    # "a one-quarter deposit" is a deposit of 25%; round 15 read the number 0.25 and compared nothing
    deposit = "A deposit of 50% is due on signing."
    assert patterns(deposit, "A one-quarter deposit is due on signing.") == (MAGNITUDE_ALTERED,)
    # near miss: the same share in words is no conflict
    assert values_conflict(deposit, "A one-half deposit is due on signing.") is None


def test_a_radiation_dose_is_one_value_in_sieverts_whatever_its_prefix() -> None:
    limit = "The yearly dose limit for aircrew is 6 mSv."
    assert values_conflict(limit, "The yearly dose limit for aircrew is 6,000 µSv.") is None
    assert values_conflict(limit, "The yearly dose limit for aircrew is 6 millisieverts.") is None
    # near miss: another dose is a changed number
    assert patterns(limit, "The yearly dose limit for aircrew is 1,000 µSv.") == (NUMBER_CHANGED,)


CHOIR = "Every member of the choir is re-auditioned every 2 years."


def test_an_every_rate_against_an_interval_stated_as_a_duration_is_a_learned_value_candidate() -> None:
    # "every 2 years" (a rate) and "at intervals of 3 years" (a duration): one interval in two forms, changed; the
    # rules leave the pair (the two sentences are worded apart), the learned comparison now has a candidate
    reworded = "The musical director re-auditions each chorister at intervals of 3 years."
    assert values_conflict(CHOIR, reworded, learned=False) is None
    assert patterns(CHOIR, reworded) == (NUMBER_CHANGED,)
    (cand,) = learned_candidates("Hoists are examined every 6 months.", "Each hoist is examined at 12-month intervals.")
    assert cand.patterns == (NUMBER_CHANGED,)
    (diff,) = cand.diffs  # the texts in the detector's canonical order
    assert {*diff.tokens_a, *diff.tokens_b} == {"6 months", "12-month"}
    # near misses: the same interval is no candidate, nor is how long a thing is kept ("for 12 months")
    assert learned_candidates(CHOIR, "The musical director re-auditions each chorister at intervals of 2 years.") == ()
    assert learned_candidates("Hoists are examined every 6 months.", "Inspection records are kept for 12 months.") == ()


BADGES = "Green-badged visitors may enter the lab; blue-badged visitors may enter the workshop."


def test_a_hyphenated_word_is_also_its_first_word_as_a_swap_item() -> None:
    # "green-badged" / "green badges": the item "green", paired with the workshop instead of the lab
    crossed = "Blue badges give access to the lab, and green badges give access to the workshop."
    assert values_conflict(BADGES, crossed, learned=False) is None
    assert patterns(BADGES, crossed) == (ENTITY_SUBSTITUTED,)
    # near miss: the same pairing in other words is no swap
    same = "Green badges give access to the lab, and blue badges give access to the workshop."
    assert not any(c.features.get("kind_swap") for c in learned_candidates(BADGES, same))
    assert values_conflict(BADGES, same) is None


SWIM = "Adult swim sessions cost £6 and child sessions cost £4."


def test_an_irregular_plural_is_its_noun() -> None:
    # "child" / "Children": one swap item, the two prices crossed
    assert stem("children") == stem("child") == "child"
    assert stem("people") == stem("person")
    crossed = "Children swim for £6 a session, adults for £4."
    assert values_conflict(SWIM, crossed, learned=False) is None
    assert patterns(SWIM, crossed) == (NUMBER_CHANGED,)
    # near miss: the same prices restated are no conflict
    assert values_conflict(SWIM, "Children swim for £4 a session, adults for £6.") is None


STONE = "The centre stone of the ring weighs 2 carats."


def test_a_carat_is_a_mass_of_a_fifth_of_a_gram() -> None:
    # 2 carats are 0.4 g: no conflict; 1 g is another mass (round 15 read "carats" as a counted word and compared
    # nothing)
    assert values_conflict(STONE, "The centre stone of the ring weighs 0.4 grams.") is None
    assert patterns(STONE, "The centre stone of the ring weighs 1 gram.") == (NUMBER_CHANGED,)
    # near miss: the purity of gold written two ways stays one value
    assert values_conflict("The band is 18-carat gold.", "The band is 18ct gold.") is None


PONIES = "Ponies are retired from riding at 20 years of age."


def test_the_log_ratio_of_two_values_of_one_dimension_is_read_across_their_units() -> None:
    # 20 years against 30 months: 240 / 30 = 8, |log10 8| = 0.90, in steps of a half 1.0 (round 15: 0, the units
    # differ); against 200 weeks: 20 years are about 1,043 weeks, |log10 5.2| = 0.72 -> 0.5
    (cand,) = learned_candidates(PONIES, "Ponies start light work at 30 months of age.")
    assert cand.features["log_ratio"] == 1.0
    (cand,) = learned_candidates(PONIES, "Ponies start light work at 200 weeks of age.")
    assert cand.features["log_ratio"] == 0.5
    # near miss: one unit, as before: 25 / 20 = 1.25, |log10 1.25| = 0.10 -> 0
    (cand,) = learned_candidates(PONIES, "Ponies stop riding work at 25 years of age.")
    assert cand.features.get("log_ratio", 0.0) == 0.0


def test_a_hyphenated_name_stated_by_its_parts_is_no_learned_substitution() -> None:
    # "Basic-plan" / "the Basic plan", "Gold-tier" / "Gold": one name; round 15 proposed a substitution of it
    assert (
        learned_candidates("The Basic-plan fee covers ten listings.", "On the Basic plan the fee covers ten listings.")
        == ()
    )
    assert (
        learned_candidates("Members on the Gold-tier plan get free delivery.", "Gold members get free delivery.") == ()
    )
    # near miss: a part the other text does not state keeps the candidate ("Lyon" against "Geneva")
    (cand,) = learned_candidates("The Paris-Lyon train takes 2 hours.", "The train from Paris to Geneva takes 2 hours.")
    assert cand.patterns == (ENTITY_SUBSTITUTED,)
