"""A knowledge base is freed once nobody holds it: the per-KB caches (recency attributes, resolved
columns, n-grams, carried decisions) key it weakly, and no cached value may point back at it, or a
long-lived dashboard would keep every CKF it ever loaded (docs/decisions/pipeline.md, "Caches")."""

from __future__ import annotations

import gc
import weakref

from crp_core import CRPConfig, embed_scenario, load_ckf, load_scenario, prepare_corpus, run_pipeline, run_report
from crp_core.factors.recency import fact_attributes
from tests.support.paths import REPO_ROOT

ROOT = REPO_ROOT
SAMPLE = ROOT / "sample_ckf"


def _use_once(scenario: str) -> tuple[weakref.ref, weakref.ref]:
    config = CRPConfig()
    kb = load_ckf(SAMPLE / "knowledge_base.jsonl")
    corpus = prepare_corpus(kb, config=config)
    sc = load_scenario(SAMPLE / "scenarios" / scenario)
    result = run_pipeline(corpus, sc, config, vectors=embed_scenario(sc, corpus))
    assert result.outcomes and run_report(result)["envelope"]
    assert fact_attributes(kb, sc.now, config).facts is kb.facts
    return weakref.ref(kb), weakref.ref(corpus)


def test_a_used_knowledge_base_is_freed_when_released():
    for scenario in ("etcd_upgrade.json", "ai_act_compliance.json"):  # fan-out, contradictions, packing
        kb_ref, corpus_ref = _use_once(scenario)
        gc.collect()
        assert corpus_ref() is None
        assert kb_ref() is None, [type(r).__name__ for r in gc.get_referrers(kb_ref())]
