"""The stderr note a pipeline command gives when ``$CRP_INSPECT_TRIAGE_DB`` names no existing store: the test
suite's own setting (tests/conftest.py names a file in a folder that does not exist), so tests that read
stderr whole take it out first."""

from __future__ import annotations

MISSING_STORE_NOTE = "crp-inspect: note: $CRP_INSPECT_TRIAGE_DB names "


def missing_store_note(path: str) -> str:
    """The note's exact line for ``path``."""
    return f"{MISSING_STORE_NOTE}{path}, which does not exist: no operator decision applied\n"


def without_missing_store_note(err: str) -> str:
    """``err`` without that note's line."""
    return "".join(line for line in err.splitlines(keepends=True) if not line.startswith(MISSING_STORE_NOTE))
