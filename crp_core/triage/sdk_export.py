"""The operators' decisions written back as a crprotocol SDK snapshot (``triage export --format sdk``;
docs/decisions/triage.md "The SDK export", docs/decisions/sdk-snapshots.md).

The decisions are first carried into the facts as for a cleaned CKF (:func:`carry_decisions`), then
said the SDK's way, each with an event in the snapshot's event log carrying ``origin: "operator"``,
the operator, the note, the decision and when it was taken:

* **override, or accept naming a winner**: the loser gets ``superseded_by`` = the winner and a
  ``superseded`` event (the SDK's own shape, ``{superseded_by, confidence}``, plus the operator's
  fields). A winner the SDK had superseded by this loser is restored: ``superseded_by`` cleared, a
  ``restored`` event (otherwise the SDK would retrieve neither fact);
* **mark_status**: QUARANTINED or DELETED take the fact out of the warm store (the SDK retrieves
  every fact it holds that is not superseded) with an ``archived`` event; a quarantined fact's SDK
  object travels in that event, so a deployment can restore it, a deleted one's does not. ACTIVE
  clears a ``superseded_by`` (a ``restored`` event). STALE has no SDK form without a successor: the
  fact is written not superseded and the report says so;
* **dismiss**, and an accepted tie: nothing in the snapshot (the SDK has no word for "not a
  conflict"); a supersession the SDK made between the two facts stays and the report says so.

The SDK's edges, event log, session state, community map and unknown keys are written as they were
read (:func:`crp_core.io.ckf.sdk_write.write_sdk_snapshot`), the header's counts and checksum anew.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

from crp_core.config import NEVER_RETRIEVED
from crp_core.decisions import Decision, DecisionSet, split_pair_key
from crp_core.io.ckf.sdk_facts import EVENT_ORIGIN
from crp_core.io.ckf.sdk_write import SdkEvent, SdkWritten, sdk_fact, write_sdk_snapshot
from crp_core.io.timeparse import parse_timestamp
from crp_core.model import (
    META_SUPERSEDED_BY,
    META_SUPERSEDED_BY_ORIGIN,
    ORIGIN_OPERATOR,
    Fact,
    KnowledgeBase,
    frozen_json,
    thawed_json,
)
from crp_core.triage.export import (
    INEXPRESSIBLE,
    CleanedExport,
    ExportError,
    ExportIssue,
    ExportReport,
    FactChange,
    carry_decisions,
    decision_order,
    describe_decision,
    report_path_for,
    triage_record,
    write_export_report,
)

#: ``--checksum`` choices: ``auto`` is the algorithm of the snapshot read (when it verified), else SHA-256
SDK_CHECKSUMS = ("auto", "sha256", "blake3")
#: the SDK's event types the export appends
EVENT_SUPERSEDED, EVENT_RESTORED, EVENT_ARCHIVED = "superseded", "restored", "archived"


@dataclass(frozen=True)
class SdkPlan:
    """What the SDK export writes (no I/O): the knowledge base as the snapshot says it, the events
    appended, and the report (``report.sdk`` is filled when written)."""

    kb: KnowledgeBase
    events: tuple[SdkEvent, ...]
    report: ExportReport


def _when(d: Decision, default: float) -> float:
    """The decision's time as epoch seconds (the export's time for a decision never recorded)."""
    try:
        return parse_timestamp(d.decided_at).timestamp() if d.decided_at else default
    except ValueError:
        return default


def _operator_fields(d: Decision) -> dict[str, Any]:
    """What every event of a decision carries: who, why, what and when (``origin: operator``)."""
    return {
        EVENT_ORIGIN: ORIGIN_OPERATOR,
        "operator": d.operator,
        "note": d.note,
        "decided_at": d.decided_at,
        "decision": d.kind,
        "decision_id": d.id,
    }


class _Plan:
    """The working state of :func:`plan_sdk_export`: facts by id after the carry, events and issues."""

    def __init__(self, kb: KnowledgeBase, carried: KnowledgeBase, now: float) -> None:
        self.kb = kb
        self.facts: dict[str, Fact] = {f.fact_id: f for f in carried.facts}
        self.events: list[SdkEvent] = []  # in the order they apply: pair decisions, then status marks
        self.issues: list[ExportIssue] = []
        self.restored: dict[str, Decision] = {}  # fact -> the decision that cleared its superseded_by
        self.now = now

    def event(self, d: Decision, kind: str, fact_id: str, payload: dict[str, Any]) -> None:
        self.events.append(SdkEvent(kind, fact_id, _when(d, self.now), frozen_json({**payload, **_operator_fields(d)})))

    def issue(self, code: str, facts: Iterable[str], d: Decision, message: str) -> None:
        self.issues.append(ExportIssue(INEXPRESSIBLE, code, tuple(facts), (d.id,), message))

    def read_successor(self, fid: str) -> str | None:
        """The fact's ``superseded_by`` as read (the SDK's, or the CKF's own), None when none."""
        f = self.kb.get(fid)
        succ = None if f is None else f.metadata.get(META_SUPERSEDED_BY)
        return succ if isinstance(succ, str) else None

    def successor(self, fid: str) -> str | None:
        """The fact's ``superseded_by`` as the export writes it so far."""
        succ = self.facts[fid].metadata.get(META_SUPERSEDED_BY)
        return succ if isinstance(succ, str) else None

    def restore(self, fid: str, d: Decision) -> None:
        """Clear the fact's ``superseded_by`` (it is retrieved again) with a ``restored`` event."""
        f = self.facts[fid]
        was = f.metadata.get(META_SUPERSEDED_BY)
        meta = {k: v for k, v in f.metadata.items() if k not in (META_SUPERSEDED_BY, META_SUPERSEDED_BY_ORIGIN)}
        self.facts[fid] = replace(f, metadata=meta, status="ACTIVE" if f.status == "STALE" else f.status)
        self.restored[fid] = d
        self.event(d, EVENT_RESTORED, fid, {"was_superseded_by": was})

    def changes(self, carried: tuple[FactChange, ...]) -> tuple[FactChange, ...]:
        """The report's fact changes as the snapshot says them: the carry's, with the status and the
        supersession written, and the facts restored, in CKF order."""
        by_id = {c.fact_id: c for c in carried}
        out: list[FactChange] = []
        for f in self.kb.facts:
            fid, now_f = f.fact_id, self.facts[f.fact_id]
            c = by_id.get(fid)
            if c is not None:
                kept = c.superseded_by if c.superseded_by == self.successor(fid) else None
                out.append(replace(c, status=now_f.status, superseded_by=kept))
            elif fid in self.restored:
                d = self.restored[fid]
                out.append(FactChange(fid, f.status, now_f.status, None, MappingProxyType(triage_record(d)), (d.id,)))
        return tuple(out)

    def pairs(self, ds: DecisionSet) -> None:
        """Supersessions (and restorations) of the pair decisions in force, in recording order."""
        for key, d in sorted(ds.pair_records.items(), key=lambda kv: decision_order(kv[1])):
            a, b = split_pair_key(key)
            if a not in self.facts or b not in self.facts:
                continue  # an unknown fact: listed by the carry already
            if d.kind == "dismiss" or d.winner is None:
                self._sdk_pair_kept(a, b, d)
                continue
            loser = b if d.winner == a else a
            if self.successor(d.winner) == loser and self.facts[d.winner].status == "STALE":
                if ds.statuses.get(d.winner) != "STALE":  # the winner superseded by its loser, as read
                    self.restore(d.winner, d)
            if self.successor(loser) == d.winner and self.facts[loser].status not in NEVER_RETRIEVED:
                self.event(d, EVENT_SUPERSEDED, loser, {"superseded_by": d.winner, "confidence": 1.0})

    def _sdk_pair_kept(self, a: str, b: str, d: Decision) -> None:
        for old, new in ((a, b), (b, a)):
            if self.read_successor(old) == new:
                self.issue(
                    "sdk_supersession_kept",
                    (old, new),
                    d,
                    f"{describe_decision(d)} keeps both facts, but the snapshot read superseded {old} by {new}: "
                    "kept as read (the SDK has no way to say the pair is not a conflict)",
                )

    def marks(self, ds: DecisionSet) -> None:
        """Status marks in force: out of the store, restored, or not expressible."""
        for fid, d in sorted(ds.status_decisions.items(), key=lambda kv: decision_order(kv[1])):
            if fid not in self.facts:
                continue
            status = d.new_status
            if status in NEVER_RETRIEVED:
                payload: dict[str, Any] = {"status": status}
                if status == "QUARANTINED":  # the fact's SDK object, so a deployment can restore it
                    raw = self.kb.sdk_state.facts.get(fid) if self.kb.sdk_state is not None else None
                    payload["fact"] = thawed_json(raw) if raw is not None else sdk_fact(self.facts[fid])
                self.event(d, EVENT_ARCHIVED, fid, payload)
            elif status == "ACTIVE" and self.successor(fid) is not None:
                self.restore(fid, d)
            elif status == "STALE" and self.successor(fid) is None:
                self.issue(
                    "stale_without_successor",
                    (fid,),
                    d,
                    f"{describe_decision(d)}: the SDK has no STALE without a successor; {fid} is written "
                    "not superseded (the SDK retrieves it)",
                )


def plan_sdk_export(kb: KnowledgeBase, decision_set: DecisionSet, *, now: float) -> SdkPlan:
    """The knowledge base, events and report of an SDK export of ``kb`` with ``decision_set`` (module
    docstring); ``now`` (epoch seconds) stamps the events of decisions never recorded."""
    carried, report = carry_decisions(kb, decision_set)
    plan = _Plan(kb, carried, now)
    plan.pairs(decision_set)
    plan.marks(decision_set)
    out = replace(carried, facts=tuple(plan.facts[f.fact_id] for f in carried.facts))
    # a winner STALE as read is restored in the snapshot: the carry's "winner_stale" is said there
    issues = tuple(i for i in report.issues if not (i.code == "winner_stale" and i.fact_ids[0] in plan.restored))
    sdk_report = replace(report, changes=plan.changes(report.changes), issues=issues + tuple(plan.issues), fmt="sdk")
    return SdkPlan(out, tuple(plan.events), sdk_report)


def checksum_algorithm(kb: KnowledgeBase, checksum: str) -> str:
    """The checksum algorithm of an SDK export: ``checksum`` itself, or for ``auto`` the algorithm of the
    snapshot read (a deployment that wrote BLAKE3 checks BLAKE3): its verified one, BLAKE3 when its
    checksum is not SHA-256 and could not be checked here, else ``sha256``. Raises
    :class:`ExportError` for BLAKE3 without the ``blake3`` module."""
    if checksum not in SDK_CHECKSUMS:
        raise ExportError(f"unknown checksum {checksum!r} (expected one of {', '.join(SDK_CHECKSUMS)})")
    algorithm, why = checksum, ""
    imp = kb.imported
    if checksum == "auto":
        algorithm = "sha256"
        if imp is not None and imp.integrity == "ok" and imp.algorithm:
            algorithm, why = imp.algorithm, "the snapshot read has a BLAKE3 checksum"
        elif imp is not None and imp.integrity == "unverifiable":
            algorithm, why = "blake3", "the snapshot read has a checksum that is not SHA-256, most likely BLAKE3"
    if algorithm == "blake3":
        try:
            importlib.import_module("blake3")
        except ImportError:
            said = f" ({why}, so its deployment checks BLAKE3)" if why else ""
            raise ExportError(
                f"a BLAKE3 checksum needs the blake3 module, which is not installed{said}: pip install blake3, "
                "or pass --checksum sha256 for a deployment without blake3"
            ) from None
    return algorithm


def export_sdk_snapshot(
    kb: KnowledgeBase,
    decision_set: DecisionSet,
    path: str | os.PathLike[str],
    *,
    checksum: str = "auto",
    report_path: str | os.PathLike[str] | None = None,
    write_report: bool = True,
    created_at: float | None = None,
) -> CleanedExport:
    """Write ``kb`` with every decision in force as a crprotocol SDK snapshot at ``path`` (``.json``;
    :func:`plan_sdk_export`), its checksum by :func:`checksum_algorithm`, and the export report as
    JSON (``report.sdk`` says what the snapshot holds); ``created_at`` (epoch seconds, default now) is
    the header's time. Both writes are atomic; the snapshot is written first."""
    import time

    out = os.fspath(path)
    rpath = None if not write_report else os.fspath(report_path) if report_path is not None else report_path_for(out)
    if rpath is not None and os.path.abspath(rpath) == os.path.abspath(out):
        raise ExportError(f"the export report {rpath} would overwrite the snapshot; name another report path")
    if os.path.splitext(out)[1].lower() != ".json":
        raise ExportError(f"{out}: an SDK snapshot is a .json file")
    algorithm = checksum_algorithm(kb, checksum)
    when = time.time() if created_at is None else created_at
    plan = plan_sdk_export(kb, decision_set, now=when)
    written: SdkWritten = write_sdk_snapshot(plan.kb, out, plan.events, algorithm=algorithm, created_at=when)
    report = replace(plan.report, path=out, report_path=rpath, sdk=written)
    if rpath is not None:
        write_export_report(rpath, report)
    return CleanedExport(
        path=out,
        n_facts=written.facts,
        applied=sum(1 for f in decision_set.statuses if kb.get(f) is not None),
        changed=report.changed,
        unknown_facts=decision_set.unknown_facts(kb),
        report=report,
    )
