"""End-to-end harness: a real ``streamlit run app.py`` driven by headless Debian Chromium.

Fixtures: ``e2e_sample_dir``, ``streamlit_server`` (session: base URL of a server on a free port),
``fresh_server`` (a server of its own, for tests about a server's very first request),
``hostile_server`` (a server on the hostile-id samples of tests/data/hostile_ui/) and
``hostile_samples`` (that module), ``browser``
(Playwright Chromium at ``/usr/bin/chromium``, shared by this folder's tests and closed when the run
leaves the folder; never ``playwright install``), ``page`` (a fresh 1400x900 context per test, i.e.
its own session). The browser helpers (``open_page``, ``wait_idle``, ``assert_no_exception``,
``screenshot``, ...) are plain functions of ``tests/support/browser.py``. Every test in this folder is marked
``e2e``.

The server reads the bundled ``sample_ckf/`` when it holds ``knowledge_base.jsonl``; otherwise the
synthetic samples of tests/support/samples.py (with their own embeddings). ``CRP_E2E_SAMPLE_DIR`` overrides.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, session_page, stop_group
from tests.support.paths import REPO_ROOT

HERE = Path(__file__).resolve().parent
SERVER_START_TIMEOUT = 90.0


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test of this folder ``e2e``."""
    for item in items:
        if _in_this_folder(item):
            item.add_marker(pytest.mark.e2e)


def _free_port() -> int:
    """A TCP port on the loopback interface that nothing listens on right now."""
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
    """True once the server at ``url`` answers its health check."""
    try:
        with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
            return r.status == 200
    except (urllib.error.URLError, OSError):
        return False


@contextlib.contextmanager
def serve(sample_dir: Path, log_path: Path) -> Iterator[str]:
    """Run ``streamlit run app.py`` headless on a free port for the block; yield its base URL."""
    port = _free_port()
    env = dict(
        os.environ,
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        CRP_SAMPLE_DIR=str(sample_dir),
        STREAMLIT_BROWSER_GATHER_USAGE_STATS="false",
        # a throw-away triage store per server: never the repo's ./.crp_triage.sqlite
        CRP_INSPECT_TRIAGE_DB=str(log_path.parent / "triage.sqlite"),
    )
    log = open(log_path, "w", encoding="utf-8")
    cmd = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        "app.py",
        "--server.headless",
        "true",
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        "--server.fileWatcherType",
        "none",
    ]
    proc = subprocess.Popen(
        cmd,
        cwd=REPO_ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while not _healthy(url):
            if proc.poll() is not None:
                pytest.fail(f"streamlit exited with {proc.returncode}:\n{log_path.read_text()[-4000:]}")
            if time.monotonic() > deadline:
                pytest.fail(
                    f"streamlit did not answer within {SERVER_START_TIMEOUT:.0f} s:\n{log_path.read_text()[-4000:]}"
                )
            time.sleep(0.3)
        yield url
    finally:
        stop_group(proc)
        log.close()


@pytest.fixture(scope="session")
def streamlit_server(tmp_path_factory: pytest.TempPathFactory, e2e_sample_dir: Path) -> Iterator[str]:
    """One ``streamlit run app.py`` for the whole session; yields its base URL."""
    with serve(e2e_sample_dir, tmp_path_factory.mktemp("e2e") / "streamlit.log") as url:
        yield url


def load_hostile_samples() -> Any:
    """The module tests/data/hostile_ui/hostile_samples.py (it is data, not a package)."""
    import importlib.util

    path = REPO_ROOT / "tests" / "data" / "hostile_ui" / "hostile_samples.py"
    spec = importlib.util.spec_from_file_location("crp_hostile_samples", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def hostile_samples() -> Any:
    """The hostile-id sample module (its ids and strings, for the assertions)."""
    return load_hostile_samples()


@pytest.fixture(scope="module")
def hostile_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server of its own on the hostile-id samples of tests/data/hostile_ui/hostile_samples.py."""
    hostile = load_hostile_samples()
    d = tmp_path_factory.mktemp("hostile_ui")
    with serve(hostile.write_hostile_samples(d / "samples"), d / "streamlit.log") as url:
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
                self._browser = self._pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
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
def browser() -> Any:
    """Headless Debian Chromium through Playwright's sync API (shared by this folder's tests)."""
    if not os.path.exists(CHROMIUM):
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing (.ci/run installs Debian chromium)")
        pytest.skip(f"{CHROMIUM} is missing: apt-get install -y chromium")
    return _CHROMIUM.get()


@pytest.fixture
def page(browser: Any, streamlit_server: str) -> Iterator[Any]:
    """A fresh browser context (own session) at 1400x900, pointed at the server."""
    with session_page(browser, streamlit_server) as pg:
        yield pg
