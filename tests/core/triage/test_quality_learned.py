"""Detector quality reads the patterns with the detector as configured: with ``detector_learned`` off, a
pair only the learned comparison flags has no pattern to credit."""

from __future__ import annotations

from crp_core.config import CRPConfig
from crp_core.decisions import Decision, DecisionSet
from crp_core.stages.contradictions.values import NUMBER_CHANGED, values_conflict
from crp_core.triage.quality import detector_quality
from tests.support.factories import fact, make_kb

# amounts swapped between two reworded labels: the rules miss it, the learned comparison flags it
# (tests/core/stages/contradictions/test_learned.py)
A = "Tickets cost 12 euros for adults and 6 euros for children."
B = "Children pay 12 euros and adults pay 6 euros."


def test_the_learned_switch_reaches_detector_quality():
    """The configuration's own ``detector_learned`` says how the detector reads the pairs (no second
    argument to say it apart from the configuration); the defaults read them with the learned comparison."""
    assert values_conflict(A, B, False) is None and values_conflict(A, B, True) is not None
    kb = make_kb([fact("a", A), fact("b", B)])
    ds = DecisionSet.from_decisions([Decision.accept("a", "b", winner="a", operator="op")])
    on, off = detector_quality(ds, kb, CRPConfig()), detector_quality(ds, kb, CRPConfig(detector_learned=False))
    assert [p.patterns for p in detector_quality(ds, kb).pairs] == [(NUMBER_CHANGED,)]
    assert [p.patterns for p in on.pairs] == [(NUMBER_CHANGED,)]
    assert [p.patterns for p in off.pairs] == [()]
    # a decided pair the detector does not flag is no label: counted apart, not in the precision
    assert (on.confirmed, on.unflagged, on.precision) == (1, 0, 1.0)
    assert (off.confirmed, off.dismissed, off.unflagged, off.precision, len(off.pairs)) == (0, 0, 1, None, 1)


def test_an_override_of_authoritys_own_winner_overrules_nothing():
    """ "The port is 2379" (official documentation, 0.80 x 1 x 0.80 = 0.64) against "2380" (community, 0.75 x 1 x
    0.60 = 0.45), ages unknown: authority picks P1. An override naming P1 confirms the run and is not listed as
    overruled (a walk-through read it there); one naming P2 overrules; a dismissal always does."""
    from datetime import UTC, datetime

    kb = make_kb(
        [
            fact("P1", "The etcd client port is 2379.", source_type="official_documentation"),
            fact("P2", "The etcd client port is 2380.", source_type="community"),
            fact("Q1", "The backup runs every 30 minutes.", source_type="internal"),
            fact("Q2", "The backup runs every 60 minutes.", source_type="internal"),
        ]
    )
    now = datetime(2026, 6, 1, tzinfo=UTC)

    def overruled(*decisions):
        q = detector_quality(DecisionSet.from_decisions(list(decisions)), kb, CRPConfig(), now)
        return [(p.fact_a, p.kind, p.winner) for p in q.overruled]

    assert overruled(Decision.override("P1", "P2", winner="P1", operator="op")) == []
    assert overruled(Decision.override("P1", "P2", winner="P2", operator="op")) == [("P1", "override", "P2")]
    # a tie by authority: any override chooses against it
    assert overruled(Decision.override("Q1", "Q2", winner="Q1", operator="op")) == [("Q1", "override", "Q1")]
    assert overruled(Decision.dismiss("P1", "P2", operator="op")) == [("P1", "dismiss", None)]
