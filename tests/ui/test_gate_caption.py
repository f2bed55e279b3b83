"""The Overview's relevance-gate caption (crp_ui.breakdown.gate_caption): one short sentence with the figures of
crp_core.gate_counts, the explanation in its help."""

from __future__ import annotations

from crp_core import GateCounts
from crp_ui.breakdown import gate_caption


def test_the_caption_is_one_short_sentence_with_the_figures():
    text, why = gate_caption(GateCounts(retrieved=135, passed=9, below=126, connectors=6), 0.3)
    assert text == "Relevance gate 0.3: 9 of 135 candidates passed, 126 below it (6 chosen as connectors)."
    assert "cannot be an anchor" in why and "connector, which is not gated" in why and "(120 here)" in why


def test_one_connector_and_none():
    one, _ = gate_caption(GateCounts(retrieved=84, passed=7, below=77, connectors=1), 0.55)
    assert one == "Relevance gate 0.55: 7 of 84 candidates passed, 77 below it (1 chosen as a connector)."
    none, why = gate_caption(GateCounts(retrieved=1200, passed=1200, below=0, connectors=0), -1.0)
    assert none == "Relevance gate -1: 1,200 of 1,200 candidates passed, 0 below it."
    assert "(0 here)" in why
