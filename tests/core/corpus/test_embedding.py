"""Embedding layer: token counting, normalisation, the persistent cache."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import crp_core.corpus.embedding as emb
import crp_core.corpus.embedding_cache as embedding_cache
from crp_core.corpus.embedding import (
    DIM,
    MODEL_ID,
    EmbeddingCache,
    MiniLMEmbedder,
    default_cache_dir,
    embed_texts,
    normalise_rows,
    text_digest,
    word_token_estimate,
)
from tests.support.embedders import HashingEmbedder

TEXTS = [f"fact number {i} about etcd port {2379 + i % 7} and cluster {i % 13}" for i in range(300)]


def test_word_token_estimate_exact_values():
    # ceil(words * 1.3): 0 -> 0; 1 -> ceil(1.3) = 2; 3 -> ceil(3.9) = 4; 10 -> 13 exactly (not 14)
    got = word_token_estimate(["", "one", "a b c", "a b c d e f g h i j", "  spaced   out\ttext\n"])
    # last: 3 words -> 4
    assert got.tolist() == [0, 2, 4, 13, 4]
    assert got.dtype == np.int64
    # Unicode whitespace separates words too: no-break space, line separator, the information separators
    assert word_token_estimate(["a\u00a0b\u2028c\x1cd\u3000e"]).tolist() == [7]  # 5 words -> ceil(6.5)


@given(st.lists(st.text(alphabet=st.characters(categories=["L", "Zs", "Nd"]), max_size=80), max_size=20))
def test_word_token_estimate_matches_definition(texts):
    import math
    from fractions import Fraction

    want = [math.ceil(Fraction(len(t.split()) * 13, 10)) for t in texts]
    assert word_token_estimate(texts).tolist() == want


def test_normalise_rows_unit_norm_and_zero_rows_stay_zero():
    x = np.array([[3.0, 4.0], [0.0, 0.0], [-1.0, 0.0]])
    got = normalise_rows(x)
    # [3,4]/5 = [0.6, 0.8]
    np.testing.assert_allclose(got, [[0.6, 0.8], [0.0, 0.0], [-1.0, 0.0]], rtol=1e-6)
    assert got.dtype == np.float32


def test_default_cache_dir_honours_env(monkeypatch, tmp_path):
    monkeypatch.setenv("CRP_CACHE_DIR", str(tmp_path / "c"))
    assert default_cache_dir() == tmp_path / "c"
    monkeypatch.delenv("CRP_CACHE_DIR")
    assert default_cache_dir() == Path.home() / ".cache" / "crp-inspect"


def test_cache_hit_embeds_nothing(tmp_path):
    e1 = HashingEmbedder()
    first = embed_texts(TEXTS, e1, EmbeddingCache(tmp_path))
    assert e1.texts_encoded == len(TEXTS)
    # a new cache object and a new embedder: as a second process would see it
    e2 = HashingEmbedder()
    second = embed_texts(TEXTS, e2, EmbeddingCache(tmp_path))
    assert e2.encode_calls == 0 and e2.texts_encoded == 0
    assert np.array_equal(first, second)
    np.testing.assert_allclose(np.linalg.norm(second, axis=1), 1.0, rtol=1e-5)


def test_only_misses_and_unique_texts_reach_the_model(tmp_path):
    e = HashingEmbedder()
    cache = EmbeddingCache(tmp_path)
    embed_texts(TEXTS[:100], e, cache)
    assert e.texts_encoded == 100
    mixed = TEXTS[50:150] + ["dup text", "dup text", "dup text"]
    got = embed_texts(mixed, e, cache)
    # 50 already cached (50..99), 50 new (100..149) + 1 distinct duplicate
    assert e.texts_encoded == 100 + 51
    ref = HashingEmbedder().encode(mixed)
    np.testing.assert_allclose(got, ref, atol=1e-6)


def test_cache_is_per_model(tmp_path):
    a = HashingEmbedder("model-a")
    b = HashingEmbedder("model-b")
    cache = EmbeddingCache(tmp_path)
    embed_texts(TEXTS[:10], a, cache)
    embed_texts(TEXTS[:10], b, EmbeddingCache(tmp_path))
    assert b.texts_encoded == 10
    assert cache.model_dir("model-a") != cache.model_dir("model-b")


def test_progress_reports_hits_then_batches(tmp_path):
    e = HashingEmbedder()
    cache = EmbeddingCache(tmp_path)
    embed_texts(TEXTS[:40], e, cache)
    seen = []
    embed_texts(TEXTS[:140], e, cache, progress=lambda d, t: seen.append((d, t)), batch_size=32)
    assert seen[0] == (40, 140)  # the cache hits first
    assert seen[-1] == (140, 140)
    assert all(t == 140 for _, t in seen)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def _shards(cache, model_id):
    return sorted(cache.model_dir(model_id).glob("shard-*.npz"))


@pytest.mark.parametrize("damage", ["garbage", "truncate", "wrong_shape"])
def test_corrupt_shard_is_ignored_removed_and_rebuilt(tmp_path, damage):
    e = HashingEmbedder()
    good = embed_texts(TEXTS[:50], e, EmbeddingCache(tmp_path))
    (shard,) = _shards(EmbeddingCache(tmp_path), e.model_id)
    if damage == "garbage":
        shard.write_bytes(b"not a numpy file at all")
    elif damage == "truncate":
        shard.write_bytes(shard.read_bytes()[: shard.stat().st_size // 2])
    else:
        np.savez(
            shard,
            keys=np.zeros((3, 32), np.uint8),
            vectors=np.zeros((2, 64), np.float32),
            model_id=np.array(e.model_id),
        )
    e2 = HashingEmbedder()
    cache = EmbeddingCache(tmp_path)
    with pytest.warns(RuntimeWarning, match="ignored and removed"):
        again = embed_texts(TEXTS[:50], e2, cache)
    assert e2.texts_encoded == 50  # rebuilt
    np.testing.assert_allclose(again, good, atol=1e-6)
    assert cache.warnings and str(shard) in cache.warnings[0]
    # the rebuilt cache serves the next load
    e3 = HashingEmbedder()
    embed_texts(TEXTS[:50], e3, EmbeddingCache(tmp_path))
    assert e3.texts_encoded == 0


def test_killed_write_leaves_no_shard_and_no_temp(tmp_path, monkeypatch):
    e = HashingEmbedder()

    def boom(*a, **k):
        raise KeyboardInterrupt("killed mid-write")

    monkeypatch.setattr(emb.np, "savez", boom)
    with pytest.raises(KeyboardInterrupt):
        embed_texts(TEXTS[:20], e, EmbeddingCache(tmp_path))
    monkeypatch.undo()
    d = EmbeddingCache(tmp_path).model_dir(e.model_id)
    assert list(d.iterdir()) == []  # neither a half shard nor a temp file
    e2 = HashingEmbedder()
    embed_texts(TEXTS[:20], e2, EmbeddingCache(tmp_path))
    assert e2.texts_encoded == 20


def test_many_shards_are_compacted(tmp_path, monkeypatch):
    e = HashingEmbedder()
    for i in range(6):
        embed_texts(TEXTS[i * 10 : (i + 1) * 10], e, EmbeddingCache(tmp_path))
    cache = EmbeddingCache(tmp_path)
    assert len(_shards(cache, e.model_id)) == 6
    monkeypatch.setattr(embedding_cache, "CACHE_MAX_SHARDS", 3)  # read where the cache merges
    e2 = HashingEmbedder()
    embed_texts(TEXTS[:60], e2, cache)
    assert e2.texts_encoded == 0
    assert len(_shards(cache, e.model_id)) == 1


def test_shards_hold_at_most_shard_rows(tmp_path, monkeypatch):
    monkeypatch.setattr(emb, "CACHE_SHARD_ROWS", 64)
    e = HashingEmbedder()
    embed_texts(TEXTS, e, EmbeddingCache(tmp_path))
    shards = _shards(EmbeddingCache(tmp_path), e.model_id)
    assert len(shards) == 5  # 300 texts / 64 rows -> 64*4 + 44
    assert e.encode_calls == 5


def test_text_digest_is_sha256():
    import hashlib

    assert text_digest("é") == hashlib.sha256("é".encode()).digest()


def test_empty_input(tmp_path):
    e = HashingEmbedder()
    out = embed_texts([], e, EmbeddingCache(tmp_path))
    assert out.shape == (0, 64) and e.encode_calls == 0


def test_minilm_token_count_uses_tokenizer_only():
    m = MiniLMEmbedder()
    counts = m.count_tokens(["hello world", "etcd listens on 2379", ""])
    assert m.load_count == 0 and m.tokenizer_load_count == 1  # the model itself is not loaded
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(emb.minilm_model_path())
    want = [
        len(tok("hello world", add_special_tokens=False)["input_ids"]),
        len(tok("etcd listens on 2379", add_special_tokens=False)["input_ids"]),
        0,
    ]
    assert counts.tolist() == want
    assert counts[0] == 2  # "hello", "world": no [CLS]/[SEP]


@pytest.mark.model
def test_real_minilm_embeds_normalised_and_cache_hit_loads_nothing(tmp_path):
    m = MiniLMEmbedder()
    assert m.load_count == 0  # lazy
    texts = ["The etcd client port is 2379.", "etcd serves clients on port 2379.", "Bananas are rich in potassium."]
    seen = []
    v = embed_texts(texts, m, EmbeddingCache(tmp_path), progress=lambda d, t: seen.append((d, t)))
    assert m.load_count == 1 and m.texts_encoded == 3
    assert os.environ["HF_HUB_OFFLINE"] == "1" and os.environ["TRANSFORMERS_OFFLINE"] == "1"
    assert v.shape == (3, DIM) and v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, rtol=1e-5)
    assert v[0] @ v[1] > 0.8 > 0.2 > v[0] @ v[2]
    assert seen[-1] == (3, 3)
    # direct encode agrees with the cached path
    np.testing.assert_allclose(m.encode(texts), v, atol=1e-5)
    m2 = MiniLMEmbedder()
    v2 = embed_texts(texts, m2, EmbeddingCache(tmp_path))
    assert m2.load_count == 0 and m2.encode_calls == 0
    assert np.array_equal(v, v2)
    assert m.model_id == MODEL_ID


# ---- long texts: the tokenizer's input bounded (docs/reference/pipeline.md §1) ----------------------------
def test_char_bounded_groups_cut_runs_by_total_characters():
    from crp_core.corpus.onnx_backend import char_bounded_groups

    texts = ["a" * 4, "b" * 4, "c" * 10, "d", "e" * 3]
    assert char_bounded_groups(texts, max_chars=8) == [(0, 2), (2, 3), (3, 5)]
    assert char_bounded_groups([], max_chars=8) == []
    assert char_bounded_groups(["x" * 20], max_chars=8) == [(0, 1)]  # a longer text alone


@given(st.lists(st.integers(0, 30), max_size=30), st.integers(1, 40))
def test_char_bounded_groups_cover_every_text_once_in_order(lengths, max_chars):
    from crp_core.corpus.onnx_backend import char_bounded_groups

    texts = ["x" * n for n in lengths]
    runs = char_bounded_groups(texts, max_chars=max_chars)
    assert [i for a, b in runs for i in range(a, b)] == list(range(len(texts)))
    assert all(b - a == 1 or sum(lengths[a:b]) <= max_chars for a, b in runs)


def test_a_text_over_the_bound_is_counted_on_its_prefix_scaled_to_its_length(monkeypatch):
    import crp_core.corpus.onnx_backend as onnx_backend

    m = MiniLMEmbedder()
    short = "etcd listens on 2379"  # 7 tokens
    assert m.count_tokens([short]).tolist() == [7]
    monkeypatch.setattr(onnx_backend, "TOKENIZED_CHARS_MAX", len(short))
    # read as its first 20 characters (7 tokens), counted as ceil(7 * 60 / 20) = 21
    assert m.count_tokens([short * 3, short]).tolist() == [21, 7]
    assert onnx_backend.tokenizer_input([short * 3, "x"]) == [short, "x"]
