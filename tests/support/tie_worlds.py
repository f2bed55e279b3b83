"""The shape of the crprotocol SDK's benchmark input for stage 6 (issue #32): many facts in one tight
cluster whose texts all value-conflict pairwise (one number changed) at equal authority (one source
type, one age, default importance), so every pair of selected facts is tied: with 20 selected facts, 190
tied pairs in one tie group.

No model is loaded: the vectors are synthetic (a centre plus small noise, every pairwise cosine far above
``contradiction_similarity``) and the corpus counts tokens as ``ceil(words * 1.3)``."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from crp_core.config import CRPConfig
from tests.support.factories import fact, make_corpus, make_scenario, unit
from tests.support.samples import TEST_MODEL

#: a fact's text: 40 words, the number the only change between two facts (100 + i: three digits, never a year)
TEXT = (
    "The rate limit of the public API gateway for tenant accounts in the primary region is {n} requests "
    "per minute, measured over a sliding window of sixty seconds and enforced separately for every API "
    "key that the tenant has issued."
)
WORDS = 40
#: coverage entries and residual sub-queries of the SDK benchmark's scenario
ADDRESSED, RESIDUAL = 8, 6


@dataclass(frozen=True)
class TieWorld:
    corpus: Any
    scenario: Any
    config: CRPConfig


def tied_cluster(n: int = 500, dim: int = 384, *, seed: int = 0, noise: float = 0.01, **config: Any) -> TieWorld:
    """``n`` facts ``f000``... in one cluster, all pairwise tied when selected; the scenario's query is the
    cluster's centre, with ``ADDRESSED`` addressed and ``RESIDUAL`` residual sub-queries near it; the
    relevance gate at 0 (``config`` overrides on top)."""
    rng = np.random.default_rng(seed)
    centre = rng.normal(size=dim)
    centre /= np.linalg.norm(centre)
    vecs = centre + noise * rng.normal(size=(n, dim))
    facts = [fact(f"f{i:03d}", TEXT.format(n=100 + i), modified_at="2026-03-01") for i in range(n)]
    assert all(len(f.content.split()) == WORDS for f in facts)
    corpus = make_corpus(facts, vecs)
    subs = [(f"s{j}", centre + 0.5 * rng.normal(size=dim) / np.sqrt(dim)) for j in range(ADDRESSED + RESIDUAL)]
    scenario = make_scenario(centre, sub_queries=subs, addressed=[(f"s{j}", 0.5) for j in range(ADDRESSED)])
    return TieWorld(corpus, scenario, CRPConfig(cdr_min_relevance=0.0).with_overrides(config))


def write_tie_sample(d: Path, *, n: int = 5, token_budget: int = 400, dim: int = 8) -> Path:
    """A dashboard sample folder (``knowledge_base.jsonl`` and one scenario) of ``n`` facts ``f000``... of
    :data:`TEXT`, all tied pairwise; graph retrieval off, the gate at 0, ``envelope_fact_budget = n``:
    every fact an anchor of one tie group, ``token_budget`` as given."""
    rng = np.random.default_rng(0)
    centre = rng.normal(size=dim)
    (d / "scenarios").mkdir(parents=True, exist_ok=True)
    with open(d / "knowledge_base.jsonl", "w", encoding="utf-8") as fh:
        for i in range(n):
            vec = centre / np.linalg.norm(centre) + 0.01 * rng.normal(size=dim)
            record = {
                "fact_id": f"f{i:03d}",
                "content": TEXT.format(n=100 + i),
                "source_type": "official_documentation",
                "modified_at": "2026-03-01T00:00:00Z",
                "embedding": unit(vec).tolist(),
                "embedding_model": TEST_MODEL,
            }
            fh.write(json.dumps(record) + "\n")
    scen = {
        "name": "ties",
        "query": {"text": "the gateway's rate limit", "embedding": unit(centre).tolist()},
        "now": "2026-06-01T00:00:00Z",
        "embedding_model": TEST_MODEL,
        "config": {
            "graph_retrieval": False,
            "cdr_min_relevance": 0.0,
            "envelope_fact_budget": n,
            "token_budget": token_budget,
        },
    }
    (d / "scenarios" / "ties.json").write_text(json.dumps(scen), encoding="utf-8")
    return d
