"""The pair card's pattern line says when the detector's learned comparison found the conflict
(crp_ui.pair_cards.patterns_line; docs/decisions/detector-learned.md)."""

from __future__ import annotations

import pytest

from crp_core.records import ConflictPair
from crp_core.stages.contradictions import values_conflict
from crp_ui import pair_cards

LEARNED = (
    "Tickets cost 12 euros for adults and 6 euros for children.",
    "Children pay 12 euros and adults pay 6 euros.",
)
RULES = ("Releases are cut from the main branch.", "Releases are cut from the develop branch.")


def _pair(a: str, b: str) -> ConflictPair:
    vc = values_conflict(a, b)
    assert vc is not None
    return ConflictPair("F1", "F2", 0.9, vc.patterns, vc, {}, ("F1", "F2"), None, True)


@pytest.mark.parametrize(
    ("texts", "line"),
    [
        (LEARNED, "**Pattern(s):** NUMBER\\_CHANGED (learned comparison: the rules found none)"),
        (RULES, "**Pattern(s):** ENTITY\\_SUBSTITUTED"),
    ],
    ids=["learned", "rules"],
)
def test_the_pattern_line_names_the_learned_comparison(monkeypatch, texts, line):
    shown: list[str] = []
    monkeypatch.setattr(pair_cards.st, "markdown", lambda text, *a, **k: shown.append(text))
    pair_cards.patterns_line(_pair(*texts))
    assert shown == [line]
