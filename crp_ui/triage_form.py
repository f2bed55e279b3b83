"""The Conflicts page's decision form: record an operator decision on one pair (accept the arbitration,
override the winner, mark a fact's status, dismiss), with a note, as this session's operator
(:mod:`crp_ui.team`), in the triage database every session shares (:mod:`crp_ui.decision_store`).

The decision is recorded in a callback (:mod:`crp_ui.triage_record`), which Streamlit runs before the
script, so the very first run after the click already reads the new decision set; the outcome (the
recorded decision, every field the store refused, the decision recorded meanwhile by someone else with
its "review and confirm") is shown on that run. Keyboard: A / O / M / D choose the kind of decision, N
records and moves to the next pair (Streamlit's button shortcuts, which ignore keys typed into a text
field). A session that may not record (a viewer, no operator) sees every control disabled, and why.
"""

from __future__ import annotations

import os

import streamlit as st

from crp_core import (
    MARKABLE_STATUSES,
    MAX_NOTE_CHARS,
    ConflictPair,
    CRPConfig,
    Decision,
    KnowledgeBase,
    authority_winner,
)

from . import conflicts_view as cv
from . import decisions, render, state, team
from .triage_record import (
    K_FLASH,
    K_FORM_ERROR,
    K_FORM_INFO,
    K_PAIR,
    K,
    acknowledge,
    field_keys,
    on_confirm,
    on_record,
    open_pair,
    seen,
    stale_refusal,
    unavailable,
)

KIND_LABELS = {
    "accept": "Accept the arbitration",
    "override": "Override the winner",
    "mark_status": "Mark a fact's status",
    "dismiss": "Dismiss: not a conflict",
}
KINDS = tuple(KIND_LABELS)
#: the keyboard shortcut of each kind (Streamlit reserves C and R) and of "Record and next"
KIND_KEYS = {"accept": "A", "override": "O", "mark_status": "M", "dismiss": "D"}
KIND_SHORT = {"accept": "Accept", "override": "Override", "mark_status": "Mark status", "dismiss": "Dismiss"}
NEXT_KEY = "N"
#: what each markable status does, shown beside the choice (no status is preselected)
STATUS_EFFECTS = {
    "ACTIVE": "retrievable again (undoes an earlier mark)",
    "STALE": "kept, retrievable, recency factor = stale_floor (least destructive)",
    "QUARANTINED": "never retrieved, kept in the CKF",
    "DELETED": "never retrieved",
}


def _on_kind(pk: str, kind: str) -> None:
    """A kind's shortcut button: choose that kind in the pair's radio (drawn after this callback)."""
    state.remember(K + "kind." + pk, kind)


def flash() -> None:
    """The message about the decision the last click recorded, shown once."""
    message = state.forget(K_FLASH)
    if message:
        st.success(render.md_escape(message))


def accept_text(pair: ConflictPair, config: CRPConfig) -> str:
    """What an accept records, in words: arbitration by authority (SPEC-027 §2.3; triage.md, "In force").
    Under an operator's override or dismissal that is not the outcome shown, and the text says so (a reviewer
    who meant to agree with a colleague's override recorded the authority's winner against it)."""
    winner = authority_winner(pair, config)
    by_authority = "a tie by authority: both kept with a NOTE" if winner is None else f"{winner} wins by authority"
    if pair.decision in ("override", "dismiss"):
        return (
            f"Returns the pair to arbitration by authority: {by_authority}. This replaces the {pair.decision} in "
            f"force ({cv.outcome_text(pair)}): to agree with it, record {KIND_SHORT[pair.decision]} again"
            + (", its winner preselected." if pair.decision == "override" else ".")
        )
    return f"Accepts the arbitration as shown: {by_authority}. Only a note is needed."


def _kind_fields(kind: str, pair: ConflictPair, keys: dict[str, str], disabled: bool, config: CRPConfig) -> None:
    """The fields of one kind of decision, inside the form (``disabled`` for a session that may not record)."""
    ids = [pair.fact_a, pair.fact_b]
    side = {pair.fact_a: "A", pair.fact_b: "B"}

    def label(fid: str) -> str:
        return render.plain(f"{side[fid]} · {fid}")

    if kind == "accept":
        st.caption(render.md_escape(accept_text(pair, config)))
    elif kind == "override":
        current_winner = pair.kept[0] if (pair.suppressed is not None and pair.kept) else pair.fact_a
        other = pair.fact_b if current_winner == pair.fact_a else pair.fact_a
        # an override in force is preselected (recording it again confirms it); else the fact that loses now; on
        # a tie neither: the operator chooses (a default winner was recorded when a click meant to choose missed)
        chosen = current_winner if pair.decision == "override" else None if pair.tied else other
        st.selectbox(
            "Winner",
            ids,
            index=None if chosen is None else ids.index(chosen),
            placeholder="choose the winner",
            key=keys["winner"],
            format_func=label,
            help="The fact that must win this pair whatever its authority; the other is suppressed.",
            disabled=disabled,
        )
    elif kind == "mark_status":
        loser = pair.suppressed if pair.suppressed in ids else pair.fact_b
        c = st.columns(2)
        c[0].selectbox(
            "Fact",
            ids,
            index=ids.index(loser),
            key=keys["target"],
            format_func=label,
            help="Preselected: the fact the arbitration suppressed (B for a tie).",
            disabled=disabled,
        )
        c[1].selectbox(
            "New status",
            MARKABLE_STATUSES,
            index=None,
            key=keys["status"],
            placeholder="choose a status",
            format_func=lambda s: f"{s}: {STATUS_EFFECTS.get(s, '')}",
            help="No status is preselected. STALE is the least destructive (the fact stays "
            "retrievable with recency factor = stale_floor); QUARANTINED / DELETED take it "
            "out of retrieval.",
            disabled=disabled,
        )
    else:
        st.caption("Not a conflict: the pair is no longer arbitrated and both facts stay. Only a note is needed.")


def _kind_keys(pk: str, disabled: bool) -> None:
    """One small button per kind, each with its keyboard shortcut, choosing the kind like the radio."""
    with st.container(horizontal=True, gap="small"):
        st.caption("Keyboard:", width="content")
        for kind, key in KIND_KEYS.items():
            st.button(
                KIND_SHORT[kind],
                key=f"{K}key.{kind}.{pk}",
                shortcut=key,
                type="tertiary",
                on_click=_on_kind,
                args=(pk, kind),
                disabled=disabled,
                help=f"{KIND_LABELS[kind]} (key {key}; {NEXT_KEY} records and moves to the next pair)",
            )


def _who(refusal: str | None) -> None:
    """Who records here (one element either way: the form below keeps its place)."""
    if refusal is not None:
        st.warning(refusal)
        return
    st.caption(team.recording_as())


def _stale_block(pk: str) -> None:
    """The decision the store refused because someone decided this pair meanwhile: who, what, when, and
    the one click that records it anyway, based on what is now the latest."""
    kept = stale_refusal()
    if kept is None or kept.decision.pair_key != pk:
        return
    new = kept.latest
    with st.container(border=True):
        st.error(
            render.md_escape(
                f"Not recorded: this pair changed after the form was drawn. {new.operator} ({new.role}, "
                f"{new.origin}) recorded decision #{new.id} at {new.decided_at}: {cv.decision_summary(new)}"
                + (f' (note: "{new.note}")' if new.note else "")
                + "."
            )
        )
        st.caption(
            render.md_escape(
                f"Yours was: {cv.decision_summary(kept.decision)}"
                + (f' (note: "{kept.decision.note}")' if kept.decision.note else "")
                + f". The history below shows #{new.id} and the pair as it is now: review it, then confirm yours to "
                "record it over that entry, or leave it."
            )
        )
        st.button(
            f"Review and confirm: record mine over #{new.id}",
            key=f"{K}confirm.{pk}",
            type="primary",
            on_click=on_confirm,
            disabled=team.record_refusal() is not None,
        )


def outcome(pk: str) -> None:
    """What the last click on the form of the pair ``pk`` did not record, and why."""
    _stale_block(pk)
    gone = unavailable()
    if gone is not None:
        st.error(
            "The decision database cannot be reached: nothing was recorded and the form keeps what you "
            f"entered; record again once it is back. ({render.md_escape(gone)})"
        )
    err = state.forget(K_FORM_ERROR)
    if err:
        st.error(err)
    info = state.forget(K_FORM_INFO)
    if info:
        st.info(render.md_escape(info))


def _changed_since_opened(pk: str, based_on: int, hist: list[Decision]) -> None:
    """The entries recorded on this pair since this operator opened it (another session's, seen by the
    page's polling): who decided what and when, and the click that bases the form on them."""
    new = [d for d in hist if (d.id or 0) > based_on]
    if not new:
        return
    last = new[-1]
    st.warning(
        render.md_escape(
            f"This pair changed since you opened it: {len(new)} new entr{'y' if len(new) == 1 else 'ies'}, the "
            f"latest #{last.id} by {last.operator} at {last.decided_at}: {cv.decision_summary(last)}. A decision "
            "recorded from this form now is refused until you take it into account."
        )
    )
    st.button(
        f"Take #{last.id} into account",
        key=f"{K}ack.{pk}",
        on_click=acknowledge,
        args=(pk, int(last.id or 0)),
        help="Base your decision on the pair as it is now (the history below shows every entry).",
    )


def shown_fields(pair: ConflictPair, kb: KnowledgeBase, hist: list[Decision]) -> dict[str, object]:
    """What the form is drawn on: the pair's latest log entry when this operator opened it (``based_on``;
    0 for none) and the knowledge base's name."""
    pk = cv.p_key(pair)
    return {
        "based_on": seen(pk, int(hist[-1].id or 0) if hist else 0),
        "kb_name": os.path.basename(state.session_kb(kb).source) or state.get_ckf_label() or None,
    }


def decision_form(pair: ConflictPair, kb: KnowledgeBase, config: CRPConfig, queue_keys: list[str]) -> None:
    """Record a decision on ``pair`` as this session's operator. The kind is chosen first; the form then
    holds only that kind's fields. ``queue_keys``: the pairs of the queue as filtered and sorted, every
    page of it, in order ("Record and next" moves to the one after ``pair``, on the next page too)."""
    pk = cv.p_key(pair)
    keys = field_keys(pk)
    open_pair(pk)
    hist = decisions.pair_history(pair.fact_a, pair.fact_b)
    shown = shown_fields(pair, kb, hist)
    refusal = team.record_refusal()
    _who(refusal)
    _changed_since_opened(pk, int(str(shown["based_on"])), hist)
    locked = refusal is not None
    kind = st.radio(
        "Decision", KINDS, format_func=KIND_LABELS.get, horizontal=True, key=K + "kind." + pk, disabled=locked
    )
    _kind_keys(pk, disabled=locked)
    args = (kind, pair, state.get_ckf_fingerprint(kb), config, shown)
    with st.form(K + "form." + pk, clear_on_submit=False, border=True):
        _kind_fields(kind, pair, keys, locked, config)
        st.text_area("Note (optional)", key=keys["note"], max_chars=MAX_NOTE_CHARS, height=68, disabled=locked)
        with st.container(horizontal=True):
            st.form_submit_button(
                "Record decision",
                type="primary",
                disabled=locked,
                key=K + "submit." + pk,
                on_click=on_record,
                args=args,
            )
            st.form_submit_button(
                "Record and next",
                disabled=locked,
                key=K + "submit_next." + pk,
                shortcut=NEXT_KEY,
                on_click=on_record,
                args=(*args, tuple(queue_keys)),
                help="Record this decision, then open the next pair of the queue as shown.",
            )
    outcome(pk)


__all__ = [
    "K",
    "K_FLASH",
    "K_PAIR",
    "KINDS",
    "KIND_KEYS",
    "KIND_LABELS",
    "NEXT_KEY",
    "STATUS_EFFECTS",
    "decision_form",
    "flash",
    "outcome",
    "shown_fields",
]
