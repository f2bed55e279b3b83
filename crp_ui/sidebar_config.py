"""The sidebar's configuration editor: every scalar key in a group per pipeline stage, the three
tables by source type, reset, download and upload of a TOML.

The editor and each stage group are expanders whose widgets are drawn only while open (each number
input costs a scan of the session state on every rerun); which groups are open is kept for the
session, since Streamlit drops an expander's state while the Configuration expander is closed. The
first group (stage 1, the relevance gate) is open until the user closes it. A value the configuration
refuses keeps the configuration as it was and says why.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd
import streamlit as st

from crp_core import (
    MAX_CONFIG_BYTES,
    SCALAR_KEYS,
    SOURCE_TYPES,
    TABLE_KEYS,
    CRPConfig,
    choices,
    describe,
    origin,
    valid_range,
)

from . import render, state
from .sidebar_ckf import capped_uploader
from .widgets import fixed_frame, is_blank, lazy_expander, widget_key

if TYPE_CHECKING:
    from streamlit.elements.lib.mutable_expander_container import ExpanderContainer

PROJECT_MARK = " *"
#: key of the Configuration expander's open state (tests open it through this)
CONFIG_OPEN = "crp.w.sidebar.config_open"
#: widget keys of the stage groups' expanders (+ group number), and which ones are open
CONFIG_GROUP_OPEN = "crp.w.sidebar.config_group."
CONFIG_GROUPS_KEEP = "crp.sidebar.config_groups_open"
#: the tables editor's input frame, kept per generation of the "config" widgets
TABLES_BASE = "crp.config_tables_base."
#: the file id of the last config upload read (an upload is read once)
UPLOAD_SEEN = "crp.config_upload_seen"
#: the defaults, built once (a CRPConfig validates itself on construction)
_DEFAULTS = CRPConfig()

#: scalar config keys grouped by pipeline stage (any key not listed lands in "Other")
CONFIG_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "Stage 1 · candidates (SPEC-024 §2.6)",
        ("cdr_min_relevance", "candidate_k", "hnsw_m", "hnsw_ef_construction", "hnsw_ef_search"),
    ),
    (
        "Stage 2 · CDR score (SPEC-024 §2, SPEC-027 §3)",
        (
            "min_novelty_floor",
            "coverage_penalty_cap",
            "stale_floor",
            "fresh_fraction",
            "ngram_n",
            "ngram_step_penalty",
            "ngram_penalty_cap",
        ),
    ),
    (
        "Stage 3 · graph / connectors (SPEC-025)",
        (
            "graph_retrieval",
            "graph_k",
            "graph_edge_min",
            "max_hops",
            "connector_budget",
            "min_connector_relevance",
            "envelope_fact_budget",
        ),
    ),
    (
        "Stage 4 · contradictions (SPEC-027 §2)",
        (
            "contradiction_similarity",
            "authority_tie_tolerance",
            "backfill",
            "detector_learned",
            "dedup_similarity",
            "known_conflict_action",
        ),
    ),
    (
        "Stage 5 · fan-out (SPEC-027 §1)",
        ("fanin_dedup_similarity", "branch_depth_weight", "kmeans_seed", "kmeans_n_init"),
    ),
    ("Stage 6 · packing (SPEC-003 §7)", ("token_budget",)),
    ("Input", ("ckf_max_bytes",)),
)
_FORMATS = {"authority_tie_tolerance": "%.1e"}
_STEPS = {"authority_tie_tolerance": 1e-9, "ckf_max_bytes": 1024 * 1024}
_TABLE_COLUMNS = {"ttl_days": "TTL (days)", "source_authority": "authority", "importance": "importance"}
#: a table in the words of the caption under it
_TABLE_WORDS = {"ttl_days": "TTL", "source_authority": "authority", "importance": "importance"}


def config_groups() -> list[tuple[str, tuple[str, ...]]]:
    """The groups above, plus "Other" for scalar keys no group names (so no key is ever hidden)."""
    listed = {k for _, keys in CONFIG_GROUPS for k in keys}
    groups = [(g, tuple(k for k in keys if k in SCALAR_KEYS)) for g, keys in CONFIG_GROUPS]
    rest = tuple(k for k in SCALAR_KEYS if k not in listed)
    if rest:
        groups.append(("Other", rest))
    return groups


def config_label(key: str) -> str:
    """The widget label: the key, with ``*`` when the default is this project's, not a spec's."""
    return key + (PROJECT_MARK if origin(key) == "project" else "")


def _on_config_change(key: str, wkey: str) -> None:
    state.set_config_value(key, state.recall(wkey))


def _number_input(key: str, value: int | float, label: str, wkey: str, help_text: str) -> None:
    """The number input of an int or float key, bounded by its valid range."""
    lo, hi = valid_range(key) or (None, None)
    if isinstance(value, int):
        st.number_input(
            label,
            value=value,
            step=int(_STEPS.get(key, 1)),
            key=wkey,
            help=help_text,
            min_value=None if lo is None else int(lo),
            max_value=None if hi is None else int(hi),
            on_change=_on_config_change,
            args=(key, wkey),
        )
        return
    st.number_input(
        label,
        value=float(value),
        step=float(_STEPS.get(key, 0.01)),
        min_value=None if lo is None else float(lo),
        max_value=None if hi is None else float(hi),
        format=_FORMATS.get(key, "%.3f"),
        key=wkey,
        help=help_text,
        on_change=_on_config_change,
        args=(key, wkey),
    )


def _config_widget(key: str, config: CRPConfig) -> None:
    value = getattr(config, key)
    default = getattr(_DEFAULTS, key)
    who = "this project's default (not in the specs)" if origin(key) == "project" else "spec default"
    help_text = f"{describe(key)}. Default {default!r}: {who}."
    wkey = widget_key("config", key)
    label = config_label(key)
    if isinstance(value, bool):
        st.toggle(label, value=value, key=wkey, help=help_text, on_change=_on_config_change, args=(key, wkey))
    elif isinstance(value, str):
        options = list(choices(key))
        st.selectbox(
            label,
            options,
            index=options.index(value),
            key=wkey,
            help=help_text,
            on_change=_on_config_change,
            args=(key, wkey),
        )
    else:
        _number_input(key, value, label, wkey, help_text)


def tables_frame(config: CRPConfig) -> pd.DataFrame:
    """The three per-source-type tables as one frame (TTL empty = no expiry); which cells are this project's
    defaults is :func:`project_cells_text`."""
    rows = []
    for stype in SOURCE_TYPES:
        row: dict[str, Any] = {"source_type": stype}
        for t in TABLE_KEYS:
            row[_TABLE_COLUMNS[t]] = getattr(config, t)[stype]
        rows.append(row)
    return pd.DataFrame(rows).astype({c: "float64" for c in _TABLE_COLUMNS.values()})


def project_cells_text() -> str:
    """The cells of the tables that are this project's defaults, not fixed by a CRP spec, per table: "TTL of
    peer_reviewed, internal, ...; authority of ...". Said under the table, where it wraps (a column of them
    was cut off at the sidebar's edge)."""
    parts = []
    for t in TABLE_KEYS:
        types = [stype for stype in SOURCE_TYPES if origin(f"{t}.{stype}") == "project"]
        if types:
            parts.append(f"{_TABLE_WORDS[t]} of {', '.join(types)}")
    return "; ".join(parts)


def table_edits(config: CRPConfig, edited: pd.DataFrame) -> dict[str, Any]:
    """Dotted-key changes between ``config``'s tables and an edited :func:`tables_frame`."""
    out: dict[str, Any] = {}
    for r in edited.to_dict("records"):
        stype = r["source_type"]
        for t in TABLE_KEYS:
            v = r[_TABLE_COLUMNS[t]]
            new = None if is_blank(v) else float(v)
            if new is None and t != "ttl_days":
                continue  # an emptied authority / importance cell is ignored (they have no "none")
            if new != getattr(config, t)[stype]:
                out[f"{t}.{stype}"] = "none" if new is None else new
    return out


def group_open(i: int) -> bool:
    """Whether config group ``i`` (of :func:`config_groups`) is open: as the user left it, else only the first."""
    kept = state.recall(CONFIG_GROUPS_KEEP, {})
    return bool(kept.get(i, i == 0))


def _on_group(i: int) -> None:
    state.remember(
        CONFIG_GROUPS_KEEP, {**state.recall(CONFIG_GROUPS_KEEP, {}), i: bool(state.recall(CONFIG_GROUP_OPEN + str(i)))}
    )
    state.bump("config")  # its widgets are rebuilt from the configuration in force


def _group_expander(i: int, group: str) -> ExpanderContainer:
    """A stage group of the config editor: an expander whose number inputs are drawn only while open."""
    return st.expander(group, expanded=group_open(i), key=CONFIG_GROUP_OPEN + str(i), on_change=_on_group, args=(i,))


def _groups(config: CRPConfig) -> None:
    for i, (group, keys) in enumerate(config_groups()):
        sub = _group_expander(i, group)
        if sub.open:
            with sub:
                for key in keys:
                    _config_widget(key, config)


def _tables(config: CRPConfig) -> None:
    st.markdown("**Tables by source type** (TTL `none` = no expiry; empty a cell for no expiry)")
    # pixel widths that fit the 440 px sidebar: the longest source type whole, each value and its header
    # (the edit mark takes room); a narrower sidebar scrolls the values while the source type stays
    edited = st.data_editor(
        fixed_frame(TABLES_BASE, "config", lambda: tables_frame(config)),
        key=widget_key("config", "tables"),
        hide_index=True,
        width="stretch",
        disabled=["source_type"],
        placeholder="none",
        column_config={
            "source_type": st.column_config.TextColumn("source type", width=152, pinned=True),
            "TTL (days)": st.column_config.NumberColumn(
                "TTL d", min_value=0.0, format="%.1f", width=66, help="Days before a fact of that type expires."
            ),
            "authority": st.column_config.NumberColumn(
                "auth.", min_value=0.0, max_value=1.0, format="%.2f", width=64, help="Source authority (SPEC-027 §2.3)."
            ),
            "importance": st.column_config.NumberColumn(
                "imp.", min_value=0.0, max_value=1.0, format="%.2f", width=60, help="Importance (SPEC-009 §4.4)."
            ),
        },
    )
    st.caption(
        render.md_escape(
            "TTL d: days before a fact of that type expires · auth.: source authority · imp.: importance. "
            f"This project's defaults ({PROJECT_MARK.strip()}, not fixed by a CRP spec): {project_cells_text()}."
        )
    )
    changes = table_edits(config, edited)
    if changes and state.set_config_values(changes) is not None:
        st.rerun()  # refused: redraw the table from the kept configuration


def _files() -> None:
    c1, c2 = st.columns(2)
    c1.button("Reset to defaults", on_click=state.reset_config, key="crp.w.config.reset")
    c2.download_button(
        "Download TOML",
        state.get_config().to_toml(),
        file_name="crp-config.toml",
        mime="application/toml",
        key="crp.w.config.download",
    )
    up = capped_uploader(
        "-config", "Load a config (TOML, at most {limit})", MAX_CONFIG_BYTES, type=["toml"], key="crp.w.config.upload"
    )
    if up is None or state.recall(UPLOAD_SEEN) == up.file_id:
        return
    state.remember(UPLOAD_SEEN, up.file_id)
    try:
        text = up.getvalue().decode("utf-8")
    except UnicodeDecodeError:
        state.set_config_error(f"{up.name} is not UTF-8 text")
        st.rerun()
    state.load_config_toml(text)
    st.rerun()


def config_section() -> None:
    """The Configuration expander of the sidebar (its widgets drawn only while it is open)."""
    box = lazy_expander("Configuration", CONFIG_OPEN, "config")
    if not box.open:
        return
    config = state.get_config()
    with box:
        st.caption("`*` = this project's default, not fixed by a CRP spec. Values apply to every page.")
        err = state.get_config_error()
        if err:
            st.error(f"Change refused, configuration kept: {render.md_escape(err)}")
        diff = _DEFAULTS.diff(config)
        if diff:
            st.caption(f"{len(diff)} value(s) differ from the defaults: " + render.md_escape(", ".join(sorted(diff))))
        _groups(config)
        _tables(config)
        _files()
