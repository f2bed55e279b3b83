"""The per-user session state at its base: the keys in ``st.session_state``, and the small values every
other part of the dashboard reads (widget generations, the selected fact and pair, the operator, the
lenient flag, the triage database, the link warnings, the values a page keeps for itself).

Everything the dashboard remembers for one user lives in ``st.session_state`` under the keys below;
pages reach it only through :mod:`crp_ui.state`, which re-exports these accessors with the CKF
(:mod:`crp_ui.ckf_state`), scenario (:mod:`crp_ui.scenario_state`) and configuration
(:mod:`crp_ui.config_state`) accessors built on them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import streamlit as st

from crp_core import Problem, default_db_path

EDITED_SCENARIO = "edited scenario"  # Refusal.source of a refused sidebar edit

# ---- session-state keys (crp_ui modules only: pages use the accessors) ---------------------------
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
K_PAIR = _P + "state.selected_pair"  # the conflict pair selected on the Conflicts page (a pair_key)
K_DB_PATH = _P + "triage.db_path"  # this session's triage database path (set on the Conflicts page)
K_URL_WARNINGS = _P + "url_warnings"
K_GEN = _P + "gen."  # + area: bumped when state changes outside a widget, so widgets are rebuilt

#: the triage database used when neither this session nor ``$CRP_INSPECT_TRIAGE_DB`` names one
DEFAULT_DB_FILE = ".crp_triage.sqlite"


@dataclass(frozen=True)
class Refusal:
    """A load that was refused: what, and every problem (line + field) the loader found."""

    source: str
    message: str
    problems: tuple[Problem, ...] = ()


# ---- a page's own values -------------------------------------------------------------------------
def recall(key: str, default: Any = None) -> Any:
    """What the session holds under ``key`` (a value a page kept, or a widget's value), else ``default``."""
    return st.session_state.get(key, default)


def remember(key: str, value: Any) -> None:
    """Keep ``value`` under ``key`` for the rest of the session (or set a widget's value for its next draw)."""
    st.session_state[key] = value


def forget(key: str) -> Any:
    """Drop what the session holds under ``key``; returns it (None when there was nothing)."""
    return st.session_state.pop(key, None)


def holds(key: str) -> bool:
    """Whether the session holds a value under ``key``."""
    return key in st.session_state


def kept_dict(key: str) -> dict[Any, Any]:
    """The dict kept under ``key`` (created empty on first use); callers fill and read it in place."""
    got = st.session_state.get(key)
    if not isinstance(got, dict):
        got = {}
        st.session_state[key] = got
    return got


# ---- generations -----------------------------------------------------------------------------
def gen(area: str) -> int:
    """Widget generation of ``area``: part of widget keys, so a programmatic change rebuilds them."""
    return int(st.session_state.get(K_GEN + area, 0))


def bump(area: str) -> None:
    """Rebuild the widgets of ``area`` on this run (their keys change)."""
    st.session_state[K_GEN + area] = gen(area) + 1


# ---- selection, operator, lenient loading ------------------------------------------------------
def selected_fact() -> str | None:
    """The fact selected on any page (shared by all pages), None when none is."""
    got = st.session_state.get(K_FACT)
    return str(got) if got else None


def select_fact(fact_id: str | None) -> None:
    """Select ``fact_id`` for every page (None or ``""`` clears the selection)."""
    st.session_state[K_FACT] = fact_id or None


def selected_pair() -> str | None:
    """The pair key selected on the Conflicts page (from the page or the URL), None when none is."""
    v = st.session_state.get(K_PAIR)
    return str(v) if v else None


def select_pair(key: str | None) -> None:
    """Select the pair ``key`` (None clears the selection)."""
    st.session_state[K_PAIR] = key or None


def get_operator() -> str:
    """The operator name entered in the sidebar (stripped, ``""`` when none)."""
    return str(st.session_state.get(K_OPERATOR, "")).strip()


def set_operator(name: str) -> None:
    """Remember the operator name of this session."""
    st.session_state[K_OPERATOR] = name


def get_lenient() -> bool:
    """Lenient loading: bad facts are skipped and listed instead of refusing the file."""
    return bool(st.session_state.get(K_LENIENT, False))


def set_lenient(value: bool) -> None:
    """Switch lenient loading for the next CKF load."""
    st.session_state[K_LENIENT] = bool(value)


def url_warnings() -> list[str]:
    """One message per URL parameter that could not be applied when the session started."""
    return list(st.session_state.get(K_URL_WARNINGS, []))


# ---- the triage database ------------------------------------------------------------------------
def db_choice() -> str:
    """The triage database path entered for this session (``""``: none, the default applies)."""
    return str(st.session_state.get(K_DB_PATH) or "").strip()


def db_path() -> str:
    """This session's database path, else ``$CRP_INSPECT_TRIAGE_DB``, else ``./.crp_triage.sqlite``."""
    return db_choice() or default_db_path() or DEFAULT_DB_FILE


def db_path_origin() -> str:
    """Where :func:`db_path` came from: "this session", "$CRP_INSPECT_TRIAGE_DB" or "default"."""
    if db_choice():
        return "this session"
    return "$CRP_INSPECT_TRIAGE_DB" if default_db_path() else "default"


def set_db_path(path: str | None) -> str | None:
    """Use ``path`` in this session (empty: back to the default). Returns an error message when
    the path cannot hold a database (a directory, a missing parent directory); the path is kept
    unchanged then. The file itself is checked when it is read (``crp_ui.decisions.decision_set``)."""
    p = str(path or "").strip()
    if p:
        if os.path.isdir(p):
            return f"{p} is a directory; give a file path (e.g. {os.path.join(p, DEFAULT_DB_FILE)})"
        parent = os.path.dirname(os.path.abspath(p))
        if not os.path.isdir(parent):
            return f"directory {parent} does not exist"
    st.session_state[K_DB_PATH] = p
    return None
