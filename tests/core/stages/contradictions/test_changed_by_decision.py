"""``changed_by_decision``: whether an operator's decision changed what stage 4 did with a pair, the one rule the
before / after view, the Overview banner and the Conflicts page read ("changed this run").

On ``tiny_case`` (tests/support/sweep_case.py) the detector pairs P1 and P2 (cosine .9998, NUMBER_CHANGED) and
authority chooses P1 (.64 > .60)."""

from __future__ import annotations

import pytest

from crp_core import changed_by_decision
from crp_core.decisions import pair_key
from crp_core.pipeline import run_pipeline
from tests.support.sweep_case import tiny_case


def _pair(decisions, a: str, b: str):
    corpus, scen, config = tiny_case()
    r = run_pipeline(corpus, scen, config, decisions=decisions)
    (p,) = [p for p in r.resolution.pairs if {p.fact_a, p.fact_b} == {a, b}]
    return p, r.config


@pytest.mark.parametrize(
    ("kind", "winner", "changed"),
    [
        ("accept", None, False),  # authority decides, as it would have
        ("override", "P1", False),  # authority's own winner
        ("override", "P2", True),  # the other fact
        ("dismiss", None, True),  # left alone instead of arbitrated
    ],
)
def test_a_decision_on_a_pair_the_detector_found(kind, winner, changed):
    p, config = _pair({pair_key("P1", "P2"): {"kind": kind, "winner": winner}}, "P1", "P2")
    assert p.decision == kind and not p.asserted
    assert changed_by_decision(p, config) is changed


def test_no_decision_changes_nothing():
    p, config = _pair({}, "P1", "P2")
    assert p.decision is None and not changed_by_decision(p, config)


def test_an_accept_that_makes_the_pair_a_conflict_changed_the_run():
    # P1 and F1 are both selected (cosine .88 * .80 = .704, no pair of the detector's): the accept alone puts
    # the pair in stage 4
    p, config = _pair({pair_key("P1", "F1"): {"kind": "accept", "winner": None}}, "P1", "F1")
    assert p.asserted and p.decision == "accept" and changed_by_decision(p, config)
