"""The ranking metrics of graded relevance (docs/decisions/suites.md §3): nDCG@10, MRR, precision@10 and
recall@10 hand-computed, their invariants, and their reading of a real run's envelope order."""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crp_core.analysis.evaluate import prepare_suite, run_suite
from crp_core.analysis.metrics import (
    METRIC_NAMES,
    RANKING_METRICS,
    ndcg_at,
    precision_at,
    recall_at,
    reciprocal_rank,
    scenario_metrics,
)
from crp_core.analysis.suite import load_suite
from crp_core.config import CRPConfig
from crp_core.model import Expectations
from tests.support.suites import corpus, scenario_docs, write_suite

LOG3 = math.log2(3)


def test_ndcg_by_hand():
    # ranked grades 3, 0, 2 against judged {3, 2, 1}:
    # DCG = (2^3 - 1)/log2(2) + 0/log2(3) + (2^2 - 1)/log2(4) = 7 + 0 + 1.5 = 8.5
    # ideal 3, 2, 1: 7 + 3/log2(3) + 1/log2(4) = 7 + 1.89279 + 0.5 = 9.39279
    assert ndcg_at([3, 0, 2], [3, 2, 1]) == pytest.approx(8.5 / (7 + 3 / LOG3 + 0.5))
    assert ndcg_at([3, 0, 2], [3, 2, 1]) == pytest.approx(0.90495, abs=1e-5)  # 8.5 / 9.3928
    # the ideal is over every graded fact, packed or not: one fact graded 3 alone packed, a 2 unpacked
    # DCG 7 / ideal (7 + 3/log2(3)) = 7 / 8.8928
    assert ndcg_at([3], [3, 2]) == pytest.approx(7 / (7 + 3 / LOG3))
    # k cuts both lists: @1 of [0, 3] against {3} is 0 / 7
    assert ndcg_at([0, 3], [3], k=1) == 0.0
    assert ndcg_at([1, 1], [1, 1]) == 1.0
    # nothing graded 1 or more: undefined
    assert ndcg_at([0, 0], [0, 0]) is None and ndcg_at([], []) is None
    # the 11th fact is past the cut: 10 zeros then a 3 against {3}
    assert ndcg_at([0] * 10 + [3], [3]) == 0.0


def test_mrr_by_hand():
    assert reciprocal_rank([0, 0, 1, 3]) == pytest.approx(1 / 3)  # first grade >= 1 at rank 3
    assert reciprocal_rank([2]) == 1.0
    assert reciprocal_rank([0] * 14 + [1]) == pytest.approx(1 / 15)  # the whole envelope, not the first 10
    assert reciprocal_rank([0, 0]) == 0.0 and reciprocal_rank([]) == 0.0


def test_precision_and_recall_at_10_by_hand():
    # 12 facts, relevant at ranks 1, 4, 11: precision@10 = 2/10; recall@10 = 2/3 of the 3 relevant
    ranked = [2, 0, 0, 1, 0, 0, 0, 0, 0, 0, 3, 0]
    assert precision_at(ranked) == pytest.approx(0.2)
    assert recall_at(ranked, 3) == pytest.approx(2 / 3)
    # 4 relevant judged, 1 never packed: recall@10 over all 4
    assert recall_at(ranked, 4) == pytest.approx(0.5)
    # a short envelope divides by what it holds: 2 relevant of 3 packed
    assert precision_at([1, 0, 3]) == pytest.approx(2 / 3)
    assert precision_at([]) == 0.0 and recall_at([], 2) == 0.0
    assert recall_at([1], 0) is None


grades = st.integers(min_value=0, max_value=3)


@settings(max_examples=200, deadline=None)
@given(judged=st.lists(grades, max_size=25), data=st.data())
def test_ranking_invariants(judged, data):
    """A ranking is a sub-list of the judged facts (in any order) plus facts not graded (0)."""
    picked = data.draw(st.lists(st.integers(0, max(len(judged) - 1, 0)), unique=True, max_size=len(judged)))
    ranked = [judged[i] for i in picked] if judged else []
    ranked += [0] * data.draw(st.integers(0, 5))
    ranked = data.draw(st.permutations(ranked))
    relevant = sum(1 for g in judged if g >= 1)
    n = ndcg_at(ranked, judged)
    if relevant == 0:
        assert n is None and recall_at(ranked, relevant) is None
        return
    assert n is not None and 0.0 <= n <= 1.0 + 1e-12
    assert ndcg_at(sorted(judged, reverse=True), judged) == 1.0  # the ideal order gives 1
    assert 0.0 <= reciprocal_rank(ranked) <= 1.0
    assert 0.0 <= precision_at(ranked) <= 1.0
    r = recall_at(ranked, relevant)
    assert r is not None and 0.0 <= r <= 1.0
    # every relevant fact in the first 10: recall@10 is 1
    if relevant <= 10:
        assert recall_at(sorted(judged, reverse=True), relevant) == 1.0


@pytest.fixture(scope="module")
def graded_run():
    docs = scenario_docs()
    docs["s1"]["expect"]["relevance"] = {"A": 3, "C": 2, "D": 2, "G": 1, "E": 0}
    suite = load_suite(write_suite(Path(tempfile.mkdtemp()) / "suite", docs))
    return run_suite(prepare_suite(corpus(), suite), CRPConfig())


def test_a_run_is_ranked_in_envelope_order(graded_run):
    s1 = graded_run.scenario("s1")
    assert s1.envelope == ("A", "C", "E", "G", "H1", "H2")
    assert s1.grades == (3, 2, 0, 1, 0, 0)  # E graded 0, H1 / H2 not graded
    # DCG = 7 + 3/log2(3) + 0 + 1/log2(5); ideal 3, 2, 2, 1: 7 + 3/log2(3) + 3/log2(4) + 1/log2(5)
    dcg = 7 + 3 / LOG3 + 1 / math.log2(5)
    assert s1.value("ndcg@10") == pytest.approx(dcg / (dcg + 1.5))
    assert s1.value("mrr") == 1.0  # A, graded 3, is first
    assert s1.value("precision@10") == pytest.approx(3 / 6)  # A, C, G of 6 packed
    assert s1.value("recall@10") == pytest.approx(3 / 4)  # D (graded 2) is not packed
    assert s1.relevant_missing == ("D",)
    # s2 has no relevance: every ranking metric undefined, left out of the summary
    s2 = graded_run.scenario("s2")
    assert all(s2.value(m) is None for m in RANKING_METRICS)
    summary = graded_run.metrics.summary["ndcg@10"]
    assert (summary.count, summary.worst_scenario, summary.total) == (1, "s1", None)
    assert summary.mean == pytest.approx(dcg / (dcg + 1.5))
    assert set(RANKING_METRICS) <= set(METRIC_NAMES)
    assert "ndcg@10.mean" in graded_run.metrics.flat() and "mrr.worst" in graded_run.metrics.flat()


def test_must_include_is_not_read_as_a_grade(graded_run):
    """Without ``relevance`` the ranking metrics are undefined, must_include or not (no implied grade 1)."""
    result = graded_run.result("s1")
    m = scenario_metrics(result, Expectations(must_include=("A", "C")), name="s1")
    assert m.recall == 1.0 and all(m.value(k) is None for k in RANKING_METRICS)
    # grades only of 0: nothing relevant, still undefined
    m0 = scenario_metrics(result, Expectations(relevance={"A": 0}), name="s1")
    assert all(m0.value(k) is None for k in RANKING_METRICS) and m0.grades[0] == 0
