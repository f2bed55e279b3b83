"""Domain rules the dashboard reads from crp_core instead of re-implementing them: the authority
winner an operator's "accept" records, the statuses a whole-CKF scan applies, a residual what-if."""

from __future__ import annotations

from crp_core import CRPConfig
from crp_core.model import Addressed, Scenario, SubQuery
from crp_core.records import Authority, ConflictPair, ValueConflict
from crp_core.stages.contradictions import authority_winner
from crp_core.triage import Decision, DecisionSet


def _pair(auth_a: float, auth_b: float) -> ConflictPair:
    a = Authority("A", "official_documentation", 0.8, auth_a / (0.8 * 0.8), 0.8, auth_a)
    b = Authority("B", "community", 0.75, auth_b / (0.75 * 0.6), 0.6, auth_b)
    return ConflictPair(
        "A", "B", 0.9, ("NUMBER_CHANGED",), ValueConflict(("NUMBER_CHANGED",), ()), {"A": a, "B": b}, ("A",), "B", False
    )


def test_authority_winner_is_the_higher_authority():
    assert authority_winner(_pair(0.64, 0.45), CRPConfig()) == "A"
    assert authority_winner(_pair(0.40, 0.45), CRPConfig()) == "B"


def test_authority_winner_is_none_within_the_tie_tolerance():
    assert authority_winner(_pair(0.5, 0.5 + 1e-10), CRPConfig()) is None
    # a wider tolerance makes a tie of a 0.01 margin
    assert authority_winner(_pair(0.50, 0.51), CRPConfig(authority_tie_tolerance=0.02)) is None
    assert authority_winner(_pair(0.50, 0.51), CRPConfig()) == "B"


def test_retrievable_marks_keep_active_and_stale_marks_only():
    ds = DecisionSet.from_decisions(
        [
            Decision.mark_status("A", "B", fact="A", status="STALE", operator="op"),
            Decision.mark_status("C", "D", fact="C", status="QUARANTINED", operator="op"),
            Decision.mark_status("E", "F", fact="E", status="DELETED", operator="op"),
            Decision.mark_status("G", "H", fact="G", status="ACTIVE", operator="op"),
        ]
    )
    assert ds.retrievable_marks() == {"A": "STALE", "G": "ACTIVE"}
    # every status in force on a CKF's facts: what every run and the whole-CKF scan apply
    assert ds.statuses_on({"A": 1, "C": 1, "E": 1}) == {"A": "STALE", "C": "QUARANTINED", "E": "DELETED"}
    # the facts of a pair a mark took out of retrieval, in the pair's order: why it is listed apart
    assert ds.out_of_retrieval("C", "E") == ("C", "E") and ds.out_of_retrieval("E", "C") == ("E", "C")
    assert ds.out_of_retrieval("A", "C") == ("C",) and ds.out_of_retrieval("A", "G") == ()
    # with each mark's status and the decision in force that set it
    ((fact, status, by),) = ds.retrieval_marks("A", "C")
    assert (fact, status) == ("C", "QUARANTINED") and by is ds.status_decisions["C"]
    assert ds.retrieval_marks("A", "G") == ()


def test_with_residual_addresses_what_leaves_the_residual_set():
    s = Scenario(
        query="q",
        sub_queries=(SubQuery("s1", "one"), SubQuery("s2", "two"), SubQuery("s3", "three")),
        addressed=(Addressed("s1", 0.5, 2),),
        fanout_width=0,
    )
    out = s.with_residual(["s3"], fanout_width=2, depth_weight=0.7)
    assert out.fanout_width == 2
    assert out.addressed == (Addressed("s1", 0.5, 2), Addressed("s2", 0.7, 2))
    assert [q.id for q in out.residual_set] == ["s3"]
    assert s.with_residual(["s2", "s3"], fanout_width=0, depth_weight=0.7) is s
