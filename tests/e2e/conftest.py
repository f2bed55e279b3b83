"""End-to-end harness: a real ``streamlit run app.py`` driven by headless Debian Chromium.

Fixtures: ``streamlit_server`` (session: base URL of a server on a free port), ``fresh_server``
(a server of its own), ``browser`` (Playwright Chromium at ``/usr/bin/chromium``, shared by this
folder's tests and closed when the run leaves the folder; never ``playwright install``), ``page``
(a fresh 1400x900 context per test, i.e. its own session).
Helpers, handed out as session fixtures of the same names (a test module cannot import a conftest
reliably): ``open_page(page, url_path)`` goes there, waits until the script run finished and asserts
no exception is shown; ``wait_idle(page)``; ``assert_no_exception(page)``; ``screenshot(page, name)``
writes ``screenshots/<name>.png`` (git-ignored). Every test in this folder is marked ``e2e``.

The server reads the bundled ``sample_ckf/`` when it holds ``knowledge_base.jsonl``; otherwise the
synthetic samples of tests/conftest.py (with their own embeddings). ``CRP_E2E_SAMPLE_DIR`` overrides.
"""
from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Iterator

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--no-first-run"]
VIEWPORT = {"width": 1400, "height": 900}
SCREENSHOTS = REPO_ROOT / "screenshots"
SERVER_START_TIMEOUT = 90.0
#: a first page load may embed the whole sample CKF (model load + embedding on 2 cores)
SCRIPT_TIMEOUT_MS = 240_000


# ---- the root conftest's plain helpers, re-exported -------------------------------------------------
# Both conftest files are imported as the module "conftest" (no __init__.py), and whichever pytest
# loaded last is what ``from conftest import synthetic_ckf_rows`` finds: the e2e one once this folder
# was collected. Re-exporting the root helpers here keeps such imports working either way.
def _load_root_helpers() -> None:
    import importlib.util
    import inspect

    path = REPO_ROOT / "tests" / "conftest.py"
    spec = importlib.util.spec_from_file_location("_crp_tests_root_conftest", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    g = globals()
    for name, value in vars(mod).items():
        if name.startswith("_") or name in g:
            continue
        if inspect.isfunction(value) or isinstance(value, (str, int, float, tuple, frozenset)):
            g[name] = value


_load_root_helpers()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _in_this_folder(item):
            item.add_marker(pytest.mark.e2e)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def e2e_sample_dir(request: pytest.FixtureRequest) -> Path:
    """``$CRP_E2E_SAMPLE_DIR``, else the bundled ``sample_ckf/``, else the synthetic samples."""
    env = os.environ.get("CRP_E2E_SAMPLE_DIR")
    if env:
        return Path(env)
    bundled = REPO_ROOT / "sample_ckf"
    if (bundled / "knowledge_base.jsonl").is_file():
        return bundled
    return request.getfixturevalue("synthetic_sample_dir")


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
            return r.status == 200
    except (urllib.error.URLError, OSError):
        return False


@contextlib.contextmanager
def serve(sample_dir: Path, log_path: Path) -> Iterator[str]:
    """Run ``streamlit run app.py`` headless on a free port for the block; yield its base URL."""
    port = _free_port()
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               CRP_SAMPLE_DIR=str(sample_dir), STREAMLIT_BROWSER_GATHER_USAGE_STATS="false",
               # a throw-away triage store per server: never the repo's ./.crp_triage.sqlite
               CRP_INSPECT_TRIAGE_DB=str(log_path.parent / "triage.sqlite"))
    log = open(log_path, "w", encoding="utf-8")
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
           "--server.port", str(port), "--server.address", "127.0.0.1", "--server.fileWatcherType", "none"]
    proc = subprocess.Popen(cmd, cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while not _healthy(url):
            if proc.poll() is not None:
                pytest.fail(f"streamlit exited with {proc.returncode}:\n{log_path.read_text()[-4000:]}")
            if time.monotonic() > deadline:
                pytest.fail(f"streamlit did not answer within {SERVER_START_TIMEOUT:.0f} s:\n"
                            f"{log_path.read_text()[-4000:]}")
            time.sleep(0.3)
        yield url
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=15)
        log.close()


@pytest.fixture(scope="session")
def streamlit_server(tmp_path_factory: pytest.TempPathFactory, e2e_sample_dir: Path) -> Iterator[str]:
    """One ``streamlit run app.py`` for the whole session; yields its base URL."""
    with serve(e2e_sample_dir, tmp_path_factory.mktemp("e2e") / "streamlit.log") as url:
        yield url


@pytest.fixture
def fresh_server(tmp_path: Path, e2e_sample_dir: Path) -> Iterator[str]:
    """A server of its own (for tests about a server's very first request)."""
    with serve(e2e_sample_dir, tmp_path / "streamlit.log") as url:
        yield url


class _Chromium:
    """One Playwright + Chromium for this folder's tests, started on first use and closed as soon
    as the run leaves the folder (see ``pytest_runtest_teardown``): Playwright's sync API keeps an
    event loop running while it is open, and a later test that starts its own ``sync_playwright()``
    would fail meanwhile."""

    def __init__(self) -> None:
        self._pw = None
        self._browser = None

    def get(self):
        if self._browser is None:
            from playwright.sync_api import sync_playwright

            self._pw = sync_playwright().start()
            try:
                self._browser = self._pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                                         args=CHROMIUM_ARGS)
            except BaseException:
                self.close()
                raise
        return self._browser

    def close(self) -> None:
        browser, pw = self._browser, self._pw
        self._browser = self._pw = None
        try:
            if browser is not None:
                browser.close()
        finally:
            if pw is not None:
                pw.stop()


_CHROMIUM = _Chromium()


def _in_this_folder(item: pytest.Item | None) -> bool:
    return item is not None and HERE in Path(str(item.fspath)).resolve().parents


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None):
    yield  # the test's own fixtures (its browser context) are torn down first
    if _in_this_folder(item) and not _in_this_folder(nextitem):
        _CHROMIUM.close()


@pytest.fixture
def browser() -> object:
    """Headless Debian Chromium through Playwright's sync API (shared by this folder's tests)."""
    if not os.path.exists(CHROMIUM):
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing (.ci/run installs Debian chromium)")
        pytest.skip(f"{CHROMIUM} is missing: apt-get install -y chromium")
    return _CHROMIUM.get()


@pytest.fixture
def page(browser, streamlit_server: str) -> Iterator[object]:
    """A fresh browser context (own session) at 1400x900, pointed at the server."""
    ctx = browser.new_context(viewport=VIEWPORT, base_url=streamlit_server)
    pg = ctx.new_page()
    pg.set_default_timeout(SCRIPT_TIMEOUT_MS)
    try:
        yield pg
    finally:
        ctx.close()


#: placeholders the frontend shows while an element's code is still loading (slow on a busy machine)
SKELETONS = '[data-testid="stSkeleton"], [data-testid="stSkeletonElement"], [data-testid="stAppSkeleton"]'


def _wait_idle(page, timeout_ms: int = SCRIPT_TIMEOUT_MS) -> None:
    """Wait until the script run finished (and stayed finished for a moment: no rerun queued) and
    every element is drawn (no loading skeleton left)."""
    sel = '[data-testid="stApp"][data-test-script-state="notRunning"]'
    for _ in range(3):
        page.wait_for_selector(sel, state="attached", timeout=timeout_ms)
        page.wait_for_timeout(400)
        if page.locator(sel).count() == 1:
            break
    else:
        page.wait_for_selector(sel, state="attached", timeout=timeout_ms)
    page.wait_for_function(f"() => document.querySelectorAll({SKELETONS!r}).length === 0",
                           timeout=timeout_ms)


def _assert_no_exception(page) -> None:
    exc = page.locator('[data-testid="stException"]')
    if exc.count():
        raise AssertionError("the page shows an exception:\n" + exc.first.inner_text()[:3000])


def _open_page(page, url_path: str = "/", timeout_ms: int = SCRIPT_TIMEOUT_MS) -> None:
    """Open ``url_path`` (e.g. ``"/"``, ``"/breakdown?fact=F1"``), wait for the run, assert no exception."""
    page.goto(url_path if url_path.startswith("/") else "/" + url_path)
    _wait_idle(page, timeout_ms)
    _assert_no_exception(page)


def _screenshot(page, name: str, *, full_page: bool = True, max_height: int = 6000) -> Path:
    """Save ``screenshots/<name>.png`` and return its path.

    Streamlit scrolls inside its main container, not the document, so a "full page" shot grows the
    viewport to the content height (capped at ``max_height``) for the shot, then restores it.
    """
    SCREENSHOTS.mkdir(exist_ok=True)
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


# ---- the helpers as fixtures (test modules cannot import a conftest reliably) ---------------------
@pytest.fixture(scope="session")
def open_page():
    """``open_page(page, url_path)``: go, wait for the script run to finish, assert no exception."""
    return _open_page


@pytest.fixture(scope="session")
def wait_idle():
    """``wait_idle(page)``: wait until the script run finished (after a click or an edit)."""
    return _wait_idle


@pytest.fixture(scope="session")
def assert_no_exception():
    """``assert_no_exception(page)``: fail with the exception text if the page shows one."""
    return _assert_no_exception


@pytest.fixture(scope="session")
def screenshot():
    """``screenshot(page, name)``: write ``screenshots/<name>.png``, return its path."""
    return _screenshot
