"""The Conflicts page's warning about near conflicts (crp_ui.conflict_run.near_conflicts_text)."""

from __future__ import annotations

from crp_ui.conflicts_view import near_conflicts_text
from tests.support.near_conflict_world import near_conflict_run


def test_the_warning_names_each_pair_and_the_way_to_act():
    run = near_conflict_run()
    (n,) = run.near_conflicts
    text = near_conflicts_text(run)
    assert text is not None and text.startswith(
        "1 pair(s) of the envelope read as a value conflict just below contradiction_similarity 0.85"
    )
    assert f"{n.fact_a} ↔ {n.fact_b} (cos {n.similarity:.4f}, NEGATION_FLIP)" in text
    # the way to act is where the page offers it: the queue does not hold a pair below the threshold
    assert "decide the pair in the triage queue" not in text
    assert "The triage queue holds only pairs above the threshold: decide each pair below (dismiss it" in text
    assert near_conflicts_text(near_conflict_run(near_conflict_margin=0.0)) is None
