"""The experiment history (docs/decisions/history.md): every check, sweep, tune and dashboard suite run kept
with its configuration's changes from the defaults, the knowledge base's and the suite's fingerprints, its
metrics, when and by whom, in the decision database beside the triage log. The record and its checks:
:mod:`crp_core.history.records`; the tables: :mod:`crp_core.history.schema`; the store:
:mod:`crp_core.history.store`."""

from crp_core.history.records import (
    KINDS,
    MAX_NOTE_CHARS,
    Experiment,
    ExperimentError,
    config_diff,
    suite_fingerprint,
    validate_experiment,
)
from crp_core.history.schema import HISTORY_SCHEMA_VERSION
from crp_core.history.store import (
    DEFAULT_HISTORY_DB,
    HISTORY_ENV,
    MAX_LIST,
    ExperimentStore,
    experiment_inputs,
    history_db_path,
    history_enabled,
    list_experiments,
    record_experiment,
)

#: the kinds of experiment (check, sweep, tune, suite-run), under the name the public package gives them
EXPERIMENT_KINDS = KINDS

__all__ = [
    "DEFAULT_HISTORY_DB",
    "EXPERIMENT_KINDS",
    "HISTORY_ENV",
    "HISTORY_SCHEMA_VERSION",
    "KINDS",
    "MAX_LIST",
    "MAX_NOTE_CHARS",
    "Experiment",
    "ExperimentError",
    "ExperimentStore",
    "config_diff",
    "experiment_inputs",
    "history_db_path",
    "history_enabled",
    "list_experiments",
    "record_experiment",
    "suite_fingerprint",
    "validate_experiment",
]
