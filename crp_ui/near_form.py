"""The near conflicts of the current run on the Conflicts page (docs/decisions/near-conflicts.md): the packed pairs
just below ``contradiction_similarity`` whose texts value-conflict, which stage 4 never arbitrates and the triage
queue does not hold. Each comes with its two texts and a form to decide it where it is shown:

* **Dismiss** (not a conflict): no run reports the pair as a near conflict any more, on any page, in the HTML
  report or on the command line (a dismissal counts wherever the pair appears);
* **Accept** (arbitration by authority decides) or **Override** (the chosen fact wins): every run that packs
  both arbitrates the pair as a conflict (docs/decisions/triage.md, "A decided pair is a conflict").

Recorded like the queue's decisions (:mod:`crp_ui.triage_record`: the team's roles, the stale refusal, a second
click recording nothing), stamped with the CKF's fingerprint.
"""

from __future__ import annotations

import os

import streamlit as st

from crp_core import MAX_NOTE_CHARS, KnowledgeBase, NearConflict, PipelineResult, pair_key, winner_by_authority

from . import conflicts_view as cv
from . import decisions, render, state, team
from .triage_form import outcome
from .triage_record import K, near_keys, on_record_near, seen

#: the decisions a near conflict's form offers, in order
NEAR_KINDS = {
    "dismiss": "Dismiss: not a conflict",
    "accept": "Accept: authority decides",
    "override": "Override: choose the winner",
}


def near_section(result: PipelineResult, base_kb: KnowledgeBase) -> None:
    """The warning naming the run's near conflicts, then one card per pair with its form (nothing without any)."""
    near = cv.near_conflicts_text(result)
    if near is None:
        return
    st.warning(render.md_escape(near), icon=":material/call_split:")
    for n in result.near_conflicts:
        _near_card(n, result, base_kb)


def _side(result: PipelineResult, side: str, fact_id: str) -> str:
    fact = result.corpus.kb.get(fact_id)
    return render.md_escape(f"{side} · {fact_id}: {fact.content if fact is not None else ''}")


def _near_card(n: NearConflict, result: PipelineResult, base_kb: KnowledgeBase) -> None:
    pk = pair_key(n.fact_a, n.fact_b)
    keys = near_keys(pk)
    refusal = team.record_refusal()
    with st.container(border=True):
        st.markdown(
            f"**{render.md_escape(n.fact_a)} ↔ {render.md_escape(n.fact_b)}** · cosine {n.similarity:.4f} · "
            f"{render.md_escape(', '.join(n.patterns))} · near conflict (not above contradiction_similarity "
            f"{result.config.contradiction_similarity:g})"
        )
        c = st.columns(2)
        c[0].markdown(_side(result, "A", n.fact_a))
        c[1].markdown(_side(result, "B", n.fact_b))
        if refusal is not None:
            st.caption(refusal)
        kind = st.radio("Decision", list(NEAR_KINDS), format_func=NEAR_KINDS.get, horizontal=True, key=keys["kind"])
        winner = winner_by_authority(result.corpus.kb, n.fact_a, n.fact_b, result.config, result.now)
        hist = decisions.pair_history(n.fact_a, n.fact_b)
        shown = {
            "based_on": seen(pk, int(hist[-1].id or 0) if hist else 0),
            "kb_name": os.path.basename(state.session_kb(base_kb).source) or state.get_ckf_label() or None,
        }
        with st.form(K + "near.form." + pk, border=False):
            _kind_fields(str(kind), n, winner, keys["winner"], refusal is not None)
            st.text_area("Note (optional)", key=keys["note"], max_chars=MAX_NOTE_CHARS, height=68)
            st.form_submit_button(
                "Record decision",
                type="primary",
                disabled=refusal is not None,
                key=K + "near.submit." + pk,
                on_click=on_record_near,
                args=(n.fact_a, n.fact_b, winner, state.get_ckf_fingerprint(base_kb), shown),
            )
        outcome(pk)


def _kind_fields(kind: str, n: NearConflict, winner: str | None, key: str, disabled: bool) -> None:
    """What the chosen decision does, and the winner of an override (none preselected)."""
    if kind == "dismiss":
        st.caption(
            "Not a conflict: both facts stay, and no run reports the pair as a near conflict any more (until the "
            "dismissal is reverted, in the **Export & audit log** tab)."
        )
    elif kind == "accept":
        by = "a tie by authority: both kept with a NOTE" if winner is None else f"{winner} wins by authority"
        st.caption(render.md_escape(f"Every run that packs both arbitrates them as a conflict: {by} (now)."))
    else:
        st.selectbox(
            "Winner",
            [n.fact_a, n.fact_b],
            index=None,
            placeholder="choose the winner",
            key=key,
            format_func=lambda f: render.plain(f"{'A' if f == n.fact_a else 'B'} · {f}"),
            disabled=disabled,
            help="The fact that wins this pair in every run that packs both; the other is suppressed.",
        )


__all__ = ["NEAR_KINDS", "near_section"]
