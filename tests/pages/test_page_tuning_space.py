"""Tuning page, Auto-tune's search-space editor, with AppTest: its rows start as crp_core's default
space, the engineer's edits (a widened TTL on a log scale, a key switched off, a key added) make the
study crp_core's tune over exactly that space, the result shows the space used, and a refused row is
named by its number and key with no study offered."""

from __future__ import annotations

import pytest

from crp_core.analysis.evaluate import prepare_suite
from crp_core.analysis.suite import load_suite
from crp_core.analysis.tune import default_space, tune
from crp_core.analysis.tune_space import Param, param_for
from crp_core.config import CRPConfig
from crp_core.corpus.prepared import prepare_corpus
from crp_core.io.ckf import load_ckf
from crp_ui.tune_space_editor import space_frame
from tests.support.pages import frame_with, run_page, widget

K = "crp.tuning.suite."


def _reference(d):
    corpus = prepare_corpus(load_ckf(str(d / "knowledge_base.jsonl")))
    return prepare_suite(corpus, load_suite(d / "scenarios"))


def _editor(at):
    hits = [e for e in at.data_editor if str(e.key).startswith(K + "space_editor.")]
    assert len(hits) == 1, [e.key for e in at.data_editor]
    return hits[0]


def _edit(at, *, edited=None, added=(), deleted=()):
    at.session_state[_editor(at).key] = {
        "edited_rows": edited or {},
        "added_rows": list(added),
        "deleted_rows": list(deleted),
    }
    at.run()
    assert not at.exception, [e.value for e in at.exception]


def test_the_editor_starts_from_the_default_space(ui_env):
    at = run_page("tuning", params={"tab": "Auto-tune"})
    p = _reference(ui_env)
    default = default_space(p.corpus, CRPConfig())
    got = _editor(at).value.reset_index(drop=True)
    assert got.to_dict("records") == space_frame(default).to_dict("records")
    assert list(got.columns) == ["search", "key", "lo", "hi", "log"]
    run = at.button(key=K + "tune_run")
    assert (run.label, run.help) == ("Run auto-tune (20 trials)", f"{len(default)} keys searched")


def test_an_edited_space_is_the_space_of_the_study(ui_env):
    at = run_page("tuning", params={"tab": "Auto-tune"})
    p = _reference(ui_env)
    default = default_space(p.corpus, CRPConfig())
    rows = {q.key: i for i, q in enumerate(default)}
    ttl = next(q for q in default if q.key.startswith("ttl_days."))
    _edit(
        at,
        edited={rows[ttl.key]: {"lo": 7.0, "hi": 730.0, "log": True}, rows["stale_floor"]: {"search": False}},
        added=[{"search": True, "key": "candidate_k", "lo": 10.0, "hi": 60.0, "log": False}],
    )
    want = [Param(ttl.key, 7.0, 730.0, 1.0, True) if q.key == ttl.key else q for q in default if q.key != "stale_floor"]
    want.append(Param("candidate_k", 10.0, 60.0, 1.0))
    searched = ", ".join(q.describe() for q in want)
    assert any(c.value.replace("\\", "").startswith(f"Searched: {searched}. ") for c in at.caption)
    widget(at, "number_input", K + "trials").set_value(3)
    at.run()
    at.button(key=K + "tune_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    ref = tune(p.corpus, p, CRPConfig(), "recall", 3, 0, space=want)
    table = frame_with(at, "trial", "objective", "feasible", "recall mean")
    assert list(table["objective"]) == pytest.approx([t.value for t in ref.trials])
    assert list(table[ttl.key]) == [t.params[ttl.key] for t in ref.trials]
    assert list(table["candidate_k"]) == [t.params["candidate_k"] for t in ref.trials]
    assert "stale_floor" not in table.columns
    params = frame_with(at, "key", "from", "to", "step", "log", "base", "best")
    # the values first (the best configuration's: a move no suite metric follows stays at the base), the range after
    assert list(params.columns) == ["key", "base", "best", "from", "to", "step", "log"]
    assert params.to_dict("records") == [
        {
            "key": q.key,
            "base": b,
            "best": ref.best_params[q.key],
            "from": q.low,
            "to": q.high,
            "step": q.step,
            "log": q.log,
        }
        for q, b in zip(ref.space, (ref.baseline.params[q.key] for q in ref.space))
    ]
    space_text = ", ".join(q.describe() for q in ref.space)
    assert any(c.value.replace("\\", "") == "Space: " + space_text for c in at.caption)


def test_a_refused_row_is_named_and_no_study_is_offered(ui_env):
    at = run_page("tuning", params={"tab": "Auto-tune"})
    p = _reference(ui_env)
    default = default_space(p.corpus, CRPConfig())
    rows = {q.key: i for i, q in enumerate(default)}
    _edit(
        at,
        edited={rows["cdr_min_relevance"]: {"lo": 0.8, "hi": 0.4}},
        added=[{"search": True, "key": "stale_floor", "lo": 0.0, "hi": 0.5, "log": True}],
    )
    errors = [e.value.replace("\\", "") for e in at.error]
    n = rows["cdr_min_relevance"] + 1
    assert f"row {n} (cdr_min_relevance): lo must be below hi, got 0.8:0.4 (pin one value with --set)" in errors
    assert f"row {len(default) + 1} (stale_floor): the key is already searched by an earlier row" in errors
    assert not [b for b in at.button if b.key == K + "tune_run"]


def test_the_edited_rows_survive_another_tab_and_another_page(ui_env):
    at = run_page("tuning", params={"tab": "Auto-tune"})
    p = _reference(ui_env)
    default = default_space(p.corpus, CRPConfig())
    rows = {q.key: i for i, q in enumerate(default)}
    _edit(
        at,
        edited={rows["cdr_min_relevance"]: {"lo": 0.3, "hi": 0.9, "log": True}},
        added=[{"search": True, "key": "candidate_k", "lo": 10.0, "hi": 60.0, "log": False}],
    )
    want = space_frame(default).to_dict("records")
    want[rows["cdr_min_relevance"]].update(lo=0.3, hi=0.9, log=True)
    want.append({"search": True, "key": "candidate_k", "lo": 10.0, "hi": 60.0, "log": False})
    at.query_params["tab"] = "Suite"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not [e for e in at.data_editor if str(e.key).startswith(K + "space_editor.")]  # not drawn
    at.switch_page("pages/overview.py").run()
    at.switch_page("pages/tuning.py")
    at.query_params["tab"] = "Auto-tune"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert _editor(at).value.reset_index(drop=True).to_dict("records") == want
    searched = ", ".join(
        q.describe()
        for q in [
            *(param_for("cdr_min_relevance", 0.3, 0.9, True) if q.key == "cdr_min_relevance" else q for q in default),
            param_for("candidate_k", 10, 60),
        ]
    )
    assert any(c.value.replace("\\", "").startswith(f"Searched: {searched}. ") for c in at.caption)
