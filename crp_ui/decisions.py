"""Operator decisions in the dashboard: where the triage store is, what is in force, and
how it reaches every page's pipeline run.

* **Which database**: this session's choice (the Conflicts page's "Decision database" field), else
  ``$CRP_INSPECT_TRIAGE_DB``, else ``.crp_triage.sqlite`` in the working directory. Every session
  reading the same file sees the same decisions.
* **Reading** never creates a file: a missing database means "no decisions yet". The store object
  is shared by all sessions (``st.cache_resource`` keyed by the file's path and inode; the store
  serialises its calls) and re-read on every run: the decisions in force are folded once per
  audit-log length (the log is append-only, so its length identifies its state), so a decision
  recorded by any session shows in every other session on its next rerun.
* **Recording** opens the store read-write (creating the file on the first decision) for one
  transaction.
* **Applying**: :func:`apply_decisions` gives the prepared corpus with the operators' statuses
  (``crp_core.triage.apply_to_corpus``; one cached object per status set, so the graph / neighbour
  tables are built once), :func:`pipeline_decisions` gives ``run_pipeline``'s ``decisions`` and the
  cache-key string for them. ``crp_ui.state.get_corpus`` / ``get_result`` call both, so every page
  runs the pipeline with the decisions in force.
* :func:`conflict_scan`: the whole-CKF scan (``crp-inspect conflicts``) for the triage queue, cached
  per (corpus, config, now, decisions).
"""

from __future__ import annotations

import hashlib
import json
import os
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import streamlit as st

from crp_core.config import CRPConfig
from crp_core.corpus.prepared import Corpus
from crp_core.records import KnownConflict
from crp_core.triage import Decision, DecisionSet, DecisionStore, TriageStoreError, default_db_path

#: the database file used when neither this session nor ``$CRP_INSPECT_TRIAGE_DB`` names one
DEFAULT_DB_FILE = ".crp_triage.sqlite"
#: session-state key of this session's database path (set on the Conflicts page)
K_DB_PATH = "crp.triage.db_path"
#: applied corpora / scans kept per process
MAX_APPLIED = 8
MAX_SCANS = 16


# ---- where -------------------------------------------------------------------------------------
def db_path() -> str:
    """This session's database path, else ``$CRP_INSPECT_TRIAGE_DB``, else ``./.crp_triage.sqlite``."""
    chosen = str(st.session_state.get(K_DB_PATH) or "").strip()
    return chosen or default_db_path() or DEFAULT_DB_FILE


def db_path_origin() -> str:
    """Where :func:`db_path` came from: "this session", "$CRP_INSPECT_TRIAGE_DB" or "default"."""
    if str(st.session_state.get(K_DB_PATH) or "").strip():
        return "this session"
    return "$CRP_INSPECT_TRIAGE_DB" if default_db_path() else "default"


def set_db_path(path: str | None) -> str | None:
    """Use ``path`` in this session (empty: back to the default). Returns an error message when
    the path cannot hold a database (a directory, a missing parent directory); the path is kept
    unchanged then. The file itself is checked when it is read (:func:`decision_set`)."""
    p = str(path or "").strip()
    if p:
        if os.path.isdir(p):
            return f"{p} is a directory; give a file path (e.g. {os.path.join(p, DEFAULT_DB_FILE)})"
        parent = os.path.dirname(os.path.abspath(p))
        if not os.path.isdir(parent):
            return f"directory {parent} does not exist"
    st.session_state[K_DB_PATH] = p
    return None


def _file_id(path: str) -> tuple[int, int] | None:
    """(device, inode) of the file, or None when it does not exist (yet)."""
    try:
        s = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise TriageStoreError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return (s.st_dev, s.st_ino)


# ---- reading -------------------------------------------------------------------------------------
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
    """The shared store of :func:`db_path` (None while the file does not exist).

    Raises :class:`TriageStoreError` (a ``CRPError``) for a file that is not a usable decision
    database: corrupt, another application's, a newer schema.
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


def applied_summary(ds: DecisionSet, kb: Any) -> AppliedSummary:
    """What ``ds`` does to ``kb`` (the CKF as loaded); decisions naming facts it lacks are left out."""
    from crp_core.triage import split_pair_key

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


# ---- the selected pair (the Conflicts page, ``?pair=``) -------------------------------------------
#: session-state key of the conflict pair selected on the Conflicts page (a ``pair_key``)
K_PAIR = "crp.state.selected_pair"


def parse_pair_param(value: Any) -> tuple[str | None, str]:
    """A ``pair`` URL value -> (canonical pair key or None, warning or ""). Accepts ``a|b`` in either
    order (the ids escaped as in ``crp_core.triage.pair_key``); anything else is refused with a warning."""
    from crp_core.triage import pair_key, split_pair_key

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
    return pair_key(a, b), ""


def selected_pair() -> str | None:
    """The pair key selected on the Conflicts page (from the page or the URL), None when none is."""
    v = st.session_state.get(K_PAIR)
    return str(v) if v else None


def select_pair(key: str | None) -> None:
    """Select the pair ``key`` (None clears the selection)."""
    st.session_state[K_PAIR] = key or None


# ---- fingerprints --------------------------------------------------------------------------------
def _digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()[:20]


def set_fingerprint(ds: DecisionSet) -> str:
    """Digest of the decisions in force ("" when there are none): equal sets, equal digests."""
    return _digest(ds.to_dict()) if ds else ""


def pair_decisions_key(ds: DecisionSet) -> str:
    """Digest of the pair decisions alone ("" when there are none): the pipeline cache key part
    (statuses reach the cache key through the corpus's statuses)."""
    return _digest({k: dict(v) for k, v in ds.pair_decisions.items()}) if ds.pair_decisions else ""


# ---- applying ------------------------------------------------------------------------------------
def _statuses_known(corpus: Corpus, statuses: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """The (fact id, status) items that name a fact of the corpus and change its status."""
    kb = corpus.kb
    out = []
    for fid, s in sorted(statuses.items()):
        f = kb.get(fid)
        if f is not None and f.status != s:
            out.append((fid, s))
    return tuple(out)


_KB_DIGESTS: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()


def kb_digest(kb: Any) -> str:
    """``kb.data_fingerprint`` (every fact field: timestamps, TTLs, ... change scores), computed once
    per KnowledgeBase object."""
    try:
        return _KB_DIGESTS[kb]
    except (KeyError, TypeError):
        pass
    d = kb.data_fingerprint
    try:
        _KB_DIGESTS[kb] = d
    except TypeError:  # not weak-referenceable
        pass
    return d


def _corpus_id(corpus: Corpus) -> tuple:
    from . import cache

    return (kb_digest(corpus.kb), cache.corpus_digest(corpus), corpus.index.m, corpus.index.ef_construction)


@st.cache_resource(show_spinner=False, max_entries=MAX_APPLIED)
def _with_statuses(_corpus: Corpus, corpus_id: tuple, items: tuple[tuple[str, str], ...]) -> Any:
    del corpus_id  # cache key only
    return _corpus.with_statuses(dict(items))


def with_statuses(corpus: Corpus, statuses: dict[str, str]) -> Any:
    """``corpus`` with ``statuses`` applied, one shared object per (corpus, statuses): its lazily
    built neighbour table and graph survive reruns. Unknown ids are ignored (as in
    ``crp_core.triage.apply_to_corpus``)."""
    items = _statuses_known(corpus, statuses)
    if not items:
        return corpus
    return _with_statuses(corpus, _corpus_id(corpus), items)


def apply_decisions(corpus: Corpus, ds: DecisionSet | None = None) -> Any:
    """The prepared corpus with the operators' statuses in force (``apply_to_corpus`` semantics):
    a QUARANTINED / DELETED fact is never retrieved, a STALE one gets ``stale_floor``."""
    if corpus is None:
        return None
    ds = decision_set() if ds is None else ds
    if not ds.statuses:
        return corpus
    return with_statuses(corpus, dict(ds.statuses))


def pipeline_decisions(ds: DecisionSet | None = None) -> tuple[dict[str, Any] | None, str]:
    """``(decisions, decisions_key)`` for ``run_pipeline`` / ``crp_ui.cache.pipeline_result``:
    the pair decisions in force (None when there are none) and their digest."""
    ds = decision_set() if ds is None else ds
    if not ds.pair_decisions:
        return None, ""
    return {k: dict(v) for k, v in ds.pair_decisions.items()}, pair_decisions_key(ds)


# ---- the whole-CKF scan --------------------------------------------------------------------------
def scan_corpus(base: Any, ds: DecisionSet) -> Any:
    """The corpus the triage queue scans: the CKF's own statuses plus ``DecisionSet.scan_statuses``."""
    keep = ds.scan_statuses()
    return with_statuses(base, keep) if keep else base


@st.cache_resource(show_spinner=False)
def _scans() -> Any:
    """The finished whole-CKF scans of this process, shared by every session (an LRU registry
    rather than a cached function, so the scan can draw its progress bar where it is called)."""
    from .cache import Registry

    return Registry(MAX_SCANS)


def _scan(corpus: Corpus, config: CRPConfig, now: Any, decisions: Any, key: tuple) -> Any:
    """``scan_ckf`` once per ``key``, with a progress bar (pairs text-checked, rate, time left)."""
    from crp_core.analysis.scan import scan_ckf

    from .progress import Bar

    hit = _scans().get(key)
    if hit is not None:
        return hit
    bar = Bar("Scanning the whole CKF for conflicts", unit="pairs")
    try:
        got = scan_ckf(corpus, config, now, decisions=decisions, progress=bar)
    finally:
        bar.empty()
    _scans().put(key, got)
    return got


def conflict_scan(base: Any, config: CRPConfig, now: Any, ds: DecisionSet) -> Any:
    """``crp_core.analysis.scan.scan_ckf`` over :func:`scan_corpus` with the pair decisions in force,
    cached per (corpus incl. statuses, the config fields the scan reads, now, pair decisions): a change of
    any other field (the relevance gate, the budgets) reuses the scan (``scan_config_key``)."""
    from crp_core.analysis.scan import scan_config_key

    corpus = scan_corpus(base, ds)
    decisions, dkey = pipeline_decisions(ds)
    key = _corpus_id(corpus) + (scan_config_key(config), now.isoformat(), dkey)
    return _scan(corpus, config, now, decisions, key)


def known_conflicts_in_force(
    base: Any, config: CRPConfig, now: Any, ds: DecisionSet | None = None
) -> tuple[tuple[KnownConflict, ...], str]:
    """``(known conflicts, key)`` for the known-conflict guard (``crp_core.analysis.known``): the
    cached whole-CKF scan of :func:`conflict_scan` plus the operators' pair decisions; nothing when
    ``known_conflict_action`` is ``off``. The key digests them (it keys the run cache)."""
    if base is None or config.known_conflict_action == "off":
        return (), ""
    from .cache import by_identity

    ds = decision_set() if ds is None else ds
    # once per scan (it stands for its corpus, config fields and time) and set of pair decisions: every
    # page's rerun reads this
    return by_identity(
        "known_conflicts",
        conflict_scan(base, config, now, ds),
        lambda scan: _known_in_force(scan, ds),
        extra=pair_decisions_key(ds),
    )


def _known_in_force(scan: Any, ds: DecisionSet) -> tuple[tuple[KnownConflict, ...], str]:
    from crp_core.analysis.known import known_conflicts

    known = known_conflicts(scan, ds)
    return known, _digest([(k.winner, k.loser, k.source) for k in known])


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


def cleaned_ckf_bytes(kb: Any, ds: DecisionSet) -> tuple[bytes, str, Any]:
    """The CKF with the statuses in force applied, in the format it was loaded in
    (``crp_core.triage.export_cleaned_ckf``): ``(bytes, file name, CleanedExport)``."""
    import io
    import tempfile
    import zipfile

    from crp_core.triage import export_cleaned_ckf

    name, fmt = ckf_download_name(getattr(kb, "source", ""), getattr(kb, "fmt", ""))
    with tempfile.TemporaryDirectory(prefix="crp-cleaned-") as tmp:
        target = os.path.join(tmp, "cleaned" if fmt == "dir" else "cleaned" + fmt)
        info = export_cleaned_ckf(kb, ds, target)
        if fmt != "dir":
            return Path(info.path).read_bytes(), name, info
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            for p in sorted(Path(info.path).iterdir()):
                zf.write(p, arcname=p.name)
        return buf.getvalue(), name, info


__all__ = [
    "DEFAULT_DB_FILE",
    "K_DB_PATH",
    "db_path",
    "db_path_origin",
    "set_db_path",
    "open_store",
    "decision_set",
    "audit_log",
    "pair_history",
    "record",
    "set_fingerprint",
    "pair_decisions_key",
    "with_statuses",
    "apply_decisions",
    "pipeline_decisions",
    "scan_corpus",
    "conflict_scan",
    "ckf_download_name",
    "cleaned_ckf_bytes",
    "AppliedSummary",
    "applied_summary",
    "applied_sentence",
    "K_PAIR",
    "parse_pair_param",
    "selected_pair",
    "select_pair",
]
