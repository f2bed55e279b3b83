"""The session's configuration: the layers the dashboard stacks, and the edits the sidebar makes.

Precedence matches the CLI: defaults < a loaded TOML (the *base*) < the active scenario's ``config``
table < the sidebar edits (like ``--set``), stacked by ``crp_core.layered_config``. The effective
config is what the editor shows and what the pipeline gets; it is stored in the session and computed
again only when a layer changes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, cast

import streamlit as st

from crp_core import ConfigError, CRPConfig, Scenario, layered_config

from .session import K_BASE, K_CONFIG, K_CONFIG_ERROR, K_EDITS, K_SCENARIO, bump


def get_config() -> CRPConfig:
    """The effective config: base (defaults or loaded TOML) < scenario config < sidebar edits."""
    c = st.session_state.get(K_CONFIG)
    return recompute_config() if c is None else cast(CRPConfig, c)


def get_config_error() -> str | None:
    """The message of the last refused config change, None when the last one applied."""
    got = st.session_state.get(K_CONFIG_ERROR)
    return str(got) if got else None


def set_config_error(message: str | None) -> None:
    """Show ``message`` as the refusal of a config change (None clears it)."""
    st.session_state[K_CONFIG_ERROR] = message


def config_edits() -> dict[str, Any]:
    """The sidebar edits in force (flat or dotted keys), a copy."""
    return dict(st.session_state.get(K_EDITS, {}))


def _base() -> CRPConfig:
    """The base layer: a loaded TOML, else the defaults."""
    return cast(CRPConfig, st.session_state.get(K_BASE) or CRPConfig())


def _scenario() -> Scenario | None:
    """The active scenario as stored (``now`` unresolved)."""
    return cast("Scenario | None", st.session_state.get(K_SCENARIO))


#: the dashboard's embedding model: the server's to choose (a model folder on this machine, or an installed
#: package that ships one), never an uploaded configuration's, a scenario's or a link's
EMBEDDING_MODEL_ENV = "CRP_INSPECT_EMBEDDING_MODEL"


def server_embedding_model() -> str:
    """The embedding model this server was started with (``$CRP_INSPECT_EMBEDDING_MODEL``; "" = MiniLM)."""
    return os.environ.get(EMBEDDING_MODEL_ENV, "").strip()


def _effective(base: CRPConfig, scenario: Scenario | None, edits: Mapping[str, Any]) -> CRPConfig:
    """The dashboard's configuration: ``crp_core.layered_config`` with the sidebar edits as overrides, and
    the server's embedding model (a configuration or scenario naming another is refused)."""
    c = layered_config(base, scenario.config if scenario is not None else None, overrides=edits)
    server = server_embedding_model()
    if c.embedding_model and c.embedding_model != server:
        raise ConfigError(
            f"embedding_model {c.embedding_model!r}: the dashboard embeds with the model its server was started "
            f"with (${EMBEDDING_MODEL_ENV}: {server or 'all-MiniLM-L6-v2'}), not one named by an uploaded "
            "configuration or a scenario"
        )
    return c.with_overrides({"embedding_model": server}) if server else c


def recompute_config() -> CRPConfig:
    """Store and return the effective config; edits that no longer fit the scenario are dropped."""
    base = _base()
    edits = st.session_state.get(K_EDITS, {})
    try:
        c = _effective(base, _scenario(), edits)
    except ConfigError as exc:  # a scenario's overrides do not fit the edits: drop the edits
        st.session_state[K_CONFIG_ERROR] = f"{exc}; sidebar edits dropped"
        st.session_state[K_EDITS] = {}
        c = _effective(base, None, {})
        try:
            c = _effective(base, _scenario(), {})
        except ConfigError as exc2:
            st.session_state[K_CONFIG_ERROR] = f"scenario config ignored: {exc2}"
    st.session_state[K_CONFIG] = c
    bump("config")
    return c


def base_with_edits() -> CRPConfig:
    """The sidebar base config (defaults or a loaded TOML) with the sidebar edits, without any
    scenario's ``config`` table: the config a suite of scenarios runs at."""
    base = _base()
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
    try:
        c = _effective(_base(), _scenario(), edits)
    except ConfigError as exc:
        st.session_state[K_CONFIG_ERROR] = str(exc)
        bump("config")  # widgets show the kept value again
        return str(exc)
    st.session_state[K_EDITS] = edits
    st.session_state[K_CONFIG] = c
    st.session_state[K_CONFIG_ERROR] = None
    return None


def apply_config_edits(values: Mapping[str, Any]) -> str | None:
    """Set ``values`` as sidebar edits from a page's button (the Tuning page's Apply, the gate note's Try): as
    :func:`set_config_values`, and once applied the sidebar's widgets are rebuilt showing them."""
    err = set_config_values(values)
    if err is None:
        bump("config")
    return err


def reset_config() -> None:
    """Back to the defaults (the scenario's own config table still applies)."""
    st.session_state[K_BASE] = CRPConfig()
    st.session_state[K_EDITS] = {}
    st.session_state[K_CONFIG_ERROR] = None
    recompute_config()


def load_config_toml(text: str) -> str | None:
    """Load a TOML config as the new base. A bad TOML returns the error and keeps the current config."""
    try:
        base = CRPConfig.from_toml(text)
        _effective(base, _scenario(), {})
    except ConfigError as exc:
        st.session_state[K_CONFIG_ERROR] = str(exc)
        return str(exc)
    st.session_state[K_BASE] = base
    st.session_state[K_EDITS] = {}
    st.session_state[K_CONFIG_ERROR] = None
    recompute_config()
    return None
