"""First start without the model: the CLI paths and the dashboard's import of crp_core import neither
torch, sentence-transformers, transformers nor ONNX Runtime on the sample (its facts and scenarios
ship their embeddings; token counts come from ``tokenizer.json``), checked in a fresh interpreter with
``-X importtime`` and an empty ``CRP_CACHE_DIR``; ``--help`` imports no pipeline at all."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import REPO_ROOT
from tests.support.report_compare import assert_same_report

ROOT = REPO_ROOT
KB = "sample_ckf/knowledge_base.jsonl"
SCENARIO = "sample_ckf/scenarios/etcd_upgrade.json"
MODEL_MODULES = ("torch", "sentence_transformers", "transformers", "onnxruntime")


def _imported(args: list[str], cache: Path, *, module: bool = True) -> tuple[set[str], str, int]:
    """(top-level modules imported, stdout, exit status) of ``python -X importtime [-m crp_core.cli] args``."""
    env = {**os.environ, "CRP_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    cmd = [sys.executable, "-X", "importtime"] + (["-m", "crp_core.cli"] if module else []) + args
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    names = set()
    for line in p.stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            names.add(line.rsplit("|", 1)[1].strip().split(".")[0])
    assert "import time:" in p.stderr
    return names, p.stdout, p.returncode


def test_run_on_the_sample_loads_no_model_and_reports_the_golden_result(tmp_path):
    names, out, rc = _imported(["run", "--ckf", KB, "--scenario", SCENARIO, "--json"], tmp_path / "empty-cache")
    assert rc == 0
    assert not names & set(MODEL_MODULES), sorted(names & set(MODEL_MODULES))
    assert "tokenizers" in names  # the token counts of the envelope, from tokenizer.json
    golden = json.loads((ROOT / "tests" / "data" / "golden" / "run_etcd_upgrade.json").read_text(encoding="utf-8"))
    assert_same_report(json.loads(out), golden)
    assert not (tmp_path / "empty-cache" / "embeddings").exists()  # nothing was embedded


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["run", "--help"],
        ["check", "--help"],
        ["tune", "--help"],
        ["validate", KB, "--scenario", SCENARIO],
    ],
    ids=["help", "run-help", "check-help", "tune-help", "validate"],
)
def test_light_paths_import_no_pipeline(tmp_path, args):
    names, _, rc = _imported(args, tmp_path)
    assert rc == 0
    heavy = names & {*MODEL_MODULES, "sklearn", "scipy", "pandas", "optuna", "hnswlib", "tokenizers"}
    assert not heavy, sorted(heavy)


@pytest.mark.parametrize(
    "args",
    [
        ["conflicts", "--ckf", KB, "--json", "--top", "3"],
        ["check", "--ckf", KB, "--suite", "sample_ckf/scenarios/workload", "--json"],
        ["tune", "--ckf", KB, "--suite", "sample_ckf/scenarios/workload", "--trials", "2", "--json"],
    ],
    ids=["conflicts", "check", "tune"],
)
def test_corpus_paths_load_no_model(tmp_path, args):
    names, out, rc = _imported(args, tmp_path / "cache")
    assert rc in (0, 1)  # check / tune exit 1 when a threshold breaks (the sample's defaults do, on purpose)
    assert out.strip().startswith(("{", "["))
    assert not names & set(MODEL_MODULES), sorted(names & set(MODEL_MODULES))


def test_the_dashboards_import_of_crp_core_loads_no_model(tmp_path):
    code = (
        "import crp_core, crp_core.cli\n"
        "from crp_core import CRPConfig, load_ckf, load_scenario, prepare_corpus, run_pipeline, scan_ckf\n"
        "from crp_core.corpus.embedding import default_embedder, embedder_for\n"
        "embedder_for(crp_core.MODEL_ID)\n"
    )
    names, _, rc = _imported(["-c", code], tmp_path, module=False)
    assert rc == 0
    assert not names & set(MODEL_MODULES), sorted(names & set(MODEL_MODULES))


def test_a_cold_run_on_the_sample_reads_its_partitions_from_the_seed_table(tmp_path):
    """etcd_upgrade fans out (its ResidualSet is k-means partitioned): with an empty cache the labels
    come from the package's seed table, so scikit-learn is not imported and nothing is written."""
    cache = tmp_path / "empty-cache"
    names, out, rc = _imported(["run", "--ckf", KB, "--scenario", SCENARIO, "--json"], cache)
    assert rc == 0 and "sklearn" not in names
    fanout = json.loads(out)["fanout"]
    assert fanout["rule"] == "k-means" and len(fanout["partitions"]) == 3
    assert not (cache / "partitions").exists()


def test_a_warm_run_reads_its_fanout_partitions_without_importing_scikit_learn(tmp_path):
    """A scenario the seed table does not know (etcd_upgrade under another k-means seed): the first
    run computes the partitions (scikit-learn) and keeps them in the cache; the second run, same
    cache, reads them back (no sklearn import) and reports exactly the same."""
    doc = json.loads((ROOT / SCENARIO).read_text(encoding="utf-8"))
    doc["config"] = {**doc.get("config", {}), "kmeans_seed": 7}
    scenario = tmp_path / "etcd_seed7.json"
    scenario.write_text(json.dumps(doc), encoding="utf-8")
    cache = tmp_path / "cache"
    first, out1, rc1 = _imported(["run", "--ckf", KB, "--scenario", str(scenario), "--json"], cache)
    assert rc1 == 0 and "sklearn" in first
    assert len(list((cache / "partitions").glob("kmeans-*.npy"))) >= 1
    second, out2, rc2 = _imported(["run", "--ckf", KB, "--scenario", str(scenario), "--json"], cache)
    assert rc2 == 0 and "sklearn" not in second
    assert json.loads(out2) == json.loads(out1)
