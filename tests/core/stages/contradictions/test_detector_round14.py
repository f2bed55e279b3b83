"""The detector's fourteenth round (docs/decisions/detector-round14.md): one test per error class fixed, each with the
near miss the change must keep. Hand-written sentences; none comes from a labelled corpus."""

from __future__ import annotations

from crp_core.stages.contradictions.clauses import analyse
from crp_core.stages.contradictions.modifiers import narrowed_nouns
from crp_core.stages.contradictions.values import NEGATION_FLIP, NUMBER_CHANGED, learned_candidates, values_conflict
from tests.support.detector_cases import patterns

HOLDERS = "Season ticket holders may park in the north car park for 4 hours."
GOODS = "Goods trains through Marsh Junction are restricted to 25 mph."


def test_two_subjects_that_share_no_word_get_no_learned_value_candidate() -> None:
    # each sentence opens with a subject none of whose words the other text states: the hours are two groups'
    coaches = "Visiting coaches are allowed to park in the north car park for 2 hours."
    assert learned_candidates(HOLDERS, coaches) == ()
    assert values_conflict(HOLDERS, coaches) is None
    staff = "Kitchen staff must wash their hands every 30 minutes."
    assert learned_candidates(staff, "Volunteers serving food should wash their hands every 60 minutes.") == ()
    # near misses: a subject word the other text states (even derived) keeps the candidate, and the change
    (kept,) = learned_candidates(HOLDERS, "Ticket holders are allowed to park in the north car park for 2 hours.")
    assert kept.patterns == (NUMBER_CHANGED,)
    assert patterns(HOLDERS, "Holders of a season ticket may park in the north car park for 2 hours.") == (
        NUMBER_CHANGED,
    )
    # a sentence with no modal, be, have or do reads no subject: the candidate stays
    assert learned_candidates(staff, "Volunteers serving food wash their hands every 60 minutes.") != ()


def test_a_modifier_on_each_side_of_a_shared_noun_narrows_it_to_another_thing() -> None:
    # "goods" / "express" before the noun both sentences open with: two kinds of train, each with its own speed;
    # the learned value candidate carries it (narrowed) and the shipped weights no longer accept the change
    express = "Express trains through Marsh Junction may travel at 75 mph."
    (value,) = learned_candidates(GOODS, express)
    assert value.patterns == (NUMBER_CHANGED,) and value.features["narrowed"] == 1.0
    assert values_conflict(GOODS, express) is None
    # in a complement too ("for the *coarse* preset" / "The *detail* preset")
    coarse = "Layer height for the coarse preset is 0.32 mm."
    detail = "The detail preset uses a 0.08 mm layer height."
    assert learned_candidates(coarse, detail)[0].features["narrowed"] == 1.0
    # its verdict is the weights': round 20's (docs/decisions/detector-round20.md, "What moved") accept it (0.53),
    # the opposed kinds whose rows weighed "narrowed" down being no candidates now
    # near misses: the same modifier on both sides is the same thing, and its changed value stays a conflict
    same = "Through Marsh Junction, goods trains may travel at 75 mph."
    assert not narrowed_nouns(analyse(GOODS), analyse(same))
    assert patterns(GOODS, same) == (NUMBER_CHANGED,)
    assert patterns(coarse, "The coarse preset uses a 0.08 mm layer height.") == (NUMBER_CHANGED,)


def test_a_narrowing_modifier_is_one_the_other_text_does_not_state() -> None:
    # a modifier on one side only, or one the other text states elsewhere, narrows nothing
    assert not narrowed_nouns(analyse(GOODS), analyse("Trains through Marsh Junction may travel at 75 mph."))
    assert not narrowed_nouns(
        analyse(GOODS), analyse("Express trains through Marsh Junction may overtake goods services.")
    )
    # a modifier in a complement after a preposition and a determiner, on each side
    assert narrowed_nouns(
        analyse("Berths at the outer quay cost £9 a night."), analyse("On the inner quay pontoons, berths cost £14.")
    )


def test_the_learned_flip_reads_a_modifier_narrowing_a_shared_noun_too() -> None:
    # "commercial" / "recreational" before the noun both sentences open with: each polarity is another kind of
    # boat's; round 14 weighed it as the polarity candidate's feature narrowed_flip, and from round 19 no polarity
    # candidate is proposed for it (docs/decisions/detector-round19.md, change 13)
    commercial = "Commercial fishing boats need a radio licence."
    recreational = "Recreational fishing boats do not need a radio licence."
    assert learned_candidates(commercial, recreational) == ()
    assert values_conflict(commercial, recreational) is None
    assert (
        values_conflict(
            "Outdoor swimming pools must have a lifeguard on duty.",
            "Indoor swimming pools are not required to have a lifeguard on duty.",
        )
        is None
    )
    # near misses: the same modifier on both sides is the rules' flip; a restated subject narrows nothing
    assert patterns(commercial, "Commercial fishing boats do not need a radio licence.") == (NEGATION_FLIP,)
    (same,) = learned_candidates(
        "Guided cave tours require a helmet.", "A helmet is not required on guided cave tours."
    )
    assert same.features["narrowed_flip"] == 0.0
