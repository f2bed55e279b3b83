"""Widget plumbing the sidebar's sections share: generation-keyed widget keys, expanders drawn only
while open, and what counts as an empty editor cell.

Widget keys carry a *generation* (``state.gen(area)``): when the state changes outside a widget (a
scenario or TOML is loaded, the config is reset, a URL is applied) the generation is bumped and the
widgets are rebuilt from the new state, so a widget never shows a stale value.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

import pandas as pd
import streamlit as st

from . import state

if TYPE_CHECKING:
    from streamlit.elements.lib.mutable_expander_container import ExpanderContainer

T = TypeVar("T")


def widget_key(area: str, name: str) -> str:
    """Key of a sidebar widget in the current generation of ``area`` (tests use this)."""
    return f"crp.w.{area}.{name}.{state.gen(area)}"


def lazy_expander(label: str, key: str, area: str) -> ExpanderContainer:
    """An expander whose contents the caller draws only when ``.open``; opening it rebuilds the
    widgets of ``area`` from the current state (Streamlit drops the state of widgets not drawn)."""
    return st.expander(label, key=key, on_change=state.bump, args=(area,))


def is_blank(v: Any) -> bool:
    """An empty data-editor cell: None, NaN, ``pd.NA`` or whitespace."""
    return v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA or (isinstance(v, str) and not v.strip())


def fixed_frame(prefix: str, area: str, build: Callable[[], T]) -> T:
    """The input frame of a data editor, built once per generation of ``area`` (``build()``) and kept
    under ``prefix + generation``; the frames of earlier generations are dropped."""
    key = f"{prefix}{state.gen(area)}"
    if not state.holds(key):
        for k in [k for k in st.session_state.keys() if str(k).startswith(prefix)]:
            state.forget(str(k))
        state.remember(key, build())
    return cast(T, state.recall(key))
