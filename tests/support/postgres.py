"""A throw-away PostgreSQL server for the triage store's tests, started from Debian's binaries
(``/usr/lib/postgresql/<version>/bin``: initdb, pg_ctl) on 127.0.0.1 and a free port, with a data
folder of its own, stopped and removed at the end of the session.

As root the server runs as an unprivileged user (``postgres`` when it exists, else ``nobody``):
PostgreSQL refuses to run as root. Without the binaries the PostgreSQL half of the tests is skipped,
saying why, unless ``CI`` is set: there their absence fails the run (``.ci/run`` installs them).
"""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator

import pytest

PG_BIN_GLOB = "/usr/lib/postgresql/*/bin"


def pg_bin() -> str | None:
    """The newest Debian PostgreSQL binary folder holding initdb and pg_ctl, or None."""
    found = [d for d in glob.glob(PG_BIN_GLOB) if os.access(os.path.join(d, "initdb"), os.X_OK)]
    found.sort(key=lambda d: int(d.split("/")[-2]) if d.split("/")[-2].isdigit() else 0)
    return found[-1] if found else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run_user() -> str | None:
    """The user the server runs as: None (ourselves) unless we are root."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    raise RuntimeError("running as root and no unprivileged user (postgres, nobody) to run PostgreSQL as")


class PostgresServer:
    """One server: :meth:`start`, :meth:`stop`, :meth:`restart`, :meth:`new_database` (a URL)."""

    def __init__(self, bindir: str):
        self.bindir = bindir
        self.user = _run_user()
        self.root = tempfile.mkdtemp(prefix="crp-pg-")
        self.data = os.path.join(self.root, "data")
        self.log = os.path.join(self.root, "server.log")
        self.port = free_port()
        self._names = itertools.count(1)
        if self.user is not None:
            os.chmod(self.root, 0o755)
            pw = pwd.getpwnam(self.user)
            os.chown(self.root, pw.pw_uid, pw.pw_gid)

    def _cmd(self, *argv: str) -> subprocess.CompletedProcess[str]:
        full = [os.path.join(self.bindir, argv[0]), *argv[1:]]
        if self.user is not None:
            full = ["runuser", "-u", self.user, "--", *full]
        return subprocess.run(full, capture_output=True, text=True, check=False, cwd=self.root, timeout=120)

    def _check(self, done: subprocess.CompletedProcess[str], what: str) -> None:
        if done.returncode != 0:
            log = open(self.log).read()[-2000:] if os.path.exists(self.log) else ""
            raise RuntimeError(f"PostgreSQL {what} failed ({done.returncode}): {done.stderr[-2000:]}\n{log}")

    def start(self) -> PostgresServer:
        if not os.path.exists(self.data):
            self._check(
                self._cmd("initdb", "-D", self.data, "-U", "crp", "--auth=trust", "-E", "UTF8", "--no-instructions"),
                "initdb",
            )
        opts = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c max_connections=100"
        self._check(
            self._cmd("pg_ctl", "-D", self.data, "-l", self.log, "-o", opts, "-w", "-t", "60", "start"), "start"
        )
        return self

    def stop(self, mode: str = "fast") -> None:
        if os.path.exists(os.path.join(self.data, "postmaster.pid")):
            self._cmd("pg_ctl", "-D", self.data, "-m", mode, "-w", "stop")

    def restart(self) -> None:
        self.stop()
        self.start()

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql://crp@127.0.0.1:{self.port}/{dbname}"

    def new_database(self) -> str:
        """The URL of a new, empty database on this server."""
        import psycopg

        name = f"triage_{os.getpid()}_{next(self._names)}"
        with psycopg.connect(self.url(), autocommit=True) as con:
            con.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def remove(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)


def unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"PostgreSQL tests cannot run under CI: {reason}")
    pytest.skip(f"PostgreSQL tests skipped: {reason} (install Debian's postgresql; under CI this fails)")


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A running throw-away server for the session (skipped, or failed under CI, without binaries)."""
    bindir = pg_bin()
    if bindir is None:
        unavailable(f"no initdb under {PG_BIN_GLOB}")
    try:
        import psycopg  # noqa: F401  the driver the store uses
    except ImportError:
        unavailable("the psycopg driver is not installed")
    assert bindir is not None
    server = PostgresServer(bindir)
    try:
        server.start()
        yield server
    finally:
        server.remove()


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """A new, empty database on the session's server."""
    return postgres_server.new_database()
