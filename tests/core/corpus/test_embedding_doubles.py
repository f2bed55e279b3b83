"""Test doubles for the embedding layer (tests only; never used by crp_core).

``GatedEmbedder`` is a ``HashingEmbedder`` that waits for a test's signal between batches.

``HashingEmbedder`` is a deterministic bag-of-words embedder: each lower-cased word is hashed to
a signed bucket, so texts sharing words have a higher cosine. It counts its calls like
``MiniLMEmbedder`` so tests can prove a cache hit embeds nothing.
"""

from __future__ import annotations

import numpy as np

from crp_core.corpus.embedding import Embedder
from tests.support.embedders import HashingEmbedder


def test_hashing_embedder_is_a_deterministic_normalised_embedder():
    e = HashingEmbedder()
    assert isinstance(e, Embedder)
    a = e.encode(["the cat sat", "the cat sat", "quantum flux capacitor"])
    assert a.dtype == np.float32 and a.shape == (3, 64)
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, rtol=1e-6)
    assert np.array_equal(a[0], a[1])
    assert e.encode_calls == 1 and e.texts_encoded == 3


def test_hashing_embedder_shared_words_raise_cosine():
    e = HashingEmbedder(dim=256)
    v = e.encode(["kubernetes etcd port 2379", "kubernetes etcd port 2380", "banana bread recipe"])
    assert v[0] @ v[1] > v[0] @ v[2]
