"""The detector tests' shared check: a pair's patterns, with the symmetry every answer keeps."""

from __future__ import annotations

from crp_core.stages.contradictions.values import values_conflict


def patterns(a: str, b: str) -> tuple[str, ...] | None:
    """The patterns ``values_conflict(a, b)`` names (None: no conflict); the reverse order agrees."""
    vc = values_conflict(a, b)
    back = values_conflict(b, a)
    assert (vc is None) == (back is None)  # symmetric
    return vc.patterns if vc else None
