"""The whole-CKF scans of this process (``crp_core.check_ckf`` then ``arbitrate_checked``), shared by every
session: the checked pairs kept per CKF, retrievable facts and detection settings, the arbitrated scans per
corpus, scan fields, time and pair decisions. An operator's pair decision never checks the texts again: the
latest scan of the same corpus, fields and time is arbitrated again for the pairs whose decision changed
(``crp_core.rearbitrate``); a STALE / ACTIVE mark that keeps every fact retrievable re-arbitrates the pairs of
that fact (``crp_core.restatused``); the whole scan is arbitrated only when no kept scan shares its checked
pairs. The scan of the decisions in force is cut from it (:func:`cut_to_retrievable`): a QUARANTINED / DELETED
mark takes out the pairs of its fact, which the kept scan still holds."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import numpy as np
import streamlit as st

from crp_core import (
    CHECK_CONFIG_FIELDS,
    DEFAULT_CHECK_WORKERS,
    LRU,
    CheckedPairs,
    ConflictScan,
    Corpus,
    CRPConfig,
    RetrievableSplit,
    WeakMemo,
    arbitrate_checked,
    check_ckf,
    content_digest,
    decision_change,
    load_checked,
    rearbitrate,
    restatused,
    save_checked,
    scan_config_key,
    within_retrievable,
)

from .progress import Bar

#: scans (and checked pairs) kept per process
MAX_SCANS = 16
#: cuts of one scan kept (one per set of retrievable facts: :func:`cut_to_retrievable`)
MAX_CUTS = 4


@st.cache_resource(show_spinner=False)
def _scans() -> LRU[tuple[object, ...], ConflictScan]:
    """The finished whole-CKF scans of this process, shared by every session (a locked LRU registry
    rather than a cached function, so the scan can draw its progress bar where it is called)."""
    return LRU(MAX_SCANS, locked=True)


@st.cache_resource(show_spinner=False)
def _checks() -> LRU[tuple[object, ...], CheckedPairs]:
    """The pair searches and text checks of this process (``crp_core.check_ckf``), per corpus and scan
    fields: an operator's pair decision or another ``now`` re-arbitrates them, never checks again."""
    return LRU(MAX_SCANS, locked=True)


#: a kept scan with the corpus and the pair decisions it was arbitrated with
Kept = tuple[Corpus, Mapping[str, Any] | None, ConflictScan]


@st.cache_resource(show_spinner=False)
def _latest() -> LRU[tuple[object, ...], tuple[Mapping[str, Any] | None, ConflictScan]]:
    """The latest scan per (corpus, scan fields, now) with the pair decisions it was arbitrated with: the
    scan a change of pair decisions starts from."""
    return LRU(MAX_SCANS, locked=True)


@st.cache_resource(show_spinner=False)
def _by_check() -> LRU[tuple[object, ...], Kept]:
    """The latest scan per (checked pairs, scan fields, now) with its corpus and pair decisions: the scan a
    status mark that keeps every fact retrievable starts from."""
    return LRU(MAX_SCANS, locked=True)


def scan_once(
    corpus: Corpus,
    corpus_id: tuple[object, ...],
    config: CRPConfig,
    now: datetime,
    decisions: Mapping[str, Any] | None,
    dkey: str,
    check_id: tuple[object, ...] | None = None,
) -> ConflictScan:
    """``scan_ckf`` once per (corpus, scan fields, now, pair decisions ``dkey``): a kept scan arbitrated again for
    what changed (:func:`_updated`: pair decisions, statuses that keep every fact retrievable), else the corpus's
    checked pairs arbitrated, else checked first with a progress bar (pairs text-checked, rate, time left), the texts in
    ``DEFAULT_CHECK_WORKERS`` new processes when the candidates are many (``crp_core.check_ckf``): the text
    check's memos never grow in the server, and other sessions keep the server's interpreter. Checked pairs
    persist in the corpus's cache folder (``crp_core.load_checked`` / ``save_checked``): a new server over
    the same CKF, vectors, retrievable facts, check fields and detector arbitrates them without scanning.
    ``check_id`` identifies what the text check reads of the corpus (its facts' ids and texts, vectors and
    retrievable facts; default ``corpus_id``): corpora that differ only by statuses that keep every fact's
    retrievability share their checked pairs."""
    lineage = (*corpus_id, scan_config_key(config), now.isoformat())
    key = (*lineage, dkey)
    hit = _scans().get(key)
    if hit is not None:
        return hit
    cid = corpus_id if check_id is None else check_id
    same_check = (*cid, scan_config_key(config), now.isoformat())
    got = _updated(corpus, config, decisions, _latest().get(lineage), _by_check().get(same_check))
    if got is not None:
        _keep(key, lineage, same_check, corpus, decisions, got)
        return got
    got = arbitrate_checked(_checked_of(corpus, cid, config), corpus, config, now, decisions)
    _keep(key, lineage, same_check, corpus, decisions, got)
    return got


def _checked_of(corpus: Corpus, check_id: tuple[object, ...], config: CRPConfig) -> CheckedPairs:
    """The checked pairs of ``corpus`` (``check_id``: what its text check reads), kept, read or made."""
    check_key = (*check_id, scan_config_key(config, CHECK_CONFIG_FIELDS))
    checked = _checks().get(check_key)
    return checked if checked is not None else _checked_once(check_key, corpus, config)


#: each scan's cuts to a set of retrievable facts (its digest), kept while the scan lives
_CUTS: WeakMemo[ConflictScan, str, RetrievableSplit] = WeakMemo(MAX_CUTS)


def cut_to_retrievable(
    scan: ConflictScan, corpus: Corpus, check_id: tuple[object, ...], applied: Corpus, config: CRPConfig
) -> RetrievableSplit:
    """``scan`` (of :func:`scan_once` over ``corpus``) cut to the facts ``applied`` retrieves (``corpus`` with the
    operators' QUARANTINED / DELETED marks too): ``crp_core.within_retrievable``, once per scan and set of
    retrievable facts, so a rerun gets the same scan object (the queue frame is kept per scan). The same
    retrievable facts give ``scan`` itself, outside the memo (a value holding its key would keep it alive)."""
    if applied is corpus or int(np.count_nonzero(applied.retrievable)) == scan.n_facts:
        return RetrievableSplit(scan, ())
    mask = content_digest(np.packbits(np.asarray(applied.retrievable, dtype=bool)).tobytes(), length=20)
    return _CUTS.get_or_build(
        scan, mask, lambda: within_retrievable(scan, _checked_of(corpus, check_id, config), applied)
    )


#: one whole-CKF text check at a time in this server: its memory and both cores are the check's, and a session
#: asking for checked pairs another session is making waits for them instead of making them again
_CHECKING = threading.Lock()
#: what a session waiting for another session's check is told
WAITING_NOTE = "Another session of this server is scanning a CKF for conflicts; its result is shared when it ends…"


def _checked_once(check_key: tuple[object, ...], corpus: Corpus, config: CRPConfig) -> CheckedPairs:
    """The checked pairs of ``check_key``: kept by this process (a session this one waited for made them), read
    from the cache folder, else made here (:func:`_check`), one check at a time (:data:`_CHECKING`)."""
    if not _CHECKING.acquire(blocking=False):
        with st.spinner(WAITING_NOTE):
            _CHECKING.acquire()
    try:
        got = _checks().get(check_key)
        if got is None:
            got = load_checked(corpus, config) or _check(corpus, config)
            _checks().put(check_key, got)
        return got
    finally:
        _CHECKING.release()


def _check(corpus: Corpus, config: CRPConfig) -> CheckedPairs:
    """The pair search and the text check, with a progress bar, kept in the corpus's cache folder for the
    next server (``crp_core.save_checked``)."""
    bar = Bar("Scanning the whole CKF for conflicts", unit="pairs")
    try:
        checked = check_ckf(corpus, config, progress=bar, check_workers=DEFAULT_CHECK_WORKERS)
    finally:
        bar.empty()
    save_checked(corpus, config, checked)
    return checked


def _updated(
    corpus: Corpus,
    config: CRPConfig,
    decisions: Mapping[str, Any] | None,
    prev: tuple[Mapping[str, Any] | None, ConflictScan] | None,
    same_check: Kept | None,
) -> ConflictScan | None:
    """The scan made from a kept one: the latest of this corpus re-arbitrated for the changed pair decisions,
    else the latest of a corpus with other statuses but the same retrievable facts re-arbitrated for the facts
    whose status changed (``crp_core.restatused``) and then for the changed pair decisions; None without one."""
    if prev is not None:
        return rearbitrate(prev[1], decision_change(prev[0], decisions, corpus.kb), config).scan
    if same_check is None:
        return None
    was, was_decisions, scan = same_check
    facts = [g.fact_id for f, g in zip(was.kb.facts, corpus.kb.facts) if f.status != g.status]
    marked = restatused(scan, corpus, config, was_decisions, facts).scan
    return rearbitrate(marked, decision_change(was_decisions, decisions, corpus.kb), config).scan


def _keep(
    key: tuple[object, ...],
    lineage: tuple[object, ...],
    same_check: tuple[object, ...],
    corpus: Corpus,
    decisions: Mapping[str, Any] | None,
    got: ConflictScan,
) -> None:
    _scans().put(key, got)
    _latest().put(lineage, (decisions, got))
    _by_check().put(same_check, (corpus, decisions, got))
