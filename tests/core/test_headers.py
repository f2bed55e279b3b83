"""Response headers (docs/reference/reports.md): exact names, order and value strings on a hand-built run."""

from __future__ import annotations

import numpy as np

from crp_core.headers import HEADER_ORDER, conflicts_value
from crp_core.pipeline import run_pipeline
from tests.support.factories import fact, make_corpus, make_scenario

E = np.eye(6)
NOW = "2026-06-01T00:00:00Z"


def corpus_and_scenario(fanout_width=0):
    facts = [
        fact("F1", "etcd default client port is 2379", modified_at="2026-03-01"),  # age 92 d: fresh
        fact("F2", "etcd default client port is 4001", modified_at="2019-01-01"),  # expired: 0.30
        fact("F3", "etcd peers use port 2380 for peer traffic", modified_at="2026-03-01"),
        fact("F4", "etcd 3.6 was released with new defaults", source_type="news", modified_at="2026-02-21"),
        fact("F5", "etcd default client port is 1234", status="DELETED", modified_at="2026-03-01"),
    ]
    vecs = [E[0], E[0] + 0.1 * E[1], 0.8 * E[0] + 0.6 * E[2], 0.58 * E[0] + np.sqrt(1 - 0.58**2) * E[3], E[0]]
    corpus = make_corpus(facts, np.array(vecs))
    scen = make_scenario(
        E[0],
        sub_queries=[("s1", E[2]), ("s2", E[3]), ("s3", E[4])],
        addressed=[("s1", 1.0)],
        prior_outputs=["As noted, etcd peers use port 2380 for peer traffic."],
        now=NOW,
        fanout_width=fanout_width,
    )
    return corpus, scen


def test_headers_by_hand():
    corpus, scen = corpus_and_scenario()
    r = run_pipeline(corpus, scen)
    h = r.headers
    assert list(h) == [k for k in HEADER_ORDER if k in h]
    assert "CRP-Context-Coverage-Partitions" not in h  # no fan-out
    # F1 vs F2: cos 1/sqrt(1.01) = 0.995 > 0.85, NUMBER_CHANGED; authority 0.8*1*0.8 vs 0.8*0.3*0.8
    assert h["CRP-Context-Conflicts-Resolved"] == "1"
    # gated-in facts with recency < 1: F2 (expired) and F4 (news, 100 d > ttl 30); F5 never retrieved
    assert h["CRP-Context-Recency-Penalised"] == "2"
    # novelty = 1 - cos(fact, s1) (depth 1.0): F1 1.0, F3 1 - 0.6 = 0.4, F4 1.0 -> min 0.40
    assert h["CRP-Context-Coverage-Score"] == "0.40"
    assert h["CRP-Context-Coverage-Depth"] == "1"
    # F3's text holds blacklisted 6-grams of the prior output
    assert h["CRP-Context-NGram-Guard-Activations"] == "1"
    assert h["CRP-Context-Graph-Hops"] == "2"
    assert h["CRP-Context-Connectors-Included"] == "0/3"
    assert h["CRP-Context-Bridge-Score"] == "0.00"
    # available = F1..F4 (F5 is DELETED: never a candidate); included = F1, F3, F4 (F2 suppressed)
    assert h["CRP-Context-Facts-Used"] == "3/4"
    # words * 1.3, ceil, per line "[id] content": F1 2+6 words... counted per part:
    # F1 content 6 words -> 8 tokens, F3 8 words -> 11, F4 7 words -> 10; each "[Fn]" 1 word -> 2
    assert h["CRP-Context-Tokens-Used"] == str(8 + 11 + 10 + 3 * 2)
    assert r.envelope.tokens_used == 35


def test_partitions_header_only_with_fanout():
    corpus, scen = corpus_and_scenario(fanout_width=2)
    r = run_pipeline(corpus, scen)
    assert r.fanout is not None
    assert r.headers["CRP-Context-Coverage-Partitions"] == "2"  # residual {s2, s3}, width 2: one each
    assert list(r.headers)[0] == "CRP-Context-Coverage-Partitions"
    # Coverage-Depth is the size at packing time: parent 1 + 2 branch additions after the fan-in merge
    assert r.headers["CRP-Context-Coverage-Depth"] == "3"


def test_empty_coverage_score_is_one():
    corpus, scen = corpus_and_scenario()
    r = run_pipeline(corpus, scen.replace(addressed=()))
    assert r.headers["CRP-Context-Coverage-Score"] == "1.00"
    assert r.headers["CRP-Context-Coverage-Depth"] == "0"


def test_conflicts_value_format():
    assert conflicts_value(2, 0) == "2"
    assert conflicts_value(1, 1) == "1; unresolved=1"
    assert conflicts_value(0, 0) == "0"
