"""The dashboard on a crprotocol SDK snapshot under AppTest: a samples folder holding a snapshot (or a CKF
exported from one) with a scenario over it, a page once its background embedding finished, and a
source-type mapping uploaded through the sidebar. The snapshot carries no vectors of ours: a hashing
bag-of-words embedder stands in for MiniLM."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.support.embedders import HashingEmbedder
from tests.support.pages import run_page
from tests.support.paths import TEST_DATA

SDK = TEST_DATA / "sdk"
#: the scenario over supersessions.json: every fact scored, all nine in the envelope, every graph edge drawn
SCENARIO = {
    "name": "sdk",
    "query": {"text": "etcd client port, api gateway rate limit, nightly backup snapshots"},
    "now": "2026-06-01T00:00:00Z",
    "config": {"cdr_min_relevance": -1.0, "envelope_fact_budget": 9, "graph_edge_min": 0.0},
}


def sdk_samples(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ckf: tuple[str, str] | None = None) -> Path:
    """A samples folder holding supersessions.json (or ``ckf``: file name, text) and :data:`SCENARIO`; the
    dashboard pointed at it with a throw-away cache and triage store and the hashing embedder."""
    from crp_ui import cache

    d = tmp_path / "samples"
    (d / "scenarios").mkdir(parents=True)
    if ckf is None:
        shutil.copy(SDK / "supersessions.json", d / "supersessions.json")
    else:
        (d / ckf[0]).write_text(ckf[1], encoding="utf-8")
    (d / "scenarios" / "sdk.json").write_text(json.dumps(SCENARIO), encoding="utf-8")
    monkeypatch.setenv("CRP_SAMPLE_DIR", str(d))
    monkeypatch.setenv("CRP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CRP_INSPECT_TRIAGE_DB", str(tmp_path / "triage.sqlite"))
    monkeypatch.setattr(cache, "EMBEDDER_OVERRIDE", HashingEmbedder("test-hashing", 64))
    return d


def settle(at: AppTest) -> AppTest:
    """Rerun ``at`` until the background embedding of the CKF finished (at most a minute)."""
    end = time.monotonic() + 60
    while (
        "crp.ckf_pending" in at.session_state
        and at.session_state["crp.ckf_pending"] is not None
        and time.monotonic() < end
    ):
        time.sleep(0.2)
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def ready_page(page: str, params: dict[str, str] | None = None) -> AppTest:
    """``pages/<page>.py`` (with the URL ``params``) once the CKF is embedded."""
    return settle(run_page(page, params=params))


def upload_map(at: AppTest, name: str, data: bytes) -> AppTest:
    """Upload a source-type mapping through the sidebar; the snapshot is read again under it."""
    (up,) = [u for u in at.sidebar.get("file_uploader") if str(u.proto.label).startswith("Mapping")]
    up.upload(name, data, "application/toml")
    at.run()
    return settle(at)
