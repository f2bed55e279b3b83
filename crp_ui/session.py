"""Per-user session state: everything lives in ``st.session_state`` and pages read it through here.

The accessors (:func:`get_ckf`, :func:`get_corpus`, :func:`get_scenario`, :func:`get_config`,
:func:`get_result`, :func:`selected_fact` / :func:`select_fact`, :func:`get_operator`, ...) are
re-exported by :mod:`crp_ui.state`, which pages import. All computation goes through ``crp_core``
(via :mod:`crp_ui.cache`, so heavy work is never repeated on a rerun or a page switch).

Configuration precedence matches the CLI (docs/DECISIONS.md): defaults < loaded TOML (``base``) <
the scenario's ``config`` table < sidebar edits (like ``--set``). The effective config is what the
editor shows and what the pipeline gets.

A session initialises itself on the first accessor call (:func:`init_state`): defaults, then the
view the URL describes (:mod:`crp_ui.url_codec`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from typing import Any

import streamlit as st

from crp_core.config import CRPConfig, layered_config
from crp_core.errors import ConfigError, CRPError, Problem, ValidationError
from crp_core.model import KnowledgeBase, Scenario

from . import cache, render
from .samples import list_samples, list_scenarios, samples_dir, scenarios_dir

EDITED_SCENARIO = "edited scenario"  # Refusal.source of a refused sidebar edit

# ---- session-state keys (private to crp_ui: pages use the accessors) ------------------------------
_P = "crp."
K_INIT = _P + "initialised"
K_KB = _P + "kb"
K_KB_FP = _P + "kb_fingerprint"  # the corpus cache key of the active CKF (kb.data_fingerprint)
K_KB_ID = _P + "kb_identity"  # kb.fingerprint of the active CKF: what operator decisions are stamped with
K_CKF_LABEL = _P + "ckf_label"
K_CKF_SAMPLE = _P + "ckf_sample"  # sample name of the active CKF, None for an upload
K_CKF_REFUSAL = _P + "ckf_refusal"  # Refusal of the last load attempt, None when it succeeded
K_LENIENT = _P + "lenient"
K_LAST_ATTEMPT = _P + "ckf_last_attempt"  # "sample" | "upload": what the last load tried
K_LAST_UPLOAD = _P + "ckf_last_upload"  # (name, bytes) of the last upload, re-read by the lenient toggle
K_PENDING = _P + "ckf_pending"  # PendingLoad: a CKF being prepared in the background, not yet active
K_CKF_NOTICE = _P + "ckf_notice"  # a message about the last load (e.g. a cancelled embedding)
K_SDK_MAP = _P + "sdk_map"  # (name, SourceTypeMap) of the uploaded SDK source-type mapping, or None
K_SDK_MAP_REFUSAL = _P + "sdk_map_refusal"  # Refusal of the last mapping upload, None when it was read
K_SCENARIO = _P + "scenario"
K_SCENARIO_NAME = _P + "scenario_name"  # bundled scenario name, "" for an upload / none
K_SCENARIO_EDITED = _P + "scenario_edited"
K_SCENARIO_REFUSAL = _P + "scenario_refusal"
K_NOW_DEFAULT = _P + "now_default"  # the date 'now' resolves to when the scenario has none
K_BASE = _P + "config_base"
K_EDITS = _P + "config_edits"
K_CONFIG = _P + "config"
K_CONFIG_ERROR = _P + "config_error"
K_OPERATOR = _P + "operator"
K_FACT = _P + "selected_fact"
K_URL_WARNINGS = _P + "url_warnings"
K_GEN = _P + "gen."  # + area: bumped when state changes outside a widget, so widgets are rebuilt


@dataclass(frozen=True)
class Refusal:
    """A load that was refused: what, and every problem (line + field) the loader found."""

    source: str
    message: str
    problems: tuple[Problem, ...] = ()


@dataclass(frozen=True)
class PendingLoad:
    """A loaded CKF whose corpus a background job is preparing; it becomes active when the job is done."""

    kb: KnowledgeBase
    source: str
    label: str
    sample: str | None
    key: tuple[Any, ...]  # the job's key (cache.corpus_key)


#: seconds a load waits for its preparation before leaving it to the background (a CKF with its own
#: embeddings, or one whose embeddings are cached, is ready within this and switches at once)
QUICK_WAIT_S = 2.0


# ---- generations -----------------------------------------------------------------------------
def gen(area: str) -> int:
    """Widget generation of ``area``: part of widget keys, so a programmatic change rebuilds them."""
    return int(st.session_state.get(K_GEN + area, 0))


def bump(area: str) -> None:
    """Rebuild the widgets of ``area`` on this run (their keys change)."""
    st.session_state[K_GEN + area] = gen(area) + 1


# ---- CKF ---------------------------------------------------------------------------------------
def get_ckf() -> KnowledgeBase | None:
    """The active knowledge base (None until one loaded).

    When no CKF is active yet but one is being prepared (the session's first load), this waits for
    it with a progress bar where it is called (the job runs in the background: a rerun or page switch
    waits for the same job again), then reruns the app with the CKF active.
    """
    init_state()
    kb = st.session_state.get(K_KB)
    if kb is None and st.session_state.get(K_PENDING) is not None:
        _wait_first_load()
        kb = st.session_state.get(K_KB)
    return kb


def active_ckf() -> KnowledgeBase | None:
    """The active knowledge base, never waiting for a pending one (the sidebar's view)."""
    init_state()
    return st.session_state.get(K_KB)


def get_ckf_fingerprint(kb: KnowledgeBase) -> str:
    """``kb.fingerprint``, read from the session when ``kb`` is the active CKF (hashing every fact
    of a large CKF on each rerun would cost tens of milliseconds)."""
    if st.session_state.get(K_KB) is kb and st.session_state.get(K_KB_ID):
        return str(st.session_state[K_KB_ID])
    return kb.fingerprint


def get_ckf_label() -> str:
    """The active CKF's display name (the sample name, or ``<file> (uploaded)``)."""
    return st.session_state.get(K_CKF_LABEL, "")


def get_ckf_sample() -> str | None:
    """Sample name of the active CKF, None for an upload."""
    return st.session_state.get(K_CKF_SAMPLE)


def get_ckf_refusal() -> Refusal | None:
    """Why the last CKF load was refused, None when it succeeded."""
    return st.session_state.get(K_CKF_REFUSAL)


def get_ckf_notice() -> str | None:
    """A note about the last CKF load that is not a refusal (a cancelled embedding), or None."""
    return st.session_state.get(K_CKF_NOTICE)


def last_load_attempt() -> str:
    """``"sample"`` or ``"upload"``: the kind of the last CKF load attempted (refused or not)."""
    return st.session_state.get(K_LAST_ATTEMPT, "sample")


def last_upload() -> tuple[str, bytes] | None:
    """(name, bytes) of the last CKF upload attempted in this session, None when there was none."""
    return st.session_state.get(K_LAST_UPLOAD)


def get_lenient() -> bool:
    """Lenient loading: bad facts are skipped and listed instead of refusing the file."""
    return bool(st.session_state.get(K_LENIENT, False))


def set_lenient(value: bool) -> None:
    """Switch lenient loading for the next CKF load."""
    st.session_state[K_LENIENT] = bool(value)


def get_sdk_map() -> tuple[str, Any] | None:
    """(file name, :class:`~crp_core.io.ckf.sdk_map.SourceTypeMap`) of the uploaded mapping an SDK snapshot
    is read with (docs/decisions/sdk-snapshots.md), None for the default (every fact ``unverified``)."""
    return st.session_state.get(K_SDK_MAP)


def get_sdk_map_refusal() -> Refusal | None:
    """Why the last mapping upload was refused (the problems name the key), None when it was read."""
    return st.session_state.get(K_SDK_MAP_REFUSAL)


def _source_map() -> Any:
    got = get_sdk_map()
    return None if got is None else got[1]


def set_sdk_map(name: str | None, data: bytes | None) -> bool:
    """Read a mapping TOML upload (None: back to the default mapping) and re-read the active CKF with it
    when that CKF is an SDK snapshot. A refused mapping keeps the previous one."""
    import tomllib

    from crp_core.errors import CKFError
    from crp_core.io.ckf.sdk_map import source_map_from_dict

    if name is None or data is None:
        st.session_state[K_SDK_MAP] = None
    else:
        try:
            doc = tomllib.loads(data.decode("utf-8"))
            smap = source_map_from_dict(doc, name)
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            st.session_state[K_SDK_MAP_REFUSAL] = Refusal(
                name, f"source-type mapping {name} refused", (Problem(0, "toml", f"not valid TOML: {exc}"),)
            )
            return False
        except CKFError as exc:
            st.session_state[K_SDK_MAP_REFUSAL] = Refusal(name, exc.what, tuple(exc.problems))
            return False
        st.session_state[K_SDK_MAP] = (name, smap)
    st.session_state[K_SDK_MAP_REFUSAL] = None
    kb, pending = active_ckf(), pending_load()
    if not any(x is not None and x.fmt == "sdk" for x in (kb, pending.kb if pending is not None else None)):
        return True  # no snapshot loaded: the mapping applies to the next one
    last = last_upload()
    if last_load_attempt() == "upload" and last is not None:
        return load_upload(last[1], last[0])
    sample = get_ckf_sample()
    return load_sample(sample) if sample else True


def _corpus_fp(kb: KnowledgeBase) -> str:
    """The CKF part of the corpus cache key: ``kb.data_fingerprint``, every fact field. A re-upload that
    changes only source types, statuses, timestamps or TTLs (or an SDK snapshot re-read with another
    mapping) is a different corpus; the vectors are cached by text, so nothing is embedded again."""
    return kb.data_fingerprint


def _refuse(source: str, message: str, problems: tuple[Problem, ...] = ()) -> bool:
    st.session_state[K_CKF_REFUSAL] = Refusal(source, message, problems)
    return False


def _activate_kb(load: Callable[[], KnowledgeBase], source: str, *, label: str, sample: str | None) -> bool:
    """Read the CKF with ``load``, then prepare it; it becomes active only once its corpus is ready
    (at once when that is quick, else when the background job ends). A refused read, a failed
    preparation, or a CKF that does not fit the active scenario leaves the previous CKF active.
    Returns False when the CKF was refused, True when it is active or being prepared."""
    try:
        kb = load()
    except ValidationError as exc:
        return _refuse(source, exc.what, exc.problems)
    except CRPError as exc:
        return _refuse(source, str(exc))
    st.session_state[K_CKF_NOTICE] = None
    _drop_pending()
    config = get_config()
    job = cache.start_preparation(kb, _corpus_fp(kb), config)
    job.wait(QUICK_WAIT_S)
    pending = PendingLoad(kb, source, label, sample, job.key)
    if not job.finished:
        st.session_state[K_PENDING] = pending
        st.session_state[K_CKF_REFUSAL] = None
        return True
    return _conclude(pending, job)


def _conclude(p: PendingLoad, job: Any) -> bool:
    """A finished preparation: activate its CKF, or record why not (the previous CKF stays)."""
    if job.state == "cancelled":
        snap = job.progress.snapshot()
        st.session_state[K_CKF_NOTICE] = (
            f"Embedding of {p.label} cancelled at {snap.done:,} / {snap.total:,} facts. The finished chunks "
            "are kept in the embedding cache: loading the file again continues from there."
        )
        return False
    if job.state != "done":
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
    st.session_state[K_KB_FP] = _corpus_fp(p.kb)
    st.session_state[K_KB_ID] = p.kb.fingerprint
    st.session_state[K_CKF_LABEL] = p.label
    st.session_state[K_CKF_SAMPLE] = p.sample
    st.session_state[K_CKF_REFUSAL] = None
    if st.session_state.get(K_FACT) and p.kb.get(st.session_state[K_FACT]) is None:
        st.session_state[K_FACT] = None
    bump("ckf")  # the sample picker is rebuilt from the new state
    return True


def _scenario_misfit(corpus: Any) -> tuple[str, tuple[Problem, ...]] | None:
    """Why the active scenario cannot run on ``corpus`` (other model, other dimension), or None.

    Checked only when the CKF would replace an active one: a first load is always shown."""
    from crp_core.corpus.prepared import embed_scenario

    s = get_scenario()
    if s is None or st.session_state.get(K_KB) is None:
        return None
    try:
        embed_scenario(s, corpus, embedder=cache.embedder_for(corpus))
    except ValidationError as exc:
        return exc.what, exc.problems
    except CRPError as exc:
        return "embedding model", (Problem(0, "embedding_model", str(exc)),)
    return None


def pending_load() -> PendingLoad | None:
    """The CKF being prepared in the background for this session, None when there is none."""
    return st.session_state.get(K_PENDING)


def _pending_job(p: PendingLoad) -> Any:
    job = cache.jobs().get(p.key)
    if job is None:  # dropped from the registry (unlikely): start it again, it resumes from the cache
        job = cache.start_preparation(p.kb, _corpus_fp(p.kb), get_config())
        st.session_state[K_PENDING] = PendingLoad(p.kb, p.source, p.label, p.sample, job.key)
    return job


def pending_progress() -> tuple[PendingLoad, Any] | None:
    """(the pending load, a :class:`crp_core.corpus.jobs.ProgressSnapshot` of its job), or None."""
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
    snap = job.progress.snapshot()
    st.session_state[K_CKF_NOTICE] = (
        f"Embedding of {p.label} cancelled at {snap.done:,} / {snap.total:,} facts. The finished chunks "
        "are kept in the embedding cache: loading the file again continues from there."
    )


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


def load_sample(name: str) -> bool:
    """Load a bundled CKF by name. Returns False (and records the refusal) when it is refused."""
    if name not in list_samples():
        return _refuse(name, f"no bundled CKF named {name!r} in {samples_dir()}")
    st.session_state[K_LAST_ATTEMPT] = "sample"
    path = samples_dir() / name
    lenient, limit = get_lenient(), get_config().ckf_max_bytes
    smap = _source_map()
    return _activate_kb(
        lambda: cache.load_ckf_path(str(path), cache.path_stamp(path), lenient, limit, smap),
        name,
        label=name,
        sample=name,
    )


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
        return _refuse(
            name,
            f"CKF {name} refused",
            (
                Problem(
                    0,
                    "file",
                    f"the file has {len(data):,} bytes; the upload limit is {render.limit_text(limit)} "
                    "(ckf_max_bytes, capped by the server's server.maxUploadSize)",
                ),
            ),
        )
    smap = _source_map()
    return _activate_kb(
        lambda: cache.load_ckf_upload(data, name, lenient, limit, smap), name, label=f"{name} (uploaded)", sample=None
    )


def get_corpus(*, progress: bool = True, decisions: bool = True) -> Any:
    """The prepared :class:`crp_core.corpus.prepared.Corpus` of the active CKF (embedded once, then cached).

    The active CKF's corpus is normally ready (a CKF becomes active when it is); otherwise (index
    parameters changed, or the corpus was evicted) the script waits for the background job with a
    progress bar (``progress=True``).
    With ``decisions`` (the default) the operators' triage statuses are applied
    (:func:`crp_ui.decisions.apply_decisions`); ``decisions=False`` gives the CKF as loaded.
    Returns None when no CKF is loaded; raises :class:`CRPError` when the CKF cannot be prepared
    (or the decision database cannot be read).
    """
    kb = get_ckf()
    if kb is None:
        return None
    corpus = cache.prepared_corpus(
        kb, st.session_state[K_KB_FP], get_config(), show_progress=progress, label=get_ckf_label()
    )
    if not decisions:
        return corpus
    from . import decisions as triage_decisions

    return triage_decisions.apply_decisions(corpus)


def corpus_ready() -> bool:
    """True when the active CKF's corpus is already prepared (nothing left to embed)."""
    kb = active_ckf()
    return kb is not None and cache.corpus_cached(st.session_state[K_KB_FP], get_config(), kb)


# ---- scenario --------------------------------------------------------------------------------
def get_scenario() -> Scenario | None:
    """The scenario being inspected, with ``now`` always resolved (see :func:`get_now`)."""
    init_state()
    s = st.session_state.get(K_SCENARIO)
    if s is None:
        return None
    if s.now is None:
        return s.replace(now=get_now())
    return s


def get_scenario_name() -> str:
    """Bundled scenario name of the active scenario, ``""`` for an upload or none."""
    return st.session_state.get(K_SCENARIO_NAME, "")


def scenario_edited() -> bool:
    """True once the scenario was edited in the sidebar (or by time travel)."""
    return bool(st.session_state.get(K_SCENARIO_EDITED, False))


def get_scenario_refusal() -> Refusal | None:
    """Why the last scenario load or edit was refused, None when it succeeded."""
    return st.session_state.get(K_SCENARIO_REFUSAL)


def _default_now() -> datetime:
    """Midnight UTC of the day the session started: a stable 'wall clock' for caching and links."""
    d = st.session_state.get(K_NOW_DEFAULT)
    if d is None:
        d = datetime.now(UTC).date()
        st.session_state[K_NOW_DEFAULT] = d
    return datetime.combine(d, time(0, 0), tzinfo=UTC)


def get_now() -> datetime:
    """The time the pipeline treats as now: the scenario's ``now``, else today 00:00 UTC."""
    s = st.session_state.get(K_SCENARIO)
    if s is not None and s.now is not None:
        return s.now
    return _default_now()


def set_scenario(s: Scenario, *, name: str | None = None, edited: bool = True) -> None:
    """Make ``s`` the active scenario (``name``: bundled scenario it came from, if any)."""
    st.session_state[K_SCENARIO] = s
    if name is not None:
        st.session_state[K_SCENARIO_NAME] = name
    st.session_state[K_SCENARIO_EDITED] = edited
    st.session_state[K_SCENARIO_REFUSAL] = None
    _recompute_config()


def set_now(d: date) -> None:
    """Time travel: keep the scenario's time of day (00:00 UTC when it had none), change the date."""
    s = st.session_state.get(K_SCENARIO)
    old = get_now()
    new = datetime.combine(d, old.timetz())
    if s is None:
        st.session_state[K_NOW_DEFAULT] = d
        return
    if new != s.now:
        set_scenario(s.replace(now=new), edited=True)


def load_scenario_file(name: str) -> bool:
    """Load a bundled scenario from ``sample_ckf/scenarios/``; its ``config`` table applies."""
    from crp_core.io.scenario import load_scenario

    if name not in list_scenarios():
        st.session_state[K_SCENARIO_REFUSAL] = Refusal(name, f"no bundled scenario named {name!r}")
        return False
    try:
        s = load_scenario(str(scenarios_dir() / name))
    except ValidationError as exc:
        st.session_state[K_SCENARIO_REFUSAL] = Refusal(name, exc.what, exc.problems)
        return False
    set_scenario(s, name=name, edited=False)
    bump("scenario")
    return True


def load_scenario_upload(data: bytes, name: str) -> bool:
    """Load an uploaded scenario (JSON / TOML). A refused one leaves the current scenario active."""
    from crp_core.io.scenario import load_scenario_bytes

    try:
        s = load_scenario_bytes(data, name)
    except ValidationError as exc:
        st.session_state[K_SCENARIO_REFUSAL] = Refusal(name, exc.what, exc.problems)
        return False
    set_scenario(s, name="", edited=False)
    bump("scenario")
    return True


def update_scenario(d: Mapping[str, Any]) -> bool:
    """Replace the scenario by an edited dict (validated by ``crp_core.io.scenario``); refused -> kept."""
    from crp_core.io.scenario import scenario_from_dict

    try:
        s = scenario_from_dict(d, source="dashboard")
    except ValidationError as exc:
        st.session_state[K_SCENARIO_REFUSAL] = Refusal(EDITED_SCENARIO, exc.what, exc.problems)
        return False
    set_scenario(s, edited=True)
    return True


# ---- config ------------------------------------------------------------------------------------
def get_config() -> CRPConfig:
    """The effective config: base (defaults or loaded TOML) < scenario config < sidebar edits."""
    init_state()
    c = st.session_state.get(K_CONFIG)
    if c is None:
        c = _recompute_config()
    return c


def get_config_error() -> str | None:
    """The message of the last refused config change, None when the last one applied."""
    return st.session_state.get(K_CONFIG_ERROR)


def config_edits() -> dict[str, Any]:
    """The sidebar edits in force (flat or dotted keys), a copy."""
    return dict(st.session_state.get(K_EDITS, {}))


def _effective(base: CRPConfig, scenario: Scenario | None, edits: Mapping[str, Any]) -> CRPConfig:
    """The dashboard's configuration: ``crp_core.config.layered_config`` with the sidebar edits as overrides."""
    return layered_config(base, scenario.config if scenario is not None else None, overrides=edits)


def _recompute_config() -> CRPConfig:
    """Store and return the effective config; edits that no longer fit the scenario are dropped."""
    base = st.session_state.get(K_BASE) or CRPConfig()
    edits = st.session_state.get(K_EDITS, {})
    try:
        c = _effective(base, st.session_state.get(K_SCENARIO), edits)
    except ConfigError as exc:  # a scenario's overrides do not fit the edits: drop the edits
        st.session_state[K_CONFIG_ERROR] = f"{exc}; sidebar edits dropped"
        st.session_state[K_EDITS] = {}
        c = _effective(base, None, {})
        try:
            c = _effective(base, st.session_state.get(K_SCENARIO), {})
        except ConfigError as exc2:
            st.session_state[K_CONFIG_ERROR] = f"scenario config ignored: {exc2}"
    st.session_state[K_CONFIG] = c
    bump("config")
    return c


def base_with_edits() -> CRPConfig:
    """The sidebar base config (defaults or a loaded TOML) with the sidebar edits, without any
    scenario's ``config`` table: the config a suite of scenarios runs at (docs/decisions/suites.md)."""
    init_state()
    base = st.session_state.get(K_BASE) or CRPConfig()
    try:
        return layered_config(base, None, overrides=st.session_state.get(K_EDITS, {}))
    except ConfigError:
        return base


def set_config_value(key: str, value: Any) -> str | None:
    """Apply one edit (flat or dotted key). Returns the error message when refused (config kept)."""
    return set_config_values({key: value})


def set_config_values(values: Mapping[str, Any]) -> str | None:
    """Apply several edits at once. Returns the error message when refused (config kept)."""
    edits = dict(st.session_state.get(K_EDITS, {}))
    edits.update(values)
    base = st.session_state.get(K_BASE) or CRPConfig()
    try:
        c = _effective(base, st.session_state.get(K_SCENARIO), edits)
    except ConfigError as exc:
        st.session_state[K_CONFIG_ERROR] = str(exc)
        bump("config")  # widgets show the kept value again
        return str(exc)
    st.session_state[K_EDITS] = edits
    st.session_state[K_CONFIG] = c
    st.session_state[K_CONFIG_ERROR] = None
    return None


def reset_config() -> None:
    """Back to the defaults (the scenario's own config table still applies)."""
    st.session_state[K_BASE] = CRPConfig()
    st.session_state[K_EDITS] = {}
    st.session_state[K_CONFIG_ERROR] = None
    _recompute_config()


def load_config_toml(text: str) -> str | None:
    """Load a TOML config as the new base. A bad TOML returns the error and keeps the current config."""
    try:
        base = CRPConfig.from_toml(text)
        _effective(base, st.session_state.get(K_SCENARIO), {})
    except ConfigError as exc:
        st.session_state[K_CONFIG_ERROR] = str(exc)
        return str(exc)
    st.session_state[K_BASE] = base
    st.session_state[K_EDITS] = {}
    st.session_state[K_CONFIG_ERROR] = None
    _recompute_config()
    return None


# ---- the pipeline ------------------------------------------------------------------------------
def get_result(*, decisions: Any = None, decisions_key: str = "") -> Any:
    """The :class:`PipelineResult` for the active CKF, scenario, config and now (cached).

    ``decisions``: operator decisions for stage 4 (triage), with a ``decisions_key`` string that
    changes whenever they do (the cache key); by default the decisions in force in the triage
    database (:func:`crp_ui.decisions.pipeline_decisions`; their statuses come with the corpus).
    None when there is no CKF or scenario, or the pipeline module is not available. Raises
    :class:`CRPError` for input the pipeline refuses.
    """
    s = get_scenario()
    if s is None or get_ckf() is None:
        return None
    from . import decisions as triage_decisions

    corpus = get_corpus()
    if decisions is None:
        decisions, decisions_key = triage_decisions.pipeline_decisions()
    known, known_key = triage_decisions.known_conflicts_in_force(
        get_corpus(progress=False, decisions=False), get_config(), get_now()
    )
    return cache.pipeline_result(
        corpus,
        s,
        get_config(),
        get_now(),
        decisions=decisions,
        decisions_key=decisions_key,
        known_conflicts=known,
        known_key=known_key,
    )


# ---- selection, operator -----------------------------------------------------------------------
def selected_fact() -> str | None:
    """The fact selected on any page (shared by all pages), None when none is."""
    init_state()
    return st.session_state.get(K_FACT)


def select_fact(fact_id: str | None) -> None:
    """Select ``fact_id`` for every page (None or ``""`` clears the selection)."""
    st.session_state[K_FACT] = fact_id or None


def get_operator() -> str:
    """The operator name entered in the sidebar (stripped, ``""`` when none)."""
    return str(st.session_state.get(K_OPERATOR, "")).strip()


def set_operator(name: str) -> None:
    """Remember the operator name of this session."""
    st.session_state[K_OPERATOR] = name


# ---- session start -------------------------------------------------------------------------------
def init_state() -> None:
    """First run of a session: defaults, then the URL (or the default sample CKF and scenario)."""
    if st.session_state.get(K_INIT):
        return
    st.session_state[K_INIT] = True
    st.session_state.setdefault(K_LENIENT, False)
    st.session_state.setdefault(K_OPERATOR, "")
    st.session_state.setdefault(K_EDITS, {})
    _recompute_config()
    from .url_codec import apply_query_params  # deferred: the URL codec is built on these accessors

    params = {k: st.query_params.get(k) for k in st.query_params.keys()}
    st.session_state[K_URL_WARNINGS] = apply_query_params(params)


def url_warnings() -> list[str]:
    """One message per URL parameter that could not be applied when the session started."""
    return list(st.session_state.get(K_URL_WARNINGS, []))
