"""A conflict pair whose winner flips twice as now moves, with every instant computable by hand
(tests of crp_core.analysis.timeline and crp_ui.time_strip).

A: official_documentation (source authority 0.8), importance 1.0, modified 2025-01-01, TTL 365 d (default):
   starts ageing 2025-07-02 12:00 (half its TTL), expires 2026-01-01.
B: web (source authority 0.7), importance 1.0, modified 2025-10-01, TTL 365 d: starts ageing
   2026-04-01 12:00, expires 2026-10-01.
"""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np

from crp_core import EnvelopeTimeline
from tests.support.factories import fact, make_kb

A = fact("A", source_type="official_documentation", importance_weight=1.0, modified_at="2025-01-01T00:00:00Z")
B = fact("B", source_type="web", importance_weight=1.0, modified_at="2025-10-01T00:00:00Z")
KB = make_kb([A, B])
NOW = datetime(2026, 6, 1, tzinfo=UTC)


def small_envelope_timeline() -> EnvelopeTimeline:
    """Three times around :data:`NOW`; F1 always inside, F2 and A moving in and out (the two that change)."""
    times = (datetime(2026, 1, 1, tzinfo=UTC), NOW, datetime(2026, 12, 1, tzinfo=UTC))
    return EnvelopeTimeline(
        times=times,
        fact_ids=("F1", "F2", "A"),
        inside=np.array([[1, 1, 1], [1, 0, 0], [0, 1, 1]], dtype=bool),
        changing=("F2", "A"),
    )
