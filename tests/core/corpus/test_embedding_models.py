"""``embedding_model``: any sentence-transformers model folder (or an installed package shipping one) embeds
the facts and the scenario texts, stamps its id on every vector, runs on ONNX where the model allows it,
and never mixes with another model's vectors. The models are small random BERTs made by the tests
(tests/support/tiny_model.py): nothing is downloaded."""

from __future__ import annotations

import dataclasses
import json
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest

from crp_core.config import SCALAR_KEYS, CRPConfig, all_keys
from crp_core.corpus import embedding as emb
from crp_core.corpus.embedding import MODEL_ID, EmbedderRegistry
from crp_core.corpus.embedding_models import (
    ENTRY_POINT_GROUP,
    SentenceModelEmbedder,
    configured_embedder,
    embedder_for_vectors,
    resolve_model,
)
from crp_core.corpus.prepared import embed_scenario, prepare_corpus
from crp_core.errors import ConfigError, EmbeddingModelMismatch
from crp_core.io.ckf import load_ckf, write_ckf
from crp_core.io.scenario import load_scenario
from crp_core.pipeline import run_pipeline
from tests.support.tiny_model import make_model_folder

TEXTS = [
    "the database upgrade must rotate the api key",
    "what is the latest release of the payment gateway",
    "zebra xylophone quux",
]

FACTS = [
    ("pay-001", "The payment gateway API token rotation policy is 90 days.", "official_documentation"),
    ("pay-002", "Rotate the payment gateway API key every 30 days after a breach.", "internal"),
    ("pay-003", "The latest release of the payment gateway is version 4.2.", "official_documentation"),
    ("pay-004", "Version 3.9 was the current release of the payment gateway.", "news"),
    ("pay-005", "Backup and restore of the cluster database runs every 6 hours.", "official_documentation"),
    ("pay-006", "The incident notice deadline is 72 hours after a breach report.", "official_documentation"),
    ("pay-007", "The migration team must report each payment incident to the service owner.", "community"),
    ("pay-008", "A database migration needs a backup first, says the team.", "community"),
]


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Model folders shared by the module: 32-d mean, 32-d CLS, 768-d mean, max pooling, a plain transformer."""
    root = tmp_path_factory.mktemp("models")
    return {
        "mean": make_model_folder(root / "tiny-mean"),
        "cls": make_model_folder(root / "tiny-cls", pooling="cls", seed=1),
        "wide": make_model_folder(root / "tiny-768", hidden=768, heads=12, seed=2),
        "max": make_model_folder(root / "tiny-max", pooling="max", seed=3),
        "plain": make_model_folder(root / "tiny-plain", modules=False, seed=4),
        "mpnet": make_model_folder(root / "tiny-mpnet", arch="mpnet", seed=5),
        "dense": make_model_folder(root / "tiny-dense", dense=16, seed=6),
    }


@pytest.fixture(scope="module")
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One embedding cache (ONNX exports included) for the module."""
    return tmp_path_factory.mktemp("cache")


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch, model_cache: Path) -> None:
    """A fresh process-wide embedder registry over the module's cache."""
    monkeypatch.setattr(emb, "EMBEDDERS", EmbedderRegistry())
    monkeypatch.setenv("CRP_CACHE_DIR", str(model_cache))
    monkeypatch.delenv(emb.BACKEND_ENV, raising=False)


def _kb_file(tmp_path: Path) -> Path:
    path = tmp_path / "kb.jsonl"
    rows = [
        {"fact_id": i, "content": c, "source_type": s, "ingested_at": "2026-06-01T00:00:00Z", "status": "ACTIVE"}
        for i, c, s in FACTS
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _scenario_file(tmp_path: Path) -> Path:
    path = tmp_path / "scenario.json"
    path.write_text(
        json.dumps(
            {
                "name": "key_rotation",
                "query": {"text": "how often must the payment gateway api key rotate"},
                "now": "2026-07-01T00:00:00Z",
                "sub_queries": [
                    {"id": "sq-policy", "text": "api token rotation policy days"},
                    {"id": "sq-release", "text": "latest release version of the payment gateway"},
                ],
            }
        ),
        encoding="utf-8",
    )
    return path


# ---- resolving a name ------------------------------------------------------------------------------
def test_a_folder_resolves_to_its_id_dimension_and_pooling(models):
    mean, cls, wide, plain = (resolve_model(str(models[k])) for k in ("mean", "cls", "wide", "plain"))
    assert mean.model_id == f"tiny-mean@{mean.digest[:12]}" and len(mean.digest) == 64
    assert (mean.dim, mean.pooling, mean.onnx_blocker, mean.source) == (32, "mean", None, "folder")
    assert (cls.dim, cls.pooling, cls.onnx_blocker) == (32, "cls", None)
    assert (wide.dim, wide.pooling) == (768, "mean")
    # a plain transformer folder reads as sentence-transformers reads it: Transformer + mean pooling
    assert (plain.dim, plain.pooling, plain.onnx_blocker) == (32, "mean", None)
    blocked = resolve_model(str(models["max"]))
    assert blocked.pooling == "" and blocked.onnx_blocker == "pooling max has no ONNX path here"


def test_a_folder_saved_by_this_sentence_transformers_reads_the_same(models, model_cache, tmp_path):
    from sentence_transformers import SentenceTransformer

    saved = tmp_path / "resaved"
    SentenceTransformer(str(models["cls"]), device="cpu").save(str(saved))  # its own module types and configs
    spec = resolve_model(str(saved))
    assert (spec.dim, spec.pooling, spec.onnx_blocker) == (32, "cls", None)
    a = SentenceModelEmbedder(spec, backend="onnx", cache_dir=model_cache).encode(TEXTS)
    b = SentenceModelEmbedder(resolve_model(str(models["cls"])), backend="torch", cache_dir=model_cache).encode(TEXTS)
    assert float((a * b).sum(axis=1).min()) > 1 - 1e-4


def test_the_id_follows_the_weights_not_the_path(models, tmp_path):
    copy = shutil.copytree(models["mean"], tmp_path / "tiny-mean")
    assert resolve_model(str(copy)).model_id == resolve_model(str(models["mean"])).model_id
    other = make_model_folder(tmp_path / "other" / "tiny-mean", seed=9)  # same name, other weights
    assert resolve_model(str(other)).model_id != resolve_model(str(models["mean"])).model_id
    dense = shutil.copytree(models["dense"], tmp_path / "tiny-dense")
    before = resolve_model(str(dense)).model_id
    make_model_folder(tmp_path / "scratch", dense=16, seed=7)
    shutil.copy(tmp_path / "scratch" / "2_Dense" / "model.safetensors", dense / "2_Dense" / "model.safetensors")
    resolve_model.__globals__["_RESOLVED"].clear()
    assert resolve_model(str(dense)).model_id != before  # only the Dense layer's weights changed


def test_a_name_that_is_neither_a_folder_nor_a_package_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="neither a local sentence-transformers model folder nor an installed"):
        resolve_model("no-such-embedding-model-package")
    with pytest.raises(ConfigError, match="no such folder"):
        resolve_model(str(tmp_path / "missing"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match=r"is not a transformer model folder \(it needs config.json and"):
        resolve_model(str(tmp_path / "empty"))
    with pytest.raises(ConfigError, match="ships no sentence-transformers model folder"):
        resolve_model("numpy")  # installed, but no model inside


def _site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    return site


def test_an_installed_package_shipping_a_model_folder_resolves_to_it(models, tmp_path, monkeypatch):
    site = _site(tmp_path, monkeypatch)
    pkg = site / "tinyembed_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    shutil.copytree(models["cls"], pkg / "model")
    spec = resolve_model("tinyembed-pkg")  # "-" read as "_", found without importing the package
    assert spec.path == str((pkg / "model").resolve()) and spec.source == "package tinyembed_pkg"
    assert spec.model_id == f"tinyembed-pkg@{resolve_model(str(models['cls'])).digest[:12]}"
    shutil.copytree(models["mean"], pkg / "second")
    resolve_model.__globals__["_RESOLVED"].clear()
    with pytest.raises(ConfigError, match="ships 2 model folders"):
        resolve_model("tinyembed-pkg")


def test_an_entry_point_names_the_folder(models, tmp_path, monkeypatch):
    site = _site(tmp_path, monkeypatch)
    (site / "tinyep.py").write_text(f"MODEL_DIR = {str(models['mean'])!r}\n", encoding="utf-8")
    info = site / "tinyep-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tinyep\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\ntiny-model = tinyep:MODEL_DIR\n", encoding="utf-8")
    spec = resolve_model("tiny-model")
    assert spec.source == "package tiny-model" and spec.path == str(models["mean"].resolve())


# ---- embedding -------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["mean", "cls", "wide", "mpnet"])
def test_onnx_and_torch_give_the_same_vectors(models, model_cache, kind):
    spec = resolve_model(str(models[kind]))
    onnx = SentenceModelEmbedder(spec, backend="onnx", cache_dir=model_cache)
    torch = SentenceModelEmbedder(spec, backend="torch", cache_dir=model_cache)
    a, b = onnx.encode(TEXTS), torch.encode(TEXTS)
    assert onnx.backend == "onnx" and onnx.fallback_reason is None and torch.backend == "torch"
    assert a.shape == b.shape == (3, spec.dim) and a.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-6)
    assert float((a * b).sum(axis=1).min()) > 1 - 1e-4
    assert onnx.model_id == torch.model_id == spec.model_id


def test_a_model_onnx_cannot_run_falls_back_to_torch_with_a_note(models, model_cache):
    spec = resolve_model(str(models["max"]))
    e = SentenceModelEmbedder(spec, backend="onnx", cache_dir=model_cache)
    with pytest.warns(RuntimeWarning, match="ONNX embedding backend unavailable .*pooling max has no ONNX path"):
        got = e.encode(TEXTS)
    assert e.backend == "torch" and e.fallback_reason is not None and "pooling max" in e.fallback_reason
    assert got.shape == (3, 32) and e.builds == 0


def test_a_dense_layer_sets_the_dimension_and_runs_on_torch(models, model_cache):
    spec = resolve_model(str(models["dense"]))
    assert (spec.dim, spec.pooling, spec.onnx_blocker) == (16, "mean", "a Dense module has no ONNX path here")
    e = SentenceModelEmbedder(spec, backend="onnx", cache_dir=model_cache)
    with pytest.warns(RuntimeWarning, match="a Dense module has no ONNX path here"):
        got = e.encode(TEXTS)
    assert got.shape == (3, 16) and e.backend == "torch"
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-6)


def test_onnx_int8_is_refused_for_another_model(models):
    with pytest.raises(ConfigError, match="onnx-int8 backend is all-MiniLM-L6-v2's only"):
        SentenceModelEmbedder(resolve_model(str(models["mean"])), backend="onnx-int8")


def test_configured_embedder_is_one_per_model_and_process(models, fresh):
    a = configured_embedder(str(models["mean"]))
    assert configured_embedder(str(models["mean"])) is a and a.model_id == resolve_model(str(models["mean"])).model_id
    assert configured_embedder("") is emb.default_embedder()
    assert configured_embedder(MODEL_ID).model_id == MODEL_ID
    assert emb.embedder_for(a.model_id) is None  # another model's vectors: only the configured model embeds
    assert embedder_for_vectors(a.model_id) is None
    assert embedder_for_vectors(a.model_id, str(models["mean"])) is a
    assert embedder_for_vectors(a.model_id, str(models["cls"])) is None
    assert embedder_for_vectors(MODEL_ID, str(models["cls"])) is emb.default_embedder()
    with pytest.raises(ConfigError, match="retired"):
        configured_embedder(emb.INT8_V1_MODEL_ID)


def test_a_folder_holding_the_bundled_minilm_is_minilm(fresh):
    assert configured_embedder(emb.minilm_model_path()) is emb.default_embedder()


# ---- end to end: facts and scenario texts, the pipeline, mixing ----------------------------------------
def test_the_configured_model_embeds_facts_and_scenario_and_runs_the_pipeline(models, fresh, tmp_path):
    config = CRPConfig(embedding_model=str(models["wide"]))
    spec = resolve_model(str(models["wide"]))
    kb = load_ckf(_kb_file(tmp_path))
    corpus = prepare_corpus(kb, config=config, cache_dir=tmp_path / "c")
    assert corpus.model_id == spec.model_id and corpus.dim == 768 and corpus.vectors.shape == (8, 768)
    scenario = load_scenario(_scenario_file(tmp_path))
    vectors = embed_scenario(scenario, corpus)
    assert vectors.model_id == spec.model_id and vectors.sub_queries.shape == (2, 768)
    direct = configured_embedder(str(models["wide"])).encode([scenario.query])[0]
    assert float(direct @ vectors.query) > 1 - 1e-6
    result = run_pipeline(corpus, scenario, config, vectors=vectors)
    assert result.envelope.order and {p.fact_id for p in result.envelope.order} <= {f[0] for f in FACTS}


def test_an_embedded_ckf_carries_the_model_id_and_loads_back_without_embedding(models, fresh, tmp_path):
    from crp_core.engines import embed_kb

    name = str(models["mean"])
    done, run = embed_kb(load_ckf(_kb_file(tmp_path)), cache_dir=tmp_path / "c", model=name)
    assert done.embedding_model == resolve_model(name).model_id and run.texts == 8
    out = write_ckf(done, tmp_path / "kb_emb")
    manifest = json.loads((Path(out) / "manifest.json").read_text(encoding="utf-8"))
    assert manifest == {"embedding_model": done.embedding_model, "dim": 32}
    back = load_ckf(out)
    model = configured_embedder(name)
    calls = model.encode_calls
    corpus = prepare_corpus(back, config=CRPConfig(embedding_model=name), cache_dir=tmp_path / "c")
    assert corpus.model_id == done.embedding_model and model.encode_calls == calls
    np.testing.assert_array_equal(corpus.vectors, done.embeddings)


def test_vectors_of_another_model_are_refused_naming_both_ids(models, fresh, tmp_path):
    kb = load_ckf(_kb_file(tmp_path))
    rng = np.random.default_rng(0)
    minilm = dataclasses.replace(kb, embeddings=rng.normal(size=(8, 384)).astype(np.float32), embedding_model=MODEL_ID)
    name = str(models["mean"])
    ours = resolve_model(name).model_id
    with pytest.raises(EmbeddingModelMismatch) as got:
        prepare_corpus(minilm, config=CRPConfig(embedding_model=name), cache_dir=tmp_path / "c")
    assert f"vectors come from {MODEL_ID!r}" in str(got.value) and repr(ours) in str(got.value)
    # a corpus of one configured model, then scenario texts under another: refused before any embedding
    corpus = prepare_corpus(kb, config=CRPConfig(embedding_model=name), cache_dir=tmp_path / "c")
    other = dataclasses.replace(corpus, config=CRPConfig(embedding_model=str(models["cls"])))
    scenario = load_scenario(_scenario_file(tmp_path))
    with pytest.raises(EmbeddingModelMismatch, match=f"vectors come from {ours!r}"):
        embed_scenario(scenario, other)
    # without a configured model, scenario texts have no model that may embed them
    bare = dataclasses.replace(corpus, config=CRPConfig())
    with pytest.raises(Exception, match="not available here to embed this text"):
        embed_scenario(scenario, bare)


def test_the_embed_and_run_commands_take_the_model(models, fresh, tmp_path, capsys):
    from crp_core.cli import main

    name = str(models["mean"])
    kb, sc, out = _kb_file(tmp_path), _scenario_file(tmp_path), tmp_path / "kb_emb"
    cache = str(tmp_path / "c")
    assert main(["embed", "--ckf", str(kb), "--out", str(out), "--model", name, "--cache-dir", cache]) == 0
    said = capsys.readouterr().out
    assert f"with {resolve_model(name).model_id}; wrote {out}" in said
    args = ["run", "--ckf", str(out), "--scenario", str(sc), "--cache-dir", cache]
    assert main([*args, "--json", "--set", f"embedding_model={name}"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["config"]["embedding_model"] == name and report["envelope"]
    assert main([*args, "--set", f"embedding_model={models['cls']}"]) == 2
    assert "embeddings of two models cannot be compared" in capsys.readouterr().err
    assert main(["embed", "--ckf", str(kb), "--out", str(tmp_path / "x"), "--model", "no-such-model-pkg"]) == 2
    assert "neither a local sentence-transformers model folder" in capsys.readouterr().err


# ---- the configuration key ---------------------------------------------------------------------------
def test_embedding_model_is_a_corpus_key_written_only_when_set():
    c = CRPConfig().with_set_args(["embedding_model= ./models/bge "])
    assert c.embedding_model == "./models/bge"
    assert "embedding_model" not in CRPConfig().to_dict() and c.to_dict()["embedding_model"] == "./models/bge"
    assert CRPConfig.from_toml(c.to_toml()) == c and CRPConfig().diff(c) == {"embedding_model": ("", "./models/bge")}
    assert "embedding_model" not in SCALAR_KEYS and "embedding_model" not in all_keys()
    with pytest.raises(ConfigError, match="'embedding_model' expects text, got 3"):
        CRPConfig().with_overrides({"embedding_model": 3})
    with pytest.raises(ConfigError, match="control character U\\+000A"):
        CRPConfig().with_overrides({"embedding_model": "a\nb"})
    with pytest.raises(ConfigError, match="longer than 4096 characters"):
        CRPConfig(embedding_model="x" * 4097)


def test_nothing_is_downloaded(models, fresh):
    import os

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        configured_embedder(str(models["mean"])).load()
    assert os.environ["HF_HUB_OFFLINE"] == "1" and os.environ["TRANSFORMERS_OFFLINE"] == "1"
