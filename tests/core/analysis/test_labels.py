"""Label marks hand-checked on the tiny suite of ``tests.support.suites`` (docs/decisions/labels.md).

Scenario ``s1`` at the defaults packs A, C, E, G, H1, H2 (in that order); B is suppressed by A, D and F
are gated (relevance 0). A smaller token budget or candidate_k moves facts to the other states."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crp_core.analysis.labels import (
    MARK_KINDS,
    STATES,
    LabelMark,
    LabelMarks,
    fact_state,
    label_marks,
)
from crp_core.analysis.metrics import scenario_metrics
from crp_core.config import CRPConfig
from crp_core.io.scenario import scenario_from_dict
from crp_core.model import Expectations, ExpectedConflict
from crp_core.pipeline import run_pipeline
from tests.support.factories import vectors_for
from tests.support.suites import corpus, scenario_docs

GATED_D = "gated: relevance 0.000 < cdr_min_relevance 0.55; connector candidate (1 hop(s)): bridge value 0"
GATED_F = "gated: relevance 0.000 < cdr_min_relevance 0.55"


@pytest.fixture(scope="module")
def world():
    c = corpus()
    s = scenario_from_dict(scenario_docs()["s1"])
    return c, s


def run(world, **overrides):
    c, s = world
    return run_pipeline(c, s, CRPConfig().with_overrides(overrides), vectors=vectors_for(s, c), now=s.now)


def test_s1_labels_at_the_defaults(world):
    result = run(world)
    assert [p.fact_id for p in result.envelope.order] == ["A", "C", "E", "G", "H1", "H2"]
    marks = label_marks(result, world[1].expect)
    assert marks.marks == (
        LabelMark("A", "EXPECTED WINNER", ("must_include", "expected winner over B"), "packed", 1,
                  "must_include; expected winner over B · packed at position 1"),
        LabelMark("C", "OK", ("must_include",), "packed", 2, "must_include · packed at position 2"),
        # a must_exclude fact that also loses an expected conflict: LEAK first, both labels in the reason
        LabelMark("E", "LEAK", ("must_exclude", "expected loser to F (winner gated)"), "packed", 3,
                  "must_exclude; expected loser to F (winner gated) · packed at position 3"),
        LabelMark("H1", "OK", ("expected tie with H2",), "packed", 5, "expected tie with H2 · packed at position 5"),
        LabelMark("H2", "OK", ("expected tie with H1",), "packed", 6, "expected tie with H1 · packed at position 6"),
        LabelMark("D", "MISSING", ("must_include",), "gated", None, f"must_include · not packed: {GATED_D}"),
        LabelMark("B", "OK", ("must_exclude", "expected loser to A"), "suppressed", None,
                  "must_exclude; expected loser to A · not packed: suppressed by A: authority 0.2040 < 0.6400 "
                  "(NUMBER_CHANGED)"),
        LabelMark("F", "MISSING", ("expected winner over E",), "gated", None,
                  f"expected winner over E · not packed: {GATED_F}"),
    )  # fmt: skip
    # E breaks two labels (must_exclude and expected loser to F): one mark, LEAK, and in the line one leak and one
    # wrong winner, as check's leaks and wrong_winners count them; the met part counts facts
    assert marks.summary() == "1 leak, 1 wrong winner, 2 missing · 1 expected winner, 4 OK"
    assert marks.counts() == {"LEAK": 1, "WRONG WINNER": 0, "MISSING": 2, "EXPECTED WINNER": 1, "OK": 4}
    assert marks.broken_labels == (("LEAK", 1), ("WRONG WINNER", 1), ("MISSING", 2))
    assert [m.fact_id for m in marks.unpacked()] == ["D", "F"]
    assert marks.kinds()["E"] == "LEAK" and marks.get("G") is None  # G carries no label
    assert marks.get("E").broken and marks.get("E").packed and not marks.get("B").broken


def test_wrong_winner_dropped_for_budget_and_unknown(world):
    """A token budget of 60 packs A, C, E, G (H1 and H2 dropped); the labels here are the test's own."""
    result = run(world, token_budget=60)
    assert [p.fact_id for p in result.envelope.order] == ["A", "C", "E", "G"]
    expect = Expectations(
        must_include=("H1", "ZZ"),
        conflicts=(ExpectedConflict("E", "F", "F"), ExpectedConflict("G", "B", "B")),
    )
    marks = label_marks(result, expect)
    assert marks.marks == (
        LabelMark("E", "WRONG WINNER", ("expected loser to F (winner gated)",), "packed", 3,
                  "expected loser to F (winner gated) · packed at position 3"),
        LabelMark("G", "WRONG WINNER", ("expected loser to B (winner suppressed)",), "packed", 4,
                  "expected loser to B (winner suppressed) · packed at position 4"),
        LabelMark("H1", "MISSING", ("must_include",), "dropped_for_budget", None,
                  "must_include · not packed (dropped for the token budget): selected but dropped: token budget "
                  "(tie group with H2: no fact of the group fits with the group's NOTE)"),
        LabelMark("ZZ", "MISSING", ("must_include",), "unknown", None,
                  "must_include · not packed: not in the knowledge base"),
        LabelMark("F", "MISSING", ("expected winner over E",), "gated", None,
                  f"expected winner over E · not packed: {GATED_F}"),
        LabelMark("B", "MISSING", ("expected winner over G",), "suppressed", None,
                  "expected winner over G · not packed: suppressed by A: authority 0.2040 < 0.6400 (NUMBER_CHANGED)"),
    )  # fmt: skip
    assert marks.summary() == "2 wrong winners, 4 missing"


def test_not_retrieved_and_scored(world):
    """candidate_k 3: stage 1 returns A, B, G; F is neither a candidate nor a connector candidate."""
    result = run(world, candidate_k=3)
    assert [p.fact_id for p in result.envelope.order] == ["A", "G"]
    assert fact_state(result, "F") == "not_retrieved" and fact_state(result, "C") == "scored"
    marks = label_marks(result, Expectations(must_include=("F", "C"), must_exclude=("A",)))
    assert marks.marks == (
        LabelMark("A", "LEAK", ("must_exclude",), "packed", 1, "must_exclude · packed at position 1"),
        LabelMark("F", "MISSING", ("must_include",), "not_retrieved", None, "must_include · not packed: not retrieved"),
        LabelMark("C", "MISSING", ("must_include",), "scored", None,
                  "must_include · not packed (scored, not selected): connector candidate (1 hop(s)): bridge value 0"),
    )  # fmt: skip
    assert marks.summary() == "1 leak, 2 missing"


def test_no_labels_no_marks(world):
    marks = label_marks(run(world), Expectations())
    assert marks == LabelMarks(()) and marks.summary() == "no labelled fact"
    assert marks.counts() == dict.fromkeys(MARK_KINDS, 0)


def test_all_met_summary(world):
    marks = label_marks(run(world), Expectations(must_include=("A",), must_exclude=("B",)))
    assert marks.summary() == "no label broken · 2 OK"


IDS = ("A", "B", "C", "D", "E", "F", "G", "H1", "H2", "ZZ")


@st.composite
def expectations(draw):
    include = draw(st.lists(st.sampled_from(IDS), unique=True, max_size=4))
    exclude = draw(st.lists(st.sampled_from(IDS), unique=True, max_size=4))
    pairs = draw(st.lists(st.tuples(st.sampled_from(IDS), st.sampled_from(IDS)), max_size=3))
    conflicts = []
    for a, b in pairs:
        if a != b:
            conflicts.append(ExpectedConflict(a, b, draw(st.sampled_from((a, b, None)))))
    return Expectations(must_include=tuple(include), must_exclude=tuple(exclude), conflicts=tuple(conflicts))


@pytest.fixture(scope="module")
def default_run(world):
    return run(world)


@settings(max_examples=60, deadline=None)
@given(expect=expectations())
def test_marks_agree_with_the_suite_metrics(default_run, expect):
    """Every labelled id gets one mark; the broken kinds are the suite metrics' counts, fact by fact."""
    marks = label_marks(default_run, expect)
    got = scenario_metrics(default_run, expect)
    assert sorted(m.fact_id for m in marks.marks) == sorted(expect.fact_ids())
    kinds = marks.kinds()
    assert {f for f, k in kinds.items() if k == "LEAK"} == set(got.leaks)
    assert set(got.missing) <= {f for f, k in kinds.items() if k == "MISSING"}
    assert {w.loser for w in got.wrong_winners} <= {f for f, k in kinds.items() if k in ("LEAK", "WRONG WINNER")}
    packed = set(got.envelope)
    for m in marks.marks:
        assert m.state in STATES and (m.state == "packed") == (m.fact_id in packed) == m.packed
        assert m.broken == (m.kind in ("LEAK", "WRONG WINNER", "MISSING"))


def test_below_the_anchor_budget(world):
    """Two anchors and no graph: C is scored, ranked 4th, and the outcome line says so (no state words repeated)."""
    result = run(world, envelope_fact_budget=2, graph_retrieval=False)
    assert [p.fact_id for p in result.envelope.order] == ["A", "H1"]
    marks = label_marks(result, Expectations(must_include=("C",)))
    assert marks.marks == (
        LabelMark(
            "C", "MISSING", ("must_include",), "scored", None,
            "must_include · not packed: not selected: CDR rank 4 of 7, below the anchor budget",
        ),
    )  # fmt: skip
