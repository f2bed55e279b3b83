"""Operator triage of flagged conflicts (SPEC-027 §2): the decisions' SQLite store
(:mod:`crp_core.triage.store`), the audit log's exports (:mod:`crp_core.triage.log`), the cleaned-CKF
export that carries the decisions (:mod:`crp_core.triage.export`) and the detector's quality as the
operators judged it (:mod:`crp_core.triage.quality`). The decision model itself is
:mod:`crp_core.decisions` (stage 4 reads it); its names are re-exported here, the triage workflow's
public face."""

from crp_core.decisions import (
    COLUMNS,
    KINDS,
    MARKABLE_STATUSES,
    MAX_NOTE_CHARS,
    MAX_OPERATOR_CHARS,
    PAIR_KINDS,
    Decision,
    DecisionError,
    DecisionSet,
    TriageStoreError,
    carried_decisions,
    pair_key,
    split_pair_key,
    validate_decision,
)
from crp_core.triage.export import (
    REPORT_FILE,
    CleanedExport,
    DismissedPair,
    ExportError,
    ExportIssue,
    ExportReport,
    FactChange,
    ReplacedValue,
    carry_decisions,
    export_cleaned_ckf,
    export_report_dict,
    load_export_report,
    report_path_for,
    triage_record,
)
from crp_core.triage.log import SCHEMA_VERSION, apply_to_corpus, apply_to_kb, export_csv, export_json
from crp_core.triage.store import APPLICATION_ID, DB_PATH_ENV, DEFAULT_BUSY_TIMEOUT_S, DecisionStore, default_db_path

__all__ = [
    "APPLICATION_ID",
    "COLUMNS",
    "DB_PATH_ENV",
    "DEFAULT_BUSY_TIMEOUT_S",
    "KINDS",
    "MARKABLE_STATUSES",
    "MAX_NOTE_CHARS",
    "MAX_OPERATOR_CHARS",
    "PAIR_KINDS",
    "SCHEMA_VERSION",
    "CleanedExport",
    "Decision",
    "DecisionError",
    "DecisionSet",
    "DecisionStore",
    "TriageStoreError",
    "apply_to_corpus",
    "apply_to_kb",
    "default_db_path",
    "export_cleaned_ckf",
    "export_csv",
    "export_json",
    "pair_key",
    "split_pair_key",
    "validate_decision",
    # the cleaned-CKF export (docs/decisions/triage.md "Export")
    "REPORT_FILE",
    "DismissedPair",
    "ExportError",
    "ExportIssue",
    "ExportReport",
    "FactChange",
    "ReplacedValue",
    "carried_decisions",
    "carry_decisions",
    "export_report_dict",
    "load_export_report",
    "report_path_for",
    "triage_record",
]
