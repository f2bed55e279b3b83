"""Browser helpers of the e2e tests (a real ``streamlit run`` driven by Playwright, see
``tests/e2e/conftest.py``): :func:`open_page`, :func:`wait_idle`, :func:`assert_no_exception`,
:func:`screenshot`, :func:`main_text`, :func:`sidebar_text`, :func:`session_page`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.support.paths import REPO_ROOT

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
#: a first page load may embed the whole sample CKF (model load + embedding)
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
def session_page(browser: Any, base_url: str, **context: Any) -> Iterator[Any]:
    """A page in a browser context of its own (so a Streamlit session of its own) at 1400x900; ``context``:
    more options of the context (``extra_http_headers``, ``http_credentials``)."""
    ctx = browser.new_context(viewport=VIEWPORT, base_url=base_url, **context)
    try:
        pg = ctx.new_page()
        pg.set_default_timeout(SCRIPT_TIMEOUT_MS)
        yield pg
    finally:
        ctx.close()


def stop_group(proc: Any) -> None:
    """Stop a child started with ``start_new_session=True`` and everything it started: SIGTERM to its
    process group, SIGKILL after 15 s."""
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=15)
