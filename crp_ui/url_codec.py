"""The URL codec: the dashboard's view mirrored in ``st.query_params`` so a link reproduces it.

Parameters: ``ckf`` (bundled sample name, when not the default sample), ``scenario`` (bundled
scenario name), ``now`` (date, when it differs from the scenario's), ``cfg.<key>=value`` for every
config key that differs from the defaults, ``fact`` (selected fact id), ``pair`` (the conflict pair
selected on the Conflicts page, ``a|b``). Parameters a page owns
(:data:`PAGE_PARAMS`) are left alone by the shell: ``step`` (the Fan-out stepper) and ``tab`` (the
Tuning page's tab, bound to its ``st.tabs`` with ``bind="query-params"``: Streamlit writes and reads it,
and refuses to let ``st.query_params`` set or delete it).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import Any

import streamlit as st

from crp_core.config import CRPConfig
from crp_core.errors import ConfigError

from . import session
from .decisions import K_PAIR, parse_pair_param
from .samples import DEFAULT_SAMPLE, list_samples, list_scenarios

#: URL parameters owned by a page (e.g. the Fan-out stepper's ``step``): the shell never deletes them
PAGE_PARAMS: frozenset[str] = frozenset({"step", "tab"})
#: the defaults, built once: the URL is compared with them twice per rerun
_DEFAULTS = CRPConfig()


def format_value(v: Any) -> str:
    """A config value as it appears in a ``cfg.*`` parameter (the CLI's ``--set`` syntax)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "none"
    if isinstance(v, float):
        return repr(v)
    return str(v)


def query_params_for_state() -> dict[str, str]:
    """The URL parameters that reproduce the current view (only what differs from defaults)."""
    out: dict[str, str] = {}
    sample = session.get_ckf_sample()
    if sample and sample != DEFAULT_SAMPLE:
        out["ckf"] = sample
    name = session.get_scenario_name()
    if name:
        out["scenario"] = name
    s = st.session_state.get(session.K_SCENARIO)
    if s is not None and (session.scenario_edited() or not name) and s.now is not None:
        out["now"] = s.now.date().isoformat()
    for key, (_mine, theirs) in _DEFAULTS.diff(session.get_config()).items():
        out[f"cfg.{key}"] = format_value(theirs)
    fid = session.selected_fact()
    if fid:
        out["fact"] = fid
    pair = st.session_state.get(K_PAIR)
    if pair:
        out["pair"] = str(pair)
    return out


def sync_query_params() -> None:
    """Write the state into ``st.query_params`` (only the keys that changed)."""
    want = query_params_for_state()
    qp = st.query_params
    current = {k: qp.get(k) for k in qp.keys()}
    if current == want:
        return
    for k in list(current):
        if k not in want and k not in PAGE_PARAMS:
            del qp[k]
    for k, v in want.items():
        if current.get(k) != v:
            qp[k] = v


def apply_query_params(params: Mapping[str, str]) -> list[str]:
    """Restore a view from URL parameters; returns a warning per parameter that could not apply.

    Order: the CKF and scenario first (``ckf``, ``scenario``; the defaults when absent), then
    what refines them (``now``, ``cfg.*``, ``fact``).
    """
    warnings: list[str] = []
    ckf = params.get("ckf")
    if ckf and not session.load_sample(ckf):
        warnings.append(f"ckf={ckf}: no such bundled CKF (or it was refused)")
        st.session_state[session.K_CKF_REFUSAL] = None
    name = params.get("scenario")
    if name and not session.load_scenario_file(name):
        warnings.append(f"scenario={name}: no such bundled scenario (or it was refused)")
        st.session_state[session.K_SCENARIO_REFUSAL] = None
    if session.active_ckf() is None and session.pending_load() is None:
        samples = list_samples()
        if samples:
            session.load_sample(samples[0])
    if st.session_state.get(session.K_SCENARIO) is None:
        scen = list_scenarios()
        if scen:
            session.load_scenario_file(scen[0])
    now = params.get("now")
    if now:
        try:
            session.set_now(date.fromisoformat(now))
        except ValueError:
            warnings.append(f"now={now}: not a date (YYYY-MM-DD)")
    for k, v in params.items():
        if not k.startswith("cfg."):
            continue
        item = f"{k[4:]}={v}"
        try:
            parsed = CRPConfig().with_set_args([item]).diff(CRPConfig())
        except ConfigError as exc:
            warnings.append(f"{k}={v}: {exc}")
            continue
        values = {key: mine for key, (mine, _default) in parsed.items()}
        err = session.set_config_values(values) if values else None
        if err:
            warnings.append(f"{k}={v}: {err}")
    st.session_state[session.K_CONFIG_ERROR] = None
    fid = params.get("fact")
    if fid:
        session.select_fact(fid)
    pair, note = parse_pair_param(params.get("pair"))
    if note:
        warnings.append(note)
    st.session_state[K_PAIR] = pair
    return warnings
