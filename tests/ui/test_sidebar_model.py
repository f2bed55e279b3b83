"""The sidebar names the embedding model of the active CKF's vectors (its id as inert code, and its dimension)."""

from __future__ import annotations

import dataclasses

import pytest
from streamlit.testing.v1 import AppTest

from crp_core import load_ckf
from crp_ui import cache
from crp_ui.sidebar_ckf import model_caption
from tests.support.embedders import HashingEmbedder
from tests.support.pages import open_sidebar
from tests.support.paths import APP
from tests.support.samples import TEST_MODEL


def test_the_sidebar_shows_the_active_ckfs_model(ui_env):
    at = open_sidebar(AppTest.from_file(APP, default_timeout=60))
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    captions = [c.value for c in at.sidebar.caption]
    assert f"Embedding model: `{TEST_MODEL}` (8-d)" in captions, captions


def test_the_caption_before_the_corpus_is_ready(ui_env, monkeypatch: pytest.MonkeyPatch):
    kb = load_ckf(ui_env / "knowledge_base.jsonl")
    assert model_caption(kb, None) == f"Embedding model: `{TEST_MODEL}` (8-d, from the CKF)"
    unnamed = dataclasses.replace(kb, embedding_model=None)
    assert model_caption(unnamed, None) == "Embedding model: `not named by the CKF` (8-d, from the CKF)"
    monkeypatch.setattr(cache, "EMBEDDER_OVERRIDE", HashingEmbedder("tiny`model@abc", 8))
    bare = dataclasses.replace(kb, embeddings=None, embedding_model=None)
    assert model_caption(bare, None) == "Embedding model: ``tiny`model@abc``"
