"""The suite the Tuning page's Suite and Auto-tune tabs run: the bundled one (``sample_ckf/scenarios/``,
sub-folders included) or uploaded scenario files, the scenarios picked from it, embedded once per
(corpus, suite, decisions) as a ``crp_core.PreparedSuite``.

The choice is the session's, not a widget's: Streamlit drops a widget's value at the end of a run that
does not draw it, and the Tuning page draws only the open tab, so the chosen source, the accepted upload
and the scenarios picked are kept under keys of their own and every tab's picker starts from them. An
uploaded CKF starts on uploaded scenario files (the bundled labels name the bundled sample's facts); the
bundled suite chosen over an uploaded CKF is announced before it runs. Problems are listed per file.

It runs at the **suite config**: the sidebar's base config (defaults or a loaded TOML) with the sidebar
edits; each scenario's own ``config`` table applies on top, as ``crp-inspect check --config`` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from crp_core import (
    SCENARIO_SUFFIXES,
    Corpus,
    CRPConfig,
    CRPError,
    DecisionSet,
    Digest,
    PreparedSuite,
    Problem,
    Suite,
    ValidationError,
    dump_scenario,
    load_suite,
    prepare_suite,
    suite_from_files,
)

from . import cache, render, state
from .suite_common import problems_by_file
from .tuning_widgets import digest

K = "crp.tuning.suite."
K_UPLOADED = K + "uploaded"  # (digest of the uploaded files, Suite) of the last accepted upload
K_REFUSED = K + "upload_refused"  # (digest of the uploaded files, ValidationError) of the last refused upload
K_PREPARED = K + "prepared"  # (key, PreparedSuite)
K_SOURCE = K + "source"  # the chosen source (BUNDLED / UPLOADED), kept apart from the pickers' widgets
K_PICKED = K + "picked"  # {digest of the suite's names: the scenarios picked}
BUNDLED = "bundled suite"
UPLOADED = "uploaded scenario files"
SOURCES = (BUNDLED, UPLOADED)
#: problems listed per scenario file, and files listed, in one error box
PER_FILE, FILES = 10, 20


def source_label(src: str) -> str:
    """How a suite source reads: the server's scenario folder is "bundled" only when it is the repository's
    (a server started on another folder, ``crp-inspect dashboard --ckf``, serves that folder's scenarios)."""
    if src == BUNDLED and not state.scenarios_bundled():
        return "scenarios on the server"
    return src


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
            if p.is_file() and p.suffix.lower() in SCENARIO_SUFFIXES
        )
    )
    return _load_bundled(str(d), stamp)


@st.cache_resource(show_spinner=False, max_entries=4)
def _load_bundled(folder: str, stamp: tuple[tuple[str, int, int], ...]) -> Suite:
    """Keyed by the folder and its files' (path, mtime, size): an edited scenario is read again."""
    del stamp  # cache key only
    return load_suite(folder)


def show_suite_problems(title: str, problems: Sequence[Problem]) -> None:
    """One error box: the title, then the problems grouped per scenario file (capped, with counts)."""
    st.error(f"{render.md_escape(title)}\n\n{problems_by_file(problems, per_file=PER_FILE, files=FILES)}")


def source() -> str:
    """The suite's source: the one chosen on any tab, else the bundled suite for a bundled sample CKF and
    uploaded scenario files for an uploaded CKF (the bundled labels name the sample's facts)."""
    got = state.recall(K_SOURCE)
    if got in SOURCES:
        return str(got)
    return BUNDLED if state.get_ckf_sample() else UPLOADED


def uploaded() -> Suite | None:
    """The suite of the last accepted upload (kept for the session, whichever tab it was made on)."""
    got = state.recall(K_UPLOADED)
    return cast("Suite", got[1]) if got is not None else None


def summary() -> str:
    """One line naming the suite in force (an expander's label): its source and, uploaded, its files."""
    src = source()
    if src == BUNDLED:
        return f"Suite: the {source_label(src)}"
    suite = uploaded()
    return (
        "Suite: no scenario files uploaded yet" if suite is None else f"Suite: {len(suite)} uploaded scenario file(s)"
    )


def _source_suite(src: str) -> Suite | None:
    """The bundled suite or the uploaded one (None, with a message, when there is none)."""
    if src != BUNDLED:
        suite = uploaded()
        if suite is None or not len(suite):
            st.info(
                "No suite yet: upload scenario files (JSON / TOML, each with an `expect` table naming facts "
                "of this CKF; docs/decisions/suites.md gives the format)."
            )
            return None
        return suite
    if not state.get_ckf_sample():
        st.warning(
            f"The bundled suite is labelled for the bundled sample CKF, not for "
            f"{render.md_escape(state.get_ckf_label())}: its labels name the sample's facts. Choose "
            "**uploaded scenario files** to run scenarios labelled for this CKF."
        )
    try:
        suite = _bundled()
    except ValidationError as exc:
        show_suite_problems(f"The bundled suite was refused: {exc.what}", exc.problems)
        return None
    if suite is None or not len(suite):
        st.info("No bundled scenarios found.")
        return None
    return suite


def _take_upload(col: DeltaGenerator, where: str) -> bool:
    """The uploader of tab ``where``: files it holds replace the kept suite once accepted. False when
    the files it holds were refused (the problems are shown)."""
    ups = col.file_uploader(
        "Scenario files", type=["json", "toml"], accept_multiple_files=True, key=f"{K}upload.{where}"
    )
    if not ups:
        return True
    items = [(u.name, u.getvalue()) for u in ups]
    key = _files_key(items)
    got = state.recall(K_UPLOADED)
    if got is not None and got[0] == key:
        return True
    refused = state.recall(K_REFUSED)
    if refused is None or refused[0] != key:
        try:
            state.remember(K_UPLOADED, (key, suite_from_files(items)))
            state.forget(K_REFUSED)
            return True
        except ValidationError as exc:
            refused = (key, exc)
            state.remember(K_REFUSED, refused)
    err = cast(ValidationError, refused[1])
    show_suite_problems(f"The uploaded suite was refused: {err.what}", err.problems)
    return False


def _files_key(items: Sequence[tuple[str, bytes]]) -> str:
    """A digest of the uploaded files (names and bytes, in order): a file is parsed once per content."""
    d = Digest()
    for name, data in items:
        d.update(name.encode("utf-8", "surrogatepass")).update(b"\x00").update(data).update(b"\x00")
    return d.hex(24)


def _kept_upload_caption(col: DeltaGenerator) -> None:
    suite = uploaded()
    if suite is not None:
        files = [s.path or s.name for s in suite]
        col.caption(
            f"Kept for this session: {len(files)} file(s): "
            + render.md_escape(", ".join(files[:12]) + (" …" if len(files) > 12 else ""))
            + ". Upload files here to replace them."
        )


def _pick(suite: Suite, where: str) -> Suite | None:
    """The scenarios to run (all at first; a choice is kept per suite, whichever tab made it)."""
    names = list(suite.names)
    nkey = digest(*names)
    picked = state.kept_dict(K_PICKED)
    default = [n for n in picked.get(nkey, names) if n in names]
    chosen = st.multiselect(
        "Scenarios",
        names,
        default=default,
        key=f"{K}pick.{where}.{nkey}",
        format_func=render.plain,
        help="Run all of the suite or a selection.",
    )
    picked[nkey] = list(chosen)
    state.declare_settings("the suite's scenarios", {"picked": list(chosen)}, {"picked": names})
    if not chosen:
        st.info("Pick at least one scenario.")
        return None
    return suite.select(chosen) if len(chosen) != len(names) else suite


def choose_suite(where: str) -> Suite | None:
    """The suite picker of tab ``where``: bundled or uploaded, then the scenarios to run. The choice,
    the uploaded files and the pick are the session's, shared by every tab (Streamlit drops a widget's
    value on a run that does not draw it: the tabs draw only the open one). None when there is none."""
    c1, c2 = st.columns([1, 2])
    wkey = f"{K}source.{where}"
    current = source()
    if state.recall(wkey) != current:  # the choice made on another tab, or the default of a new CKF
        state.remember(wkey, current)

    def chosen() -> None:  # the user's choice: kept until changed, on every tab
        state.remember(K_SOURCE, state.recall(wkey))

    src = str(
        c1.radio(
            "Suite",
            SOURCES,
            key=wkey,
            on_change=chosen,
            format_func=source_label,
            help=f"The {source_label(BUNDLED)}: every scenario of the server's scenario folder (sub-folders "
            "included; the repository's sample_ckf/scenarios/, labelled for the bundled sample CKF, unless the "
            "server was started on another folder). Upload your own labelled scenarios (JSON / TOML with an "
            "`expect` table) for another CKF.",
        )
    )
    if src == UPLOADED:
        state.declare_unlinked("the uploaded suite")
        if not _take_upload(c2, where):
            return None
        _kept_upload_caption(c2)
    suite = _source_suite(src)
    if suite is None:
        return None
    suite = _pick(suite, where)
    if suite is not None:
        st.caption(
            f"Suite: {len(suite)} scenario(s) from the {render.md_escape(source_label(src))} · "
            + render.md_escape(", ".join(suite.names))
        )
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
        show_suite_problems(f"This suite does not fit the loaded CKF: {exc.what}", exc.problems)
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
