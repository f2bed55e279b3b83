"""The Suite tab's frames with graded relevance (crp_ui.suite_view): the ranking metrics appear as
columns, summary rows and sweep panels only when a scenario of the suite has ``expect.relevance``, each
envelope fact carries its grade, and graded facts left out are listed (docs/decisions/suites.md §3)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pandas as pd
import pytest

from crp_core.analysis.evaluate import prepare_suite, run_suite, sweep_suite
from crp_core.analysis.suite import load_suite
from crp_core.config import CRPConfig
from crp_ui import suite_view as sv
from tests.support.suites import corpus, scenario_docs, write_suite

RANKING = ["ndcg@10", "mrr", "precision@10", "recall@10"]


def _prepared(graded: bool):
    docs = scenario_docs()
    if graded:
        docs["s1"]["expect"]["relevance"] = {"A": 3, "C": 2, "D": 2, "G": 1, "E": 0}
    return prepare_suite(corpus(), load_suite(write_suite(Path(tempfile.mkdtemp()) / "suite", docs)))


@pytest.fixture(scope="module")
def graded():
    p = _prepared(True)
    return p, run_suite(p, CRPConfig())


@pytest.fixture(scope="module")
def plain():
    p = _prepared(False)
    return p, run_suite(p, CRPConfig())


def test_scenario_frame_has_the_ranking_columns_only_with_relevance(graded, plain):
    _, run = graded
    df = sv.scenario_frame(run.metrics).set_index("scenario")
    assert all(c in df.columns for c in RANKING) and sv.RELEVANT_MISSING in df.columns
    s1 = run.metrics.scenario("s1")
    assert [df.loc["s1", c] for c in RANKING] == pytest.approx([s1.value(c) for c in RANKING])
    assert df.loc["s1", "precision@10"] == pytest.approx(0.5) and df.loc["s1", sv.RELEVANT_MISSING] == "D (2)"
    assert pd.isna(df.loc["s2", "ndcg@10"])
    bare = sv.scenario_frame(plain[1].metrics)
    assert not set(RANKING) & set(bare.columns) and sv.RELEVANT_MISSING not in bare.columns
    assert sv.ranked(run.metrics) and not sv.ranked(plain[1].metrics) and sv.ranked(None, run.metrics)


def test_summary_rows_and_delta_columns(graded, plain):
    _, run = graded
    summary = sv.summary_frame(run.metrics).set_index("metric")
    assert summary.loc["ndcg@10", "mean"] == pytest.approx(run.metrics.summary["ndcg@10"].mean)
    assert summary.loc["mrr", "scenarios"] == 1 and summary.loc["mrr", "better"] == "higher"
    assert not set(RANKING) & set(sv.summary_frame(plain[1].metrics)["metric"])
    # a baseline with labels is enough for the rows to show
    assert "ndcg@10" in set(sv.summary_frame(plain[1].metrics, run.metrics)["metric"])
    delta = sv.scenario_delta_frame(run, run)
    assert "ndcg@10" in delta.columns and "ndcg@10 (base)" in delta.columns


def test_scenario_detail_carries_the_grades(graded, plain):
    _, run = graded
    d = sv.scenario_detail(run.metrics.scenario("s1"))
    assert list(d.columns) == ["position", "fact_id", "recency", "grade", "labels"]
    assert list(d["fact_id"]) == ["A", "C", "E", "G", "H1", "H2", "D"]
    assert list(d["grade"]) == [3, 2, 0, 1, 0, 0, 2]
    # D is a missing must_include too: one row, with its grade
    assert d.iloc[-1]["labels"] == "must_include MISSING"
    assert "grade" not in sv.scenario_detail(plain[1].metrics.scenario("s1")).columns


def test_a_graded_fact_never_packed_gets_its_own_row(graded):
    p, _ = graded
    docs = scenario_docs()
    docs["s1"]["expect"]["relevance"] = {"A": 3, "F": 1}  # F (cos 0 to the query) is never packed
    suite = load_suite(write_suite(Path(tempfile.mkdtemp()) / "suite", docs))
    run = run_suite(prepare_suite(p.corpus, suite), CRPConfig())
    d = sv.scenario_detail(run.metrics.scenario("s1"))
    row = d[d["fact_id"] == "F"].iloc[0]
    assert row["labels"] == "graded relevant, NOT PACKED" and row["grade"] == 1 and pd.isna(row["position"])


def test_sweep_panels_show_the_ranking_metrics_only_with_relevance(graded, plain):
    def titles(p):
        sw = sweep_suite(p, CRPConfig(), "cdr_min_relevance", [0.55, 0.72])
        return [a.text for a in sv.suite_sweep_figure(sw).layout.annotations if "is better" in a.text]

    with_labels = titles(graded[0])
    # neither suite labels not_conflicts: false_conflicts is not drawn (sv.LABELLED_ONLY)
    labelled_only = len(sv.LABELLED_ONLY)
    assert "ndcg@10 (higher is better)" in with_labels and len(with_labels) == len(sv.SWEEP_METRICS) - labelled_only
    without = titles(plain[0])
    assert "ndcg@10 (higher is better)" not in without and len(without) == len(sv.SWEEP_METRICS) - 4 - labelled_only
    assert not any(t.startswith("false_conflicts") for t in with_labels + without)


def test_the_suite_tables_show_false_conflicts_only_where_a_scenario_labels_them(tmp_path):
    """A suite labelling A / B as no conflict (stage 4 flags it in s1): the per-scenario table has the
    false_conflicts column and the falsely flagged pair, the summary its row; an unlabelled suite neither."""
    docs = scenario_docs()
    docs["s1"]["expect"] = {"not_conflicts": [{"fact_a": "A", "fact_b": "B"}]}
    run = run_suite(prepare_suite(corpus(), load_suite(write_suite(tmp_path / "s", docs))), CRPConfig())
    frame = sv.scenario_frame(run.metrics)
    assert frame.set_index("scenario").loc["s1", "false_conflicts"] == 1
    assert frame.set_index("scenario").loc["s1", "falsely flagged pairs"] == "A / B"
    assert "false_conflicts" in set(sv.summary_frame(run.metrics)["metric"])
    plain = run_suite(prepare_suite(corpus(), load_suite(write_suite(tmp_path / "p"))), CRPConfig())
    assert "false_conflicts" not in sv.scenario_frame(plain.metrics).columns
    assert "false_conflicts" not in set(sv.summary_frame(plain.metrics)["metric"])
