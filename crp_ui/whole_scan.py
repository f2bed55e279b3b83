"""The whole-CKF scans of this process (``crp_core.check_ckf`` then ``arbitrate_checked``), shared by every
session: the checked pairs kept per corpus and detection settings, the arbitrated scans per corpus, scan fields,
time and pair decisions (an operator's pair decision re-arbitrates, it never checks the texts again)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import streamlit as st

from crp_core import (
    CHECK_CONFIG_FIELDS,
    LRU,
    CheckedPairs,
    ConflictScan,
    Corpus,
    CRPConfig,
    arbitrate_checked,
    check_ckf,
    scan_config_key,
)

from .progress import Bar

#: scans (and checked pairs) kept per process
MAX_SCANS = 16


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


def scan_once(
    corpus: Corpus,
    corpus_id: tuple[object, ...],
    config: CRPConfig,
    now: datetime,
    decisions: Mapping[str, Any] | None,
    dkey: str,
) -> ConflictScan:
    """``scan_ckf`` once per (corpus, scan fields, now, pair decisions ``dkey``): the corpus's checked pairs
    under the fields the pair search and the text check read, re-arbitrated, or checked first with a progress
    bar (pairs text-checked, rate, time left)."""
    key = (*corpus_id, scan_config_key(config), now.isoformat(), dkey)
    hit = _scans().get(key)
    if hit is not None:
        return hit
    check_key = (*corpus_id, scan_config_key(config, CHECK_CONFIG_FIELDS))
    checked = _checks().get(check_key)
    if checked is None:
        bar = Bar("Scanning the whole CKF for conflicts", unit="pairs")
        try:
            checked = check_ckf(corpus, config, progress=bar)
        finally:
            bar.empty()
        _checks().put(check_key, checked)
    got = arbitrate_checked(checked, corpus, config, now, decisions)
    _scans().put(key, got)
    return got
