"""The Auto-tune tab's search-space editor: one row per key with its range, its scale and whether it is
searched, starting from crp_core's default space (the TTL of every source type the CKF reads, the
relevance gate, the contradiction similarity, the stale floor). Rows can be switched off, edited and
added (any key of ``crp_core.tunable_keys``); each searched row is checked by ``crp_core.param_for``
(the key's valid range, whole numbers for a whole-number key, a positive range for a log scale), and a
refused row is named by its number and key.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from typing import Any

import pandas as pd
import streamlit as st

from crp_core import ConfigError, Param, param_for, tunable_keys

from . import render, state

COLUMNS = ("search", "key", "lo", "hi", "log")


def space_frame(space: Sequence[Param]) -> pd.DataFrame:
    """The editor's rows of ``space``: every key searched, with its range and scale."""
    return pd.DataFrame(
        [{"search": True, "key": p.key, "lo": float(p.low), "hi": float(p.high), "log": bool(p.log)} for p in space],
        columns=list(COLUMNS),
    )


def _blank(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v)) or (isinstance(v, str) and not v.strip())


def _number(v: Any) -> Any:
    """A cell's number as a plain Python value (NaN and None kept for the check to refuse)."""
    return v.item() if hasattr(v, "item") else v


def space_from_frame(df: pd.DataFrame, default: Sequence[Param] = ()) -> tuple[tuple[Param, ...], list[str]]:
    """The searched parameters of the editor's rows (``search`` off: left out; an added row's empty
    ``search`` counts as on) and a message per refused row, naming its number and key. A row left as a
    parameter of ``default`` gives that parameter itself (its grid step included)."""
    same = {(p.key, float(p.low), float(p.high), bool(p.log)): p for p in default}
    params: list[Param] = []
    errors: list[str] = []
    seen: set[str] = set()
    for i, row in enumerate(df.to_dict("records"), 1):
        search = row.get("search")
        if not _blank(search) and not bool(search):
            continue
        key = row.get("key")
        if _blank(key):
            errors.append(f"row {i}: choose a key")
            continue
        key = str(key)
        if key in seen:
            errors.append(f"row {i} ({key}): the key is already searched by an earlier row")
            continue
        seen.add(key)
        log = row.get("log")
        lo, hi, on_log = _number(row.get("lo")), _number(row.get("hi")), False if _blank(log) else bool(log)
        try:
            got = param_for(key, lo, hi, on_log, where=f"row {i} ({key})")
            params.append(same.get((got.key, got.low, got.high, got.log), got))
        except ConfigError as exc:
            errors.append(str(exc))
    return tuple(params), errors


def _digest(space: Sequence[Param]) -> str:
    return hashlib.sha256(repr(tuple(space)).encode("utf-8")).hexdigest()[:12]


def space_editor(default: Sequence[Param], key: str) -> tuple[Param, ...] | None:
    """The editor over ``default``; the searched parameters, or None (with the reasons shown) while a row
    is refused or no row is searched. The rows last edited are kept for the session: a rerun, another tab
    or another page shows them again; another default space (another CKF or sidebar config) starts from
    its own rows."""
    digest = _digest(default)
    wkey, base_key, rows_key = f"{key}.{digest}", f"{key}.base.{digest}", f"{key}.rows.{digest}"
    if not state.holds(wkey) or not state.holds(base_key):
        # the editor's first draw in this visit (Streamlit drops the state of a widget a run does not draw):
        # it starts from the rows last edited, its edits then apply to this fixed frame
        state.remember(base_key, state.recall(rows_key, space_frame(default)))
    edited = st.data_editor(
        state.recall(base_key),
        key=wkey,
        hide_index=True,
        width="stretch",
        num_rows="dynamic",
        column_config={
            "search": st.column_config.CheckboxColumn("search", default=True, help="search this key"),
            "key": st.column_config.SelectboxColumn("key", options=list(tunable_keys()), required=True),
            "lo": st.column_config.NumberColumn("lo", help="lowest value searched", format="%g"),
            "hi": st.column_config.NumberColumn("hi", help="highest value searched", format="%g"),
            "log": st.column_config.CheckboxColumn("log", default=False, help="sample on a logarithmic scale"),
        },
    )
    state.remember(rows_key, edited.reset_index(drop=True))
    params, errors = space_from_frame(edited, default)
    for e in errors:
        st.error(render.md_escape(e))
    if errors:
        return None
    if not params:
        st.info("No key is searched: switch one on, or add a row.")
        return None
    st.caption(
        "Searched: " + render.md_escape(", ".join(p.describe() for p in params)) + ". Each range is widened to "
        "hold the sidebar's value, so trial 0 runs exactly there."
    )
    return params
