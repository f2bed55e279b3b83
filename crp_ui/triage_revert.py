"""A revert of a decision on the Conflicts page: a new log entry naming the decision it takes back, with the
reason (``crp_core.Decision.revert``); the log itself is never edited. An admin reverts any decision; in single
mode (no team file) an operator reverts their own (docs/decisions/triage-log.md "Roles and names"). Other roles
see the section with its controls disabled and why."""

from __future__ import annotations

import os

import streamlit as st

from crp_core import ConflictPair, CRPError, Decision, KnowledgeBase, Role, StaleDecisionError

from . import conflicts_view as cv
from . import decisions, render, state, team
from .triage_record import K, acknowledge

K_REVERT = K + "revert."  # + "target." / "reason." / "go." + pair key
K_REVERT_MSG = K + "revert_msg"  # (ok, message) of the last revert


def revertible(hist: list[Decision]) -> list[Decision]:
    """The pair's entries an admin may take back: decisions, not revert entries, not reverted already."""
    gone = {d.reverts for d in hist if d.kind == "revert"}
    return [d for d in hist if d.kind != "revert" and d.id not in gone]


def option_label(d: Decision) -> str:
    """One revertible entry as the selectbox shows it: id, operator, kind, what it decided, when."""
    return render.plain(f"#{d.id} · {d.operator} · {d.kind} · {cv.decision_summary(d)} · {d.decided_at}")


def _on_revert(pair: ConflictPair, fingerprint: str, kb_name: str | None, based_on: int) -> None:
    pk = cv.p_key(pair)
    target = state.recall(K_REVERT + "target." + pk)
    reason = str(state.recall(K_REVERT + "reason." + pk, "") or "").strip()
    # the selectbox offers only what this session may revert; the store checks the decision taken back again
    refusal = None if team.identity().can_revert else "only an admin reverts a decision"
    if refusal is None and not reason:
        refusal = "give the reason: it is what the log keeps of this revert"
    if refusal is not None or target is None:
        state.remember(K_REVERT_MSG, (False, f"Not reverted: {refusal or 'choose the decision'}."))
        return
    d = Decision.revert(
        pair.fact_a,
        pair.fact_b,
        reverts=int(target),
        operator=state.get_operator(),
        reason=reason,
        ckf_fingerprint=fingerprint,
        kb_name=kb_name,
        based_on=based_on,
        **team.decision_fields(),
    )
    try:
        rec = decisions.record(d)
    except StaleDecisionError as exc:
        new = exc.latest
        msg = f"Not reverted: {new.operator} recorded #{new.id} on this pair meanwhile; review it and try again."
        state.remember(K_REVERT_MSG, (False, msg))
        return
    except CRPError as exc:
        state.remember(K_REVERT_MSG, (False, f"Not reverted: {exc}"))
        return
    state.forget(K_REVERT + "reason." + pk)
    state.remember(K_REVERT + "target." + pk, None)  # the next revert starts from no choice again
    state.remember(K_REVERT_MSG, (True, f"Decision #{target} reverted by entry #{rec.id} ({rec.operator})."))
    acknowledge(pk, int(rec.id or 0))  # one's own revert is no change since the form opened


def revert_section(pair: ConflictPair, hist: list[Decision], kb: KnowledgeBase) -> None:
    """Take back one of the pair's decisions (admin only), with a reason."""
    msg = state.forget(K_REVERT_MSG)
    if msg:
        (st.success if msg[0] else st.error)(render.md_escape(msg[1]))
    pk = cv.p_key(pair)
    who = team.identity()
    entries = revertible(hist)
    if not entries:
        return
    # an admin takes back any decision, an operator of single mode (no team file) their own; a session that may
    # revert none sees every entry, disabled
    targets = [d for d in entries if who.revert_refusal(d) is None] if who.can_revert else entries
    by_id = {d.id: d for d in targets}
    title = "Revert a decision" if who.role is Role.ADMIN else "Revert a decision of yours"
    with st.expander(title if who.can_revert else "Revert a decision (admin)", expanded=False):
        if not who.can_revert:
            st.caption(
                render.md_escape(
                    f"Only an admin reverts a decision; {who.operator or 'this session'} is {who.role.value}."
                )
            )
        elif not targets:
            st.caption(
                render.md_escape(
                    f"None of this pair's decisions is {who.operator}'s: only an admin reverts another operator's."
                )
            )
            return
        target = st.selectbox(
            "Decision to take back",
            list(by_id),
            index=None,
            key=K_REVERT + "target." + pk,
            placeholder="choose the decision to revert",
            format_func=lambda i: option_label(by_id[i]),
            disabled=not who.can_revert,
            help="Nothing is preselected: each option names the entry's id, operator, kind and time.",
        )
        st.text_input("Reason (required, kept in the log)", key=K_REVERT + "reason." + pk, disabled=not who.can_revert)
        st.button(
            "Revert",
            key=K_REVERT + "go." + pk,
            disabled=not who.can_revert or target is None,
            on_click=_on_revert,
            args=(
                pair,
                state.get_ckf_fingerprint(kb),
                os.path.basename(state.session_kb(kb).source) or None,
                int(hist[-1].id or 0) if hist else 0,
            ),
            help="Records a revert entry naming the decision and your reason; the decision stops being in force.",
        )
