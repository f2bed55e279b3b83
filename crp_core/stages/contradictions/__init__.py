"""Stage 4: contradiction detection and Fact Authority Resolution (SPEC-027 §2, SPEC_NOTES §2.6).

* :mod:`.values`: :func:`values_conflict`, the SPEC-005 §5.3 patterns applied pairwise;
* :mod:`.authority`: :func:`authority_of` (SPEC-027 §2.3);
* :mod:`.arbitration`: one pair arbitrated (ties, operator decisions) and its audit event;
* :mod:`.resolve`: :func:`resolve_contradictions` over an envelope's selected facts.
"""

from crp_core.stages.contradictions.arbitration import (
    DECISION_KINDS,
    EVENT_DISMISSED,
    EVENT_RESOLVED,
    Arbitration,
    arbitrate,
    authority_winner,
    conflict_event,
    decision_for,
    note_for,
    tied_rows,
)
from crp_core.stages.contradictions.authority import authority_of, recency_factors
from crp_core.stages.contradictions.resolve import resolve_contradictions
from crp_core.stages.contradictions.values import (
    DATE_SHIFTED,
    ENTITY_SUBSTITUTED,
    MAGNITUDE_ALTERED,
    NEGATION_FLIP,
    NUMBER_CHANGED,
    PATTERNS,
    Token,
    tokenize,
    values_conflict,
)

__all__ = [
    "DATE_SHIFTED",
    "DECISION_KINDS",
    "ENTITY_SUBSTITUTED",
    "EVENT_DISMISSED",
    "EVENT_RESOLVED",
    "MAGNITUDE_ALTERED",
    "NEGATION_FLIP",
    "NUMBER_CHANGED",
    "PATTERNS",
    "Arbitration",
    "Token",
    "arbitrate",
    "authority_of",
    "authority_winner",
    "conflict_event",
    "decision_for",
    "note_for",
    "recency_factors",
    "resolve_contradictions",
    "tied_rows",
    "tokenize",
    "values_conflict",
]
