"""Fixtures of the page tests: ``triage_env`` (the Conflict triage sample of
:mod:`tests.support.conflicts_page` and a temporary decision database; returns the database path)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.conflicts_page import sample_env, write_conflict_sample


@pytest.fixture
def triage_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Sample dir + a temporary decision database (tests never touch a shared one)."""
    return sample_env(tmp_path, monkeypatch, write_conflict_sample)
