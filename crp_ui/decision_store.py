"""The operators' triage database as the dashboard reads and writes it.

* **Which database**: this session's choice (the Conflicts page's "Decision database" field, single mode
  only), else ``$CRP_INSPECT_TRIAGE_DB`` (an SQLite path or a ``postgresql://`` URL), else
  ``.crp_triage.sqlite`` in the working directory (:func:`crp_ui.session.db_path`). Every session reading
  the same database sees the same decisions.
* **Reading** never creates an SQLite file: a missing file means "no decisions yet". The store object is
  shared by all sessions (``st.cache_resource`` keyed by the file's path and inode, or by the URL; the
  store serialises its calls) and re-read on every run: the decisions in force are folded once per
  audit-log length (the log is append-only, so its length identifies its state), so a decision recorded
  by any session shows in every other session on its next rerun.
* **Recording** goes through the same shared store (an SQLite file is created with the first decision):
  every dashboard write (the Conflicts page's form, its reverts, the SDK session page's quarantine) is
  stamped with origin ``dashboard`` and the role of this session's operator, and checked by the store
  against the team's role book.
* **The database away** (``TriageStoreUnavailable``): reads give what this session read last, and
  :func:`unavailable` says since when and why, so the page shows a banner instead of failing and the
  form keeps its content; the next run that reaches the database clears it.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, replace
from urllib.parse import urlsplit, urlunsplit

import streamlit as st

from crp_core import (
    Decision,
    DecisionSet,
    DecisionStore,
    TriageStoreError,
    TriageStoreUnavailable,
)
from crp_core import (
    open_store as open_decision_store,
)

from . import team
from .session import db_path

K_AWAY = "crp.triage.away"  # (since, reason) while the database cannot be reached
K_LAST = "crp.triage.last."  # + what: the last good read of this session ("set", "log")
#: the decisions of an opened view snapshot (crp_ui.snapshot): in force in this session's view instead of
#: the database's, never written to it
K_OVERLAY = "crp.triage.snapshot_overlay"


def is_url(target: str) -> bool:
    """Whether ``target`` names a database server (``postgresql://...``) rather than a file."""
    return "://" in target


def shown_target(target: str) -> str:
    """``target`` as the page may show it: a URL without its password."""
    if not is_url(target):
        return target
    parts = urlsplit(target)
    if parts.password is None:
        return target
    host = parts.hostname or ""
    netloc = f"{parts.username}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def _file_id(path: str) -> tuple[int, int] | None:
    """(device, inode) of the file, or None when it does not exist (yet)."""
    try:
        s = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise TriageStoreError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return (s.st_dev, s.st_ino)


@st.cache_resource(show_spinner=False, max_entries=16)
def _store(target: str, file_id: tuple[int, int] | None) -> DecisionStore:
    """One store per database file (or server URL), shared by every session (never creates a file)."""
    del file_id  # cache key only: a replaced file gets a new store
    return open_decision_store(target, create=is_url(target))


@st.cache_resource(show_spinner=False, max_entries=64)
def _folded(_store_obj: DecisionStore, target: str, file_id: tuple[int, int] | None, length: int) -> DecisionSet:
    """The decisions in force for one state of the (append-only) audit log."""
    del target, file_id, length  # cache key only
    return DecisionSet.from_decisions(_store_obj.all())


def _target() -> tuple[str, tuple[int, int] | None] | None:
    """(the database, its file id) or None while an SQLite file does not exist."""
    target = db_path()
    if is_url(target):
        return target, None
    path = os.path.abspath(target)
    fid = _file_id(path)
    return None if fid is None else (path, fid)


def open_store() -> DecisionStore | None:
    """The shared store of the session's database (None while an SQLite file does not exist).

    Raises ``TriageStoreError`` (a ``CRPError``) for a database that is not usable: corrupt, another
    application's, a newer schema; ``TriageStoreUnavailable`` for a server that cannot be reached.
    """
    where = _target()
    return None if where is None else _store(*where)


@dataclass(frozen=True)
class Away:
    """The database could not be reached: ``since`` (epoch seconds, the first failed read) and why."""

    since: float
    reason: str


def unavailable() -> Away | None:
    """Since when and why the database cannot be reached (None while it can)."""
    got = st.session_state.get(K_AWAY)
    return got if isinstance(got, Away) else None


def _away(exc: TriageStoreUnavailable) -> None:
    was = unavailable()
    st.session_state[K_AWAY] = Away(was.since if was is not None else time.time(), str(exc))


def _back() -> None:
    st.session_state.pop(K_AWAY, None)


def decision_set() -> DecisionSet:
    """The decisions in force in the configured database (empty while it does not exist).

    Re-read on every call (one ``count(*)``; the set is folded again only when the log grew). While the
    database cannot be reached, the set this session read last. While a view snapshot is open in this
    session, its decisions (:data:`K_OVERLAY`) instead.
    """
    overlay = st.session_state.get(K_OVERLAY)
    if isinstance(overlay, DecisionSet):
        return overlay
    where = _target()
    if where is None:
        return DecisionSet.empty()
    try:
        store = _store(*where)
        got = _folded(store, *where, len(store))
    except TriageStoreUnavailable as exc:
        _away(exc)
        last = st.session_state.get(K_LAST + "set")
        return last if isinstance(last, DecisionSet) else DecisionSet.empty()
    except TriageStoreError as exc:
        raise TriageStoreError(f"operator decision database: {exc}") from None
    _back()
    st.session_state[K_LAST + "set"] = got
    return got


def _read(what: str, key: tuple[str, str] | None = None) -> list[Decision]:
    """The whole log (``what`` = "log") or one pair's history (``what`` = its key); while unreachable, what
    this session read last."""
    store = open_store()
    if store is None:
        return []
    try:
        got = store.all() if key is None else store.history(key)
    except TriageStoreUnavailable as exc:
        _away(exc)
        last = st.session_state.get(K_LAST + what)
        return list(last) if isinstance(last, list) else []
    st.session_state[K_LAST + what] = got
    return got


def audit_log() -> list[Decision]:
    """Every recorded decision, oldest first (empty while the database does not exist)."""
    return _read("log")


def pair_history(fact_a: str, fact_b: str) -> list[Decision]:
    """The audit log of one pair, oldest first."""
    return _read("pair." + "|".join((fact_a, fact_b)), (fact_a, fact_b))


def latest_id(fact_a: str | None = None, fact_b: str | None = None) -> int:
    """The id of the pair's latest log entry (0 when it has none): what a form drawn now is based on;
    without a pair, the log's latest id (what a polling view compares with). 0 while unreachable."""
    store = open_store()
    if store is None:
        return 0
    try:
        return store.latest_id(None if fact_a is None or fact_b is None else (fact_a, fact_b))
    except TriageStoreUnavailable as exc:
        _away(exc)
        return 0


def writable_store() -> DecisionStore:
    """The shared store of the session's database, creating an SQLite file first when there is none (the
    first decision or the first claim of a team)."""
    where = _target()
    if where is None:
        open_decision_store(db_path(), create=True).close()
        where = _target()
        if where is None:
            raise TriageStoreError(f"{db_path()}: the decision database was not created")
    return _store(*where)


def record(decision: Decision) -> Decision:
    """Append ``decision`` to the configured database (an SQLite file is created on the first decision),
    as a dashboard decision: its origin is ``dashboard``, its role the one this session's operator holds,
    and the store checks it against the team's role book (every page's writes come through here).

    Raises ``DecisionError`` (listing every bad field; ``PermissionRefused``), ``StaleDecisionError``,
    ``TriageStoreUnavailable`` or ``TriageStoreError``.
    """
    config = team.team_config()
    roles = config.roles if config is not None else None
    d = replace(decision, origin="dashboard", role=team.identity().role.value)
    where = _target()
    if where is None:  # the first decision creates the file; the shared store opens it from then on
        with open_decision_store(db_path(), create=True, roles=roles) as first:
            return first.record(d)
    store = _store(*where)
    store.roles = roles  # the team's role book, read again on every run (an edited file applies)
    rec = store.record(d)
    _back()
    return rec
