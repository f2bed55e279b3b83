"""Streamlit caches around ``crp_core``: heavy work is done once, never on a rerun or page switch.

* CKF loading: ``st.cache_data`` keyed by the path and its mtime/size (or the uploaded bytes),
  lenient flag and size limit. The loaded KB is then kept in the session state, so the cached copy
  is only read again when the user picks another CKF.
* The embedder: one ``st.cache_resource`` (the model loads at most once per process).
* Prepared corpora (vectors + HNSW index): a ``st.cache_resource`` registry keyed by the KB
  fingerprint and the index parameters, built with a real ``st.progress`` bar while embedding.
  (A registry rather than a decorated function, because Streamlit replays elements created
  inside cached functions, which would replay the progress bar on every hit.)
* Pipeline results: ``st.cache_resource`` keyed by (corpus digest, scenario JSON, config TOML,
  now). Results are immutable records with read-only arrays, so sessions may share them; this
  avoids unpickling a large result on every rerun (what ``st.cache_data`` would do).
"""
from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from datetime import datetime
from pathlib import Path
from typing import Any

import streamlit as st

from crp_core import pipeline
from crp_core.config import CRPConfig
from crp_core.corpus.prepared import Corpus
from crp_core.model import KnowledgeBase, Scenario

#: prepared corpora kept per process (each holds vectors + index; a few hundred MB at most)
MAX_CORPORA = 4
#: pipeline results kept per process
MAX_RESULTS = 64


# ---- CKF loading ---------------------------------------------------------------------------------
def path_stamp(path: str | os.PathLike[str]) -> tuple:
    """(name, mtime_ns, size) of a file, or of each file of a CKF directory: the cache key part."""
    p = Path(path)
    try:
        if p.is_dir():
            return tuple((c.name, c.stat().st_mtime_ns, c.stat().st_size) for c in sorted(p.iterdir()) if c.is_file())
        stt = p.stat()
        return ((p.name, stt.st_mtime_ns, stt.st_size),)
    except OSError:
        return ()


@st.cache_data(show_spinner="Loading the CKF…", max_entries=8)
def load_ckf_path(path: str, stamp: tuple, lenient: bool, max_bytes: int) -> KnowledgeBase:
    """``crp_core.io.ckf.load_ckf`` (raises :class:`CKFError`; refusals are not cached)."""
    from crp_core.io.ckf import load_ckf

    del stamp  # cache key only: a changed file is reloaded
    return load_ckf(path, lenient=lenient, max_bytes=max_bytes)


@st.cache_data(show_spinner="Loading the uploaded CKF…", max_entries=4)
def load_ckf_upload(data: bytes, name: str, lenient: bool, max_bytes: int) -> KnowledgeBase:
    """``crp_core.io.ckf.load_ckf_bytes`` (raises :class:`CKFError`; refusals are not cached)."""
    from crp_core.io.ckf import load_ckf_bytes

    return load_ckf_bytes(data, name, lenient=lenient, max_bytes=max_bytes)


# ---- embedder ------------------------------------------------------------------------------------
@st.cache_resource(show_spinner=False)
def get_embedder() -> Any:
    """The process-wide MiniLM embedder (loaded lazily, offline, on first use)."""
    from crp_core.corpus.embedding import default_embedder

    return default_embedder()


def embedder_for(corpus: Corpus) -> Any:
    """The embedder for new texts of ``corpus`` (``crp_core.corpus.embedding.embedder_for``: the
    process-wide MiniLM, loaded once, or None)."""
    from crp_core.corpus.embedding import embedder_for as core_embedder_for

    return core_embedder_for(corpus.model_id)


# ---- a small LRU registry shared by all sessions ---------------------------------------------------
class _Registry:
    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()
        self._key_locks: dict[Hashable, threading.Lock] = {}

    def get(self, key: Hashable) -> Any:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
            return None

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._items

    def put(self, key: Hashable, value: Any) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def key_lock(self, key: Hashable) -> threading.Lock:
        with self._lock:
            return self._key_locks.setdefault(key, threading.Lock())

    def get_or_build(self, key: Hashable, build: Callable[[], Any]) -> Any:
        hit = self.get(key)
        if hit is not None:
            return hit
        with self.key_lock(key):  # two sessions asking for the same corpus build it once
            hit = self.get(key)
            if hit is None:
                hit = build()
                self.put(key, hit)
            return hit


@st.cache_resource(show_spinner=False)
def _corpora() -> _Registry:
    return _Registry(MAX_CORPORA)


def corpus_key(kb_fingerprint: str, config: CRPConfig) -> tuple:
    """KB fingerprint + the index parameters that ``prepare_corpus`` builds with."""
    return (kb_fingerprint, config.hnsw_m, config.hnsw_ef_construction)


def corpus_cached(kb_fingerprint: str, config: CRPConfig) -> bool:
    return corpus_key(kb_fingerprint, config) in _corpora()


def prepared_corpus(kb: KnowledgeBase, kb_fingerprint: str, config: CRPConfig, *,
                    show_progress: bool = True) -> Any:
    """``crp_core.corpus.prepared.prepare_corpus`` once per (KB, index params), with a progress bar."""
    from crp_core.corpus.prepared import prepare_corpus

    def build() -> Any:
        bar = st.progress(0.0, text=_progress_text(0, len(kb), kb)) if show_progress else None

        def progress(done: int, total: int) -> None:
            if bar is not None:
                bar.progress(min(1.0, done / total) if total else 1.0, text=_progress_text(done, total, kb))

        embedder = None if kb.embeddings is not None else get_embedder()
        try:
            return prepare_corpus(kb, embedder=embedder, config=config, progress=progress)
        finally:
            if bar is not None:
                bar.empty()

    return _corpora().get_or_build(corpus_key(kb_fingerprint, config), build)


def _progress_text(done: int, total: int, kb: KnowledgeBase) -> str:
    if kb.embeddings is not None:
        return f"Indexing {total} facts (embeddings from the CKF)…"
    if done == 0:
        return f"Loading the embedding model, then embedding {total} facts…"
    return f"Embedding facts: {done} / {total}"


# ---- pipeline -----------------------------------------------------------------------------------
def corpus_digest(corpus: Corpus) -> str:
    """The corpus's vectors fingerprint + model id + every fact's status (operator decisions change it)."""
    h = hashlib.sha256()
    h.update(f"{corpus.fingerprint}|{corpus.model_id}|".encode())
    h.update("\x00".join(f.status for f in corpus.kb.facts).encode())
    return h.hexdigest()


def result_key(corpus: Corpus, scenario: Scenario, config: CRPConfig, now: datetime,
               decisions_key: str = "") -> tuple[str, str, str, str, str]:
    """(corpus digest incl. statuses, scenario JSON, config TOML, now ISO, decisions key)."""
    from crp_core.io.scenario import dump_scenario

    return (corpus_digest(corpus), dump_scenario(scenario, "json"), config.to_toml(), now.isoformat(),
            decisions_key)


@st.cache_resource(show_spinner="Running the pipeline…", max_entries=MAX_RESULTS)
def _run(_corpus: Corpus, _scenario: Scenario, _config: CRPConfig, _now: datetime, _decisions: Any,
         _known: tuple[Any, ...], key: tuple[str, ...]) -> Any:
    embedder = embedder_for(_corpus)
    return pipeline.run_pipeline(_corpus, _scenario, _config, now=_now, embedder=embedder,
                                 decisions=_decisions, known_conflicts=_known)


def pipeline_result(corpus: Corpus, scenario: Scenario, config: CRPConfig, now: datetime, *,
                    decisions: Any = None, decisions_key: str = "", known_conflicts: Any = (),
                    known_key: str = "") -> Any:
    """``run_pipeline`` once per (corpus, scenario, config, now, decisions_key).

    ``decisions`` (operator decisions for stage 4) are not hashed: pass a ``decisions_key`` that
    changes whenever they do (e.g. a digest of the triage store's rows).
    """
    if decisions is not None and not decisions_key:
        raise ValueError("pass decisions_key together with decisions (it keys the cache)")
    return _run(corpus, scenario, config, now, decisions, tuple(known_conflicts),
                result_key(corpus, scenario, config, now, f"{decisions_key}|{known_key}"))
