"""crp_ui.cache.warm_embedder: the model that embeds a corpus's new texts starts loading in a background
thread once per model id, never twice, and the embedder a later query edit uses is the one it warmed."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import numpy as np
import pytest

from crp_core.corpus import embedding
from crp_ui import cache, warmup


class GatedEmbedder:
    """An embedder whose ``load`` waits for the test's gate and counts its calls (a real one loads once
    under its own lock; this one counts every call, so a second warm-up would show)."""

    model_id = "gated-model"
    dim = 3

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.loads = 0
        self.model: object | None = None
        self.counted: list[list[str]] = []

    def load(self) -> object:
        self.gate.wait(10)
        self.loads += 1
        self.model = self.model or object()
        return self.model

    def count_tokens(self, texts):
        self.counted.append(list(texts))
        return np.ones(len(texts), dtype=np.int64)

    def encode(self, texts):
        return np.zeros((len(texts), self.dim), dtype=np.float32)


@pytest.fixture
def gated(monkeypatch):
    emb = GatedEmbedder()
    monkeypatch.setattr(warmup, "_started", {})
    monkeypatch.setattr(cache, "EMBEDDER_OVERRIDE", None)
    monkeypatch.setattr(
        cache, "embedder_for_vectors", lambda model_id, configured="": emb if model_id == emb.model_id else None
    )
    return emb


def test_the_warm_up_starts_once_per_model_without_blocking(gated):
    first = cache.warm_embedder("gated-model")
    assert first is not None and first.daemon
    assert first.is_alive()  # the call returned while the load waits at the gate: it never blocks
    # a rerun, a page switch, another session: the same thread, not a second load
    again = [cache.warm_embedder("gated-model") for _ in range(5)]
    assert all(t is first for t in again)
    gated.gate.set()
    first.join(10)
    assert not first.is_alive()
    assert gated.loads == 1
    assert gated.counted == [["warm-up"]]  # the tokenizer is warmed too
    assert cache.warm_embedder("gated-model") is first and gated.loads == 1


def test_concurrent_sessions_start_one_warm_up(gated):
    got: list[object] = []
    barrier = threading.Barrier(8)

    def session() -> None:
        barrier.wait()
        got.append(cache.warm_embedder("gated-model"))

    threads = [threading.Thread(target=session) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    gated.gate.set()
    assert len(got) == 8 and len({id(t) for t in got}) == 1
    got[0].join(10)  # type: ignore[attr-defined]
    assert gated.loads == 1


def test_a_later_embed_uses_the_warmed_model(gated):
    gated.gate.set()
    cache.warm_embedder("gated-model").join(10)  # type: ignore[union-attr]
    warmed = gated.model
    corpus = SimpleNamespace(model_id="gated-model")
    assert cache.embedder_for(corpus) is gated  # type: ignore[arg-type]
    assert gated.model is warmed and gated.loads == 1


def test_no_warm_up_without_a_model(gated, monkeypatch):
    assert cache.warm_embedder("a-model-no-minilm-encodes") is None
    monkeypatch.setattr(cache, "EMBEDDER_OVERRIDE", gated)  # tests' fake embedder: nothing to load
    assert cache.warm_embedder("gated-model") is None
    assert gated.loads == 0 and warmup.started("gated-model") is None


def test_a_failing_load_does_not_escape_the_thread(monkeypatch):
    class Broken(GatedEmbedder):
        def load(self) -> object:
            raise OSError("model files missing")

    broken = Broken()
    monkeypatch.setattr(warmup, "_started", {})
    monkeypatch.setattr(cache, "EMBEDDER_OVERRIDE", None)
    monkeypatch.setattr(cache, "embedder_for_vectors", lambda model_id, configured="": broken)
    errors: list[object] = []
    monkeypatch.setattr(threading, "excepthook", errors.append)
    t = cache.warm_embedder("gated-model")
    assert t is not None
    t.join(10)
    assert errors == [] and broken.counted == []


@pytest.mark.model
def test_the_real_minilm_is_loaded_once_and_reused(monkeypatch):
    monkeypatch.setattr(embedding, "EMBEDDERS", embedding.EmbedderRegistry())
    monkeypatch.setattr(warmup, "_started", {})
    monkeypatch.setattr(cache, "EMBEDDER_OVERRIDE", None)
    thread = cache.warm_embedder(embedding.MODEL_ID)
    assert thread is not None
    thread.join(120)
    warmed = embedding.embedder_for(embedding.MODEL_ID)
    assert warmed is not None
    assert warmed.loaded and warmed.load_count == 1
    model = warmed.encoder
    used = cache.embedder_for(SimpleNamespace(model_id=embedding.MODEL_ID))  # type: ignore[arg-type]
    assert used is warmed
    vec = used.encode(["which port does etcd serve clients on?"])
    assert vec.shape == (1, embedding.DIM)
    assert warmed.encoder is model and warmed.load_count == 1


def test_a_ready_corpus_starts_the_warm_up_of_its_model(gated, monkeypatch):
    from crp_core import LRU, CRPConfig

    config = CRPConfig()
    corpus = SimpleNamespace(model_id="gated-model")
    registry: LRU[object, object] = LRU(2, locked=True)
    registry.put(cache.corpus_key("kb-fp", config), corpus)
    monkeypatch.setattr(cache, "_corpora", lambda: registry)
    assert cache.ready_corpus("kb-fp", config) is corpus
    thread = warmup.started("gated-model")
    gated.gate.set()
    thread.join(10)
    assert gated.loads == 1
    assert cache.ready_corpus("kb-fp", config) is corpus and warmup.started("gated-model") is thread
