"""Scenario labels on the run pages (docs/decisions/labels.md): Overview, Envelope and Score breakdown
mark each labelled fact of the bundled ``ai_act_compliance`` scenario (its facts and query carry their
vectors: no model loads); a scenario without labels shows no mark.

At ``cdr_min_relevance = 0.65`` the envelope is gov-0148, gov-0149, gov-0154, gov-0136: the must_exclude
gov-0154 leaks, the must_include gov-0005 (also the expected winner over gov-0006) and gov-0047 are gated.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from crp_core import label_marks
from tests.support.pages import expected_result, frame_with, frames_with, run_page, widget
from tests.support.paths import REPO_ROOT

SAMPLES = REPO_ROOT / "sample_ckf"
SCENARIO = "ai_act_compliance.json"
GATE = {"scenario": SCENARIO, "cfg.cdr_min_relevance": "0.65"}
SUMMARY = "Scenario labels: 1 leak, 2 missing · 3 OK"
#: (fact id, mark, where it ended) in the order the Overview lists them: packed in envelope order, then the others
MARKS = [
    ("gov-0148", "OK", "packed"),
    ("gov-0149", "OK", "packed"),
    ("gov-0154", "LEAK", "packed"),
    ("gov-0005", "MISSING", "gated"),
    ("gov-0047", "MISSING", "gated"),
    ("gov-0006", "OK", "gated"),
]
LABELLED_COLUMNS = ("fact_id", "label", "ended", "reason")


@pytest.fixture
def labelled_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CRP_SAMPLE_DIR", str(SAMPLES))
    monkeypatch.setenv("CRP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CRP_INSPECT_TRIAGE_DB", str(tmp_path / "triage.sqlite"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    return SAMPLES


@pytest.fixture(scope="module")
def expected():
    r = expected_result(SAMPLES, scenario=SCENARIO, edits={"cdr_min_relevance": 0.65})
    return r, label_marks(r, r.scenario.expect)


def _summary(at) -> list[str]:
    """The label count lines of the page (a warning when a label is broken), Markdown escapes removed."""
    return [e.value.replace("\\", "") for e in [*at.warning, *at.success] if "Scenario labels" in e.value]


def test_overview_lists_every_labelled_fact(labelled_env, expected):
    result, marks = expected
    assert [p.fact_id for p in result.envelope.order] == ["gov-0148", "gov-0149", "gov-0154", "gov-0136"]
    at = run_page("overview", params=GATE)
    assert _summary(at) == [SUMMARY]
    assert any(
        "LEAK" in c.value and "must_exclude fact packed" in c.value.replace("\\", "") for c in at.caption
    )  # the legend
    table = frame_with(at, *LABELLED_COLUMNS)
    assert list(zip(table["fact_id"], table["label"], table["ended"])) == MARKS
    assert list(table["reason"]) == [m.reason for m in marks.marks]
    assert table["reason"].iloc[3] == (
        "must_include; expected winner over gov-0006 · not packed: gated: relevance 0.638 < cdr_min_relevance "
        "0.65; connector candidate (2 hop(s)): bridge value 0"
    )


def test_envelope_marks_cards_table_and_the_facts_left_out(labelled_env, expected):
    from pages.envelope import TABLE_OPEN

    _, marks = expected
    at = run_page("envelope", params=GATE)
    assert _summary(at) == [SUMMARY]
    cards = " ".join(m.value for m in at.markdown if 'class="crp-fact"' in m.value)
    # the mark as a badge in the card's head (escaped: the colon as an entity)
    assert '<span class="crp-badge crp-badge-red">label&#58; LEAK</span>' in cards
    assert cards.count('<span class="crp-badge crp-badge-green">label&#58; OK</span>') == 2
    assert cards.count("label&#58; ") == 3  # gov-0136 carries no label
    left_out = frame_with(at, *LABELLED_COLUMNS)
    assert list(zip(left_out["fact_id"], left_out["label"], left_out["ended"])) == MARKS[3:]
    assert list(left_out["reason"]) == [m.reason for m in marks.unpacked("MISSING")] + [marks.get("gov-0006").reason]
    assert any(h.value == "Labelled facts not packed" for h in at.subheader)
    at.session_state[TABLE_OPEN + ".keep"] = True
    at.run()
    assert not at.exception
    packed = frame_with(at, "position", "band", "tokens", "label")
    assert list(zip(packed["fact_id"], packed["label"])) == [
        ("gov-0148", "OK"),
        ("gov-0149", "OK"),
        ("gov-0154", "LEAK"),
        ("gov-0136", ""),
    ]


def test_breakdown_label_column_and_the_selected_facts_mark(labelled_env, expected):
    at = run_page("breakdown", params={**GATE, "fact": "gov-0047"})
    assert _summary(at) == [SUMMARY]
    table = frame_with(at, "sel", "fact_id", "label", "cdr_score")
    shown = dict(zip(table["fact_id"], table["label"]))
    assert {f: k for f, k in shown.items() if k} == {f: k for f, k, _ in MARKS if f in shown}
    assert {"gov-0005", "gov-0047"} <= set(shown)  # the two missing facts were scored (gated)
    assert list(table.columns[:4]) == ["sel", "fact_id", "label", "cdr_score"]
    lines = [m.value.replace("\\", "") for m in at.markdown if m.value.startswith("Label ")]
    assert lines == ["Label **MISSING**: must_include · not packed: gated: relevance 0.606 < cdr_min_relevance 0.65"]
    # the leak is scored too (an anchor), past the first page of the default sort by CDR score: found by its id
    widget(at, "text_input", "crp.page.breakdown.text").set_value("gov-0154").run()
    assert not at.exception
    found = frame_with(at, "sel", "fact_id", "label", "cdr_score")
    assert list(zip(found["fact_id"], found["label"])) == [("gov-0154", "LEAK")]
    # "labelled facts only": every labelled fact (all six were scored), each with its mark
    widget(at, "text_input", "crp.page.breakdown.text").set_value("").run()
    widget(at, "toggle", "crp.page.breakdown.labelled").set_value(True).run()
    assert not at.exception
    only = frame_with(at, "sel", "fact_id", "label", "cdr_score")
    assert sorted(zip(only["fact_id"], only["label"])) == sorted((f, k) for f, k, _ in MARKS)


@pytest.mark.parametrize("page", ["overview", "envelope", "breakdown"])
def test_without_labels_no_mark(ui_env, page):
    """The synthetic ``demo`` scenario has no ``expect`` table: no count line, legend, column or list."""
    at = run_page(page)
    assert _summary(at) == []
    assert not frames_with(at, "fact_id", "label")
    assert not any(h.value in ("Scenario labels", "Labelled facts not packed") for h in at.subheader)
    assert not any("label&#58; " in m.value for m in at.markdown)
    assert not any("expected winner" in c.value for c in at.caption)
    assert not [w for w in at.toggle if w.key == "crp.page.breakdown.labelled"]


def test_the_story_page_gives_the_labels_count_line(labelled_env):
    at = run_page("story", params={"scenario": SCENARIO, **GATE})
    assert _summary(at) == [SUMMARY]


def test_a_long_reason_is_read_whole_in_the_overviews_table(labelled_env, expected):
    """The reason column (up to 153 characters here) was cut at 400 px on one-line rows: it is wide, says in its
    help how to read a long one, and its rows are tall enough to wrap the longest (Streamlit wraps only rows taller
    than 4rem, 64 px)."""
    import json

    from crp_ui.labels_view import REASON_WIDTH_PX

    _, marks = expected
    at = run_page("overview", params=GATE)
    (table,) = [d for d in at.dataframe if set(LABELLED_COLUMNS) <= set(d.value.columns)]
    config = json.loads(table.proto.columns)
    assert config["reason"]["width"] == REASON_WIDTH_PX >= 500
    assert "double-click a cell to read it whole" in config["reason"]["help"]
    longest = max(len(m.reason) for m in marks.marks)
    assert longest > 120 and table.proto.row_height > 64
