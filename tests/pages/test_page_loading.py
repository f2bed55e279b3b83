"""Loading a CKF in the dashboard (AppTest): a refused or failed load never replaces the active CKF,
and a CKF that needs embedding is prepared in the background (progress, cancel, resume) while the
previous one stays active.

The synthetic samples of tests/support/ carry their own 8-d embeddings (model ``test-model``), so
a CKF uploaded *without* embeddings is embedded by a fake ``test-model`` embedder
(``crp_ui.cache.EMBEDDER_OVERRIDE``), gated so the test decides when the "model" makes progress.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from crp_core.corpus import embedding
from crp_ui import cache
from crp_ui.ckf_state import QUICK_WAIT_S
from tests.support.embedders import GatedEmbedder
from tests.support.pages import open_sidebar
from tests.support.paths import APP, REPO_ROOT
from tests.support.samples import TEST_MODEL, synthetic_ckf_rows

TIMEOUT = 60


def _jsonl(rows: list[dict]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def _plain_rows(n: int, tag: str) -> list[dict]:
    """``n`` facts without embeddings; ``tag`` makes the contents (and so the CKF) unique to a test."""
    rows = []
    for i, r in enumerate(synthetic_ckf_rows(n=n, seed=4)):
        r = {k: v for k, v in r.items() if k not in ("embedding", "embedding_model")}
        r["content"] = f"{tag} fact {i}: service {i % 11} listens on port {3000 + i}."
        rows.append(r)
    return rows


def _app() -> AppTest:
    at = open_sidebar(AppTest.from_file(APP, default_timeout=TIMEOUT))
    at.run()
    _ok(at)
    return at


def _ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def _upload(at: AppTest, name: str, data: bytes) -> None:
    at.sidebar.get("file_uploader")[0].upload(name, data, "application/json")
    at.run()
    _ok(at)


def _active(at: AppTest) -> tuple[int, str]:
    return len(at.session_state["crp.kb"]), at.session_state["crp.ckf_label"]


def _sidebar_errors(at: AppTest) -> str:
    return " ".join(e.value for e in at.sidebar.error)


def _cancel_button(at: AppTest) -> Any:
    hits = [b for b in at.sidebar.button if b.label == "Cancel loading"]
    assert len(hits) == 1, [b.label for b in at.sidebar.button]
    return hits[0]


def _progress_texts(at: AppTest) -> list[str]:
    return [e.proto.text for e in at.sidebar.get("progress")]


@pytest.fixture
def gated(ui_env, monkeypatch: pytest.MonkeyPatch) -> GatedEmbedder:
    """A fake ``test-model`` embedder (8-d, like the scenario's embeddings) that waits for ``gate``."""
    e = GatedEmbedder(TEST_MODEL, 8, timeout=30)
    monkeypatch.setattr(cache, "EMBEDDER_OVERRIDE", e)
    monkeypatch.setattr(embedding, "CACHE_SHARD_ROWS", embedding.DEFAULT_BATCH)  # one chunk = one batch of the fake
    yield e
    e.gate.set()  # never leave a job thread waiting


# ---- refusals -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", ["zero_vector", "other_dimension", "other_model", "not_finite"])
def test_a_ckf_that_cannot_run_never_replaces_the_active_one(ui_env, case):
    at = _app()
    rows = synthetic_ckf_rows(n=4, seed=3)
    if case == "zero_vector":
        rows[1]["embedding"] = [0.0] * 8  # refused by the loader, line 2
    elif case == "not_finite":
        rows[2]["embedding"] = [1.0] * 7 + [1e39]  # not a float32, line 3
    elif case == "other_dimension":
        rows = synthetic_ckf_rows(n=4, dim=16, seed=3)  # loads, but the scenario's vectors are 8-d
    else:
        rows = [dict(r, embedding_model="other-model") for r in rows]  # the scenario is test-model
    _upload(at, f"{case}.jsonl", _jsonl(rows))
    assert _active(at) == (24, "knowledge_base.jsonl")
    errors = _sidebar_errors(at)
    assert "previously loaded CKF stays active" in errors
    if case == "zero_vector":
        assert "line 2" in errors and "`embedding`" in errors
    elif case == "not_finite":
        assert "line 3" in errors and "`embedding`" in errors
    elif case == "other_dimension":
        assert "`query.embedding`" in errors and "dimension 8" in errors
    else:
        assert "`embedding_model`" in errors and "other\\-model" in errors
    # every page still runs on the previous CKF
    at.switch_page("pages/breakdown.py").run()
    _ok(at)
    assert not [e for e in at.main.error if "refused" in e.value]


def test_a_refused_upload_leaves_no_chip_in_the_uploader(ui_env):
    at = _app()
    key_before = at.sidebar.get("file_uploader")[0].key
    rows = synthetic_ckf_rows(n=3, seed=3)
    rows[0]["content"] = ""
    _upload(at, "bad.jsonl", _jsonl(rows))
    up = at.sidebar.get("file_uploader")[0]
    assert up.key != key_before and up.value is None  # a fresh uploader: the refused file is gone
    assert "line 1" in _sidebar_errors(at)


# ---- background embedding -------------------------------------------------------------------------------
def _wait_for(at: AppTest, cond, timeout: float = 30.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        at.run()
        _ok(at)
        if cond():
            return
        time.sleep(0.2)
    raise AssertionError("condition not reached")


def test_embedding_runs_in_the_background_and_survives_reruns_and_page_switches(gated):
    at = _app()
    _upload(at, "plain.jsonl", _jsonl(_plain_rows(600, "bg")))
    pending = at.session_state["crp.ckf_pending"]
    assert pending is not None and pending.label == "plain.jsonl (uploaded)"
    assert _active(at) == (24, "knowledge_base.jsonl")  # the previous CKF stays active meanwhile
    (text,) = _progress_texts(at)
    assert "/ 600 facts" in text
    _cancel_button(at)
    job = cache.jobs().get(pending.key)
    started = cache.jobs().started
    at.run()
    at.switch_page("pages/breakdown.py").run()
    _ok(at)
    assert at.main.get("dataframe")  # the page works on the previous CKF
    at.switch_page("pages/home.py").run()
    assert cache.jobs().get(pending.key) is job and cache.jobs().started == started  # re-attached
    assert job.state == "running"
    gated.gate.set()
    assert job.wait(30) and job.state == "done", job.error
    _wait_for(at, lambda: _active(at)[0] == 600)
    assert _active(at) == (600, "plain.jsonl (uploaded)")
    assert at.session_state["crp.ckf_pending"] is None
    assert gated.texts_encoded == 600  # each fact embedded once, across all those runs
    assert at.session_state["crp.ckf_sample"] is None
    picker = [s for s in at.sidebar.selectbox if s.label == "Knowledge base on the server"][0]
    assert picker.value is None  # the bundled-sample box no longer shows the old sample


def test_cancel_keeps_the_previous_ckf_and_a_new_load_resumes(gated):
    at = _app()
    data = _jsonl(_plain_rows(600, "cancel"))
    _upload(at, "plain.jsonl", data)
    pending = at.session_state["crp.ckf_pending"]
    job = cache.jobs().get(pending.key)
    _cancel_button(at).click().run()
    _ok(at)
    assert at.session_state["crp.ckf_pending"] is None
    assert _active(at) == (24, "knowledge_base.jsonl")
    notes = " ".join(i.value for i in at.sidebar.info)
    assert "cancelled" in notes and "continues from there" in notes
    gated.gate.set()
    assert job.wait(30) and job.state == "cancelled"
    embedded = gated.texts_encoded
    assert 0 < embedded < 600
    _upload(at, "plain.jsonl", data)  # the same file again: a new job, resuming from the cache
    _wait_for(at, lambda: _active(at)[0] == 600)
    assert gated.texts_encoded == 600  # only the remainder was embedded the second time
    assert _active(at) == (600, "plain.jsonl (uploaded)")


def test_the_first_ckf_of_a_session_is_waited_for(ui_env, monkeypatch):
    """A session's first CKF (no previous one to keep): the page waits for it, then shows it."""
    e = GatedEmbedder(TEST_MODEL, 8)
    monkeypatch.setattr(cache, "EMBEDDER_OVERRIDE", e)
    monkeypatch.setattr(embedding, "CACHE_SHARD_ROWS", 64)
    (ui_env / "knowledge_base.jsonl").write_bytes(_jsonl(_plain_rows(300, "first")))
    release = threading.Timer(QUICK_WAIT_S + 2.0, e.gate.set)  # longer than a load waits before going async
    release.start()
    try:
        at = _app()
    finally:
        release.cancel()
        e.gate.set()
    assert _active(at) == (300, "knowledge_base.jsonl")
    assert at.session_state["crp.ckf_pending"] is None
    assert e.texts_encoded == 300
    assert e.batches > 1  # it did wait for the gate
    at.switch_page("pages/home.py").run()
    assert {m.label: m.value for m in at.metric}["facts"] == "300"


# ---- upload limits ---------------------------------------------------------------------------------------
def test_upload_limits_agree_in_one_unit():
    import tomllib

    from crp_core.config import CRPConfig
    from crp_ui import sidebar

    server = tomllib.loads((REPO_ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))["server"]
    limit = CRPConfig().ckf_max_bytes
    assert server["maxUploadSize"] * 2**20 == limit  # Streamlit's server counts maxUploadSize in MiB
    assert sidebar.limit_text(limit) == "200 MiB = 209,715,200 bytes"
    cap = sidebar.browser_upload_cap(limit)
    # the browser counts max_upload_size in 10**6 bytes (2**20 on Windows): it never refuses a file the
    # app accepts, and it lets through at most 1 MB more, which the app refuses with a message
    assert cap * 10**6 >= limit and cap * 2**20 >= limit and (cap - 1) * 10**6 < limit


def test_the_uploader_states_the_limit_and_a_refusal_says_why(ui_env):
    at = _app()
    up = at.sidebar.get("file_uploader")[0]
    assert "at most 200 MiB = 209,715,200 bytes" in up.label
    assert up.proto.max_upload_size_mb == 210
    limit_input = [w for w in at.sidebar.number_input if w.label.startswith("ckf_max_bytes")][0]
    limit_input.set_value(300).run()
    data = _jsonl(synthetic_ckf_rows(n=3, seed=9))
    _upload(at, "big.jsonl", data)
    errors = _sidebar_errors(at)
    assert f"{len(data):,}".replace(",", "\\,") in errors and "300 bytes" in errors
    assert "previously loaded CKF stays active" in errors
    assert _active(at) == (24, "knowledge_base.jsonl")
    assert at.sidebar.get("file_uploader")[0].value is None  # no refused chip left in the uploader
    assert "at most 300 bytes" in at.sidebar.get("file_uploader")[0].label


# ---- the corpus cache key -----------------------------------------------------------------------------
def test_a_reupload_that_changes_only_source_types_or_statuses_is_a_new_corpus(ui_env):
    """The prepared corpus is keyed by every fact field, not only ids, texts and vectors: a re-upload
    that changes a source type or a status must not be served the corpus of the first upload."""
    from crp_core.config import CRPConfig

    at = _app()
    rows = synthetic_ckf_rows(n=6, seed=5)
    rows = [dict(r, source_type="community", status="ACTIVE") for r in rows]
    _upload(at, "same.jsonl", _jsonl(rows))
    assert _active(at) == (6, "same.jsonl (uploaded)"), _sidebar_errors(at)
    first = cache.ready_corpus(at.session_state["crp.kb_fingerprint"], CRPConfig(), at.session_state["crp.kb"])
    assert first is not None and first.kb.facts[0].source_type == "community"
    identity = at.session_state["crp.kb"].fingerprint
    changed = [dict(rows[0], source_type="regulatory", status="STALE")] + rows[1:]
    at.sidebar.get("file_uploader")[0].upload("same.jsonl", _jsonl(changed), "application/json")
    at.run()
    _ok(at)
    kb = at.session_state["crp.kb"]
    second = cache.ready_corpus(at.session_state["crp.kb_fingerprint"], CRPConfig(), kb)
    assert second is not None and second is not first
    assert (second.kb.facts[0].source_type, second.kb.facts[0].status) == ("regulatory", "STALE")
    # what operator decisions are stamped with ignores statuses: the same knowledge, the same identity
    assert kb.fingerprint == identity and at.session_state["crp.kb_identity"] == identity
