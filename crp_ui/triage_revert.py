"""A revert of a decision on the Conflicts page: a new log entry naming the decision it takes back, with the
reason (``crp_core.Decision.revert``); the log itself is never edited. An admin reverts any decision; in single
mode (no team file) an operator reverts their own (docs/decisions/triage-log.md "Roles and names"). Other roles
see the section with its controls disabled and why.

Two sections share the controls here (the choice with nothing preselected, the required reason, the Revert
button) and one callback: the queue pair's (:func:`revert_section`, scope = the pair key) and the one over the
whole log (:mod:`crp_ui.revert_any`, scope :data:`ANY`). Either way the entry is based on the pair's latest log
entry as drawn, so the store refuses it when the pair changed meanwhile, and checks the role again.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import streamlit as st

from crp_core import ConflictPair, CRPError, Decision, KnowledgeBase, Role, StaleDecisionError, pair_key

from . import conflicts_view as cv
from . import decisions, render, state, team
from .triage_record import K, acknowledge

K_REVERT = K + "revert."  # + "target." / "reason." / "go." / "msg." + the scope (a pair key, or ANY)
#: the scope of the section over the whole log (a pair key always holds "|", so no pair's scope is this one)
ANY = "any"


def revertible(hist: list[Decision]) -> list[Decision]:
    """The entries an admin may take back: decisions, not revert entries, not reverted already."""
    gone = {d.reverts for d in hist if d.kind == "revert"}
    return [d for d in hist if d.kind != "revert" and d.id not in gone]


def option_label(d: Decision, place: str | None = None) -> str:
    """One revertible entry as the selectbox shows it: id, operator, kind, what it decided, when; with ``place``
    (the section over the whole log), its pair and where the pair is first."""
    pair = f"{d.fact_a} ↔ {d.fact_b} ({place}) · " if place is not None else ""
    return render.plain(f"#{d.id} · {pair}{d.operator} · {d.kind} · {cv.decision_summary(d)} · {d.decided_at}")


@dataclass(frozen=True)
class RevertDraw:
    """What a Revert button was drawn with: the decision chosen then, its pair, the CKF's fingerprint and file
    name, and the pair's latest log entry then (``based_on``: the store refuses the revert once it moved on)."""

    scope: str
    target: int
    fact_a: str
    fact_b: str
    fingerprint: str
    kb_name: str | None
    based_on: int


def drawn_with(scope: str, target: Decision, kb: KnowledgeBase, hist: list[Decision]) -> RevertDraw:
    """The :class:`RevertDraw` of ``target`` chosen now (``hist``: its pair's log entries, oldest first)."""
    return RevertDraw(
        scope=scope,
        target=int(target.id or 0),
        fact_a=target.fact_a,
        fact_b=target.fact_b,
        fingerprint=state.get_ckf_fingerprint(kb),
        kb_name=os.path.basename(state.session_kb(kb).source) or None,
        based_on=int(hist[-1].id or 0) if hist else 0,
    )


def _key(part: str, scope: str) -> str:
    return f"{K_REVERT}{part}.{scope}"


def _refusal(drawn: RevertDraw, target: int | None, reason: str) -> str | None:
    """Why the click records nothing (None: it records); the store checks the decision taken back again."""
    if not team.identity().can_revert:
        return "only an admin reverts a decision"
    if target is None:
        return "choose the decision"
    if not reason:
        return "give the reason: it is what the log keeps of this revert"
    if int(target) != drawn.target:  # a choice changed in the same run as the click: not what was shown
        return "the decision chosen changed as you clicked; check it and click Revert again"
    return None


def _on_revert(drawn: RevertDraw) -> None:
    scope = drawn.scope
    target = state.recall(_key("target", scope))
    reason = str(state.recall(_key("reason", scope), "") or "").strip()
    refusal = _refusal(drawn, target, reason)
    if refusal is not None:
        state.remember(_key("msg", scope), (False, f"Not reverted: {refusal}."))
        return
    d = Decision.revert(
        drawn.fact_a,
        drawn.fact_b,
        reverts=drawn.target,
        operator=state.get_operator(),
        reason=reason,
        ckf_fingerprint=drawn.fingerprint,
        kb_name=drawn.kb_name,
        based_on=drawn.based_on,
        **team.decision_fields(),
    )
    try:
        rec = decisions.record(d)
    except StaleDecisionError as exc:
        new = exc.latest
        msg = f"Not reverted: {new.operator} recorded #{new.id} on this pair meanwhile; review it and try again."
        state.remember(_key("msg", scope), (False, msg))
        return
    except CRPError as exc:
        state.remember(_key("msg", scope), (False, f"Not reverted: {exc}"))
        return
    state.forget(_key("reason", scope))
    state.remember(_key("target", scope), None)  # the next revert starts from no choice again
    done = f"Decision #{drawn.target} reverted by entry #{rec.id} ({rec.operator})."
    state.remember(_key("msg", scope), (True, done))
    acknowledge(pair_key(drawn.fact_a, drawn.fact_b), int(rec.id or 0))  # one's own revert is no change


def flash(scope: str) -> None:
    """The outcome of the section's last click, once."""
    msg = state.forget(_key("msg", scope))
    if msg:
        (st.success if msg[0] else st.error)(render.md_escape(msg[1]))


def choice(scope: str, by_id: dict[int, Decision], label: dict[int, str], *, disabled: bool) -> Decision | None:
    """The decision to take back (nothing preselected; ``label``: each option's text, made plain here)."""
    got = st.selectbox(
        "Decision to take back",
        list(by_id),
        index=None,
        key=_key("target", scope),
        placeholder="choose the decision to revert",
        format_func=lambda i: render.plain(label.get(i, f"#{i}")),
        disabled=disabled,
        help="Nothing is preselected: each option names the entry's id, operator, kind and time.",
    )
    return by_id.get(got) if got is not None else None


def reason_and_button(scope: str, drawn: RevertDraw | None, *, disabled: bool) -> None:
    """The required reason and the Revert button (enabled once a decision is chosen)."""
    st.text_input("Reason (required, kept in the log)", key=_key("reason", scope), disabled=disabled)
    st.button(
        "Revert",
        key=_key("go", scope),
        disabled=disabled or drawn is None,
        on_click=_on_revert,
        args=(drawn,),
        help="Records a revert entry naming the decision and your reason; the decision stops being in force.",
    )


def revert_section(pair: ConflictPair, hist: list[Decision], kb: KnowledgeBase) -> None:
    """Take back one of the pair's decisions (an admin any, a single-mode operator their own), with a reason."""
    pk = cv.p_key(pair)
    flash(pk)
    who = team.identity()
    entries = revertible(hist)
    if not entries:
        return
    # an admin takes back any decision, an operator of single mode their own (the role book's rule,
    # Identity.revert_refusal); a session that may revert none sees every entry, disabled
    targets = [d for d in entries if who.revert_refusal(d) is None] if who.can_revert else entries
    by_id = {int(d.id or 0): d for d in targets}
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
        labels = {i: option_label(d) for i, d in by_id.items()}
        target = choice(pk, by_id, labels, disabled=not who.can_revert)
        drawn = drawn_with(pk, target, kb, hist) if target is not None and who.can_revert else None
        reason_and_button(pk, drawn, disabled=not who.can_revert)
