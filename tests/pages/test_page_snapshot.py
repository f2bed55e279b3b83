"""Share snapshot / Open snapshot under AppTest: a snapshot taken on one server opens the same view on
another whose triage log is empty (the same numbers, the snapshot's decision applied without being
written), and the refusals (another KB, a malformed file, a file too large); what a link does not carry."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from crp_core.triage import Decision, DecisionStore
from crp_ui.snapshot import K_LAST, UPLOAD_KEY
from tests.support.pages import run_page


def _record(db: Path, *decisions: Decision) -> None:
    with DecisionStore(str(db), create=True) as store:
        for d in decisions:
            store.record(d)


def _numbers(at: AppTest) -> list[tuple[str, str]]:
    """Every metric of the page (label, value): what a viewer reads off the Overview."""
    return [(m.label, str(m.value)) for m in at.metric]


def _open(at: AppTest, data: bytes, name: str = "snap.json") -> AppTest:
    up = [u for u in at.sidebar.file_uploader if u.key == UPLOAD_KEY]
    assert len(up) == 1, [u.key for u in at.sidebar.file_uploader]
    up[0].upload(name, data, "application/json")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _errors(at: AppTest) -> str:
    return " ".join(e.value for e in at.sidebar.error)


def _notice(at: AppTest) -> str:
    return " ".join(w.value for w in at.sidebar.warning if "This link does not carry" in w.value)


@pytest.fixture
def taken(triage_env: Path) -> tuple[bytes, list[tuple[str, str]]]:
    """A snapshot of the Overview with a config edit and an operator's override, and the page's numbers."""
    _record(triage_env, Decision.override("E1", "E2", winner="E2", operator="fay"))
    at = run_page("overview", params={"cfg.envelope_fact_budget": "3"})
    data = at.session_state[K_LAST]
    assert isinstance(data, bytes)
    notice = _notice(at)
    assert (
        "1 triage decision of this server" in notice and "opens the link on this server has those decisions" in notice
    )
    return data, _numbers(at)


def test_a_snapshot_opens_the_same_numbers_on_a_server_with_another_triage_log(taken, tmp_path, monkeypatch):
    data, numbers = taken
    doc = json.loads(data)
    assert doc["config"] == {"envelope_fact_budget": 3}
    assert [(d["fact_a"], d["fact_b"], d["kind"], d["winner"], d["operator"]) for d in doc["decisions"]] == [
        ("E1", "E2", "override", "E2", "fay")
    ]
    assert doc["view"]["page"] == "overview" and doc["kb"]["origin"] == "sample"
    other = tmp_path / "other.sqlite"
    monkeypatch.setenv("CRP_INSPECT_TRIAGE_DB", str(other))
    fresh = run_page("overview")
    assert _numbers(fresh) != numbers  # the edit and the decision change what the page shows
    _open(fresh, data)
    assert _errors(fresh) == ""
    assert _numbers(fresh) == numbers
    shown = " ".join(i.value for i in fresh.sidebar.info)
    assert "decisions of the snapshot" in shown and "not written to this server" in shown
    assert not other.exists()  # nothing recorded in this server's triage log


def test_a_snapshot_of_another_kb_is_refused_naming_both(taken, tmp_path):
    data, _numbers_shown = taken
    doc = json.loads(data)
    doc["kb"]["fingerprint"] = "f" * 64
    doc["kb"]["origin"] = "upload"
    doc["kb"]["name"] = "other.jsonl"
    at = _open(run_page("overview", params={"cfg.envelope_fact_budget": "5"}), json.dumps(doc).encode())
    err = _errors(at)
    assert "taken on KB other" in err and "fingerprint ffffffffffffffff" in err and "the loaded KB is" in err
    assert at.session_state["crp.config"].envelope_fact_budget == 5  # nothing changed


@pytest.mark.parametrize(
    ("mutate", "expect"),
    [
        (lambda d: d["config"].update({"no_such_key": 1}), "field 'config'"),
        (lambda d: d["decisions"][0].update({"kind": "shred"}), "field 'decisions[0].kind'"),
        (lambda d: d.update({"version": 9}), "field 'version'"),
        (lambda d: d["view"].update({"params": {"tab": 5}}), "field 'view.params.tab'"),
    ],
)
def test_a_malformed_snapshot_is_refused_with_its_line_and_field(taken, mutate: Any, expect: str):
    data, _shown = taken
    doc = json.loads(data)
    mutate(doc)
    at = _open(run_page("overview"), json.dumps(doc, indent=2).encode())
    err = _errors(at).replace("\\", "")
    assert "Snapshot refused" in err and expect in err and "line " in err, err


def test_a_snapshot_that_is_not_json_or_too_large_is_refused(ui_env):
    at = _open(run_page("overview"), b'{"format": "crp-inspect.view-snapshot",\n "version": 1,,}')
    assert "line 2" in _errors(at)
    at = _open(at, b" " * (4 * 1024 * 1024 + 1), "big.json")
    assert "more than the 4194304" in _errors(at)


def test_a_snapshot_naming_a_bundled_sample_of_another_content_leaves_the_active_kb(tmp_path, monkeypatch):
    """The snapshot names bundled sample b.jsonl, whose content on this server is not the snapshot's KB:
    refused naming both fingerprints, and the active KB (a.jsonl) stays loaded (nothing changes)."""
    from tests.support.samples import synthetic_ckf_rows, synthetic_scenario

    d = tmp_path / "samples"
    (d / "scenarios").mkdir(parents=True)
    rows = synthetic_ckf_rows()
    (d / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    rows[0]["content"] = rows[0]["content"] + " (edited on this server)"
    (d / "b.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (d / "scenarios" / "demo.json").write_text(json.dumps(synthetic_scenario()), encoding="utf-8")
    monkeypatch.setenv("CRP_SAMPLE_DIR", str(d))
    monkeypatch.setenv("CRP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CRP_INSPECT_TRIAGE_DB", str(tmp_path / "t.sqlite"))
    at = run_page("overview")
    assert at.session_state["crp.ckf_sample"] == "a.jsonl"
    doc = json.loads(at.session_state[K_LAST])
    assert doc["kb"]["origin"] == "sample" and doc["kb"]["name"] == "a.jsonl"
    doc["kb"]["name"] = "b.jsonl"  # a's fingerprint under b's name
    _open(at, json.dumps(doc).encode())
    err = _errors(at).replace("\\", "")
    assert "taken on KB b.jsonl (bundled sample)" in err and "this server's bundled sample b.jsonl" in err
    assert at.session_state["crp.ckf_sample"] == "a.jsonl"
