"""MiniLM backends and token counting without the model (docs/decisions/embedding-index.md).

Token counts come from the model's ``tokenizer.json`` through the ``tokenizers`` library: the same
counts as ``transformers.AutoTokenizer`` (docs/reference/pipeline.md §6) on every sample text and on hard cases,
with neither torch nor transformers imported. The backend is chosen by ``CRP_EMBED_BACKEND`` (default
``onnx`` when ONNX Runtime is installed); with the real model (``-m model``) the ONNX vectors agree with
torch's within 1e-4 cosine, the export lives under the weights' digest, and a failing ONNX start falls
back to torch with a warning. The opt-in ``onnx-int8`` backend carries its own model id (its vectors
are within the measured bound of fp32, not within 1e-4), is built once into the cache, atomically,
rebuilt when damaged, never falls back to torch, and a corpus of one id refuses the other's queries.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import crp_core.corpus.embedding as emb
import crp_core.corpus.onnx_backend as onnx_backend
from crp_core.corpus.embedding import BACKEND_ENV, INT8_MODEL_ID, MODEL_ID, MiniLMEmbedder, default_backend
from crp_core.errors import ConfigError, EmbeddingModelMismatch
from tests.support.paths import REPO_ROOT

ROOT = REPO_ROOT
SAMPLE = ROOT / "sample_ckf"

HARD_TEXTS = [
    "",
    "   ",
    "hello world",
    "etcd listens on 2379/2380 (IANA)",
    "Zürich, São Paulo, naïve café, ÅÄÖ",
    "数据保护 und Datenschutz",
    "emoji 🙂 and ™ ® symbols",
    "tab\tseparated\nnew line",
    "x" * 300,
    "The etcd default client port is 2379. " * 80,  # far beyond 512 tokens: counted without truncation
    "[k8s-0001]",
    "NOTE: the two facts below disagree; both are kept.",
]


def _sample_texts() -> list[str]:
    texts = [
        json.loads(line)["content"]
        for line in (SAMPLE / "knowledge_base.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    for p in sorted([*SAMPLE.glob("scenarios/*.json"), *SAMPLE.glob("scenarios/workload/*.json")]):
        doc = json.loads(p.read_text(encoding="utf-8"))
        texts.append(doc["query"]["text"] if isinstance(doc["query"], dict) else doc["query"])
        texts += [sq["text"] for sq in doc["sub_queries"]] + list(doc.get("prior_outputs", []))
    return texts


def test_token_counts_equal_the_transformers_tokenizer_on_every_sample_text():
    from transformers import AutoTokenizer

    texts = _sample_texts() + HARD_TEXTS
    assert len(texts) == 455 + 79 + len(HARD_TEXTS)  # facts, scenario texts and prior outputs, hard cases
    m = MiniLMEmbedder()
    got = m.count_tokens(texts)
    tok = AutoTokenizer.from_pretrained(emb.minilm_model_path())
    want = [len(ids) for ids in tok(texts, add_special_tokens=False, truncation=False, verbose=False)["input_ids"]]
    assert got.tolist() == want
    assert m.load_count == 0 and m.tokenizer_load_count == 1
    assert got[HARD_TEXTS.index("hello world") - len(HARD_TEXTS)] == 2 and got[-len(HARD_TEXTS)] == 0
    assert got[HARD_TEXTS.index("x" * 300) - len(HARD_TEXTS)] == 1  # a word over 100 characters: one [UNK]
    assert max(got) > 512  # no truncation


def test_token_counting_imports_neither_torch_nor_transformers():
    code = (
        "import sys\n"
        "from crp_core.corpus.embedding import count_tokens, MODEL_ID\n"
        "n = count_tokens(['etcd serves clients on port 2379'], MODEL_ID).tolist()\n"
        "heavy = [m for m in ('torch', 'transformers', 'sentence_transformers', 'onnxruntime')\n"
        "         if m in sys.modules]\n"
        "print(n, heavy)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300, check=True
    ).stdout
    assert out.strip() == "[8] []"  # et ##cd serves clients on port 237 ##9


def test_backend_choice(monkeypatch):
    monkeypatch.setenv(BACKEND_ENV, "torch")
    assert default_backend() == "torch" and MiniLMEmbedder().backend == "torch"
    monkeypatch.setenv(BACKEND_ENV, " ONNX ")
    assert default_backend() == "onnx"
    monkeypatch.setenv(BACKEND_ENV, "tensorflow")
    with pytest.raises(ConfigError, match="CRP_EMBED_BACKEND='tensorflow': expected one of onnx, torch, onnx-int8"):
        default_backend()
    monkeypatch.delenv(BACKEND_ENV)
    monkeypatch.setattr(emb.importlib.util, "find_spec", lambda name: None)
    assert default_backend() == "torch"  # no ONNX Runtime installed
    with pytest.raises(ValueError, match="backend must be one of"):
        MiniLMEmbedder(backend="cuda")


def test_export_location_is_keyed_by_the_weights_digest(tmp_path):
    weights = tmp_path / "w"
    weights.mkdir()
    (weights / "model.safetensors").write_bytes(b"weights-1")
    (weights / "config.json").write_text("{}", encoding="utf-8")
    import hashlib

    want = hashlib.sha256(b"weights-1{}").hexdigest()
    assert onnx_backend.weights_digest(str(weights)) == want
    got = onnx_backend.onnx_model_file(str(weights), tmp_path / "cache")
    assert got == tmp_path / "cache" / "onnx" / want[:24] / "model.onnx"
    (weights / "model.safetensors").write_bytes(b"weights-22")  # other weights (size changed): another file
    assert (
        onnx_backend.onnx_model_file(str(weights), tmp_path / "cache").parent.name
        == hashlib.sha256(b"weights-22{}").hexdigest()[:24]
    )


def test_threads_default_and_env(monkeypatch):
    monkeypatch.delenv(emb.THREADS_ENV, raising=False)
    assert 1 <= emb.embed_threads() <= 2
    monkeypatch.setenv(emb.THREADS_ENV, "3")
    assert emb.embed_threads() == 3
    monkeypatch.setenv(emb.THREADS_ENV, "zero")
    assert 1 <= emb.embed_threads() <= 2


# ---- with the real model ---------------------------------------------------------------------------
@pytest.mark.model
def test_onnx_agrees_with_torch_within_1e4_cosine():
    texts = _sample_texts()[::7] + HARD_TEXTS[2:9]
    onnx = MiniLMEmbedder(backend="onnx")
    a = onnx.encode(texts)
    assert onnx.backend == "onnx" and onnx.fallback_reason is None and onnx.load_count == 1
    b = MiniLMEmbedder(backend="torch").encode(texts)
    cos = (a.astype(np.float64) * b).sum(axis=1)
    assert cos.min() >= 1 - 1e-4
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, rtol=1e-5)
    assert onnx.model_id == MODEL_ID  # within the bound: one model id, one cache (docs/reference/scenarios.md)


@pytest.mark.model
def test_onnx_failure_falls_back_to_torch_with_a_warning(monkeypatch):
    m = MiniLMEmbedder(backend="onnx")

    def broken() -> None:
        raise RuntimeError("no session")

    monkeypatch.setattr(m, "_load_onnx", broken)
    with pytest.warns(RuntimeWarning, match=r"ONNX embedding backend unavailable \(RuntimeError: no session\); using"):
        v = m.encode(["etcd serves clients on port 2379"])
    assert m.backend == "torch" and m.fallback_reason == "RuntimeError: no session" and v.shape == (1, 384)


@pytest.mark.model
def test_failed_export_leaves_nothing_behind(tmp_path, monkeypatch):
    import torch

    def fail(*args, **kwargs):
        raise RuntimeError("export failed")

    monkeypatch.setattr(torch.onnx, "export", fail)
    out = tmp_path / "onnx" / "x" / "model.onnx"
    with pytest.raises(RuntimeError, match="export failed"):
        onnx_backend.export_onnx(emb.minilm_model_path(), out)
    assert not out.exists() and list(out.parent.iterdir()) == []


# ---- the int8 backend: its own model id (docs/reference/scenarios.md) ------------------------------------------------
#: int8-v2, measured on the sample's 455 facts: min cosine to fp32 0.9929, mean 0.9964 (the bound leaves room
#: for ONNX Runtime's kernel choice); retrieval agreement is in bench/embed_index.py
INT8_MIN_COSINE = 0.99
INT8_MEAN_COSINE = 0.995


def test_int8_backend_has_its_own_model_id_without_loading(monkeypatch):
    monkeypatch.setenv(BACKEND_ENV, "onnx-int8")
    m = MiniLMEmbedder()
    assert (m.backend, m.model_id, m.load_count, m.builds) == ("onnx-int8", INT8_MODEL_ID, 0, 0)
    assert INT8_MODEL_ID != MODEL_ID and emb.BACKEND_MODEL_IDS == {
        "onnx": MODEL_ID,
        "torch": MODEL_ID,
        "onnx-int8": INT8_MODEL_ID,
    }
    assert MiniLMEmbedder(backend="onnx").model_id == MiniLMEmbedder(backend="torch").model_id == MODEL_ID
    assert MiniLMEmbedder.model_id == MODEL_ID  # the class default stays the fp32 model


def test_int8_file_sits_beside_the_fp32_export(tmp_path):
    weights = tmp_path / "w"
    weights.mkdir()
    (weights / "model.safetensors").write_bytes(b"weights")
    (weights / "config.json").write_text("{}")
    fp32 = onnx_backend.onnx_model_file(str(weights), tmp_path / "cache")
    assert onnx_backend.int8_model_file(str(weights), tmp_path / "cache") == fp32.parent / "model-int8-v2.onnx"


def test_embedder_for_follows_the_corpus_model_id(monkeypatch):
    monkeypatch.setattr(emb, "EMBEDDERS", emb.EmbedderRegistry())
    monkeypatch.setenv(BACKEND_ENV, "onnx-int8")
    got = emb.embedder_for(INT8_MODEL_ID)
    assert got is emb.default_embedder() and got.model_id == INT8_MODEL_ID
    fp32 = emb.embedder_for(MODEL_ID)  # the sample's shipped fp32 vectors get an fp32 embedder, never int8
    assert fp32 is not None and fp32.model_id == MODEL_ID and fp32.backend in ("onnx", "torch")
    assert emb.embedder_for(MODEL_ID) is fp32 and emb.embedder_for("some/other-model") is None
    assert not got.loaded and not fp32.loaded


def test_the_int8_model_id_changed_with_the_recipe_and_the_retired_id_is_refused():
    """int8-v1 vectors depended on their batch-mates; v2's do not: another id (docs/reference/scenarios.md). A corpus
    embedded under the v1 id keeps MiniLM token counts, but its query vectors are refused, not mixed."""
    from crp_core.corpus.prepared import embed_scenario
    from crp_core.model import Scenario

    assert INT8_MODEL_ID == "crp-inspect/all-MiniLM-L6-v2-onnx-int8-v2" and onnx_backend.INT8_RECIPE == "int8-v2"
    assert emb.INT8_V1_MODEL_ID == "crp-inspect/all-MiniLM-L6-v2-onnx-int8" != INT8_MODEL_ID
    assert emb.INT8_V1_MODEL_ID in emb.MINILM_IDS and emb.INT8_V1_MODEL_ID not in emb.BACKEND_MODEL_IDS.values()
    np.testing.assert_array_equal(emb.count_tokens(["etcd listens on 2379"], emb.INT8_V1_MODEL_ID), [7])
    int8 = MiniLMEmbedder(backend="onnx-int8")
    with pytest.raises(
        EmbeddingModelMismatch,
        match="embedded with 'crp-inspect/all-MiniLM-L6-v2-onnx-int8' but "
        "the active model is 'crp-inspect/all-MiniLM-L6-v2-onnx-int8-v2'",
    ):
        embed_scenario(Scenario(query="etcd port"), _corpus_of(emb.INT8_V1_MODEL_ID), embedder=int8)
    assert int8.load_count == 0


def test_the_retired_int8_id_gets_the_current_int8_embedder(monkeypatch):
    monkeypatch.setattr(emb, "EMBEDDERS", emb.EmbedderRegistry())
    monkeypatch.setenv(BACKEND_ENV, "onnx")
    got = emb.embedder_for(emb.INT8_V1_MODEL_ID)
    assert got is not None and got.model_id == INT8_MODEL_ID and got is emb.embedder_for(INT8_MODEL_ID)
    assert not got.loaded


def test_int8_token_counts_are_minilm_counts():
    texts = ["etcd listens on 2379", "Zürich naïve café", "x" * 300]
    want = emb.count_tokens(texts, MODEL_ID)
    np.testing.assert_array_equal(emb.count_tokens(texts, INT8_MODEL_ID), want)
    np.testing.assert_array_equal(emb.count_tokens(texts, INT8_MODEL_ID, MiniLMEmbedder(backend="onnx-int8")), want)
    np.testing.assert_array_equal(want, [7, 3, 1])  # accents stripped: zurich naive cafe; one long word = [UNK]


def _corpus_of(model_id: str):
    from crp_core.corpus.prepared import Corpus
    from crp_core.model import Fact, KnowledgeBase

    vecs = np.eye(3, 384, dtype=np.float32)
    kb = KnowledgeBase(
        tuple(Fact(f"f{i}", f"fact {i}", line=i + 1) for i in range(3)), embeddings=vecs, embedding_model=model_id
    )
    return Corpus.from_vectors(kb, vecs, model_id=model_id)


def test_a_corpus_of_one_id_refuses_the_other_ids_query_vectors():
    from crp_core.corpus.prepared import embed_scenario
    from crp_core.model import Scenario, SubQuery

    sc = Scenario(query="etcd port", sub_queries=(SubQuery("a", "tls certificate"),))
    int8, fp32 = MiniLMEmbedder(backend="onnx-int8"), MiniLMEmbedder(backend="onnx")
    fp32_id, int8_id = "'sentence-transformers/all-MiniLM-L6-v2'", "'crp-inspect/all-MiniLM-L6-v2-onnx-int8-v2'"
    with pytest.raises(EmbeddingModelMismatch, match=f"embedded with {fp32_id} but the active model is {int8_id}"):
        embed_scenario(sc, _corpus_of(MODEL_ID), embedder=int8)
    with pytest.raises(EmbeddingModelMismatch, match=f"embedded with {int8_id} but the active model is {fp32_id}"):
        embed_scenario(sc, _corpus_of(INT8_MODEL_ID), embedder=fp32)
    declared = Scenario(query="q", query_embedding=tuple(np.eye(1, 384)[0]), embedding_model=MODEL_ID)
    with pytest.raises(EmbeddingModelMismatch, match="scenario's embeddings come from"):
        embed_scenario(declared, _corpus_of(INT8_MODEL_ID))
    assert int8.load_count == fp32.load_count == 0  # refused before any model loads


def test_embed_cli_backend_choices_are_the_backends():
    import argparse

    from crp_core.cli import embed as embed_cli

    parser = argparse.ArgumentParser()
    embed_cli.register(parser.add_subparsers())
    action = next(
        a
        for sp in parser._subparsers._group_actions  # type: ignore[union-attr]
        for a in sp.choices["embed"]._actions
        if a.dest == "backend"
    )
    assert tuple(action.choices) == emb.BACKENDS and action.default is None


@pytest.fixture(scope="module")
def int8_cache(tmp_path_factory):
    """One int8 build shared by the module's model tests."""
    cache = tmp_path_factory.mktemp("int8cache")
    m = MiniLMEmbedder(backend="onnx-int8", cache_dir=cache)
    m.load()
    assert m.builds == 1 and m.backend == "onnx-int8"
    return cache


@pytest.mark.model
def test_int8_vectors_are_unit_and_within_the_measured_bound_of_fp32(int8_cache):
    texts = [
        json.loads(line)["content"]
        for line in (SAMPLE / "knowledge_base.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    m = MiniLMEmbedder(backend="onnx-int8", cache_dir=int8_cache)
    a = m.encode(texts)
    assert a.shape == (len(texts), 384) and a.dtype == np.float32 and m.model_id == INT8_MODEL_ID
    np.testing.assert_allclose(np.linalg.norm(a.astype(np.float64), axis=1), 1.0, atol=1e-6)
    b = MiniLMEmbedder(backend="onnx", cache_dir=int8_cache).encode(texts)
    cos = (a.astype(np.float64) * b).sum(axis=1)
    assert cos.min() >= INT8_MIN_COSINE and cos.mean() >= INT8_MEAN_COSINE
    assert cos.min() < 1 - 1e-4  # lossy: why it has its own model id


@pytest.mark.model
def test_int8_model_is_reused_and_a_damaged_file_is_rebuilt(int8_cache):
    texts = ["etcd serves clients on port 2379", "TLS certificates rotate every 90 days"]
    first = MiniLMEmbedder(backend="onnx-int8", cache_dir=int8_cache)
    want = first.encode(texts)
    assert first.builds == 0 and first.load_count == 1  # the module's build is reused, not quantised again
    path = onnx_backend.int8_model_file(emb.minilm_model_path(), int8_cache)
    assert sorted(p.name for p in path.parent.iterdir()) == ["model-int8-v2.onnx", "model.onnx"]  # no temp left
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 3])  # truncated, as by a crash of a copy
    again = MiniLMEmbedder(backend="onnx-int8", cache_dir=int8_cache)
    with pytest.warns(RuntimeWarning, match="cannot be loaded .*making it again"):
        got = again.encode(texts)
    assert again.builds == 1 and again.backend == "onnx-int8"
    np.testing.assert_allclose(got, want, atol=1e-6)  # the same recipe gives the same model


@pytest.mark.model
def test_int8_failure_is_raised_never_replaced_by_torch(tmp_path, monkeypatch):
    def fail(*args, **kwargs):
        raise RuntimeError("quantisation failed")

    monkeypatch.setattr(onnx_backend, "build_int8", fail)
    m = MiniLMEmbedder(backend="onnx-int8", cache_dir=tmp_path)
    with pytest.raises(RuntimeError, match="quantisation failed"):
        m.encode(["etcd"])
    assert m.backend == "onnx-int8" and m.model_id == INT8_MODEL_ID and not m.loaded
    assert not onnx_backend.int8_model_file(emb.minilm_model_path(), tmp_path).exists()


def test_an_int8_corpus_counts_tokens_with_the_minilm_tokenizer(tmp_path):
    """A CKF whose vectors are the int8 model's (docs/reference/pipeline.md §6): the MiniLM tokenizer counts its
    tokens, as for the fp32 id (the words * 1.3 estimate is for other models only)."""
    import dataclasses

    from crp_core.corpus.embedding import INT8_MODEL_ID, word_token_estimate
    from crp_core.corpus.prepared import prepare_corpus
    from crp_core.io.ckf import load_ckf

    kb = load_ckf("sample_ckf/knowledge_base.jsonl")
    fp32 = prepare_corpus(kb, cache_dir=tmp_path)
    int8 = prepare_corpus(dataclasses.replace(kb, embedding_model=INT8_MODEL_ID), cache_dir=tmp_path)
    assert int8.model_id == INT8_MODEL_ID
    assert np.array_equal(int8.token_counts, fp32.token_counts)
    assert not np.array_equal(int8.token_counts, word_token_estimate([f.content for f in kb.facts]))


def test_quantize_rows_gives_each_row_its_own_scale(tmp_path):
    """Without the model: a MatMul with a constant weight becomes per-row int8 arithmetic; a row's output is
    the same bits alone or beside a row a thousand times larger (one scale per batch would crush it)."""
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(3)
    w = rng.normal(size=(16, 8)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("MatMul", ["h", "h2"], ["y"])],
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["b", "t", 16]),
            helper.make_tensor_value_info("h2", TensorProto.FLOAT, [8, 3]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["b", "t", 3])],
        [numpy_helper.from_array(w, "w")],
    )
    src, out = tmp_path / "f.onnx", tmp_path / "q.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(src))
    assert onnx_backend.quantize_rows(src, out) == 1  # the weight's MatMul; the MatMul of two inputs stays
    ops = [n.op_type for n in onnx.load(str(out)).graph.node]
    assert ops.count("MatMulInteger") == 1 and ops.count("MatMul") == 1
    sess = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    eye = np.eye(8, 3, dtype=np.float32)
    x = rng.normal(size=(1, 2, 16)).astype(np.float32)
    alone = sess.run(["y"], {"x": x, "h2": eye})[0]
    big = np.concatenate([x, 1000 * rng.normal(size=(1, 2, 16)).astype(np.float32)], axis=1)
    assert np.array_equal(sess.run(["y"], {"x": big, "h2": eye})[0][:, :2], alone)
    np.testing.assert_allclose(alone, x @ w @ eye, rtol=0.05, atol=0.05 * np.abs(x @ w).max())
