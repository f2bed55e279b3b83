"""The shared sidebar: CKF picker, scenario editor, config editor, operator name.

Drawn once per run by the shell, before the page, for every page. Each section is a module of its
own (:mod:`crp_ui.sidebar_ckf`, :mod:`crp_ui.sidebar_scenario`, :mod:`crp_ui.sidebar_config`); their
widgets only read input and call :mod:`crp_ui.state`, nothing here computes a score. The names tests
and the shell use are re-exported here.
"""

from __future__ import annotations

import streamlit as st

from . import render, snapshot, state, team
from .sidebar_ckf import UPLOAD_TYPES, browser_upload_cap, ckf_section, limit_text
from .sidebar_config import (
    CONFIG_GROUP_OPEN,
    CONFIG_GROUPS_KEEP,
    CONFIG_OPEN,
    config_groups,
    config_label,
    config_section,
    project_cells_text,
    table_edits,
    tables_frame,
)
from .sidebar_scenario import SCENARIO_OPEN, scenario_dict_from_editors, scenario_section, subquery_frame
from .widgets import widget_key

#: widget key of the operator name
OPERATOR_KEY = "crp.w.operator"


def render_sidebar(page: str = "") -> None:
    """Draw the sidebar (once per run, before ``page``, its URL path) and mirror the state in the URL;
    what the link does not carry and "Share snapshot" are drawn once the page ran (:mod:`crp_ui.snapshot`)."""
    state.init_state()
    state.begin_run(page)
    with st.sidebar:
        for w in state.url_warnings():
            st.warning(f"Link parameter ignored: {render.md_escape(w)}")
        snapshot.notice_slot()
        ckf_section()
        scenario_section()
        config_section()
        _operator_section()
        snapshot.open_section()
    state.sync_url()


def _on_operator(wkey: str) -> None:
    state.set_operator(str(state.recall(wkey, "")))


def _operator_section() -> None:
    """Who records triage decisions: the name typed (single mode), else who the proxy or the login says."""
    refused = team.team_refusal()
    if refused is not None:
        st.error(f"Team file refused, every session is read-only: {render.md_escape(refused)}")
        return
    who = team.identity()
    if who.mode == "single":
        st.text_input(
            "Operator name",
            value=state.typed_operator(),
            key=OPERATOR_KEY,
            on_change=_on_operator,
            args=(OPERATOR_KEY,),
            help="Recorded with every triage decision, in its normal form (case folded, spaces collapsed).",
            placeholder="your name",
        )
        if who.operator is not None and who.operator != state.typed_operator():
            st.caption(f"Recorded as **{render.md_escape(who.operator)}** · {who.role.value}")
        elif who.missing and who.missing != "no operator name entered yet":
            st.warning(render.md_escape(who.missing))
        return
    if who.mode == "oidc":
        _login_buttons(who.operator is not None)
    if who.operator is None:
        st.warning(f"Read-only: {render.md_escape(who.missing or 'no operator')}")
    else:
        st.caption(
            f"Operator **{render.md_escape(who.operator)}** ({render.md_escape(who.source)}) · role "
            f"**{who.role.value}**"
        )


def _login_buttons(logged_in: bool) -> None:
    """oidc mode: log in with the provider configured in .streamlit/secrets.toml ([auth]), or log out."""
    if logged_in:
        if st.button("Log out", key="crp.w.logout"):
            st.logout()
        return
    if st.button("Log in", key="crp.w.login", type="primary"):
        try:
            st.login()
        except (st.errors.StreamlitAPIException, ImportError) as exc:  # no [auth] section, no Authlib
            st.error(f"Login is not configured: {render.md_escape(exc)}")


__all__ = [
    "CONFIG_GROUPS_KEEP",
    "CONFIG_GROUP_OPEN",
    "CONFIG_OPEN",
    "OPERATOR_KEY",
    "SCENARIO_OPEN",
    "UPLOAD_TYPES",
    "browser_upload_cap",
    "config_groups",
    "config_label",
    "limit_text",
    "render_sidebar",
    "scenario_dict_from_editors",
    "subquery_frame",
    "table_edits",
    "project_cells_text",
    "tables_frame",
    "widget_key",
]
