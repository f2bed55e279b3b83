"""The Conflict triage page's views (SPEC-027 §2), one name space for the page: each piece lives in a
small module of its own and is re-exported here.

* :mod:`crp_ui.conflict_text`: the pair's texts with the differing tokens marked (escaped HTML);
* :mod:`crp_ui.conflict_case`: roles, outcomes, authority components and the deciding fields;
* :mod:`crp_ui.conflict_queue`: the triage queue, its filters and counts, the decision log, the
  detector's quality as the operators judged it;
* :mod:`crp_ui.conflict_run`: the current run's pairs, audit events, NOTE blocks and what the
  operators' decisions changed;
* :mod:`crp_ui.conflict_sdk`: the crprotocol SDK's supersessions against SPEC-027;
* :mod:`crp_ui.pair_cards`: the selected pair drawn with Streamlit's elements;
* :mod:`crp_ui.time_strip`: the winner's flags and the winner over time (and the envelope over time).
"""

from __future__ import annotations

from crp_core import same_decision

from .conflict_case import (
    AUTHORITY_PARTS,
    EVIDENCE_FIELDS,
    arbitration_label,
    arbitration_short,
    asserted_text,
    authority_arithmetic,
    authority_frame,
    differing_fields,
    outcome_text,
    pair_evidence,
    role_of,
    ttl_origin,
)
from .conflict_queue import (
    HISTORY_COLUMNS,
    HISTORY_PINNED,
    HISTORY_WIDTHS,
    NO_KB,
    QUEUE_COLUMNS,
    agreement_frame,
    aside_frame,
    aside_text,
    decision_summary,
    history_frame,
    kb_cell,
    log_for_kb,
    next_pair,
    overruled_frame,
    p_key,
    pair_label,
    pair_marks,
    quality_frame,
    queue_frame,
    with_claims,
    with_writeback_marks,
)
from .conflict_run import (
    audit_event_for,
    effect_frame,
    envelope_change,
    envelope_pairs_frame,
    near_conflicts_text,
    note_in_envelope,
    operator_effects_frame,
)
from .conflict_sdk import (
    SDK_LABELS,
    sdk_agreement_of,
    sdk_authority_frame,
    sdk_label,
    sdk_summary,
    sdk_verdict_lines,
    with_sdk_column,
)
from .conflict_text import GAP_MARK, fact_text_html, highlight_html, merge_spans, side_spans
from .pair_cards import (
    authority_table,
    evidence_table,
    outcome_line,
    pair_case,
    pair_head,
    patterns_line,
    queue_case,
    sdk_block,
)
from .queue_view import DECIDED_CHOICES, QUEUE_SORTS, filter_queue, queue_counts, sort_queue
from .time_strip import flag_notes, pair_time_section

__all__ = [
    "near_conflicts_text",
    "AUTHORITY_PARTS",
    "DECIDED_CHOICES",
    "EVIDENCE_FIELDS",
    "GAP_MARK",
    "HISTORY_COLUMNS",
    "HISTORY_PINNED",
    "HISTORY_WIDTHS",
    "NO_KB",
    "QUEUE_COLUMNS",
    "QUEUE_SORTS",
    "SDK_LABELS",
    "agreement_frame",
    "aside_frame",
    "aside_text",
    "arbitration_label",
    "asserted_text",
    "arbitration_short",
    "audit_event_for",
    "authority_arithmetic",
    "authority_frame",
    "authority_table",
    "decision_summary",
    "differing_fields",
    "effect_frame",
    "envelope_change",
    "envelope_pairs_frame",
    "evidence_table",
    "fact_text_html",
    "filter_queue",
    "flag_notes",
    "highlight_html",
    "history_frame",
    "kb_cell",
    "log_for_kb",
    "merge_spans",
    "next_pair",
    "note_in_envelope",
    "operator_effects_frame",
    "outcome_line",
    "outcome_text",
    "overruled_frame",
    "p_key",
    "pair_case",
    "pair_evidence",
    "pair_head",
    "pair_label",
    "pair_marks",
    "pair_time_section",
    "patterns_line",
    "quality_frame",
    "queue_case",
    "queue_counts",
    "queue_frame",
    "sort_queue",
    "role_of",
    "same_decision",
    "sdk_agreement_of",
    "sdk_authority_frame",
    "sdk_block",
    "sdk_label",
    "sdk_summary",
    "sdk_verdict_lines",
    "side_spans",
    "ttl_origin",
    "with_claims",
    "with_sdk_column",
    "with_writeback_marks",
]
