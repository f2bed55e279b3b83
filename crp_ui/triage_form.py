"""The Conflicts page's decision form: record an operator decision on one pair (accept the arbitration,
override the winner, mark a fact's status, dismiss), with a note and the operator's name from the
sidebar, in the triage database every session shares (:mod:`crp_ui.decision_store`).

The decision is recorded in a callback, which Streamlit runs before the script, so the very first run
after the click already reads the new decision set; the outcome (the recorded decision, or every field
the store refused) is shown on that run.
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
KIND_LABELS = {
    "accept": "Accept the arbitration",
    "override": "Override the winner",
    "mark_status": "Mark a fact's status",
    "dismiss": "Dismiss: not a conflict",
}
KINDS = tuple(KIND_LABELS)
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


def _on_record(kind: str, pair: ConflictPair, fingerprint: str, config: CRPConfig) -> None:
    """Record the submitted decision (a callback: it runs before the script)."""
    keys = field_keys(cv.p_key(pair))
    state.forget(K_FORM_ERROR)
    fields = _fields(kind, keys)
    if kind == "mark_status" and not fields["status"]:
        state.remember(K_FORM_ERROR, "Choose the new status: none is preselected.")
        return
    d = build_decision(kind, pair, operator=state.get_operator(), fields=fields, fingerprint=fingerprint, config=config)
    rec = _record(d)
    if rec is None:
        return
    for name in ("note", "status"):  # a recorded decision clears the form (the kind stays)
        state.forget(keys[name])
    state.remember(
        K_FLASH,
        f"Recorded decision #{rec.id} on {rec.fact_a} ↔ {rec.fact_b}: "
        f"{cv.decision_summary(rec)} (by {rec.operator}, {rec.decided_at}).",
    )


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


def decision_form(pair: ConflictPair, kb: KnowledgeBase, config: CRPConfig) -> None:
    """Record a decision on ``pair`` (operator from the sidebar). The kind is chosen first; the form
    then holds only that kind's fields."""
    pk = cv.p_key(pair)
    keys = field_keys(pk)
    operator = state.get_operator()
    # one element in this slot either way: the form below keeps its place when the name is entered
    if not operator:
        st.warning("Enter your name under **Operator name** in the sidebar to record decisions.")
    else:
        st.caption(f"Recording as **{render.md_escape(operator)}** (Operator name, in the sidebar).")
    kind = st.radio("Decision", KINDS, format_func=KIND_LABELS.get, horizontal=True, key=K + "kind." + pk)
    with st.form(K + "form." + pk, clear_on_submit=False, border=True):
        _kind_fields(kind, pair, keys)
        st.text_area("Note (optional)", key=keys["note"], max_chars=MAX_NOTE_CHARS, height=68)
        st.form_submit_button(
            "Record decision",
            type="primary",
            disabled=not operator,
            key=K + "submit." + pk,
            on_click=_on_record,
            args=(kind, pair, state.get_ckf_fingerprint(kb), config),
        )
    err = state.forget(K_FORM_ERROR)
    if err:
        st.error(err)
