"""The operator decisions a cleaned CKF carries in its facts' metadata (SPEC-009 §8, docs/decisions/triage.md
"Export"): :func:`carried_decisions` rebuilds them without the decision store, :func:`with_carried_decisions` lays
them under the decisions a run is given, so an exported CKF loaded elsewhere is arbitrated the operators' way.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from crp_core.decisions import Decision, DecisionError, Decisions, DecisionSet, validate_decision
from crp_core.model import (  # the metadata keys a cleaned CKF carries a decision in, defined beside the facts
    META_SUPERSEDED_BY,
    META_TRIAGE,
    META_TRIAGE_HISTORY,
    KnowledgeBase,
)
from crp_core.support.memo import WeakMemo


def _pair_record(meta: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The newest override / accept triage record of a fact's metadata, or None."""
    hist = meta.get(META_TRIAGE_HISTORY)
    records = [*(hist if isinstance(hist, list) else ()), meta.get(META_TRIAGE)]
    for r in reversed(records):
        if isinstance(r, Mapping) and r.get("kind") in ("override", "accept"):
            return r
    return None


def carried_decisions(kb: KnowledgeBase, report: Mapping[str, Any] | None = None) -> DecisionSet:
    """The pair decisions an exported CKF carries, rebuilt without the decision store.

    A fact with ``metadata.superseded_by`` naming a fact of ``kb`` and an override / accept triage
    record gives that decision (the superseding fact wins); the dismissed pairs of ``report`` (the
    export report's JSON, :func:`crp_core.triage.export.load_export_report`) give dismissals. Statuses are in the file
    already, so the set holds no status marks. Give it to ``scan_ckf(decisions=)`` or
    ``run_pipeline(decisions=)`` so that a re-scan elsewhere arbitrates as the operators did.
    Malformed records (not written by this export) are skipped.
    """
    found: list[Decision] = []
    for f in kb.facts:
        winner, rec = f.metadata.get(META_SUPERSEDED_BY), _pair_record(f.metadata)
        if rec is None or not isinstance(winner, str) or winner == f.fact_id or kb.get(winner) is None:
            continue
        found.append(
            Decision.new(
                f.fact_id,
                winner,
                str(rec["kind"]),
                str(rec.get("operator") or "?"),
                winner=winner,
                note=str(rec.get("note") or ""),
                decided_at=_text(rec.get("decided_at")),
            )
        )
    for p in (report or {}).get("dismissed", ()):
        if isinstance(p, Mapping) and isinstance(p.get("fact_a"), str) and isinstance(p.get("fact_b"), str):
            found.append(
                Decision.new(
                    p["fact_a"],
                    p["fact_b"],
                    "dismiss",
                    str(p.get("operator") or "?"),
                    note=str(p.get("note") or ""),
                    decided_at=_text(p.get("decided_at")),
                )
            )
    valid: list[Decision] = []
    for d in _without_standoffs(found):
        try:
            valid.append(validate_decision(d, new=False))  # text rules of the version that wrote it
        except DecisionError:
            continue
    return DecisionSet.from_decisions(valid)


def _without_standoffs(found: list[Decision]) -> list[Decision]:
    """``found`` in a fixed order (time, pair, winner, kind: never the file's line order), without the
    decisions of a pair that name different winners at the same time: two facts each recorded as
    superseding the other cannot both be carried, and neither is chosen by where it sits in the file
    (the loader warns about the cycle they make)."""
    winners: dict[tuple[str, str], set[str | None]] = {}
    for d in found:
        winners.setdefault((d.pair_key, d.decided_at or ""), set()).add(d.winner)
    kept = [d for d in found if len(winners[(d.pair_key, d.decided_at or "")]) == 1]
    return sorted(kept, key=lambda d: (d.decided_at or "", d.pair_key, d.winner or "", d.kind))


def _text(v: Any) -> str | None:
    return v if isinstance(v, str) else None


#: the pair decisions each loaded knowledge base carries (built once per KnowledgeBase)
_CARRIED: WeakMemo[KnowledgeBase, None, DecisionSet] = WeakMemo(1)


def _carried_by(kb: KnowledgeBase) -> DecisionSet:
    has = any(META_SUPERSEDED_BY in f.metadata for f in kb.facts if f.metadata)
    return carried_decisions(kb) if has else DecisionSet.empty()


def with_carried_decisions(kb: KnowledgeBase, decisions: Decisions) -> Decisions:
    """``decisions`` with the pair decisions ``kb`` carries from an export underneath
    (:func:`carried_decisions`; the given ones win on a pair both decide). What ``run_pipeline`` and
    ``scan_ckf`` arbitrate with, so an exported CKF loaded without its decision store is arbitrated the
    operators' way (docs/decisions/triage.md, "Export"). ``decisions`` itself when ``kb`` carries none."""
    carried = _CARRIED.get_or_build(kb, None, lambda: _carried_by(kb))
    if not carried.pair_decisions:
        return decisions
    if decisions is None:
        return carried
    if isinstance(decisions, DecisionSet):
        return decisions.overlaid_on(carried)
    return MappingProxyType({**carried.pair_decisions, **decisions})
