"""The cleaned-CKF export: every operator decision in force written into the facts (SPEC-027 §2,
SPEC-009 §2.2 and §8; docs/reference/ckf.md: ``metadata`` is carried through and shown).

:func:`carry_decisions` is the pure part: the knowledge base with the decisions written into it and
an :class:`ExportReport` of what was written and what could not be. :func:`export_cleaned_ckf` writes
both: the CKF in the format of its path (:func:`crp_core.io.ckf.write_ckf`) and the report as JSON
next to it (:func:`report_path_for`). What is written per decision kind, and why, is
docs/decisions/triage.md, section "Export".
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from crp_core.config import NEVER_RETRIEVED
from crp_core.decisions import Decision, DecisionSet, split_pair_key
from crp_core.errors import CRPError
from crp_core.model import (
    META_SUPERSEDED_BY,
    META_SUPERSEDED_BY_ORIGIN,
    META_TRIAGE,
    META_TRIAGE_HISTORY,
    ORIGIN_OPERATOR,
    Fact,
    KnowledgeBase,
)
from crp_core.report import dumps, plain

if TYPE_CHECKING:
    from crp_core.io.ckf.sdk_write import SdkWritten

#: the keys of one triage record (``metadata.triage`` and each ``metadata.triage_history`` item)
TRIAGE_RECORD_KEYS = ("operator", "decided_at", "kind", "note")
#: the report's file name next to a CKF folder; next to a CKF file it is ``<stem>.export_report.json``
REPORT_FILE = "export_report.json"
#: issue categories of the report
CONFLICT, UNKNOWN_FACT, INEXPRESSIBLE = "conflict", "unknown_fact", "inexpressible"


class ExportError(CRPError):
    """The export cannot be written as asked (e.g. the report would overwrite the CKF)."""


# ---- records ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class FactChange:
    """One fact the export wrote a decision on."""

    fact_id: str
    status_before: str
    status: str  # as written
    superseded_by: str | None  # metadata.superseded_by as written (None: the fact lost no pair)
    triage: Mapping[str, Any]  # metadata.triage as written (the newest decision on the fact)
    decision_ids: tuple[int | None, ...]  # the decisions written on the fact, oldest first


@dataclass(frozen=True)
class DismissedPair:
    """A pair an operator dismissed (not a conflict): kept in the report, never in the facts."""

    fact_a: str
    fact_b: str
    decision_id: int | None
    operator: str
    decided_at: str | None
    note: str


@dataclass(frozen=True)
class ReplacedValue:
    """A metadata value the CKF already held that the export overwrote (the old value kept here)."""

    fact_id: str
    key: str
    old: Any
    new: Any


@dataclass(frozen=True)
class ExportIssue:
    """A decision, or part of one, the export did not or could not write.

    ``category``: ``conflict`` (decisions in force that contradict each other), ``unknown_fact`` (a
    decision naming a fact the CKF does not hold: nothing of it is written) or ``inexpressible``
    (what a fact's status and metadata cannot say). ``code`` names the case (docs/decisions/triage.md).
    """

    category: str
    code: str
    fact_ids: tuple[str, ...]
    decision_ids: tuple[int | None, ...]
    message: str


@dataclass(frozen=True)
class ExportReport:
    """What an export wrote and what it could not write (:func:`export_report_dict`)."""

    ckf_source: str  # the CKF the decisions were applied to
    n_facts: int
    decisions: int  # decisions in force considered (pair decisions + status marks)
    changes: tuple[FactChange, ...]  # in CKF order
    dismissed: tuple[DismissedPair, ...]  # sorted by pair
    replaced: tuple[ReplacedValue, ...]  # in CKF order
    issues: tuple[ExportIssue, ...]  # by category, then in decision order
    path: str | None = None  # the CKF written (None: not written, see carry_decisions)
    report_path: str | None = None  # the report's JSON file (None: not written)
    fmt: str = ""  # "jsonl" | "json" | "csv" | "parquet" | "dir" | "sdk" (a crprotocol snapshot)
    sdk: SdkWritten | None = None  # what an SDK export's snapshot holds (crp_core.triage.sdk_export)

    def of(self, category: str) -> tuple[ExportIssue, ...]:
        return tuple(i for i in self.issues if i.category == category)

    @property
    def conflicts(self) -> tuple[ExportIssue, ...]:
        return self.of(CONFLICT)

    @property
    def unknown(self) -> tuple[ExportIssue, ...]:
        return self.of(UNKNOWN_FACT)

    @property
    def inexpressible(self) -> tuple[ExportIssue, ...]:
        return self.of(INEXPRESSIBLE)

    @property
    def changed(self) -> Mapping[str, int]:
        """New status -> number of facts whose status the export changed (sorted by status)."""
        out: dict[str, int] = {}
        for c in self.changes:
            if c.status != c.status_before:
                out[c.status] = out.get(c.status, 0) + 1
        return MappingProxyType(dict(sorted(out.items())))


@dataclass(frozen=True)
class CleanedExport:
    """What :func:`export_cleaned_ckf` wrote."""

    path: str
    n_facts: int
    applied: int  # operator statuses that name a fact of the CKF
    changed: Mapping[str, int]  # new status -> number of facts whose status actually changed
    unknown_facts: tuple[str, ...]  # ids named by decisions in force that the CKF does not hold
    report: ExportReport  # what was written, and what could not be

    @property
    def report_path(self) -> str | None:
        return self.report.report_path


# ---- the pure part -----------------------------------------------------------------------------
def triage_record(d: Decision) -> dict[str, Any]:
    """``metadata.triage`` for decision ``d``: ``{operator, decided_at, kind, note}``."""
    return {"operator": d.operator, "decided_at": d.decided_at, "kind": d.kind, "note": d.note}


def decision_order(d: Decision) -> tuple[bool, int, str]:
    """Recording order: the store's id (commit order), else the stamp; unrecorded decisions last."""
    return (d.id is None, d.id if d.id is not None else 0, d.decided_at or "")


def _ids(ds: Iterable[Decision]) -> tuple[int | None, ...]:
    return tuple(d.id for d in ds)


def describe_decision(d: Decision) -> str:
    """``decision #3 (override: F1 wins over F2)``: a decision as the report names it."""
    ref = f"#{d.id} " if d.id is not None else ""
    if d.kind == "mark_status":
        return f"decision {ref}(mark {d.target_fact} {d.new_status})"
    if d.kind == "dismiss":
        return f"decision {ref}(dismiss {d.fact_a} | {d.fact_b})"
    return f"decision {ref}({d.kind}: {d.winner} wins over {d.fact_b if d.winner == d.fact_a else d.fact_a})"


def _history(meta: Mapping[str, Any], records: list[dict[str, Any]]) -> tuple[dict[str, Any], list[Any]]:
    """(metadata.triage, metadata.triage_history): the newest of ``records``, and every earlier record
    (the file's history, the file's triage record, then ``records`` but the newest), duplicates dropped."""
    old_hist = meta.get(META_TRIAGE_HISTORY)
    earlier: list[Any] = [] if old_hist is None else list(old_hist) if isinstance(old_hist, list) else [old_hist]
    if META_TRIAGE in meta:
        earlier.append(meta[META_TRIAGE])
    newest = records[-1]
    earlier.extend(records[:-1])
    hist: list[Any] = []
    for r in earlier:
        if r != newest and r not in hist:
            hist.append(r)
    return newest, hist


def carry_decisions(kb: KnowledgeBase, decision_set: DecisionSet) -> tuple[KnowledgeBase, ExportReport]:
    """``kb`` with every decision in force written into its facts, and the report of it (no I/O).

    * override, or accept naming a winner: the loser gets ``status: STALE`` (a loser already DELETED or
      QUARANTINED in the CKF keeps that status), ``metadata.superseded_by`` = the winner,
      ``metadata.superseded_by_origin`` = ``"operator"`` (unless the CKF's producer had superseded it
      by the same fact already: that supersession stays the producer's) and ``metadata.triage`` =
      ``{operator, decided_at, kind, note}``;
    * mark_status: the fact gets the status and the triage record (the mark decides the status even
      on a loser: it is the status the dashboard applies);
    * dismiss: nothing in the facts; listed in ``report.dismissed``.

    Earlier triage records (the file's, or several decisions on one fact) go to
    ``metadata.triage_history`` (oldest first); a different ``superseded_by`` the file held is
    overwritten and listed in ``report.replaced``. Other metadata keys are kept as they were.
    """
    carry = _Carry(kb)
    carry.read_pairs(decision_set)
    carry.read_marks(decision_set)
    carry.settle_statuses()
    carry.check_winners()
    facts, changes, replaced = carry.write_facts()
    rank = {CONFLICT: 0, UNKNOWN_FACT: 1, INEXPRESSIBLE: 2}
    issues = sorted(carry.issues, key=lambda ki: (rank[ki[1].category], ki[0]))
    report = ExportReport(
        ckf_source=kb.source,
        n_facts=len(kb),
        decisions=len(decision_set.pair_records) + len(decision_set.statuses),
        changes=tuple(changes),
        dismissed=tuple(sorted(carry.dismissed, key=lambda p: (p.fact_a, p.fact_b))),
        replaced=tuple(replaced),
        issues=tuple(i for _, i in issues),
        fmt=kb.fmt,
    )
    return replace(kb, facts=tuple(facts)), report


class _Carry:
    """:func:`carry_decisions`' working state: the decisions read (losses, wins, dismissals, status
    marks), each fact's status after the export and the issues found, in the order found."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb
        self.issues: list[tuple[tuple[bool, int, str], ExportIssue]] = []
        self.losses: dict[str, list[tuple[str, Decision]]] = {}  # loser -> [(winner, decision)], oldest first
        self.wins: list[tuple[str, str, Decision]] = []  # (winner, loser, decision)
        self.dismissed: list[DismissedPair] = []
        self.marks: dict[str, Decision] = {}
        self.status_after = {f.fact_id: f.status for f in kb.facts}
        self.why_stale: dict[str, str] = {}  # fact -> what made it STALE in the export

    def issue(self, category: str, code: str, facts: Iterable[str], ds: list[Decision], message: str) -> None:
        ds = sorted(ds, key=decision_order)
        key = decision_order(ds[0]) if ds else (True, 0, "")
        self.issues.append((key, ExportIssue(category, code, tuple(facts), _ids(ds), message)))

    def read_pairs(self, decision_set: DecisionSet) -> None:
        """The pair decisions in recording order: losses and wins, dismissals, what cannot be written."""
        for key, d in sorted(decision_set.pair_records.items(), key=lambda kv: decision_order(kv[1])):
            a, b = split_pair_key(key)
            missing = [f for f in (a, b) if self.kb.get(f) is None]
            if missing:
                self.issue(
                    UNKNOWN_FACT,
                    "unknown_fact",
                    missing,
                    [d],
                    f"{describe_decision(d)} names {', '.join(missing)}, not in the CKF; not written",
                )
            elif d.kind == "dismiss":
                self.dismissed.append(DismissedPair(a, b, d.id, d.operator, d.decided_at, d.note))
            elif d.winner is None:  # an accepted tie: both facts stay, with a NOTE (SPEC-027 §2.5)
                ref = f"#{d.id} " if d.id is not None else ""
                self.issue(
                    INEXPRESSIBLE,
                    "accept_without_winner",
                    (a, b),
                    [d],
                    f"decision {ref}(accept {a} | {b}, no winner) accepts a tie: there is no loser to mark, the "
                    "facts are unchanged and a re-scan shows the pair undecided",
                )
            else:
                loser = b if d.winner == a else a
                self.losses.setdefault(loser, []).append((d.winner, d))
                self.wins.append((d.winner, loser, d))

    def read_marks(self, decision_set: DecisionSet) -> None:
        """The status marks in recording order (a mark naming a fact the CKF lacks is an issue)."""
        for fid, d in sorted(decision_set.status_decisions.items(), key=lambda kv: decision_order(kv[1])):
            if self.kb.get(fid) is None:
                self.issue(
                    UNKNOWN_FACT,
                    "unknown_fact",
                    (fid,),
                    [d],
                    f"{describe_decision(d)} names {fid}, not in the CKF; not written",
                )
            else:
                self.marks[fid] = d

    def settle_statuses(self) -> None:
        """A loser becomes STALE (unless DELETED / QUARANTINED already), a mark sets its status."""
        marks, status_after, why_stale = self.marks, self.status_after, self.why_stale
        for fid, lost in self.losses.items():
            if fid in marks:  # the mark decides the status (set below)
                if marks[fid].new_status == "ACTIVE":
                    self.issue(
                        CONFLICT,
                        "loser_marked_active",
                        (fid,),
                        [marks[fid]] + [d for _, d in lost],
                        f"{fid} loses {', '.join(describe_decision(d) for _, d in lost)} but "
                        f"{describe_decision(marks[fid])} is in force: written ACTIVE (superseded_by and triage "
                        "written), so a re-scan arbitrates by authority",
                    )
            elif status_after[fid] not in NEVER_RETRIEVED:
                status_after[fid] = "STALE"
                why_stale[fid] = f"as the loser of {describe_decision(lost[-1][1])}"
            winners = list(dict.fromkeys(w for w, _ in lost))
            if len(winners) > 1:
                self.issue(
                    INEXPRESSIBLE,
                    "several_winners",
                    (fid, *winners),
                    [d for _, d in lost],
                    f"{fid} loses to {', '.join(winners)}; metadata.superseded_by holds one id: written "
                    f"{lost[-1][0]} (the newest decision), the others are in metadata.triage_history only",
                )
        for fid, d in marks.items():
            assert d.new_status is not None  # validated
            status_after[fid] = d.new_status
            if d.new_status == "STALE":
                why_stale[fid] = f"by {describe_decision(d)}"

    def check_winners(self) -> None:
        """A winner written STALE: both facts of its pair are STALE, a re-scan may decide otherwise."""
        for winner, loser, d in self.wins:
            if self.status_after[winner] != "STALE":
                continue
            if winner in self.why_stale:
                cause = [self.marks[winner]] if winner in self.marks else [x for _, x in self.losses[winner]]
                self.issue(
                    CONFLICT,
                    "winner_stale",
                    (winner, loser),
                    [d, *cause],
                    f"{winner} wins {describe_decision(d)} but is written STALE {self.why_stale[winner]}: both "
                    "facts are STALE, so a re-scan may arbitrate the pair against the decision",
                )
            else:
                self.issue(
                    INEXPRESSIBLE,
                    "winner_stale",
                    (winner, loser),
                    [d],
                    f"{winner} wins {describe_decision(d)} but is STALE in the CKF: both facts are STALE, so a "
                    "re-scan may arbitrate the pair against the decision",
                )

    def write_facts(self) -> tuple[list[Fact], list[FactChange], list[ReplacedValue]]:
        """The facts with the decisions written (status, superseded_by, triage records), in CKF order."""
        facts: list[Fact] = []
        changes: list[FactChange] = []
        replaced: list[ReplacedValue] = []
        losses, marks = self.losses, self.marks
        for f in self.kb.facts:
            fid = f.fact_id
            on_fact = sorted(
                [d for _, d in losses.get(fid, ())] + ([marks[fid]] if fid in marks else []), key=decision_order
            )
            if not on_fact:
                facts.append(f)
                continue
            meta = dict(f.metadata)
            superseded = losses[fid][-1][0] if fid in losses else None
            if superseded is not None:
                old = meta.get(META_SUPERSEDED_BY)
                if META_SUPERSEDED_BY in meta and old != superseded:
                    replaced.append(ReplacedValue(fid, META_SUPERSEDED_BY, old, superseded))
                if old != superseded:  # the operator's; the producer's own (the SDK's) is kept unmarked
                    meta[META_SUPERSEDED_BY_ORIGIN] = ORIGIN_OPERATOR
                meta[META_SUPERSEDED_BY] = superseded
            newest, hist = _history(meta, [triage_record(d) for d in on_fact])
            meta[META_TRIAGE] = newest
            if hist or META_TRIAGE_HISTORY in meta:
                meta[META_TRIAGE_HISTORY] = hist
            status = self.status_after[fid]
            facts.append(replace(f, status=status, metadata=meta))
            changes.append(FactChange(fid, f.status, status, superseded, MappingProxyType(dict(newest)), _ids(on_fact)))
        return facts, changes, replaced


# ---- the report --------------------------------------------------------------------------------
EXPORT_REPORT_KIND = "crp-inspect.triage-export"
EXPORT_REPORT_VERSION = 1


def _issue_dict(i: ExportIssue) -> dict[str, Any]:
    return {"code": i.code, "fact_ids": list(i.fact_ids), "decision_ids": list(i.decision_ids), "message": i.message}


def export_report_dict(r: ExportReport) -> dict[str, Any]:
    """The export report (``crp-inspect triage export``, ``export_report.json``; docs/decisions/triage.md
    "Export"): what the cleaned CKF carries and what it could not. Deterministic: no export time."""
    return {
        "kind": EXPORT_REPORT_KIND,
        "version": EXPORT_REPORT_VERSION,
        "ckf": r.ckf_source,
        "out": r.path,
        "format": r.fmt,
        "n_facts": r.n_facts,
        "decisions_in_force": r.decisions,
        "changed": dict(r.changed),
        "facts": [
            {
                "fact_id": c.fact_id,
                "status_before": c.status_before,
                "status": c.status,
                "superseded_by": c.superseded_by,
                "triage": dict(c.triage),
                "decision_ids": list(c.decision_ids),
            }
            for c in r.changes
        ],
        "dismissed": [
            {
                "fact_a": p.fact_a,
                "fact_b": p.fact_b,
                "decision_id": p.decision_id,
                "operator": p.operator,
                "decided_at": p.decided_at,
                "note": p.note,
            }
            for p in r.dismissed
        ],
        "replaced": [
            {"fact_id": v.fact_id, "key": v.key, "old": plain(v.old), "new": plain(v.new)} for v in r.replaced
        ],
        "conflicts": [_issue_dict(i) for i in r.conflicts],
        "unknown_facts": [_issue_dict(i) for i in r.unknown],
        "inexpressible": [_issue_dict(i) for i in r.inexpressible],
        **({} if r.sdk is None else {"sdk": sdk_written_dict(r.sdk)}),
    }


def sdk_written_dict(w: SdkWritten) -> dict[str, Any]:
    """The ``sdk`` section of an SDK export's report: what the snapshot holds (its header's time left
    out, so the report is the same for the same decisions)."""
    return {
        "algorithm": w.algorithm,
        "checksum": w.header.get("checksum"),
        "facts": w.facts,
        "edges": w.edges,
        "events_added": w.events_added,
        "left_out": list(w.left_out),
        "edges_left_out": w.edges_left_out,
        "from_snapshot": w.from_snapshot,
        "signature_kept": w.signature_kept,
        "lost": [{"what": what, "facts": n} for what, n in w.lost],
    }


def write_export_report(path: str | os.PathLike[str], report: ExportReport) -> str:
    """Write the report's JSON (:func:`export_report_dict`) to ``path``, whole or not at all."""
    from crp_core.support.files import write_text_atomic

    return write_text_atomic(path, dumps(export_report_dict(report)) + "\n")


# ---- writing -----------------------------------------------------------------------------------
def report_path_for(path: str | os.PathLike[str]) -> str:
    """Where the report of an export to ``path`` goes: ``<dir>/export_report.json`` for a CKF folder
    (no extension), ``<stem>.export_report.json`` next to a CKF file."""
    path = os.fspath(path)
    stem, ext = os.path.splitext(path)
    return os.path.join(path, REPORT_FILE) if ext == "" else f"{stem}.{REPORT_FILE}"


def export_cleaned_ckf(
    kb: KnowledgeBase,
    decision_set: DecisionSet,
    path: str | os.PathLike[str],
    *,
    report_path: str | os.PathLike[str] | None = None,
    write_report: bool = True,
    ckf_name: str | None = None,
    out_name: str | None = None,
) -> CleanedExport:
    """Write ``kb`` with every decision in force carried (:func:`carry_decisions`) in the format of
    ``path`` (``crp_core.io.ckf.write_ckf``; the producer's given edges, an SDK snapshot's, in
    ``metadata.sdk_edges`` of their source fact as ``import-sdk`` writes them), and the export report
    as JSON at ``report_path``
    (default :func:`report_path_for`; ``write_report=False`` writes no report file). Both writes are
    atomic; the CKF is written first. The report names the CKF read and the CKF written by their paths
    (``kb.source``, ``path``: what a command line was given), or by ``ckf_name`` / ``out_name`` where those
    paths mean nothing to the reader (a server's folder and temporary directory behind a download)."""
    from crp_core.io.ckf.sdk import with_edges_in_metadata
    from crp_core.io.ckf.write import ckf_format, write_ckf

    out = os.fspath(path)
    rpath = None if not write_report else os.fspath(report_path) if report_path is not None else report_path_for(out)
    if rpath is not None and os.path.abspath(rpath) == os.path.abspath(out):
        raise ExportError(f"the export report {rpath} would overwrite the cleaned CKF; name another report path")
    cleaned, report = carry_decisions(kb, decision_set)
    written = write_ckf(with_edges_in_metadata(cleaned), out)  # a snapshot's edges too (import-sdk's way)
    report = replace(
        report,
        ckf_source=ckf_name if ckf_name is not None else report.ckf_source,
        path=out_name if out_name is not None else written,
        report_path=rpath,
        fmt=ckf_format(written) or "",
    )
    if rpath is not None:
        write_export_report(rpath, report)
    unknown = decision_set.unknown_facts(kb)
    return CleanedExport(
        path=written,
        n_facts=len(cleaned),
        applied=sum(1 for f in decision_set.statuses if kb.get(f) is not None),
        changed=report.changed,
        unknown_facts=unknown,
        report=report,
    )


#: largest export report read back (one record per decision and fact change: small)
_MAX_REPORT_BYTES = 64 * 1024 * 1024


def load_export_report(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The JSON of an export report written by :func:`export_cleaned_ckf` (ExportError if it is not one)."""
    from crp_core.errors import ValidationError
    from crp_core.support.files import read_regular_file

    try:  # a regular file only (a FIFO would block): as every input, docs/decisions/hardening.md
        doc = json.loads(read_regular_file(path, max_bytes=_MAX_REPORT_BYTES, what="export report").decode("utf-8"))
    except ValidationError as exc:
        raise ExportError(
            f"{os.fspath(path)}: cannot read the export report: {'; '.join(p.message for p in exc.problems) or exc}"
        ) from None
    except ValueError as exc:
        raise ExportError(f"{os.fspath(path)}: cannot read the export report: {exc}") from None
    if not isinstance(doc, dict) or doc.get("kind") != EXPORT_REPORT_KIND:
        raise ExportError(f"{os.fspath(path)}: not a crp-inspect export report")
    return doc
