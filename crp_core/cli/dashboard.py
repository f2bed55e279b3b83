"""``crp-inspect dashboard``: start the Streamlit dashboard on a knowledge base the server holds.

``--ckf PATH`` names a CKF on this machine (a JSONL / NDJSON / JSON / CSV / Parquet file, or a directory
holding ``facts.jsonl``): the dashboard's samples folder becomes PATH's folder (``$CRP_SAMPLE_DIR``), PATH
is the CKF it opens first (``$CRP_DEFAULT_SAMPLE``), and ``--max-bytes`` is the size limit of the
server-side CKFs (``$CRP_SAMPLE_MAX_BYTES``; uploads keep the browser's limit). Scenarios come from
``--scenarios DIR``, else ``scenarios/`` next to PATH (a directory CKF without one: its own ``scenarios/`` or
the scenario files among its own). The server listens on ``--address`` (default the
loopback) and ``--port``. The dashboard (``app.py``) ships with a checkout of the project, next to
``crp_core``; an install without it is told so.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from crp_core.errors import ConfigError

if TYPE_CHECKING:
    from crp_core.cli.common import Subparsers

#: the environment the dashboard reads a server-side CKF setting from (crp_ui.samples); with --ckf an inherited
#: one is dropped unless its flag sets it, so the defaults the flags document hold
SCENARIO_ENV, LIMIT_ENV = "CRP_SCENARIO_DIR", "CRP_SAMPLE_MAX_BYTES"


def register(subparsers: Subparsers) -> None:
    from crp_core.cli.common import max_bytes_arg

    p = subparsers.add_parser(
        "dashboard",
        help="start the dashboard on a CKF this machine holds",
        description="Start the Streamlit dashboard with PATH as its first knowledge base (PATH's folder "
        "becomes the dashboard's samples folder). Ends with the server (Ctrl-C).",
    )
    p.add_argument("--ckf", metavar="PATH", default=None, help="the CKF to open (default: the bundled sample)")
    p.add_argument(
        "--scenarios",
        metavar="DIR",
        default=None,
        help="scenario folder (default: scenarios/ next to PATH; for a folder CKF without one, its own scenarios)",
    )
    p.add_argument(
        "--max-bytes",
        type=max_bytes_arg,
        default=None,
        metavar="N",
        help="size limit of the server-side CKFs in bytes (default: the configuration's ckf_max_bytes)",
    )
    p.add_argument("--port", type=int, default=8501, help="port (default 8501)")
    p.add_argument("--address", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.set_defaults(handler=_handle)


def app_path() -> Path:
    """``app.py`` of this checkout (next to the ``crp_core`` package)."""
    return Path(__file__).resolve().parents[2] / "app.py"


def dashboard_env(args: argparse.Namespace, base: dict[str, str]) -> dict[str, str]:
    """The server's environment: ``base`` with the samples folder, first CKF, scenarios and limit set. With
    ``--ckf``, scenarios come from ``--scenarios`` or PATH's folder and the limit from ``--max-bytes`` or the
    configuration, never from a value inherited from the caller's environment."""
    from crp_core.io.ckf.listing import CKF_SUFFIXES, SCENARIOS_FOLDER, listable_ckf, scenario_folder

    env = dict(base)
    if args.ckf:
        ckf = Path(args.ckf).expanduser().resolve()
        unreachable = _unreachable(ckf)
        if unreachable is not None:
            raise ConfigError(f"--ckf {args.ckf}: {unreachable}")
        if not listable_ckf(ckf):
            raise ConfigError(
                f"--ckf {args.ckf}: not a CKF the dashboard can open (a {', '.join(CKF_SUFFIXES)} file whose name "
                "does not start with '.', a .json one shaped like a CKF, or a directory holding facts.jsonl)"
            )
        env["CRP_SAMPLE_DIR"] = str(ckf.parent)
        env["CRP_DEFAULT_SAMPLE"] = ckf.name
        env.pop(SCENARIO_ENV, None)
        env.pop(LIMIT_ENV, None)
        found = scenario_folder(ckf)
        if not args.scenarios and found != ckf.parent / SCENARIOS_FOLDER:
            env[SCENARIO_ENV] = str(found)  # the dashboard's own default is scenarios/ in its samples folder
    if args.scenarios:
        scen = Path(args.scenarios).expanduser().resolve()
        if not scen.is_dir():
            raise ConfigError(f"--scenarios {args.scenarios}: not a directory")
        env[SCENARIO_ENV] = str(scen)
    if args.max_bytes is not None:
        env[LIMIT_ENV] = str(args.max_bytes)
    return env


def _unreachable(path: Path) -> str | None:
    """Why the dashboard cannot open ``path`` at all (missing, or no permission to read it or its
    ``facts.jsonl``), or None."""
    from crp_core.io.ckf.source import DIR_FACTS

    try:
        path.stat()
        target = path / DIR_FACTS if path.is_dir() else path
        target.stat()
    except FileNotFoundError:
        return None if path.is_dir() else "no such file or folder"  # a folder without facts: not a CKF
    except OSError as exc:
        return f"cannot read it: {exc.strerror or exc}"
    return None if os.access(target, os.R_OK) else "cannot read it: Permission denied"


def server_argv(args: argparse.Namespace) -> list[str]:
    """``python -m streamlit run app.py`` with the address and port, headless."""
    if not 0 < args.port < 65536:
        raise ConfigError(f"--port must be between 1 and 65535, got {args.port}")
    app = app_path()
    if not app.is_file():
        raise ConfigError(f"the dashboard (app.py) is not installed next to crp_core (looked for {app})")
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(app),
        "--server.headless",
        "true",
        "--server.address",
        args.address,
        "--server.port",
        str(args.port),
    ]


def check_port(address: str, port: int) -> None:
    """Refuse, before any server starts, a port another process listens on (or an address this machine
    does not have): the server would otherwise print its address, then fail."""
    import socket

    try:
        infos = socket.getaddrinfo(address, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise ConfigError(f"--address {address}: not an address of this machine ({exc})") from None
    family, _, _, _, where = infos[0]
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server binds: a closed one's port is free
        try:
            sock.bind(where)
        except OSError as exc:
            raise ConfigError(f"--port {port} on {address}: cannot listen there ({exc.strerror or exc})") from None


def _handle(args: argparse.Namespace) -> int:
    env = dashboard_env(args, dict(os.environ))
    argv = server_argv(args)
    check_port(args.address, args.port)
    print(f"dashboard: http://{args.address}:{args.port}/ (Ctrl-C stops it)", file=sys.stderr)
    # the working directory is kept: relative paths (the triage database ./.crp_triage.sqlite, $CRP_* paths)
    # mean what they mean to the caller; Streamlit reads the checkout's .streamlit/config.toml next to app.py
    try:
        os.execve(sys.executable, argv, env)  # the server replaces this process: its exit status is the command's
    except OSError as exc:
        raise ConfigError(f"cannot start the dashboard's server {sys.executable}: {exc.strerror or exc}") from None
    return 0  # pragma: no cover  (execve does not return)
