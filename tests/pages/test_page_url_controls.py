"""The page controls that reach the link (``fo_width``, ``fo_depth``, ``residual``, ``cols``, ``log``,
``explain``, ``metric``: docs/reference/snapshot.md) or the "This link does not carry" notice (the fact
table's filters, the triage queue's filters, a sweep's settings): each goes in, comes back from a link,
and a value that does not apply is refused with a warning while the control keeps its default."""

from __future__ import annotations

from typing import Any

from tests.support.conflicts_page import EXPORT, QUEUE, show_tab
from tests.support.conflicts_page import open_page as open_conflicts
from tests.support.pages import run_page, widget

FAN = "crp.fanout.w."


def _qp(at: Any) -> dict[str, str]:
    return {
        k: at.query_params[k][0] if isinstance(at.query_params[k], list) else at.query_params[k]
        for k in at.query_params
    }


def _notice(at: Any) -> str:
    return " ".join(w.value for w in at.sidebar.warning if "This link does not carry" in w.value).replace("\\", "")


def _ignored(at: Any) -> str:
    return " ".join(w.value for w in [*at.warning, *at.sidebar.warning]).replace("\\", "")


# ---- Fan-out: width, branch depth weight, ResidualSet ----------------------------------------------------
def test_the_fanout_controls_go_into_the_url_and_come_back(ui_env):
    at = run_page("fanout")
    assert not {"fo_width", "fo_depth", "residual"} & set(_qp(at))  # the scenario's values: nothing to carry
    assert widget(at, "multiselect", FAN + "residual.").value == ["sq2", "sq3"]
    widget(at, "slider", FAN + "width.").set_value(2).run()
    widget(at, "slider", FAN + "depth.").set_value(0.35).run()
    widget(at, "multiselect", FAN + "residual.").set_value(["sq3", "sq1", "sq2"]).run()
    assert {k: _qp(at)[k] for k in ("fo_width", "fo_depth", "residual")} == {
        "fo_width": "2",
        "fo_depth": "0.35",
        "residual": "sq3,sq1,sq2",
    }
    assert "ResidualSet" not in _notice(at)  # the link carries it
    fresh = run_page("fanout", params={"fo_width": "2", "fo_depth": "0.35", "residual": "sq3,sq1,sq2"})
    assert widget(fresh, "slider", FAN + "width.").value == 2
    assert widget(fresh, "slider", FAN + "depth.").value == 0.35
    assert widget(fresh, "multiselect", FAN + "residual.").value == ["sq3", "sq1", "sq2"]
    assert [m.value for m in fresh.metric] == [m.value for m in at.metric]


def test_an_empty_residual_set_is_named_in_the_notice(ui_env):
    at = run_page("fanout")
    widget(at, "multiselect", FAN + "residual.").set_value([]).run()
    assert "residual" not in _qp(at)
    assert "the Fan-out page's ResidualSet edit" in _notice(at)


def test_hostile_fanout_links_are_refused_with_a_message(ui_env):
    at = run_page("fanout", params={"fo_width": "99", "fo_depth": "nan", "residual": "sq2,nope"})
    assert not at.exception
    got = _ignored(at)
    assert "fo_width=99: outside 1..8; ignored" in got, got
    assert "fo_depth=nan: outside 0..1; ignored" in got, got
    assert "residual=sq2,nope: not a list of the choices this page offers; ignored" in got, got
    assert widget(at, "slider", FAN + "width.").value == 1  # the scenario's width 0, clamped
    assert widget(at, "multiselect", FAN + "residual.").value == ["sq2", "sq3"]
    twice = run_page("fanout", params={"residual": "sq2,sq2"})
    assert "residual=sq2,sq2: not a list" in _ignored(twice)


# ---- Conflicts: all columns, the audit log of every KB, the queue's filters -------------------------------
def test_all_columns_goes_into_the_url_and_comes_back(triage_env):
    at = show_tab(open_conflicts(), QUEUE)
    assert "cols" not in _qp(at)
    at.toggle(key="crp.page.conflicts.all_columns").set_value(True).run()
    assert _qp(at)["cols"] == "all"
    at.toggle(key="crp.page.conflicts.all_columns").set_value(False).run()
    assert "cols" not in _qp(at)
    fresh = show_tab(run_page("conflicts", params={"cols": "all"}), QUEUE)  # the link, opened elsewhere
    assert fresh.toggle(key="crp.page.conflicts.all_columns").value is True


def test_a_hostile_cols_value_is_refused(triage_env):
    at = run_page("conflicts", params={"cols": "<b>every</b>"})  # the queue is the first tab
    assert "cols=<b>every</b>: not one of the choices this page offers; ignored" in _ignored(at)
    assert at.toggle(key="crp.page.conflicts.all_columns").value is False


def test_the_audit_log_of_every_kb_goes_into_the_url(triage_env):
    at = show_tab(open_conflicts(), EXPORT)
    at.toggle(key="crp.page.conflicts.log.all_kbs").set_value(True).run()
    assert _qp(at)["log"] == "all"


def test_the_queue_filters_are_named_with_their_values(triage_env):
    at = show_tab(open_conflicts(), QUEUE)
    assert "triage queue" not in _notice(at)
    at.radio(key="crp.page.conflicts.f.decided").set_value("undecided").run()
    assert "the triage queue's filters (decided undecided)" in _notice(at), _notice(at)


# ---- Score breakdown: the fact table's filters, sort and page ---------------------------------------------
def test_the_fact_tables_sort_is_named_in_the_notice(ui_env):
    at = run_page("breakdown")
    assert "fact table" not in _notice(at)
    at.toggle(key="crp.page.breakdown.desc").set_value(False).run()
    assert "the fact table's filters and sort (descending off)" in _notice(at), _notice(at)
    at.text_input(key="crp.page.breakdown.text").set_value("port").run()
    assert "the fact table's filters and sort (search port; descending off)" in _notice(at), _notice(at)
    # a snapshot carries the inputs, not the page's own view state: the notice says which is which
    assert _notice(at).endswith("A snapshot does not carry it either: set it again after opening the link.")
    widget(at, "number_input", "crp.w.scenario.fanout.").set_value(3).run()
    assert "A snapshot carries the edited scenario (fanout_width); set the rest again after opening it." in _notice(
        at
    ), _notice(at)


# ---- Tuning: the sweep's settings, the explained fact --------------------------------------------------
def test_a_sweeps_settings_are_named_once_they_differ(ui_env):
    at = run_page("tuning", params={"tab": "Sweep"})
    assert "sweep" not in _notice(at)
    key = str(at.selectbox(key="crp.tuning.key").value)
    at.number_input(key=f"crp.tuning.count.{key}").set_value(12).run()
    got = _notice(at)
    assert f"the sweep's settings (parameter {key}; from " in got and "; values 12)" in got, got


def test_the_explained_fact_goes_into_the_url(ui_env):
    at = run_page("tuning", params={"tab": "Compare"})
    box = widget(at, "selectbox", "crp.tuning.explain.")
    options = list(box.options)
    assert len(options) > 1
    box.set_value(options[1]).run()
    assert _qp(at)["explain"] == options[1]
    fresh = run_page("tuning", params={"tab": "Compare", "explain": options[1]})
    assert widget(fresh, "selectbox", "crp.tuning.explain.").value == options[1]
    hostile = run_page("tuning", params={"tab": "Compare", "explain": "no-such-fact"})
    assert "explain=no-such-fact: not one of the choices" in _ignored(hostile)


def test_a_tab_the_page_does_not_have_is_named_until_another_tab_is_opened(ui_env):
    """Streamlit drops a ``tab`` value no tab has and opens the first tab without a word: the page says so,
    on the reruns that follow too (the value is gone from the URL by then), until the user opens a tab."""
    at = run_page("tuning", params={"tab": "Nope"})
    said = "tab=Nope: not one of this page's tabs (Sweep, Suite, Auto-tune, Compare, Before / after, History); ignored"
    assert f"Link parameter ignored: {said}" in _ignored(at), _ignored(at)
    at.run()
    assert said in _ignored(at)
    at.query_params["tab"] = "Compare"
    at.run()
    assert "tab=" not in _ignored(at)
    assert "tab=" not in _ignored(run_page("tuning", params={"tab": "Suite"}))


# ---- the inputs: a linked scenario or CKF the sidebar does not list ------------------------------------------
def test_a_linked_scenario_that_is_not_in_the_servers_folder_says_where_scenarios_come_from(ui_env):
    """A server started on a folder (``crp-inspect dashboard --ckf``, ``$CRP_SAMPLE_DIR``) offers that folder's
    scenarios: a link to another one names them so, not "bundled"."""
    at = run_page("overview", params={"scenario": "nope.json", "ckf": "nope.jsonl"})
    got = _ignored(at)
    assert "Link parameter ignored: scenario=nope.json: no such scenario on the server; ignored" in got, got
    assert "Link parameter ignored: ckf=nope.jsonl: no such knowledge base on the server; ignored" in got, got
    assert "bundled" not in got


def test_a_linked_scenario_that_is_listed_but_refused_says_why(ui_env):
    (ui_env / "scenarios" / "broken.json").write_text("{not json", encoding="utf-8")
    got = _ignored(run_page("overview", params={"scenario": "broken.json"}))
    assert "Link parameter ignored: scenario=broken.json: refused (line 1, field 'json': invalid JSON" in got, got
    assert "no such" not in got and str(ui_env) not in got  # the problem, not the server's path
