"""What pages import: the per-user dashboard state, in one namespace.

Pages call :func:`get_ckf`, :func:`get_corpus`, :func:`get_scenario`, :func:`get_config`,
:func:`get_now`, :func:`get_result`, :func:`selected_fact` / :func:`select_fact` and
:func:`get_operator`; they never touch the session-state keys directly. The names come from three
modules, each with one concern:

* :mod:`crp_ui.samples` - which bundled CKFs and scenarios exist;
* :mod:`crp_ui.session` - the session-state accessors (CKF, scenario, config, run, selection);
* :mod:`crp_ui.url_codec` - the view mirrored in the URL (deep links).
"""
from __future__ import annotations

from .samples import (
                      CKF_SUFFIXES,
                      DEFAULT_SAMPLE,
                      REPO_ROOT,
                      SCENARIO_SUFFIXES,
                      list_samples,
                      list_scenarios,
                      samples_dir,
                      scenarios_dir,
)
from .session import (
                      EDITED_SCENARIO,
                      K_BASE,
                      K_CKF_LABEL,
                      K_CKF_NOTICE,
                      K_CKF_REFUSAL,
                      K_CKF_SAMPLE,
                      K_CONFIG,
                      K_CONFIG_ERROR,
                      K_EDITS,
                      K_FACT,
                      K_GEN,
                      K_INIT,
                      K_KB,
                      K_KB_FP,
                      K_LAST_ATTEMPT,
                      K_LAST_UPLOAD,
                      K_LENIENT,
                      K_NOW_DEFAULT,
                      K_OPERATOR,
                      K_PENDING,
                      K_SCENARIO,
                      K_SCENARIO_EDITED,
                      K_SCENARIO_NAME,
                      K_SCENARIO_REFUSAL,
                      K_URL_WARNINGS,
                      PendingLoad,
                      Refusal,
                      active_ckf,
                      base_with_edits,
                      bump,
                      cancel_pending,
                      config_edits,
                      corpus_ready,
                      gen,
                      get_ckf,
                      get_ckf_fingerprint,
                      get_ckf_label,
                      get_ckf_notice,
                      get_ckf_refusal,
                      get_ckf_sample,
                      get_config,
                      get_config_error,
                      get_corpus,
                      get_lenient,
                      get_now,
                      get_operator,
                      get_result,
                      get_scenario,
                      get_scenario_name,
                      get_scenario_refusal,
                      get_sdk_map,
                      get_sdk_map_refusal,
                      init_state,
                      last_load_attempt,
                      last_upload,
                      load_config_toml,
                      load_sample,
                      load_scenario_file,
                      load_scenario_upload,
                      load_upload,
                      pending_load,
                      pending_progress,
                      poll_pending,
                      reset_config,
                      scenario_edited,
                      select_fact,
                      selected_fact,
                      set_config_value,
                      set_config_values,
                      set_lenient,
                      set_now,
                      set_operator,
                      set_scenario,
                      set_sdk_map,
                      update_scenario,
                      upload_limit,
                      url_warnings,
)
from .url_codec import PAGE_PARAMS, apply_query_params, format_value, query_params_for_state, sync_query_params

__all__ = [
    # samples
    "CKF_SUFFIXES", "DEFAULT_SAMPLE", "REPO_ROOT", "SCENARIO_SUFFIXES", "list_samples", "list_scenarios",
    "samples_dir", "scenarios_dir",
    # session keys (crp_ui modules only) and accessors
    "EDITED_SCENARIO", "K_BASE", "K_CKF_LABEL", "K_CKF_REFUSAL", "K_CKF_SAMPLE", "K_CONFIG", "K_CONFIG_ERROR",
    "K_EDITS", "K_FACT", "K_GEN", "K_INIT", "K_KB", "K_KB_FP", "K_LAST_ATTEMPT", "K_LENIENT", "K_NOW_DEFAULT",
    "K_OPERATOR", "K_SCENARIO", "K_SCENARIO_EDITED", "K_SCENARIO_NAME", "K_SCENARIO_REFUSAL", "K_URL_WARNINGS",
    "Refusal", "base_with_edits", "bump", "config_edits", "corpus_ready", "gen", "get_ckf",
    "get_ckf_fingerprint", "get_ckf_label",
    "get_ckf_refusal",
    "get_ckf_sample", "get_config", "get_config_error", "get_corpus", "get_lenient", "get_now", "get_operator",
    "get_result", "get_scenario", "get_scenario_name", "get_scenario_refusal", "init_state", "last_load_attempt",
    "load_config_toml", "load_sample", "load_scenario_file", "load_scenario_upload", "load_upload",
    "reset_config", "scenario_edited", "select_fact", "selected_fact", "set_config_value",
    "set_config_values", "set_lenient", "set_now", "set_operator", "set_scenario", "update_scenario",
    "url_warnings",
    # loading in the background
    "K_CKF_NOTICE", "K_LAST_UPLOAD", "K_PENDING", "PendingLoad", "active_ckf", "cancel_pending", "get_ckf_notice",
    "last_upload", "pending_load", "pending_progress", "poll_pending", "upload_limit",
    # a crprotocol SDK snapshot's source-type mapping
    "get_sdk_map", "get_sdk_map_refusal", "set_sdk_map",
    # URL codec
    "PAGE_PARAMS", "apply_query_params", "format_value", "query_params_for_state", "sync_query_params",
]
