"""How a team works on one decision store: the identity mode, the roles, the review quorum, the claim
lease and the dashboard's refresh period (docs/decisions/triage.md "Roles", reference/cli.md "triage").

The team file is TOML, named by ``$CRP_INSPECT_TEAM`` (or given to :func:`load_team_config`)::

    identity = "proxy"                  # single (default) | proxy | oidc
    proxy_header = "X-Forwarded-Email"  # proxy mode: the header the authenticating proxy sets
    review_quorum = 1                   # operators who must agree before a pair is settled
    lease_seconds = 600                 # how long a claimed pair stays with its operator
    refresh_seconds = 5.0               # how often an open queue looks for others' decisions
    roles_file = "roles.toml"           # a roles file (relative to this file), or a [roles] table:

    [roles]
    default = "viewer"
    admin = ["alice@example.org"]
    operator = ["bob@example.org"]

Without a file: single mode, everybody an operator (:data:`SINGLE`).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from crp_core.errors import Problem
from crp_core.support.files import read_regular_file
from crp_core.triage.roles import (
    EVERYONE_OPERATOR,
    MAX_TEAM_FILE_BYTES,
    SINGLE_PERSON,
    RoleBook,
    TeamConfigError,
    key_line,
    load_roles,
    parse_team_toml,
    roles_from_dict,
)

#: environment variable naming the team file (the dashboard and the CLI read it)
TEAM_ENV = "CRP_INSPECT_TEAM"
IDENTITY_MODES: tuple[str, ...] = ("single", "proxy", "oidc")
Identity = Literal["single", "proxy", "oidc"]
#: an HTTP header name (RFC 9110 token)
_HEADER = re.compile(r"^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$")
_KEYS = ("identity", "proxy_header", "review_quorum", "lease_seconds", "refresh_seconds", "roles_file", "roles")


@dataclass(frozen=True)
class TeamConfig:
    """The team's settings (module docstring); ``source``: the file they were read from, or None."""

    identity: Identity = "single"
    proxy_header: str = "X-Forwarded-Email"
    roles: RoleBook = EVERYONE_OPERATOR
    review_quorum: int = 1
    lease_seconds: int = 600
    refresh_seconds: float = 5.0
    source: str | None = None


#: no team file: one person on a laptop, everybody an operator who may revert their own decisions
SINGLE = TeamConfig(roles=SINGLE_PERSON)


def _int_in(v: Any, lo: int, hi: int) -> bool:
    return type(v) is int and lo <= v <= hi


def _scalar_problems(doc: Mapping[str, Any], text: str) -> list[Problem]:
    """Problems of the scalar keys (each with its line and key)."""
    checks: dict[str, tuple[bool, str]] = {
        "identity": (doc.get("identity", "single") in IDENTITY_MODES, f"one of {', '.join(IDENTITY_MODES)}"),
        "proxy_header": (
            isinstance(doc.get("proxy_header", "X"), str) and bool(_HEADER.match(doc.get("proxy_header", "X"))),
            "an HTTP header name (letters, digits, '-')",
        ),
        "review_quorum": (_int_in(doc.get("review_quorum", 1), 1, 100), "a whole number from 1 to 100"),
        "lease_seconds": (
            _int_in(doc.get("lease_seconds", 600), 1, 7 * 86_400),
            "a whole number of seconds, 1 to 604800",
        ),
        "refresh_seconds": (
            type(doc.get("refresh_seconds", 5.0)) in (int, float)
            and math.isfinite(doc.get("refresh_seconds", 5.0))
            and 0.5 <= doc.get("refresh_seconds", 5.0) <= 3600,
            "a number of seconds from 0.5 to 3600",
        ),
        "roles_file": (isinstance(doc.get("roles_file", ""), str), "a path (text)"),
        "roles": (isinstance(doc.get("roles", {}), dict), "a table"),
    }
    problems = [
        Problem(key_line(text, k), k, f"must be {want}, got {doc[k]!r:.80}")
        for k, (ok, want) in checks.items()
        if not ok
    ]
    problems += [
        Problem(key_line(text, k), k, f"unknown key (expected {', '.join(_KEYS)})") for k in doc if k not in _KEYS
    ]
    if "roles" in doc and "roles_file" in doc:
        problems.append(
            Problem(key_line(text, "roles_file"), "roles_file", "give roles_file or a [roles] table, not both")
        )
    return problems


def team_config_from_dict(doc: Mapping[str, Any], name: str, text: str = "", *, base_dir: str = ".") -> TeamConfig:
    """The :class:`TeamConfig` of a parsed team document; :class:`TeamConfigError` listing every problem
    with its line in ``text`` and its key. ``roles_file`` is read relative to ``base_dir``."""
    problems = _scalar_problems(doc, text)
    if problems:
        raise TeamConfigError(f"{name} refused", problems)
    roles = EVERYONE_OPERATOR
    if isinstance(doc.get("roles"), dict):
        roles = roles_from_dict(doc["roles"], name, text, prefix="roles.")
    elif "roles_file" in doc:
        roles = load_roles(os.path.join(base_dir, doc["roles_file"]))
    return TeamConfig(
        identity=doc.get("identity", "single"),
        proxy_header=doc.get("proxy_header", "X-Forwarded-Email"),
        roles=roles,
        review_quorum=doc.get("review_quorum", 1),
        lease_seconds=doc.get("lease_seconds", 600),
        refresh_seconds=float(doc.get("refresh_seconds", 5.0)),
        source=None,
    )


def load_team_config(path: str | os.PathLike[str] | None = None) -> TeamConfig:
    """The team file ``path``, else the one ``$CRP_INSPECT_TEAM`` names, else :data:`SINGLE` (no file:
    single mode, everybody an operator). A bad file is a :class:`TeamConfigError` (a ConfigError)."""
    p = os.fspath(path) if path is not None else os.environ.get(TEAM_ENV, "").strip()
    if not p:
        return SINGLE
    data = read_regular_file(p, max_bytes=MAX_TEAM_FILE_BYTES, what="team file", error=TeamConfigError)
    doc, text = parse_team_toml(data, f"team file {p}")
    cfg = team_config_from_dict(doc, f"team file {p}", text, base_dir=os.path.dirname(os.path.abspath(p)))
    return TeamConfig(**{**cfg.__dict__, "source": p})
