"""Shared pytest fixtures (additive and stable: other test files rely on these names).

* ``synthetic_ckf_rows(n, dim, seed)`` - plain fact dicts with deterministic embeddings.
* ``sample_dir`` / ``synthetic_sample_dir`` (session) - a temporary bundled-samples folder (``knowledge_base.jsonl`` + ``scenarios/``)
  whose facts and scenario carry their own embeddings (model ``test-model``): no model loads.
* ``make_ckf_rows`` (session) - the function above, as a fixture.
* ``ui_env`` - points the dashboard at ``sample_dir`` (``CRP_SAMPLE_DIR``) and at a temporary
  embedding/index cache (``CRP_CACHE_DIR``), offline.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
TEST_MODEL = "test-model"
SOURCE_CYCLE = ("official_documentation", "community", "news", "regulatory", "web", "internal")
STATUS_CYCLE = ("ACTIVE", "ACTIVE", "ACTIVE", "STALE", "ACTIVE", "DELETED")

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def synthetic_ckf_rows(n: int = 24, dim: int = 8, seed: int = 0) -> list[dict]:
    """``n`` facts cycling through source types and statuses, embeddings drawn around 3 topics."""
    rng = np.random.default_rng(seed)
    topics = rng.normal(size=(3, dim))
    rows = []
    for i in range(n):
        vec = topics[i % 3] + 0.3 * rng.normal(size=dim)
        rows.append({
            "fact_id": f"f{i:03d}",
            "content": f"Fact {i} about topic {i % 3}: port {2379 + i} is used by service {i % 5}.",
            "source_type": SOURCE_CYCLE[i % len(SOURCE_CYCLE)],
            "status": STATUS_CYCLE[i % len(STATUS_CYCLE)],
            "ingested_at": f"2025-0{1 + i % 9}-15T00:00:00Z",
            "embedding": [round(float(x), 6) for x in vec],
            "embedding_model": TEST_MODEL,
        })
    return rows


def synthetic_scenario(dim: int = 8, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    topics = np.random.default_rng(seed).normal(size=(3, dim))
    del rng
    return {
        "name": "demo",
        "description": "synthetic scenario for the UI tests",
        "query": {"text": "Which ports are used?", "embedding": [float(x) for x in topics[0]]},
        "now": "2025-10-01T00:00:00Z",
        "sub_queries": [
            {"id": "sq1", "text": "client ports", "label": "clients", "embedding": [float(x) for x in topics[0]]},
            {"id": "sq2", "text": "peer ports", "embedding": [float(x) for x in topics[1]]},
            {"id": "sq3", "text": "metrics ports", "embedding": [float(x) for x in topics[2]]},
        ],
        "addressed": [{"id": "sq1", "depth_weight": 0.7, "window": 1}],
        "prior_outputs": ["Fact 0 about topic 0: port 2379 is used by service 0."],
        "fanout_width": 0,
        "embedding_model": TEST_MODEL,
    }


def write_sample_dir(d: Path) -> Path:
    """Write the synthetic bundled-samples folder into ``d`` (created)."""
    (d / "scenarios").mkdir(parents=True)
    with open(d / "knowledge_base.jsonl", "w", encoding="utf-8") as fh:
        for r in synthetic_ckf_rows():
            fh.write(json.dumps(r) + "\n")
    with open(d / "second.jsonl", "w", encoding="utf-8") as fh:
        for r in synthetic_ckf_rows(n=9, seed=1):
            fh.write(json.dumps(r) + "\n")
    (d / "scenarios" / "demo.json").write_text(json.dumps(synthetic_scenario(), indent=1), encoding="utf-8")
    return d


@pytest.fixture
def sample_dir(tmp_path: Path) -> Path:
    return write_sample_dir(tmp_path / "samples")


@pytest.fixture(scope="session")
def synthetic_sample_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Session-wide copy of the synthetic samples folder (read-only by convention)."""
    return write_sample_dir(tmp_path_factory.mktemp("synthetic") / "samples")


@pytest.fixture
def ui_env(sample_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CRP_SAMPLE_DIR", str(sample_dir))
    monkeypatch.setenv("CRP_CACHE_DIR", str(tmp_path / "cache"))
    # operator decisions go to a throw-away store: a ./.crp_triage.sqlite left in the repo must
    # never feed its decisions into the page tests
    monkeypatch.setenv("CRP_INSPECT_TRIAGE_DB", str(tmp_path / "triage.sqlite"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    return sample_dir


@pytest.fixture(autouse=True)
def _apptest_uses_st_navigation(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``AppTest`` honour ``st.navigation`` on every run.

    ``AppTest`` resets ``PagesManager.uses_pages_directory`` before each run, and because a
    ``pages/`` folder exists it re-enters the legacy folder mode, so from the second run on it would
    execute the page file alone (no ``app.py``, no sidebar). The real server leaves that mode for
    good at the first ``st.navigation`` call; this does the same for tests.
    """
    try:
        from streamlit.runtime.pages_manager import PagesManager
    except ImportError:  # pragma: no cover - streamlit missing: nothing to patch
        return
    original = PagesManager.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    monkeypatch.setattr(PagesManager, "__init__", init)


@pytest.fixture(scope="session")
def make_ckf_rows():
    """``make_ckf_rows(n=24, dim=8, seed=0)``: the synthetic fact dicts (test modules cannot
    import a conftest reliably, so helpers are handed out as fixtures)."""
    return synthetic_ckf_rows
