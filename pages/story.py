"""The Story page, opened first: what SPEC-027 changes for the current scenario (the question, the three
fixes before and after, the facts it kept away from the model) and over every scenario of the suite
(``crp_ui.story_view``)."""

from __future__ import annotations

import streamlit as st

from crp_ui import before_after_tab, breakdown, labels_view, render, shell, state, story_view
from crp_ui import decisions as triage_decisions


def main() -> None:
    # a presenter's page: all of the width for the story (the sidebar opens with its arrow)
    st.set_page_config(initial_sidebar_state="collapsed")
    st.title("What SPEC-027 changes")
    for w in state.url_warnings():  # the sidebar that also lists them starts folded here
        st.warning(f"Link parameter ignored: {render.md_escape(w)}")
    result = breakdown.require_result()
    breakdown.run_caption(result)
    corpus, scenario, ds = breakdown.require_run_inputs()
    if not state.get_ckf_sample() and state.get_scenario_name():
        # an uploaded CKF with a bundled scenario: the question (and its labels) belong to the bundled sample
        st.warning(
            f"The question below is the bundled scenario {render.md_escape(state.get_scenario_name())}, written "
            f"for the bundled sample, not for {render.md_escape(state.get_ckf_label())}: load a scenario of your "
            "own in the sidebar (**Scenario**) to tell this knowledge base's story."
        )
    decisions, dkey = triage_decisions.pipeline_decisions(ds)
    width = int(scenario.fanout_width or 0)
    ba = before_after_tab.kept_before_after(corpus, scenario, state.get_config(), result, decisions, dkey, width)
    if ba is None:
        st.stop()
    marks = labels_view.marks_of(result)
    story_view.scenario_story(ba, marks)
    if marks is not None:  # the scenario's labels: a count line here, every mark on Overview / Envelope
        labels_view.summary(marks)
    st.divider()
    story_view.suite_story(corpus, ds if ds.pair_decisions else None, dkey)


if __name__ == "__main__":
    shell.run_page(main)
