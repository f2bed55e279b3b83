"""Operator triage of flagged conflicts (SPEC-027 §2): the pure decision model
(:mod:`crp_core.triage.decisions`) and its SQLite store (:mod:`crp_core.triage.store`)."""
from crp_core.triage.decisions import (
    COLUMNS,
    KINDS,
    MARKABLE_STATUSES,
    MAX_NOTE_CHARS,
    MAX_OPERATOR_CHARS,
    PAIR_KINDS,
    SCHEMA_VERSION,
    CleanedExport,
    Decision,
    DecisionError,
    DecisionSet,
    TriageStoreError,
    apply_to_corpus,
    apply_to_kb,
    export_cleaned_ckf,
    export_csv,
    export_json,
    pair_key,
    split_pair_key,
    validate_decision,
)
from crp_core.triage.store import APPLICATION_ID, DB_PATH_ENV, DEFAULT_BUSY_TIMEOUT_S, DecisionStore, default_db_path

__all__ = [
    "APPLICATION_ID", "COLUMNS", "DB_PATH_ENV", "DEFAULT_BUSY_TIMEOUT_S", "KINDS", "MARKABLE_STATUSES",
    "MAX_NOTE_CHARS", "MAX_OPERATOR_CHARS", "PAIR_KINDS", "SCHEMA_VERSION", "CleanedExport", "Decision",
    "DecisionError", "DecisionSet", "DecisionStore", "TriageStoreError", "apply_to_corpus", "apply_to_kb",
    "default_db_path", "export_cleaned_ckf", "export_csv", "export_json", "pair_key", "split_pair_key",
    "validate_decision",
]
