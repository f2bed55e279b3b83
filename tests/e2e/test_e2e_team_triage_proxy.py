"""Triage as a team behind a real reverse proxy, on PostgreSQL: Debian nginx with basic auth passes the
user it authenticated in ``X-Forwarded-Email`` (``proxy_set_header`` replaces whatever the browser sent) to
a ``streamlit run`` in ``proxy`` mode listening on 127.0.0.1 only, whose decisions live in a throw-away
PostgreSQL database (tests/support/postgres.py). Two browser contexts log in as two operators: the
concurrent-decision refusal and its confirm, claims handing out different pairs, a viewer's read-only
page, and a header set by the browser itself ignored. Skipped without nginx or PostgreSQL binaries (under
CI, where .ci/run installs them, failed).
Screenshots at 1400x900 in ``$CRP_E2E_SCREENSHOTS``."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from tests.e2e.conftest import SERVER_START_TIMEOUT
from tests.support.browser import main_text, open_page, screenshot, session_page, stop_group, wait_idle
from tests.support.e2e_conflicts import metric, until
from tests.support.paths import REPO_ROOT
from tests.support.postgres import free_port, postgres_server  # noqa: F401  postgres_server: a fixture

NGINX = "/usr/sbin/nginx"
PAIR = "k8s-0026|k8s-0027"
USERS = {"alice@example.org": "a-pass", "bob@example.org": "b-pass", "vic@example.org": "v-pass"}
TEAM = """identity = "proxy"
proxy_header = "X-Forwarded-Email"
refresh_seconds = 2.0

[roles]
default = "operator"
viewer = ["vic@example.org"]
"""
NGINX_CONF = """worker_processes 1;
daemon off;
{user}
error_log {d}/error.log;
pid {d}/nginx.pid;
events {{ worker_connections 256; }}
http {{
    access_log {d}/access.log;
    client_body_temp_path {d}/tmp-body;
    proxy_temp_path {d}/tmp-proxy;
    fastcgi_temp_path {d}/tmp-fastcgi;
    uwsgi_temp_path {d}/tmp-uwsgi;
    scgi_temp_path {d}/tmp-scgi;
    map $http_upgrade $connection_upgrade {{ default upgrade; '' close; }}
    server {{
        listen 127.0.0.1:{port};
        auth_basic "crp-inspect";
        auth_basic_user_file {d}/htpasswd;
        location / {{
            proxy_pass http://127.0.0.1:{upstream};
            proxy_http_version 1.1;
            proxy_set_header Host $host;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
            # the authenticated user, replacing any value the browser sent
            proxy_set_header X-Forwarded-Email $remote_user;
            proxy_read_timeout 3600s;
        }}
    }}
}}
"""


@contextlib.contextmanager
def _process(cmd: list[str], log: Path, env: dict[str, str] | None = None) -> Iterator[subprocess.Popen[bytes]]:
    with open(log, "w", encoding="utf-8") as out:
        proc = subprocess.Popen(
            cmd,
            cwd=REPO_ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            yield proc
        finally:
            stop_group(proc)


def _wait(ok: Any, proc: subprocess.Popen[bytes], log: Path, what: str) -> None:
    deadline = time.monotonic() + SERVER_START_TIMEOUT
    while not ok():
        if proc.poll() is not None:
            pytest.fail(f"{what} exited with {proc.returncode}:\n{log.read_text()[-4000:]}")
        if time.monotonic() > deadline:
            pytest.fail(f"{what} did not answer:\n{log.read_text()[-4000:]}")
        time.sleep(0.3)


def _answers(url: str, status: int) -> bool:
    """The server at ``url`` is up and answers ``status`` (nginx: 401 without credentials)."""
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return bool(r.status == status)
    except urllib.error.HTTPError as exc:
        return exc.code == status
    except OSError:
        return False


@pytest.fixture(scope="module")
def proxied(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, e2e_sample_dir: Path
) -> Iterator[str]:
    """nginx (basic auth) -> streamlit (proxy mode, 127.0.0.1) -> PostgreSQL; yields nginx's URL."""
    if not os.access(NGINX, os.X_OK):
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):  # .ci/run installs it
            pytest.fail(f"{NGINX} is missing under CI")
        pytest.skip(f"{NGINX} is missing: apt-get install -y nginx (under CI this fails)")
    database = request.getfixturevalue("postgres_server").new_database()
    d = tmp_path_factory.mktemp("proxied")
    (d / "team.toml").write_text(TEAM, encoding="utf-8")
    (d / "htpasswd").write_text("".join(f"{u}:{{PLAIN}}{p}\n" for u, p in USERS.items()), encoding="utf-8")
    st_port, nginx_port = free_port(), free_port()
    (d / "nginx.conf").write_text(
        NGINX_CONF.format(d=d, port=nginx_port, upstream=st_port, user="user root;" if os.geteuid() == 0 else ""),
        encoding="utf-8",
    )
    env = dict(
        os.environ,
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        CRP_SAMPLE_DIR=str(e2e_sample_dir),
        STREAMLIT_BROWSER_GATHER_USAGE_STATS="false",
        CRP_INSPECT_TRIAGE_DB=database,
        CRP_INSPECT_TEAM=str(d / "team.toml"),
    )
    streamlit = [
        sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
        "--server.port", str(st_port), "--server.address", "127.0.0.1", "--server.fileWatcherType", "none",
    ]  # fmt: skip
    with _process(streamlit, d / "streamlit.log", env) as st_proc:
        _wait(
            lambda: _answers(f"http://127.0.0.1:{st_port}/_stcore/health", 200),
            st_proc,
            d / "streamlit.log",
            "streamlit",
        )
        with _process([NGINX, "-p", str(d), "-c", str(d / "nginx.conf")], d / "nginx.out") as ng:
            url = f"http://127.0.0.1:{nginx_port}"
            _wait(lambda: _answers(url + "/", 401), ng, d / "error.log", "nginx")
            yield url
    shutil.rmtree(d, ignore_errors=True)


@contextlib.contextmanager
def logged_in(browser: Any, base_url: str, user: str, headers: dict[str, str] | None = None) -> Iterator[Any]:
    """A page in a context of its own, logged in to nginx as ``user`` (basic auth)."""
    credentials = {"username": user, "password": USERS[user]}
    with session_page(browser, base_url, http_credentials=credentials, extra_http_headers=headers or {}) as pg:
        yield pg


def _open_pair(pg: Any, pair: str = PAIR) -> None:
    open_page(pg, f"/conflicts?scenario=etcd_upgrade.json&pair={quote(pair)}")
    if "k8s-0026" not in main_text(pg):
        pytest.skip("the server does not serve the bundled sample_ckf/ (k8s-0026 / k8s-0027)")


def test_two_operators_behind_nginx_on_postgresql(browser, proxied):
    # Bob's browser sends X-Forwarded-Email itself, claiming to be Alice: nginx replaces it with Bob
    forged = {"X-Forwarded-Email": "alice@example.org"}
    with (
        logged_in(browser, proxied, "alice@example.org") as alice,
        logged_in(browser, proxied, "bob@example.org", forged) as bob,
    ):
        _open_pair(alice)
        _open_pair(bob)
        assert "Recording as alice@example.org (the X-Forwarded-Email header) · role operator." in main_text(alice)
        assert "Recording as bob@example.org (the X-Forwarded-Email header) · role operator." in main_text(bob)
        # the concurrent-decision refusal: both have the pair open, Alice records first
        alice.get_by_text("Dismiss: not a conflict", exact=True).click()
        wait_idle(alice)
        bob.get_by_text("Override the winner", exact=True).click()
        wait_idle(bob)
        bob.get_by_test_id("stForm").get_by_test_id("stSelectbox").click()
        bob.get_by_role("option", name=re.compile(r"^A · k8s-0026$")).click()
        alice.get_by_role("button", name="Record decision").click()
        alice.get_by_text(re.compile(r"^Recorded decision #1 on k8s-0026 ↔ k8s-0027: dismissed")).wait_for()
        bob.get_by_role("button", name="Record decision").click()
        refusal = bob.get_by_text(re.compile(r"^Not recorded: this pair changed after the form was drawn"))
        refusal.wait_for()
        assert "alice@example.org (operator, dashboard) recorded decision #1" in main_text(bob)
        refusal.scroll_into_view_if_needed()
        screenshot(bob, "proxy_refusal", full_page=False)
        bob.get_by_role("button", name="Review and confirm: record mine over #1").click()
        bob.get_by_text(re.compile(r"^Recorded decision #2 on k8s-0026 ↔ k8s-0027: override: k8s-0026 wins")).wait_for()
        # claims: two operators, two different pairs
        claimed = []
        for pg in (alice, bob):
            pg.get_by_role("button", name="Claim next").click()
            got = pg.get_by_text(re.compile(r"^Claimed \S+ until .*: the others skip it until then\."))
            got.wait_for()
            claimed.append(re.match(r"^Claimed (\S+) until", got.inner_text()).group(1))
        assert claimed[0] != claimed[1], claimed
        # the audit log on PostgreSQL: both entries, the chain verified
        alice.get_by_role("tab", name="Export & audit log").click()
        wait_idle(alice)
        alice.get_by_text("Hash chain verified: 2 entries").wait_for()
        screenshot(alice, "proxy_audit_log", full_page=False)
        assert metric(alice, "decisions in the log") == "2"


def test_a_viewer_behind_nginx_is_read_only(browser, proxied):
    with logged_in(browser, proxied, "vic@example.org") as vic:
        _open_pair(vic)
        reason = "Read-only: vic@example.org is a viewer: a viewer sees everything and records nothing"
        vic.get_by_text(reason).first.scroll_into_view_if_needed()
        assert reason in main_text(vic)
        for name in ("Record decision", "Record and next", "Claim next"):
            assert vic.get_by_role("button", name=name).is_disabled(), name
        screenshot(vic, "proxy_viewer", full_page=False)


def test_the_database_going_away_keeps_the_form_and_writes_resume(browser, proxied, request):
    server = request.getfixturevalue("postgres_server")
    note = "kept while the database is away"
    with logged_in(browser, proxied, "alice@example.org") as alice:
        _open_pair(alice)
        alice.get_by_text("Dismiss: not a conflict", exact=True).click()
        wait_idle(alice)
        box = alice.get_by_test_id("stForm").get_by_role("textbox")
        box.fill(note)
        server.stop()
        try:
            alice.get_by_role("button", name="Record decision").click()
            alice.get_by_text(re.compile(r"^The decision database cannot be reached: nothing was recorded")).wait_for()
            wait_idle(alice)
            assert "The decision database cannot be reached since" in main_text(alice)  # the banner
            assert box.input_value() == note  # the form keeps what was entered
            assert "Decision history of this pair (2)" in main_text(alice)  # as read before it went away
            box.scroll_into_view_if_needed()
            screenshot(alice, "proxy_database_away", full_page=False)
        finally:
            server.start()
        # the page polls: once the database answers, the banner goes without a reload
        until(alice, lambda: "cannot be reached since" not in main_text(alice), "the banner to go", 60_000)
        wait_idle(alice)
        assert box.input_value() == note
        alice.get_by_role("button", name="Record decision").click()
        alice.get_by_text(re.compile(r"^Recorded decision #\d+ on k8s-0026 ↔ k8s-0027: dismissed")).wait_for()
