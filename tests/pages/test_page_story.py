"""Story page (opened first): the question, the three fixes before → after in bad / good colours from
``before_after``, the facts left out as text with their id on hover, and the suite's before / after
run on demand."""

from __future__ import annotations

from crp_core import before_after, suite_before_after
from crp_ui import story_view
from tests.support.pages import expected_result, frame_with, run_page


def test_coloured_numbers_say_which_side_is_worse():
    assert story_view.coloured(4, 0) == ":red[**4**] → :green[**0**]"
    assert story_view.coloured(1, 3) == ":green[**1**] → :red[**3**]"
    assert story_view.coloured(2, 2) == "**2** → **2**"


def test_story_shows_the_scenarios_before_after(ui_env):
    exp = expected_result(ui_env)
    at = run_page("story")
    assert at.title[0].value == "What SPEC-027 changes"
    ba = before_after(exp.corpus, exp.scenario, exp.config, full=exp)
    text = " ".join(m.value for m in at.markdown)
    assert exp.scenario.query.split()[0] in text
    for title, idx, _what in story_view.FIXES:
        assert f"#### {title}" in text
        if not (idx == 3 and ba.before.fanout_duplicates is None):
            assert story_view.coloured(ba.before.reaching_model[idx], ba.after.reaching_model[idx]) in text
    helps = [m.proto.help for m in at.markdown if m.proto.help]
    assert len(helps) == min(len(ba.removed), 12) + min(len(ba.entered), 12)
    if ba.removed:
        assert helps[0].startswith(ba.removed[0].fact_id.replace("-", "\\-")) or ba.removed[0].fact_id in helps[0]
    # the suite runs only when asked
    assert not [f for f in at.get("plotly_chart") if "count over the suite" in f.proto.spec]
    at.button(key="crp.story.run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    table = frame_with(at, "scenario", "question", "expired", "contradictory pairs")
    assert len(table) >= 1
    assert [f for f in at.get("plotly_chart") if "count over the suite" in f.proto.spec]


def test_suite_frame_writes_each_figure_before_and_after(ui_env):
    import pathlib
    import tempfile

    from crp_core import CRPConfig, load_suite, prepare_suite
    from tests.support.suites import corpus as tiny_corpus
    from tests.support.suites import write_suite

    with tempfile.TemporaryDirectory() as d:
        prepared = prepare_suite(tiny_corpus(), load_suite(str(write_suite(pathlib.Path(d) / "s"))))
        got = suite_before_after(prepared, CRPConfig())
    frame = story_view.suite_frame(got.entries)
    s1 = dict(got.entries)["s1"]
    row = frame[frame["scenario"] == "s1"].iloc[0]
    assert row["expired"] == f"{len(s1.before.expired_in_envelope)} → {len(s1.after.expired_in_envelope)}"
    assert row["tokens"] == f"{s1.before.tokens_used} → {s1.after.tokens_used}"


def test_a_link_to_a_scenario_that_does_not_load_says_so_on_the_story(ui_env):
    """The Story keeps its sidebar folded, so a link parameter it ignored is said on the page itself."""
    at = run_page("story", params={"scenario": "workload/no_such.json"})
    said = " ".join(w.value for w in at.main.warning).replace("\\", "")
    assert "Link parameter ignored: scenario=workload/no_such.json" in said, said


def _cards(folder: str) -> None:
    from crp_core import CRPConfig, before_after, load_ckf, load_scenario, prepare_corpus
    from crp_ui import story_view

    kb = load_ckf(f"{folder}/knowledge_base.jsonl")
    scen = load_scenario(f"{folder}/scenarios/demo.json")
    story_view.fix_cards(before_after(prepare_corpus(kb, config=CRPConfig()), scen, CRPConfig(), fanout_width=2))


def test_the_fan_out_card_says_what_its_count_is_taken_on(synthetic_sample_dir):
    """The Story's fan-out count is each side's own run; the Fan-out page races the SPEC-027 run's candidates
    naively, which can count otherwise (a walk-through saw 2 on one and 3 on the other)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_cards, args=(str(synthetic_sample_dir),)).run(timeout=120)
    assert not at.exception, [e.value for e in at.exception]
    fan = [c.value for c in at.caption if c.value.startswith("fan-out duplicates reaching the model")]
    assert fan and "each side races its own run's candidates" in fan[0], [c.value for c in at.caption]


def test_the_contradictions_card_says_how_it_differs_from_the_overviews_count(synthetic_sample_dir):
    """The card counts pairs whose two facts are both packed, in each side's own run; the Overview's 'conflict
    pairs' counts every pair stage 4 of the SPEC-027 run found (a walk-through saw 3 on the card's left side and 2
    on the Overview, with nothing saying they count different things)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_cards, args=(str(synthetic_sample_dir),)).run(timeout=120)
    assert not at.exception, [e.value for e in at.exception]
    cards = [c.value for c in at.caption if c.value.startswith("contradictory pairs handed to the model")]
    assert cards and "a pair counts when both its facts are packed" in cards[0], [c.value for c in at.caption]
    assert "The Overview's 'conflict pairs' also count those stage 4 resolved" in cards[0]


def _lines():
    from crp_core import EnvelopeChange
    from crp_ui import story_view

    story_view.change_lines(
        [
            EnvelopeChange(
                "OLD", "Every response carries a Request-Id.", "duplicate", "a near-duplicate of NEW", "NEW", 9
            ),
            EnvelopeChange("S", "The legacy mode is on.", "expired", "expired (882 days old)", None, 7),
        ]
    )


def test_a_near_copy_says_so_where_it_is_read():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_lines).run(timeout=60)
    assert not at.exception, [e.value for e in at.exception]
    texts = [m.value for m in at.markdown]
    assert texts[0].endswith(":gray[(a near-copy of a fact packed in its place)]")
    assert "near-copy" not in texts[1]
    assert at.markdown[0].help == r"OLD · duplicate\: a near\-duplicate of NEW"  # escaped: inert Markdown


def _labelled_lines():
    from crp_core import EnvelopeChange
    from crp_core.analysis.labels import LabelMark, LabelMarks
    from crp_ui import story_view

    marks = LabelMarks(
        marks=(LabelMark("NEWER", "MISSING", ("must_include",), "suppressed", None, "must_include · suppressed"),)
    )
    story_view.change_lines(
        [
            EnvelopeChange("NEWER", "Uploads may be 5 GB.", "conflict loser", "suppressed as the loser", "OLD", 9),
            EnvelopeChange("S", "The legacy mode is on.", "expired", "expired (882 days old)", None, 7),
        ],
        marks=marks,
    )


def test_a_labelled_fact_left_out_carries_its_mark():
    """A must_include fact SPEC-027 left out is listed under 'kept away' with a red MISSING badge, not as a
    success (a walk-through read its own must_include fact there with nothing saying the scenario wanted it)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_labelled_lines).run(timeout=60)
    assert not at.exception, [e.value for e in at.exception]
    texts = [m.value for m in at.markdown]
    assert texts[0].endswith(":red-badge[label: MISSING]") and "badge" not in texts[1]
    assert at.markdown[0].help.endswith(r"label\: must\_include · suppressed")


def _recency_lines():
    from crp_core import before_after
    from crp_ui import story_view
    from tests.support.sweep_case import tiny_case

    corpus, scen, config = tiny_case()
    ba = before_after(corpus, scen, config)
    story_view.change_lines(ba.removed, ba=ba)


def test_an_expired_fact_carries_its_recency_where_it_is_read():
    """S (tiny_case: past its TTL, SPEC-027 factor .30) is kept away by SPEC-027: its line says expired and the
    factor, the fresh P2 (a conflict loser) says nothing of recency (a demo rehearsal could not tell which
    removed or packed facts were the stale ones)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_recency_lines).run(timeout=60)
    assert not at.exception, [e.value for e in at.exception]
    by_id = {m.help.split(" ")[0]: m.value for m in at.markdown if m.help}
    assert by_id["S"].endswith(":orange-badge[expired · recency 0.30]")
    assert "badge" not in by_id["P2"]
    assert story_view.recency_badge(None, "S") == ""
