"""Agreement between operators and the two-person review policy (crp_core.triage.agreement), with
every figure computed by hand."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crp_core.decisions import Decision
from crp_core.triage.agreement import (
    DISAGREEMENT,
    OPEN,
    SETTLED,
    cohen_kappa,
    decision_label,
    operator_agreement,
    percent_agreement,
    positions,
    review_status,
    review_statuses,
)


def dismiss(a: str, b: str, op: str) -> Decision:
    return Decision.dismiss(a, b, operator=op)


def win(a: str, b: str, winner: str, op: str, *, accept: bool = False) -> Decision:
    if accept:
        return Decision.accept(a, b, winner=winner, operator=op)
    return Decision.override(a, b, winner=winner, operator=op)


def test_labels_reduce_a_decision_to_its_position():
    assert decision_label(win("a", "b", "a", "x", accept=True)) == "winner a"
    assert decision_label(win("a", "b", "a", "x")) == "winner a"  # an accept and an override of a agree
    assert decision_label(Decision.accept("a", "b", operator="x")) == "tie"
    assert decision_label(dismiss("a", "b", "x")) == "dismiss"
    assert decision_label(Decision.mark_status("a", "b", fact="b", status="STALE", operator="x")) == "b STALE"


def test_the_latest_decision_of_each_operator_is_its_position():
    log = [win("a", "b", "a", "bob"), dismiss("a", "b", "alice"), dismiss("a", "b", "bob")]
    assert positions(log) == {"bob": "dismiss", "alice": "dismiss"}


def test_percent_agreement_and_kappa_by_hand():
    # p_o = 3/4; p_e = (0.5 * 0.25) + (0.5 * 0.75) = 0.5; kappa = (0.75 - 0.5) / 0.5 = 0.5
    a, b = ["x", "x", "y", "y"], ["x", "y", "y", "y"]
    assert percent_agreement(a, b) == 0.75
    assert cohen_kappa(a, b) == 0.5
    # complete agreement over two labels: kappa 1; systematic swap: p_o 0, p_e 0.5, kappa -1
    assert cohen_kappa(["x", "y"], ["x", "y"]) == 1.0
    assert cohen_kappa(["x", "y"], ["y", "x"]) == -1.0
    # one label used by both everywhere: p_e = 1, kappa undefined
    assert cohen_kappa(["x", "x"], ["x", "x"]) is None
    with pytest.raises(ValueError):
        percent_agreement(["x"], ["x", "y"])
    with pytest.raises(ValueError):
        cohen_kappa([], [])


def test_agreement_per_pair_of_operators_by_hand():
    log = [
        win("a1", "b1", "a1", "alice"),
        win("a2", "b2", "a2", "alice", accept=True),
        dismiss("a3", "b3", "alice"),
        dismiss("a4", "b4", "alice"),
        win("a1", "b1", "a1", "bob", accept=True),
        win("a2", "b2", "a2", "bob"),  # bob changes his mind on pair 2: his position is the dismissal below
        dismiss("a2", "b2", "bob"),
        dismiss("a3", "b3", "bob"),
        dismiss("a4", "b4", "bob"),
        win("a1", "b1", "b1", "carol"),
        dismiss("a9", "b9", "dave"),  # nobody else decided a9/b9: dave shares no pair
    ]
    got = {(g.operator_a, g.operator_b): g for g in operator_agreement(log)}
    assert list(got) == [("alice", "bob"), ("alice", "carol"), ("bob", "carol")]
    ab = got[("alice", "bob")]
    # alice: winner a1, winner a2, dismiss, dismiss; bob: winner a1, dismiss, dismiss, dismiss
    # p_o = 3/4; p_e = (1*1 + 1*0 + 2*3) / 16 = 7/16; kappa = (12/16 - 7/16) / (9/16) = 5/9
    assert (ab.shared, ab.agreed, ab.percent) == (4, 3, 0.75)
    assert ab.kappa == pytest.approx(5 / 9, abs=1e-15)
    assert ab.pairs == ("a1|b1", "a2|b2", "a3|b3", "a4|b4")
    ac = got[("alice", "carol")]  # one shared pair, different winners: p_o = 0, p_e = 0, kappa = 0
    assert (ac.shared, ac.agreed, ac.percent, ac.kappa) == (1, 0, 0.0, 0.0)


@pytest.mark.parametrize(
    ("log", "quorum", "want"),
    [
        ([], 2, OPEN),
        ([dismiss("a", "b", "alice")], 2, OPEN),
        ([dismiss("a", "b", "alice"), dismiss("a", "b", "alice")], 2, OPEN),  # one person twice is one vote
        ([dismiss("a", "b", "alice"), dismiss("a", "b", "bob")], 2, SETTLED),
        ([dismiss("a", "b", "alice"), win("a", "b", "a", "bob")], 2, DISAGREEMENT),
        ([dismiss("a", "b", "alice"), win("a", "b", "a", "bob"), dismiss("a", "b", "bob")], 2, SETTLED),
        ([win("a", "b", "a", "alice", accept=True), win("a", "b", "a", "bob")], 2, SETTLED),
        ([dismiss("a", "b", "alice"), dismiss("a", "b", "bob")], 3, OPEN),
        ([dismiss("a", "b", "alice"), win("a", "b", "a", "bob")], 1, SETTLED),  # single reviewer: latest wins
        ([], 1, OPEN),
    ],
)
def test_review_status(log, quorum, want):
    assert review_status(log, quorum) == want


def test_reverted_decisions_and_revert_entries_are_no_position():
    from dataclasses import replace

    log = [
        replace(dismiss("a", "b", "alice"), id=1),
        replace(win("a", "b", "a", "bob"), id=2),
        replace(Decision.revert("a", "b", reverts=2, operator="root", reason="wrong pair"), id=3),
        replace(dismiss("a", "b", "ALICE "), id=4),  # an older entry's spelling: the same operator
    ]
    assert positions(log) == {"alice": "dismiss"}
    assert review_status(log, 2) == OPEN  # bob's override was taken back: alice alone
    assert review_status(log[2:3], 1) == OPEN
    assert operator_agreement(log) == ()


def test_review_statuses_of_a_log_and_a_bad_quorum():
    log = [dismiss("a", "b", "alice"), win("c", "d", "c", "alice"), win("c", "d", "d", "bob")]
    assert review_statuses(log, 2) == {"a|b": OPEN, "c|d": DISAGREEMENT}
    with pytest.raises(ValueError, match="quorum must be at least 1"):
        review_status(log, 0)


labels = st.lists(st.tuples(st.sampled_from("xyz"), st.sampled_from("xyz")), min_size=1, max_size=30)


@given(labels)
def test_kappa_is_symmetric_at_most_one_and_one_only_for_equal_labels(pairs):
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    k = cohen_kappa(a, b)
    assert k == cohen_kappa(b, a)
    assert 0.0 <= percent_agreement(a, b) <= 1.0
    if k is not None:
        assert k <= 1.0 + 1e-12
        assert (abs(k - 1.0) < 1e-12) == (a == b)
