"""The session's knowledge base: the active CKF, the one being prepared in the background, and how a
bundled sample or an upload becomes active.

A CKF is read by ``crp_core`` (through the caches of :mod:`crp_ui.cache`), then its corpus is prepared
by a background job; it becomes active only once that corpus is ready: at once when that is quick
(:data:`QUICK_WAIT_S`), else when the job ends (:class:`PendingLoad`). A refused read, a failed
preparation, or a CKF that does not fit the active scenario leaves the previous CKF active and records
a :class:`~crp_ui.session.Refusal`. A crprotocol SDK snapshot is read with the session's source-type
mapping (:func:`set_sdk_map`).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import cast

import streamlit as st

from crp_core import (
    CKFError,
    Corpus,
    CRPError,
    KnowledgeBase,
    PreparationJob,
    Problem,
    ProgressSnapshot,
    SourceTypeMap,
    ValidationError,
    embed_scenario,
    source_map_from_bytes,
)

from . import cache, render
from .config_state import get_config
from .samples import list_samples, sample_max_bytes, samples_dir, samples_label, server_limit_note
from .scenario_state import get_scenario
from .session import (
    K_CKF_LABEL,
    K_CKF_NOTICE,
    K_CKF_REFUSAL,
    K_CKF_SAMPLE,
    K_FACT,
    K_KB,
    K_KB_FP,
    K_KB_ID,
    K_LAST_ATTEMPT,
    K_LAST_UPLOAD,
    K_PENDING,
    K_SDK_MAP,
    K_SDK_MAP_REFUSAL,
    Refusal,
    bump,
    get_lenient,
)

#: seconds a load waits for its preparation before leaving it to the background (a CKF with its own
#: embeddings, or one whose embeddings are cached, is ready within this and switches at once)
QUICK_WAIT_S = 2.0


@dataclass(frozen=True)
class PendingLoad:
    """A loaded CKF whose corpus a background job is preparing; it becomes active when the job is done."""

    kb: KnowledgeBase
    source: str
    label: str
    sample: str | None
    key: Hashable  # the job's key (cache.corpus_key)


# ---- the active CKF --------------------------------------------------------------------------------
def active_ckf() -> KnowledgeBase | None:
    """The active knowledge base, never waiting for a pending one (the sidebar's view)."""
    return cast("KnowledgeBase | None", st.session_state.get(K_KB))


def get_ckf() -> KnowledgeBase | None:
    """The active knowledge base (None until one loaded).

    When no CKF is active yet but one is being prepared (the session's first load), this waits for
    it with a progress bar where it is called (the job runs in the background: a rerun or page switch
    waits for the same job again), then reruns the app with the CKF active.
    """
    kb = active_ckf()
    if kb is None and pending_load() is not None:
        _wait_first_load()
        kb = active_ckf()
    return kb


def active_corpus_key() -> str:
    """The corpus cache key of the active CKF (``kb.data_fingerprint``, kept with it)."""
    return str(st.session_state[K_KB_FP])


def get_ckf_fingerprint(kb: KnowledgeBase) -> str:
    """``kb.fingerprint``, read from the session when ``kb`` is the active CKF (it hashes every fact)."""
    if st.session_state.get(K_KB) is kb and st.session_state.get(K_KB_ID):
        return str(st.session_state[K_KB_ID])
    return kb.fingerprint


def get_ckf_label() -> str:
    """The active CKF's display name (the sample name, or ``<file> (uploaded)``)."""
    return str(st.session_state.get(K_CKF_LABEL, ""))


def get_ckf_sample() -> str | None:
    """Sample name of the active CKF, None for an upload."""
    got = st.session_state.get(K_CKF_SAMPLE)
    return str(got) if got else None


def get_ckf_refusal() -> Refusal | None:
    """Why the last CKF load was refused, None when it succeeded."""
    return cast("Refusal | None", st.session_state.get(K_CKF_REFUSAL))


def clear_ckf_refusal() -> None:
    """Forget the last CKF refusal (a link's refusal is reported as a link warning instead)."""
    st.session_state[K_CKF_REFUSAL] = None


def get_ckf_notice() -> str | None:
    """A note about the last CKF load that is not a refusal (a cancelled embedding), or None."""
    got = st.session_state.get(K_CKF_NOTICE)
    return str(got) if got else None


def last_load_attempt() -> str:
    """``"sample"`` or ``"upload"``: the kind of the last CKF load attempted (refused or not)."""
    return str(st.session_state.get(K_LAST_ATTEMPT, "sample"))


def last_upload() -> tuple[str, bytes] | None:
    """(name, bytes) of the last CKF upload attempted in this session, None when there was none."""
    return cast("tuple[str, bytes] | None", st.session_state.get(K_LAST_UPLOAD))


# ---- an SDK snapshot's source-type mapping ----------------------------------------------------------
def get_sdk_map() -> tuple[str, SourceTypeMap] | None:
    """(file name, mapping) of the uploaded mapping an SDK snapshot is read with, None for the default
    (every fact ``unverified``)."""
    return cast("tuple[str, SourceTypeMap] | None", st.session_state.get(K_SDK_MAP))


def get_sdk_map_refusal() -> Refusal | None:
    """Why the last mapping upload was refused (the problems name the key), None when it was read."""
    return cast("Refusal | None", st.session_state.get(K_SDK_MAP_REFUSAL))


def _source_map() -> SourceTypeMap | None:
    got = get_sdk_map()
    return None if got is None else got[1]


def _read_source_map(name: str, data: bytes) -> SourceTypeMap | None:
    """The mapping of an uploaded TOML, or None with the refusal recorded."""
    try:
        return source_map_from_bytes(data, name)
    except CKFError as exc:
        st.session_state[K_SDK_MAP_REFUSAL] = Refusal(name, exc.what, tuple(exc.problems))
    return None


def set_sdk_map(name: str | None, data: bytes | None) -> bool:
    """Read a mapping TOML upload (None: back to the default mapping) and re-read the active CKF with it
    when that CKF is an SDK snapshot. A refused mapping keeps the previous one."""
    if name is None or data is None:
        st.session_state[K_SDK_MAP] = None
    else:
        smap = _read_source_map(name, data)
        if smap is None:
            return False
        st.session_state[K_SDK_MAP] = (name, smap)
    st.session_state[K_SDK_MAP_REFUSAL] = None
    pending = pending_load()
    if not any(x is not None and x.fmt == "sdk" for x in (active_ckf(), pending.kb if pending is not None else None)):
        return True  # no snapshot loaded: the mapping applies to the next one
    return reload_last()


def reload_last() -> bool:
    """Read again what the user last tried to load (the upload, or the active sample), with the
    session's lenient flag and mapping in force now."""
    last = last_upload()
    if last_load_attempt() == "upload" and last is not None:
        return load_upload(last[1], last[0])
    sample = get_ckf_sample()
    return load_sample(sample) if sample else True


# ---- loading --------------------------------------------------------------------------------------
def _refuse(source: str, message: str, problems: tuple[Problem, ...] = ()) -> bool:
    st.session_state[K_CKF_REFUSAL] = Refusal(source, message, problems)
    return False


def _activate_kb(load: Callable[[], KnowledgeBase], source: str, *, label: str, sample: str | None) -> bool:
    """Read the CKF with ``load``, then prepare it; it becomes active only once its corpus is ready.
    Returns False when the CKF was refused, True when it is active or being prepared."""
    try:
        kb = load()
    except ValidationError as exc:  # a server-side CKF over the operator's limit: where that limit is set
        note = server_limit_note([p.message for p in exc.problems]) if sample is not None else None
        return _refuse(source, f"{exc.what} ({note})" if note else exc.what, exc.problems)
    except CRPError as exc:
        return _refuse(source, str(exc))
    st.session_state[K_CKF_NOTICE] = None
    _drop_pending()
    job = cache.start_preparation(kb, kb.data_fingerprint, get_config())
    job.wait(QUICK_WAIT_S)
    pending = PendingLoad(kb, source, label, sample, job.key)
    if not job.finished:
        st.session_state[K_PENDING] = pending
        st.session_state[K_CKF_REFUSAL] = None
        return True
    return _conclude(pending, job)


def _cancelled_notice(p: PendingLoad, snap: ProgressSnapshot) -> None:
    st.session_state[K_CKF_NOTICE] = (
        f"Embedding of {p.label} cancelled at {snap.done:,} / {snap.total:,} facts. The finished chunks "
        "are kept in the embedding cache: loading the file again continues from there."
    )


def _conclude(p: PendingLoad, job: PreparationJob[object]) -> bool:
    """A finished preparation: activate its CKF, or record why not (the previous CKF stays)."""
    if job.state == "cancelled":
        _cancelled_notice(p, job.progress.snapshot())
        return False
    if job.state != "done" or not isinstance(job.result, Corpus):
        err = cache.job_error(job)
        if isinstance(err, ValidationError):
            return _refuse(p.source, err.what, err.problems)
        return _refuse(p.source, f"CKF {p.source} could not be prepared", (Problem(0, "embedding", str(err)),))
    cache.keep_corpus(job.key, job.result)
    unfit = _scenario_misfit(job.result)
    if unfit is not None:
        return _refuse(
            p.source,
            f"CKF {p.source} refused: it does not fit the active scenario ({unfit[0]}); load a matching scenario first",
            unfit[1],
        )
    st.session_state[K_KB] = p.kb
    st.session_state[K_KB_FP] = p.kb.data_fingerprint
    st.session_state[K_KB_ID] = p.kb.fingerprint
    st.session_state[K_CKF_LABEL] = p.label
    st.session_state[K_CKF_SAMPLE] = p.sample
    st.session_state[K_CKF_REFUSAL] = None
    if st.session_state.get(K_FACT) and p.kb.get(st.session_state[K_FACT]) is None:
        st.session_state[K_FACT] = None
    bump("ckf")  # the sample picker is rebuilt from the new state
    return True


def _scenario_misfit(corpus: Corpus) -> tuple[str, tuple[Problem, ...]] | None:
    """Why the active scenario cannot run on ``corpus`` (other model, other dimension), or None.

    Checked only when the CKF would replace an active one: a first load is always shown."""
    s = get_scenario()
    if s is None or active_ckf() is None:
        return None
    try:
        embed_scenario(s, corpus, embedder=cache.embedder_for(corpus))
    except ValidationError as exc:
        return exc.what, exc.problems
    except CRPError as exc:
        return "embedding model", (Problem(0, "embedding_model", str(exc)),)
    return None


def load_sample(name: str) -> bool:
    """Load a CKF the sidebar lists by name. Returns False (and records the refusal) when it is refused."""
    if name not in list_samples():
        return _refuse(name, f"no {samples_label().lower()} named {name!r} in {samples_dir()}")
    st.session_state[K_LAST_ATTEMPT] = "sample"
    path = samples_dir() / name
    lenient, limit, smap = get_lenient(), sample_max_bytes(get_config().ckf_max_bytes), _source_map()
    return _activate_kb(
        lambda: cache.load_ckf_path(str(path), cache.path_stamp(path), lenient, limit, smap),
        name,
        label=name,
        sample=name,
    )


def sample_fingerprint(name: str) -> str | None:
    """The fingerprint of the bundled CKF ``name`` as :func:`load_sample` would load it, without making it
    the active one (the load is cached); None when it is refused or not there."""
    if name not in list_samples():
        return None
    path = samples_dir() / name
    limit = sample_max_bytes(get_config().ckf_max_bytes)
    try:
        kb = cache.load_ckf_path(str(path), cache.path_stamp(path), get_lenient(), limit, _source_map())
    except CRPError:
        return None
    return kb.fingerprint


def upload_limit() -> int:
    """The CKF upload limit in bytes: ``ckf_max_bytes``, capped by the server's ``server.maxUploadSize``
    (MiB: Streamlit's server multiplies it by 1024 * 1024)."""
    server = st.get_option("server.maxUploadSize")
    limit = get_config().ckf_max_bytes
    return min(limit, int(server) * 2**20) if server else limit


def load_upload(data: bytes, name: str) -> bool:
    """Load an uploaded CKF. A refused upload leaves the previously loaded CKF active."""
    st.session_state[K_LAST_ATTEMPT] = "upload"
    st.session_state[K_LAST_UPLOAD] = (name, data)
    lenient, limit = get_lenient(), upload_limit()
    if len(data) > limit:
        too_big = Problem(
            0,
            "file",
            f"the file has {len(data):,} bytes; the upload limit is {render.limit_text(limit)} "
            "(ckf_max_bytes, capped by the server's server.maxUploadSize)",
        )
        return _refuse(name, f"CKF {name} refused", (too_big,))
    smap = _source_map()
    return _activate_kb(
        lambda: cache.load_ckf_upload(data, name, lenient, limit, smap), name, label=f"{name} (uploaded)", sample=None
    )


# ---- the load being prepared in the background -------------------------------------------------------
def pending_load() -> PendingLoad | None:
    """The CKF being prepared in the background for this session, None when there is none."""
    return cast("PendingLoad | None", st.session_state.get(K_PENDING))


def _pending_job(p: PendingLoad) -> PreparationJob[object]:
    job = cache.jobs().get(p.key)
    if job is None:  # dropped from the registry: start it again, it resumes from the embedding cache
        job = cache.start_preparation(p.kb, p.kb.data_fingerprint, get_config())
        st.session_state[K_PENDING] = PendingLoad(p.kb, p.source, p.label, p.sample, job.key)
    return job


def pending_progress() -> tuple[PendingLoad, ProgressSnapshot] | None:
    """(the pending load, a snapshot of its job's progress), or None."""
    p = pending_load()
    if p is None:
        return None
    return p, _pending_job(p).progress.snapshot()


def poll_pending() -> str | None:
    """Settle the pending load if its job has ended. Returns None (nothing pending), ``"running"``,
    or the job's final state (``"done"``, ``"failed"``, ``"cancelled"``) after settling it."""
    p = pending_load()
    if p is None:
        return None
    job = _pending_job(p)
    if not job.finished:
        return "running"
    st.session_state[K_PENDING] = None
    _conclude(p, job)
    return str(job.state)


def cancel_pending() -> None:
    """Cancel the pending load's embedding (finished chunks stay cached); the active CKF stays."""
    p = pending_load()
    if p is None:
        return
    job = _pending_job(p)
    job.cancel()
    st.session_state[K_PENDING] = None
    if job.finished and job.state == "done":  # it ended just now: nothing to cancel
        _conclude(p, job)
        return
    _cancelled_notice(p, job.progress.snapshot())


def _drop_pending() -> None:
    """A newer load replaces the pending one: its job is cancelled (its finished chunks stay cached)."""
    p = pending_load()
    if p is not None:
        job = cache.jobs().get(p.key)
        if job is not None:
            job.cancel()
        st.session_state[K_PENDING] = None


def _wait_first_load() -> None:
    """No CKF is active and one is pending: wait for it here (progress bar), settle it, rerun."""
    p = pending_load()
    if p is None:
        return
    job = _pending_job(p)
    cache.wait_for_job(job, p.label, own_embeddings=p.kb.embeddings is not None)
    poll_pending()
    st.rerun()  # the sidebar was drawn while the CKF was still pending
