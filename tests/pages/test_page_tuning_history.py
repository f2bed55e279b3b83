"""Tuning page, History tab, with AppTest: the runs kept in the decision database are listed (this
knowledge base's or every one, by kind), a Suite-tab run is kept as a ``suite-run`` by the session's
operator and shows in the table, the runs selected are compared side by side (metrics, config diff) and
a metric is plotted over time; a database that is away gives a banner, a broken one an error, never a
traceback."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pandas as pd
import pytest

from crp_core.history import Experiment, ExperimentStore, list_experiments
from crp_core.io.ckf import load_ckf
from crp_ui import history_view as hv
from tests.core.triage.conftest import raw_sql
from tests.support.pages import figures, frame_with, run_page, widget

K = "crp.tuning.history."


def _clock():
    t = [datetime(2026, 3, 1, 12, 0, tzinfo=UTC)]

    def now() -> datetime:
        t[0] += timedelta(hours=1)
        return t[0]

    return now


def _seed(db: str, kb_fingerprint: str) -> list[Experiment]:
    """Three runs: two on the sample KB (a check at the defaults, a tune), one on another KB."""
    with ExperimentStore(db, clock=_clock()) as store:
        return [
            store.record(
                Experiment(
                    kind="check",
                    recorded_by="ann",
                    metrics={"recall.mean": 0.5, "leaks.total": 2.0},
                    kb_name="knowledge_base.jsonl",
                    kb_fingerprint=kb_fingerprint,
                    origin="cli",
                    note="<b>not html</b>",
                )
            ),
            store.record(
                Experiment(
                    kind="tune",
                    recorded_by="bob",
                    metrics={"recall.mean": 1.0, "leaks.total": 0.0},
                    config_diff={"stale_floor": (0.3, 0.6)},
                    kb_name="knowledge_base.jsonl",
                    kb_fingerprint=kb_fingerprint,
                    summary={"best_trial": 2},
                    origin="cli",
                )
            ),
            store.record(
                Experiment(kind="check", recorded_by="cy", metrics={"recall.mean": 0.25}, kb_name="other", origin="cli")
            ),
        ]


@pytest.fixture
def seeded(ui_env, tmp_path):
    db = str(tmp_path / "triage.sqlite")  # ui_env's $CRP_INSPECT_TRIAGE_DB
    kb = load_ckf(str(ui_env / "knowledge_base.jsonl"))
    return db, _seed(db, kb.fingerprint)


def test_history_tab_lists_this_kbs_runs_and_plots_a_metric(seeded):
    _db, runs = seeded
    at = run_page("tuning", params={"tab": "History"})
    assert [t.label for t in at.tabs][-1] == "History"
    table = frame_with(at, "id", "recorded", "kind", "by", "changed keys", "recall.mean", "note")
    assert list(table["id"]) == [2, 1]  # this KB's runs, newest first
    assert list(table["kind"]) == ["tune", "check"] and list(table["by"]) == ["bob", "ann"]
    assert list(table["changed keys"]) == [1, 0] and list(table["recall.mean"]) == [1.0, 0.5]
    assert table.loc[1, "note"] == "<b>not html</b>"  # plain text in a dataframe
    fig = figures(at)[-1]
    assert fig["data"][0]["y"] == [0.5, 1.0]  # oldest to newest
    assert [c[0] for c in fig["data"][0]["customdata"]] == [1, 2]
    at.session_state[K + "runs"] = {"selection": {"rows": [0, 1], "columns": [], "cells": []}}  # both ticked
    at.run()
    assert not at.exception
    assert frame_with(at, "metric", "#2", "#1").to_dict("records") == [
        {"metric": "recall.mean", "#2": 1.0, "#1": 0.5},
        {"metric": "leaks.total", "#2": 0.0, "#1": 2.0},
    ]
    assert frame_with(at, "key", "default").to_dict("records") == [
        {"key": "stale_floor", "default": "0.3", "#2": "0.6", "#1": hv.AT_DEFAULT}
    ]
    assert list(frame_with(at, "experiment", "kb fingerprint")["by"]) == ["bob", "ann"]
    ringed = figures(at)[-1]["data"][1]
    assert ringed["name"] == "selected" and ringed["y"] == [0.5, 1.0]
    widget(at, "radio", K + "scope").set_value("every knowledge base").run()
    assert not at.exception
    assert list(frame_with(at, "id", "recorded", "kind", "changed keys")["id"]) == [3, 2, 1]
    widget(at, "multiselect", K + "kinds").set_value(["tune"]).run()
    assert list(frame_with(at, "id", "recorded", "kind", "changed keys")["id"]) == [2]
    widget(at, "selectbox", K + "metric").set_value("leaks.total").run()
    assert figures(at)[-1]["data"][0]["y"] == [0.0]


def test_the_comparison_shows_metrics_and_config_side_by_side(seeded):
    _db, runs = seeded
    picked = [runs[1], runs[0]]
    metrics = hv.compare_frame(picked)
    assert list(metrics.columns) == ["metric", "#2", "#1"]
    assert metrics.to_dict("records") == [
        {"metric": "recall.mean", "#2": 1.0, "#1": 0.5},
        {"metric": "leaks.total", "#2": 0.0, "#1": 2.0},
    ]
    assert hv.config_frame(picked).to_dict("records") == [
        {"key": "stale_floor", "default": "0.3", "#2": "0.6", "#1": hv.AT_DEFAULT}
    ]
    assert list(hv.about_frame(picked)["experiment"]) == ["#2", "#1"]
    assert hv.when(runs[0]) == pd.Timestamp("2026-03-01T13:00:00Z")
    fig = hv.metric_figure(runs, "recall.mean", selected=[2])
    # one line per knowledge base and suite (run 3 is another knowledge base's), then the ring
    kbs = {e.kb_fingerprint for e in runs if e.metrics.get("recall.mean") is not None}
    assert len(fig.data) == len(kbs) + 1 and fig.data[-1].name == "selected" and list(fig.data[-1].y) == [1.0]
    assert all(d.name.startswith("recall.mean · ") for d in fig.data[:-1])
    assert "&lt;b&gt;" in fig.data[0].customdata[0][3]  # a note reaching plotly is escaped


def test_a_suite_run_keeps_the_name_of_the_ckf_this_session_loaded(ui_env, tmp_path, monkeypatch):
    """A prepared corpus is shared by every CKF of the same data and keeps the first one's name: a session that
    loads the same facts under another name keeps its runs under its own name."""
    import shutil

    monkeypatch.setenv("CRP_INSPECT_HISTORY", "on")
    other = tmp_path / "other"
    shutil.copytree(ui_env, other)
    (other / "knowledge_base.jsonl").rename(other / "same_facts.jsonl")
    monkeypatch.setenv("CRP_SAMPLE_DIR", str(other))
    monkeypatch.setenv("CRP_DEFAULT_SAMPLE", "same_facts.jsonl")
    first = run_page("tuning", params={"tab": "Suite"})  # prepares the corpus under the name same_facts.jsonl
    assert not first.exception
    monkeypatch.setenv("CRP_SAMPLE_DIR", str(ui_env))
    monkeypatch.delenv("CRP_DEFAULT_SAMPLE")
    at = run_page("tuning", params={"tab": "Suite"})
    assert not at.exception
    names = [e.kb_name for e in list_experiments(str(tmp_path / "triage.sqlite"))]
    assert names == ["knowledge_base.jsonl", "same_facts.jsonl"]  # newest first


def test_a_suite_run_is_kept_and_listed(ui_env, tmp_path, monkeypatch):
    monkeypatch.setenv("CRP_INSPECT_HISTORY", "on")
    from crp_core import Decision, DecisionStore
    from crp_core.io.ckf import load_ckf

    kb = load_ckf(ui_env / "knowledge_base.jsonl")
    with DecisionStore(tmp_path / "triage.sqlite") as store:  # one decision on the sample's facts, one elsewhere
        store.record(Decision.override("f000", "f001", winner="f001", operator="ann"))
        store.record(Decision.override("zz1", "zz2", winner="zz2", operator="ann"))
        in_force = store.current().in_force_on(kb)
    assert in_force[0] == 1
    at = run_page("tuning", params={"tab": "Suite"})
    assert not at.exception
    kept = list_experiments(str(tmp_path / "triage.sqlite"))
    assert len(kept) == 1
    run = kept[0]
    assert run.kind == "suite-run" and run.origin == "dashboard" and run.kb_name == "knowledge_base.jsonl"
    assert run.config_diff == {} and "recall.mean" in run.metrics and run.suite_fingerprint
    assert run.recorded_by  # the server's OS user: single mode without a typed name
    # the decisions it ran with, counted and digested as the command line's runs are (crp-inspect history)
    assert run.summary is not None and run.summary["operator_decisions"] == {
        "store": str(tmp_path / "triage.sqlite"),
        "named_by": "$CRP_INSPECT_TRIAGE_DB",
        "in_force": 1,
        "digest": in_force[1],
    }
    at.query_params["tab"] = "History"
    at.run()
    assert not at.exception
    assert [t.label for t in at.tabs][-1] == "History"


def test_a_database_away_gives_a_banner_and_a_broken_one_an_error(ui_env, tmp_path, monkeypatch):
    monkeypatch.setenv("CRP_INSPECT_TRIAGE_DB", "postgresql://nobody@127.0.0.1:1/none")
    at = run_page("tuning", params={"tab": "History"})
    assert not at.exception
    assert any("cannot be reached since" in e.value for e in at.error), [e.value for e in at.error]
    db = str(tmp_path / "newer.sqlite")  # a triage database the triage store reads, a history it must not
    _seed(db, "f" * 64)
    raw_sql(db, "INSERT INTO crp_history_schema (version, applied_at, note) VALUES (9, 'x', 'later')")
    monkeypatch.setenv("CRP_INSPECT_TRIAGE_DB", db)
    at = run_page("tuning", params={"tab": "History"})
    assert not at.exception
    said = [e.value for e in at.error if "The experiment history cannot be read" in e.value]
    assert len(said) == 1 and "newer than this crp\\-inspect supports" in said[0], [e.value for e in at.error]


def test_an_auto_tune_and_a_2d_sweep_of_the_dashboard_are_kept(ui_env, tmp_path, monkeypatch):
    monkeypatch.setenv("CRP_INSPECT_HISTORY", "on")
    at = run_page("tuning", params={"tab": "Auto-tune"})
    from tests.support.pages import widget

    widget(at, "number_input", "crp.tuning.suite.trials").set_value(3)
    at.run()
    at.button(key="crp.tuning.suite.tune_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    at.query_params["tab"] = "Suite"
    at.run()
    at.button(key="crp.tuning.suite.grid.run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    kinds = [e.kind for e in list_experiments(str(tmp_path / "triage.sqlite"))]
    assert "tune" in kinds and "sweep" in kinds, kinds
    tuned = next(e for e in list_experiments(str(tmp_path / "triage.sqlite")) if e.kind == "tune")
    assert tuned.origin == "dashboard" and tuned.summary and tuned.summary["trials"] == 3
    # the decisions it ran with, as a command line's run keeps them: none in force (no decision recorded)
    assert tuned.summary["operator_decisions"] == {"store": None, "named_by": None, "in_force": 0, "digest": ""}


def test_two_suites_of_one_name_are_two_lines(seeded):
    """Runs of suites that share a name but not their fingerprint are not one series (a walk-through's chart
    joined a 3-scenario and a 4-scenario "scenarios" suite in one line)."""
    import dataclasses

    _db, runs = seeded
    same_kb = [e for e in runs if e.kb_fingerprint == runs[0].kb_fingerprint]
    assert len(same_kb) == 2 and len({e.suite_fingerprint for e in same_kb}) == 1
    one = hv.metric_figure(same_kb, "recall.mean")
    assert [d.name for d in one.data] == ["recall.mean"]
    other = dataclasses.replace(same_kb[1], suite_fingerprint="ffff0000" + "0" * 56)
    two = hv.metric_figure([same_kb[0], other], "recall.mean")
    names = [d.name for d in two.data]
    assert len(names) == 2 and names[1].endswith("ffff0000") and [list(d.y) for d in two.data] == [[0.5], [1.0]]
