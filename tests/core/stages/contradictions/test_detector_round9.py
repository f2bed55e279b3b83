"""The detector's ninth round (docs/decisions/detector-round9.md): the learned comparison proposes no polarity flip
between two sentences the rules' subject test reads as two subjects. One hand-written case with the near miss it
must keep; none of these sentences comes from a labelled corpus."""

from __future__ import annotations

import pytest

from crp_core.stages.contradictions.values import NEGATION_FLIP, learned_candidates, values_conflict
from tests.support.detector_cases import patterns


def _flip_proposed(a: str, b: str) -> bool:
    """Does the learned comparison weigh a polarity flip for the pair (read in either order)?"""
    return any(NEGATION_FLIP in c.patterns for c in (*learned_candidates(a, b), *learned_candidates(b, a)))


@pytest.mark.parametrize(
    ("a", "b"),
    [
        # a designator after the subject's noun names which group: two forms, two years, two halls
        ("Pupils in Form 5 may bring phones.", "Pupils in Form 2 may not bring phones."),
        ("Year 11 students may leave the school site at lunchtime.", "Year 9 students may not leave the school site."),
        ("Visitors to Hall 3 may take photographs.", "Photography is prohibited for visitors to Hall 8."),
    ],
)
def test_a_flip_between_two_named_subjects_is_no_learned_candidate(a: str, b: str) -> None:
    assert not _flip_proposed(a, b)
    assert values_conflict(a, b) is None


def test_a_flip_of_one_subject_stays_a_candidate() -> None:
    # the near misses: the same form, the same hall (the rules flag it), the same subject in other words (the
    # learned comparison weighs it)
    assert patterns("Pupils in Form 5 may bring phones.", "Pupils in Form 5 may not bring phones.") == (NEGATION_FLIP,)
    assert patterns(
        "Visitors to Hall 3 may take photographs.", "Photography is prohibited for visitors to Hall 3."
    ) == (NEGATION_FLIP,)
    assert _flip_proposed("Big cats are no longer used in the circus act.", "Big cats still appear in the circus act.")
