"""The Session page under AppTest: a samples folder holding the knowledge base the recorded crprotocol
sessions started from (tests/data/sdk_sessions/kb.json) with a scenario over it, the page once that
snapshot is embedded and its source-type mapping uploaded, and the page's uploaders. The snapshot
carries no vectors of ours: a hashing bag-of-words embedder stands in for MiniLM unless a test asks
for the real model."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.support.audit_trails import KB, MAPPING, SESSIONS
from tests.support.embedders import HashingEmbedder
from tests.support.sdk_pages import ready_page, settle, upload_map

#: a scenario at the sessions' clock (the other pages need one; the Session page reads none)
SCENARIO = {
    "name": "telemetry",
    "query": {"text": "is anonymous usage telemetry enabled by default"},
    "now": "2026-05-28T20:26:40Z",
}


def session_samples(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, minilm: bool = False) -> Path:
    """A samples folder holding kb.json and :data:`SCENARIO`; the dashboard pointed at it with a throw-away
    cache and triage store, and the hashing embedder (``minilm``: the real model instead)."""
    from crp_ui import cache

    d = tmp_path / "samples"
    (d / "scenarios").mkdir(parents=True)
    shutil.copy(KB, d / "kb.json")
    (d / "scenarios" / "telemetry.json").write_text(json.dumps(SCENARIO), encoding="utf-8")
    monkeypatch.setenv("CRP_SAMPLE_DIR", str(d))
    monkeypatch.setenv("CRP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CRP_INSPECT_TRIAGE_DB", str(tmp_path / "triage.sqlite"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    if not minilm:
        monkeypatch.setattr(cache, "EMBEDDER_OVERRIDE", HashingEmbedder("test-hashing", 64))
    return d


def session_page() -> AppTest:
    """The Session page with kb.json active and read under the sessions' mapping."""
    at = ready_page("session")
    return upload_map(at, "mapping.toml", MAPPING.read_bytes())


def uploader(at: AppTest, label_start: str):
    """The page's file uploader whose label starts with ``label_start``."""
    (up,) = [u for u in at.get("file_uploader") if str(u.proto.label).startswith(label_start)]
    return up


def upload_trail(at: AppTest, *files: tuple[str, bytes]) -> AppTest:
    """Drop ``files`` (name, bytes) on the audit uploader; the page reruns with them read."""
    uploader(at, "Audit trail").set_value([(name, data, "application/octet-stream") for name, data in files])
    at.run()
    return settle(at)


def upload_recorded(at: AppTest, name: str, *, anchor: bool = True) -> AppTest:
    """A recorded trail of tests/data/sdk_sessions/ (``multi``, ``tampered``...), with its anchor."""
    trail = f"{name}.audit.jsonl"
    files = [(trail, (SESSIONS / trail).read_bytes())]
    if anchor:
        files.append((trail + ".anchor.json", (SESSIONS / (trail + ".anchor.json")).read_bytes()))
    return upload_trail(at, *files)


def upload_closing(at: AppTest, name: str) -> AppTest:
    """The session's closing snapshot, dropped on the page's second uploader."""
    uploader(at, "The session's closing snapshot").upload(name, (SESSIONS / name).read_bytes(), "application/json")
    at.run()
    return settle(at)


def texts(at: AppTest) -> str:
    """Every Markdown, caption, alert and subheader of the page, joined, Markdown escapes removed."""
    parts = [
        e.value
        for kind in ("markdown", "caption", "success", "error", "warning", "info", "subheader")
        for e in getattr(at, kind)
    ]
    return "\n".join(str(p) for p in parts).replace("\\", "")
