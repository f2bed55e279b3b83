"""crp_core: the CRP-SPEC-027 retrieval pipeline over a CKF knowledge base.

Pure library code: no Streamlit, no I/O hidden in scoring. The package tree reads as the pipeline;
its layers and modules are in docs/architecture.md.

A typical use::

    from crp_core import CRPConfig, load_ckf, load_scenario, prepare_corpus, run_pipeline

    kb = load_ckf("sample_ckf/knowledge_base.jsonl")
    corpus = prepare_corpus(kb)
    result = run_pipeline(corpus, load_scenario("sample_ckf/scenarios/etcd_upgrade.json"), CRPConfig())
    print(result.headers, [p.fact_id for p in result.envelope.order])

The names are resolved on first access (PEP 562 ``__getattr__``): ``import crp_core`` (and so the
CLI's ``--help``) imports none of the pipeline, the analysis modules, scipy or scikit-learn until a
name is used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # every public name, for type checkers (at run time each is imported on first use, below)
    # fmt: off
    # isort: off
    from crp_core import headers
    from crp_core.analysis.baseline import BeforeAfter, before_after, run_spec024_baseline
    from crp_core.analysis.compare import Comparison, compare_runs
    from crp_core.analysis.evaluate import PreparedSuite, SuiteRun, SuiteSweep, prepare_suite, run_suite, sweep_suite
    from crp_core.analysis.gate import GateFailure, GateResult, gate, read_baseline
    from crp_core.analysis.html_report import build_html_report, build_suite_html_report
    from crp_core.analysis.known import RowChecks, SelectionKnownConflicts, known_conflicts
    from crp_core.analysis.labels import MARK_KINDS, MARK_MEANINGS, LabelMark, LabelMarks, fact_state, label_marks
    from crp_core.analysis.metrics import (
        METRICS, RANKING_METRICS, MetricInfo, ScenarioMetrics, SuiteMetrics, scenario_metrics, suite_metrics
    )
    from crp_core.analysis.report_inputs import (
        DecisionLine, ReportInputs, ScenarioInput, config_changes, decision_lines, reproduce_command, set_args_for
    )
    from crp_core.analysis.reports import suite_metrics_report, tune_report
    from crp_core.analysis.scan import (
        CHECK_CONFIG_FIELDS, CheckedPairs, ConflictScan, arbitrate_checked, check_ckf, scan_ckf, scan_config_key
    )
    from crp_core.analysis.scan_update import (
        DecisionChange, RetrievableSplit, ScanUpdate, decision_change, pair_index, rearbitrate, restatused, rows_from,
        within_retrievable
    )
    from crp_core.analysis.sdk_agreement import PairAgreement, SdkAgreement, has_sdk_data, sdk_agreement
    from crp_core.analysis.session import SessionReport, analyse_session
    from crp_core.analysis.session_report import session_report_dict
    from crp_core.analysis.suite import Suite, SuiteScenario, check_suite, load_suite, suite_from_files
    from crp_core.analysis.suite_before_after import SuiteBeforeAfter, suite_before_after
    from crp_core.analysis.sweep import (
        SweepPoint, SweepResult, check_key, current_value, is_bool_key, is_integer_key, sweep,
        sweepable_keys
    )
    from crp_core.analysis.sweep_grid import (
        AxisSpec, GridAxis, SuiteGrid, grid_axis, grid_rows, suite_current, sweep_grid
    )
    from crp_core.analysis.timeline import (
        EnvelopeTimeline, FactClock, Flip, PairTimeline, TimeMark, WinnerFlags, envelope_grid, envelope_timeline,
        envelope_timeline_of, flag_lines, pair_timeline, relative_margin, winner_flags
    )
    from crp_core.analysis.tune import (
        OBJECTIVES, Param, TrialRecord, TuneResult, default_space, no_feasible_message, objective_named,
        objective_names, tune
    )
    from crp_core.analysis.tune_toml import tuned_toml
    from crp_core.analysis.tune_space import param_for, tunable_keys
    from crp_core.analysis.view_snapshot import ViewSnapshot, ViewSnapshotError, read_view_snapshot, view_snapshot_bytes
    from crp_core.config import (
        CORPUS_KEYS, MAX_CONFIG_BYTES, NEVER_RETRIEVED, SCALAR_KEYS, SOURCE_TYPES, STATUSES, TABLE_KEYS, CRPConfig,
        SourceTable, choices, describe, layered_config, origin, valid_range
    )
    from crp_core.corpus.embedding import (
        MODEL_ID, Embedder, EmbeddingCancelled, MiniLMEmbedder, default_embedder, embedder_for
    )
    from crp_core.corpus.embedding_models import ModelSpec, configured_embedder, embedder_for_vectors, resolve_model
    from crp_core.corpus.jobs import EmbeddingProgress, JobRegistry, PreparationJob, ProgressSnapshot
    from crp_core.corpus.prepared import Corpus, ScenarioVectors, embed_scenario, prepare_corpus
    from crp_core.decisions import (
        MARKABLE_STATUSES, MAX_NOTE_CHARS, REVERT, Decision, DecisionError, DecisionSet, StaleDecisionError,
        TriageStoreError, TriageStoreUnavailable, decisions_record, normalise_operator, pair_key, split_pair_key
    )
    from crp_core.carried import carried_decisions
    from crp_core.engines import ENGINES, EmbedRun, embed_kb, scan_with_engine
    from crp_core.errors import (
        CKFError, ConfigError, CRPError, DetectorWeightsError, EmbeddingModelMismatch, Problem, ScenarioError,
        SnapshotMutationError, SuiteError, ValidationError
    )
    from crp_core.factors.recency import RULES, RecencyTable, fact_attributes, recency_factor
    from crp_core.history import (
        EXPERIMENT_KINDS, HISTORY_ENV, Experiment, ExperimentError, ExperimentStore, experiment_inputs,
        history_db_path, history_enabled, list_experiments, record_experiment
    )
    from crp_core.io.ckf import load_ckf, load_ckf_bytes, write_ckf
    from crp_core.io.ckf.listing import (
        CKF_SUFFIXES, SCENARIO_SUFFIXES, folder_entries, listable_ckf, listable_scenario
    )
    from crp_core.io.ckf.provenance import SdkProvenance, sdk_provenance
    from crp_core.io.ckf.sdk import given_edges, load_sdk_snapshot, load_sdk_snapshot_bytes
    from crp_core.io.ckf.sdk_map import SourceTypeMap, load_source_map, source_map_from_bytes, source_map_from_dict
    from crp_core.io.scenario import (
        MAX_SCENARIO_BYTES, dump_scenario, load_scenario, load_scenario_bytes, scenario_from_dict, scenario_to_dict
    )
    from crp_core.io.session import AuditTrail, read_audit
    from crp_core.io.timeparse import format_timestamp
    from crp_core.model import (
        Addressed, Expectations, ExpectedConflict, Fact, GivenEdge, ImportSummary, KnowledgeBase, Scenario, SdkState,
        SubQuery
    )
    from crp_core.relevance_gate import GateCounts, GateNote, gate_counts, gate_note
    from crp_core.pipeline import STAGES, run_pipeline
    from crp_core.records import (
        FANOUT_DUPLICATES, FANOUT_REACHING, AuditEvent, Authority, CandidateSet, CDGRResult, CDRTable, Clamp,
        ConflictPair, ConnectorTable, Envelope, FactOutcome, FanoutResult, FanoutRun, FanoutStep, KnownConflict,
        NearConflict, PackedFact, PipelineResult, Resolution, TieGroup, ValueConflict, ValueDiff
    )
    from crp_core.report import dumps, fact_columns, fact_rows_report, fanout_report, pair_dict, run_report
    from crp_core.stages.contradictions import (
        EVENT_DISMISSED, EVENT_RESOLVED, PATTERNS, authority_of, authority_winner, changed_by_decision,
        values_conflict
    )
    from crp_core.stages.contradictions.arbitration import winner_by_authority
    from crp_core.stages.contradictions.language import LanguageProfile, language_profile
    from crp_core.stages.known import KnownSource
    from crp_core.stages.packing import fact_line
    from crp_core.stages.partitions import RULE_KMEANS, RULE_ONE_EACH, RULE_SINGLE
    from crp_core.stages.tie_groups import note_block
    from crp_core.triage import (
        CleanedExport, DecisionStore, ExportReport, apply_to_corpus, apply_to_kb, default_db_path, export_cleaned_ckf,
        export_csv, export_json, export_report_dict, open_store, same_decision
    )
    from crp_core.triage.chain import ChainVerdict
    from crp_core.triage.claims import Claim
    from crp_core.triage.quality import DetectorQuality, detector_quality
    from crp_core.triage.roles import PermissionRefused, Role, RoleBook, TeamConfigError, load_roles
    from crp_core.triage.sdk_export import SDK_CHECKSUMS, checksum_algorithm, export_sdk_snapshot
    from crp_core.triage.team import TEAM_ENV, TeamConfig, load_team_config
    # isort: on
    # fmt: on

if TYPE_CHECKING:  # what the dashboard (crp_ui) reads besides the names above
    from crp_core.analysis.baseline import SideNumbers
    from crp_core.analysis.envelope_changes import EnvelopeChange
    from crp_core.analysis.scan_check import DEFAULT_CHECK_WORKERS
    from crp_core.analysis.scan_store import load_checked, save_checked
    from crp_core.factors.recency import compute_recency
    from crp_core.headers import CONFLICTS, PARTITIONS
    from crp_core.support.digest import Digest, content_digest
    from crp_core.support.memo import LRU, WeakMemo
    from crp_core.support.spreadsheet import csv_cell
    from crp_core.triage.agreement import REVIEW_STATES, OperatorAgreement, operator_agreement, review_statuses
    from crp_core.triage.identity import Identity, resolve_identity

#: module of each public name (resolved lazily by ``__getattr__``)
_MODULES: dict[str, tuple[str, ...]] = {
    "crp_core.analysis.baseline": ("BeforeAfter", "before_after", "run_spec024_baseline"),
    "crp_core.analysis.compare": ("Comparison", "compare_runs"),
    "crp_core.analysis.evaluate": (
        "PreparedSuite",
        "SuiteRun",
        "SuiteSweep",
        "prepare_suite",
        "run_suite",
        "sweep_suite",
    ),
    "crp_core.analysis.gate": ("GateResult", "gate", "read_baseline"),
    "crp_core.analysis.labels": ("LabelMark", "LabelMarks", "MARK_KINDS", "MARK_MEANINGS", "fact_state", "label_marks"),
    "crp_core.analysis.metrics": ("ScenarioMetrics", "SuiteMetrics", "scenario_metrics", "suite_metrics"),
    "crp_core.analysis.reports": ("suite_metrics_report", "tune_report"),
    "crp_core.analysis.scan": ("ConflictScan", "scan_ckf", "CheckedPairs", "check_ckf", "arbitrate_checked"),
    "crp_core.analysis.scan_update": (
        "DecisionChange",
        "ScanUpdate",
        "decision_change",
        "pair_index",
        "rearbitrate",
        "restatused",
        "rows_from",
        "RetrievableSplit",
        "within_retrievable",
    ),
    "crp_core.analysis.sdk_agreement": ("PairAgreement", "SdkAgreement", "sdk_agreement"),
    "crp_core.analysis.session": ("SessionReport", "analyse_session"),
    "crp_core.analysis.session_report": ("session_report_dict",),
    "crp_core.analysis.suite": ("Suite", "SuiteScenario", "check_suite", "load_suite", "suite_from_files"),
    "crp_core.analysis.sweep": ("SweepPoint", "SweepResult", "sweep"),
    "crp_core.analysis.sweep_grid": (
        "AxisSpec",
        "GridAxis",
        "SuiteGrid",
        "grid_axis",
        "grid_rows",
        "suite_current",
        "sweep_grid",
    ),
    "crp_core.analysis.tune": ("OBJECTIVES", "TrialRecord", "TuneResult", "tune"),
    "crp_core.analysis.timeline": (
        "EnvelopeTimeline",
        "FactClock",
        "Flip",
        "PairTimeline",
        "TimeMark",
        "WinnerFlags",
        "envelope_grid",
        "envelope_timeline",
        "envelope_timeline_of",
        "flag_lines",
        "pair_timeline",
        "relative_margin",
        "winner_flags",
    ),
    "crp_core.config": ("SOURCE_TYPES", "STATUSES", "CRPConfig", "SourceTable", "layered_config"),
    "crp_core.corpus.embedding": ("MODEL_ID", "Embedder", "MiniLMEmbedder"),
    "crp_core.corpus.prepared": ("Corpus", "ScenarioVectors", "embed_scenario", "prepare_corpus"),
    "crp_core.decisions": ("Decision", "DecisionSet"),
    "crp_core.carried": ("carried_decisions",),
    "crp_core.engines": ("ENGINES", "EmbedRun", "embed_kb", "scan_with_engine"),
    "crp_core.errors": (
        "CKFError",
        "ConfigError",
        "CRPError",
        "DetectorWeightsError",
        "EmbeddingModelMismatch",
        "Problem",
        "ScenarioError",
        "SnapshotMutationError",
        "SuiteError",
        "ValidationError",
    ),
    "crp_core.factors.recency": ("RecencyTable",),
    "crp_core.io.ckf": ("load_ckf", "load_ckf_bytes", "write_ckf"),
    "crp_core.io.ckf.listing": (
        "CKF_SUFFIXES",
        "SCENARIO_SUFFIXES",
        "folder_entries",
        "listable_ckf",
        "listable_scenario",
    ),
    "crp_core.io.ckf.provenance": ("SdkProvenance", "sdk_provenance"),
    "crp_core.io.ckf.sdk": ("load_sdk_snapshot", "load_sdk_snapshot_bytes"),
    "crp_core.io.ckf.sdk_map": ("SourceTypeMap", "load_source_map"),
    "crp_core.io.session": ("AuditTrail", "read_audit"),
    "crp_core.io.scenario": ("dump_scenario", "load_scenario", "load_scenario_bytes", "scenario_from_dict"),
    "crp_core.model": (
        "Addressed",
        "Expectations",
        "ExpectedConflict",
        "Fact",
        "GivenEdge",
        "ImportSummary",
        "KnowledgeBase",
        "Scenario",
        "SdkState",
        "SubQuery",
    ),
    "crp_core.relevance_gate": ("GateCounts", "GateNote", "gate_counts", "gate_note"),
    "crp_core.pipeline": ("STAGES", "run_pipeline"),
    "crp_core.records": (
        "AuditEvent",
        "Authority",
        "CandidateSet",
        "CDGRResult",
        "CDRTable",
        "Clamp",
        "ConflictPair",
        "ConnectorTable",
        "Envelope",
        "FactOutcome",
        "FanoutResult",
        "PackedFact",
        "PipelineResult",
        "Resolution",
        "TieGroup",
        "ValueConflict",
        "ValueDiff",
    ),
    "crp_core.report": ("dumps", "fact_columns", "fact_rows_report", "fanout_report", "pair_dict", "run_report"),
    "crp_core.stages.contradictions": ("authority_of", "values_conflict"),
    "crp_core.stages.contradictions.language": ("LanguageProfile", "language_profile"),
    "crp_core.triage": (
        "DecisionStore",
        "ExportReport",
        "apply_to_corpus",
        "apply_to_kb",
        "export_cleaned_ckf",
        "export_report_dict",
    ),
    "crp_core.triage.sdk_export": ("export_sdk_snapshot",),
}
#: the names the dashboard reads (crp_ui and pages import crp_core through this package only)
_DASHBOARD: dict[str, tuple[str, ...]] = {
    "crp_core.analysis.gate": ("GateFailure",),
    "crp_core.analysis.html_report": ("build_html_report", "build_suite_html_report"),
    "crp_core.analysis.suite_before_after": ("SuiteBeforeAfter", "suite_before_after"),
    "crp_core.analysis.report_inputs": (
        "ReportInputs",
        "ScenarioInput",
        "DecisionLine",
        "decision_lines",
        "config_changes",
        "reproduce_command",
        "set_args_for",
    ),
    "crp_core.analysis.known": ("known_conflicts", "SelectionKnownConflicts", "RowChecks"),
    "crp_core.analysis.view_snapshot": (
        "ViewSnapshot",
        "ViewSnapshotError",
        "read_view_snapshot",
        "view_snapshot_bytes",
    ),
    "crp_core.analysis.metrics": ("METRICS", "MetricInfo", "RANKING_METRICS"),
    "crp_core.analysis.scan": ("scan_config_key", "CHECK_CONFIG_FIELDS"),
    "crp_core.analysis.scan_check": ("DEFAULT_CHECK_WORKERS",),
    "crp_core.analysis.scan_store": ("load_checked", "save_checked"),
    "crp_core.analysis.sdk_agreement": ("has_sdk_data",),
    "crp_core.analysis.sweep": (
        "check_key",
        "current_value",
        "is_bool_key",
        "is_integer_key",
        "sweepable_keys",
    ),
    "crp_core.analysis.tune": (
        "Param",
        "default_space",
        "objective_named",
        "objective_names",
        "no_feasible_message",
    ),
    "crp_core.analysis.tune_toml": ("tuned_toml",),
    "crp_core.analysis.tune_space": ("param_for", "tunable_keys"),
    "crp_core.config": (
        "MAX_CONFIG_BYTES",
        "NEVER_RETRIEVED",
        "SCALAR_KEYS",
        "TABLE_KEYS",
        "CORPUS_KEYS",
        "choices",
        "describe",
        "origin",
        "valid_range",
    ),
    "crp_core.corpus.embedding": (
        "EmbeddingCancelled",
        "default_embedder",
        "embedder_for",
    ),
    "crp_core.corpus.embedding_models": ("ModelSpec", "configured_embedder", "embedder_for_vectors", "resolve_model"),
    "crp_core.corpus.jobs": (
        "EmbeddingProgress",
        "JobRegistry",
        "PreparationJob",
        "ProgressSnapshot",
    ),
    "crp_core.decisions": (
        "DecisionError",
        "MARKABLE_STATUSES",
        "MAX_NOTE_CHARS",
        "REVERT",
        "StaleDecisionError",
        "TriageStoreError",
        "TriageStoreUnavailable",
        "decisions_record",
        "normalise_operator",
        "pair_key",
        "split_pair_key",
    ),
    "crp_core.factors.recency": (
        "RULES",
        "compute_recency",
        "fact_attributes",
        "recency_factor",
    ),
    "crp_core.io.ckf.sdk": ("given_edges",),
    "crp_core.io.ckf.sdk_map": ("source_map_from_bytes", "source_map_from_dict"),
    "crp_core.io.scenario": ("scenario_to_dict", "MAX_SCENARIO_BYTES"),
    "crp_core.io.timeparse": ("format_timestamp",),
    "crp_core.records": (
        "FANOUT_DUPLICATES",
        "FANOUT_REACHING",
        "FanoutRun",
        "FanoutStep",
        "KnownConflict",
        "NearConflict",
    ),
    "crp_core.stages.contradictions": (
        "EVENT_DISMISSED",
        "EVENT_RESOLVED",
        "PATTERNS",
        "authority_winner",
        "changed_by_decision",
    ),
    "crp_core.stages.contradictions.arbitration": ("winner_by_authority",),
    "crp_core.stages.packing": ("fact_line",),
    "crp_core.stages.known": ("KnownSource",),
    "crp_core.stages.tie_groups": ("note_block",),
    "crp_core.stages.partitions": (
        "RULE_KMEANS",
        "RULE_ONE_EACH",
        "RULE_SINGLE",
    ),
    "crp_core.triage": (
        "CleanedExport",
        "default_db_path",
        "export_csv",
        "export_json",
        "same_decision",
    ),
    "crp_core.history": (
        "EXPERIMENT_KINDS",
        "HISTORY_ENV",
        "Experiment",
        "ExperimentError",
        "ExperimentStore",
        "experiment_inputs",
        "history_db_path",
        "history_enabled",
        "list_experiments",
        "record_experiment",
    ),
    "crp_core.triage.chain": ("ChainVerdict",),
    "crp_core.triage.claims": ("Claim",),
    "crp_core.triage.quality": ("DetectorQuality", "detector_quality"),
    "crp_core.triage.store": ("open_store",),
    "crp_core.triage.roles": ("PermissionRefused", "Role", "RoleBook", "TeamConfigError", "load_roles"),
    "crp_core.triage.team": ("TEAM_ENV", "TeamConfig", "load_team_config"),
    "crp_core.triage.sdk_export": ("SDK_CHECKSUMS", "checksum_algorithm"),
    "crp_core.analysis.baseline": ("SideNumbers",),
    "crp_core.analysis.envelope_changes": ("EnvelopeChange",),
    "crp_core.headers": ("CONFLICTS", "PARTITIONS"),
    # the one content digest and the one memo mechanism (the dashboard keeps none of its own)
    "crp_core.support.digest": ("Digest", "content_digest"),
    "crp_core.support.memo": ("LRU", "WeakMemo"),
    # the one CSV formula-injection rule (every CSV export, the dashboard's downloads too)
    "crp_core.support.spreadsheet": ("csv_cell",),
    # team triage: agreement between operators, the two-person review policy
    "crp_core.triage.agreement": ("REVIEW_STATES", "OperatorAgreement", "operator_agreement", "review_statuses"),
    "crp_core.triage.identity": ("Identity", "resolve_identity"),
}
#: public submodules: namespaces of constants (``headers.CONFLICTS``, ...)
_SUBMODULES = ("headers",)
_WHERE: dict[str, str] = {
    name: module for table in (_MODULES, _DASHBOARD) for module, names in table.items() for name in names
}

#: what the dashboard (crp_ui) reads besides the names above: record types of its views, the constants
#: it names (header names, partition rules, patterns) and the functions it explains a run with

# fmt: off
__all__ = [
    # configuration and errors
    "CRPConfig", "SourceTable", "layered_config", "SOURCE_TYPES", "STATUSES", "CRPError", "ValidationError",
    "CKFError", "ScenarioError", "ConfigError", "EmbeddingModelMismatch", "SnapshotMutationError", "Problem",
    "SuiteError", "DetectorWeightsError",
    # inputs
    "Fact", "KnowledgeBase", "Scenario", "SubQuery", "Addressed", "Expectations", "ExpectedConflict", "load_ckf",
    "load_ckf_bytes", "write_ckf", "CKF_SUFFIXES", "listable_ckf", "SCENARIO_SUFFIXES", "listable_scenario",
    "folder_entries", "load_scenario", "load_scenario_bytes", "scenario_from_dict", "dump_scenario",
    # the prepared corpus
    "Corpus", "ScenarioVectors", "prepare_corpus", "embed_scenario", "Embedder", "MiniLMEmbedder", "MODEL_ID",
    "configured_embedder", "embedder_for_vectors", "resolve_model", "ModelSpec",
    # the pipeline and its records
    "STAGES", "run_pipeline", "PipelineResult", "Clamp", "CandidateSet", "RecencyTable", "CDRTable", "ConnectorTable",
    "CDGRResult", "Authority", "ValueDiff", "ValueConflict", "ConflictPair", "AuditEvent", "Resolution",
    "FanoutResult", "PackedFact", "Envelope", "TieGroup", "FactOutcome", "values_conflict", "authority_of",
    "LanguageProfile", "language_profile", "GateCounts", "GateNote", "gate_counts", "gate_note",
    # JSON reports
    "run_report", "fact_rows_report", "fact_columns", "fanout_report", "pair_dict", "dumps", "suite_metrics_report",
    "tune_report", "export_report_dict",
    # analysis
    "scan_ckf", "ConflictScan", "CheckedPairs", "check_ckf", "arbitrate_checked", "DecisionChange", "ScanUpdate",
    "decision_change", "pair_index", "rearbitrate", "restatused", "rows_from", "RetrievableSplit", "within_retrievable",
    "sweep", "SweepResult", "SweepPoint",
    "compare_runs", "Comparison", "before_after", "BeforeAfter", "run_spec024_baseline",
    # time, pictured: the winner of a pair and the envelope as now moves (docs/decisions/timeline.md)
    "pair_timeline", "PairTimeline", "FactClock", "TimeMark", "Flip", "winner_flags", "WinnerFlags", "flag_lines",
    "relative_margin",
    "envelope_timeline", "envelope_timeline_of", "envelope_grid", "EnvelopeTimeline",
    # engines of the whole-CKF work: local or Ray (docs/scaling.md)
    "ENGINES", "EmbedRun", "embed_kb", "scan_with_engine",
    # suites, metrics, the regression gate, auto-tuning (docs/decisions/suites.md)
    "load_suite", "suite_from_files", "Suite", "SuiteScenario", "check_suite", "prepare_suite", "PreparedSuite",
    "run_suite", "SuiteRun", "sweep_suite", "SuiteSweep", "scenario_metrics", "suite_metrics", "ScenarioMetrics",
    "SuiteMetrics", "gate", "GateResult", "read_baseline", "tune", "TuneResult", "TrialRecord", "OBJECTIVES",
    # a scenario's labels read against one run (docs/decisions/labels.md)
    "label_marks", "LabelMarks", "LabelMark", "MARK_KINDS", "MARK_MEANINGS", "fact_state",
    # suite sweeps over a round grid of one or two keys (docs/reference/cli.md#sweep)
    "sweep_grid", "SuiteGrid", "GridAxis", "AxisSpec", "grid_axis", "grid_rows", "suite_current",
    # operator triage
    "DecisionStore", "Decision", "DecisionSet", "apply_to_kb", "apply_to_corpus", "export_cleaned_ckf",
    "ExportReport", "carried_decisions", "export_sdk_snapshot", "SDK_CHECKSUMS", "checksum_algorithm",
    # crprotocol SDK snapshots (docs/decisions/sdk-snapshots.md)
    "load_sdk_snapshot", "load_sdk_snapshot_bytes", "SourceTypeMap", "load_source_map", "GivenEdge", "ImportSummary",
    "sdk_agreement", "SdkAgreement", "PairAgreement", "sdk_provenance", "SdkProvenance", "SdkState",
    # read by the dashboard (crp_ui, pages): header names, views' inputs, triage, suites
    "headers", "GateFailure", "build_html_report", "known_conflicts", "METRICS", "MetricInfo", "RANKING_METRICS",
    "SelectionKnownConflicts", "RowChecks", "KnownSource",
    "scan_config_key", "CHECK_CONFIG_FIELDS", "DEFAULT_CHECK_WORKERS", "load_checked", "save_checked",
    "has_sdk_data", "check_key", "current_value", "is_bool_key", "is_integer_key",
    "sweepable_keys", "Param", "default_space", "NEVER_RETRIEVED", "SCALAR_KEYS", "TABLE_KEYS", "choices", "describe",
    "origin", "valid_range", "EmbeddingCancelled", "default_embedder", "embedder_for", "EmbeddingProgress",
    "JobRegistry", "PreparationJob", "ProgressSnapshot", "DecisionError", "MARKABLE_STATUSES", "MAX_NOTE_CHARS",
    "TriageStoreError", "pair_key", "split_pair_key", "RULES", "fact_attributes", "recency_factor", "given_edges",
    "source_map_from_bytes", "source_map_from_dict", "scenario_to_dict", "EnvelopeChange", "SideNumbers",
    "MAX_SCENARIO_BYTES", "MAX_CONFIG_BYTES",
    "compute_recency", "CONFLICTS", "PARTITIONS", "format_timestamp", "FANOUT_DUPLICATES", "FANOUT_REACHING",
    "FanoutRun", "FanoutStep",
    "KnownConflict", "EVENT_DISMISSED", "EVENT_RESOLVED", "PATTERNS", "authority_winner", "fact_line", "note_block",
    "changed_by_decision", "NearConflict", "winner_by_authority",
    "RULE_KMEANS", "RULE_ONE_EACH", "RULE_SINGLE", "CleanedExport", "default_db_path", "export_csv", "export_json",
    "DetectorQuality", "detector_quality", "Digest", "content_digest", "LRU", "WeakMemo", "csv_cell",
    # triage as a team (docs/decisions/triage.md): names, roles, the team file, the store's refusals
    "normalise_operator", "StaleDecisionError", "TriageStoreUnavailable", "PermissionRefused", "Role", "RoleBook",
    "decisions_record", "TeamConfigError", "load_roles", "TEAM_ENV", "TeamConfig", "load_team_config", "open_store",
    "Claim", "ChainVerdict", "REVERT",
    # team triage, read by the dashboard
    "REVIEW_STATES", "OperatorAgreement", "operator_agreement", "review_statuses", "Identity", "resolve_identity",
    "same_decision",
    # crprotocol sessions: the audit trail and its analysis
    "AuditTrail", "read_audit", "SessionReport", "analyse_session", "session_report_dict",
    # stakeholder reports: what a report ran on, the whole suite as one report
    "build_suite_html_report", "ReportInputs", "ScenarioInput", "DecisionLine", "decision_lines", "config_changes",
    "reproduce_command", "set_args_for", "SuiteBeforeAfter", "suite_before_after",
    # view snapshots: a dashboard view in one file (docs/reference/snapshot.md)
    "ViewSnapshot", "ViewSnapshotError", "read_view_snapshot", "view_snapshot_bytes", "CORPUS_KEYS",
    # the experiment history (docs/decisions/history.md)
    "Experiment", "ExperimentError", "ExperimentStore", "EXPERIMENT_KINDS", "HISTORY_ENV", "experiment_inputs",
    "history_db_path", "history_enabled", "list_experiments", "record_experiment",
    # the engineer's tuning space and objectives (docs/decisions/tuning.md)
    "objective_named", "objective_names", "no_feasible_message", "tuned_toml", "param_for", "tunable_keys",
]
# fmt: on
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    """A public name, imported from its module on first use and kept in the package namespace."""
    if name in _SUBMODULES:
        value = importlib.import_module(f"crp_core.{name}")
        globals()[name] = value
        return value
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'crp_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
