"""MiniLM backends and token counting without the model (docs/decisions/embedding-index.md).

Token counts come from the model's ``tokenizer.json`` through the ``tokenizers`` library: the same
counts as ``transformers.AutoTokenizer`` (SPEC_NOTES §2.8) on every sample text and on hard cases,
with neither torch nor transformers imported. The backend is chosen by ``CRP_EMBED_BACKEND`` (default
``onnx`` when ONNX Runtime is installed); with the real model (``-m model``) the ONNX vectors agree with
torch's within 1e-4 cosine, the export lives under the weights' digest, and a failing ONNX start falls
back to torch with a warning.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import crp_core.corpus.embedding as emb
import crp_core.corpus.onnx_backend as onnx_backend
from crp_core.corpus.embedding import BACKEND_ENV, MODEL_ID, MiniLMEmbedder, default_backend
from crp_core.errors import ConfigError

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_ckf"

HARD_TEXTS = [
    "", "   ", "hello world", "etcd listens on 2379/2380 (IANA)", "Zürich, São Paulo, naïve café, ÅÄÖ",
    "数据保护 und Datenschutz", "emoji 🙂 and ™ ® symbols", "tab\tseparated\nnew line", "x" * 300,
    "The etcd default client port is 2379. " * 80,  # far beyond 512 tokens: counted without truncation
    "[k8s-0001]", "NOTE: the two facts below disagree; both are kept.",
]


def _sample_texts() -> list[str]:
    texts = [json.loads(line)["content"] for line in
             (SAMPLE / "knowledge_base.jsonl").read_text(encoding="utf-8").splitlines()]
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
    code = ("import sys\n"
            "from crp_core.corpus.embedding import count_tokens, MODEL_ID\n"
            "n = count_tokens(['etcd serves clients on port 2379'], MODEL_ID).tolist()\n"
            "heavy = [m for m in ('torch', 'transformers', 'sentence_transformers', 'onnxruntime')\n"
            "         if m in sys.modules]\n"
            "print(n, heavy)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300,
                         check=True).stdout
    assert out.strip() == "[8] []"  # et ##cd serves clients on port 237 ##9


def test_backend_choice(monkeypatch):
    monkeypatch.setenv(BACKEND_ENV, "torch")
    assert default_backend() == "torch" and MiniLMEmbedder().backend == "torch"
    monkeypatch.setenv(BACKEND_ENV, " ONNX ")
    assert default_backend() == "onnx"
    monkeypatch.setenv(BACKEND_ENV, "tensorflow")
    with pytest.raises(ConfigError, match="CRP_EMBED_BACKEND='tensorflow': expected one of onnx, torch"):
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
    assert onnx_backend.onnx_model_file(str(weights), tmp_path / "cache").parent.name == hashlib.sha256(
        b"weights-22{}").hexdigest()[:24]


def test_threads_default_and_env(monkeypatch):
    monkeypatch.delenv(emb.THREADS_ENV, raising=False)
    assert 1 <= emb._threads() <= 2
    monkeypatch.setenv(emb.THREADS_ENV, "3")
    assert emb._threads() == 3
    monkeypatch.setenv(emb.THREADS_ENV, "zero")
    assert 1 <= emb._threads() <= 2


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
    assert onnx.model_id == MODEL_ID  # within the bound: one model id, one cache (SPEC_NOTES §1.2)


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
