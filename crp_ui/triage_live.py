"""The Conflicts page as a queue shared by a team, live.

* **Polling**: a fragment rerun every ``refresh_seconds`` of the team file (``st.fragment(run_every=)``)
  reads the log's latest id (one ``max(id)``) and reruns the page when another session recorded
  something, or when the database is back after being away: queues, counts and the open pair learn of
  others' decisions without a page reload.
* **Claims**: "Claim next" hands this operator the first pair of the queue as shown that nobody decided
  and nobody else holds, for the team's lease (``DecisionStore.claim_next``); the pair opens. Pairs others
  hold are marked in the queue and skipped by "Record and next".
* **The database away**: a banner with since when and why; the page shows what it read last.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

import streamlit as st

from crp_core import Claim, CRPError, TriageStoreUnavailable

from . import decisions, render, state, team
from .triage_record import K_PAIR, K

K_BUILT = K + "built_at"  # the log's latest id when the page was last built
K_CLAIM_MSG = K + "claim_msg"  # what the last "Claim next" did


def page_built() -> None:
    """Note the log's latest id the page is being built with (the polling compares with it)."""
    state.remember(K_BUILT, decisions.latest_id())


def _poll() -> None:
    """One poll: rerun the page when the log moved on, or when the database is back."""
    was_away = decisions.unavailable() is not None
    latest = decisions.latest_id()
    if latest != state.recall(K_BUILT, 0) or (was_away and decisions.unavailable() is None):
        st.rerun(scope="app")


def watch() -> None:
    """Start the polling fragment (every ``refresh_seconds`` of the team file)."""
    st.fragment(_poll, run_every=team.refresh_seconds())()


def away_banner() -> None:
    """The banner shown while the decision database cannot be reached."""
    away = decisions.unavailable()
    if away is None:
        return
    since = datetime.fromtimestamp(away.since, UTC).strftime("%H:%M:%S UTC")
    st.error(
        f"The decision database cannot be reached since {since} ({render.md_escape(away.reason)}). The page shows "
        "the decisions as they were; a decision recorded now is not written and its form keeps what you "
        "entered. Reading and writing resume when it is back (checked every "
        f"{team.refresh_seconds():g} s)."
    )


def live_claims() -> dict[str, Claim]:
    """The live claims of the shared queue: pair key -> :class:`Claim` (none while unreachable)."""
    store = decisions.open_store()
    if store is None:
        return {}
    try:
        return store.claims()
    except TriageStoreUnavailable:
        return {}


def claimed_by_others(claims: Mapping[str, Claim], operator: str) -> dict[str, Claim]:
    """The claims held by someone other than ``operator``."""
    return {k: c for k, c in claims.items() if c.operator != operator}


def _on_claim(keys: tuple[str, ...], fingerprint: str) -> None:
    operator = state.get_operator()
    if not operator:
        state.remember(K_CLAIM_MSG, (False, team.record_refusal() or "No operator."))
        return
    try:
        store = decisions.writable_store()
        config = team.team_config()
        store.roles = config.roles if config is not None else None
        got = store.claim_next(list(keys), operator, kb_fingerprint=fingerprint, lease_seconds=team.lease_seconds())
    except CRPError as exc:
        state.remember(K_CLAIM_MSG, (False, f"No pair claimed: {exc}"))
        return
    if got is None:
        state.remember(K_CLAIM_MSG, (False, "Nothing to claim: every pair shown is decided or held by someone else."))
        return
    state.remember(K_PAIR, got.pair_key)
    state.select_pair(got.pair_key)
    until = got.expires_at.astimezone(UTC).strftime("%H:%M:%S UTC")
    state.remember(K_CLAIM_MSG, (True, f"Claimed {got.pair_key} until {until}: the others skip it until then."))


def claim_button(keys: Sequence[str], fingerprint: str) -> None:
    """The "Claim next" button over the queue as shown (disabled with the reason for who may not record)."""
    refusal = team.record_refusal()
    st.button(
        "Claim next",
        key=K + "claim_next",
        on_click=_on_claim,
        args=(tuple(keys), fingerprint),
        disabled=refusal is not None or not keys,
        help=f"Take the next undecided pair nobody else holds, for {team.lease_seconds()} s "
        "(a decision on it ends the claim).",
    )
    msg = state.forget(K_CLAIM_MSG)
    if msg:
        (st.success if msg[0] else st.info)(render.md_escape(msg[1]))


def claim_cell(claim: Claim | None, operator: str, now: float | None = None) -> str:
    """The queue's claim text of a pair: "" (none), "yours", or "held by X for N s"."""
    if claim is None:
        return ""
    if claim.operator == operator:
        return "claimed by you"
    left = max(0, round(claim.expires_at.timestamp() - (now if now is not None else time.time())))
    return f"held by {claim.operator} ({left} s left)"
