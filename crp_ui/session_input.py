"""The Session page's inputs: a crprotocol session's audit trail (with its anchor) and the knowledge base
the session ran on, and the cached analysis of the two (docs/reference/sessions.md).

* **The trail** is uploaded (``.jsonl``, optionally with its ``.anchor.json``), copied to a temporary
  file a chunk at a time and read there by :func:`crp_core.read_audit`, which streams it; what is kept
  for the session is the :class:`crp_core.AuditTrail` (bounded whatever the file's size) with the
  upload's name in place of the temporary path. An upload over the limit the other uploads use
  (``ckf_max_bytes``, capped by ``server.maxUploadSize``) is refused; a refused upload leaves the trail
  read before in place. Problems inside the file are the trail's own (its lines), never a refusal.
* **The knowledge base** is the CKF in the sidebar (an SDK snapshot read with the sidebar's source-type
  mapping), or the session's closing snapshot uploaded here; judged against the closing snapshot, the
  sidebar's CKF can stand for the knowledge base the session started from (``before``).
* **The analysis** (:func:`crp_core.analyse_session`) runs once per (trail, knowledge base with its
  vectors, configuration, starting knowledge base, question): a shared ``st.cache_resource``, like the
  pipeline results of :mod:`crp_ui.cache`. It runs on the knowledge base as loaded: the operators'
  decisions do not change what the session packed or wrote.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO, Protocol

import streamlit as st

from crp_core import (
    AuditTrail,
    CKFError,
    Corpus,
    CRPConfig,
    CRPError,
    KnowledgeBase,
    Problem,
    SessionReport,
    analyse_session,
    read_audit,
)

from . import cache, render, state
from .session import Refusal
from .sidebar_ckf import capped_uploader

#: the page's widget and session keys start with this
K = "crp.page.session."
K_TRAIL = K + "trail"  # LoadedTrail: the trail read last
K_TRAIL_REFUSAL = K + "trail_refusal"  # Refusal of the last trail upload, None when it was read
K_CLOSING = K + "closing"  # ClosingSnapshot: the session's closing snapshot, when one was uploaded
K_CLOSING_REFUSAL = K + "closing_refusal"
K_JUDGE = K + "judge"  # which knowledge base the session is judged against
K_BEFORE = K + "before"  # the sidebar's CKF is the knowledge base the session started from
K_QUERY = K + "query"  # the question of the windows whose trail carries no transcript (windows block)
#: fact id -> "window N of session S": the facts the session analysed last wrote back (the Conflicts queue marks them)
K_WRITEBACK = "crp.session.writeback"
AUDIT_TYPES = ["jsonl", "ndjson", "json"]
ANCHOR_SUFFIX = ".anchor.json"
CHUNK = 1 << 20
#: session reports kept per process
MAX_REPORTS = 8
JUDGE_CLOSING = "the session's closing snapshot"
JUDGE_SIDEBAR = "the CKF in the sidebar"


class Upload(Protocol):
    """What an uploaded file offers (Streamlit's ``UploadedFile``; a named ``BytesIO`` in tests)."""

    name: str

    def read(self, size: int = -1, /) -> bytes: ...
    def seek(self, offset: int, whence: int = 0, /) -> int: ...


@dataclass(frozen=True)
class LoadedTrail:
    """An uploaded trail as read: its name, its anchor's, the digest of both files (the analysis cache
    key) and the trail's records."""

    name: str
    anchor_name: str  # "" without an anchor
    digest: str
    size: int
    trail: AuditTrail


@dataclass(frozen=True)
class ClosingSnapshot:
    """The session's closing snapshot as uploaded, and as read under the mapping named ``map_name``."""

    name: str
    data: bytes
    kb: KnowledgeBase
    map_name: str


# ---- reading the trail ---------------------------------------------------------------------------
def _too_big(name: str, size: int, limit: int) -> Problem:
    return Problem(
        0,
        "file",
        f"{name} has {size:,} bytes or more; the upload limit is {render.limit_text(limit)} "
        "(ckf_max_bytes, capped by the server's server.maxUploadSize)",
    )


def _spool(up: Upload, out: IO[bytes], limit: int, digest: Callable[[bytes], object]) -> int:
    """Copy ``up`` to ``out`` a chunk at a time (each chunk also to ``digest``); its size, or -1 past ``limit``."""
    up.seek(0)
    size = 0
    while chunk := up.read(CHUNK):
        size += len(chunk)
        if size > limit:
            return -1
        digest(chunk)
        out.write(chunk)
    return size


def read_trail_upload(files: Sequence[Upload], limit: int) -> LoadedTrail | Refusal:
    """The trail among ``files`` (with its ``.anchor.json`` when one is there), read streamed; a
    :class:`~crp_ui.session.Refusal` when the files are not one trail (and at most one anchor) within
    ``limit`` bytes each."""
    anchors = [f for f in files if f.name.endswith(ANCHOR_SUFFIX)]
    trails = [f for f in files if not f.name.endswith(ANCHOR_SUFFIX)]
    names = ", ".join(f.name for f in files)
    if len(trails) != 1 or len(anchors) > 1:
        return Refusal(
            names,
            f"Upload one audit trail (.jsonl) and at most one anchor (.anchor.json) at a time; got {len(trails)} "
            f"trail(s) and {len(anchors)} anchor(s)",
        )
    up, anchor = trails[0], (anchors[0] if anchors else None)
    digest = hashlib.sha256()
    with tempfile.TemporaryDirectory(prefix="crp-audit-") as tmp:
        path, anchor_path = os.path.join(tmp, "audit.jsonl"), os.path.join(tmp, "audit.jsonl" + ANCHOR_SUFFIX)
        with open(path, "wb") as out:
            size = _spool(up, out, limit, digest.update)
        if size < 0:
            return Refusal(up.name, f"Audit trail {up.name} refused", (_too_big(up.name, limit + 1, limit),))
        if anchor is not None:
            digest.update(b"\0anchor\0")
            with open(anchor_path, "wb") as out:
                if _spool(anchor, out, limit, digest.update) < 0:
                    return Refusal(
                        anchor.name, f"Anchor {anchor.name} refused", (_too_big(anchor.name, limit + 1, limit),)
                    )
        try:
            trail = read_audit(path, anchor=anchor_path if anchor is not None else None)
        except CRPError as exc:
            return Refusal(up.name, f"Audit trail {up.name} refused: {exc}")
    a = trail.anchor
    if a is not None and anchor is not None:
        a = dataclasses.replace(a, path=anchor.name, message=a.message.replace(anchor_path, anchor.name))
    trail = dataclasses.replace(trail, path=up.name, anchor=a)
    return LoadedTrail(up.name, anchor.name if anchor is not None else "", digest.hexdigest(), size, trail)


def loaded_trail() -> LoadedTrail | None:
    """The trail read last in this session, or None."""
    got = state.recall(K_TRAIL)
    return got if isinstance(got, LoadedTrail) else None


def _on_audit(key: str) -> None:
    """Files were dropped: read the trail (a refusal keeps the trail read before), then give the
    uploader a new key so no chip piles up in it."""
    files = state.recall(key) or []
    if not files:
        return
    got = read_trail_upload(list(files), state.upload_limit())
    if isinstance(got, Refusal):
        state.remember(K_TRAIL_REFUSAL, got)
    else:
        state.remember(K_TRAIL, got)
        state.forget(K_TRAIL_REFUSAL)
    state.bump("session_audit")


# ---- the closing snapshot ------------------------------------------------------------------------
def _map_name() -> str:
    """The name of the source-type mapping in force ("" for the default)."""
    got = state.get_sdk_map()
    return "" if got is None else got[0]


def _read_closing(name: str, data: bytes) -> ClosingSnapshot | Refusal:
    limit = state.upload_limit()
    if len(data) > limit:
        return Refusal(name, f"Closing snapshot {name} refused", (_too_big(name, len(data), limit),))
    got = state.get_sdk_map()
    try:
        kb = cache.load_ckf_upload(data, name, state.get_lenient(), limit, None if got is None else got[1])
    except CKFError as exc:
        return Refusal(name, f"Closing snapshot {name} refused: {exc.what}", tuple(exc.problems))
    return ClosingSnapshot(name, data, kb, _map_name())


def _on_closing(key: str) -> None:
    up = state.recall(key)
    if up is None:
        return
    got = _read_closing(up.name, up.getvalue())
    if isinstance(got, Refusal):
        state.remember(K_CLOSING_REFUSAL, got)
    else:
        state.remember(K_CLOSING, got)
        state.forget(K_CLOSING_REFUSAL)
    state.bump("session_closing")


def closing_snapshot() -> ClosingSnapshot | None:
    """The uploaded closing snapshot, read again when the sidebar's source-type mapping changed."""
    got = state.recall(K_CLOSING)
    if not isinstance(got, ClosingSnapshot):
        return None
    if got.map_name != _map_name():
        again = _read_closing(got.name, got.data)
        if isinstance(again, Refusal):
            state.remember(K_CLOSING_REFUSAL, again)
            return got
        state.remember(K_CLOSING, again)
        return again
    return got


def _forget(*keys: str) -> None:
    for k in keys:
        state.forget(k)


# ---- the upload section --------------------------------------------------------------------------
def _audit_uploader(key: str, limit: int) -> None:
    capped_uploader(
        "-audit",
        "Audit trail (.jsonl), optionally with its .anchor.json (at most {limit} each)",
        limit,
        type=AUDIT_TYPES,
        accept_multiple_files=True,
        key=key,
        on_change=_on_audit,
        args=(key,),
        help="The SDK keeps <session>.audit.jsonl and <session>.audit.jsonl.anchor.json in its crp_sessions/ "
        "folder; export_jsonl(include_transcripts=True) also gives each window's question.",
    )


def _audit_column() -> None:
    limit = state.upload_limit()
    key = f"{K}audit.{state.gen('session_audit')}"
    _audit_uploader(key, limit)
    got = loaded_trail()
    loaded = None
    if got is not None:
        anchor = f" with {got.anchor_name}" if got.anchor_name else " (no anchor)"
        loaded = f"Loaded: **{render.md_escape(got.name)}**{render.md_escape(anchor)} · {got.size:,} bytes"
    _upload_outcome("trail", loaded, (K_TRAIL, K_TRAIL_REFUSAL), K + "forget_trail")


def _closing_column() -> None:
    key = f"{K}closing.{state.gen('session_closing')}"
    limit = state.upload_limit()
    _closing_uploader(key, limit)
    got = closing_snapshot()
    loaded = None if got is None else f"Loaded: **{render.md_escape(got.name)}** · {len(got.kb):,} facts"
    _upload_outcome("snapshot", loaded, (K_CLOSING, K_CLOSING_REFUSAL), K + "forget_closing")


def _upload_outcome(thing: str, loaded: str | None, keys: tuple[str, str], button: str) -> None:
    """Under an uploader: the last upload's refusal (saying that what was read before stays), then what is
    loaded (``loaded``: its caption, None when nothing is) with the button ``button`` that forgets it
    (``keys``: what was read, the refusal)."""
    refusal = state.recall(keys[1])
    if isinstance(refusal, Refusal):
        keep = f" The {thing} read before stays loaded." if loaded is not None else ""
        render.show_problems(f"{refusal.message}.{keep}", refusal.problems)
    if loaded is not None:
        st.caption(loaded)
        st.button(f"Forget this {thing}", key=button, on_click=_forget, args=keys)


def _closing_uploader(key: str, limit: int) -> None:
    capped_uploader(
        "-closing",
        "The session's closing snapshot (<session>.json), optional (at most {limit})",
        limit,
        type=["json"],
        key=key,
        on_change=_on_closing,
        args=(key,),
        help="The knowledge fabric as the session closed it, with what it wrote back; read with the sidebar's "
        "source-type mapping. Without it the session is judged against the CKF in the sidebar.",
    )


def upload_section() -> None:
    """The two uploaders, what each holds, and which knowledge base the session is judged against."""
    with st.container(border=True):
        st.subheader("What the session left")
        left, right = st.columns(2)
        with left:
            _audit_column()
        with right:
            _closing_column()
        if closing_snapshot() is not None:
            c = st.columns([2, 3])
            c[0].radio("Judge the session against", (JUDGE_CLOSING, JUDGE_SIDEBAR), key=K_JUDGE, horizontal=True)
            if state.recall(K_JUDGE, JUDGE_CLOSING) == JUDGE_CLOSING and state.active_ckf() is not None:
                c[1].checkbox(
                    "The CKF in the sidebar is the knowledge base the session started from",
                    value=True,
                    key=K_BEFORE,
                    help="Its ids absent from the closing snapshot are the session's own facts too (--before).",
                )


WHAT_TO_UPLOAD = (
    "Upload a crprotocol session's audit trail above: `<session>.audit.jsonl` from the SDK's "
    "`crp_sessions/` folder (or the bundle `export_jsonl(include_transcripts=True)` writes, which also "
    "carries each window's question), with its `<session>.audit.jsonl.anchor.json` to check the anchor. "
    "The chain is re-checked from the trail alone; the windows and the write-back are judged against "
    "the knowledge base the session ran on: the CKF in the sidebar (an SDK snapshot, with its "
    "source-type mapping), or the session's closing snapshot `<session>.json` uploaded beside the trail."
)


# ---- the analysis --------------------------------------------------------------------------------
def data_fingerprint(kb: KnowledgeBase) -> str:
    """``kb.data_fingerprint`` (it hashes every fact), once per knowledge-base object."""
    got: str = cache.by_identity("kb_data_fingerprint", kb, lambda k: k.data_fingerprint)
    return got


def judged_against() -> tuple[Corpus, KnowledgeBase | None, str] | None:
    """(the corpus the session is judged against, the knowledge base it started from or None, a label);
    None, with the reason shown, when there is none."""
    closing = closing_snapshot()
    config = state.get_config()
    if closing is not None and state.recall(K_JUDGE, JUDGE_CLOSING) == JUDGE_CLOSING:
        corpus = cache.prepared_corpus(closing.kb, data_fingerprint(closing.kb), config, label=closing.name)
        sidebar = state.active_ckf()
        before = sidebar if sidebar is not None and state.recall(K_BEFORE, True) else None
        return corpus, before, f"{closing.name} (closing snapshot)"
    base = state.get_corpus(decisions=False)
    if base is None:
        st.info(
            "No knowledge base: load the one the session ran on in the sidebar, or upload its closing snapshot above."
        )
        return None
    return base, None, state.get_ckf_label()


@st.cache_resource(show_spinner="Judging the session by SPEC-027…", max_entries=MAX_REPORTS)
def _analyse(
    _trail: AuditTrail,
    _corpus: Corpus,
    _config: CRPConfig,
    _before: KnowledgeBase | None,
    _query: str,
    key: tuple[str, ...],
) -> SessionReport:
    del key  # the cache key only
    embedder = cache.embedder_for(_corpus)
    return analyse_session(_trail, _corpus, _config, query=_query or None, before=_before, embedder=embedder)


def session_report(loaded: LoadedTrail, corpus: Corpus, before: KnowledgeBase | None) -> SessionReport:
    """:func:`crp_core.analyse_session` of the trail against ``corpus``, cached (raises ``CRPError``)."""
    config = state.get_config()
    query = str(state.recall(K_QUERY) or "").strip()
    key = (
        loaded.name,
        loaded.digest,
        cache.corpus_digest(corpus),
        cache.by_identity("config", config, CRPConfig.to_toml),
        data_fingerprint(before) if before is not None else "",
        query,
    )
    report = _analyse(loaded.trail, corpus, config, before, query, key)
    state.remember(K_WRITEBACK, writeback_origins(report))
    return report


def writeback_origins(report: SessionReport) -> dict[str, str]:
    """The session's write-back facts and where each came from, as the Conflicts queue names them."""
    sid = (report.trail.chain.session_id or "?")[:8]
    return {
        w.fact_id: f"window {w.window_index} of SDK session {sid}" if w.window_index else f"SDK session {sid}"
        for w in report.writeback
    }


def session_writeback() -> dict[str, str]:
    """What :func:`writeback_origins` remembered of the session analysed last ({} before any)."""
    got = state.recall(K_WRITEBACK)
    return dict(got) if isinstance(got, dict) else {}
