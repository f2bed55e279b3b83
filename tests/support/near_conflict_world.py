"""A run whose envelope packs a negation flip at cosine .830, just below contradiction_similarity .85
(tests/core/test_near_conflicts.py says how it is built)."""

from __future__ import annotations

import math

from crp_core.config import CRPConfig
from crp_core.pipeline import run_pipeline
from tests.support.factories import fact, make_corpus, make_scenario


def unit(*xs: float) -> list[float]:
    v = list(xs) + [0.0] * (6 - len(xs))
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v]


def near_conflict_run(**overrides):
    facts = [
        fact("N1", "Greasy pizza boxes are not accepted in the blue bin."),
        fact("N2", "Greasy pizza boxes are accepted in the blue bin."),
        fact("P1", "The depot opens at 8 on Saturdays and the fee is 5 dollars."),
        fact("P2", "The depot opens at 8 on Saturdays and the fee is 7 dollars."),
        fact("Q", "Glass is collected every two weeks."),
    ]
    vecs = [
        unit(0.9, 0.436),
        unit(0.9, 0.0459, 0.4334),
        unit(0.8, 0, 0, 0.6),
        unit(0.8, 0, 0, 0.36, 0.48),
        unit(0.7, 0, 0, 0, 0, 0.714),
    ]
    config = CRPConfig(graph_retrieval=False, envelope_fact_budget=5, **overrides)
    corpus = make_corpus(facts, vecs, config)
    return run_pipeline(corpus, make_scenario([1, 0, 0, 0, 0, 0]), config)
