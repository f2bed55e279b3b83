"""Fixtures of the crp_core tests: ``ckf`` (the triage CLI's test CKF, :data:`tests.support.triage_cli.FACTS`,
written to a JSONL file; used by the CLI and triage tests)."""

from __future__ import annotations

import json

import pytest

from tests.support.triage_cli import FACTS


@pytest.fixture
def ckf(tmp_path):
    path = tmp_path / "kb.jsonl"
    path.write_text("".join(json.dumps({**f, "embedding_model": "test-model"}) + "\n" for f in FACTS))
    return str(path)
