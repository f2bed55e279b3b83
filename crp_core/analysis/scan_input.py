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
from crp_core.corpus.embedding import Progress, already_unit
from crp_core.corpus.embedding_models import refuse_mixing
from crp_core.corpus.index import vectors_fingerprint
from crp_core.corpus.prepared import Notify, no_direction_error, prepare_corpus, retrievable_mask
from crp_core.errors import CKFError, Problem
from crp_core.model import KnowledgeBase

#: rows normalised at a time (bounds the float64 temporaries: 2 x rows x d x 8 bytes)
NORMALISE_ROWS = 32768


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
    """The CKF's embeddings as unit float32 rows, read-only, exactly as ``prepare_corpus`` normalises them:
    a row whose float64 norm is within the unit tolerance is kept bit for bit, any other is divided by its
    float64 norm; a zero or non-finite row is refused by line and field. The given array itself (a
    memory-mapped file stays mapped) when every row is unit already."""
    emb = kb.embeddings
    if emb is None:
        raise ValueError("the CKF carries no embeddings")
    emb = np.asarray(emb, dtype=np.float32)
    if emb.ndim != 2 or emb.shape[0] != len(kb):
        raise CKFError(
            f"CKF {kb.source}", [Problem(0, "embedding", f"embeddings have shape {emb.shape}, expected ({len(kb)}, d)")]
        )
    out: np.ndarray | None = None
    bad: list[int] = []
    for s in range(0, emb.shape[0], NORMALISE_ROWS):
        part = emb[s : s + NORMALISE_ROWS]
        norms = np.linalg.norm(part.astype(np.float64), axis=1)  # float64: values near 3e38 square without overflow
        bad += (s + np.flatnonzero(~np.isfinite(norms) | (norms == 0))).tolist()
        if bad:
            continue  # refused below, with every such row
        keep = already_unit(part)
        if keep.all():
            if out is not None:
                out[s : s + part.shape[0]] = part
            continue
        if out is None:  # the first row that changes: from here on the rows are copied
            out = np.empty(emb.shape, dtype=np.float32)
            out[:s] = emb[:s]
        got = np.ascontiguousarray(part.astype(np.float64) / norms[:, None], dtype=np.float32)
        got[keep] = part[keep]
        out[s : s + part.shape[0]] = got
    if bad:
        raise no_direction_error(kb, bad)
    result = np.ascontiguousarray(emb if out is None else out)
    if result.flags.writeable:
        result = result.view()
        result.setflags(write=False)
    return result


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
