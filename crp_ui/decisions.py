"""Operator decisions in the dashboard: what the decisions in force do to a CKF and how they reach
every page's pipeline run.

* **Reading and recording** are :mod:`crp_ui.decision_store` (its names are re-exported here).
* **Applying**: :func:`apply_decisions` gives the prepared corpus with the operators' statuses
  (``crp_core.apply_to_corpus`` semantics; one cached object per status set, so the graph /
  neighbour tables are built once), :func:`pipeline_decisions` gives ``run_pipeline``'s
  ``decisions`` and the cache-key string for them. ``crp_ui.state.get_corpus`` / ``get_result`` call
  both, so every page runs the pipeline with the decisions in force.
* :func:`conflict_scan`: the whole-CKF scan (``crp-inspect conflicts``) of the decisions in force for the
  triage queue, and the pairs an operator's QUARANTINED / DELETED mark took out of it, cached per (corpus,
  config, now, decisions); :func:`known_conflicts_in_force` feeds the known-conflict guard the same scan's
  pairs of each run's selection (``crp_core.SelectionKnownConflicts``), so no page but the triage queue
  waits for the whole scan.
* :func:`cleaned_ckf_bytes`: the CKF as loaded with the statuses in force, in its own format;
  :func:`sdk_snapshot_bytes`: the same decisions as a crprotocol SDK snapshot (``crp_core.export_sdk_snapshot``).
"""

from __future__ import annotations

import io
import json
import os
import tempfile
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import streamlit as st

from crp_core import (
    CHECK_CONFIG_FIELDS,
    CleanedExport,
    Corpus,
    CRPConfig,
    CRPError,
    DecisionSet,
    KnowledgeBase,
    KnownSource,
    RetrievableSplit,
    RowChecks,
    SelectionKnownConflicts,
    WeakMemo,
    checksum_algorithm,
    content_digest,
    export_cleaned_ckf,
    export_sdk_snapshot,
    pair_key,
    scan_config_key,
    split_pair_key,
)

from .cache import by_identity, corpus_digest, memo_shared
from .decision_store import (
    Away,
    audit_log,
    decision_set,
    is_url,
    latest_id,
    open_store,
    pair_history,
    record,
    shown_target,
    unavailable,
    writable_store,
)
from .session import DEFAULT_DB_FILE
from .whole_scan import cut_to_retrievable, scan_once

#: applied corpora kept per process
MAX_APPLIED = 8


# ---- what the decisions in force do to one CKF ----------------------------------------------------
@dataclass(frozen=True)
class AppliedSummary:
    """The decisions in force that name facts of one CKF, and the facts they take out or re-mark.

    ``decisions``: pair decisions whose two facts are in the CKF plus status marks on its facts;
    ``suppressed``: losers of accepted / overridden pairs (fact id -> the winner), the facts stage 4
    drops whenever both meet in a run; ``remarked``: fact id -> (status in the CKF, status in force)
    for every operator status that differs from the file's.
    """

    decisions: int
    suppressed: Mapping[str, str]
    remarked: Mapping[str, tuple[str, str]]

    @property
    def affected(self) -> tuple[str, ...]:
        """Every fact suppressed or re-marked, sorted (a fact both suppressed and re-marked once)."""
        return tuple(sorted(set(self.suppressed) | set(self.remarked)))

    def __bool__(self) -> bool:
        return self.decisions > 0


def applied_summary(ds: DecisionSet, kb: KnowledgeBase) -> AppliedSummary:
    """What ``ds`` does to ``kb`` (the CKF as loaded); decisions naming facts it lacks are left out."""
    n = 0
    suppressed: dict[str, str] = {}
    for key, d in sorted(ds.pair_decisions.items()):
        a, b = split_pair_key(key)
        if kb.get(a) is None or kb.get(b) is None:
            continue
        n += 1
        winner = d.get("winner")
        if d.get("kind") in ("accept", "override") and winner in (a, b):
            suppressed[b if winner == a else a] = str(winner)
    remarked: dict[str, tuple[str, str]] = {}
    for fid, status in sorted(ds.statuses.items()):
        f = kb.get(fid)
        if f is None:
            continue
        n += 1
        if f.status != status:
            remarked[fid] = (f.status, status)
    return AppliedSummary(decisions=n, suppressed=MappingProxyType(suppressed), remarked=MappingProxyType(remarked))


def applied_sentence(summary: AppliedSummary) -> str:
    """The banner sentence: "N operator decisions applied; M facts suppressed or re-marked"."""
    n, m = summary.decisions, len(summary.affected)
    return (
        f"{n} operator decision{'' if n == 1 else 's'} applied; {m} fact{'' if m == 1 else 's'} suppressed or re-marked"
    )


# ---- the ``pair`` URL parameter -------------------------------------------------------------
def parse_pair_param(value: object) -> tuple[str | None, str]:
    """A ``pair`` URL value -> (canonical pair key or None, warning or ""). Accepts ``a|b`` in either
    order (the ids escaped as ``crp_core.pair_key`` does); anything else is refused with a warning."""
    if value in (None, ""):
        return None, ""
    text = str(value)
    shown = text if len(text) <= 80 else text[:79] + "…"
    if len(text) > 2000:
        return None, f"pair={shown}: too long; ignored"
    try:
        a, b = split_pair_key(text)
    except ValueError:
        return None, f"pair={shown}: not two fact ids separated by '|'; ignored"
    if not a or not b or a == b:
        return None, f"pair={shown}: needs two different fact ids; ignored"
    if any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in a + b):  # no fact id holds one (docs/reference/ckf.md)
        return None, f"pair={shown!r}: a fact id holds no control character; ignored"
    return pair_key(a, b), ""


# ---- fingerprints --------------------------------------------------------------------------------
def _digest(obj: object) -> str:
    """20 hex digits of the SHA-256 of ``obj``'s JSON (keys sorted): a cache key of this process."""
    return content_digest(json.dumps(obj, sort_keys=True, ensure_ascii=False), length=20)


def set_fingerprint(ds: DecisionSet) -> str:
    """Digest of the decisions in force ("" when there are none): equal sets, equal digests."""
    return _digest(ds.to_dict()) if ds else ""


def pair_decisions_key(ds: DecisionSet) -> str:
    """Digest of the pair decisions alone ("" when there are none): the pipeline cache key part
    (statuses reach the cache key through the corpus's statuses)."""
    return _digest({k: dict(v) for k, v in ds.pair_decisions.items()}) if ds.pair_decisions else ""


# ---- applying ------------------------------------------------------------------------------------
def _statuses_known(corpus: Corpus, statuses: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """The (fact id, status) items that name a fact of the corpus and change its status."""
    kb = corpus.kb
    out = []
    for fid, s in sorted(statuses.items()):
        f = kb.get(fid)
        if f is not None and f.status != s:
            out.append((fid, s))
    return tuple(out)


_KB_DIGESTS: WeakMemo[KnowledgeBase, None, str] = WeakMemo(1)


def kb_digest(kb: KnowledgeBase) -> str:
    """``kb.data_fingerprint`` (every fact field: timestamps, TTLs, ... change scores), computed once
    per KnowledgeBase object."""
    return _KB_DIGESTS.get_or_build(kb, None, lambda: kb.data_fingerprint)


CorpusId = tuple[str, str, int, int]


def _corpus_id(corpus: Corpus) -> CorpusId:
    """What identifies a corpus with its statuses: the CKF digest, the vectors and statuses, the index."""
    return (kb_digest(corpus.kb), corpus_digest(corpus), corpus.index.m, corpus.index.ef_construction)


@st.cache_resource(show_spinner=False, max_entries=MAX_APPLIED)
def _with_statuses(_corpus: Corpus, corpus_id: CorpusId, items: tuple[tuple[str, str], ...]) -> Corpus:
    del corpus_id  # cache key only
    return _corpus.with_statuses(dict(items))


def with_statuses(corpus: Corpus, statuses: Mapping[str, str]) -> Corpus:
    """``corpus`` with ``statuses`` applied, one shared object per (corpus, statuses): its lazily
    built neighbour table and graph survive reruns. Unknown ids are ignored (as in
    ``crp_core.apply_to_corpus``)."""
    items = _statuses_known(corpus, statuses)
    if not items:
        return corpus
    return _with_statuses(corpus, _corpus_id(corpus), items)


def apply_decisions(corpus: Corpus, ds: DecisionSet | None = None) -> Corpus:
    """The prepared corpus with the operators' statuses in force (``apply_to_corpus`` semantics):
    a QUARANTINED / DELETED fact is never retrieved, a STALE one gets ``stale_floor``."""
    ds = decision_set() if ds is None else ds
    if not ds.statuses:
        return corpus
    return with_statuses(corpus, ds.statuses_on(corpus.kb))  # crp_core.apply_to_corpus's statuses


def pipeline_decisions(ds: DecisionSet | None = None) -> tuple[dict[str, Any] | None, str]:
    """``(decisions, decisions_key)`` for ``run_pipeline`` / ``crp_ui.cache.pipeline_result``:
    the pair decisions in force (None when there are none) and their digest."""
    ds = decision_set() if ds is None else ds
    if not ds.pair_decisions:
        return None, ""
    return {k: dict(v) for k, v in ds.pair_decisions.items()}, pair_decisions_key(ds)


# ---- the whole-CKF scan --------------------------------------------------------------------------
def scan_corpus(base: Corpus, ds: DecisionSet) -> Corpus:
    """The corpus whose whole-CKF text check the triage queue keeps: the CKF's own statuses plus the operators'
    marks that leave a fact retrievable (``DecisionSet.retrievable_marks``). The facts an operator took out of
    retrieval stay in it: a quarantine checks no text again, and the pairs it takes out of the scan stay known."""
    keep = ds.retrievable_marks()
    return with_statuses(base, keep) if keep else base


def conflict_scan(base: Corpus, config: CRPConfig, now: datetime, ds: DecisionSet) -> RetrievableSplit:
    """The whole-CKF scan of the decisions in force, the ``crp-inspect conflicts`` scan of the same store: every
    operator status applied (:func:`apply_decisions`, the corpus every run reads) and the pair decisions in force.
    Its ``aside``: the pairs a QUARANTINED / DELETED mark took out of it (docs/decisions/triage.md, "Out of
    retrieval"). Made from :func:`scan_corpus`'s scan, cached per (corpus incl. statuses, the config fields the
    scan reads, now, pair decisions): a change of any other field (the relevance gate, the budgets) reuses it
    (``scan_config_key``); a pair decision or another ``now`` re-arbitrates the kept checked pairs, a mark that
    takes a fact out of retrieval cuts its pairs (``crp_core.within_retrievable``)."""
    decisions, dkey = pipeline_decisions(ds)
    corpus = scan_corpus(base, ds)
    cid = check_id(base, corpus)
    scan = scan_once(corpus, _corpus_id(corpus), config, now, decisions, dkey, cid)
    return cut_to_retrievable(scan, corpus, cid, apply_decisions(base, ds), config)


def check_id(base: Corpus, corpus: Corpus) -> tuple[object, ...]:
    """What the text check reads of ``corpus`` (``base`` with operator statuses): ``base``'s facts and vectors
    and which facts are retrievable. A STALE / ACTIVE mark that keeps a fact retrievable is a new corpus to
    arbitrate (recency reads the status), not a new text check."""
    mask = by_identity(
        "retrievable_digest",
        corpus,
        lambda c: content_digest(np.packbits(np.asarray(c.retrievable, dtype=bool)).tobytes(), length=20),
    )
    return (*_corpus_id(base), mask)


def known_conflicts_in_force(
    base: Corpus | None, config: CRPConfig, now: datetime, ds: DecisionSet | None = None
) -> tuple[KnownSource, str]:
    """``(known conflicts, key)`` for the known-conflict guard: a ``crp_core.SelectionKnownConflicts`` over
    :func:`scan_corpus` (the whole-CKF scan's pairs of the run's selection, arbitrated at ``now`` with the pair
    decisions in force, plus those decisions), its checked pairs shared by every run over the same texts,
    vectors and retrievable facts; nothing when ``known_conflict_action`` is ``off``. A run selects only facts
    it retrieves, whose statuses are the same there as in :func:`apply_decisions`'s corpus. The key stands for
    what the lookup reads (it keys the run cache)."""
    if base is None or config.known_conflict_action == "off":
        return (), ""
    ds = decision_set() if ds is None else ds
    corpus = scan_corpus(base, ds)
    cid = check_id(base, corpus)
    fields = scan_config_key(config, CHECK_CONFIG_FIELDS)
    checks: RowChecks = memo_shared(("row_checks", cid, fields), lambda: RowChecks(corpus, config))
    key = content_digest(repr((_corpus_id(corpus), scan_config_key(config), now.isoformat())), length=20)
    return SelectionKnownConflicts(corpus, config, now, ds, checks=checks), f"{key}|{pair_decisions_key(ds)}"


# ---- the cleaned CKF ------------------------------------------------------------------------------
def ckf_download_name(source: str, fmt: str = "") -> tuple[str, str]:
    """(file name, format) of the cleaned CKF: the loaded file's name in its format (``kb.fmt``,
    else the extension of ``source``), or a zip of a CKF directory (format "dir")."""
    name = Path(str(source or "knowledge_base.jsonl")).name
    stem, ext = os.path.splitext(name)
    ext = ext.lower()
    fmt = (fmt or "").lower()
    if fmt in ("jsonl", "json", "csv"):
        return f"{stem if ext else name}.cleaned.{fmt}", "." + fmt
    if fmt == "dir":
        return f"{name or 'ckf'}.cleaned.zip", "dir"
    if ext in (".jsonl", ".json", ".csv"):
        return f"{stem}.cleaned{ext}", ext
    if ext == ".ndjson":
        return f"{stem}.cleaned.jsonl", ".jsonl"
    return f"{name or 'ckf'}.cleaned.zip", "dir"


def cleaned_ckf_bytes(kb: KnowledgeBase, ds: DecisionSet) -> tuple[bytes, str, CleanedExport]:
    """The CKF with the statuses in force applied, in the format it was loaded in
    (``crp_core.export_cleaned_ckf``): ``(bytes, file name, CleanedExport)``. A CKF folder comes as a zip with
    its export report, which names the CKF as the sidebar lists it (its file name) and the download by its
    file name: never the server's folder or the temporary directory the export was written in."""
    source = str(getattr(kb, "source", "") or "")
    name, fmt = ckf_download_name(source, getattr(kb, "fmt", ""))
    with tempfile.TemporaryDirectory(prefix="crp-cleaned-") as tmp:
        target = os.path.join(tmp, "cleaned" if fmt == "dir" else "cleaned" + fmt)
        info = export_cleaned_ckf(kb, ds, target, ckf_name=Path(source).name, out_name=name)
        if fmt != "dir":
            return Path(info.path).read_bytes(), name, info
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            for p in sorted(Path(info.path).iterdir()):
                zf.write(p, arcname=p.name)
        return buf.getvalue(), name, info


def sdk_download_name(source: str) -> str:
    """The SDK snapshot's file name: the loaded file's stem, ``.crprotocol.json``."""
    name = Path(str(source or "knowledge_base")).name
    return f"{os.path.splitext(name)[0] or name or 'knowledge_base'}.crprotocol.json"


def sdk_checksum_refusal(kb: KnowledgeBase, checksum: str) -> str | None:
    """Why an SDK snapshot with this checksum cannot be written here (BLAKE3 without the blake3
    module), or None (``crp_core.checksum_algorithm``)."""
    try:
        checksum_algorithm(kb, checksum)
    except CRPError as exc:
        return str(exc)
    return None


def sdk_snapshot_bytes(kb: KnowledgeBase, ds: DecisionSet, checksum: str = "auto") -> tuple[bytes, str, CleanedExport]:
    """The CKF with the decisions in force as a crprotocol SDK snapshot (``crp_core.export_sdk_snapshot``:
    the decisions as supersessions with operator events, the SDK's edges, event log and session state as
    read): ``(bytes, file name, CleanedExport)``."""
    with tempfile.TemporaryDirectory(prefix="crp-sdk-") as tmp:
        info = export_sdk_snapshot(kb, ds, os.path.join(tmp, "snapshot.json"), checksum=checksum, write_report=False)
        return Path(info.path).read_bytes(), sdk_download_name(kb.source), info


__all__ = [
    "DEFAULT_DB_FILE",
    "MAX_APPLIED",
    # reading and recording (crp_ui.decision_store)
    "audit_log",
    "decision_set",
    "open_store",
    "Away",
    "is_url",
    "shown_target",
    "unavailable",
    "writable_store",
    "pair_history",
    "latest_id",
    "record",
    # what the decisions do
    "AppliedSummary",
    "applied_summary",
    "applied_sentence",
    "parse_pair_param",
    "set_fingerprint",
    "pair_decisions_key",
    "kb_digest",
    "with_statuses",
    "apply_decisions",
    "pipeline_decisions",
    "scan_corpus",
    "conflict_scan",
    "check_id",
    "known_conflicts_in_force",
    "ckf_download_name",
    "cleaned_ckf_bytes",
    "sdk_download_name",
    "sdk_checksum_refusal",
    "sdk_snapshot_bytes",
]
