"""Tuning page, Suite tab, with AppTest: a suite with graded relevance shows crp_core's ranking metrics
per scenario (as numbers with their definition as help), their summary rows, nDCG@10 in the headline
and each envelope fact's grade (docs/decisions/suites.md §3)."""

from __future__ import annotations

import json

import pytest

from crp_core.analysis.evaluate import prepare_suite, run_suite
from crp_core.analysis.suite import load_suite
from crp_core.config import CRPConfig
from crp_core.corpus.prepared import prepare_corpus
from crp_core.io.ckf import load_ckf
from crp_core.io.scenario import load_scenario
from crp_core.pipeline import run_pipeline
from tests.support.pages import frame_with, run_page

RANKING = ["ndcg@10", "mrr", "precision@10", "recall@10"]


def test_suite_tab_shows_the_ranking_metrics(ui_env):
    scen = ui_env / "scenarios"
    kb = load_ckf(str(ui_env / "knowledge_base.jsonl"))
    corpus = prepare_corpus(kb)
    s = load_scenario(str(scen / "demo.json"))
    env = [p.fact_id for p in run_pipeline(corpus, s, CRPConfig(), now=s.now).envelope.order]
    absent = next(f.fact_id for f in kb.facts if f.fact_id not in env)
    doc = json.loads((scen / "demo.json").read_text(encoding="utf-8"))
    # the second packed fact graded 3, the first 1, one never packed 2: not the ideal order
    doc["expect"] = {"relevance": {env[1]: 3, env[0]: 1, absent: 2}}
    (scen / "demo.json").write_text(json.dumps(doc, indent=1), encoding="utf-8")
    ref = run_suite(prepare_suite(corpus, load_suite(scen)), CRPConfig()).metrics.scenario("demo")
    assert 0 < ref.value("ndcg@10") < 1 and ref.value("mrr") == 1.0

    at = run_page("tuning", params={"tab": "Suite"})
    per = frame_with(at, "scenario", *RANKING)
    row = per.set_index("scenario").loc["demo"]
    assert [row[c] for c in RANKING] == pytest.approx([ref.value(c) for c in RANKING])
    assert row["graded 1+ not in the first 10"] == f"{absent} (2)"
    summary = frame_with(at, "metric", "mean", "worst", "definition").set_index("metric")
    assert summary.loc["ndcg@10", "mean"] == pytest.approx(ref.value("ndcg@10"))
    assert [m.value for m in at.metric if m.label == "nDCG@10 (mean)"] == [f"{ref.value('ndcg@10'):.2f}"]
    detail = frame_with(at, "position", "fact_id", "grade", "labels")
    grades = dict(zip(detail["fact_id"], detail["grade"]))
    assert (grades[env[0]], grades[env[1]], grades[absent]) == (1, 3, 2)
    assert "graded relevant, NOT PACKED" in set(detail["labels"])
    # the ranking columns are configured: three decimals, the metric's definition as help
    table = next(d for d in at.dataframe if "ndcg@10" in d.value.columns and "scenario" in d.value.columns)
    config = json.loads(table.proto.columns)
    assert config["ndcg@10"]["type_config"]["format"] == "%.3f"
    assert "nDCG" in config["ndcg@10"]["help"]
