"""The dashboard embeds with the model its server was started with (``$CRP_INSPECT_EMBEDDING_MODEL``): a
CKF without vectors and the scenario's texts go through the second real model (all-mpnet-base-v2, 768-d),
the sidebar names its id; an uploaded configuration naming another model is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from crp_core import resolve_model
from tests.support.pages import open_sidebar
from tests.support.paths import APP
from tests.support.second_model import assembled_model

FACTS = [
    ("pw-1", "To reset a forgotten password, open the sign-in page and choose 'Forgot password'."),
    ("pw-2", "Users who cannot remember their password can recover it from the login screen."),
    ("bk-1", "Nightly backups of the customer database are kept for 35 days."),
    ("ck-1", "Preheat the oven to 200 degrees before baking the bread."),
    ("hol-1", "The office is closed on public holidays."),
]


def _samples(folder: Path) -> Path:
    folder.mkdir()
    rows = [
        {"fact_id": i, "content": c, "source_type": "internal", "modified_at": "2026-06-01T00:00:00Z"} for i, c in FACTS
    ]
    (folder / "kb.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    scen = folder / "scenarios"
    scen.mkdir()
    doc = {"name": "pw", "query": {"text": "how do I recover a password I forgot"}, "now": "2026-07-01T00:00:00Z"}
    (scen / "pw.json").write_text(json.dumps(doc), encoding="utf-8")
    return folder


@pytest.mark.model
def test_the_dashboard_embeds_with_the_servers_model(tmp_path, monkeypatch):
    model = assembled_model()
    spec = resolve_model(str(model))
    monkeypatch.setenv("CRP_SAMPLE_DIR", str(_samples(tmp_path / "samples")))
    monkeypatch.setenv("CRP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CRP_INSPECT_TRIAGE_DB", str(tmp_path / "triage.sqlite"))
    monkeypatch.setenv("CRP_INSPECT_EMBEDDING_MODEL", str(model))
    at = open_sidebar(AppTest.from_file(APP, default_timeout=300))
    at.run()
    at.switch_page("pages/envelope.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    captions = " ".join(c.value for c in at.sidebar.caption)
    assert spec.model_id in captions.replace("\\", ""), captions
    packed = " ".join(m.value for m in at.markdown)
    assert "Forgot password" in packed or "recover it from the login screen" in packed


def test_an_uploaded_configuration_naming_another_model_is_refused(ui_env, monkeypatch):
    from crp_ui import config_state

    monkeypatch.delenv(config_state.EMBEDDING_MODEL_ENV, raising=False)
    at = open_sidebar(AppTest.from_function(_load_toml, default_timeout=60))
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    got = [t.value for t in at.text]
    assert got[0].startswith("embedding_model '/srv/other-model': the dashboard embeds with the model") and (
        "all-MiniLM-L6-v2" in got[0]
    )
    assert got[1] == ""  # the current configuration was kept: no model named


def _load_toml() -> None:
    import streamlit as st

    from crp_ui import config_state

    err = config_state.load_config_toml('embedding_model = "/srv/other-model"\n')
    st.text(err or "")
    st.text(config_state.get_config().embedding_model)
