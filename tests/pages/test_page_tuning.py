"""Tuning page with AppTest: a sweep run from the page shows the same points as crp_core's
sweep on the same inputs; picking a point shows its envelope diff; Compare reads the sidebar config
against the defaults; Before / after shows crp_core.analysis.baseline's numbers and offers the HTML report."""

from __future__ import annotations

import json

import pytest

from crp_core.analysis.baseline import before_after
from crp_core.analysis.compare import compare_runs
from crp_core.analysis.sweep import sweep
from crp_core.analysis.sweep_grid import grid_axis, parse_axis
from crp_core.config import CRPConfig
from tests.support.pages import expected_result, figures, frame_with, metric, run_page, sidebar_input, widget

K = "crp.tuning."


def _run_sweep(at, key: str, start: float, stop: float, count: int):
    at.selectbox(key=K + "key").set_value(key).run()
    assert not at.exception, [e.value for e in at.exception]
    widget(at, "number_input", f"{K}start.{key}").set_value(start)
    widget(at, "number_input", f"{K}stop.{key}").set_value(stop)
    widget(at, "number_input", f"{K}count.{key}").set_value(count)
    at.run()
    at.button(key=K + "run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_sweep_from_the_page_equals_crp_core_sweep(ui_env):
    """The page sweeps the grid ``crp-inspect sweep --param cdr_min_relevance=0:0.9:4`` runs: round values
    (step 0.2: five multiples, the count closest to 4) and the current value (an even spacing ran 0, 0.3, 0.6,
    0.9: other points than the CLI's for the same sweep)."""
    exp = expected_result(ui_env)
    at = run_page("tuning")
    assert [t.label for t in at.tabs] == ["Sweep", "Suite", "Auto-tune", "Compare", "Before / after", "History"]
    assert any("No sweep yet" in i.value for i in at.info)
    _run_sweep(at, "cdr_min_relevance", 0.0, 0.9, 4)
    values = grid_axis(parse_axis("cdr_min_relevance=0:0.9:4"), exp.config.cdr_min_relevance).values
    assert values[:3] == (0.0, 0.2, 0.4) and exp.config.cdr_min_relevance in values
    ref = sweep(exp.corpus, exp.scenario, exp.config, "cdr_min_relevance", values)
    table = frame_with(at, "jaccard", "recency_penalised", "entering", "leaving")
    assert list(table["value"]) == [f"{v:g}" for v in values]
    assert list(table["jaccard"]) == pytest.approx([p.jaccard for p in ref.points])
    assert list(table["recency_penalised"]) == [p.recency_penalised for p in ref.points]
    assert list(table["entering"]) == [len(p.entering) for p in ref.points]
    assert list(table["leaving"]) == [len(p.leaving) for p in ref.points]
    assert list(table["conflicts_resolved"]) == [p.conflicts_resolved for p in ref.points]
    figs = [f for f in figures(at) if "Sweep of" in json.dumps(f["layout"].get("title", {}))]
    assert len(figs) == 1
    jac = [t for t in figs[0]["data"] if t["name"].startswith("envelope overlap")][0]
    assert jac["y"] == pytest.approx([p.jaccard for p in ref.points])
    # point 1 selected by default: its diff; then pick the last value
    p0 = ref.points[0]
    diff = frame_with(at, "change", "fact_id", "why" if (p0.entering or p0.leaving) else "position")
    assert set(diff.loc[diff["change"] == "entered", "fact_id"]) == set(p0.entering)
    assert set(diff.loc[diff["change"] == "left", "fact_id"]) == set(p0.leaving)
    last = ref.points[-1]
    at.selectbox(key=K + "pick").set_value(f"{len(values)}: cdr_min_relevance = {last.value:g}").run()
    assert metric(at, "Jaccard vs baseline") == f"{last.jaccard:.2f}"
    assert metric(at, "facts entering") == str(len(last.entering))
    k = next(i for i, p in enumerate(ref.points) if p.entering or p.leaving)  # gate 0 lets more facts in
    pk = ref.points[k]
    at.selectbox(key=K + "pick").set_value(f"{k + 1}: cdr_min_relevance = {pk.value:g}").run()
    assert not at.exception
    diff = frame_with(at, "change", "fact_id", "why")
    assert set(diff.loc[diff["change"] == "left", "fact_id"]) == set(pk.leaving)
    assert set(diff.loc[diff["change"] == "entered", "fact_id"]) == set(pk.entering)
    assert metric(at, "Jaccard vs baseline") == f"{pk.jaccard:.2f}"
    cmp = compare_runs(ref.baseline.result, pk.result)
    for fid, why in zip(diff["fact_id"], diff["why"]):
        if why:
            assert why == cmp.explain(fid)


def test_sweep_marks_a_stale_sweep_after_a_sidebar_change(ui_env):
    at = run_page("tuning")
    _run_sweep(at, "stale_floor", 0.1, 0.5, 3)
    assert not at.main.warning  # (the sidebar's notice names the sweep: a link does not rerun it)
    sidebar_input(at, "min_novelty_floor").set_value(0.3).run()
    assert any("changed since this sweep" in w.value for w in at.warning)


def test_compare_defaults_vs_sidebar(ui_env):
    at = run_page("tuning", params={"tab": "Compare"})
    sidebar_input(at, "stale_floor").set_value(0.6).run()
    assert not at.exception, [e.value for e in at.exception]
    base = expected_result(ui_env)
    cand = expected_result(ui_env, edits={"stale_floor": 0.6})
    cmp = compare_runs(base, cand)
    assert metric(at, "config keys changed") == "1"
    cfg = frame_with(at, "key", "baseline", "candidate")
    assert list(cfg["key"]) == ["stale_floor"] and list(cfg["candidate"]) == ["0.6"]
    deltas = frame_with(at, "fact_id", "base rank", "cand rank", "score delta")
    assert set(deltas["fact_id"]) == {d.fact_id for d in cmp.facts}
    first = deltas.iloc[0]
    d = cmp.delta(first["fact_id"])
    assert first["score delta"] == pytest.approx(d.score_delta)
    # the explain box shows the first (most changed) fact's explain-diff, naming recency and stale_floor
    text = [i.value for i in at.info if "ranked" in i.value or "scored" in i.value]
    assert text and "stale\\_floor 0\\.3 \\-\\> 0\\.6" in text[0]
    labels = [b.proto.label for b in at.get("download_button")]
    assert "Download the candidate config (TOML)" in labels


def test_compare_uploaded_toml_refused_with_a_clear_error(ui_env):
    at = run_page("tuning", params={"tab": "Compare"})
    at.radio(key=K + "base_source").set_value("uploaded TOML").run()
    assert any("Upload a config TOML" in i.value for i in at.info)
    at.session_state[K + "base_toml"] = ("bad.toml", "stale_floor = 7\n")
    at.run()
    assert any("bad\\.toml refused" in e.value and "stale\\_floor" in e.value for e in at.error)
    at.session_state[K + "base_toml"] = ("good.toml", CRPConfig(stale_floor=0.5).to_toml())
    at.run()
    assert not at.error
    cfg = frame_with(at, "key", "baseline", "candidate")
    assert list(cfg["key"]) == ["stale_floor"] and list(cfg["baseline"]) == ["0.5"]


def test_before_after_numbers_and_report_button(ui_env):
    exp = expected_result(ui_env)
    at = run_page("tuning", params={"tab": "Before / after"})
    ba = before_after(exp.corpus, exp.scenario, exp.config)
    numbers = frame_with(at, "measure", "SPEC-024 only", "SPEC-027")
    assert [tuple(r) for r in numbers.astype(str).itertuples(index=False)] == [
        (r["measure"], str(r["SPEC-024 only"]), str(r["SPEC-027"])) for r in ba.rows()
    ]
    assert metric(at, "contradictory pairs") == str(len(ba.after.contradictory_pairs))
    labels = [b.proto.label for b in at.get("download_button")]
    assert "Download the HTML report" in labels
    ba_figs = [f for f in figures(at) if "SPEC-024 only" in json.dumps(f["data"])]
    assert len(ba_figs) == 2
    # a fan-out width for this view only
    widget(at, "number_input", K + "ba_width.").set_value(2).run()
    assert not at.exception, [e.value for e in at.exception]
    ba2 = before_after(exp.corpus, exp.scenario, exp.config, fanout_width=2)
    # the metric is what the chart draws: SPEC-027's duplicates that reach the model (found less removed at fan-in)
    assert metric(at, "duplicates reaching the model") == str(ba2.after.duplicates_reaching_model)


def test_before_after_shows_fact_text_reasons_and_the_token_change(ui_env):
    from crp_ui import glossary, render

    exp = expected_result(ui_env)
    at = run_page("tuning", params={"tab": "Before / after"})
    ba = before_after(exp.corpus, exp.scenario, exp.config)
    assert metric(at, "expired in envelope") == str(len(ba.after.expired_in_envelope))
    assert metric(at, "ageing in envelope") == str(len(ba.after.ageing_in_envelope))
    kb = exp.corpus.kb
    # both envelopes with the text of every fact and its recency state
    sides = [d.value for d in at.dataframe if {"fact_id", "content", "recency"} <= set(d.value.columns)]
    assert [list(f["fact_id"]) for f in sides] == [list(ba.before.envelope), list(ba.after.envelope)]
    for f in sides:
        assert list(f["content"]) == [kb.get(x).content for x in f["fact_id"]]
        assert list(f["recency"]) == [ba.recency_state(x) for x in f["fact_id"]]
    # what was removed, with text and reason; the token change in a sentence
    if ba.removed:  # a static table: its long "why" wraps instead of being cut
        removed = next(t.value for t in at.table if "why" in t.value.columns)
        # st.table renders cells as Markdown: every text cell arrives escaped (inert)
        assert list(removed["fact_id"]) == [render.md_escape(c.fact_id) for c in ba.removed]
        assert list(removed["why"]) == [render.md_escape(c.reason) for c in ba.removed]
        assert list(removed["content"]) == [render.md_escape(c.content) for c in ba.removed]
    assert ba.tokens is not None
    assert any(m.value == render.md_escape(ba.tokens.sentence()) for m in at.markdown)
    heads = [m.value for m in at.markdown]
    for _fix, sentence in ba.headlines():
        assert render.md_escape(sentence) in heads
    # column help from the glossary
    import json

    cfg = next(json.loads(d.proto.columns) for d in at.dataframe if "in a contradictory pair" in d.value.columns)
    assert cfg["recency"]["help"] == glossary.column_help("recency")
    assert cfg["in a contradictory pair"]["help"] == glossary.help("contradictory pair")


def test_the_selected_tab_comes_from_the_url(ui_env):
    """?tab=<label> selects the tab (st.tabs bound to the URL); an unknown label falls back to the first tab.
    The other direction (a click writes ?tab=) is the browser's: tests/e2e/test_e2e_demo.py."""
    at = run_page("tuning", params={"tab": "Before / after"})
    assert at.session_state["tab"] == "Before / after"
    at = run_page("tuning", params={"tab": "Compare"})
    assert at.session_state["tab"] == "Compare"
    at.run()  # the shell's URL sync leaves the page's parameter alone (url_codec.PAGE_PARAMS)
    assert at.session_state["tab"] == "Compare" and at.query_params.get("tab") in ("Compare", ["Compare"])
    at = run_page("tuning", params={"tab": "no such tab"})
    assert not at.exception and at.session_state["tab"] == "Sweep"


def test_before_after_report_lists_the_decisions_in_force(ui_env, monkeypatch):
    """The tab hands the report the decision set in force (the runs take a plain mapping of pair decisions: the
    report read that as 'no operator decision applied' while the runs applied them)."""
    import os

    from crp_core import Decision, DecisionStore
    from crp_core.io.ckf import load_ckf
    from crp_ui import before_after_tab

    seen = []
    monkeypatch.setattr(before_after_tab, "_report_button", lambda ba, decisions: seen.append((ba, decisions)))
    a, b = (f.fact_id for f in load_ckf(str(ui_env / "knowledge_base.jsonl")).facts[:2])
    with DecisionStore(os.environ["CRP_INSPECT_TRIAGE_DB"], create=True) as store:
        store.record(Decision.override(a, b, winner=a, operator="tester"))
    at = run_page("tuning", params={"tab": "Before / after"})
    assert not at.exception, [e.value for e in at.exception]
    (ba, decisions), *_ = seen
    assert decisions is not None and decisions.count == 1
    inputs = before_after_tab.report_inputs(ba, decisions, "demo.json", "kb")
    assert inputs.decisions_in_force == 1 and "--no-triage-db" not in inputs.command
    # with nothing in force the command says so: a store found later would apply its decisions
    assert "--no-triage-db" in before_after_tab.report_inputs(ba, None, "demo.json", "kb").command
