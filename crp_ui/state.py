"""What pages import: the per-user dashboard state, in one namespace.

Pages call :func:`get_ckf`, :func:`get_corpus`, :func:`get_scenario`, :func:`get_config`,
:func:`get_now`, :func:`get_result`, :func:`selected_fact` / :func:`select_fact`, :func:`get_operator`,
and keep their own values with :func:`recall` / :func:`remember` / :func:`forget`; they never touch
``st.session_state`` or ``st.query_params`` directly. The names come from the modules below, each with
one concern:

* :mod:`crp_ui.samples` - which bundled CKFs and scenarios exist;
* :mod:`crp_ui.session` - the session-state keys and the small values (selection, operator, ...);
* :mod:`crp_ui.config_state`, :mod:`crp_ui.scenario_state`, :mod:`crp_ui.ckf_state` - the inputs;
* :mod:`crp_ui.results` - the prepared corpus and the pipeline run of those inputs;
* :mod:`crp_ui.url_codec` - the view mirrored in the URL (deep links).

A session starts on the first read through this module (:func:`init_state`): defaults, then the
view the URL describes. The readers exported here start it; the modules behind them never do, so
none of them depends on the URL codec.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, ParamSpec, TypeVar

import streamlit as st

if TYPE_CHECKING:
    from crp_core import KnowledgeBase

from . import ckf_state, config_state, results, scenario_state, session, team
from .ckf_state import (
    QUICK_WAIT_S,
    PendingLoad,
    cancel_pending,
    get_ckf_fingerprint,
    get_ckf_label,
    get_ckf_notice,
    get_ckf_refusal,
    get_ckf_sample,
    get_sdk_map,
    get_sdk_map_refusal,
    last_load_attempt,
    last_upload,
    load_sample,
    load_upload,
    pending_load,
    pending_progress,
    poll_pending,
    reload_last,
    sample_fingerprint,
    set_sdk_map,
    upload_limit,
)
from .config_state import (
    apply_config_edits,
    config_edits,
    get_config_error,
    load_config_toml,
    recompute_config,
    reset_config,
    set_config_error,
    set_config_value,
    set_config_values,
)
from .samples import (
    DEFAULT_SAMPLE,
    REPO_ROOT,
    list_samples,
    list_scenarios,
    samples_dir,
    samples_label,
    samples_problem,
    scenarios_bundled,
    scenarios_dir,
    scenarios_label,
    scenarios_problem,
)
from .scenario_state import (
    get_now,
    get_scenario_name,
    get_scenario_refusal,
    load_scenario_file,
    load_scenario_upload,
    scenario_edited,
    set_now,
    set_scenario,
    stored_scenario,
    update_scenario,
)
from .session import (
    DEFAULT_DB_FILE,
    EDITED_SCENARIO,
    K_EDITS,
    K_INIT,
    K_LENIENT,
    K_OPERATOR,
    K_URL_WARNINGS,
    Refusal,
    bump,
    db_choice,
    db_path,
    db_path_origin,
    forget,
    gen,
    get_lenient,
    holds,
    kept_dict,
    recall,
    remember,
    select_fact,
    select_pair,
    selected_pair,
    set_db_path,
    set_lenient,
    set_operator,
    url_warnings,
)
from .url_codec import (
    PAGE_PARAMS,
    PAIR_PAGES,
    VIEW_CHOICES,
    VIEW_NUMBERS,
    apply_query_params,
    current_page,
    current_params,
    format_value,
    page_param,
    query_params_for_state,
    set_current_page,
    set_page_param,
    set_view_choice,
    set_view_number,
    set_view_subset,
    subset_linkable,
    tab_refusal,
    view_choice,
    view_number,
    view_subset,
)
from .url_codec import sync_query_params as sync_url

P = ParamSpec("P")
R = TypeVar("R")


def init_state() -> None:
    """First run of a session: defaults, then the URL (or the default sample CKF and scenario)."""
    if st.session_state.get(K_INIT):
        return
    st.session_state[K_INIT] = True
    st.session_state.setdefault(K_LENIENT, False)
    st.session_state.setdefault(K_OPERATOR, "")
    st.session_state.setdefault(K_EDITS, {})
    recompute_config()
    st.session_state[K_URL_WARNINGS] = apply_query_params(current_params())


#: what runs after the URL is synced (the snapshot panel's "this link does not carry" notice)
_AFTER_SYNC: list[Callable[[], None]] = []
#: session key: what a page's view shows that its link does not carry (labels), reset every run
K_UNLINKED = "crp.url.unlinked"


def after_sync(hook: Callable[[], None]) -> None:
    """Run ``hook`` after every :func:`sync_query_params` (registered once per process, at import)."""
    if hook not in _AFTER_SYNC:
        _AFTER_SYNC.append(hook)


def sync_query_params() -> None:
    """Mirror the state in the URL (:func:`crp_ui.url_codec.sync_query_params`), then run the hooks."""
    sync_url()
    for hook in _AFTER_SYNC:
        hook()


def begin_run(page: str) -> None:
    """The start of a run of ``page`` (its URL path): noted for the URL, what the page declares reset."""
    set_current_page(page)
    st.session_state[K_UNLINKED] = []


def declare_unlinked(label: str) -> None:
    """A page says its view holds state its link does not carry (``label``, e.g. "Fan-out width 4"):
    listed in the sidebar's "This link does not carry" notice of this run."""
    got = list(st.session_state.get(K_UNLINKED, []))
    if label not in got:
        st.session_state[K_UNLINKED] = [*got, label]


def _setting_text(name: str, value: object) -> str:
    if isinstance(value, bool):
        return f"{name} {'on' if value else 'off'}"
    if isinstance(value, (list, tuple, set, frozenset)):
        return f"{name} {', '.join(str(v) for v in value) or 'none'}"
    shown = str(value)
    return f"{name} {shown if len(shown) <= 40 else shown[:39] + '…'}"


def declare_settings(
    what: str, settings: Mapping[str, object], defaults: Mapping[str, object], *, whole: bool = False
) -> bool:
    """A page says the settings ``what`` of its view (a table's filters, a sweep's range) are not in its
    link: once one of ``settings`` differs from ``defaults``, the notice names those that differ (every
    one of them with ``whole``, for settings that mean something together), e.g. "the sweep's settings
    (parameter ttl_days.news; from 5; to 30; values 12)". True when declared."""
    changed = [k for k, v in settings.items() if k not in defaults or defaults[k] != v]
    if changed:
        named = list(settings) if whole else changed
        declare_unlinked(f"{what} ({'; '.join(_setting_text(k, settings[k]) for k in named)})")
    return bool(changed)


def unlinked() -> list[str]:
    """What the page declared this run (:func:`declare_unlinked`)."""
    return list(st.session_state.get(K_UNLINKED, []))


def _started(read: Callable[P, R]) -> Callable[P, R]:
    """``read``, starting the session first (:func:`init_state`) when this is its first read."""

    @functools.wraps(read)
    def reader(*args: P.args, **kwargs: P.kwargs) -> R:
        init_state()
        return read(*args, **kwargs)

    return reader


# ---- the readers that start a session ------------------------------------------------------------
get_ckf = _started(ckf_state.get_ckf)
active_ckf = _started(ckf_state.active_ckf)


def session_kb(kb: KnowledgeBase) -> KnowledgeBase:
    """The knowledge base this session loaded when it holds ``kb``'s data, else ``kb``: a prepared corpus is
    shared by every CKF of the same data (``cache.corpus_key``) and keeps the first one's object and name,
    while what a session names (a decision's ``kb_name``, a download, a kept run) is its own file."""
    mine = active_ckf()
    return mine if mine is not None and mine.data_fingerprint == kb.data_fingerprint else kb


get_scenario = _started(scenario_state.get_scenario)
get_config = _started(config_state.get_config)
base_with_edits = _started(config_state.base_with_edits)
selected_fact = _started(session.selected_fact)
get_corpus = _started(results.get_corpus)
corpus_ready = _started(results.corpus_ready)
get_result = _started(results.get_result)
#: the name typed in the sidebar (single mode's operator, before normalisation)
typed_operator = session.get_operator


def get_operator() -> str:
    """The operator who may record in this session, normalised ("" for a viewer, or a session without an
    operator: every record control is then disabled with :func:`crp_ui.team.record_refusal` as its reason)."""
    return team.writer()


__all__ = [
    # the start of a session
    "init_state",
    # samples
    "DEFAULT_SAMPLE",
    "REPO_ROOT",
    "list_samples",
    "list_scenarios",
    "samples_dir",
    "samples_problem",
    "scenarios_problem",
    "samples_label",
    "scenarios_bundled",
    "scenarios_label",
    "scenarios_dir",
    # a page's own values, widget generations
    "recall",
    "remember",
    "forget",
    "holds",
    "kept_dict",
    "gen",
    "bump",
    # the CKF
    "EDITED_SCENARIO",
    "Refusal",
    "QUICK_WAIT_S",
    "PendingLoad",
    "get_ckf",
    "active_ckf",
    "session_kb",
    "get_ckf_fingerprint",
    "get_ckf_label",
    "get_ckf_notice",
    "get_ckf_refusal",
    "get_ckf_sample",
    "get_lenient",
    "set_lenient",
    "last_load_attempt",
    "last_upload",
    "load_sample",
    "sample_fingerprint",
    "load_upload",
    "reload_last",
    "upload_limit",
    "pending_load",
    "pending_progress",
    "poll_pending",
    "cancel_pending",
    "get_sdk_map",
    "get_sdk_map_refusal",
    "set_sdk_map",
    # the scenario
    "get_scenario",
    "stored_scenario",
    "get_scenario_name",
    "get_scenario_refusal",
    "scenario_edited",
    "get_now",
    "set_now",
    "set_scenario",
    "load_scenario_file",
    "load_scenario_upload",
    "update_scenario",
    # the configuration
    "get_config",
    "get_config_error",
    "set_config_error",
    "config_edits",
    "base_with_edits",
    "set_config_value",
    "apply_config_edits",
    "set_config_values",
    "reset_config",
    "load_config_toml",
    # what the inputs give
    "get_corpus",
    "corpus_ready",
    "get_result",
    # selection, operator, triage database
    "selected_fact",
    "select_fact",
    "selected_pair",
    "select_pair",
    "get_operator",
    "typed_operator",
    "set_operator",
    "DEFAULT_DB_FILE",
    "db_choice",
    "db_path",
    "db_path_origin",
    "set_db_path",
    # the URL
    "url_warnings",
    "PAGE_PARAMS",
    "PAIR_PAGES",
    "VIEW_NUMBERS",
    "apply_query_params",
    "format_value",
    "page_param",
    "set_page_param",
    "view_number",
    "set_view_number",
    "query_params_for_state",
    "sync_query_params",
    "sync_url",
    "after_sync",
    "begin_run",
    "current_page",
    "current_params",
    "declare_unlinked",
    "declare_settings",
    "VIEW_CHOICES",
    "view_choice",
    "set_view_choice",
    "view_subset",
    "set_view_subset",
    "subset_linkable",
    "tab_refusal",
    "unlinked",
]
