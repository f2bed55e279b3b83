"""The suite the Tuning page's Suite and Auto-tune tabs run: the bundled one (``sample_ckf/scenarios/``,
sub-folders included) or uploaded scenario files, the scenarios picked from it, embedded once per
(corpus, suite, decisions) as a ``crp_core.PreparedSuite``.

It runs at the **suite config**: the sidebar's base config (defaults or a loaded TOML) with the sidebar
edits; each scenario's own ``config`` table applies on top, as ``crp-inspect check --config`` does.
"""

from __future__ import annotations

from typing import cast

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from crp_core import (
    Corpus,
    CRPConfig,
    CRPError,
    DecisionSet,
    PreparedSuite,
    Suite,
    ValidationError,
    dump_scenario,
    load_suite,
    prepare_suite,
    suite_from_files,
)

from . import cache, render, state
from .tuning_widgets import digest

K = "crp.tuning.suite."
K_UPLOADED = K + "uploaded"  # Suite from uploaded files (or None)
K_PREPARED = K + "prepared"  # (key, PreparedSuite)
K_SOURCE = K + "source"  # the suite picker's choice
BUNDLED = "bundled suite"
UPLOADED = "uploaded scenario files"


def suite_config() -> CRPConfig:
    """The config a suite runs at: the sidebar base with the sidebar edits (no scenario's table)."""
    return state.base_with_edits()


def _bundled() -> Suite | None:
    """The bundled suite, loaded again only when one of its files changed (a refusal is not kept)."""
    d = state.scenarios_dir()
    if not d.is_dir():
        return None
    stamp = tuple(
        sorted(
            (str(p.relative_to(d)), p.stat().st_mtime_ns, p.stat().st_size)
            for p in d.rglob("*")
            if p.is_file() and p.suffix.lower() in (".json", ".toml")
        )
    )
    return _load_bundled(str(d), stamp)


@st.cache_resource(show_spinner=False, max_entries=4)
def _load_bundled(folder: str, stamp: tuple[tuple[str, int, int], ...]) -> Suite:
    """Keyed by the folder and its files' (path, mtime, size): an edited scenario is read again."""
    del stamp  # cache key only
    return load_suite(folder)


def _uploaded() -> Suite | None:
    return cast("Suite | None", state.recall(K_UPLOADED))


def _source_suite(source: str) -> Suite | None:
    """The bundled suite or the uploaded one (None, with a message, when there is none)."""
    if source != BUNDLED:
        suite = _uploaded()
        if suite is None or not len(suite):
            st.info("No uploaded suite: upload scenario files in the Suite tab.")
            return None
        return suite
    try:
        suite = _bundled()
    except ValidationError as exc:
        render.show_problems(f"The bundled suite was refused: {exc.what}", exc.problems)
        return None
    if suite is None or not len(suite):
        st.info("No bundled scenarios found.")
        return None
    return suite


def _upload_suite(col: DeltaGenerator) -> Suite | None:
    """The suite of the uploaded scenario files (kept for the session), None with a message."""
    ups = col.file_uploader("Scenario files", type=["json", "toml"], accept_multiple_files=True, key=K + "upload")
    if ups:
        items = [(u.name, u.getvalue()) for u in ups]
        try:
            state.remember(K_UPLOADED, suite_from_files(items))
        except ValidationError as exc:
            render.show_problems(f"The uploaded suite was refused: {exc.what}", exc.problems)
            return None
    suite = _uploaded()
    if suite is None:
        st.info("Upload one or more labelled scenario files (docs/decisions/suites.md gives the format).")
    return suite


def _pick_key(names: list[str]) -> str:
    return f"{K}pick.{digest(*names)}"


def choose_suite() -> Suite | None:
    """The suite picker: bundled or uploaded, then the scenarios to run. None when there is none."""
    c1, c2 = st.columns([1, 2])
    source = c1.radio(
        "Suite",
        [BUNDLED, UPLOADED],
        key=K_SOURCE,
        help="The bundled suite is every scenario under sample_ckf/scenarios/ (sub-folders "
        "included), labelled for the bundled sample CKF. Upload your own labelled "
        "scenarios (JSON / TOML with an `expect` table) for another CKF.",
    )
    suite = _source_suite(source) if source == BUNDLED else _upload_suite(c2)
    if suite is None:
        return None
    names = list(suite.names)
    chosen = st.multiselect(
        "Scenarios",
        names,
        default=names,
        key=_pick_key(names),
        format_func=render.plain,
        help="Run all of the suite or a selection.",
    )
    if not chosen:
        st.info("Pick at least one scenario.")
        return None
    return suite.select(chosen) if len(chosen) != len(names) else suite


def chosen_suite() -> Suite | None:
    """The suite of the Suite tab (its widgets' state), without drawing the picker twice."""
    suite = _source_suite(str(state.recall(K_SOURCE, BUNDLED)))
    if suite is None:
        return None
    chosen = state.recall(_pick_key(list(suite.names)))
    if chosen is not None:
        chosen = [n for n in chosen if n in suite.names]
        if not chosen:
            st.info("No scenario picked: choose at least one in the Suite tab.")
            return None
        suite = suite.select(chosen) if len(chosen) != len(suite) else suite
    st.caption(f"Suite: {len(suite)} scenario(s) · " + render.md_escape(", ".join(suite.names)))
    return suite


def prepared(
    corpus: Corpus, suite: Suite, decisions: DecisionSet | None, dkey: str
) -> tuple[str, PreparedSuite] | None:
    """(its key, the suite embedded once per (corpus, suite, decisions) in this session); problems shown."""
    key = digest(
        cache.corpus_digest(corpus), dkey, *(f"{s.name}\x01{dump_scenario(s.scenario, 'json')}" for s in suite)
    )
    got = state.recall(K_PREPARED)
    if got is not None and got[0] == key:
        return key, cast(PreparedSuite, got[1])
    try:
        with st.spinner(f"Embedding {len(suite)} scenario(s)…"):
            p = prepare_suite(corpus, suite, embedder=cache.embedder_for(corpus), decisions=decisions)
    except ValidationError as exc:
        render.show_problems(f"This suite does not fit the loaded CKF: {exc.what}", exc.problems)
        return None
    except CRPError as exc:
        st.error(f"The suite was refused: {render.md_escape(exc)}")
        return None
    state.remember(K_PREPARED, (key, p))
    return key, p


def ready(
    corpus: Corpus, suite: Suite | None, decisions: DecisionSet | None, dkey: str
) -> tuple[PreparedSuite, CRPConfig, str] | None:
    """The prepared suite, the suite config and the key of those inputs (None: nothing to run)."""
    if suite is None:
        return None
    got = prepared(corpus, suite, decisions, dkey)
    if got is None:
        return None
    key, p = got
    config = suite_config()
    return p, config, digest(key, config.to_toml())
