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


def near_conflict_run(decisions=None, **overrides):
    facts = [fact(fid, content) for fid, content, _vec in NEAR_FACTS]
    vecs = [unit(*vec) for _fid, _content, vec in NEAR_FACTS]
    config = CRPConfig(graph_retrieval=False, envelope_fact_budget=5, **overrides)
    corpus = make_corpus(facts, vecs, config)
    return run_pipeline(corpus, make_scenario([1, 0, 0, 0, 0, 0]), config, decisions=decisions)


NEAR_FACTS = (
    ("N1", "Greasy pizza boxes are not accepted in the blue bin.", (0.9, 0.436)),
    ("N2", "Greasy pizza boxes are accepted in the blue bin.", (0.9, 0.0459, 0.4334)),
    ("P1", "The depot opens at 8 on Saturdays and the fee is 5 dollars.", (0.8, 0, 0, 0.6)),
    ("P2", "The depot opens at 8 on Saturdays and the fee is 7 dollars.", (0.8, 0, 0, 0.36, 0.48)),
    ("Q", "Glass is collected every two weeks.", (0.7, 0, 0, 0, 0, 0.714)),
)


def write_near_conflict_sample(d):  # type: ignore[no-untyped-def]
    """The same facts and vectors as a dashboard sample folder (``d``: created): ``knowledge_base.jsonl`` and a
    scenario of query e0 with graph retrieval off and a budget of 5 facts, as :func:`near_conflict_run` runs."""
    import json

    from tests.support.samples import TEST_MODEL

    (d / "scenarios").mkdir(parents=True)
    with open(d / "knowledge_base.jsonl", "w", encoding="utf-8") as fh:
        for fid, content, vec in NEAR_FACTS:
            row = {"fact_id": fid, "content": content, "source_type": "official_documentation"}
            fh.write(json.dumps({**row, "embedding": unit(*vec), "embedding_model": TEST_MODEL}) + "\n")
    scenario = {
        "name": "near",
        "query": {"text": "what goes in the blue bin", "embedding": [1.0, 0, 0, 0, 0, 0]},
        "now": "2026-11-01T00:00:00Z",
        "sub_queries": [],
        "fanout_width": 0,
        "embedding_model": TEST_MODEL,
        "config": {"graph_retrieval": False, "envelope_fact_budget": 5},
    }
    (d / "scenarios" / "near.json").write_text(json.dumps(scenario), encoding="utf-8")
    return d
