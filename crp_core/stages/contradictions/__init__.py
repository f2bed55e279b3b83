"""Stage 4: contradiction detection and Fact Authority Resolution (SPEC-027 §2, docs/reference/pipeline.md §4).

* :mod:`.values`: :func:`values_conflict`, the SPEC-005 §5.3 patterns applied pairwise;
* :mod:`.authority`: :func:`authority_of` (SPEC-027 §2.3);
* :mod:`.arbitration`: one pair arbitrated (ties, operator decisions);
* :mod:`.audit`: the audit event of an arbitrated pair and its data;
* :mod:`.resolve`: :func:`resolve_contradictions` over an envelope's selected facts.
"""

from crp_core.stages.contradictions.arbitration import (
    DECISION_KINDS,
    Arbitration,
    arbitrate,
    authority_winner,
    changed_by_decision,
    decision_for,
    has_pair_decisions,
    note_for,
    outcome,
    tied_rows,
)
from crp_core.stages.contradictions.audit import (
    EVENT_DISMISSED,
    EVENT_RESOLVED,
    authority_dict,
    conflict_event,
    conflict_event_data,
    diff_dict,
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
    "authority_dict",
    "authority_of",
    "authority_winner",
    "changed_by_decision",
    "conflict_event",
    "conflict_event_data",
    "decision_for",
    "has_pair_decisions",
    "diff_dict",
    "note_for",
    "outcome",
    "recency_factors",
    "resolve_contradictions",
    "tied_rows",
    "tokenize",
    "values_conflict",
]
