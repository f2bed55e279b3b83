"""Shared test helpers and fixtures, imported as a plain module (``from support import ...``).

The root ``conftest.py`` registers this module as a pytest plugin, so its fixtures are available to
every test; its functions are imported by name.

Synthetic samples (no model loads: every fact and query carries its own embedding, model
``test-model``):

* :func:`synthetic_ckf_rows` - plain fact dicts with deterministic 8-d embeddings around 3 topics;
* :func:`synthetic_scenario` - the matching scenario ``demo``;
* :func:`write_sample_dir` - a bundled-samples folder (``knowledge_base.jsonl``, ``second.jsonl``,
  ``scenarios/demo.json``).

Fixtures: ``sample_dir`` (a fresh samples folder per test), ``synthetic_sample_dir`` (session-wide,
read-only by convention), ``ui_env`` (the dashboard pointed at ``sample_dir`` with a throw-away
embedding cache and triage store, offline).

Browser helpers of the e2e tests (a real ``streamlit run`` driven by Playwright, see
``tests/e2e/conftest.py``): :func:`open_page`, :func:`wait_idle`, :func:`assert_no_exception`,
:func:`screenshot`, :func:`main_text`, :func:`sidebar_text`, :func:`session_page`.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
APP = str(REPO_ROOT / "app.py")
TEST_MODEL = "test-model"
SOURCE_CYCLE = ("official_documentation", "community", "news", "regulatory", "web", "internal")
STATUS_CYCLE = ("ACTIVE", "ACTIVE", "ACTIVE", "STALE", "ACTIVE", "DELETED")


# ---- synthetic samples ------------------------------------------------------------------------------
def synthetic_ckf_rows(n: int = 24, dim: int = 8, seed: int = 0) -> list[dict]:
    """``n`` facts cycling through source types and statuses, embeddings drawn around 3 topics."""
    rng = np.random.default_rng(seed)
    topics = rng.normal(size=(3, dim))
    rows = []
    for i in range(n):
        vec = topics[i % 3] + 0.3 * rng.normal(size=dim)
        rows.append(
            {
                "fact_id": f"f{i:03d}",
                "content": f"Fact {i} about topic {i % 3}: port {2379 + i} is used by service {i % 5}.",
                "source_type": SOURCE_CYCLE[i % len(SOURCE_CYCLE)],
                "status": STATUS_CYCLE[i % len(STATUS_CYCLE)],
                "ingested_at": f"2025-0{1 + i % 9}-15T00:00:00Z",
                "embedding": [round(float(x), 6) for x in vec],
                "embedding_model": TEST_MODEL,
            }
        )
    return rows


def synthetic_scenario(dim: int = 8, seed: int = 0) -> dict:
    """The scenario ``demo``: its query and sub-queries point at the topics of :func:`synthetic_ckf_rows`."""
    topics = np.random.default_rng(seed).normal(size=(3, dim))
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


# ---- fixtures ----------------------------------------------------------------------------------------
@pytest.fixture
def sample_dir(tmp_path: Path) -> Path:
    """A fresh synthetic samples folder for this test."""
    return write_sample_dir(tmp_path / "samples")


@pytest.fixture(scope="session")
def synthetic_sample_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Session-wide copy of the synthetic samples folder (read-only by convention)."""
    return write_sample_dir(tmp_path_factory.mktemp("synthetic") / "samples")


@pytest.fixture
def ui_env(sample_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point the dashboard at ``sample_dir`` with a throw-away cache and triage store; returns the folder."""
    monkeypatch.setenv("CRP_SAMPLE_DIR", str(sample_dir))
    monkeypatch.setenv("CRP_CACHE_DIR", str(tmp_path / "cache"))
    # operator decisions go to a throw-away store: a ./.crp_triage.sqlite left in the repo must
    # never feed its decisions into the page tests
    monkeypatch.setenv("CRP_INSPECT_TRIAGE_DB", str(tmp_path / "triage.sqlite"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    return sample_dir


# ---- browser helpers (e2e) -----------------------------------------------------------------------------
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
VIEWPORT = {"width": 1400, "height": 900}
#: where :func:`screenshot` writes (git-ignored); ``$CRP_E2E_SCREENSHOTS`` overrides
SCREENSHOTS = Path(os.environ.get("CRP_E2E_SCREENSHOTS") or REPO_ROOT / "screenshots")
#: a first page load may embed the whole sample CKF (model load + embedding on 2 cores)
SCRIPT_TIMEOUT_MS = 240_000
#: the app while no script run is going on
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
#: placeholders the frontend shows while an element's code is still loading (slow on a busy machine)
SKELETONS = '[data-testid="stSkeleton"], [data-testid="stSkeletonElement"], [data-testid="stAppSkeleton"]'


def wait_idle(page: Any, timeout_ms: int = SCRIPT_TIMEOUT_MS) -> None:
    """Wait until the script run finished (and stayed finished for a moment: no rerun queued) and
    every element is drawn (no loading skeleton left)."""
    for _ in range(3):
        page.wait_for_selector(IDLE, state="attached", timeout=timeout_ms)
        page.wait_for_timeout(400)
        if page.locator(IDLE).count() == 1:
            break
    else:
        page.wait_for_selector(IDLE, state="attached", timeout=timeout_ms)
    page.wait_for_function(f"() => document.querySelectorAll({SKELETONS!r}).length === 0", timeout=timeout_ms)


def assert_no_exception(page: Any) -> None:
    """Fail with the exception text if the page shows one."""
    exc = page.locator('[data-testid="stException"]')
    if exc.count():
        raise AssertionError("the page shows an exception:\n" + exc.first.inner_text()[:3000])


def open_page(page: Any, url_path: str = "/", timeout_ms: int = SCRIPT_TIMEOUT_MS) -> None:
    """Open ``url_path`` (e.g. ``"/"``, ``"/breakdown?fact=F1"``), wait for the run, assert no exception."""
    page.goto(url_path if url_path.startswith("/") else "/" + url_path)
    wait_idle(page, timeout_ms)
    assert_no_exception(page)


def main_text(page: Any) -> str:
    """The text of the main area (the page, without the sidebar)."""
    return page.locator('[data-testid="stMain"]').inner_text()


def sidebar_text(page: Any) -> str:
    """The text of the sidebar (navigation and the shared widgets)."""
    return page.locator('[data-testid="stSidebar"]').inner_text()


def screenshot(page: Any, name: str, *, full_page: bool = True, max_height: int = 6000) -> Path:
    """Save ``<SCREENSHOTS>/<name>.png`` and return its path.

    Streamlit scrolls inside its main container, not the document, so a "full page" shot grows the
    viewport to the content height (capped at ``max_height``) for the shot, then restores it.
    """
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    size = page.viewport_size
    if full_page and size:
        height = page.evaluate("""() => Math.max(...[...document.querySelectorAll(
            '[data-testid="stMain"], [data-testid="stSidebarContent"]')].map(e => e.scrollHeight), 0)""")
        if height > size["height"]:
            page.set_viewport_size({"width": size["width"], "height": min(int(height) + 40, max_height)})
            page.wait_for_timeout(500)
    try:
        page.screenshot(path=str(path))
    finally:
        if size:
            page.set_viewport_size(size)
    return path


@contextlib.contextmanager
def session_page(browser: Any, base_url: str) -> Iterator[Any]:
    """A page in a browser context of its own (so a Streamlit session of its own) at 1400x900."""
    ctx = browser.new_context(viewport=VIEWPORT, base_url=base_url)
    try:
        pg = ctx.new_page()
        pg.set_default_timeout(SCRIPT_TIMEOUT_MS)
        yield pg
    finally:
        ctx.close()
