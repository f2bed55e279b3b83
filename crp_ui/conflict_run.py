"""The conflicts of the current run (SPEC-027 §2.4 "conflicts are logged, not hidden") and what the
operators' decisions changed in it.

Pure functions of :class:`~crp_core.PipelineResult` records (no Streamlit): the run's stage-4 pairs, their
audit events and NOTE blocks as the envelope carries them, the statuses operators set.
"""

from __future__ import annotations

import pandas as pd

from crp_core import (
    CONFLICTS,
    AuditEvent,
    ConflictPair,
    DecisionSet,
    KnowledgeBase,
    PipelineResult,
)

from .conflict_case import arbitration_label

ENVELOPE_PAIR_COLUMNS = (
    "fact_a",
    "fact_b",
    "patterns",
    "similarity",
    "authority_a",
    "authority_b",
    "margin",
    "outcome",
    "suppressed",
    "decision",
    "skipped",
)


def envelope_pairs_frame(result: PipelineResult) -> pd.DataFrame:
    """The run's contradiction pairs in processing order (skipped ones included)."""
    rows = [
        {
            "fact_a": p.fact_a,
            "fact_b": p.fact_b,
            "patterns": p.patterns_text(),
            "similarity": p.similarity,
            "authority_a": p.authority[p.fact_a].authority,
            "authority_b": p.authority[p.fact_b].authority,
            "margin": p.margin,
            "outcome": arbitration_label(p) if not p.skipped else "skipped",
            "suppressed": p.suppressed or "",
            "decision": p.decision or "",
            "skipped": p.skipped,
        }
        for p in result.resolution.pairs
    ]
    return pd.DataFrame(rows, columns=list(ENVELOPE_PAIR_COLUMNS))


def audit_event_for(result: PipelineResult, pair: ConflictPair) -> AuditEvent | None:
    """The run's ``CONTRADICTION_RESOLVED`` (or ``CONTRADICTION_DISMISSED``) event of ``pair``, or None: stage 4
    logs one event per arbitrated pair (``Resolution.audit``), naming its facts as ``fact_a`` / ``fact_b``."""
    for ev in result.resolution.audit:
        if (ev.data.get("fact_a"), ev.data.get("fact_b")) == (pair.fact_a, pair.fact_b):
            return ev
    return None


def note_in_envelope(result: PipelineResult, pair: ConflictPair) -> str | None:
    """The NOTE block listing both facts of a tied pair exactly as the envelope carries it (the pair's tie
    group's NOTE), or None."""
    note = result.envelope.note_covering(pair.fact_a, pair.fact_b)
    return note if note is not None and note in result.envelope.text else None


#: what an operator's status does to the facts it marks (SPEC-009 statuses, docs/decisions/triage.md)
STATUS_EFFECTS = {
    "QUARANTINED": "never retrieved",
    "DELETED": "never retrieved",
    "STALE": "recency factor = stale_floor",
    "ACTIVE": "retrievable, CKF status overridden",
}
EFFECT_COLUMNS = (
    "fact_id",
    "status in CKF",
    "operator status",
    "effect",
    "scored in this run",
    "in envelope",
    "by",
    "at",
)


def operator_effects_frame(result: PipelineResult, ds: DecisionSet, base_kb: KnowledgeBase) -> pd.DataFrame:
    """Operator statuses in force for facts of this CKF, and what they did to this run."""
    in_env = {pf.fact_id for pf in result.envelope.order}
    scored = {f.fact_id for f in result.outcomes}
    rows = []
    for fid, status in sorted(ds.statuses.items()):
        f = base_kb.get(fid)
        if f is None:
            continue
        d = ds.status_decisions.get(fid)
        rows.append(
            {
                "fact_id": fid,
                "status in CKF": f.status,
                "operator status": status,
                "effect": STATUS_EFFECTS[status],
                "scored in this run": fid in scored,
                "in envelope": fid in in_env,
                "by": d.operator if d is not None else "",
                "at": d.decided_at if d is not None else "",
            }
        )
    return pd.DataFrame(rows, columns=list(EFFECT_COLUMNS))


def envelope_change(before: PipelineResult, after: PipelineResult) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(facts that left the envelope, facts that entered it) from run ``before`` to run ``after``,
    each in the packed order of the run that holds them."""
    b = [pf.fact_id for pf in before.envelope.order]
    a = [pf.fact_id for pf in after.envelope.order]
    return tuple(f for f in b if f not in set(a)), tuple(f for f in a if f not in set(b))


def _run_summary(r: PipelineResult) -> dict[str, str]:
    res = r.resolution
    dismissed = sum(1 for p in res.pairs if p.decision == "dismiss")
    return {
        CONFLICTS: str(r.headers.get(CONFLICTS, "")),
        "conflict pairs (arbitrated / tied / dismissed)": f"{res.detected} / {res.unresolved} / {dismissed}",
        "suppressed facts": ", ".join(r.corpus.kb.facts[int(i)].fact_id for i in res.suppressed) or "-",
        "NOTE blocks in the envelope": str(len(r.envelope.notes)),
        "facts in the envelope": str(len(r.envelope.order)),
    }


def effect_frame(before: PipelineResult, after: PipelineResult) -> pd.DataFrame:
    """The run without the operators' decisions next to the run with them (what they changed)."""
    sb, sa = _run_summary(before), _run_summary(after)
    rows = [{"": k, "without operator decisions": sb[k], "with them (this run)": sa[k]} for k in sb]
    return pd.DataFrame(rows, columns=["", "without operator decisions", "with them (this run)"])


def near_conflicts_text(result: PipelineResult) -> str | None:
    """The packed pairs just below ``contradiction_similarity`` whose texts value-conflict, as one warning
    (``PipelineResult.near_conflicts``; None when there is none)."""
    found = result.near_conflicts
    if not found:
        return None
    top = result.config.contradiction_similarity
    listed = "; ".join(f"{n.fact_a} ↔ {n.fact_b} (cos {n.similarity:.4f}, {', '.join(n.patterns)})" for n in found)
    return (
        f"{len(found)} pair(s) of the envelope read as a value conflict just below contradiction_similarity "
        f"{top:g}, so stage 4 never arbitrated them and both facts reach the model: {listed}. The triage queue "
        "holds only pairs above the threshold: decide each pair below (dismiss it if it is no conflict: no run "
        "reports it any more; accept or override it to have it arbitrated in every run that packs both), or lower "
        "contradiction_similarity to let authority decide them."
    )
