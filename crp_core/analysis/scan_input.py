"""The input of a command-line whole-CKF scan: the CKF's vectors and statuses, without an HNSW index.

The scan finds its pairs exactly from the vectors (:func:`crp_core.analysis.scan.exact_pairs`); it never
queries the index that :func:`~crp_core.corpus.prepared.prepare_corpus` builds for retrieval. For a CKF
that carries its embeddings, :func:`scan_corpus` therefore only normalises them, with exactly the
arithmetic of ``prepare_corpus`` (the same vectors bit for bit, hence the same pairs), in bounded
chunks: rows that are unit already are kept as they are, so a memory-mapped ``embeddings.npy`` of unit
rows is used in place, never copied. A CKF without embeddings is embedded by ``prepare_corpus``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from crp_core.analysis.scan import ScanSource
from crp_core.config import CRPConfig
from crp_core.corpus.embedding import Progress
from crp_core.corpus.embedding_models import refuse_mixing
from crp_core.corpus.index import vectors_fingerprint
from crp_core.corpus.prepared import Notify, prepare_corpus, retrievable_mask, unit_rows
from crp_core.model import KnowledgeBase


@dataclass(frozen=True, eq=False)
class ScanCorpus:
    """A CKF's unit vectors and retrievable mask for the scan (:class:`~crp_core.analysis.scan.ScanSource`)."""

    kb: KnowledgeBase
    vectors: np.ndarray  # (n, d) float32 unit rows, read-only (the CKF's own array when its rows are unit)
    retrievable: np.ndarray  # (n,) bool
    fingerprint: str  # crp_core.corpus.index.vectors_fingerprint of the vectors
    model_id: str

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])


def unit_vectors(kb: KnowledgeBase) -> np.ndarray:
    """The CKF's embeddings as unit float32 rows, read-only, exactly as ``prepare_corpus`` normalises them
    (:func:`~crp_core.corpus.prepared.unit_rows`: the given array itself when every row is unit already)."""
    if kb.embeddings is None:
        raise ValueError("the CKF carries no embeddings")
    return unit_rows(kb.embeddings, kb)


def scan_corpus(
    kb: KnowledgeBase,
    *,
    config: CRPConfig,
    cache_dir: str | Path | None = None,
    progress: Progress | None = None,
    notify: Notify | None = None,
) -> ScanSource:
    """What :func:`~crp_core.analysis.scan.scan_ckf` reads of ``kb``: for a CKF with embeddings a
    :class:`ScanCorpus` (no model, no index; a configured ``embedding_model`` that is another model is
    refused as ``prepare_corpus`` refuses it), else ``prepare_corpus`` (the texts are embedded)."""
    if kb.embeddings is None:
        return prepare_corpus(kb, cache_dir=cache_dir, config=config, progress=progress, notify=notify)
    model_id = kb.embedding_model or "unknown"
    refuse_mixing(model_id, config.embedding_model)
    vectors = unit_vectors(kb)
    if progress is not None:
        progress(len(kb), len(kb))
    return ScanCorpus(kb, vectors, retrievable_mask(kb), vectors_fingerprint(vectors), model_id)
