"""Tuning page, workload views, with AppTest: the Suite tab shows crp_core's suite metrics on the
same inputs (per scenario and over the suite), the suite sweep plots crp_core's sweep_suite means and
worst cases, Auto-tune shows the trials of crp_core's tune at the same seed, its best config is
offered as TOML and applied to the sidebar in one click; a refused suite file names file, line and
field; the single-scenario sweep keeps its range when the scenario changes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crp_core.analysis.evaluate import prepare_suite, run_suite, sweep_suite
from crp_core.analysis.suite import load_suite
from crp_core.analysis.sweep_grid import grid_axis, parse_axis, suite_current
from crp_core.analysis.tune import tune
from crp_core.config import CRPConfig
from crp_core.corpus.prepared import prepare_corpus
from crp_core.io.ckf import load_ckf
from crp_ui.render import md_escape
from tests.support.pages import figures, frame_with, run_page, widget

K = "crp.tuning.suite."


def _label_suite(d: Path) -> None:
    """Give the synthetic sample's scenario labels from its own default run, and add a second scenario
    (the same query aimed at topic 1) with a must_exclude the defaults pack: the defaults are imperfect."""
    from crp_core.io.scenario import load_scenario
    from crp_core.pipeline import run_pipeline

    scen = d / "scenarios"
    kb = load_ckf(str(d / "knowledge_base.jsonl"))
    corpus = prepare_corpus(kb)
    doc = json.loads((scen / "demo.json").read_text(encoding="utf-8"))
    s = load_scenario(str(scen / "demo.json"))
    env = [p.fact_id for p in run_pipeline(corpus, s, CRPConfig(), now=s.now).envelope.order]
    absent = next(f.fact_id for f in kb.facts if f.fact_id not in env)
    assert len(env) >= 2
    doc["expect"] = {"must_include": [env[0], absent], "must_exclude": [env[-1]]}
    (scen / "demo.json").write_text(json.dumps(doc, indent=1), encoding="utf-8")
    other = dict(doc, name="demo_topic1", query={"text": "peer ports", "embedding": doc["sub_queries"][1]["embedding"]})
    other["expect"] = {"must_include": [env[0]]}
    (scen / "topic1.json").write_text(json.dumps(other, indent=1), encoding="utf-8")


def _reference(d: Path):
    corpus = prepare_corpus(load_ckf(str(d / "knowledge_base.jsonl")))
    return prepare_suite(corpus, load_suite(d / "scenarios"))


def _open_tab(at, label: str):
    assert label in [t.label for t in at.tabs]
    return at


def test_suite_tab_shows_crp_core_suite_metrics(ui_env):
    _label_suite(ui_env)
    at = run_page("tuning", params={"tab": "Suite"})
    assert [t.label for t in at.tabs] == ["Sweep", "Suite", "Auto-tune", "Compare", "Before / after", "History"]
    ref = run_suite(_reference(ui_env), CRPConfig())
    per = frame_with(at, "scenario", "recall", "leaks", "wrong_winners", "missing", "leaked")
    assert list(per["scenario"]) == ["demo", "demo_topic1"]
    demo = ref.metrics.scenario("demo")
    assert demo.recall == pytest.approx(1 / 2)  # one of the two must_include packed by construction
    assert len(demo.leaks) == 1
    assert list(per["recall"]) == pytest.approx([s.recall for s in ref.metrics.scenarios])
    assert list(per["leaks"]) == [len(s.leaks) for s in ref.metrics.scenarios]
    assert per.loc[0, "leaked"] == demo.leaks[0]
    summary = frame_with(at, "metric", "mean", "worst", "worst scenario", "definition")
    rec = summary.set_index("metric").loc["recall"]
    assert rec["mean"] == pytest.approx(ref.metrics.summary["recall"].mean)
    low = min(ref.metrics.scenarios, key=lambda m: m.recall)
    assert rec["worst"] == pytest.approx(low.recall)
    assert rec["worst scenario"] == low.name
    # the envelope of one scenario, each fact with its labels
    detail = frame_with(at, "position", "fact_id", "labels")
    assert "must_include MISSING" in set(detail["labels"])
    assert any("LEAK" in x for x in detail["labels"])


def test_suite_sweep_plots_means_and_worst(ui_env):
    """The suite sweep runs the points of ``crp-inspect sweep --param cdr_min_relevance=0:0.9:4`` on the same
    suite: the round grid with the current value."""
    _label_suite(ui_env)
    at = run_page("tuning", params={"tab": "Suite"})
    at.selectbox(key=K + "key").set_value("cdr_min_relevance").run()
    widget(at, "number_input", f"{K}start.cdr_min_relevance").set_value(0.0)
    widget(at, "number_input", f"{K}stop.cdr_min_relevance").set_value(0.9)
    widget(at, "number_input", f"{K}count").set_value(4)
    at.run()
    at.button(key=K + "run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    p = _reference(ui_env)
    current = suite_current(p.suite, CRPConfig(), "cdr_min_relevance", p.nows)
    values = grid_axis(parse_axis("cdr_min_relevance=0:0.9:4"), current).values
    ref = sweep_suite(p, CRPConfig(), "cdr_min_relevance", values)
    assert [pt.value for pt in ref.points] == list(values)
    fig = next(f for f in figures(at) if "Suite sweep of" in json.dumps(f["layout"].get("title", {})))
    means = [t for t in fig["data"] if t.get("fill") == "tonexty"]
    assert len(means) == 10  # one panel per metric
    recall = means[0]
    assert recall["y"] == pytest.approx([p.run.metrics.summary["recall"].mean for p in ref.points])
    worst = fig["data"][0]  # the band's lower edge of the recall panel
    assert worst["y"] == pytest.approx([p.run.metrics.summary["recall"].worst for p in ref.points])
    rows = frame_with(at, "scenario", "recall", "recall (base)", "entering", "leaving")
    assert list(rows["recall"]) == pytest.approx([s.recall for s in ref.points[0].run.metrics.scenarios])
    # drill-down: the envelope diff of one scenario at the chosen value against the sweep's baseline
    diff = frame_with(at, "change", "fact_id")
    base_env = set(ref.baseline.metrics.scenario("demo").envelope)
    pt_env = set(ref.points[0].run.metrics.scenario("demo").envelope)
    assert set(diff.loc[diff["change"] == "entered", "fact_id"]) == pt_env - base_env
    assert set(diff.loc[diff["change"] == "left", "fact_id"]) == base_env - pt_env


def test_autotune_shows_the_study_and_applies_the_best(ui_env):
    _label_suite(ui_env)
    at = run_page("tuning", params={"tab": "Auto-tune"})
    widget(at, "number_input", K + "trials").set_value(4)
    at.run()
    at.button(key=K + "tune_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    p = _reference(ui_env)
    ref = tune(p.corpus, p, CRPConfig(), "recall", 4, 0)
    table = frame_with(at, "trial", "objective", "feasible", "recall mean")
    assert list(table["trial"]) == [t.number for t in ref.trials]
    assert list(table["objective"]) == pytest.approx([t.value for t in ref.trials])
    assert any(f"Best: trial {ref.best.number} of 4" in s.value for s in at.success)
    fig = next(f for f in figures(at) if "by trial" in json.dumps(f["layout"].get("title", {})))
    assert fig["data"][0]["y"] == pytest.approx([t.value for t in ref.trials])
    assert any("Pareto front" in json.dumps(f["layout"].get("title", {})) for f in figures(at))
    dl = [d for d in at.get("download_button") if "best config" in d.proto.label]
    assert dl, "the best config is downloadable"
    at.button(key=K + "apply").click().run()
    assert not at.exception, [e.value for e in at.exception]
    edits = at.session_state["crp.config_edits"] if "crp.config_edits" in at.session_state else None
    assert edits is not None
    # the best configuration's values: the trial's moves that no suite metric follows stay at the start
    for key, value in ref.best_params.items():
        assert edits[key] == pytest.approx(value)
    reverted = ref.simplified.reverted if ref.simplified is not None else ()
    assert all(ref.best_params[k] == ref.trials[0].params[k] for k in reverted)
    said = [c.value for c in at.caption if c.value.startswith("Left at the sidebar's values")]
    assert bool(said) == bool(reverted) and (not said or md_escape(", ".join(reverted)) in said[0])


def test_a_refused_suite_upload_names_file_line_and_field(ui_env):
    _label_suite(ui_env)
    at = run_page("tuning", params={"tab": "Suite"})
    at.radio(key=K + "source.suite").set_value("uploaded scenario files").run()
    assert any("No suite yet: upload scenario files" in i.value for i in at.info)
    bad = b'{\n "name": "x",\n "query": "q",\n "expect": {"must_include": "k8s-0001"}\n}\n'
    (up,) = [u for u in at.main.get("file_uploader") if str(u.proto.label).startswith("Scenario files")]
    up.set_value([("bad.json", bad, "application/json")])
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    (err,) = at.error
    assert "The uploaded suite was refused" in err.value
    assert "**bad\\.json**: 1 problem(s)" in err.value
    assert "- line 4, field `expect.must_include`" in err.value, err.value


def test_single_sweep_range_is_kept_when_the_scenario_changes(ui_env):
    (ui_env / "scenarios" / "other.json").write_text(
        (ui_env / "scenarios" / "demo.json").read_text(encoding="utf-8").replace('"demo"', '"other"'), encoding="utf-8"
    )
    at = run_page("tuning")
    key = "crp.tuning.start.cdr_min_relevance"
    at.selectbox(key="crp.tuning.key").set_value("cdr_min_relevance").run()
    widget(at, "number_input", key).set_value(0.11).run()
    sel = next(s for s in at.sidebar.selectbox if "other.json" in (s.options or []))
    sel.set_value("other.json").run()
    assert not at.exception, [e.value for e in at.exception]
    assert widget(at, "number_input", key).value == pytest.approx(0.11)


def test_compare_over_the_suite_against_the_defaults(ui_env):
    _label_suite(ui_env)
    at = run_page("tuning", params={"tab": "Suite", "cfg.cdr_min_relevance": "0.2"})
    assert not at.exception, [e.value for e in at.exception]
    p = _reference(ui_env)
    cand = run_suite(p, CRPConfig().with_overrides({"cdr_min_relevance": 0.2}))
    base = run_suite(p, CRPConfig())
    assert any("cdr\\_min\\_relevance" in c.value and "1 key(s) differ" in c.value for c in at.caption)
    rows = frame_with(at, "scenario", "recall", "recall (base)", "tokens", "tokens (base)")
    assert list(rows["recall (base)"]) == pytest.approx([s.recall for s in base.metrics.scenarios])
    assert list(rows["tokens"]) == [s.tokens for s in cand.metrics.scenarios]
    summary = [f for f in at.dataframe if "verdict" in f.value.columns]
    assert summary, "the comparison's summary carries a verdict per metric"
    diff = frame_with(at, "change", "fact_id", "why")
    b, c = set(base.metrics.scenario("demo").envelope), set(cand.metrics.scenario("demo").envelope)
    assert set(diff.loc[diff["change"] == "entered", "fact_id"]) == c - b
    assert set(diff.loc[diff["change"] == "left", "fact_id"]) == b - c
    assert (c - b) or (b - c), "the gate change moves the demo envelope (else this test shows nothing)"


def test_autotune_lists_the_best_trials_regressions_against_trial_0(ui_env):
    _label_suite(ui_env)
    at = run_page("tuning", params={"tab": "Auto-tune"})
    widget(at, "number_input", K + "trials").set_value(6)
    at.run()
    at.button(key=K + "tune_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    p = _reference(ui_env)
    best = tune(p.corpus, p, CRPConfig(), "recall", 6, 0).best
    assert best.number != 0 and best.regressions, "the recall objective trades demo's expired facts for recall here"
    table = frame_with(at, "scenario", "metric", "this trial", "trial 0")
    assert [(r.scenario, r.metric) for r in table.itertuples()] == [(f.scenario, f.metric) for f in best.regressions]
    assert list(table["trial 0"]) == pytest.approx([f.bound for f in best.regressions])
    assert any(f"Trial {best.number} is worse than trial 0" in w.value for w in at.warning)


def test_suite_runs_with_a_pair_decision_and_a_guard_that_acts(ui_env):
    """With an operator's pair decision in force and a known-conflict guard that acts, the suite tab
    runs: the suite gets the decision set, whose pair decisions the guard reads."""
    import os

    from crp_core import Decision, DecisionStore

    _label_suite(ui_env)
    a, b = (f.fact_id for f in load_ckf(str(ui_env / "knowledge_base.jsonl")).facts[:2])
    with DecisionStore(os.environ["CRP_INSPECT_TRIAGE_DB"], create=True) as store:
        store.record(Decision.override(a, b, winner=a, operator="tester"))
    at = run_page("tuning", params={"tab": "Suite", "cfg.known_conflict_action": "drop_loser"})
    per = frame_with(at, "scenario", "recall", "leaks", "wrong_winners", "missing", "leaked")
    assert list(per["scenario"]) == ["demo", "demo_topic1"]
