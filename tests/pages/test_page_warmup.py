"""The dashboard warms the embedding model in the background: after the first page run on the bundled
sample (MiniLM vectors, scenarios with their own embeddings, so the run itself embeds nothing), the model
that will embed an edited query is loading or loaded, once, and a later embed uses that same model."""

from __future__ import annotations

import pytest

from crp_core.corpus import embedding
from crp_ui import warmup
from tests.support.pages import run_page
from tests.support.paths import REPO_ROOT


@pytest.mark.model
def test_the_first_run_starts_the_warm_up_and_a_query_edit_reuses_the_model(ui_env, monkeypatch):
    monkeypatch.setenv("CRP_SAMPLE_DIR", str(REPO_ROOT / "sample_ckf"))
    monkeypatch.setattr(embedding, "EMBEDDERS", embedding.EmbedderRegistry())
    monkeypatch.setattr(warmup, "_started", {})
    run_page("overview")
    thread = warmup.started(embedding.MODEL_ID)
    assert thread is not None  # started by the first run, not by a text to embed
    thread.join(120)
    warmed = embedding.embedder_for(embedding.MODEL_ID)
    assert warmed is not None and warmed.loaded and warmed.load_count == 1
    assert warmed.encode_calls == 0  # the warm-up loads the model, it embeds nothing
    model = warmed.encoder
    run_page("overview")  # another session: no second warm-up, no second load
    assert warmup.started(embedding.MODEL_ID) is thread
    warmed.encode(["an edited query"])
    assert warmed.encoder is model and warmed.load_count == 1
