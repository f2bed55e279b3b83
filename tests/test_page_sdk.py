"""The dashboard on a crprotocol SDK snapshot (docs/decisions/sdk-snapshots.md): the Graph draws the
snapshot's given edges, the Conflicts queue says per pair whether SPEC-027 agrees with its superseded_by.

The snapshot carries no vectors of ours: a hashing bag-of-words embedder stands in for MiniLM (the page
logic is what is tested; ``test_sdk_agreement`` runs the real model)."""
from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from page_support import figures, frame_with, run_page
from streamlit.testing.v1 import AppTest
from test_embedding_doubles import HashingEmbedder

from crp_ui import cache

SDK = Path(__file__).parent / "data" / "sdk"


@pytest.fixture
def sdk_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "samples"
    (d / "scenarios").mkdir(parents=True)
    shutil.copy(SDK / "supersessions.json", d / "supersessions.json")
    scen = {"name": "sdk", "query": {"text": "etcd client port, api gateway rate limit, nightly backup snapshots"},
            "now": "2026-06-01T00:00:00Z",
            "config": {"cdr_min_relevance": -1.0, "envelope_fact_budget": 9, "graph_edge_min": 0.0}}
    (d / "scenarios" / "sdk.json").write_text(json.dumps(scen), encoding="utf-8")
    monkeypatch.setenv("CRP_SAMPLE_DIR", str(d))
    monkeypatch.setenv("CRP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CRP_INSPECT_TRIAGE_DB", str(tmp_path / "triage.sqlite"))
    monkeypatch.setattr(cache, "EMBEDDER_OVERRIDE", HashingEmbedder("test-hashing", 64))
    return d


def _ready(page: str) -> AppTest:
    """The page once the background embedding of the snapshot finished."""
    at = run_page(page)
    end = time.monotonic() + 60
    while "crp.ckf_pending" in at.session_state and at.session_state["crp.ckf_pending"] is not None \
            and time.monotonic() < end:
        time.sleep(0.2)
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_graph_draws_the_given_edges(sdk_env):
    at = _ready("graph")
    (fig,) = [f for f in figures(at) if f["layout"]["title"]["text"].startswith("CDGR")]
    (line,) = [t for t in fig["data"] if t.get("name") == "given edge (SDK snapshot)"]
    assert line["line"]["dash"] == "dashdot"
    (hover,) = [t for t in fig["data"] if t.get("name") == "given edge relation"]
    texts = sorted(hover["hovertext"])
    assert "given edge f-backup → f-restore<br>ELABORATION · confidence 0.80" in texts
    assert "given edge f-retention → f-backup<br>CONTRAST · confidence 0.60" in texts
    given = frame_with(at, "a", "b", "relation_type", "confidence", "drawn")
    assert sorted(zip(given["edge_id"], given["relation_type"])) == [
        ("e-1", "ELABORATION"), ("e-2", "CONTRAST"), ("e-3", "SUPERSEDES"), ("e-4", "RELATED")]
    assert len(texts) == int(given["drawn"].sum())


def test_conflicts_queue_shows_sdk_agreement(sdk_env):
    at = _ready("conflicts")
    frame = frame_with(at, "A", "B", "arbitration")
    assert "sdk" in frame.columns
    by_pair = {frozenset((a, b)): v for a, b, v in zip(frame["fact_a"], frame["fact_b"], frame["sdk"])}
    # the rate-limit pair: the SDK superseded f-rate-old by f-rate-new; SPEC-027 keeps f-rate-new (the other is STALE)
    assert by_pair[frozenset(("f-rate-new", "f-rate-old"))] == "SDK: agrees"
    if frozenset(("f-port-new", "f-port-old")) in by_pair:
        assert by_pair[frozenset(("f-port-new", "f-port-old"))] == "SDK silent"
    captions = " ".join(c.value for c in at.caption)
    n_agree = list(frame["sdk"]).count("SDK: agrees")
    n_silent = list(frame["sdk"]).count("SDK silent")
    assert f"{n_agree} agree · 0 disagree · {n_silent} SDK silent" in captions.replace("\\", "")


def test_sidebar_uploader_takes_a_snapshot(sdk_env):
    at = AppTest.from_file(str(Path(__file__).resolve().parent.parent / "app.py"), default_timeout=120)
    at.run()
    up = at.sidebar.get("file_uploader")[0]
    assert "json" in up.proto.type or ".json" in up.proto.type
    up.upload("deployment.json", (SDK / "plain.json").read_bytes(), "application/json")
    at.run()
    end = time.monotonic() + 60
    while at.session_state["crp.ckf_label"] != "deployment.json (uploaded)" and time.monotonic() < end:
        time.sleep(0.2)
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    kb = at.session_state["crp.kb"]
    assert kb.fmt == "sdk" and len(kb) == 4 and kb.imported.integrity == "ok"
