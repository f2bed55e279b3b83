"""Who may do what with the decisions: the roles of a team (docs/decisions/triage.md "Roles").

``viewer`` sees everything and records nothing, ``operator`` records decisions, ``admin`` also reverts a
decision (a new log entry with a reason). A :class:`RoleBook` maps normalised operator names to roles,
with a default role for names it does not list; :func:`load_roles` reads one from TOML::

    default = "viewer"             # the role of a name not listed (default: operator)
    admin = ["alice@example.org"]
    operator = ["bob", "Carol Jones"]
    viewer = ["dave"]

Names are normalised (:func:`crp_core.decisions.normalise_operator`), so ``"ALICE"`` and ``"alice"``
are one person; a name listed under two roles is refused.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from crp_core.decisions import REVERT, Decision, DecisionError, normalise_operator
from crp_core.errors import ConfigError, Problem, ValidationError
from crp_core.support.files import read_regular_file
from crp_core.support.parsing import TOMLRefusal, parse_toml

#: the largest roles or team file read (a pasted file is refused, not parsed)
MAX_TEAM_FILE_BYTES = 1 << 20


class Role(enum.StrEnum):
    """What an operator may do: see (viewer), record (operator), also revert (admin)."""

    VIEWER = "viewer"
    OPERATOR = "operator"
    ADMIN = "admin"


class PermissionRefused(DecisionError):
    """The operator's role does not allow the write; the message says who, which role, and why."""

    def __init__(self, operator: str, role: Role | str, why: str):
        self.operator = operator
        self.role = Role(role)
        super().__init__([("role", f"{operator!r} is {self.role.value}: {why}")], title="permission refused")


class TeamConfigError(ValidationError, ConfigError):
    """A roles or team file was refused; each problem names the line (when known) and the key."""


@dataclass(frozen=True)
class RoleBook:
    """Normalised operator name -> :class:`Role`; ``default`` for a name not listed. ``own_reverts``: an operator
    may revert a decision they recorded themselves (single mode, no roles nor team file: one person, whose
    mistakes nobody else can take back); reverting another operator's decision always needs an admin."""

    members: Mapping[str, Role] = field(default_factory=lambda: MappingProxyType({}))
    default: Role = Role.OPERATOR
    own_reverts: bool = False

    def role_of(self, operator: str) -> Role:
        """The role of ``operator`` (normalised first; DecisionError for a name that cannot be one)."""
        return self.members.get(normalise_operator(operator), self.default)

    def check(self, decision: Decision) -> Role:
        """The role ``decision.operator`` holds, when it may record ``decision``; else
        :class:`PermissionRefused` saying why (a viewer records nothing, only an admin reverts)."""
        role = self.role_of(decision.operator)
        return check_role(decision, role, own_reverts=self.own_reverts)


def check_role(decision: Decision, role: Role | str, *, own_reverts: bool = False) -> Role:
    """``role`` when it may record ``decision``; :class:`PermissionRefused` otherwise. With ``own_reverts`` an
    operator's revert passes here, and the store checks that the decision it takes back is their own."""
    r = Role(role)
    if r is Role.VIEWER:
        raise PermissionRefused(decision.operator, r, "a viewer sees the decisions but records none")
    if decision.kind == REVERT and r is not Role.ADMIN and not own_reverts:
        raise PermissionRefused(decision.operator, r, "only an admin reverts a decision")
    return r


def may_revert(operator: str, role: Role | str, target: Decision, *, own_reverts: bool) -> str | None:
    """Why ``operator`` (holding ``role``) may not revert ``target``, None when they may: an admin reverts any
    decision; with ``own_reverts`` an operator reverts their own."""
    r = Role(role)
    if r is Role.ADMIN:
        return None
    if r is Role.OPERATOR and own_reverts:
        if normalise_operator(target.operator) == normalise_operator(operator):
            return None
        return f"only an admin reverts another operator's decision (#{target.id} is {target.operator}'s)"
    return "only an admin reverts a decision"


#: everybody is an operator: the role book of a team without a roles file
EVERYONE_OPERATOR = RoleBook()
#: single mode (no roles file, no team file): everybody an operator, who may revert their own decisions
SINGLE_PERSON = RoleBook(own_reverts=True)


def key_line(text: str, key: str) -> int:
    """The 1-based line where ``key`` is assigned or opens a table in the TOML ``text`` (0 when not
    found): errors about a key's value name its line."""
    needles = (f"{key} ", f"{key}=", f'"{key}"', f"[{key}]")
    for i, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if any(s.startswith(n) for n in needles):
            return i
    return 0


def parse_team_toml(data: bytes, name: str) -> tuple[dict[str, Any], str]:
    """The TOML document of a roles or team file's bytes, and its text; :class:`TeamConfigError` naming
    the line for bytes that are not UTF-8 TOML."""
    try:
        text = data.decode("utf-8")
        return parse_toml(text), text
    except UnicodeDecodeError as exc:
        raise TeamConfigError(f"{name} refused", [Problem(0, "toml", f"not UTF-8 text: {exc}")]) from None
    except TOMLRefusal as exc:
        raise TeamConfigError(f"{name} refused", [Problem(exc.line, "toml", f"not valid TOML: {exc.reason}")]) from None


def _role_value(v: Any, key: str, line: int) -> tuple[Role | None, list[Problem]]:
    if isinstance(v, str) and v in Role.__members__.values():
        return Role(v), []
    return None, [Problem(line, key, f"unknown role {v!r} (expected one of {', '.join(r.value for r in Role)})")]


def _names(v: Any, key: str, line: int) -> tuple[list[str], list[Problem]]:
    """The normalised names of one role's list."""
    if not isinstance(v, list):
        return [], [Problem(line, key, f"must be a list of operator names, got {type(v).__name__}")]
    names: list[str] = []
    problems: list[Problem] = []
    for i, n in enumerate(v):
        try:
            names.append(normalise_operator(n))
        except DecisionError as exc:
            problems.append(Problem(line, f"{key}[{i}]", "; ".join(m for _, m in exc.problems)))
    return names, problems


def roles_from_dict(doc: Mapping[str, Any], name: str, text: str = "", *, prefix: str = "") -> RoleBook:
    """The :class:`RoleBook` of a parsed roles table (``default``, ``admin``, ``operator``, ``viewer``);
    :class:`TeamConfigError` listing every unknown key, bad value and name listed twice, each with its
    line in ``text`` and its key (``prefix``: the table's name in a team file, e.g. ``roles.``)."""
    problems: list[Problem] = []
    default = Role.OPERATOR
    members: dict[str, Role] = {}
    for key, v in doc.items():
        line = key_line(text, key)
        if key == "default":
            got, probs = _role_value(v, prefix + key, line)
            problems += probs
            default = got or default
        elif key in Role.__members__.values():
            names, probs = _names(v, prefix + key, line)
            problems += probs
            for n in names:
                if n in members and members[n] != Role(key):
                    problems.append(Problem(line, prefix + key, f"{n!r} is listed as {members[n].value} already"))
                members[n] = Role(key)
        else:
            problems.append(Problem(line, prefix + key, "unknown key (expected default, admin, operator, viewer)"))
    if problems:
        raise TeamConfigError(f"{name} refused", problems)
    return RoleBook(MappingProxyType(members), default)


def load_roles(path: str | os.PathLike[str]) -> RoleBook:
    """The :class:`RoleBook` of a roles TOML file; :class:`TeamConfigError` (line and key) when refused."""
    p = os.fspath(path)
    data = read_regular_file(p, max_bytes=MAX_TEAM_FILE_BYTES, what="roles file", error=TeamConfigError)
    doc, text = parse_team_toml(data, f"roles file {p}")
    return roles_from_dict(doc, f"roles file {p}", text)


def role_book(entries: Iterable[tuple[str, Role | str]], default: Role | str = Role.OPERATOR) -> RoleBook:
    """A :class:`RoleBook` built in code (tests, an embedding application): ``(name, role)`` pairs."""
    return RoleBook(MappingProxyType({normalise_operator(n): Role(r) for n, r in entries}), Role(default))
