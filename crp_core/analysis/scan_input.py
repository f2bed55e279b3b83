"""The input of a command-line whole-CKF scan: the CKF's vectors and statuses, without an HNSW index.

The scan finds its pairs exactly from the vectors (:func:`crp_core.analysis.scan.exact_pairs`); it never
queries the index that :func:`~crp_core.corpus.prepared.prepare_corpus` builds for retrieval. For a CKF
that carries its embeddings, :func:`scan_corpus` therefore only normalises them, with exactly the
arithmetic of ``prepare_corpus`` (the same vectors bit for bit, hence the same pairs), in bounded
chunks: rows that are unit already are kept as they are, so a memory-mapped ``embeddings.npy`` of unit
rows is used in place, never copied. A CKF without embeddings is embedded by ``prepare_corpus``.
Under operator decisions the scan reads two corpora sharing those vectors (:func:`in_force_sources`): the one its
pairs are found and arbitrated in, and the one with every status in force that the pairs are cut to.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from crp_core.config import CRPConfig
from crp_core.corpus.embedding import Progress
from crp_core.corpus.embedding_models import refuse_mixing
from crp_core.corpus.index import vectors_fingerprint
from crp_core.corpus.prepared import Corpus, Notify, prepare_corpus, retrievable_mask, unit_rows
from crp_core.decisions import DecisionSet
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

    def with_statuses(self, mapping: Mapping[str, str]) -> ScanCorpus:
        """Operator decisions: new statuses (ids the CKF does not hold ignored), the same vectors; the
        retrievable mask read again (as ``Corpus.with_statuses``)."""
        kb = self.kb.with_statuses(mapping)
        return replace(self, kb=kb, retrievable=retrievable_mask(kb))


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
) -> ScanCorpus | Corpus:
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


@dataclass(frozen=True, eq=False)
class InForceSources:
    """What a command-line scan reads under the operators' decisions (:func:`in_force_sources`): ``checked``, the
    CKF with the marks that leave a fact retrievable (``DecisionSet.retrievable_marks``: the corpus whose scan the
    dashboard keeps), and ``applied``, the same with every status in force (``DecisionSet.statuses_on``: the corpus
    every run reads); one object when no mark takes a fact out of retrieval. ``within_retrievable`` cuts the scan of
    ``checked`` to the facts ``applied`` retrieves (docs/decisions/triage.md, "Out of retrieval")."""

    checked: ScanCorpus | Corpus
    applied: ScanCorpus | Corpus


def in_force_sources(
    kb: KnowledgeBase,
    decisions: DecisionSet | None,
    *,
    config: CRPConfig,
    cache_dir: str | Path | None = None,
    progress: Progress | None = None,
    notify: Notify | None = None,
) -> InForceSources:
    """:func:`scan_corpus` of ``kb`` with the ``decisions`` in force (None: none), as :class:`InForceSources`: the
    vectors are read or embedded once; the corpus with every status shares them."""
    if decisions is None:
        only = scan_corpus(kb, config=config, cache_dir=cache_dir, progress=progress, notify=notify)
        return InForceSources(only, only)
    kept = decisions.retrievable_marks()  # ids the CKF does not hold are ignored, as by statuses_on
    checked = scan_corpus(kb.with_statuses(kept), config=config, cache_dir=cache_dir, progress=progress, notify=notify)
    out = {f: s for f, s in decisions.statuses_on(kb).items() if f not in kept}
    return InForceSources(checked, checked.with_statuses(out) if out else checked)
