"""Settings clamped to the data are said (issue 12; docs/decisions/hardening.md, "Clamping to the data"):
``PipelineResult.clamps``, the report's ``clamps`` key and one stderr warning each from the CLI."""

from __future__ import annotations

import json

import pytest

from crp_core.cli import main
from crp_core.config import CRPConfig
from crp_core.corpus.prepared import prepare_corpus
from crp_core.io.ckf import load_ckf
from crp_core.io.scenario import load_scenario
from crp_core.pipeline import data_clamps, run_pipeline
from crp_core.records import Clamp
from tests.support.cli_notes import without_missing_store_note
from tests.support.samples import synthetic_ckf_rows, synthetic_scenario

# 24 facts, 4 of them DELETED: 20 retrievable; the scenario's ResidualSet holds sq2 and sq3
RETRIEVABLE = 20


@pytest.fixture
def files(tmp_path):
    ckf = tmp_path / "kb.jsonl"
    ckf.write_text("".join(json.dumps(r) + "\n" for r in synthetic_ckf_rows()), encoding="utf-8")
    sc = tmp_path / "sc.json"
    sc.write_text(json.dumps({**synthetic_scenario(), "fanout_width": 5}), encoding="utf-8")
    return str(ckf), str(sc)


def test_values_above_the_data_are_listed_with_what_was_used(files, tmp_path):
    ckf, sc = files
    config = CRPConfig(candidate_k=10_000, graph_k=1_000, hnsw_ef_search=5)
    corpus = prepare_corpus(load_ckf(ckf), cache_dir=tmp_path / "cache", config=config)
    scenario = load_scenario(sc)
    assert data_clamps(corpus, scenario, config) == (
        Clamp(
            "candidate_k",
            10_000,
            RETRIEVABLE,
            "only 20 retrievable fact(s) (DELETED and QUARANTINED are never retrieved)",
        ),
        Clamp(
            "hnsw_ef_search",
            5,
            RETRIEVABLE,
            "the HNSW search needs ef_search >= the K it returns (candidate_k, 20 here)",
        ),
        Clamp("graph_k", 1_000, 19, "a fact has at most 19 other retrievable fact(s) as neighbours"),
        Clamp(
            "fanout_width", 5, 2, "the ResidualSet holds 2 sub-queries: one partition each, no k-means (SPEC-027 §1.4)"
        ),
    )
    result = run_pipeline(corpus, scenario, config)
    assert [c.key for c in result.clamps] == ["candidate_k", "hnsw_ef_search", "graph_k", "fanout_width"]
    assert result.fanout is not None and len(result.fanout.partitioned.partitions) == 2  # what the clamp says
    assert len(result.candidates.idx) <= RETRIEVABLE
    assert result.clamps[1].message == (
        "hnsw_ef_search 5 raised to 20: the HNSW search needs ef_search >= the K it returns (candidate_k, 20 here)"
    )


def test_values_within_the_data_are_not_clamped(files, tmp_path):
    ckf, sc = files
    config = CRPConfig(candidate_k=RETRIEVABLE, graph_k=RETRIEVABLE - 1, hnsw_ef_search=RETRIEVABLE)
    corpus = prepare_corpus(load_ckf(ckf), cache_dir=tmp_path / "cache", config=config)
    scenario = load_scenario(sc).replace(fanout_width=2)
    assert data_clamps(corpus, scenario, config) == ()
    # graph_k is not used without graph retrieval; a width of 0 or 1 is no fan-out at all
    off = config.replace(graph_k=1_000, graph_retrieval=False)
    assert data_clamps(corpus, scenario.replace(fanout_width=1), off) == ()


def test_the_cli_warns_on_stderr_and_the_report_carries_them(files, capsys):
    ckf, sc = files
    assert (
        main(
            ["run", "--ckf", ckf, "--scenario", sc, "--json", "--set", "candidate_k=10000", "--known-conflicts", "none"]
        )
        == 0
    )
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert [(c["key"], c["asked"], c["used"]) for c in report["clamps"]] == [
        ("candidate_k", 10_000, RETRIEVABLE),
        ("graph_k", 20, 19),
        ("fanout_width", 5, 2),
    ]
    assert report["config"]["candidate_k"] == 10_000  # the report keeps what was asked
    # a value asked for (candidate_k set, the scenario's width) is a warning; graph_k, its default brought to a
    # small CKF, is carried by the report and said nowhere else (as the dashboard's quiet line)
    asked = [c for c in report["clamps"] if c["key"] != "graph_k"]
    assert without_missing_store_note(err).splitlines() == [f"crp-inspect: warning: {c['message']}" for c in asked]
    assert main(["fanout", "--ckf", ckf, "--scenario", sc, "--width", "9", "--json"]) == 0
    out, err = capsys.readouterr()
    fan = json.loads(out)
    assert [(c["key"], c["asked"], c["used"]) for c in fan["clamps"]] == [
        ("candidate_k", 50, RETRIEVABLE),
        ("graph_k", 20, 19),
        ("fanout_width", 9, 2),
    ]
    assert "crp-inspect: warning: fanout_width 9 clamped to 2: the ResidualSet holds 2 sub-queries" in err
    assert "candidate_k" not in err and "graph_k" not in err  # defaults brought to the data: no warning
