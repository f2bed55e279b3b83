"""The team the dashboard serves and who this session's operator is (``crp_core.resolve_identity``).

* **The team file** is the one ``$CRP_INSPECT_TEAM`` names (``crp_core.load_team_config``), read once per
  file version (path, size, modification time) for every session. None: single mode, everybody an
  operator. A file that is refused leaves every session read-only with the reason shown: the dashboard
  never falls back to a mode that trusts less.
* **The operator** comes from the mode: the name typed in the sidebar (single), the configured header of
  the request that opened the session (proxy: ``st.context.headers``, believed in this mode only), or the
  OpenID Connect login (oidc: ``st.user``, configured in ``.streamlit/secrets.toml``). The role is the
  team's role book's.
* :func:`writer` is the operator who may record (None for a viewer or a session without an operator), so
  every record control is disabled with :func:`record_refusal` as its reason.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import streamlit as st

from crp_core import TEAM_ENV, CRPError, Identity, Role, TeamConfig, load_team_config, resolve_identity

from . import render, session

#: the message a single-mode session without a name shows where it would record
NO_NAME = "Enter your name under **Operator name** in the sidebar to record decisions."


@st.cache_resource(show_spinner=False, max_entries=8)
def _load(path: str, stamp: tuple[int, int]) -> TeamConfig | str:
    """The team file at ``path`` for one version of it (``stamp``: size, mtime), or why it was refused."""
    del stamp  # cache key only: an edited file is read again
    try:
        return load_team_config(path)
    except CRPError as exc:
        return str(exc)


def _team() -> TeamConfig | str:
    path = os.environ.get(TEAM_ENV, "").strip()
    if not path:
        return load_team_config(None)
    try:
        s = os.stat(path)
        stamp = (s.st_size, s.st_mtime_ns)
    except OSError as exc:
        return f"team file {path}: cannot read: {exc.strerror or exc}"
    return _load(os.path.abspath(path), stamp)


def team_config() -> TeamConfig | None:
    """The team's settings (None when the team file was refused: :func:`team_refusal` says why)."""
    got = _team()
    return got if isinstance(got, TeamConfig) else None


def team_refusal() -> str | None:
    """Why the team file was refused (None when it was read, or when there is none)."""
    got = _team()
    return got if isinstance(got, str) else None


def review_quorum() -> int:
    """The number of operators who must agree before a pair is settled (1 without a team file)."""
    team = team_config()
    return team.review_quorum if team is not None else 1


def refresh_seconds() -> float:
    """How often an open queue looks for the decisions of others."""
    team = team_config()
    return team.refresh_seconds if team is not None else 5.0


def lease_seconds() -> int:
    """How long a claimed pair stays with its operator."""
    team = team_config()
    return team.lease_seconds if team is not None else 600


def header_values(name: str) -> Sequence[str]:
    """Every value of the request header ``name`` in the request that opened this session."""
    try:
        return list(st.context.headers.get_all(name))
    except (AttributeError, RuntimeError):  # no request (a bare script run)
        return []


def login_claims() -> Mapping[str, Any]:
    """The claims of the OpenID Connect login (``st.user``), empty when there is none."""
    try:
        return dict(st.user.to_dict())
    except (AttributeError, RuntimeError, KeyError):
        return {}


def identity() -> Identity:
    """This session's operator and role under the team's mode (no operator while the team file is refused)."""
    team = team_config()
    if team is None:
        why = f"the team file was refused, so every session is read-only: {team_refusal()}"
        return Identity(mode="single", operator=None, source="the team file", missing=why)
    return resolve_identity(team, typed=session.get_operator(), header_values=header_values, user=login_claims())


def writer() -> str:
    """The operator who may record in this session ("" for a viewer or a session without an operator)."""
    who = identity()
    return who.operator or "" if who.can_record else ""


def record_refusal() -> str | None:
    """Why this session may not record (None when it may), as Markdown: shown beside every disabled record
    control."""
    who = identity()
    if who.can_record:
        return None
    if who.mode == "single" and who.operator is None and who.missing == "no operator name entered yet":
        return NO_NAME
    return "Read-only: " + render.md_escape(who.refusal() or "no operator")


def recording_as() -> str:
    """Who records in this session and where the name comes from, as Markdown (for a session that may record)."""
    who = identity()
    where = "Operator name, in the sidebar" if who.mode == "single" else render.md_escape(who.source)
    return f"Recording as **{render.md_escape(who.operator or '')}** ({where}) · role {who.role.value}."


def role() -> Role:
    return identity().role


def decision_fields() -> dict[str, Any]:
    """The team fields a dashboard decision carries: the role held and its origin."""
    return {"role": identity().role.value, "origin": "dashboard"}
