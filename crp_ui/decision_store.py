"""The operators' triage database as the dashboard reads and writes it.

* **Which database**: this session's choice (the Conflicts page's "Decision database" field), else
  ``$CRP_INSPECT_TRIAGE_DB``, else ``.crp_triage.sqlite`` in the working directory
  (:func:`crp_ui.session.db_path`). Every session reading the same file sees the same decisions.
* **Reading** never creates a file: a missing database means "no decisions yet". The store object
  is shared by all sessions (``st.cache_resource`` keyed by the file's path and inode; the store
  serialises its calls) and re-read on every run: the decisions in force are folded once per
  audit-log length (the log is append-only, so its length identifies its state), so a decision
  recorded by any session shows in every other session on its next rerun.
* **Recording** opens the store read-write (creating the file on the first decision) for one
  transaction.
"""

from __future__ import annotations

import os

import streamlit as st

from crp_core import Decision, DecisionSet, DecisionStore, TriageStoreError

from .session import db_path


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
def _store(path: str, file_id: tuple[int, int]) -> DecisionStore:
    """One store per database file, shared by every session (never creates the file)."""
    del file_id  # cache key only: a replaced file gets a new store
    return DecisionStore(path, create=False)


@st.cache_resource(show_spinner=False, max_entries=64)
def _folded(_store_obj: DecisionStore, path: str, file_id: tuple[int, int], length: int) -> DecisionSet:
    """The decisions in force for one state of the (append-only) audit log."""
    del path, file_id, length  # cache key only
    return DecisionSet.from_decisions(_store_obj.all())


def open_store() -> DecisionStore | None:
    """The shared store of the session's database (None while the file does not exist).

    Raises ``TriageStoreError`` (a ``CRPError``) for a file that is not a usable decision database:
    corrupt, another application's, a newer schema.
    """
    path = os.path.abspath(db_path())
    fid = _file_id(path)
    if fid is None:
        return None
    return _store(path, fid)


def decision_set() -> DecisionSet:
    """The decisions in force in the configured database (empty while it does not exist).

    Re-read on every call (one ``count(*)``; the set is folded again only when the log grew).
    """
    path = os.path.abspath(db_path())
    fid = _file_id(path)
    if fid is None:
        return DecisionSet.empty()
    try:
        store = _store(path, fid)
        return _folded(store, path, fid, len(store))
    except TriageStoreError as exc:
        raise TriageStoreError(f"operator decision database: {exc}") from None


def audit_log() -> list[Decision]:
    """Every recorded decision, oldest first (empty while the database does not exist)."""
    store = open_store()
    return [] if store is None else store.all()


def pair_history(fact_a: str, fact_b: str) -> list[Decision]:
    """The audit log of one pair, oldest first."""
    store = open_store()
    return [] if store is None else store.history((fact_a, fact_b))


def record(decision: Decision) -> Decision:
    """Append ``decision`` to the configured database (created on the first decision).

    Raises ``DecisionError`` (listing every bad field) or ``TriageStoreError``.
    """
    with DecisionStore(db_path(), create=True) as store:
        return store.record(decision)


def latest_id(fact_a: str, fact_b: str) -> int:
    """The id of the pair's latest log entry (0 when it has none): what a form drawn now is based on."""
    hist = pair_history(fact_a, fact_b)
    return int(hist[-1].id or 0) if hist else 0
