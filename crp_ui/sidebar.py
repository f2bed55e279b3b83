"""The shared sidebar: CKF picker, scenario editor, config editor, operator name.

Rendered once per run by ``app.py`` for every page. Widgets only read input and call
:mod:`crp_ui.state`; nothing here computes a score. Widget keys carry a *generation*
(``state.gen(area)``): when the state changes outside a widget (a scenario or TOML is loaded, the
config is reset, a URL is applied) the generation is bumped and the widgets are rebuilt from the
new state, so a widget never shows a stale value.

The Scenario and Configuration editors sit in expanders whose contents are drawn only while they
are open (``st.expander(on_change=...)``, ``.open``): closed, they cost nothing on a rerun or a page
switch (about 30 number inputs and three data editors otherwise, each rerun). Opening one rebuilds
its widgets from the state in force (a new generation), since Streamlit drops the state of widgets
that were not drawn. Inside the Configuration editor each stage's group of inputs is such an expander
as well (the first, stage 1 with the relevance gate, open by default; what the user opens or closes is
remembered for the session).
"""

from __future__ import annotations

import math
from datetime import date, datetime
from typing import Any

import pandas as pd
import streamlit as st

from crp_core.config import SCALAR_KEYS, SOURCE_TYPES, TABLE_KEYS, CRPConfig, choices, describe, origin, valid_range

from . import cache, render, state

UPLOAD_TYPES = ["jsonl", "ndjson", "json", "csv", "parquet"]
#: key of the container around the CKF uploader (Streamlit gives it the CSS class ``st-key-<key>``)
UPLOAD_BOX = "crp-ckf-upload"
#: the CKF uploader's own instruction line says "<n>MB per file" in the browser's unit (10**6 bytes, or
#: 2**20 on Windows) with the rounded-up cap; the label states the limit in MiB and bytes instead, so
#: that line is hidden (static CSS, no user content)
UPLOAD_CSS = f'<style>.st-key-{UPLOAD_BOX} [data-testid="stFileUploaderDropzoneInstructions"]{{display:none}}</style>'
PROJECT_MARK = " *"
#: keys of the sidebar's lazy expanders (their open state; tests open them through these)
SCENARIO_OPEN = "crp.w.sidebar.scenario_open"
CONFIG_OPEN = "crp.w.sidebar.config_open"
#: the Configuration editor's stage groups are lazy expanders too (each number input costs a scan of the
#: session state on every rerun): their widget keys (+ group number) and which ones are open, kept in the
#: session because Streamlit drops an expander's state while the Configuration expander is closed; the
#: first group (stage 1, the relevance gate) is open until the user closes it
CONFIG_GROUP_OPEN = "crp.w.sidebar.config_group."
CONFIG_GROUPS_KEEP = "crp.sidebar.config_groups_open"
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


def widget_key(area: str, name: str) -> str:
    """Key of a sidebar widget in the current generation of ``area`` (tests use this)."""
    return f"crp.w.{area}.{name}.{state.gen(area)}"


# ---- entry point --------------------------------------------------------------------------------
def render_sidebar() -> None:
    """Draw the sidebar (once per run, before the page) and mirror the state in the URL."""
    state.init_state()
    with st.sidebar:
        for w in state.url_warnings():
            st.warning(f"Link parameter ignored: {render.md_escape(w)}")
        _ckf_section()
        _scenario_section()
        _config_section()
        _operator_section()
    state.sync_query_params()


# ---- CKF -------------------------------------------------------------------------------------------
limit_text = render.limit_text  # the upload limit in the dashboard's one unit


def browser_upload_cap(limit: int) -> int:
    """``max_upload_size`` for ``st.file_uploader`` (whole "MB"): large enough that the browser never
    refuses a file within ``limit``. Streamlit's frontend counts that MB as 10**6 bytes (2**20 on
    Windows), so the smallest whole number of 10**6 bytes at or above the limit; a file between the
    limit and this cap reaches the app and is refused with a clear message."""
    return max(1, math.ceil(limit / 10**6))


def _lazy_expander(label: str, key: str, area: str) -> Any:
    """An expander whose contents the caller draws only when ``.open``; opening it rebuilds the
    widgets of ``area`` from the current state."""
    return st.expander(label, key=key, on_change=state.bump, args=(area,))


def _on_sample_change(key: str) -> None:
    name = st.session_state.get(key)
    if name:
        state.load_sample(name)


def _on_upload(key: str) -> None:
    """A file was dropped: load it, then give the uploader a new key, so no chip (refused or loaded)
    piles up in it; the caption below says which CKF is active."""
    up = st.session_state.get(key)
    if up is None:
        return
    state.load_upload(up.getvalue(), up.name)
    state.bump("upload")


def _on_lenient_change(key: str) -> None:
    """Re-read what the user last tried to load (the active sample, or the upload) in the new mode."""
    state.set_lenient(bool(st.session_state.get(key)))
    last = state.last_upload()
    if state.last_load_attempt() == "upload" and last is not None:
        state.load_upload(last[1], last[0])
    elif state.get_ckf_sample():
        state.load_sample(state.get_ckf_sample())


@st.fragment(run_every=1.0)
def _pending_progress() -> None:
    """The background preparation's progress (polled every second) and its Cancel button; when the
    job has ended the whole app reruns with the new CKF active (or the refusal shown)."""
    if state.poll_pending() != "running":
        st.rerun()
    got = state.pending_progress()
    if got is None:
        st.rerun()
        return
    p, snap = got
    text = cache.progress_text(snap, p.label, own_embeddings=p.kb.embeddings is not None)
    st.progress(snap.fraction, text=render.md_escape(text))
    st.caption(f"{render.md_escape(state.get_ckf_label())} stays active until {render.md_escape(p.label)} is ready.")
    st.button(
        "Cancel loading",
        key="crp.w.ckf.cancel",
        on_click=state.cancel_pending,
        help="Stops the embedding; the chunks already embedded stay in the cache, so loading the same "
        "file again continues from there.",
    )


def _pending_section() -> None:
    got = state.pending_progress()
    if got is None:
        return
    p, _snap = got
    if state.active_ckf() is None:  # the session's first CKF: the page waits for it with a progress bar
        st.info(f"Preparing {render.md_escape(p.label)}: its progress is shown on the page.")
        st.button("Cancel loading", key="crp.w.ckf.cancel", on_click=state.cancel_pending)
        return
    _pending_progress()


def _ckf_section() -> None:
    st.subheader("Knowledge base (CKF)")
    state.poll_pending()
    samples = state.list_samples()
    current = state.get_ckf_sample() if state.active_ckf() is not None else None
    key = widget_key("ckf", "sample")
    if samples:
        st.selectbox(
            "Bundled sample",
            samples,
            index=samples.index(current) if current in samples else None,
            placeholder="(an uploaded CKF is active)" if state.active_ckf() is not None else "(none)",
            key=key,
            on_change=_on_sample_change,
            args=(key,),
        )
    else:
        st.caption(f"No bundled sample in {render.md_escape(state.samples_dir())}.")
    limit = state.upload_limit()
    ukey = widget_key("upload", "ckf")
    with st.container(key=UPLOAD_BOX):  # its CSS class hides the uploader's own "<n>MB per file" line
        st.file_uploader(
            f"…or upload a CKF (JSONL / JSON / CSV / Parquet, at most {limit_text(limit)})",
            type=UPLOAD_TYPES,
            key=ukey,
            max_upload_size=browser_upload_cap(limit),
            on_change=_on_upload,
            args=(ukey,),
        )
    if limit < state.get_config().ckf_max_bytes:
        st.caption(
            f"ckf_max_bytes is {state.get_config().ckf_max_bytes:,} bytes, but this server accepts "
            f"uploads up to {limit_text(limit)} (server.maxUploadSize)."
        )
    lkey = widget_key("ckf", "lenient")
    st.toggle(
        "Lenient loading (skip bad facts, list them)",
        value=state.get_lenient(),
        key=lkey,
        on_change=_on_lenient_change,
        args=(lkey,),
        help="Strict (off): a file with any bad fact is refused. Lenient: exactly the bad facts are skipped.",
    )
    _sdk_map_section()
    _pending_section()
    kb = state.active_ckf()
    refusal = state.get_ckf_refusal()
    if refusal is not None:
        keep = " The previously loaded CKF stays active." if kb is not None else ""
        render.show_problems(f"{refusal.message}.{keep}", refusal.problems)
    notice = state.get_ckf_notice()
    if notice:
        st.info(render.md_escape(notice))
    if kb is None:
        if state.pending_load() is None:
            st.info("No CKF loaded.")
        return
    st.caption(
        f"Active: **{render.md_escape(state.get_ckf_label())}** · {len(kb)} facts"
        + (f" · {len(kb.skipped)} skipped" if kb.skipped else "")
        + (f" · {len(kb.warnings)} data-quality warnings" if kb.warnings else "")
    )
    if kb.skipped:
        with st.expander(f"{len(kb.skipped)} facts skipped (lenient)"):
            st.markdown(render.problems_list(kb.skipped))


def _on_sdk_map(key: str) -> None:
    """A mapping TOML was dropped: read it and re-read the active SDK snapshot with it."""
    up = st.session_state.get(key)
    if up is not None:
        state.set_sdk_map(up.name, up.getvalue())
        state.bump("sdk_map")


def _sdk_map_section() -> None:
    """An optional source-type mapping for crprotocol SDK snapshots (docs/decisions/sdk-snapshots.md):
    the same TOML as ``--sdk-map``; without one every snapshot fact is ``unverified``. Shown beside a
    snapshot (active or being prepared) or while a mapping is in force."""
    current = state.get_sdk_map()
    refusal = state.get_sdk_map_refusal()
    pending = state.pending_load()
    loaded = (state.active_ckf(), pending.kb if pending is not None else None)
    if current is None and refusal is None and not any(kb is not None and kb.fmt == "sdk" for kb in loaded):
        return
    with st.expander("SDK snapshot: source-type mapping", expanded=current is not None or refusal is not None):
        key = widget_key("sdk_map", "upload")
        st.file_uploader(
            "Mapping (TOML, as crp-inspect --sdk-map)",
            type=["toml"],
            key=key,
            on_change=_on_sdk_map,
            args=(key,),
            help="[[rule]] tables by category / source_window_id glob / extraction_stage give a "
            "crprotocol SDK snapshot's facts their source types; first match wins, else default.",
        )
        if refusal is not None:
            render.show_problems(f"{refusal.message}; the previous mapping stays in force", refusal.problems)
        if current is None:
            st.caption("Default mapping: every SDK fact is unverified.")
            return
        st.caption(
            f"In force: {render.md_code(current[0])} · {len(current[1].rules)} rule(s), default "
            f"{render.md_code(current[1].default)}"
        )
        st.button(
            "Use the default mapping", key=widget_key("sdk_map", "clear"), on_click=state.set_sdk_map, args=(None, None)
        )


# ---- scenario ----------------------------------------------------------------------------------------
def _on_scenario_change(key: str) -> None:
    name = st.session_state.get(key)
    if name:
        state.load_scenario_file(name)


def _subquery_frame(s: Any) -> pd.DataFrame:
    addressed = {a.id: a for a in s.addressed}
    rows = []
    for sq in s.sub_queries:
        a = addressed.get(sq.id)
        rows.append(
            {
                "id": sq.id,
                "text": sq.text,
                "label": sq.label or "",
                "addressed": a is not None,
                "depth_weight": a.depth_weight if a else None,
                "window": a.window if a else None,
            }
        )
    return pd.DataFrame(rows, columns=["id", "text", "label", "addressed", "depth_weight", "window"]).astype(
        {
            "id": "object",
            "text": "object",
            "label": "object",
            "addressed": "bool",
            "depth_weight": "float64",
            "window": "Int64",
        }
    )


def _blank(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA or (isinstance(v, str) and not v.strip())


def scenario_dict_from_editors(
    base: dict[str, Any],
    s: Any,
    *,
    query: str,
    rows: pd.DataFrame,
    prior: pd.DataFrame,
    fanout_width: int,
    now_date: date | None,
) -> dict[str, Any]:
    """The scenario dict the editors describe (embeddings kept only for unchanged texts)."""
    d = dict(base)
    d["query"] = (
        {"text": query, "embedding": list(s.query_embedding)}
        if s.query_embedding is not None and query == s.query
        else query
    )
    old = {sq.id: sq for sq in s.sub_queries}
    sqs, addressed = [], []
    for r in rows.to_dict("records"):
        if all(_blank(r.get(c)) for c in ("id", "text", "label")):
            continue  # a freshly added, still empty row
        sid = "" if _blank(r.get("id")) else str(r["id"]).strip()
        text = "" if _blank(r.get("text")) else str(r["text"])
        item: dict[str, Any] = {"id": sid, "text": text}
        if not _blank(r.get("label")):
            item["label"] = str(r["label"])
        prev = old.get(sid)
        if prev is not None and prev.embedding is not None and prev.text == text:
            item["embedding"] = list(prev.embedding)
        sqs.append(item)
        if bool(r.get("addressed")) and not _blank(r.get("addressed")):
            dw = r.get("depth_weight")
            win = r.get("window")
            addressed.append(
                {"id": sid, "depth_weight": 1.0 if _blank(dw) else float(dw), "window": 1 if _blank(win) else int(win)}
            )
    d["sub_queries"] = sqs
    d["addressed"] = addressed
    d["prior_outputs"] = [str(t) for t in prior["text"].tolist() if not _blank(t)]
    d["fanout_width"] = int(fanout_width)
    if now_date is not None:
        ref = state.get_now()  # the scenario's now, else today 00:00 UTC
        if ref.date() != now_date:
            d["now"] = datetime.combine(now_date, ref.timetz()).isoformat()
    return d


def _scenario_section() -> None:
    from crp_core.io.scenario import dump_scenario, scenario_to_dict

    box = _lazy_expander("Scenario", SCENARIO_OPEN, "scenario")
    if not box.open:
        return
    with box:
        names = state.list_scenarios()
        current = state.get_scenario_name()
        key = widget_key("scenario", "pick")
        if names:
            st.selectbox(
                "Bundled scenario",
                names,
                index=names.index(current) if current in names else None,
                placeholder="(uploaded / edited scenario)",
                key=key,
                on_change=_on_scenario_change,
                args=(key,),
            )
        up = st.file_uploader("Load a scenario (JSON / TOML)", type=["json", "toml"], key="crp.w.scenario.upload")
        if up is not None and st.session_state.get("crp.scenario_upload_seen") != up.file_id:
            st.session_state["crp.scenario_upload_seen"] = up.file_id
            state.load_scenario_upload(up.getvalue(), up.name)
        refusal = state.get_scenario_refusal()
        if refusal is not None and refusal.source != state.EDITED_SCENARIO:
            render.show_problems(f"{refusal.message}. The previous scenario stays active.", refusal.problems)
        s = state.get_scenario()
        raw = st.session_state.get(state.K_SCENARIO)
        if s is None or raw is None:
            st.info("No scenario loaded: pick or upload one.")
            return
        if raw.description:
            st.caption(render.md_escape(raw.description))
        g = state.gen("scenario")
        base_key = f"crp.scenario_editor_base.{g}"
        if base_key not in st.session_state:  # the editors' input frames are fixed per generation
            for k in [k for k in st.session_state.keys() if str(k).startswith("crp.scenario_editor_base.")]:
                del st.session_state[k]
            st.session_state[base_key] = (
                _subquery_frame(raw),
                pd.DataFrame({"text": list(raw.prior_outputs)}, columns=["text"]).astype({"text": "object"}),
            )
        sq_frame, prior_frame = st.session_state[base_key]
        query = st.text_area("Query", value=raw.query, key=widget_key("scenario", "query"), height=80)
        hidden = render.controls_in(query)
        if hidden:  # the box keeps the raw text (so an edit round-trips); say what it holds
            st.caption(f"The query holds {', '.join(hidden)} (bidi or invisible characters): {render.md_escape(query)}")
        st.caption(
            "Sub-queries (the task decomposition). Tick **addressed** for those an earlier window "
            "covered, with their depth weight and window."
        )
        rows = st.data_editor(
            sq_frame,
            key=widget_key("scenario", "subqueries"),
            num_rows="dynamic",
            hide_index=True,
            width="stretch",
            column_config={
                "id": st.column_config.TextColumn("id", required=True, width="small"),
                "text": st.column_config.TextColumn("text", width="medium"),
                "label": st.column_config.TextColumn("label", width="small"),
                "addressed": st.column_config.CheckboxColumn("addressed", default=False, width="small"),
                "depth_weight": st.column_config.NumberColumn(
                    "depth", min_value=0.0, max_value=1.0, step=0.05, help="depth_weight (1.0 when left empty)"
                ),
                "window": st.column_config.NumberColumn("window", min_value=1, step=1, width="small"),
            },
        )
        prior = st.data_editor(
            prior_frame,
            key=widget_key("scenario", "prior"),
            num_rows="dynamic",
            hide_index=True,
            width="stretch",
            column_config={"text": st.column_config.TextColumn("prior outputs (n-gram blacklist)", width="large")},
        )
        c1, c2 = st.columns(2)
        now_date = c1.date_input(
            "now (time travel)",
            value=state.get_now().date(),
            key=widget_key("scenario", "now"),
            format="YYYY-MM-DD",
            help="The time the pipeline treats as now (time of day kept, UTC).",
        )
        width = c2.number_input(
            "fan-out width",
            min_value=0,
            step=1,
            value=int(raw.fanout_width),
            key=widget_key("scenario", "fanout"),
            help="0 or 1 = no fan-out",
        )
        base = scenario_to_dict(raw)
        d = scenario_dict_from_editors(
            base, raw, query=query, rows=rows, prior=prior, fanout_width=int(width), now_date=now_date
        )
        if d != base:
            state.update_scenario(d)
            refusal = state.get_scenario_refusal()
            if refusal is not None:
                render.show_problems(f"{refusal.message}. The last valid scenario stays active.", refusal.problems)
        if raw.config:
            st.caption(
                "This scenario's config table: "
                + render.md_escape(", ".join(f"{k}={v}" for k, v in raw.config.items()))
            )
        cur = state.get_scenario()
        stem = (state.get_scenario_name().rsplit(".", 1)[0] or "scenario") + (
            "-edited" if state.scenario_edited() else ""
        )
        c1, c2 = st.columns(2)
        c1.download_button(
            "Save JSON",
            dump_scenario(cur, "json"),
            file_name=f"{stem}.json",
            mime="application/json",
            key="crp.w.scenario.save_json",
        )
        c2.download_button(
            "Save TOML",
            dump_scenario(cur, "toml"),
            file_name=f"{stem}.toml",
            mime="application/toml",
            key="crp.w.scenario.save_toml",
        )


# ---- config --------------------------------------------------------------------------------------------
def _on_config_change(key: str, wkey: str) -> None:
    state.set_config_value(key, st.session_state.get(wkey))


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
    elif isinstance(value, int):
        lo, hi = valid_range(key) or (None, None)
        st.number_input(
            label,
            value=value,
            step=_STEPS.get(key, 1),
            key=wkey,
            help=help_text,
            min_value=None if lo is None else int(lo),
            max_value=None if hi is None else int(hi),
            on_change=_on_config_change,
            args=(key, wkey),
        )
    else:
        lo, hi = valid_range(key) or (None, None)
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


def tables_frame(config: CRPConfig) -> pd.DataFrame:
    """The three per-source-type tables as one frame (TTL empty = no expiry)."""
    rows = []
    for stype in SOURCE_TYPES:
        marks = [_TABLE_COLUMNS[t] for t in TABLE_KEYS if origin(f"{t}.{stype}") == "project"]
        row: dict[str, Any] = {"source_type": stype}
        for t in TABLE_KEYS:
            row[_TABLE_COLUMNS[t]] = getattr(config, t)[stype]
        row["project defaults *"] = ", ".join(marks)
        rows.append(row)
    return pd.DataFrame(rows).astype({c: "float64" for c in _TABLE_COLUMNS.values()})


def table_edits(config: CRPConfig, edited: pd.DataFrame) -> dict[str, Any]:
    """Dotted-key changes between ``config``'s tables and an edited :func:`tables_frame`."""
    out: dict[str, Any] = {}
    for r in edited.to_dict("records"):
        stype = r["source_type"]
        for t in TABLE_KEYS:
            v = r[_TABLE_COLUMNS[t]]
            new = None if _blank(v) else float(v)
            if new is None and t != "ttl_days":
                continue  # an emptied authority / importance cell is ignored (they have no "none")
            if new != getattr(config, t)[stype]:
                out[f"{t}.{stype}"] = "none" if new is None else new
    return out


def group_open(i: int) -> bool:
    """Whether config group ``i`` (of :func:`config_groups`) is open: as the user left it, else only the first."""
    return bool(st.session_state.get(CONFIG_GROUPS_KEEP, {}).get(i, i == 0))


def _on_group(i: int) -> None:
    st.session_state[CONFIG_GROUPS_KEEP] = {
        **st.session_state.get(CONFIG_GROUPS_KEEP, {}),
        i: bool(st.session_state.get(CONFIG_GROUP_OPEN + str(i))),
    }
    state.bump("config")  # its widgets are rebuilt from the configuration in force


def _group_expander(i: int, group: str) -> Any:
    """A stage group of the config editor: an expander whose number inputs are drawn only while open."""
    return st.expander(group, expanded=group_open(i), key=CONFIG_GROUP_OPEN + str(i), on_change=_on_group, args=(i,))


def _on_reset() -> None:
    state.reset_config()


def _config_section() -> None:
    box = _lazy_expander("Configuration", CONFIG_OPEN, "config")
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
        for i, (group, keys) in enumerate(config_groups()):
            sub = _group_expander(i, group)
            if sub.open:
                with sub:
                    for key in keys:
                        _config_widget(key, config)
        st.markdown("**Tables by source type** (TTL empty = no expiry)")
        g = state.gen("config")
        base_key = f"crp.config_tables_base.{g}"
        if base_key not in st.session_state:
            for k in [k for k in st.session_state.keys() if str(k).startswith("crp.config_tables_base.")]:
                del st.session_state[k]
            st.session_state[base_key] = tables_frame(config)
        edited = st.data_editor(
            st.session_state[base_key],
            key=widget_key("config", "tables"),
            hide_index=True,
            width="stretch",
            disabled=["source_type", "project defaults *"],
            column_config={
                "TTL (days)": st.column_config.NumberColumn("TTL (days)", min_value=0.0, format="%.1f"),
                "authority": st.column_config.NumberColumn("authority", min_value=0.0, max_value=1.0, format="%.2f"),
                "importance": st.column_config.NumberColumn("importance", min_value=0.0, max_value=1.0, format="%.2f"),
            },
        )
        changes = table_edits(config, edited)
        if changes:
            if state.set_config_values(changes) is not None:
                st.rerun()  # refused: redraw the table from the kept configuration
        c1, c2 = st.columns(2)
        c1.button("Reset to defaults", on_click=_on_reset, key="crp.w.config.reset")
        c2.download_button(
            "Download TOML",
            state.get_config().to_toml(),
            file_name="crp-config.toml",
            mime="application/toml",
            key="crp.w.config.download",
        )
        up = st.file_uploader("Load a config (TOML)", type=["toml"], key="crp.w.config.upload")
        if up is not None and st.session_state.get("crp.config_upload_seen") != up.file_id:
            st.session_state["crp.config_upload_seen"] = up.file_id
            try:
                text = up.getvalue().decode("utf-8")
            except UnicodeDecodeError:
                st.session_state[state.K_CONFIG_ERROR] = f"{up.name} is not UTF-8 text"
                st.rerun()
            state.load_config_toml(text)
            st.rerun()


# ---- operator --------------------------------------------------------------------------------------------
def _on_operator(wkey: str) -> None:
    state.set_operator(str(st.session_state.get(wkey, "")))


def _operator_section() -> None:
    wkey = "crp.w.operator"
    st.text_input(
        "Operator name",
        value=state.get_operator(),
        key=wkey,
        on_change=_on_operator,
        args=(wkey,),
        help="Recorded with every triage decision.",
        placeholder="your name",
    )
