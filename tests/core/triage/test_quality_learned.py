"""Detector quality reads the patterns with the detector as configured: with ``detector_learned`` off, a
pair only the learned comparison flags has no pattern to credit."""

from __future__ import annotations

from crp_core.decisions import Decision, DecisionSet
from crp_core.stages.contradictions.values import NUMBER_CHANGED, values_conflict
from crp_core.triage.quality import detector_quality
from tests.support.factories import fact, make_kb

# amounts swapped between two reworded labels: the rules miss it, the learned comparison flags it
# (tests/core/stages/contradictions/test_learned.py)
A = "Tickets cost 12 euros for adults and 6 euros for children."
B = "Children pay 12 euros and adults pay 6 euros."


def test_the_learned_switch_reaches_detector_quality():
    assert values_conflict(A, B, False) is None and values_conflict(A, B, True) is not None
    kb = make_kb([fact("a", A), fact("b", B)])
    ds = DecisionSet.from_decisions([Decision.accept("a", "b", winner="a", operator="op")])
    on, off = detector_quality(ds, kb, True), detector_quality(ds, kb, False)
    assert [p.patterns for p in on.pairs] == [(NUMBER_CHANGED,)]
    assert [p.patterns for p in off.pairs] == [()]
    # a decided pair the detector does not flag is no label: counted apart, not in the precision
    assert (on.confirmed, on.unflagged, on.precision) == (1, 0, 1.0)
    assert (off.confirmed, off.dismissed, off.unflagged, off.precision, len(off.pairs)) == (0, 0, 1, None, 1)
