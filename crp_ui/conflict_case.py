"""What decides a conflict pair, in words and tables (SPEC-027 §2.3-2.5): the role of each fact, the
arbitration, the authority components and the fields of both facts the case is decided on.

Pure functions of crp_core records (no Streamlit); every number comes from the pair's
:class:`~crp_core.Authority` components or from :func:`crp_core.compute_recency` at the run's ``now``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime

import numpy as np
import pandas as pd

from crp_core import Authority, ConflictPair, CRPConfig, Fact, KnowledgeBase, compute_recency, format_timestamp

from .chart_style import rule_words

#: the authority components of SPEC-027 §2.3 and their product: (Authority field, label)
AUTHORITY_PARTS: tuple[tuple[str, str], ...] = (
    ("source_authority", "source authority"),
    ("recency_factor", "recency factor"),
    ("importance_weight", "importance"),
    ("authority", "authority"),
)


# ---- roles and outcomes --------------------------------------------------------------------------
def role_of(pair: ConflictPair, fact_id: str) -> str:
    """How the arbitration treated ``fact_id``: winner / suppressed / tied / kept / dismissed."""
    if pair.decision == "dismiss":
        return "dismissed"
    if pair.tied:
        return "tied"
    if pair.suppressed == fact_id:
        return "suppressed"
    if pair.suppressed is not None and fact_id in pair.kept:
        return "winner (override)" if pair.decision == "override" else "winner"
    return "kept"


def outcome_text(pair: ConflictPair) -> str:
    """One line: the winner and the suppressed fact, the tie, the dismissal or the skip."""
    if pair.skipped:
        return "skipped: a fact of the pair was already suppressed by an earlier pair"
    if pair.decision == "dismiss":
        return "dismissed by an operator: not a conflict, both facts kept"
    if pair.tied:
        return "tie: neither fact suppressed; where both are packed, the envelope carries a NOTE block listing them"
    if pair.suppressed is not None:
        winner = pair.kept[0] if pair.kept else "?"
        how = "operator override" if pair.decision == "override" else "higher authority"
        return f"{winner} wins ({how}); {pair.suppressed} suppressed"
    return "kept both"


def _winner_label(pair: ConflictPair, who: str) -> str:
    return ("override: " if pair.decision == "override" else "") + f"{who} wins"


def asserted_text(pair: ConflictPair, config: CRPConfig) -> str | None:
    """Why a pair only an operator's decision put in stage 4 is there (None for a pair stage 4 found itself)."""
    if not pair.asserted:
        return None
    why = (
        f"cosine {pair.similarity:.4f}, not above contradiction_similarity {config.contradiction_similarity:g}"
        if pair.similarity <= config.contradiction_similarity
        else "the detector reads no value difference in the two texts"
    )
    return f"Paired by an operator's decision: stage 4 would not pair these facts itself ({why})."


def arbitration_label(pair: ConflictPair) -> str:
    """Short queue label: "tie", "dismissed", "<id> wins" or "override: <id> wins"."""
    if pair.decision == "dismiss":
        return "dismissed"
    if pair.tied:
        return "tie"
    if pair.suppressed is not None and pair.kept:
        return _winner_label(pair, pair.kept[0])
    return "kept both"


def arbitration_short(pair: ConflictPair) -> str:
    """The arbitration without ids, short enough for a metric: "tie", "A wins", "override: B wins"...
    (A / B are the pair's sides; long ids would be cut in a metric, see :func:`arbitration_label`)."""
    if pair.decision == "dismiss":
        return "dismissed"
    if pair.tied:
        return "tie"
    if pair.suppressed is not None and pair.kept:
        return _winner_label(pair, "A" if pair.kept[0] == pair.fact_a else "B")
    return "kept both"


# ---- authority -----------------------------------------------------------------------------------
def authority_arithmetic(a: Authority) -> str:
    """``source authority x recency factor x importance = authority`` with the numbers."""
    return f"{a.source_authority:.4g} × {a.recency_factor:.4f} × {a.importance_weight:.4g} = {a.authority:.4f}"


#: the product and the role first: a narrow page scrolls the table sideways, and those two decide the case
AUTHORITY_COLUMNS = (
    "fact_id",
    "authority",
    "role",
    "source_authority",
    "recency_factor",
    "importance_weight",
    "source_type",
    "arithmetic",
)


def authority_frame(pair: ConflictPair) -> pd.DataFrame:
    """One row per fact: the components of SPEC-027 §2.3, the product, the arithmetic, the role."""
    rows = []
    for fid in (pair.fact_a, pair.fact_b):
        a = pair.authority[fid]
        rows.append(
            {
                "fact_id": fid,
                "authority": a.authority,
                "role": role_of(pair, fid),
                "source_authority": a.source_authority,
                "recency_factor": a.recency_factor,
                "importance_weight": a.importance_weight,
                "source_type": a.source_type,
                "arithmetic": authority_arithmetic(a),
            }
        )
    return pd.DataFrame(rows, columns=list(AUTHORITY_COLUMNS))


# ---- the deciding fields of a pair ---------------------------------------------------------------
#: the rows of the evidence table, in display order: what a case is decided on
EVIDENCE_FIELDS: tuple[str, ...] = (
    "source_type",
    "source_id",
    "source_location",
    "modified_at",
    "ingested_at",
    "age at now",
    "TTL",
    "recency rule",
    "status in the CKF",
    "status in force",
    "source authority",
    "recency factor",
    "importance",
    "authority",
)


def _ts(v: datetime | None) -> str:
    return "-" if v is None else format_timestamp(v)


def _days(v: float) -> str:
    return f"{v:,.1f} d" if math.isfinite(v) else "no expiry"


def ttl_origin(fact: Fact, ttl_days: float, source_type: str) -> str:
    """The TTL in force and where it comes from: the fact's own ``ttl`` or its source type's default."""
    if fact.ttl_kind == "timeless":
        return "none: timeless (the fact's own ttl)"
    if fact.ttl_kind == "explicit":
        own = fact.ttl_text or _days(ttl_days)
        return f"{own} = {_days(ttl_days)} (the fact's own ttl)"
    if not math.isfinite(ttl_days):
        return f"no expiry (no default TTL for {source_type})"
    return f"{_days(ttl_days)} (default for {source_type})"


def _rule(rule: str, ckf_status: str, in_force: str) -> str:
    """The recency rule of a fact as loaded, in the reader's words (fresh / ageing / expired and why:
    :func:`crp_ui.chart_style.rule_words`), corrected for an operator's status mark."""
    if in_force == ckf_status:
        return rule_words(rule)
    if in_force == "STALE":
        return "expired (status STALE: operator mark)"
    return f"{rule_words(rule)} (before the operator's {in_force} mark)"


def _authority_fields(auth: Authority | None, imp_origin: str) -> dict[str, str]:
    if auth is None:
        return {"source authority": "-", "recency factor": "-", "importance": "-", "authority": "-"}
    return {
        "source authority": f"{auth.source_authority:.4g}",
        "recency factor": f"{auth.recency_factor:.4f}",
        "importance": f"{auth.importance_weight:.4g} ({imp_origin})",
        "authority": f"{auth.authority:.4f}",
    }


def _evidence_column(
    f: Fact, age: float, ttl: float, rule: str, in_force: str, auth: Authority | None
) -> dict[str, str]:
    """The evidence values of one fact (:data:`EVIDENCE_FIELDS`)."""
    imp_origin = "the fact's own" if f.importance_weight is not None else f"default for {f.source_type}"
    return {
        "source_type": f.source_type,
        "source_id": f.source_id or "-",
        "source_location": f.source_location or "-",
        "modified_at": _ts(f.modified_at),
        "ingested_at": _ts(f.ingested_at),
        "age at now": "unknown" if math.isnan(age) else _days(age),
        "TTL": ttl_origin(f, ttl, f.source_type),
        "recency rule": _rule(rule, f.status, in_force),
        "status in the CKF": f.status,
        "status in force": in_force + (" (operator)" if in_force != f.status else ""),
        **_authority_fields(auth, imp_origin),
    }


def pair_evidence(
    pair: ConflictPair, kb: KnowledgeBase, statuses: Mapping[str, str], *, now: datetime, config: CRPConfig
) -> pd.DataFrame:
    """One row per deciding field (:data:`EVIDENCE_FIELDS`): the value for fact A, for fact B and
    whether they differ. ``kb`` is the CKF as loaded, read at ``now`` under ``config`` (age, TTL, rule:
    :func:`crp_core.compute_recency`), ``statuses`` the operators' statuses in force; the authority
    components are those the arbitration used (``pair.authority``)."""
    present = [fid for fid in (pair.fact_a, pair.fact_b) if kb.get(fid) is not None]
    recency = compute_recency(kb, np.array([kb.index_of(fid) for fid in present], dtype=np.int64), now, config)
    at = {fid: i for i, fid in enumerate(present)}
    cols: list[dict[str, str]] = []
    for fid in (pair.fact_a, pair.fact_b):
        f = kb.get(fid)
        if f is None:
            cols.append({k: "-" for k in EVIDENCE_FIELDS})
            continue
        i = at[fid]
        in_force = statuses.get(fid, f.status)
        cols.append(
            _evidence_column(
                f,
                float(recency.age_days[i]),
                float(recency.ttl_days[i]),
                str(recency.rule[i]),
                in_force,
                pair.authority.get(fid),
            )
        )
    rows = [
        {"field": k, "a": cols[0][k], "b": cols[1][k], "differs": cols[0][k] != cols[1][k]} for k in EVIDENCE_FIELDS
    ]
    return pd.DataFrame(rows, columns=["field", "a", "b", "differs"])


def differing_fields(frame: pd.DataFrame) -> list[str]:
    """The fields whose values differ between the two facts (evidence order)."""
    return [str(f) for f, d in zip(frame["field"], frame["differs"]) if d]
