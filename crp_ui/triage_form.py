"""The Conflicts page's decision form: record an operator decision on one pair (accept the arbitration,
override the winner, mark a fact's status, dismiss), with a note and the operator's name from the
sidebar, in the triage database every session shares (:mod:`crp_ui.decision_store`).

The decision is recorded in a callback, which Streamlit runs before the script, so the very first run
after the click already reads the new decision set; the outcome (the recorded decision, or every field
the store refused) is shown on that run. A recorded decision clears the form (note, status); a submit
that would record again exactly the pair's latest decision (a double click) records nothing. "Record and
next" then selects the pair after this one in the queue as shown. Keyboard: A / O / M / D choose the
kind of decision, N records and moves on (Streamlit's button shortcuts, which ignore keys typed into a
text field).
"""

from __future__ import annotations

import streamlit as st

from crp_core import (
    MARKABLE_STATUSES,
    MAX_NOTE_CHARS,
    ConflictPair,
    CRPConfig,
    CRPError,
    Decision,
    DecisionError,
    KnowledgeBase,
    authority_winner,
)

from . import conflicts_view as cv
from . import decisions, render, state

#: the Conflicts page's widget and session keys start with this
K = "crp.page.conflicts."
K_FLASH = K + "flash"  # the message about the decision recorded by the last click
K_FORM_ERROR = K + "form_error"  # why the last submitted decision was not recorded
K_FORM_INFO = K + "form_info"  # a submit that recorded nothing, and why (not an error)
K_PAIR = K + "pair"  # the queue's pair select box (Record and next moves it)
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


def build_decision(
    kind: str,
    pair: ConflictPair,
    *,
    operator: str,
    fields: dict[str, str | None],
    fingerprint: str,
    config: CRPConfig,
) -> Decision:
    """The decision of ``kind`` on ``pair`` from the form's ``fields`` (winner, target, status, note);
    an accepted arbitration names the winner SPEC-027 §2.3 gives."""
    a, b, note = pair.fact_a, pair.fact_b, str(fields.get("note") or "")
    if kind == "accept":
        return Decision.accept(
            a, b, operator=operator, winner=authority_winner(pair, config), note=note, ckf_fingerprint=fingerprint
        )
    if kind == "override":
        winner = str(fields.get("winner"))
        return Decision.override(a, b, winner=winner, operator=operator, note=note, ckf_fingerprint=fingerprint)
    if kind == "dismiss":
        return Decision.dismiss(a, b, operator=operator, note=note, ckf_fingerprint=fingerprint)
    return Decision.mark_status(
        a,
        b,
        fact=str(fields.get("target")),
        status=str(fields.get("status")),
        operator=operator,
        note=note,
        ckf_fingerprint=fingerprint,
    )


def field_keys(pk: str) -> dict[str, str]:
    """The widget keys of the form's fields for the pair ``pk``."""
    return {name: f"{K}{name}.{pk}" for name in ("winner", "target", "status", "note")}


def _fields(kind: str, keys: dict[str, str]) -> dict[str, str | None]:
    """The values of the fields ``kind`` uses (the others are None)."""
    used = {"override": ("winner",), "mark_status": ("target", "status")}.get(kind, ())
    out: dict[str, str | None] = {name: state.recall(keys[name]) if name in used else None for name in keys}
    out["note"] = state.recall(keys["note"])
    return out


def _record(d: Decision) -> Decision | None:
    """Record ``d``; None, with the refusal kept for the next run, when the store refuses it."""
    try:
        return decisions.record(d)
    except DecisionError as exc:
        state.remember(
            K_FORM_ERROR,
            "Decision refused:\n\n" + "\n".join(f"- field `{f}`: {render.md_escape(m)}" for f, m in exc.problems),
        )
    except CRPError as exc:
        state.remember(K_FORM_ERROR, f"Decision not recorded: {render.md_escape(exc)}")
    return None


def _duplicate_of(d: Decision) -> Decision | None:
    """The pair's latest decision when ``d`` would record it again (a second click), else None."""
    hist = decisions.pair_history(d.fact_a, d.fact_b)
    return hist[-1] if hist and cv.same_decision(hist[-1], d) else None


def _move_on(pk: str, queue_keys: list[str]) -> None:
    """Select the pair after ``pk`` in the queue as shown (a callback: before the select box is drawn)."""
    nxt = cv.next_pair(queue_keys, pk)
    if nxt is None or nxt == pk:
        state.remember(K_FORM_INFO, "That was the last pair of the queue as shown.")
        return
    state.remember(K_PAIR, nxt)
    state.select_pair(nxt)


def _on_record(
    kind: str, pair: ConflictPair, fingerprint: str, config: CRPConfig, queue_keys: list[str] | None = None
) -> None:
    """Record the submitted decision (a callback: it runs before the script); with ``queue_keys``
    ("Record and next"), then select the next pair of the queue."""
    pk = cv.p_key(pair)
    keys = field_keys(pk)
    state.forget(K_FORM_ERROR)
    state.forget(K_FORM_INFO)
    fields = _fields(kind, keys)
    if kind == "mark_status" and not fields["status"]:
        state.remember(K_FORM_ERROR, "Choose the new status: none is preselected.")
        return
    d = build_decision(kind, pair, operator=state.get_operator(), fields=fields, fingerprint=fingerprint, config=config)
    dup = _duplicate_of(d)
    if dup is not None:
        state.remember(K_FORM_INFO, f"Already recorded as decision #{dup.id} ({dup.decided_at}): nothing recorded.")
        rec: Decision | None = dup
    else:
        rec = _record(d)
        if rec is None:
            return
        state.remember(
            K_FLASH,
            f"Recorded decision #{rec.id} on {rec.fact_a} ↔ {rec.fact_b}: "
            f"{cv.decision_summary(rec)} (by {rec.operator}, {rec.decided_at}).",
        )
    for name in ("note", "status"):  # a recorded decision clears the form (the kind stays)
        state.forget(keys[name])
    if queue_keys is not None:
        _move_on(pk, queue_keys)


def _on_kind(pk: str, kind: str) -> None:
    """A kind's shortcut button: choose that kind in the pair's radio (drawn after this callback)."""
    state.remember(K + "kind." + pk, kind)


def flash() -> None:
    """The message about the decision the last click recorded, shown once."""
    message = state.forget(K_FLASH)
    if message:
        st.success(render.md_escape(message))


def _kind_fields(kind: str, pair: ConflictPair, keys: dict[str, str]) -> None:
    """The fields of one kind of decision, inside the form."""
    ids = [pair.fact_a, pair.fact_b]
    side = {pair.fact_a: "A", pair.fact_b: "B"}

    def label(fid: str) -> str:
        return render.plain(f"{side[fid]} · {fid}")

    if kind == "accept":
        st.caption(
            "Accepts the arbitration as shown: " + render.md_escape(cv.outcome_text(pair)) + ". Only a note is needed."
        )
    elif kind == "override":
        current_winner = pair.kept[0] if (pair.suppressed is not None and pair.kept) else pair.fact_a
        other = pair.fact_b if current_winner == pair.fact_a else pair.fact_a
        st.selectbox(
            "Winner",
            ids,
            index=ids.index(other),
            key=keys["winner"],
            format_func=label,
            help="The fact that must win this pair whatever its authority; the other is suppressed.",
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
        )
    else:
        st.caption("Not a conflict: the pair is no longer arbitrated and both facts stay. Only a note is needed.")


def _kind_keys(pk: str, disabled: bool) -> None:
    """One small button per kind, each with its keyboard shortcut, choosing the kind like the radio."""
    with st.container(horizontal=True, gap="small"):
        st.caption("Keyboard:")
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


def decision_form(pair: ConflictPair, kb: KnowledgeBase, config: CRPConfig, queue_keys: list[str]) -> None:
    """Record a decision on ``pair`` (operator from the sidebar). The kind is chosen first; the form
    then holds only that kind's fields. ``queue_keys``: the pairs of the queue as shown, in order
    ("Record and next" moves to the one after ``pair``)."""
    pk = cv.p_key(pair)
    keys = field_keys(pk)
    operator = state.get_operator()
    # one element in this slot either way: the form below keeps its place when the name is entered
    if not operator:
        st.warning("Enter your name under **Operator name** in the sidebar to record decisions.")
    else:
        st.caption(f"Recording as **{render.md_escape(operator)}** (Operator name, in the sidebar).")
    kind = st.radio("Decision", KINDS, format_func=KIND_LABELS.get, horizontal=True, key=K + "kind." + pk)
    _kind_keys(pk, disabled=not operator)
    args = (kind, pair, state.get_ckf_fingerprint(kb), config)
    with st.form(K + "form." + pk, clear_on_submit=False, border=True):
        _kind_fields(kind, pair, keys)
        st.text_area("Note (optional)", key=keys["note"], max_chars=MAX_NOTE_CHARS, height=68)
        with st.container(horizontal=True):
            st.form_submit_button(
                "Record decision",
                type="primary",
                disabled=not operator,
                key=K + "submit." + pk,
                on_click=_on_record,
                args=args,
            )
            st.form_submit_button(
                "Record and next",
                disabled=not operator,
                key=K + "submit_next." + pk,
                shortcut=NEXT_KEY,
                on_click=_on_record,
                args=(*args, list(queue_keys)),
                help="Record this decision, then open the next pair of the queue as shown.",
            )
    err = state.forget(K_FORM_ERROR)
    if err:
        st.error(err)
    info = state.forget(K_FORM_INFO)
    if info:
        st.info(render.md_escape(info))
