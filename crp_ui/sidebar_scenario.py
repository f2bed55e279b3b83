"""The sidebar's scenario editor: pick or upload a scenario, edit its query, sub-queries (with what an
earlier window addressed), prior outputs, ``now`` and fan-out width, save it as JSON or TOML.

The editor sits in an expander whose contents are drawn only while it is open (closed, it costs
nothing on a rerun). Every edit is validated by ``crp_core.scenario_from_dict``; a refused edit keeps
the last valid scenario and shows why.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

import pandas as pd
import streamlit as st

from crp_core import MAX_SCENARIO_BYTES, Scenario, dump_scenario, scenario_to_dict

from . import render, state
from .sidebar_ckf import capped_uploader
from .widgets import fixed_frame, is_blank, lazy_expander, widget_key

#: key of the Scenario expander's open state (tests open it through this)
SCENARIO_OPEN = "crp.w.sidebar.scenario_open"
#: the editors' input frames, kept per generation of the "scenario" widgets
EDITOR_BASE = "crp.scenario_editor_base."
#: the file id of the last scenario upload read (an upload is read once)
UPLOAD_SEEN = "crp.scenario_upload_seen"
SUBQUERY_COLUMNS = ["id", "text", "label", "addressed", "depth_weight", "window"]


def _on_scenario_change(key: str) -> None:
    name = state.recall(key)
    if name:
        state.load_scenario_file(str(name))


def subquery_frame(s: Scenario) -> pd.DataFrame:
    """The sub-query editor's rows: each sub-query with whether (and how) an earlier window addressed it."""
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
    return pd.DataFrame(rows, columns=SUBQUERY_COLUMNS).astype(
        {
            "id": "object",
            "text": "object",
            "label": "object",
            "addressed": "bool",
            "depth_weight": "float64",
            "window": "Int64",
        }
    )


def _sub_queries(s: Scenario, rows: pd.DataFrame) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(sub_queries, addressed) of the edited rows; an embedding is kept only for an unchanged text."""
    old = {sq.id: sq for sq in s.sub_queries}
    sqs, addressed = [], []
    for r in rows.to_dict("records"):
        if all(is_blank(r.get(c)) for c in ("id", "text", "label")):
            continue  # a freshly added, still empty row
        sid = "" if is_blank(r.get("id")) else str(r["id"]).strip()
        text = "" if is_blank(r.get("text")) else str(r["text"])
        item: dict[str, Any] = {"id": sid, "text": text}
        if not is_blank(r.get("label")):
            item["label"] = str(r["label"])
        prev = old.get(sid)
        if prev is not None and prev.embedding is not None and prev.text == text:
            item["embedding"] = list(prev.embedding)
        sqs.append(item)
        if bool(r.get("addressed")) and not is_blank(r.get("addressed")):
            dw = r.get("depth_weight")
            win = r.get("window")
            addressed.append(
                {
                    "id": sid,
                    "depth_weight": 1.0 if is_blank(dw) else float(dw),
                    "window": 1 if is_blank(win) else int(win),
                }
            )
    return sqs, addressed


def scenario_dict_from_editors(
    base: dict[str, Any],
    s: Scenario,
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
    d["sub_queries"], d["addressed"] = _sub_queries(s, rows)
    d["prior_outputs"] = [str(t) for t in prior["text"].tolist() if not is_blank(t)]
    d["fanout_width"] = int(fanout_width)
    if now_date is not None:
        ref = state.get_now()  # the scenario's now, else today 00:00 UTC
        if ref.date() != now_date:
            d["now"] = datetime.combine(now_date, ref.timetz()).isoformat()
    return d


def _pick_or_upload() -> None:
    names = state.list_scenarios()
    current = state.get_scenario_name()
    key = widget_key("scenario", "pick")
    if names:
        st.selectbox(
            state.scenarios_label(),
            names,
            index=names.index(current) if current in names else None,
            placeholder="(uploaded / edited scenario)",
            key=key,
            on_change=_on_scenario_change,
            args=(key,),
        )
    why = None if names else state.scenarios_problem()  # a folder that lists no scenario: is it unreadable?
    if why is not None:
        where = render.md_escape(state.scenarios_dir())
        st.warning(f"The scenarios in {where} cannot be offered: {render.md_escape(why)}.")
    up = capped_uploader(
        "-scenario",
        "Load a scenario (JSON / TOML, at most {limit})",
        MAX_SCENARIO_BYTES,
        type=["json", "toml"],
        key="crp.w.scenario.upload",
    )
    if up is not None and state.recall(UPLOAD_SEEN) != up.file_id:
        state.remember(UPLOAD_SEEN, up.file_id)
        if state.load_scenario_upload(up.getvalue(), up.name):
            st.rerun()  # the box above was drawn naming the scenario this upload replaced
    refusal = state.get_scenario_refusal()
    if refusal is not None and refusal.source != state.EDITED_SCENARIO:
        render.show_problems(f"{refusal.message}. The previous scenario stays active.", refusal.problems)


def _editors(raw: Scenario) -> dict[str, Any]:
    """The editing widgets over ``raw`` (the scenario as stored); returns the dict they describe."""
    sq_frame, prior_frame = fixed_frame(
        EDITOR_BASE,
        "scenario",
        lambda: (
            subquery_frame(raw),
            pd.DataFrame({"text": list(raw.prior_outputs)}, columns=["text"]).astype({"text": "object"}),
        ),
    )
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
    return scenario_dict_from_editors(
        scenario_to_dict(raw), raw, query=query, rows=rows, prior=prior, fanout_width=int(width), now_date=now_date
    )


def _save_buttons() -> None:
    cur = state.get_scenario()
    if cur is None:
        return
    stem = (state.get_scenario_name().rsplit(".", 1)[0] or "scenario") + ("-edited" if state.scenario_edited() else "")
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


def scenario_section() -> None:
    """The Scenario expander of the sidebar (its widgets drawn only while it is open)."""
    box = lazy_expander("Scenario", SCENARIO_OPEN, "scenario")
    if not box.open:
        return
    with box:
        _pick_or_upload()
        raw = state.stored_scenario()
        if state.get_scenario() is None or raw is None:
            st.info("No scenario loaded: pick or upload one.")
            return
        if raw.description:
            st.caption(render.md_escape(raw.description))
        d = _editors(raw)
        if d != scenario_to_dict(raw):
            state.update_scenario(d)
            refusal = state.get_scenario_refusal()
            if refusal is not None:
                render.show_problems(f"{refusal.message}. The last valid scenario stays active.", refusal.problems)
        if raw.config:
            st.caption(
                "This scenario's config table: "
                + render.md_escape(", ".join(f"{k}={v}" for k, v in raw.config.items()))
            )
        _save_buttons()
