"""Streamlit caches around ``crp_core``: heavy work is done once, never on a rerun or page switch.

* CKF loading: ``st.cache_resource`` keyed by the path and its mtime/size (or the uploaded bytes),
  lenient flag and size limit. A KB is immutable, so sessions share one object (``st.cache_data`` would
  keep a pickled copy and unpickle one per session: gigabytes at 1M facts). It is kept in the session.
* The embedder: one ``st.cache_resource`` (the model loads at most once per process). As soon as a
  prepared corpus is at hand, the model that embeds its new texts (an edited query, a sub-query) starts
  loading in a background thread (:func:`warm_embedder`, :mod:`crp_ui.warmup`), so the first query edit
  does not wait for it.
* Prepared corpora (vectors + HNSW index): a ``st.cache_resource`` registry keyed by the KB
  fingerprint, the embedder and the index parameters. They are built by background jobs
  (``crp_core.JobRegistry``, also one ``st.cache_resource``, same key): the job's
  thread never calls Streamlit, it only updates a plain progress object; a rerun, a page switch or
  another session asking for the same key re-attaches to the running job. The embedding is
  resumable (finished chunks are in the embedding cache), so a cancelled or killed job started
  again embeds only the rest. (Registries rather than decorated functions, because Streamlit
  replays elements created inside cached functions.)
* Pipeline results: ``st.cache_resource`` keyed by (corpus digest, scenario JSON, config TOML,
  now). Results are immutable records with read-only arrays, so sessions may share them; this
  avoids unpickling a large result on every rerun (what ``st.cache_data`` would do).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Hashable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import streamlit as st

from crp_core import (
    LRU,
    Corpus,
    CRPConfig,
    CRPError,
    Embedder,
    EmbeddingCancelled,
    EmbeddingProgress,
    JobRegistry,
    KnowledgeBase,
    KnownSource,
    PipelineResult,
    PreparationJob,
    Scenario,
    SourceTypeMap,
    configured_embedder,
    content_digest,
    default_embedder,
    dump_scenario,
    embedder_for_vectors,
    load_ckf,
    load_ckf_bytes,
    prepare_corpus,
    run_pipeline,
)

from . import warmup
from .config_state import server_embedding_model
from .memo import by_identity
from .progress_text import progress_text

#: prepared corpora kept per process (each holds vectors + index; a few hundred MB at most)
MAX_CORPORA = 4
#: pipeline results kept per process
MAX_RESULTS = 64
#: loaded CKFs kept per process, server-side and uploaded each (shared by every session)
MAX_CKFS = 4


# ---- CKF loading ---------------------------------------------------------------------------------
Stamp = tuple[tuple[str, int, int], ...]


def path_stamp(path: str | os.PathLike[str]) -> Stamp:
    """(name, mtime_ns, size) of a file, or of each file of a CKF directory: the cache key part."""
    p = Path(path)
    try:
        if p.is_dir():
            return tuple((c.name, c.stat().st_mtime_ns, c.stat().st_size) for c in sorted(p.iterdir()) if c.is_file())
        stt = p.stat()
        return ((p.name, stt.st_mtime_ns, stt.st_size),)
    except OSError:
        return ()


@st.cache_resource(show_spinner="Loading the CKF…", max_entries=MAX_CKFS)
def load_ckf_path(
    path: str, stamp: Stamp, lenient: bool, max_bytes: int, source_map: SourceTypeMap | None = None
) -> KnowledgeBase:
    """``crp_core.load_ckf`` (raises ``CKFError``; refusals are not cached); ``source_map``: an SDK
    snapshot's source types (None for the default)."""
    del stamp  # cache key only: a changed file is reloaded
    return load_ckf(path, lenient=lenient, max_bytes=max_bytes, source_map=source_map)


@st.cache_resource(show_spinner="Loading the uploaded CKF…", max_entries=MAX_CKFS)
def load_ckf_upload(
    data: bytes, name: str, lenient: bool, max_bytes: int, source_map: SourceTypeMap | None = None
) -> KnowledgeBase:
    """``crp_core.load_ckf_bytes`` (raises ``CKFError``; refusals are not cached); ``source_map`` as in
    :func:`load_ckf_path`."""
    return load_ckf_bytes(data, name, lenient=lenient, max_bytes=max_bytes, source_map=source_map)


# ---- embedder ------------------------------------------------------------------------------------
#: an embedder used instead of MiniLM for CKFs without embeddings (tests set a small fake one; its
#: ``model_id`` is then the corpus's model). None: the process-wide MiniLM.
EMBEDDER_OVERRIDE: Embedder | None = None


@st.cache_resource(show_spinner=False)
def _minilm() -> Embedder:
    return default_embedder()


def get_embedder() -> Embedder:
    """The embedder for CKF contents: :data:`EMBEDDER_OVERRIDE`, else the server's model
    (``$CRP_INSPECT_EMBEDDING_MODEL``), else MiniLM (each loaded lazily, offline, once per process)."""
    if EMBEDDER_OVERRIDE is not None:
        return EMBEDDER_OVERRIDE
    server = server_embedding_model()
    return configured_embedder(server) if server else _minilm()


def embedder_for(corpus: Corpus) -> Embedder | None:
    """The embedder for new texts of ``corpus``: the override when it is the corpus's model, else
    ``crp_core.embedder_for_vectors`` (MiniLM's, the server model's for its own vectors, or None)."""
    if EMBEDDER_OVERRIDE is not None and EMBEDDER_OVERRIDE.model_id == corpus.model_id:
        return EMBEDDER_OVERRIDE
    return embedder_for_vectors(corpus.model_id, server_embedding_model())


# ---- warming the model in the background ---------------------------------------------------------
def warm_embedder(model_id: str) -> threading.Thread | None:
    """Start loading, in a daemon thread, the embedder that encodes new texts for vectors of ``model_id``
    (the :func:`embedder_for` rule), once per model id per process (:mod:`crp_ui.warmup`); the thread of an
    earlier call is returned again. None when no model runs for it (the override is in use, or no MiniLM
    encodes that model's texts). Never blocks: the script thread only starts the thread."""
    if EMBEDDER_OVERRIDE is not None:
        return None
    server = server_embedding_model()
    return warmup.start(model_id, lambda: embedder_for_vectors(model_id, server))


# ---- figures shared by every session ---------------------------------------------------------------
SHARED_ENTRIES = 32
#: the process-wide store of :func:`memo_shared` (the shared, locked LRU registry every session reads)
_SHARED: LRU[Hashable, Any] = LRU(SHARED_ENTRIES, locked=True)


def memo_shared(key: Hashable, build: Callable[[], Any]) -> Any:
    """``build()`` once per ``key`` across results and sessions (the ``SHARED_ENTRIES`` last used are
    kept): for a figure whose inputs survive a config change, keyed by those inputs' content
    (:func:`crp_ui.tables.frame_digest`). Callers must not mutate what they get back."""
    return _SHARED.get_or_build(key, build)


@st.cache_resource(show_spinner=False)
def _corpora() -> LRU[Hashable, Corpus]:
    """The prepared corpora of this process, shared by every session (a locked LRU registry)."""
    return LRU(MAX_CORPORA, locked=True)


@st.cache_resource(show_spinner=False)
def jobs() -> JobRegistry:
    """The process-wide registry of corpus preparations (one background job per :func:`corpus_key`)."""
    return JobRegistry()


def _embedder_for_kb(kb: KnowledgeBase) -> Embedder | None:
    """None for a CKF with its own embeddings (no model runs), else :func:`get_embedder`."""
    return None if kb.embeddings is not None else get_embedder()


def corpus_key(kb_fingerprint: str, config: CRPConfig, kb: KnowledgeBase | None = None) -> tuple[str, str, int, int]:
    """KB fingerprint + the model that embeds it + the index parameters ``prepare_corpus`` builds with."""
    if kb is not None and kb.embeddings is not None:
        model = "ckf:" + (kb.embedding_model or "unknown")
    else:
        model = str(getattr(EMBEDDER_OVERRIDE, "model_id", "")) or server_embedding_model() or "minilm"
    return (kb_fingerprint, model, config.hnsw_m, config.hnsw_ef_construction)


def corpus_cached(kb_fingerprint: str, config: CRPConfig, kb: KnowledgeBase | None = None) -> bool:
    """Whether the corpus of this key is ready (built, or its job finished)."""
    return ready_corpus(kb_fingerprint, config, kb) is not None


def ready_corpus(kb_fingerprint: str, config: CRPConfig, kb: KnowledgeBase | None = None) -> Corpus | None:
    """The prepared corpus when it is ready (built, or its job finished), else None. Starts nothing."""
    key = corpus_key(kb_fingerprint, config, kb)
    hit = _corpora().get(key)
    if hit is None:
        job = jobs().get(key)
        if job is None or job.state != "done" or not isinstance(job.result, Corpus):
            return None
        hit = job.result
        _corpora().put(key, hit)
    warm_embedder(hit.model_id)  # the first query edit finds the model loaded
    return hit


def keep_corpus(key: Hashable, corpus: object) -> None:
    """Put a finished job's corpus in the registry of prepared corpora."""
    if isinstance(corpus, Corpus):
        _corpora().put(key, corpus)


def start_preparation(kb: KnowledgeBase, kb_fingerprint: str, config: CRPConfig) -> PreparationJob[object]:
    """The background job preparing ``kb`` (re-attached when one runs or finished for this key; a
    new one, resuming from the embedding cache, after a cancel or a failure). Never blocks."""
    embedder = _embedder_for_kb(kb)  # resolved here, in the script thread: the job never calls Streamlit

    def work(progress: EmbeddingProgress) -> Corpus:
        corpus = prepare_corpus(
            kb,
            embedder=embedder,
            config=config,
            progress=progress.update,
            cancel=progress.cancelled,
            index_progress=progress.indexing,
        )
        # the similarity graph every run reads, built here (read when persisted) so that its neighbour table's
        # queries, minutes at a million facts, show in the preparation's progress rather than in a first run
        corpus.graph(config, progress=progress.linking)
        return corpus

    return jobs().get_or_start(corpus_key(kb_fingerprint, config, kb), work)


def job_error(job: PreparationJob[object]) -> CRPError:
    """A finished job's failure as a :class:`CRPError` (what pages show)."""
    err = job.error
    if isinstance(err, CRPError):
        return err
    if isinstance(err, EmbeddingCancelled):
        return CRPError(f"embedding cancelled: {err}")
    return CRPError(f"preparing the CKF failed: {type(err).__name__}: {err}")


def prepared_corpus(
    kb: KnowledgeBase, kb_fingerprint: str, config: CRPConfig, *, show_progress: bool = True, label: str = ""
) -> Corpus:
    """``prepare_corpus`` once per :func:`corpus_key`: the ready corpus, or the script waits for the
    background job (with a progress bar) and returns its corpus. Raises :class:`CRPError` when the
    preparation failed or was cancelled."""
    hit = ready_corpus(kb_fingerprint, config, kb)
    if hit is not None:
        return hit
    job = start_preparation(kb, kb_fingerprint, config)
    wait_for_job(job, label or kb.source, show_progress=show_progress, own_embeddings=kb.embeddings is not None)
    if job.state != "done" or not isinstance(job.result, Corpus):
        raise job_error(job)
    _corpora().put(job.key, job.result)
    warm_embedder(job.result.model_id)
    return job.result


def wait_for_job(
    job: PreparationJob[object],
    label: str,
    *,
    show_progress: bool = True,
    own_embeddings: bool = False,
    poll_s: float = 0.3,
) -> None:
    """Block the script until ``job`` ends, with a progress bar. A rerun (a click, a page switch)
    interrupts the wait, not the job: the next run waits for the same job again."""
    if job.wait(0.05):
        return
    bar = (
        st.progress(0.0, text=progress_text(job.progress.snapshot(), label, own_embeddings=own_embeddings))
        if show_progress
        else None
    )
    try:
        while not job.wait(poll_s):
            if bar is not None:  # each update is also where Streamlit stops this script for a rerun
                snap = job.progress.snapshot()
                bar.progress(snap.fraction, text=progress_text(snap, label, own_embeddings=own_embeddings))
    finally:
        if bar is not None:
            bar.empty()


# ---- pipeline -----------------------------------------------------------------------------------
def corpus_digest(corpus: Corpus) -> str:
    """The corpus's vectors fingerprint + model id + every field of every fact (``kb.data_fingerprint``:
    statuses, which operator decisions change, and source types, timestamps and metadata, which a
    source-type mapping or another file with the same texts change)."""
    return str(by_identity("corpus", corpus, _corpus_digest))


def _corpus_digest(corpus: Corpus) -> str:
    return content_digest(f"{corpus.fingerprint}|{corpus.model_id}|", corpus.kb.data_fingerprint)


def result_key(
    corpus: Corpus, scenario: Scenario, config: CRPConfig, now: datetime, decisions_key: str = ""
) -> tuple[str, str, str, str, str]:
    """(corpus digest incl. statuses, scenario JSON, config TOML, now ISO, decisions key)."""
    return (
        corpus_digest(corpus),
        by_identity("scenario", scenario, lambda s: dump_scenario(s, "json")),
        by_identity("config", config, CRPConfig.to_toml),
        now.isoformat(),
        decisions_key,
    )


@st.cache_resource(show_spinner="Running the pipeline…", max_entries=MAX_RESULTS)
def _run(
    _corpus: Corpus,
    _scenario: Scenario,
    _config: CRPConfig,
    _now: datetime,
    _decisions: Mapping[str, Any] | None,
    _known: KnownSource,
    key: tuple[str, ...],
) -> PipelineResult:
    embedder = embedder_for(_corpus)
    return run_pipeline(
        _corpus, _scenario, _config, now=_now, embedder=embedder, decisions=_decisions, known_conflicts=_known
    )


def pipeline_result(
    corpus: Corpus,
    scenario: Scenario,
    config: CRPConfig,
    now: datetime,
    *,
    decisions: Mapping[str, Any] | None = None,
    decisions_key: str = "",
    known_conflicts: KnownSource = (),
    known_key: str = "",
) -> PipelineResult:
    """``run_pipeline`` once per (corpus, scenario, config, now, decisions_key, known_key).

    ``decisions`` (operator decisions for stage 4) and ``known_conflicts`` (the known-conflict guard's list
    or lookup) are not hashed: pass a ``decisions_key`` / ``known_key`` that changes whenever they do (e.g. a
    digest of the triage store's rows).
    """
    if decisions is not None and not decisions_key:
        raise ValueError("pass decisions_key together with decisions (it keys the cache)")
    return _run(
        corpus,
        scenario,
        config,
        now,
        decisions,
        known_conflicts if callable(known_conflicts) else tuple(known_conflicts),
        result_key(corpus, scenario, config, now, f"{decisions_key}|{known_key}"),
    )


__all__ = [
    "MAX_CORPORA",
    "MAX_RESULTS",
    "SHARED_ENTRIES",
    "EMBEDDER_OVERRIDE",
    "by_identity",
    "memo_shared",
    "path_stamp",
    "load_ckf_path",
    "load_ckf_upload",
    "get_embedder",
    "embedder_for",
    "warm_embedder",
    "jobs",
    "corpus_key",
    "corpus_cached",
    "ready_corpus",
    "keep_corpus",
    "start_preparation",
    "job_error",
    "prepared_corpus",
    "wait_for_job",
    "corpus_digest",
    "result_key",
    "pipeline_result",
]
