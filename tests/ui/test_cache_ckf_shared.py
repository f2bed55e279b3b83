"""crp_ui.cache.load_ckf_path / load_ckf_upload: a loaded knowledge base is one object shared by every
session (a resource cache), never a pickled copy unpickled anew per call: a second call with the same
path stamp (or bytes) returns the very same object, and a changed file is read again."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from crp_ui import cache


def _write(path: Path, content: str) -> None:
    row = {
        "fact_id": "f1",
        "content": content,
        "source_type": "official_documentation",
        "ingested_at": "2026-01-01T00:00:00Z",
    }
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")


@pytest.fixture(autouse=True)
def _clear() -> None:
    cache.load_ckf_path.clear()
    cache.load_ckf_upload.clear()


def test_a_server_side_ckf_is_one_shared_object(tmp_path: Path) -> None:
    p = tmp_path / "kb.jsonl"
    _write(p, "The gate opens at 9.")
    first = cache.load_ckf_path(str(p), cache.path_stamp(p), False, 10_000_000)
    again = cache.load_ckf_path(str(p), cache.path_stamp(p), False, 10_000_000)
    assert again is first
    assert first.facts[0].content == "The gate opens at 9."
    _write(p, "The gate opens at 10.")
    os.utime(p, ns=(1, 1))  # a new stamp even when the size and the clock's tick are the same
    changed = cache.load_ckf_path(str(p), cache.path_stamp(p), False, 10_000_000)
    assert changed is not first
    assert changed.facts[0].content == "The gate opens at 10."


def test_an_uploaded_ckf_is_one_shared_object(tmp_path: Path) -> None:
    p = tmp_path / "kb.jsonl"
    _write(p, "The gate opens at 9.")
    data = p.read_bytes()
    first = cache.load_ckf_upload(data, "kb.jsonl", False, 10_000_000)
    assert cache.load_ckf_upload(bytes(data), "kb.jsonl", False, 10_000_000) is first
