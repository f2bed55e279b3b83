"""Who is deciding: the operator of a dashboard session under the team's identity mode
(:class:`~crp_core.triage.team.TeamConfig`), and the role the team gives that operator.

* ``single``: the name typed once in the dashboard (one person on a laptop; nothing checks it);
* ``proxy``: the value of the configured header (``proxy_header``, e.g. ``X-Forwarded-Email``) that an
  authenticating reverse proxy sets on every request it forwards. The header is believed only in this
  mode, and only because the dashboard listens where the proxy alone reaches it: a browser could set the
  same header itself if it reached the dashboard directly. A request without the header, with it empty,
  or with it more than once (a copy the browser sent beside the proxy's) has no operator: read-only;
* ``oidc``: the e-mail address (else the subject) of the user Streamlit's OpenID Connect login
  (``st.login``) signed in; a session not signed in has no operator: read-only.

Names are normalised (:func:`~crp_core.decisions.normalise_operator`): "ALICE@Example.org " and
"alice@example.org" are one operator. Pure functions: the dashboard passes what the request and the login
hold.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from crp_core.decisions import Decision, DecisionError, normalise_operator
from crp_core.triage.roles import Role, may_revert
from crp_core.triage.team import TeamConfig


@dataclass(frozen=True)
class Identity:
    """The operator of one session.

    ``operator``: the normalised name, None when the session has none (it is read-only); ``source``: where
    the name comes from, in words; ``missing``: why there is no operator (None when there is one);
    ``role``: the role the team's role book gives the operator (viewer without one).
    """

    mode: str
    operator: str | None
    source: str
    missing: str | None = None
    role: Role = Role.VIEWER
    own_reverts: bool = False  # the role book lets an operator revert their own decisions (single mode)

    @property
    def can_record(self) -> bool:
        return self.operator is not None and self.role in (Role.OPERATOR, Role.ADMIN)

    @property
    def can_revert(self) -> bool:
        """May revert some decision: an admin any, an operator of single mode their own."""
        return self.operator is not None and (self.role is Role.ADMIN or (self.own_reverts and self.can_record))

    def revert_refusal(self, target: Decision) -> str | None:
        """Why this session may not revert ``target`` (None when it may)."""
        if self.operator is None:
            return self.missing or "no operator: read-only"
        return may_revert(self.operator, self.role, target, own_reverts=self.own_reverts)

    def refusal(self) -> str | None:
        """Why this session may not record a decision (None when it may)."""
        if self.operator is None:
            return self.missing or "no operator: read-only"
        if not self.can_record:
            return f"{self.operator} is a viewer: a viewer sees everything and records nothing"
        return None


def _normal(name: str, source: str, mode: str) -> Identity:
    try:
        return Identity(mode=mode, operator=normalise_operator(name), source=source)
    except DecisionError as exc:
        why = "; ".join(m for _f, m in exc.problems)
        return Identity(mode=mode, operator=None, source=source, missing=f"{source} refused: {why}")


def from_typed_name(typed: str) -> Identity:
    """``single`` mode: the name typed in the dashboard."""
    if not typed.strip():
        return Identity(mode="single", operator=None, source="the name typed", missing="no operator name entered yet")
    return _normal(typed, "the name typed", "single")


def from_headers(values: Sequence[str], header: str) -> Identity:
    """``proxy`` mode: ``values`` are every value of ``header`` in the request (none, one, or several)."""
    source = f"the {header} header"
    if not values:
        return Identity(
            mode="proxy",
            operator=None,
            source=source,
            missing=f"the request carries no {header} header (not through the authenticating proxy): read-only",
        )
    if len(values) > 1:
        return Identity(
            mode="proxy",
            operator=None,
            source=source,
            missing=f"the request carries the {header} header {len(values)} times: read-only",
        )
    if not values[0].strip():
        return Identity(mode="proxy", operator=None, source=source, missing=f"the {header} header is empty: read-only")
    return _normal(values[0], source, "proxy")


def from_oidc_user(user: Mapping[str, Any]) -> Identity:
    """``oidc`` mode: the claims of ``st.user`` (``is_logged_in``, ``email``, ``sub``)."""
    if not user.get("is_logged_in"):
        return Identity(mode="oidc", operator=None, source="the login", missing="not logged in: read-only")
    for claim in ("email", "sub"):
        value = user.get(claim)
        if isinstance(value, str) and value.strip():
            return _normal(value, f"the login's {claim}", "oidc")
    return Identity(
        mode="oidc", operator=None, source="the login", missing="the login gave neither an email nor a subject"
    )


def resolve_identity(
    team: TeamConfig,
    *,
    typed: str = "",
    header_values: Callable[[str], Sequence[str]] = lambda _h: (),
    user: Mapping[str, Any] | None = None,
) -> Identity:
    """The session's :class:`Identity` under ``team``'s mode, with its role from ``team.roles``.

    ``typed``: the name typed (single mode only); ``header_values(name)``: every value of a request header
    (read in proxy mode only, the configured header only); ``user``: the login's claims (oidc mode only).
    """
    if team.identity == "proxy":
        who = from_headers(header_values(team.proxy_header), team.proxy_header)
    elif team.identity == "oidc":
        who = from_oidc_user(user or {})
    else:
        who = from_typed_name(typed)
    if who.operator is None:
        return who
    return Identity(
        mode=who.mode,
        operator=who.operator,
        source=who.source,
        role=team.roles.role_of(who.operator),
        own_reverts=team.roles.own_reverts,
    )
