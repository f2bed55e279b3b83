"""The local engine: this process's embedding path and pair search, the reference the Ray engine matches."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from crp_core.corpus.embedding import (
    DEFAULT_BATCH,
    Embedder,
    EmbeddingCache,
    Progress,
    default_cache_dir,
    default_embedder,
    embed_texts,
    shared_cache,
)


def embedding_cache(cache_dir: str | Path | None) -> EmbeddingCache:
    """The persistent embedding cache of ``cache_dir`` (default ``$CRP_CACHE_DIR`` or ``~/.cache/crp-inspect``)."""
    return shared_cache(Path(cache_dir) if cache_dir is not None else default_cache_dir())


def local_embed(
    texts: Sequence[str],
    cache_dir: str | Path | None = None,
    progress: Progress | None = None,
    *,
    batch_size: int = DEFAULT_BATCH,
    embedder: Embedder | None = None,
) -> np.ndarray:
    """(n, d) unit vectors of ``embedder`` (default: the process-wide MiniLM, 384-d) through the persistent
    cache: only misses reach the model (SPEC-009 §3)."""
    model = embedder if embedder is not None else default_embedder()
    return embed_texts(texts, model, embedding_cache(cache_dir), progress, batch_size=batch_size)
