"""The session's scenario: which one is active, where it came from, its edits and the time it runs at.

A scenario is loaded from the bundled folder, uploaded, or edited in the sidebar; each replaces the
active one only when ``crp_core`` accepts it (a refused one is recorded as a :class:`Refusal`). Its
``config`` table is a layer of the effective configuration (:mod:`crp_ui.config_state`), recomputed on
every change. ``now`` is the scenario's own, else midnight UTC of the day the session started.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, date, datetime, time
from typing import Any, cast

import streamlit as st

from crp_core import Scenario, ValidationError, load_scenario, load_scenario_bytes, scenario_from_dict

from .config_state import recompute_config
from .samples import list_scenarios, scenarios_dir, scenarios_label
from .session import (
    EDITED_SCENARIO,
    K_NOW_DEFAULT,
    K_SCENARIO,
    K_SCENARIO_EDITED,
    K_SCENARIO_NAME,
    K_SCENARIO_REFUSAL,
    Refusal,
    bump,
)


def stored_scenario() -> Scenario | None:
    """The active scenario as loaded or edited (``now`` left unresolved when it has none)."""
    return cast("Scenario | None", st.session_state.get(K_SCENARIO))


def get_scenario() -> Scenario | None:
    """The scenario being inspected, with ``now`` always resolved (see :func:`get_now`)."""
    s = stored_scenario()
    if s is None:
        return None
    if s.now is None:
        return s.replace(now=get_now())
    return s


def get_scenario_name() -> str:
    """Bundled scenario name of the active scenario, ``""`` for an upload or none."""
    return str(st.session_state.get(K_SCENARIO_NAME, ""))


def scenario_edited() -> bool:
    """True once the scenario was edited in the sidebar (or by time travel)."""
    return bool(st.session_state.get(K_SCENARIO_EDITED, False))


def get_scenario_refusal() -> Refusal | None:
    """Why the last scenario load or edit was refused, None when it succeeded."""
    return cast("Refusal | None", st.session_state.get(K_SCENARIO_REFUSAL))


def clear_scenario_refusal() -> None:
    """Forget the last scenario refusal (a link's refusal is reported as a link warning instead)."""
    st.session_state[K_SCENARIO_REFUSAL] = None


def _default_now() -> datetime:
    """Midnight UTC of the day the session started: a stable 'wall clock' for caching and links."""
    d = st.session_state.get(K_NOW_DEFAULT)
    if d is None:
        d = datetime.now(UTC).date()
        st.session_state[K_NOW_DEFAULT] = d
    return datetime.combine(d, time(0, 0), tzinfo=UTC)


def get_now() -> datetime:
    """The time the pipeline treats as now: the scenario's ``now``, else today 00:00 UTC."""
    s = stored_scenario()
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
    recompute_config()


def set_now(d: date) -> None:
    """Time travel: keep the scenario's time of day (00:00 UTC when it had none), change the date."""
    s = stored_scenario()
    old = get_now()
    new = datetime.combine(d, old.timetz())
    if s is None:
        st.session_state[K_NOW_DEFAULT] = d
        return
    if new != s.now:
        set_scenario(s.replace(now=new), edited=True)


def _refuse(source: str, exc: ValidationError) -> bool:
    st.session_state[K_SCENARIO_REFUSAL] = Refusal(source, exc.what, exc.problems)
    return False


def load_scenario_file(name: str) -> bool:
    """Load a scenario the sidebar lists (the scenarios folder: ``sample_ckf/scenarios/``, or the server's
    under ``crp-inspect dashboard``); its ``config`` table applies."""
    if name not in list_scenarios():
        st.session_state[K_SCENARIO_REFUSAL] = Refusal(name, f"no {scenarios_label().lower()} named {name!r}")
        return False
    try:
        s = load_scenario(str(scenarios_dir() / name))
    except ValidationError as exc:
        return _refuse(name, exc)
    set_scenario(s, name=name, edited=False)
    bump("scenario")
    return True


def load_scenario_upload(data: bytes, name: str) -> bool:
    """Load an uploaded scenario (JSON / TOML). A refused one leaves the current scenario active."""
    try:
        s = load_scenario_bytes(data, name)
    except ValidationError as exc:
        return _refuse(name, exc)
    set_scenario(s, name="", edited=False)
    bump("scenario")
    return True


def update_scenario(d: Mapping[str, Any]) -> bool:
    """Replace the scenario by an edited dict (validated by ``crp_core.scenario_from_dict``); refused -> kept."""
    try:
        s = scenario_from_dict(d, source="dashboard")
    except ValidationError as exc:
        return _refuse(EDITED_SCENARIO, exc)
    set_scenario(s, edited=True)
    return True
