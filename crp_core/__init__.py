"""crp_core: a faithful implementation of the CRP-SPEC-027 retrieval pipeline.

Pure library code: no Streamlit, no hidden I/O in scoring. See docs/ARCHITECTURE.md for the
module map; the public entry points are re-exported here.
"""
from crp_core.config import CRPConfig, SOURCE_TYPES, STATUSES
from crp_core.errors import (CKFError, ConfigError, CRPError, EmbeddingModelMismatch, Problem, ScenarioError,
                     SnapshotMutationError, ValidationError)
from crp_core.model import Addressed, Fact, KnowledgeBase, Scenario, SubQuery

__all__ = [
    "CRPConfig", "SOURCE_TYPES", "STATUSES", "CKFError", "ConfigError", "CRPError",
    "EmbeddingModelMismatch", "Problem", "ScenarioError", "SnapshotMutationError", "ValidationError",
    "Addressed", "Fact", "KnowledgeBase", "Scenario", "SubQuery",
]
__version__ = "0.1.0"
