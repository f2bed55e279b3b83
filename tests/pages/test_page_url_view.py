"""What a page's link carries: the Before / after view's fan-out width (``ba_width``, bounded, a hostile
value refused with a message), ``pair`` only on the Conflicts page, and the "This link does not carry"
notice for what no link holds (an edited scenario)."""

from __future__ import annotations

import json

from crp_core.analysis.baseline import before_after
from tests.support.pages import expected_result, frame_with, metric, run_page, sidebar_input, widget

K = "crp.tuning."


def _qp(at) -> dict[str, str]:
    return {
        k: at.query_params[k][0] if isinstance(at.query_params[k], list) else at.query_params[k]
        for k in at.query_params
    }


def test_the_before_after_width_goes_into_the_url_and_comes_back(ui_env):
    exp = expected_result(ui_env)
    at = run_page("tuning", params={"tab": "Before / after"})
    assert "ba_width" not in _qp(at)  # the scenario's width: nothing to carry
    widget(at, "number_input", K + "ba_width.").set_value(2).run()
    assert _qp(at)["ba_width"] == "2"
    shown = metric(at, "duplicates reaching the model")
    ba = before_after(exp.corpus, exp.scenario, exp.config, fanout_width=2)
    assert shown == str(ba.after.duplicates_reaching_model)
    fresh = run_page("tuning", params={"tab": "Before / after", "ba_width": "2"})  # the link, opened elsewhere
    assert widget(fresh, "number_input", K + "ba_width.").value == 2
    assert metric(fresh, "duplicates reaching the model") == shown


def test_a_hostile_before_after_width_is_refused_with_a_message(ui_env):
    for raw in ("99", "-1", "2.5", "nan", "1" * 500, "2\n3"):
        at = run_page("tuning", params={"tab": "Before / after", "ba_width": raw})
        assert not at.exception
        assert any("ba\\_width" in w.value and "ignored" in w.value for w in at.warning), (
            raw,
            [w.value for w in at.warning],
        )
        assert widget(at, "number_input", K + "ba_width.").value == 0  # the scenario's width


def test_pair_is_written_on_the_conflicts_page_only(triage_env):
    at = run_page("conflicts")
    pair = _qp(at).get("pair")
    assert pair  # the page selected a pair
    at.switch_page("pages/overview.py").run()
    assert "pair" not in _qp(at)
    at.switch_page("pages/conflicts.py").run()
    assert _qp(at).get("pair") == pair  # the selection comes back with the page


def test_an_edited_query_is_named_in_the_notice(ui_env):
    at = run_page("overview")
    assert not [w for w in at.sidebar.warning if "This link does not carry" in w.value]
    widget(at, "number_input", "crp.w.scenario.fanout.").set_value(3).run()
    got = " ".join(w.value for w in at.sidebar.warning if "This link does not carry" in w.value).replace("\\", "")
    assert "This link does not carry: the edited scenario (fanout_width)." in got, got


def test_the_graph_candidates_toggle_goes_into_the_url(ui_env):
    at = run_page("graph")
    assert "candidates" not in _qp(at)
    widget(at, "toggle", "crp.page.graph.candidates").set_value(True).run()
    assert _qp(at)["candidates"] == "1"
    fresh = run_page("graph", params={"candidates": "1"})
    assert widget(fresh, "toggle", "crp.page.graph.candidates").value is True
    hostile = run_page("graph", params={"candidates": "7"})
    assert any("candidates=7: outside 0..1" in w.value.replace("\\", "") for w in hostile.warning)
    assert widget(hostile, "toggle", "crp.page.graph.candidates").value is False


def test_a_glossary_search_is_named_in_the_notice(ui_env):
    at = run_page("glossary")
    at.text_input(key="crp.page.glossary.search").set_value("TTL").run()
    got = " ".join(w.value for w in at.sidebar.warning if "This link does not carry" in w.value).replace("\\", "")
    assert "the glossary search (TTL)" in got, got


def test_the_conflicts_page_opens_on_the_queues_first_undecided_pair(triage_env):
    """The queue is the whole CKF's, in triage order: a first visit opens on its first undecided pair (the tie
    T1|T2 heads the queue but an operator decided it), a link's pair wins, and with every pair decided the first
    pair opens (docs/decisions/triage.md, "Where the queue opens")."""
    from crp_core.triage import Decision, DecisionStore
    from tests.support.conflicts_page import open_page

    with DecisionStore(str(triage_env), create=True) as store:
        store.record(Decision.override("T1", "T2", winner="T1", operator="fay"))
    at = open_page()
    assert at.session_state["crp.page.conflicts.shown"][:2] == ["T1|T2", "X1|X2"]
    assert at.session_state["crp.page.conflicts.pair"] == "X1|X2"
    assert _qp(at)["pair"] == "X1|X2"
    linked = run_page("conflicts", params={"pair": "T2|T1"})
    assert linked.session_state["crp.page.conflicts.pair"] == "T1|T2"
    with DecisionStore(str(triage_env), create=False) as store:
        store.record(Decision.dismiss("X1", "X2", operator="fay"))
        store.record(Decision.accept("E1", "E2", winner="E1", operator="fay"))
    decided = open_page()
    assert decided.session_state["crp.page.conflicts.shown"][0] == "T1|T2"
    assert decided.session_state["crp.page.conflicts.pair"] == "T1|T2"


def test_a_link_never_sets_the_embedding_model(ui_env):
    """``cfg.embedding_model`` names a folder on the server: a link may not choose it (the corpus keys are
    the server's), and a link written by the page never carries it."""
    at = run_page("overview", params={"cfg.embedding_model": "/etc"})
    shown = " ".join(w.value for w in at.warning) + " ".join(e.value for e in at.error)
    assert "embedding" in shown and "not taken from a link" in shown, shown
    assert "embedding_model" not in " ".join(_qp(at))


def test_a_key_set_back_to_its_default_over_the_scenarios_value_is_in_the_link_and_comes_back(ui_env):
    """The scenario's own ``config`` table sets the gate to 0.3: its link names no ``cfg.`` for it (the reader's
    scenario sets it); a sidebar edit back to the default 0.55 is named, and the link opened elsewhere runs at
    0.55, not at the scenario's 0.3 (a value equal to the default overrides the scenario, as the edit did)."""
    path = ui_env / "scenarios" / "demo.json"
    scen = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps(dict(scen, config={"cdr_min_relevance": 0.3})), encoding="utf-8")
    at = run_page("overview")
    assert "cfg.cdr_min_relevance" not in _qp(at)
    sidebar_input(at, "cdr_min_relevance").set_value(0.55).run()
    assert _qp(at)["cfg.cdr_min_relevance"] == "0.55"
    fresh = run_page("overview", params={"scenario": "demo.json", "cfg.cdr_min_relevance": "0.55"})
    assert not fresh.exception
    assert sidebar_input(fresh, "cdr_min_relevance").value == 0.55
    passed = expected_result(ui_env, edits={"cdr_min_relevance": 0.55}).candidates.passed_gate
    funnel = frame_with(fresh, "stage", "count", "time_ms")
    assert funnel.loc[funnel["stage"] == "passed gate", "count"].iloc[0] == int(passed.sum())
    at_scenarios = expected_result(ui_env).candidates.passed_gate  # the scenario's 0.3 passes more
    assert int(at_scenarios.sum()) > int(passed.sum())


def test_an_uploaded_scenarios_config_travels_in_the_link(ui_env):
    """An uploaded scenario does not travel with a link (the reader gets a bundled one): the values its own
    ``config`` table sets are named as ``cfg.*``, compared with the defaults."""
    scen = json.loads((ui_env / "scenarios" / "demo.json").read_text(encoding="utf-8"))
    data = json.dumps(dict(scen, config={"cdr_min_relevance": 0.3})).encode("utf-8")
    at = run_page("overview")
    assert "cfg.cdr_min_relevance" not in _qp(at)
    (up,) = [u for u in at.sidebar.get("file_uploader") if u.key == "crp.w.scenario.upload"]
    up.upload("mine.json", data, "application/json")
    at.run()
    assert not at.exception
    assert sidebar_input(at, "cdr_min_relevance").value == 0.3
    assert _qp(at).get("cfg.cdr_min_relevance") == "0.3" and "scenario" not in _qp(at)
