"""Overview page: headers block, stage funnel and warnings equal the pipeline's output."""

from __future__ import annotations

import json

import numpy as np
import pytest

from crp_core import gate_counts, gate_note
from crp_ui import render
from crp_ui.render import headers_text
from tests.support.pages import expected_result, frame_with, frames_with, metric, run_page, sidebar_input
from tests.support.samples import synthetic_ckf_rows, synthetic_scenario


def test_overview_shows_the_runs_headers_and_funnel(ui_env):
    exp = expected_result(ui_env)
    at = run_page("overview")
    assert at.title[0].value == "Overview"
    assert [c.value for c in at.code] == [headers_text(exp.headers)]
    funnel = frame_with(at, "stage", "count", "time_ms")
    assert list(funnel["stage"]) == [
        "candidates",
        "passed gate",
        "anchors",
        "connectors",
        "suppressed",
        "backfilled",
        "packed",
    ]
    assert list(funnel["count"]) == [
        len(exp.candidates.idx),
        int(np.count_nonzero(exp.candidates.passed_gate)),
        len(exp.cdgr.anchors) + len(exp.cdgr.extra_anchors),
        len(exp.cdgr.selected_connectors),
        len(exp.resolution.suppressed),
        len(exp.resolution.backfilled),
        len(exp.envelope.order),
    ]
    assert metric(at, "packed facts") == str(len(exp.envelope.order))
    assert metric(at, "tokens used") == str(exp.envelope.tokens_used)
    assert metric(at, "conflict pairs") == str(exp.resolution.detected)
    (pairs,) = [m for m in at.metric if m.label == "conflict pairs"]
    res = exp.resolution
    assert f"{res.detected - res.unresolved} resolved by authority, {res.unresolved} tied" in pairs.help
    assert "The Story counts only the pairs whose two facts both reach the model" in pairs.help
    timings = [f for f in frames_with(at, "stage", "time_ms") if "count" not in f.columns][0]
    stages = dict(zip(timings["stage"], timings["time_ms"]))
    assert set(exp.timings_ms) < set(stages) and stages["total"] > 0


def test_changing_the_gate_in_the_sidebar_changes_the_funnel(ui_env):
    at = run_page("overview")
    before = frame_with(at, "stage", "count", "time_ms")
    sidebar_input(at, "cdr_min_relevance").set_value(0.1).run()
    assert not at.exception
    after = frame_with(at, "stage", "count", "time_ms")
    exp = expected_result(ui_env, edits={"cdr_min_relevance": 0.1})
    passed = int(np.count_nonzero(exp.candidates.passed_gate))
    assert after.loc[after["stage"] == "passed gate", "count"].iloc[0] == passed
    assert passed != before.loc[before["stage"] == "passed gate", "count"].iloc[0]
    assert [c.value for c in at.code] == [headers_text(exp.headers)]


def test_data_quality_warnings_are_listed(tmp_path, monkeypatch):
    rows = synthetic_ckf_rows()
    rows[0]["ingested_at"] = "2026-01-01T00:00:00Z"  # after the scenario's now (2025-10-01): future timestamp
    del rows[1]["ingested_at"]  # no timestamp at all: unknown age
    # also move one vector a little: the shell's result cache is keyed by the corpus vectors (not by the
    # timestamps), so a CKF differing from the ui_env sample only in timestamps would reuse its results
    rows[2]["embedding"][0] += 0.01
    d = tmp_path / "samples"
    (d / "scenarios").mkdir(parents=True)
    (d / "knowledge_base.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (d / "scenarios" / "demo.json").write_text(json.dumps(synthetic_scenario()), encoding="utf-8")
    monkeypatch.setenv("CRP_SAMPLE_DIR", str(d))
    monkeypatch.setenv("CRP_CACHE_DIR", str(tmp_path / "cache"))
    exp = expected_result(d)
    at = run_page("overview")
    warn = frame_with(at, "origin", "message")
    n = len(exp.warnings) + len(exp.corpus.kb.warnings)
    assert n >= 2 and len(warn) == n
    text = " ".join(warn["message"]).lower()
    assert "f000" in text and "f001" in text
    assert metric(at, "warnings") == str(n)
    assert any("data-quality warning" in w.value for w in at.warning)


def _gate_box(at, message):
    return [c for c in at.caption if message in c.value]


def test_the_gate_note_names_the_gate_and_its_button_sets_the_value_it_names(ui_env):
    """A gate that leaves anchor places empty (crp_core.gate_note): its note on Overview and Score breakdown; the
    button sets the suggested cdr_min_relevance as a sidebar edit and the run follows it."""
    at = run_page("overview")
    sidebar_input(at, "cdr_min_relevance").set_value(0.8).run()
    exp = expected_result(ui_env, edits={"cdr_min_relevance": 0.8})
    note = gate_note(exp)
    assert note is not None and note.admitted > 0
    assert len(_gate_box(at, render.md_escape(note.message))) == 1
    (button,) = [b for b in at.button if b.label == f"Try cdr_min_relevance {note.suggested:.2f}"]
    button.click().run()
    assert not at.exception
    assert sidebar_input(at, "cdr_min_relevance").value == pytest.approx(note.suggested)
    after = expected_result(ui_env, edits={"cdr_min_relevance": note.suggested})
    funnel = frame_with(at, "stage", "count", "time_ms")
    passed = int(np.count_nonzero(after.candidates.passed_gate))
    assert funnel.loc[funnel["stage"] == "passed gate", "count"].iloc[0] == passed == note.passed + note.admitted
    later = gate_note(after)
    assert not _gate_box(at, "would let") if later is None else _gate_box(at, render.md_escape(later.message))


def test_no_gate_note_when_the_gate_keeps_nothing_out(ui_env):
    at = run_page("overview")
    sidebar_input(at, "cdr_min_relevance").set_value(-1.0).run()
    assert gate_note(expected_result(ui_env, edits={"cdr_min_relevance": -1.0})) is None
    assert not _gate_box(at, "The relevance gate") and not [b for b in at.button if b.label.startswith("Try cdr_")]


def test_the_gate_caption_is_one_short_sentence_and_its_help_explains_it(ui_env):
    """The relevance gate's caption under the stage times: its figures in one short sentence (the long explanation
    cut the narrow column into four lines), the explanation in the caption's help."""
    exp = expected_result(ui_env)
    counts = gate_counts(exp)
    at = run_page("overview")
    (cap,) = [c for c in at.caption if c.value.startswith("Relevance gate ")]
    threshold = exp.config.cdr_min_relevance
    figures = f"{counts.passed} of {counts.retrieved} candidates passed, {counts.below} below it"
    assert cap.value.startswith(f"Relevance gate {threshold:g}: {figures}")
    assert len(cap.value) <= 100 and cap.value.endswith(".") and cap.value.count(". ") == 0
    assert "cannot be an anchor" in cap.proto.help and "not gated" in cap.proto.help
    assert f"({counts.gated_out} here)" in cap.proto.help
    assert not [c for c in at.caption if c.value.startswith("Candidates: ")]
