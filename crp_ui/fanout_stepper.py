"""The Fan-out page's stepper (SPEC-027 §1): the partitioned fan-out step by step beside the naive
shared-Coverage-Set race, each step's Coverage Set as its branch sees it, and the timelines.

The step index lives in the session and in the URL (``?step=<1-based>``, a page parameter the shell
leaves alone; a value that is no step of the run is ignored with a warning, :func:`link_warning`); every
number shown is read from the run's ``crp_core.FanoutResult``.
"""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from crp_core import Corpus, CRPConfig, FanoutResult, FanoutRun, FanoutStep, Scenario

from . import breakdown, cache, render, state
from . import fanout_view as fv
from .fanout_steps import URL_STEP

K = "crp.fanout."
K_STEP = K + "step"  # 0-based index of the partitioned step shown
K_URL_NOTE = K + "url_note"  # the warning about the link's step, until the user moves to another step
K_STEP_AT = K + "step_at"  # (run signature, kind, branch) of the step shown: its concept across runs
K_MOVED_NOTE = K + "moved_note"  # set when a new run (another width) moved the step number

KIND_NAMES = {
    "parent": "parent state",
    "partition": "partitioning",
    "snapshot": "snapshot",
    "retrieval": "retrieval",
    "additions": "local additions",
    "merge": "fan-in union",
    "dedup": "dedup report",
}
#: what each kind of partitioned step shows of the Coverage Set
VIEWS = {
    "snapshot": "read-only snapshot",
    "retrieval": "read-only snapshot scored against",
    "additions": "snapshot + this branch's local additions (invisible to other branches)",
    "merge": "parent set after the fan-in union",
    "dedup": "parent set after fan-in",
}


# ---- step state -----------------------------------------------------------------------------------
def current_step(steps: tuple[FanoutStep, ...], result_sig: str = "") -> int:
    """The step index: session state, else the URL's ``step`` (first visit), clamped to the steps.

    When the run changes (``result_sig``: another width, ResidualSet or depth weight), the step keeps its
    meaning: the step of the same kind for the same branch in the new run (:func:`fanout_view.same_step`),
    and the page says where the step went (``K_MOVED_NOTE``)."""
    n_steps = len(steps)
    if not state.holds(K_STEP):
        idx, note = fv.parse_step_param(state.page_param(URL_STEP), n_steps)
        state.remember(K_STEP, idx)
        state.remember(K_URL_NOTE, note)
    idx = min(max(int(state.recall(K_STEP)), 0), max(n_steps - 1, 0))
    at = state.recall(K_STEP_AT)
    if at is not None and at[0] != result_sig and n_steps:
        old_idx, kind, branch = int(state.recall(K_STEP)), at[1], at[2]
        idx, why = fv.same_step(steps, kind, branch)
        where = f"{KIND_NAMES.get(kind, kind)}" + ("" if branch is None else f", branch {branch}")
        moved = (
            f"The run changed: the stepper stays on the same step ({where}), now step {idx + 1} of {n_steps}"
            + (f" (was step {old_idx + 1})" if idx != old_idx else "")
            + (f"; {why}" if why else "")
            + "."
        )
        state.remember(K_MOVED_NOTE, moved if (idx != old_idx or why) else "")
    elif at is not None and at[0] == result_sig and at[1:] != (steps[idx].kind, steps[idx].branch):
        state.remember(K_MOVED_NOTE, "")  # the user moved on: the note is spent
    state.remember(K_STEP, idx)
    if n_steps:
        state.remember(K_STEP_AT, (result_sig, steps[idx].kind, steps[idx].branch))
    return idx


def link_warning() -> str:
    """Why the link's ``step`` was ignored ("" when it was not, or once the user moved to another step); the
    page shows it with the other link warnings (:func:`stepper` reads the link)."""
    return str(state.recall(K_URL_NOTE) or "")


def _set_step(idx: int, radio_key: str) -> None:
    state.remember(K_STEP, idx)
    state.remember(radio_key, idx)
    state.forget(K_URL_NOTE)


def _on_pick(radio_key: str) -> None:
    state.remember(K_STEP, int(state.recall(radio_key)))
    state.forget(K_URL_NOTE)


# ---- one step -------------------------------------------------------------------------------------
def _coverage_block(
    fan: FanoutResult, step: FanoutStep, mode: str, caption: str, scenario: Scenario, config: CRPConfig
) -> None:
    """The Coverage Set at ``step`` as chips (the entries added at this step highlighted, their hover text
    once per run and step), with a caption saying whose view it is."""
    tips = cache.by_identity(
        "fanout_tips",
        fan,
        lambda _f: fv.coverage_tips(fv.coverage_frame(step, scenario, config)),
        extra=(mode, step.index),
    )
    render.html_block(fv.coverage_html(step, mode, tips))
    since = step.detail.get("since_step")
    added = f"{len(step.added)} entr{'y' if len(step.added) == 1 else 'ies'} added" if step.added else "nothing added"
    ref = f" since {'naive ' if mode == 'naive' else ''}step {since + 1}" if isinstance(since, int) else ""
    st.caption(f"{render.md_escape(caption)} · {added}{ref} (highlighted).")


def _facts_table(step: FanoutStep, corpus: Corpus, several: Mapping[str, tuple[int, ...]], key: str) -> None:
    frame = fv.step_facts_frame(step, corpus, duplicates=several)
    cfg = breakdown.column_config(frame)
    cfg["content"] = st.column_config.TextColumn("content", width="medium")
    render.dataframe(frame, hide_index=True, width="stretch", key=key, column_config=cfg)


def _fact_texts(fan: FanoutResult, corpus: Corpus) -> dict[str, str]:
    """Fact id -> content for the facts the run chose, once per run (callers must not mutate it)."""
    return cache.by_identity("fanout_fact_texts", fan, lambda f: fv.fact_texts(f, corpus))


def _dedup_report(run: FanoutRun, mode: str, texts: Mapping[str, str]) -> None:
    frame = fv.dedup_frame(run, texts)
    said = fv.dedup_report_text(run)
    if len(frame) == 0:
        st.success(said)
        return
    (st.info if run.reaching_model == 0 else st.error)(said)
    render.dataframe(
        frame,
        hide_index=True,
        width="stretch",
        key=f"{K}dedup.{mode}",
        column_config={
            "facts": st.column_config.TextColumn(
                "facts", width="medium", help="The duplicate's fact(s), shortened; their ids in the last column."
            ),
            "fate": st.column_config.TextColumn(
                "fate", help="Removed at fan-in (SPEC-027 §1.6 dedup, one copy kept) or reached the model."
            ),
            "similarity": st.column_config.NumberColumn("similarity", format="%.4f"),
            "fact_ids": st.column_config.TextColumn("ids", help="The fact ids of this duplicate."),
        },
    )


def _partitioned_body(
    fan: FanoutResult, step: FanoutStep, corpus: Corpus, scenario: Scenario, config: CRPConfig
) -> None:
    """What one partitioned step did, by its kind."""
    run, d = fan.partitioned, step.detail
    if step.kind == "parent":
        render.html_block("ResidualSet: " + fv.chips_html(d.get("residual_set", []), kind="sq"))
    elif step.kind == "partition":
        render.table(fv.partitions_table(fv.partitions_frame(fan, scenario)), hide_index=True)
        st.caption(
            f"Each branch may choose up to {d.get('branch_fact_budget')} facts "
            "(max(3, envelope_fact_budget // branches))."
        )
    elif step.kind == "snapshot":
        render.html_block("Partition: " + fv.chips_html(d.get("partition", []), kind="sq"))
        st.caption(
            f"{render.md_escape(d.get('snapshot_type', ''))}: a write attempt raises "
            "SnapshotMutationError (SPEC-027 §1.5)."
        )
    elif step.kind == "retrieval":
        st.caption(
            f"Relevance and residual pull over partition {render.md_escape(', '.join(d.get('partition', [])))} "
            f"only; novelty against the snapshot. Pool {d.get('pool')}, gated out {d.get('gated_out')}, "
            f"scored {d.get('scored')}, chose {len(step.facts)} (budget {d.get('budget')})."
        )
        _facts_table(step, corpus, fv.chosen_by_several(run), f"{K}step.facts.p")
    elif step.kind == "additions":
        added = d.get("additions", [])
        render.html_block(
            f"Local additions (depth {config.branch_depth_weight:g}): " + fv.chips_html(added, highlight=added)
        )
    elif step.kind == "merge":
        texts = _fact_texts(fan, corpus)
        dups = fv.duplicate_fact_ids(run)
        n_dup = sum(1 for f in step.facts if f in dups)
        with st.expander(f"Union of the branches' facts ({len(step.facts)}, {n_dup} named by a duplicate)"):
            render.html_block(
                fv.chips_html(
                    step.facts, kind="fact", highlight=dups, labels=fv.fact_labels(texts), tips=fv.fact_tips(texts)
                )
            )
        st.caption(f"Coverage depth after the merge: {d.get('coverage_depth')}.")
    elif step.kind == "dedup":
        _dedup_report(run, "partitioned", _fact_texts(fan, corpus))


def _partitioned_detail(
    fan: FanoutResult, step: FanoutStep, corpus: Corpus, scenario: Scenario, config: CRPConfig
) -> None:
    st.markdown(f"**{render.md_escape(fv.step_label(step))}**")
    who = "the parent" if step.branch is None else f"branch {step.branch}"
    view = VIEWS.get(step.kind, "parent set")
    _coverage_block(fan, step, "partitioned", f"what {who} sees: {view}", scenario, config)
    _partitioned_body(fan, step, corpus, scenario, config)


def _naive_detail(fan: FanoutResult, nstep: FanoutStep, corpus: Corpus, scenario: Scenario, config: CRPConfig) -> None:
    run = fan.naive
    st.markdown(f"**{render.md_escape(fv.step_label(nstep))}**")
    _coverage_block(fan, nstep, "naive", "the one shared Coverage Set (every branch read it at T0)", scenario, config)
    if nstep.kind == "parent":
        st.caption(
            "Round-robin assignment: "
            + render.md_escape(
                "; ".join(f"branch {i}: {', '.join(p)}" for i, p in enumerate(nstep.detail.get("assignment", [])))
            )
        )
    elif nstep.kind == "retrieval":
        st.caption(
            "Relevance over its round-robin sub-queries, but residual pull over the whole ResidualSet "
            "and novelty against the shared set as read at T0."
        )
        _facts_table(nstep, corpus, fv.chosen_by_several(run), f"{K}step.facts.n")
    elif nstep.kind == "dedup":
        _dedup_report(run, "naive", _fact_texts(fan, corpus))


# ---- the stepper ----------------------------------------------------------------------------------
def _step_buttons(steps: tuple[FanoutStep, ...], idx: int, radio_key: str) -> None:
    n = len(steps)
    moved = state.recall(K_MOVED_NOTE)
    if moved:
        st.info(render.md_escape(moved))
    b1, b2, b3 = st.columns([1, 1, 6])
    b1.button(
        "◀ Previous", key=f"{K}prev", disabled=idx <= 0, on_click=_set_step, args=(idx - 1, radio_key), width="stretch"
    )
    b2.button(
        "Next ▶", key=f"{K}next", disabled=idx >= n - 1, on_click=_set_step, args=(idx + 1, radio_key), width="stretch"
    )
    b3.markdown(f"Step **{idx + 1}** of {n}: {render.md_escape(fv.step_label(steps[idx]))}")
    state.set_page_param(URL_STEP, str(idx + 1))


def _step_list(steps: tuple[FanoutStep, ...], idx: int, radio_key: str) -> None:
    state.remember(radio_key, idx)
    st.radio(
        "Steps",
        list(range(len(steps))),
        key=radio_key,
        on_change=_on_pick,
        args=(radio_key,),
        format_func=lambda i: render.md_escape(  # radio options are Markdown
            f"{i + 1}. {fv.step_time(steps[i])} · {fv.actor(steps[i])} · {KIND_NAMES.get(steps[i].kind, steps[i].kind)}"
        ),
    )


def stepper(fan: FanoutResult, corpus: Corpus, scenario: Scenario, config: CRPConfig, result_sig: str) -> None:
    """Step through the partitioned fan-out (left) beside the naive race at the same moment (right)."""
    st.subheader("Step through the fan-out")
    steps, nsteps = tuple(fan.steps), tuple(fan.naive_steps)
    idx = current_step(steps, result_sig)
    radio_key = f"{K}w.steps.{result_sig}"
    texts = _fact_texts(fan, corpus)
    labels, tips = fv.fact_labels(texts, 28), fv.fact_tips(texts)
    _step_buttons(steps, idx, radio_key)
    nidx = fv.naive_step_for(steps[idx], nsteps)
    c_list, c_part, c_naive = st.columns([1.15, 2.5, 2.5], gap="medium")
    with c_list:
        _step_list(steps, idx, radio_key)
    with c_part:
        st.markdown("##### Partitioned (SPEC-027 §1.3)")
        _partitioned_detail(fan, steps[idx], corpus, scenario, config)
        render.html_block(
            fv.timeline_html(
                steps,
                idx,
                duplicates=fv.duplicate_fact_ids(fan.partitioned),
                title="Timeline (partitioned)",
                labels=labels,
                tips=tips,
            )
        )
    with c_naive:
        st.markdown("##### Naive: shared Coverage Set (SPEC-027 §1.1)")
        _naive_detail(fan, nsteps[nidx], corpus, scenario, config)
        render.html_block(
            fv.timeline_html(
                nsteps,
                nidx,
                duplicates=fv.chosen_by_several(fan.naive).keys(),
                title="Race timeline (naive)",
                labels=labels,
                tips=tips,
            )
        )
        st.caption(
            "Chips show each fact's text (hover for its id). Red chips: facts chosen by more than one branch "
            "(duplicate content)."
        )


__all__ = [
    "K",
    "K_MOVED_NOTE",
    "K_STEP",
    "K_STEP_AT",
    "KIND_NAMES",
    "URL_STEP",
    "current_step",
    "link_warning",
    "stepper",
]
