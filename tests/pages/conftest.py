"""Fixtures of the page tests: ``triage_env`` (the Conflict triage sample of
:mod:`tests.support.conflicts_page` and a temporary decision database; returns the database path)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.conflicts_page import write_conflict_sample


@pytest.fixture
def triage_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Sample dir + a temporary decision database (tests never touch a shared one)."""
    d = write_conflict_sample(tmp_path / "samples")
    monkeypatch.setenv("CRP_SAMPLE_DIR", str(d))
    monkeypatch.setenv("CRP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CRP_INSPECT_TRIAGE_DB", str(tmp_path / "triage.sqlite"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return tmp_path / "triage.sqlite"
