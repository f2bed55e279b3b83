"""CKF loading, validation and export (docs/reference/ckf.md, SPEC-009 §2).

:mod:`.read` reads the formats (JSONL, JSON, CSV, a directory with ``embeddings.npy``; Parquet in
:mod:`.parquet`, SDK snapshots in :mod:`.sdk`), :mod:`.source` holds what they share at the level of
the file, :mod:`.facts` checks each fact, :mod:`.assemble` the whole file, :mod:`.write` writes a CKF
back. Decisions: ``docs/decisions/loader.md``.
"""

from crp_core.io.ckf.facts import FACT_FIELDS, IGNORED_FIELDS
from crp_core.io.ckf.read import load_ckf, load_ckf_bytes
from crp_core.io.ckf.write import write_ckf

__all__ = ["FACT_FIELDS", "IGNORED_FIELDS", "load_ckf", "load_ckf_bytes", "write_ckf"]
