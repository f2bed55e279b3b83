"""Tuning page, the suite's state, with AppTest: an engineer's own CKF and 4 uploaded scenario files
stay the suite of the Suite and Auto-tune tabs across reruns (trials changed, Run pressed), tab
switches and page switches; with an uploaded CKF the bundled suite is never run unannounced; a suite
that does not fit the CKF is reported per scenario file, with line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.support.own_suite import own_ckf_bytes, own_scenario_files
from tests.support.pages import run_page, widget

K = "crp.tuning.suite."
OWN = ("retention", "foi", "audits", "retention_old")


def doc_text(p: Path) -> str:
    return p.read_text(encoding="utf-8")


def idx(text: str, needle: str) -> int:
    """The 1-based line of ``needle``'s first occurrence in ``text``."""
    return text[: text.index(needle)].count("\n") + 1


def _ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def _texts(at: AppTest) -> str:
    return "\n".join(x.value for kind in ("caption", "info", "warning", "error", "markdown") for x in at.get(kind))


def _upload_kb(at: AppTest) -> None:
    at.sidebar.get("file_uploader")[0].upload("gov.jsonl", own_ckf_bytes(), "application/json")
    at.run()
    _ok(at)
    assert at.session_state["crp.ckf_label"].startswith("gov.jsonl")


def _suite_uploader(at: AppTest):
    ups = [u for u in at.main.get("file_uploader") if str(u.proto.label).startswith("Scenario files")]
    assert len(ups) == 1, [u.proto.label for u in at.main.get("file_uploader")]
    return ups[0]


def _tab(at: AppTest, label: str) -> None:
    # a click on the tab: the tabs are bound to the URL, whose parameter the first tab drops
    if label == "Sweep":
        at.query_params.pop("tab", None)
        at.session_state["tab"] = label
    else:
        at.query_params["tab"] = label
    at.run()
    _ok(at)


def _own_suite_page() -> AppTest:
    """The engineer's path up to a suite: upload the CKF, then the 4 scenario files on Suite."""
    at = run_page("tuning", params={"tab": "Suite"})
    _upload_kb(at)
    at.radio(key=K + "source.suite").set_value("uploaded scenario files").run()
    _ok(at)
    _suite_uploader(at).set_value([(n, d, "application/json") for n, d in own_scenario_files()])
    at.run()
    _ok(at)
    return at


def _suite_caption(at: AppTest) -> str:
    caps = [c.value for c in at.caption if c.value.startswith("Suite: ")]
    assert caps, _texts(at)
    return caps[0]


def test_the_uploaded_suite_stays_across_trials_run_tabs_and_pages(ui_env):
    at = _own_suite_page()
    assert "Suite: 4 scenario(s)" in _suite_caption(at)
    _tab(at, "Auto-tune")
    assert "Suite: 4 scenario(s)" in _suite_caption(at)
    widget(at, "number_input", K + "trials").set_value(3)
    at.run()
    _ok(at)
    assert "Suite: 4 scenario(s)" in _suite_caption(at), "changing trials must keep the uploaded suite"
    assert not at.error, [e.value for e in at.error]
    at.button(key=K + "tune_run").click().run()
    _ok(at)
    assert not at.error, [e.value for e in at.error]
    assert any("Best: trial" in s.value and "of 3" in s.value for s in at.success)
    assert "Suite: 4 scenario(s)" in _suite_caption(at)
    assert widget(at, "number_input", K + "trials").value == 3
    # back to Suite: the choice and the files are still there, then another page and back
    _tab(at, "Suite")
    assert at.radio(key=K + "source.suite").value == "uploaded scenario files"
    assert "Suite: 4 scenario(s)" in _suite_caption(at)
    at.switch_page("pages/overview.py")
    at.run()
    _ok(at)
    at.switch_page("pages/tuning.py")
    at.run()
    _ok(at)
    assert at.radio(key=K + "source.suite").value == "uploaded scenario files"
    assert "Suite: 4 scenario(s)" in _suite_caption(at)
    _tab(at, "Auto-tune")
    assert widget(at, "number_input", K + "trials").value == 3
    assert "Suite: 4 scenario(s)" in _suite_caption(at)
    assert not at.error, [e.value for e in at.error]


def test_the_suite_can_be_uploaded_on_auto_tune_too(ui_env):
    at = run_page("tuning", params={"tab": "Auto-tune"})
    _upload_kb(at)
    _suite_uploader(at).set_value([(n, d, "application/json") for n, d in own_scenario_files()])
    at.run()
    _ok(at)
    assert "Suite: 4 scenario(s)" in _suite_caption(at)
    _tab(at, "Suite")
    assert "Suite: 4 scenario(s)" in _suite_caption(at)
    assert at.radio(key=K + "source.suite").value == "uploaded scenario files"


@pytest.mark.parametrize("tab", ["Suite", "Auto-tune"])
def test_an_uploaded_ckf_does_not_run_the_bundled_suite(ui_env, tab):
    at = run_page("tuning", params={"tab": tab})
    _upload_kb(at)
    assert not at.error, [e.value for e in at.error]
    assert any("No suite yet" in i.value and "upload" in i.value for i in at.info), _texts(at)
    assert not [c for c in at.caption if c.value.startswith("Suite: ")]


def test_the_bundled_suite_on_an_uploaded_ckf_is_announced_and_grouped_per_file(ui_env):
    demo = ui_env / "scenarios" / "demo.json"
    doc = json.loads(demo.read_text(encoding="utf-8"))
    doc["expect"] = {"must_include": ["f000", "f003"], "must_exclude": ["f001"]}
    demo.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    at = run_page("tuning", params={"tab": "Suite"})
    _upload_kb(at)
    at.radio(key=K + "source.suite").set_value("bundled suite").run()
    _ok(at)
    assert any("labelled for the bundled sample" in w.value for w in at.warning), _texts(at)
    (err,) = at.error
    assert "This suite does not fit the loaded CKF" in err.value
    assert "demo\\.json**: 3 problem(s)" in err.value
    for line, field, fid in (
        (idx(doc_text(demo), '"f000"'), "expect.must_include[0]", "f000"),
        (idx(doc_text(demo), '"f001"'), "expect.must_exclude[0]", "f001"),
    ):
        assert f"- line {line}, field `{field}`: no fact with id \\'{fid}\\'" in err.value, err.value


def test_problems_of_many_files_are_grouped_and_capped(ui_env):
    from crp_core.errors import FileProblem
    from crp_ui.suite_common import problems_by_file

    problems = [
        FileProblem(i + 2, f"expect.must_include[{i}]", f"no fact with id 'x{i}'", file="a.json") for i in range(30)
    ]
    problems += [FileProblem(3, "expect.must_exclude[0]", "no fact with id 'y'", file="b.json")]
    text = problems_by_file(problems, per_file=5, files=20)
    assert "**a\\.json**: 30 problem(s)" in text
    assert "**b\\.json**: 1 problem(s)" in text
    assert "line 2, field `expect.must_include[0]`" in text
    assert "… and 25 more in a\\.json" in text
    assert "x5\\" not in text and "x4\\" in text


def test_the_suite_sweeps_inputs_survive_tab_and_page_switches(ui_env):
    at = _own_suite_page()
    at.selectbox(key=K + "key").set_value("cdr_min_relevance").run()
    widget(at, "number_input", f"{K}stop.cdr_min_relevance").set_value(0.7)
    widget(at, "number_input", f"{K}count").set_value(5)
    at.run()
    _ok(at)
    _tab(at, "Auto-tune")
    widget(at, "number_input", K + "seed").set_value(9)
    at.selectbox(key=K + "objective").set_value("no_regression").run()
    _tab(at, "Sweep")
    at.selectbox(key="crp.tuning.key").set_value("stale_floor").run()
    at.switch_page("pages/overview.py")
    at.run()
    at.switch_page("pages/tuning.py")
    at.run()
    _ok(at)
    assert at.selectbox(key="crp.tuning.key").value == "stale_floor"
    _tab(at, "Suite")
    assert at.selectbox(key=K + "key").value == "cdr_min_relevance"
    assert widget(at, "number_input", f"{K}stop.cdr_min_relevance").value == pytest.approx(0.7)
    assert widget(at, "number_input", f"{K}count").value == 5
    _tab(at, "Auto-tune")
    assert widget(at, "number_input", K + "seed").value == 9
    assert at.selectbox(key=K + "objective").value == "no_regression"


def test_a_server_started_on_its_own_folder_calls_its_suite_by_that_name(ui_env, monkeypatch):
    """The suite of the server's scenario folder is "bundled" only for the repository's sample; a server
    started on another folder (here the test's, $CRP_SAMPLE_DIR) serves "scenarios on the server" (a
    walk-through read its own four scenarios called the bundled suite)."""
    from crp_ui import suite_source

    at = run_page("tuning", params={"tab": "Suite"})
    _ok(at)
    radio = at.radio(key=K + "source.suite")
    assert radio.options[0] == "scenarios on the server" and radio.value == "bundled suite"
    assert any(c.value.startswith("Suite: ") and "from the scenarios on the server" in c.value for c in at.caption)
    monkeypatch.delenv("CRP_SAMPLE_DIR")
    assert suite_source.source_label(suite_source.BUNDLED) == "bundled suite"
