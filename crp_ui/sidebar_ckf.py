"""The sidebar's knowledge-base section: the bundled sample picker, the CKF uploader, lenient loading,
an SDK snapshot's source-type mapping, the background preparation's progress and what is active.

Widgets only read input and call :mod:`crp_ui.state`; a load that is refused leaves the previous CKF
active and is shown with every problem the loader found.
"""

from __future__ import annotations

import math
from typing import Any

import streamlit as st

from crp_core import CKF_SUFFIXES, Corpus, KnowledgeBase

from . import cache, render, state
from .ckf_state import active_corpus_key
from .progress_text import progress_text
from .samples import sample_limit_env
from .theme import UPLOAD_BOX
from .widgets import widget_key

UPLOAD_TYPES = [suffix.lstrip(".") for suffix in CKF_SUFFIXES]
#: the CKF uploader's own instruction line says "<n>MB per file" in the browser's unit (10**6 bytes, or
#: 2**20 on Windows) with the rounded-up cap; the label states the limit in MiB and bytes instead, so
#: the stylesheet hides that line inside the container UPLOAD_BOX (crp_ui.theme)

limit_text = render.limit_text  # the upload limit in the dashboard's one unit


def browser_upload_cap(limit: int) -> int:
    """``max_upload_size`` for ``st.file_uploader`` (whole "MB"): large enough that the browser never
    refuses a file within ``limit``. Streamlit's frontend counts that MB as 10**6 bytes (2**20 on
    Windows), so the smallest whole number of 10**6 bytes at or above the limit; a file between the
    limit and this cap reaches the app and is refused with a clear message."""
    return max(1, math.ceil(limit / 10**6))


def capped_uploader(box: str, label: str, limit: int, **kwargs: Any) -> Any:
    """``st.file_uploader`` of files of at most ``limit`` bytes: ``label`` with ``{limit}`` replaced by the limit
    in the dashboard's unit (:func:`limit_text`), the browser capped just above it (:func:`browser_upload_cap`),
    inside the container ``UPLOAD_BOX + box``, whose class hides Streamlit's own "<n>MB per file" line."""
    with st.container(key=UPLOAD_BOX + box):
        return st.file_uploader(
            label.format(limit=limit_text(limit)), max_upload_size=browser_upload_cap(limit), **kwargs
        )


def _on_sample_change(key: str) -> None:
    name = state.recall(key)
    if name:
        state.load_sample(str(name))


def _on_upload(key: str) -> None:
    """A file was dropped: load it, then give the uploader a new key, so no chip (refused or loaded)
    piles up in it; the caption below says which CKF is active."""
    up = state.recall(key)
    if up is None:
        return
    state.load_upload(up.getvalue(), up.name)
    state.bump("upload")


def _on_lenient_change(key: str) -> None:
    """Re-read what the user last tried to load (the active sample, or the upload) in the new mode."""
    state.set_lenient(bool(state.recall(key)))
    state.reload_last()


@st.fragment(run_every=1.0)
def _pending_progress() -> None:
    """The background preparation's progress (polled every second) and its Cancel button; when the
    job has ended the whole app reruns with the new CKF active (or the refusal shown)."""
    if state.poll_pending() != "running":
        st.rerun()
    got = state.pending_progress()
    if got is None:
        st.rerun()
        return
    p, snap = got
    text = progress_text(snap, p.label, own_embeddings=p.kb.embeddings is not None)
    st.progress(snap.fraction, text=render.md_escape(text))
    st.caption(f"{render.md_escape(state.get_ckf_label())} stays active until {render.md_escape(p.label)} is ready.")
    st.button(
        "Cancel loading",
        key="crp.w.ckf.cancel",
        on_click=state.cancel_pending,
        help="Stops the embedding; the chunks already embedded stay in the cache, so loading the same "
        "file again continues from there.",
    )


def _pending_section() -> None:
    got = state.pending_progress()
    if got is None:
        return
    p, _snap = got
    if state.active_ckf() is None:  # the session's first CKF: the page waits for it with a progress bar
        st.info(f"Preparing {render.md_escape(p.label)}: its progress is shown on the page.")
        st.button("Cancel loading", key="crp.w.ckf.cancel", on_click=state.cancel_pending)
        return
    _pending_progress()


def _sample_picker() -> None:
    samples = state.list_samples()
    if not samples:
        why = state.samples_problem()
        where = render.md_escape(state.samples_dir())
        if why is None:
            st.caption(f"No knowledge base in {where}.")
        else:
            st.warning(f"The knowledge bases in {where} cannot be offered: {render.md_escape(why)}.")
        return
    active = state.active_ckf() is not None
    current = state.get_ckf_sample() if active else None
    key = widget_key("ckf", "sample")
    st.selectbox(
        state.samples_label(),
        samples,
        index=samples.index(current) if current in samples else None,
        placeholder="(an uploaded CKF is active)" if active else "(none)",
        key=key,
        on_change=_on_sample_change,
        args=(key,),
    )
    _, ignored = sample_limit_env()
    if ignored:
        st.warning(render.md_escape(ignored), icon=":material/warning:")


def _uploader() -> None:
    limit = state.upload_limit()
    ukey = widget_key("upload", "ckf")
    capped_uploader(
        "",
        "…or upload a CKF (JSONL / JSON / CSV / Parquet, at most {limit})",
        limit,
        type=UPLOAD_TYPES,
        key=ukey,
        on_change=_on_upload,
        args=(ukey,),
    )
    configured = state.get_config().ckf_max_bytes
    if limit < configured:
        st.caption(
            f"ckf_max_bytes is {configured:,} bytes, but this server accepts "
            f"uploads up to {limit_text(limit)} (server.maxUploadSize)."
        )
    lkey = widget_key("ckf", "lenient")
    st.toggle(
        "Lenient loading (skip bad facts, list them)",
        value=state.get_lenient(),
        key=lkey,
        on_change=_on_lenient_change,
        args=(lkey,),
        help="Strict (off): a file with any bad fact is refused. Lenient: exactly the bad facts are skipped.",
    )


def _active_summary() -> None:
    """The last refusal or notice, then the active CKF in one line (and its skipped facts)."""
    kb = state.active_ckf()
    refusal = state.get_ckf_refusal()
    if refusal is not None:
        keep = " The previously loaded CKF stays active." if kb is not None else ""
        render.show_problems(f"{refusal.message}.{keep}", refusal.problems)
    notice = state.get_ckf_notice()
    if notice:
        st.info(render.md_escape(notice))
    if kb is None:
        if state.pending_load() is None:
            st.info("No CKF loaded.")
        return
    st.caption(
        f"Active: **{render.md_escape(state.get_ckf_label())}** · {len(kb):,} facts"
        + (f" · {len(kb.skipped)} skipped" if kb.skipped else "")
        + (f" · {len(kb.warnings)} data-quality warnings" if kb.warnings else "")
    )
    st.caption(model_caption(kb, cache.ready_corpus(active_corpus_key(), state.get_config(), kb)))
    if kb.skipped:
        with st.expander(f"{len(kb.skipped)} facts skipped (lenient)"):
            st.markdown(render.problems_list(kb.skipped))


def model_caption(kb: KnowledgeBase, corpus: Corpus | None) -> str:
    """The embedding model of the active CKF's vectors, as Markdown (the id as inert code): the prepared
    corpus's model and dimension; before it is ready, the model the CKF names, else the one embedding it."""
    if corpus is not None:
        return f"Embedding model: {render.md_code(corpus.model_id)} ({corpus.dim}-d)"
    if kb.embeddings is not None:
        named = kb.embedding_model or "not named by the CKF"
        return f"Embedding model: {render.md_code(named)} ({kb.embeddings.shape[1]}-d, from the CKF)"
    return f"Embedding model: {render.md_code(cache.get_embedder().model_id)}"


def ckf_section() -> None:
    """The knowledge-base section of the sidebar."""
    st.subheader("Knowledge base (CKF)")
    state.poll_pending()
    _sample_picker()
    _uploader()
    _sdk_map_section()
    _pending_section()
    _active_summary()


def _on_sdk_map(key: str) -> None:
    """A mapping TOML was dropped: read it and re-read the active SDK snapshot with it."""
    up = state.recall(key)
    if up is not None:
        state.set_sdk_map(up.name, up.getvalue())
        state.bump("sdk_map")


def _sdk_map_section() -> None:
    """An optional source-type mapping for crprotocol SDK snapshots: the same TOML as ``--sdk-map``;
    without one every snapshot fact is ``unverified``. Shown beside a snapshot (active or being
    prepared) or while a mapping is in force."""
    current = state.get_sdk_map()
    refusal = state.get_sdk_map_refusal()
    pending = state.pending_load()
    loaded = (state.active_ckf(), pending.kb if pending is not None else None)
    if current is None and refusal is None and not any(kb is not None and kb.fmt == "sdk" for kb in loaded):
        return
    with st.expander("SDK snapshot: source-type mapping", expanded=current is not None or refusal is not None):
        key = widget_key("sdk_map", "upload")
        st.file_uploader(
            "Mapping (TOML, as crp-inspect --sdk-map)",
            type=["toml"],
            key=key,
            on_change=_on_sdk_map,
            args=(key,),
            help="[[rule]] tables by category / source_window_id glob / extraction_stage give a "
            "crprotocol SDK snapshot's facts their source types; first match wins, else default.",
        )
        if refusal is not None:
            render.show_problems(f"{refusal.message}; the previous mapping stays in force", refusal.problems)
        if current is None:
            st.caption("Default mapping: every SDK fact is unverified.")
            return
        name, smap = current
        st.caption(
            f"In force: {render.md_code(name)} · {len(smap.rules)} rule(s), default {render.md_code(smap.default)}"
        )
        st.button("Use the default mapping", key=widget_key("sdk_map", "clear"), on_click=_default_map)


def _default_map() -> None:
    """Back to the default mapping (the active SDK snapshot is read again with it)."""
    state.set_sdk_map(None, None)
