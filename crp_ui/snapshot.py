"""Links and snapshots that reproduce a view: what the link does not carry, "Share snapshot" and
"Open snapshot".

* **The notice**: after the page ran, the sidebar says plainly what of this view the page's link does
  not carry (:func:`not_carried`): an uploaded CKF or scenario, sidebar edits of the scenario, the
  triage decisions in force, and what the page declared (``state.declare_unlinked``).
* **Share snapshot** downloads one JSON file (``crp_core.view_snapshot_bytes``, format in
  docs/reference/snapshot.md): the KB fingerprint and where it came from, the scenario with its edits,
  the configuration that differs from the defaults, the decisions in force and the page with its URL.
* **Open snapshot** restores that view on this server: refused, with the reason, when the file is too
  large or malformed (line and field), when its KB is not the loaded one (a bundled sample it names is
  loaded first). The snapshot's decisions are applied to this session's view only, through the
  decisions plumbing (``crp_ui.decision_store.K_OVERLAY``), never written to this server's triage log
  (docs/decisions/ui.md, "Snapshots").
"""

from __future__ import annotations

import contextvars
from datetime import UTC, datetime
from typing import Any

import streamlit as st

from crp_core import (
    CRPConfig,
    CRPError,
    DecisionSet,
    KnowledgeBase,
    Scenario,
    ValidationError,
    ViewSnapshot,
    layered_config,
    load_scenario,
    read_view_snapshot,
    scenario_from_dict,
    scenario_to_dict,
    view_snapshot_bytes,
)

from . import render, state
from .decision_store import K_OVERLAY, decision_set
from .decisions import parse_pair_param
from .memo import by_identity

#: session keys: the file id of the snapshot last opened, what it was (shown), why the last one was refused
K_OPENED_ID = "crp.snapshot.opened_id"
K_OPENED = "crp.snapshot.opened"
K_REFUSED = "crp.snapshot.refused"
#: the snapshot the "Share snapshot" button of the last run offered (the same bytes; tests read it)
K_LAST = "crp.snapshot.last"
UPLOAD_KEY = "crp.w.snapshot.upload"
DOWNLOAD_KEY = "crp.w.snapshot.download"
CLOSE_KEY = "crp.w.snapshot.close"
#: the page served at the root URL (URL path "")
FIRST_PAGE = "story"
#: the sidebar container of this run that the notice is drawn into after the page (per script thread)
_SLOT: contextvars.ContextVar[Any] = contextvars.ContextVar("crp_snapshot_slot", default=None)


# ---- what the link does not carry -----------------------------------------------------------------
def _plain_scenario(s: Scenario) -> dict[str, Any]:
    d = scenario_to_dict(s)
    d.pop("now", None)  # the URL carries now
    return d


def _bundled_plain(name: str) -> dict[str, Any] | None:
    try:
        return _plain_scenario(load_scenario(str(state.scenarios_dir() / name)))
    except (ValidationError, OSError):
        return None


def scenario_beyond_url(s: Scenario | None) -> str | None:
    """What of the scenario the URL does not carry: "the uploaded scenario", "the edited scenario
    (query, sub-queries)" or None (a bundled scenario, at most its ``now`` changed)."""
    if s is None:
        return None
    name = state.get_scenario_name()
    if not name:
        return "the uploaded scenario"
    if not state.scenario_edited():
        return None
    bundled = by_identity("snapshot_bundled", s, lambda _s: _bundled_plain(name), extra=name)
    mine = by_identity("snapshot_plain", s, _plain_scenario)
    if bundled is None or mine == bundled:
        return None
    changed = sorted(k for k in set(mine) | set(bundled) if mine.get(k) != bundled.get(k))
    return f"the edited scenario ({', '.join(changed)})"


def not_carried() -> list[str]:
    """Each part of this view the page's link does not carry, in words (empty: the link is complete)."""
    out: list[str] = []
    kb = state.active_ckf()
    if kb is not None and state.get_ckf_sample() is None:
        out.append(uploaded_item(state.get_ckf_label()))
    scen = scenario_beyond_url(state.stored_scenario())
    if scen:
        out.append(scen)
    ds = decision_set()
    n = len(ds.pair_decisions) + len(ds.statuses)
    if n:
        whose = "of the opened snapshot" if opened() is not None else SERVER_LOG
        out.append(f"{n} triage decision{'' if n == 1 else 's'} {whose}")
    out.extend(state.unlinked())
    return out


def uploaded_item(label: str) -> str:
    """The notice's item for an uploaded CKF (a snapshot names it by fingerprint; it does not hold it)."""
    return f"your uploaded CKF ({label})"


#: the words naming the decisions of this server's triage log in the notice
SERVER_LOG = "of this server's triage log"


def notice_text(items: list[str], page_own: list[str]) -> str:
    """The notice: what the link does not carry (``items``), and what a snapshot does: the scenario and
    decisions, not an uploaded CKF (it names it: the receiver loads the same file first) nor what the page
    declared (``page_own``: its own view state, set again by hand)."""
    text = "This link does not carry: " + ", ".join(items) + "."
    upload = [i for i in items if i.startswith(uploaded_item("")[:-3])]
    carried = [i for i in items if i not in page_own and i not in upload]
    rest = [i for i in items if i in page_own]
    if carried and rest:
        text += f" A snapshot carries {', '.join(carried)}; set the rest again after opening it."
    elif carried:
        text += f" A snapshot carries {', '.join(carried)}: share one instead of the link."
    elif rest:
        them = "it" if len(rest) == 1 else "them"
        text += f" A snapshot does not carry {them} either: set {them} again after opening the link."
    if upload:
        text += " A snapshot names the uploaded CKF without holding it: whoever opens it loads the same file first."
    if any(i.endswith(SERVER_LOG) for i in items):
        # the log is shared: a colleague opening the link on this server has its decisions; another server not
        text += " Whoever opens the link on this server has those decisions anyway; elsewhere only a snapshot does."
    return text


# ---- taking a snapshot ----------------------------------------------------------------------------
def snapshot_bytes() -> bytes | None:
    """The snapshot of this view (None without a CKF and a scenario)."""
    kb = state.active_ckf()
    s = state.stored_scenario()
    if kb is None or s is None:
        return None
    sample = state.get_ckf_sample()
    params = state.current_params()
    params.update(state.query_params_for_state())
    return view_snapshot_bytes(
        kb_fingerprint=state.get_ckf_fingerprint(kb),
        kb_origin="sample" if sample else "upload",
        kb_name=sample or _upload_name(kb),
        scenario_name=state.get_scenario_name(),
        scenario_edited=state.scenario_edited(),
        scenario=scenario_to_dict(s),
        config=state.get_config(),
        decisions=decision_set(),
        page=state.current_page(),
        params=params,
    )


def _upload_name(kb: KnowledgeBase) -> str:
    got = state.last_upload()
    return got[0] if got is not None else str(getattr(kb, "source", "") or state.get_ckf_label())


def snapshot_file_name() -> str:
    """``crp-snapshot-<scenario>-<page>.json``."""
    scen = (state.get_scenario_name() or "scenario").rsplit(".", 1)[0]
    return f"crp-snapshot-{scen}-{state.current_page() or 'story'}.json"


# ---- opening one ----------------------------------------------------------------------------------
def opened() -> dict[str, str] | None:
    """What the open snapshot is (file name, KB, taken on page), None when none is open."""
    got = st.session_state.get(K_OPENED)
    return dict(got) if isinstance(got, dict) else None


def close_snapshot() -> None:
    """Back to this server's decisions (the view keeps the snapshot's scenario and configuration)."""
    st.session_state.pop(K_OVERLAY, None)
    st.session_state.pop(K_OPENED, None)


def _ensure_kb(snap: ViewSnapshot) -> str | None:
    """Load the bundled sample the snapshot names when another KB is active and that sample is the snapshot's
    KB (same fingerprint); why it does not fit, or None. A refusal leaves the active KB as it was."""
    kb = state.active_ckf()
    if snap.kb_origin == "sample" and snap.kb_name in state.list_samples() and state.get_ckf_sample() != snap.kb_name:
        theirs = state.sample_fingerprint(snap.kb_name)
        if theirs is not None and snap.kb_mismatch(theirs, snap.kb_name):
            return snap.kb_mismatch(theirs, f"this server's bundled sample {snap.kb_name}")
        state.load_sample(snap.kb_name)
        kb = state.get_ckf()
    if kb is None:
        return "no knowledge base is loaded: load the snapshot's KB first"
    return snap.kb_mismatch(state.get_ckf_fingerprint(kb), state.get_ckf_label())


def open_snapshot(data: bytes, name: str) -> ViewSnapshot | str:
    """Restore the view of a snapshot file: the snapshot, or the reason it was refused (nothing changed)."""
    try:
        snap = read_view_snapshot(data, name)
        scenario = scenario_from_dict(snap.scenario, source=f"{name}: scenario.document")
        ds = snap.decision_set()
        config = CRPConfig().with_overrides({k: tuple(v) if isinstance(v, list) else v for k, v in snap.config.items()})
        # the sidebar edits that make the effective configuration the snapshot's, the scenario's table included
        edits = {k: theirs for k, (_mine, theirs) in layered_config(CRPConfig(), scenario.config).diff(config).items()}
    except ValidationError as exc:
        return str(exc)
    except (CRPError, ValueError, TypeError) as exc:  # a configuration value the config object refuses
        return f"{name}: {exc}"
    why = _ensure_kb(snap)
    if why:
        return f"{name}: {why}"
    state.set_scenario(scenario, name=snap.scenario_name, edited=snap.scenario_edited)
    state.bump("scenario")
    state.reset_config()
    err = state.set_config_values(edits) if edits else None
    if err:
        return f"{name}: configuration refused: {err}"
    st.session_state[K_OVERLAY] = ds
    st.session_state[K_OPENED] = {
        "file": name,
        "kb": snap.kb_name,
        "page": snap.page,
        "decisions": str(len(snap.decisions)),
        "opened_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }
    state.select_pair(parse_pair_param(snap.params.get("pair"))[0])
    if snap.params.get("fact"):
        state.select_fact(snap.params["fact"])
    return snap


def page_target(page: str) -> str:
    """The page file ``st.switch_page`` opens for a snapshot's page (its URL path is the file's stem; the
    first page for "" or a page this dashboard does not have)."""
    if (
        page
        and page.replace("_", "").isalnum()
        and page.isascii()
        and (state.REPO_ROOT / "pages" / f"{page}.py").is_file()
    ):
        return f"pages/{page}.py"
    return f"pages/{FIRST_PAGE}.py"


def snapshot_decisions() -> DecisionSet | None:
    """The decisions of the open snapshot (None when none is open)."""
    got = st.session_state.get(K_OVERLAY)
    return got if isinstance(got, DecisionSet) else None


# ---- the sidebar ----------------------------------------------------------------------------------
def notice_slot() -> None:
    """The sidebar slot for the notice and "Share snapshot", filled once the page ran (:func:`draw_notice`)."""
    _SLOT.set(st.container())


def open_section() -> None:
    """The sidebar's "Open a snapshot" uploader (below the other inputs)."""
    with st.expander("Open a snapshot", expanded=st.session_state.get(K_REFUSED) is not None):
        up = st.file_uploader(
            "Snapshot file (JSON)",
            type=["json"],
            key=UPLOAD_KEY,
            help='A file from "Share snapshot": opens the same view here (the same KB must be loadable).',
        )
        refused = st.session_state.get(K_REFUSED)
        if up is not None and up.file_id != st.session_state.get(K_OPENED_ID):
            st.session_state[K_OPENED_ID] = up.file_id
            got = open_snapshot(up.getvalue(), up.name)
            refused = got if isinstance(got, str) else None
            st.session_state[K_REFUSED] = refused
            if not isinstance(got, str):
                st.switch_page(page_target(got.page), query_params=dict(got.params))
        if refused:
            st.error(f"Snapshot refused: {render.md_escape(refused)}")


def draw_notice() -> None:
    """After the page: what this view's link does not carry, the open snapshot, "Share snapshot"."""
    slot = _SLOT.get()
    if slot is None:
        return
    _SLOT.set(None)
    with slot:
        got = opened()
        if got is not None:
            st.info(
                render.md_escape(
                    f"Snapshot {got['file']} open (taken on {got['kb']}): {got['decisions']} decisions of the "
                    "snapshot in force in this view, not written to this server's triage log."
                )
            )
            st.button("Back to this server's decisions", key=CLOSE_KEY, on_click=close_snapshot)
        items = not_carried()
        if items:
            st.warning(render.md_escape(notice_text(items, state.unlinked())))
        else:
            st.caption("This page's link carries everything it shows.")
        data = snapshot_bytes()
        st.session_state[K_LAST] = data
        if data is not None:
            st.download_button(
                "Share snapshot",
                data,
                file_name=snapshot_file_name(),
                mime="application/json",
                key=DOWNLOAD_KEY,
                on_click="ignore",
                help="One file with the KB fingerprint, the scenario with its edits, the configuration, the "
                'decisions in force and this page\'s view; "Open a snapshot" restores it on another server.',
            )


state.after_sync(draw_notice)
