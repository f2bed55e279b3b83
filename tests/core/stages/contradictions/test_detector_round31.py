"""The detector's thirty-first round (docs/decisions/detector-round31.md): one test per error class fixed, each with
the near miss the change must keep. Hand-written sentences; none comes from a labelled corpus."""

from __future__ import annotations

from crp_core.stages.contradictions.clauses import analyse
from crp_core.stages.contradictions.lexicon import FUNC, NEG
from crp_core.stages.contradictions.values import NEGATION_FLIP, values_conflict
from tests.support.detector_cases import patterns


def _kind(text: str, word: str) -> str:
    return next(t.kind for t in analyse(text).tokens if t.text == word)


def test_don_t_mind_is_no_denial() -> None:
    assert _kind("Wear boots you don't mind getting muddy.", "don't") == FUNC
    assert values_conflict("Wear boots that can get muddy.", "Wear boots you don't mind getting muddy.") is None
    # near misses: a contraction before another verb still denies it
    assert _kind("Don't wear boots that can get muddy.", "Don't") == NEG
    assert patterns("Wear boots that can get muddy.", "Don't wear boots that can get muddy.", learned=False) == (
        NEGATION_FLIP,
    )
