"""The crprotocol SDK's supersessions against SPEC-027's arbitration, in the Conflicts page's words
(docs/decisions/sdk-snapshots.md). Pure functions of the :class:`~crp_core.SdkAgreement` records."""

from __future__ import annotations

import pandas as pd

from crp_core import ConflictScan, CRPConfig, KnowledgeBase, PairAgreement, SdkAgreement, has_sdk_data, sdk_agreement

#: the queue's SDK column text by verdict (:func:`crp_core.sdk_agreement`)
SDK_LABELS = {"agrees": "SDK: agrees", "disagrees": "SDK: disagrees", "silent": "SDK silent"}


def sdk_agreement_of(scan: ConflictScan, kb: KnowledgeBase, config: CRPConfig) -> SdkAgreement | None:
    """The agreement of the scan's pairs with the SDK's ``superseded_by`` (independent and as loaded, at the
    scan's time and with its ``config``); None for a CKF without SDK data."""
    return sdk_agreement(scan.pairs, kb, config, scan.now) if has_sdk_data(kb) else None


def sdk_label(rec: PairAgreement) -> str:
    """The queue cell: the independent verdict, the as-loaded one when it differs, and whether an
    operator's decision (carried by an export) superseded a fact of the pair: never the SDK's."""
    label = SDK_LABELS[rec.independent.verdict]
    if rec.as_loaded.verdict != rec.independent.verdict:
        label += f" (as loaded: {rec.as_loaded.verdict})"
    if rec.operator_superseded is not None:
        label += f" · operator superseded {rec.operator_superseded.old}"
    return label


def with_sdk_column(frame: pd.DataFrame, agreement: SdkAgreement | None) -> pd.DataFrame:
    """The queue with an ``sdk`` column (:func:`sdk_label`) when the CKF came from an SDK snapshot."""
    if agreement is None:
        return frame
    out = frame.copy()
    labels = []
    for a, b in zip(frame["fact_a"], frame["fact_b"]):
        rec = agreement.of(a, b)
        labels.append(sdk_label(rec) if rec is not None else "")
    out["sdk"] = labels
    return out


def sdk_summary(agreement: SdkAgreement) -> str:
    """One line: the independent counts, the as-loaded ones, and the unpaired supersessions."""
    return (
        f"SDK supersessions vs SPEC-027 on its own (the SDK's STALE read as ACTIVE): "
        f"{agreement.count('agrees')} agree · {agreement.count('disagrees')} disagree · "
        f"{agreement.count('silent')} SDK silent — as loaded (STALE in force, stale-floor recency): "
        f"{agreement.count('agrees', as_loaded=True)} agree · {agreement.count('disagrees', as_loaded=True)} "
        f"disagree · {len(agreement.unpaired)} SDK supersession(s) in no conflict pair"
    )


def _preferred(winner: str | None, reason: str) -> str:
    """What one arbitration preferred, from its winner and the reason it gives."""
    if winner is not None:
        return f"prefers {winner}"
    return "dismissed by an operator" if reason.startswith("an operator dismissed") else "a tie (both kept)"


def _verdict(verdict: str, operator: bool) -> str:
    """A verdict in a line; ``SDK silent`` beside an operator's supersession (the silence is the SDK's)."""
    return "SDK silent" if verdict == "silent" and operator else verdict


def sdk_verdict_lines(rec: PairAgreement) -> tuple[str, str]:
    """The selected pair's two judgements in words (plain text; the page escapes them):
    ``SPEC-027 on its own: prefers X — SDK superseded Y: disagrees (...)`` and the as-loaded line. A
    supersession an operator made is said as the operator's (``operator superseded Y by X (alice,
    2026-...)``), never as the SDK's."""
    a, b = rec.authority_a, rec.authority_b
    op = rec.operator_superseded
    if rec.sdk_superseded is not None:
        by = b.fact_id if rec.sdk_superseded == a.fact_id else a.fact_id
        sdk = f"SDK superseded {rec.sdk_superseded} by {by}"
    elif op is not None:  # the operator's decision, carried by an export: the SDK made no supersession here
        sdk = f"{op.describe()}; the SDK superseded neither fact"
    else:
        sdk = "SDK superseded neither fact by the other"
    ind, loaded = rec.independent, rec.as_loaded
    also = f"; {op.describe()}" if op is not None and rec.sdk_superseded is not None else ""
    why = (
        f" ({ind.reason})" if ind.verdict == "silent" and rec.sdk_superseded is None and "outside" in ind.reason else ""
    )
    own = (
        f"SPEC-027 on its own ({a.fact_id} {a.authority:.4f} vs {b.fact_id} {b.authority:.4f}"
        + (f"; {', '.join(rec.neutralised)} read as ACTIVE" if rec.neutralised else "")
        + f"): {_preferred(ind.winner, ind.reason)} — {sdk}: {_verdict(ind.verdict, op is not None)}{why}{also}"
    )
    as_loaded = (
        f"As loaded (the SDK's STALE in force, operator decisions applied): "
        f"{_preferred(loaded.winner, loaded.reason)} — {sdk}: {_verdict(loaded.verdict, op is not None)}{also}"
    )
    return own, as_loaded


def _operator_old(rec: PairAgreement, fact_id: str) -> bool:
    return rec.operator_superseded is not None and rec.operator_superseded.old == fact_id


def sdk_authority_frame(rec: PairAgreement) -> pd.DataFrame:
    """The independent arbitration's SPEC-027 §2.3 components, one row per fact of the pair."""
    rows = [
        {
            "fact_id": x.fact_id,
            "source_type": x.source_type,
            "source_authority": x.source_authority,
            "recency_factor": x.recency_factor,
            "importance_weight": x.importance_weight,
            "authority": x.authority,
            "status read as": (
                (
                    "ACTIVE (the operator's STALE neutralised)"
                    if _operator_old(rec, x.fact_id)
                    else "ACTIVE (the SDK's STALE neutralised)"
                )
                if x.fact_id in rec.neutralised
                else "as loaded"
            ),
        }
        for x in (rec.authority_a, rec.authority_b)
    ]
    return pd.DataFrame(rows)
