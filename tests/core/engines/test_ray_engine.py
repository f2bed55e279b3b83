"""The Ray engine gives the local engine's results: the same pairs, winners and JSON report on the
bundled sample and the 10k synthetic CKF; Ray Data embedding equals the local embedding path.
One local 2-CPU cluster serves every test of this module (marker ``ray``; skipped without Ray)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import numpy as np
import pytest

from tests.support.report_compare import assert_same_report

ray = pytest.importorskip("ray")

from crp_core.analysis.scan import exact_pairs, scan_ckf  # noqa: E402
from crp_core.cli import main  # noqa: E402
from crp_core.cli.conflicts import json_text  # noqa: E402
from crp_core.config import CRPConfig  # noqa: E402
from crp_core.corpus.prepared import Corpus, prepare_corpus  # noqa: E402
from crp_core.engines import embed_kb, scan_with_engine  # noqa: E402
from crp_core.engines.ray_engine import ray_embed, ray_searcher, ray_session  # noqa: E402
from crp_core.io.ckf import load_ckf  # noqa: E402

pytestmark = pytest.mark.ray
NOW = datetime(2026, 6, 1, tzinfo=UTC)


@pytest.fixture(scope="module", autouse=True)
def cluster():
    """One private local cluster: 2 CPUs, loopback only, no dashboard, worker logs off the terminal."""
    ray.init(
        num_cpus=2, include_dashboard=False, log_to_driver=False, _node_ip_address="127.0.0.1", logging_level="ERROR"
    )
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def synth_corpus(synth10k, tmp_path_factory):
    kb = load_ckf(synth10k)
    return prepare_corpus(kb, cache_dir=tmp_path_factory.mktemp("cache"))


def _same_scans(a, b):
    assert [(p.fact_a, p.fact_b) for p in a.pairs] == [(p.fact_a, p.fact_b) for p in b.pairs]
    assert [(p.kept, p.suppressed, p.tied, p.decision) for p in a.pairs] == [
        (p.kept, p.suppressed, p.tied, p.decision) for p in b.pairs
    ]
    assert (a.n_candidates, a.k, dict(a.counts)) == (b.n_candidates, b.k, dict(b.counts))


def test_ray_pair_search_equals_the_local_search(synth_corpus):
    v = synth_corpus.vectors
    for thr, workers in ((0.85, 2), (0.85, 1), (0.6, 2)):
        ref = exact_pairs(v, thr)
        got = ray_searcher(workers)(v, thr)
        np.testing.assert_array_equal(got.pairs, ref.pairs)
    assert ref.pairs.shape[0] > 1000


def test_ray_scan_equals_the_local_scan_on_the_10k_ckf(synth_corpus):
    config = CRPConfig()
    local = scan_ckf(synth_corpus, config, NOW)
    remote = scan_with_engine(synth_corpus, config, NOW, engine="ray", workers=2)
    assert len(local.pairs) > 20
    _same_scans(local, remote)
    assert_same_report(
        json.loads(json_text(remote, synth_corpus.kb, config)), json.loads(json_text(local, synth_corpus.kb, config))
    )


def test_cli_json_is_identical_on_either_engine(synth10k, capsys, tmp_path):
    args = [
        "conflicts",
        "--ckf",
        str(synth10k),
        "--now",
        "2026-06-01T00:00:00Z",
        "--json",
        "--cache-dir",
        str(tmp_path),
    ]
    assert main(args) == 0
    local = capsys.readouterr().out
    assert main(args + ["--engine", "ray", "--workers", "2"]) == 0
    remote = capsys.readouterr().out
    assert_same_report(json.loads(remote), json.loads(local))
    assert len(json.loads(local)) > 20
    assert main(args[:-3] + ["--cache-dir", str(tmp_path), "--engine", "ray"]) == 0  # the summary names it
    assert "engine: ray" in capsys.readouterr().out
    assert ray.is_initialized()  # the CLI used this module's cluster and left it running


def test_ray_scan_equals_the_local_scan_with_test_vectors():
    """A small CKF whose own vectors put conflicts, a tie and a paraphrase above the threshold."""
    from crp_core.model import Fact, KnowledgeBase

    texts = [
        "The etcd default client port is 2379",
        "The etcd default client port is 4001",
        "The backup job runs every 30 minutes",
        "The backup job runs every 60 minutes",
        "etcd uses 2379 as its default client port",
        "Pods are scheduled onto nodes",
    ]
    srcs = ["official_documentation", "community", "internal", "internal", "official_documentation", "web"]
    facts = tuple(
        Fact(
            fact_id=f"F{i}",
            content=t,
            source_type=s,
            status="ACTIVE",
            importance_weight=None,
            ingested_at=None,
            modified_at=NOW,
            ttl_kind="default",
            ttl_seconds=None,
            ttl_text=None,
            source_id=None,
            source_location=None,
            community_label=None,
            metadata={},
            line=i + 1,
        )
        for i, (t, s) in enumerate(zip(texts, srcs))
    )
    vec = np.array(
        [[1, 0.33, 0, 0], [1, 0, 0.33, 0], [0, 0, 1, 0.33], [0, 0.1, 1, 0], [1, 0, 0, 0.33], [0, 1, 0, 0]],
        dtype=np.float32,
    )
    kb = KnowledgeBase(facts=facts, embeddings=vec, embedding_model="test-model")
    corpus = Corpus.from_vectors(kb, vec / np.linalg.norm(vec, axis=1, keepdims=True))
    local = scan_ckf(corpus, CRPConfig(), NOW)
    remote = scan_with_engine(corpus, CRPConfig(), NOW, engine="ray")
    assert {(p.fact_a, p.fact_b) for p in local.pairs} >= {("F0", "F1"), ("F2", "F3")}
    _same_scans(local, remote)


@pytest.mark.model
def test_sample_ckf_scan_and_embedding_agree_across_engines(tmp_path):
    kb = load_ckf("sample_ckf/knowledge_base.jsonl")
    corpus = prepare_corpus(kb)  # the default embedding cache: warm after the first run
    config = CRPConfig()
    local = scan_ckf(corpus, config, NOW)
    remote = scan_with_engine(corpus, config, NOW, engine="ray")
    assert len(local.pairs) >= 10
    _same_scans(local, remote)
    assert_same_report(json.loads(json_text(remote, kb, config)), json.loads(json_text(local, kb, config)))
    # Ray Data actors embed like the local path (float rounding of other batch paddings aside)
    texts = [f.content for f in kb.facts[:48]]
    with ray_session():
        got = ray_embed(texts, 2, block_rows=16)
    np.testing.assert_allclose(got, corpus.vectors[:48], atol=2e-5)
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


@pytest.mark.model
def test_embed_command_on_ray_writes_a_loadable_ckf(tmp_path, capsys):
    src = tmp_path / "small.jsonl"
    lines = open("sample_ckf/knowledge_base.jsonl", encoding="utf-8").read().splitlines()[:30]
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for out, engine in ((tmp_path / "out.parquet", "ray"), (tmp_path / "outdir", "local")):
        assert (
            main(
                [
                    "embed",
                    "--ckf",
                    str(src),
                    "--out",
                    str(out),
                    "--engine",
                    engine,
                    "--cache-dir",
                    str(tmp_path / f"cache-{out.name}"),
                ]
            )
            == 0
        )
        said = capsys.readouterr().out
        assert "embedded 30 of 30 text(s) (0 from the cache)" in said and f"{engine} engine" in said
        back = load_ckf(out)
        assert back.embedding_model == "sentence-transformers/all-MiniLM-L6-v2"
        assert back.embeddings.shape == (30, 384) and len(back) == 30
        assert [f.fact_id for f in back.facts] == [f.fact_id for f in load_ckf(src).facts]
    assert (tmp_path / "outdir" / "embeddings.npy").is_file() and (tmp_path / "outdir" / "manifest.json").is_file()
    a, b = load_ckf(tmp_path / "out.parquet"), load_ckf(tmp_path / "outdir")
    np.testing.assert_allclose(a.embeddings, b.embeddings, atol=2e-5)
    # a second run answers from the cache the Ray run filled: nothing reaches Ray
    kb, run = embed_kb(load_ckf(src), engine="ray", cache_dir=tmp_path / "cache-out.parquet")
    assert run.cached == 30 and run.texts == 30
    np.testing.assert_array_equal(kb.embeddings, a.embeddings)
