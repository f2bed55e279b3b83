"""Embedding doubles (tests only; never used by crp_core).

``HashingEmbedder`` is a deterministic bag-of-words embedder: each lower-cased word is hashed to
a signed bucket, so texts sharing words have a higher cosine. It counts its calls like
``MiniLMEmbedder`` so tests can prove a cache hit embeds nothing.

``GatedEmbedder`` is a ``HashingEmbedder`` that waits for a test's signal between batches.
"""

from __future__ import annotations

import hashlib
import re
import threading

import numpy as np

from crp_core.corpus.embedding import word_token_estimate

_WORD = re.compile(r"\w+")


class HashingEmbedder:
    def __init__(self, model_id: str = "test-hashing", dim: int = 64) -> None:
        self.model_id = model_id
        self.dim = dim
        self.encode_calls = 0
        self.texts_encoded = 0
        self.load_count = 0

    def _vec(self, text: str) -> np.ndarray:
        v = np.zeros(self.dim, dtype=np.float64)
        for w in _WORD.findall(text.lower()) or ["<empty>"]:
            h = hashlib.sha256(w.encode()).digest()
            b = int.from_bytes(h[:4], "little") % self.dim
            v[b] += 1.0 if h[4] & 1 else -1.0
        n = np.linalg.norm(v)
        if n == 0:  # words cancelled out: fall back to a fixed direction
            v[0] = 1.0
            n = 1.0
        return v / n

    def encode(self, texts, *, batch_size=64, progress=None):
        texts = list(texts)
        self.encode_calls += 1
        if texts:
            self.load_count = max(self.load_count, 1)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for s in range(0, len(texts), batch_size):
            for i in range(s, min(s + batch_size, len(texts))):
                out[i] = self._vec(texts[i])
            self.texts_encoded += min(batch_size, len(texts) - s)
            if progress is not None:
                progress(min(s + batch_size, len(texts)), len(texts))
        return out

    def count_tokens(self, texts):
        return word_token_estimate(list(texts))


class GatedEmbedder(HashingEmbedder):
    """Embeds one batch, then waits for ``gate`` (at most ``timeout`` s) before each further batch: a slow
    model that a test releases when it wants."""

    def __init__(self, model_id: str = "test-hashing", dim: int = 64, timeout: float = 10.0) -> None:
        super().__init__(model_id, dim)
        self.timeout = timeout
        self.gate = threading.Event()
        self.batches = 0

    def encode(self, texts, *, batch_size=64, progress=None):
        texts = list(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for s in range(0, len(texts), batch_size):
            if self.batches >= 1:
                self.gate.wait(self.timeout)
            self.batches += 1
            out[s : s + batch_size] = super().encode(texts[s : s + batch_size], batch_size=batch_size)
            if progress is not None:
                progress(min(s + batch_size, len(texts)), len(texts))
        return out
