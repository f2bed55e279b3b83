"""Operator triage of flagged conflicts (SPEC-027 §2): the decisions' store, SQLite or PostgreSQL
(:mod:`crp_core.triage.store`), its hash chain (:mod:`crp_core.triage.chain`), roles and the team file
(:mod:`crp_core.triage.roles`, :mod:`crp_core.triage.team`), claims (:mod:`crp_core.triage.claims`),
the audit log's exports (:mod:`crp_core.triage.log`), the cleaned-CKF
export that carries the decisions (:mod:`crp_core.triage.export`) and the detector's quality as the
operators judged it (:mod:`crp_core.triage.quality`). The decision model itself is
:mod:`crp_core.decisions` (stage 4 reads it); its names are re-exported here, the triage workflow's
public face."""

from crp_core.carried import carried_decisions
from crp_core.decisions import (
    COLUMNS,
    KINDS,
    MARKABLE_STATUSES,
    MAX_NOTE_CHARS,
    MAX_OPERATOR_CHARS,
    PAIR_KINDS,
    REVERT,
    Decision,
    DecisionError,
    DecisionSet,
    StaleDecisionError,
    TriageStoreError,
    TriageStoreUnavailable,
    normalise_operator,
    pair_key,
    split_pair_key,
    validate_decision,
)
from crp_core.triage.chain import ChainVerdict
from crp_core.triage.claims import Claim
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
from crp_core.triage.log import SCHEMA_VERSION, apply_to_corpus, apply_to_kb, export_csv, export_json, same_decision
from crp_core.triage.roles import PermissionRefused, Role, RoleBook, load_roles
from crp_core.triage.store import (
    APPLICATION_ID,
    DB_PATH_ENV,
    DEFAULT_BUSY_TIMEOUT_S,
    DecisionStore,
    default_db_path,
    open_store,
)
from crp_core.triage.team import TEAM_ENV, TeamConfig, load_team_config

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
    "same_decision",
    "default_db_path",
    "export_cleaned_ckf",
    "export_csv",
    "export_json",
    "pair_key",
    "split_pair_key",
    "validate_decision",
    # triage as a team (docs/decisions/triage.md)
    "REVERT",
    "TEAM_ENV",
    "ChainVerdict",
    "Claim",
    "PermissionRefused",
    "Role",
    "RoleBook",
    "StaleDecisionError",
    "TeamConfig",
    "TriageStoreUnavailable",
    "load_roles",
    "load_team_config",
    "normalise_operator",
    "open_store",
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
