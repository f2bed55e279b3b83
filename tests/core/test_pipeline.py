"""run_pipeline end to end (SPEC-027 §4) on tiny hand-built corpora, and the JSON report."""

from __future__ import annotations

import json

import numpy as np
import pytest

from crp_core.config import CRPConfig
from crp_core.pipeline import STAGES, run_pipeline
from crp_core.report import dumps, run_report
from tests.support.factories import fact, make_corpus, make_scenario

E = np.eye(8)
NOW = "2026-06-01T00:00:00Z"


def etcd_corpus(f2_source="official_documentation", f2_modified="2019-01-01", extra=()):
    """SPEC-027 §2.1: F1 current official docs (v3.5), F2 the stale legacy value (v2.x)."""
    facts = [
        fact(
            "etcd-2379",
            "etcd default client port is 2379",
            source_type="official_documentation",
            modified_at="2026-03-01",
            source_id="etcd docs v3.5",
        ),
        fact(
            "etcd-4001",
            "etcd default client port is 4001",
            source_type=f2_source,
            modified_at=f2_modified,
            source_id="etcd docs v2.x",
        ),
        fact("etcd-peer", "etcd peers talk to each other on port 2380", modified_at="2026-03-01"),
        fact("k8s-store", "Kubernetes keeps all cluster state in etcd", modified_at="2026-03-01"),
    ]
    vecs = [E[0] + 0.05 * E[1], E[0] + 0.05 * E[2], 0.75 * E[0] + 0.66 * E[3], 0.6 * E[0] + 0.8 * E[4]]
    for f, v in extra:
        facts.append(f)
        vecs.append(v)
    return make_corpus(facts, np.array(vecs))


def test_spec_027_etcd_example_end_to_end():
    corpus = etcd_corpus()
    scen = make_scenario(E[0], now=NOW)
    r = run_pipeline(corpus, scen)
    order = [p.fact_id for p in r.envelope.order]
    assert "etcd-2379" in order and "etcd-4001" not in order
    assert r.headers["CRP-Context-Conflicts-Resolved"] == "1"
    (pair,) = [p for p in r.resolution.pairs if not p.skipped]
    assert set(pair.kept) == {"etcd-2379"} and pair.suppressed == "etcd-4001" and not pair.tied
    assert "NUMBER_CHANGED" in pair.patterns
    # authority = source authority * recency * importance: 0.8 * 1.0 * 0.8 vs 0.8 * 0.30 * 0.8
    assert pair.authority["etcd-2379"].authority == pytest.approx(0.64)
    assert pair.authority["etcd-4001"].authority == pytest.approx(0.192)
    out = {o.fact_id: o for o in r.outcomes}
    assert out["etcd-4001"].suppressed and not out["etcd-4001"].in_envelope
    assert "suppressed by etcd-2379" in out["etcd-4001"].reason
    assert any(e.event == "CONTRADICTION_RESOLVED" for e in r.audit)
    rep = run_report(r)
    (c,) = [c for c in rep["conflicts"] if not c["skipped"]]
    assert c["kept"] == ["etcd-2379"] and c["suppressed"] == "etcd-4001" and c["tied"] is False
    assert c["authority"]["etcd-4001"] == {
        "source_authority": 0.8,
        "recency_factor": 0.3,
        "importance_weight": 0.8,
        "authority": pytest.approx(0.192),
        "source_type": "official_documentation",
    }
    assert "NOTE:" not in r.envelope.text


def test_tie_keeps_both_with_a_note():
    corpus = etcd_corpus(f2_modified="2026-03-01")  # same source type, age and importance: tied
    r = run_pipeline(corpus, make_scenario(E[0], now=NOW))
    assert r.headers["CRP-Context-Conflicts-Resolved"] == "1; unresolved=1"
    order = [p.fact_id for p in r.envelope.order]
    assert "etcd-2379" in order and "etcd-4001" in order
    assert len(r.envelope.notes) == 1
    assert "NOTE: The following two facts conflict and could not be automatically\narbitrated." in r.envelope.text
    assert "  [etcd default client port is 2379]" in r.envelope.text
    assert "  [etcd default client port is 4001]" in r.envelope.text
    body = sum(p.tokens for p in r.envelope.order)
    assert r.envelope.tokens_used > body  # the NOTE is counted
    assert r.envelope.tokens_used <= r.envelope.token_budget


def test_deleted_and_quarantined_never_in_the_envelope():
    extra = [
        (fact("del", "etcd default client port is 2379 per deleted doc", status="DELETED"), E[0]),
        (fact("quar", "etcd client port is 2379 per quarantined doc", status="QUARANTINED"), E[0]),
        # a would-be connector between etcd-peer and k8s-store, quarantined
        (fact("quar-bridge", "bridge fact", status="QUARANTINED"), 0.7 * E[3] + 0.7 * E[4]),
    ]
    corpus = etcd_corpus(extra=extra)
    r = run_pipeline(corpus, make_scenario(E[0], now=NOW))
    never = {"del", "quar", "quar-bridge"}
    assert never.isdisjoint(p.fact_id for p in r.envelope.order)
    assert never.isdisjoint(o.fact_id for o in r.outcomes)
    rows = {corpus.kb.index_of(f) for f in never}
    assert rows.isdisjoint(r.cdgr.connectors.idx.tolist())
    assert rows.isdisjoint(r.candidates.idx.tolist())


def test_outcomes_roles_and_timings():
    corpus = etcd_corpus(extra=[(fact("far", "an unrelated fact about cooking"), E[7])])
    r = run_pipeline(corpus, make_scenario(E[0], now=NOW))
    roles = {o.fact_id: o.role for o in r.outcomes}
    assert roles["etcd-2379"] == "anchor" and roles["etcd-4001"] == "anchor"
    assert set(r.timings_ms) == set(STAGES) and all(v >= 0 for v in r.timings_ms.values())
    rep = run_report(r)
    facts = {f["fact_id"]: f for f in rep["facts"]}
    for f in facts.values():
        assert f["cdr_score"] >= 0 and 0 < f["novelty"] <= 1
    assert rep["envelope"]["order"] == [p.fact_id for p in r.envelope.order]
    assert rep["envelope"]["tokens_used"] == r.envelope.tokens_used
    assert set(rep) >= {"headers", "facts", "conflicts", "envelope", "audit"}


def test_gated_out_facts_are_scored_and_marked():
    extra = [(fact("weak", "etcd is written in Go"), 0.4 * E[0] + np.sqrt(0.84) * E[5])]
    corpus = etcd_corpus(extra=extra)
    r = run_pipeline(corpus, make_scenario(E[0], now=NOW))
    o = {x.fact_id: x for x in r.outcomes}["weak"]
    assert o.role == "gated" and not o.in_envelope
    assert o.reason.startswith("gated: relevance 0.400 < cdr_min_relevance 0.55")
    rep = {f["fact_id"]: f for f in run_report(r)["facts"]}["weak"]
    # scored anyway: 0.8 (official docs importance) * 0.4 * novelty 1 * recency 1 (age unknown) * 1
    assert rep["passed_gate"] is False and rep["cdr_score"] == pytest.approx(0.32, abs=1e-6)


def test_config_now_and_determinism():
    corpus = etcd_corpus()
    scen = make_scenario(E[0], now=NOW, config={"envelope_fact_budget": 2})
    r1 = run_pipeline(corpus, scen)
    assert r1.config.envelope_fact_budget == 2
    assert r1.now.isoformat() == "2026-06-01T00:00:00+00:00"
    r2 = run_pipeline(corpus, scen)
    assert dumps(run_report(r1)) == dumps(run_report(r2))
    r3 = run_pipeline(corpus, scen, CRPConfig(graph_retrieval=False))
    assert r3.config.graph_retrieval is False and r3.headers["CRP-Context-Graph-Hops"] == "0"


def test_report_is_plain_json():
    corpus = etcd_corpus()
    text = dumps(run_report(run_pipeline(corpus, make_scenario(E[0], now=NOW))))
    back = json.loads(text)
    assert back["headers"]["CRP-Context-Conflicts-Resolved"] == "1"
    assert "NaN" not in text and "Infinity" not in text


def test_result_pickles_and_deep_copies():
    """Stage records survive pickling / deep copies (caches, worker processes). The Corpus itself
    holds a lock and an index, so it is detached first."""
    import copy
    import dataclasses
    import pickle

    corpus = etcd_corpus(extra=[(fact("b1", "a fact between peers and state"), 0.5 * E[3] + 0.5 * E[4])])
    r = run_pipeline(corpus, make_scenario(E[0], sub_queries=[("s1", E[3])], addressed=[("s1", 0.5)], now=NOW))
    back = pickle.loads(pickle.dumps(dataclasses.replace(r, corpus=None)))
    assert back.headers == r.headers
    assert list(back.cdgr.connectors.bridged_pairs) == list(r.cdgr.connectors.bridged_pairs)
    assert back.coverage.ids == r.coverage.ids and back.coverage.snapshot().ids == ("s1",)
    assert copy.deepcopy(r.coverage.snapshot()).ids == ("s1",)
    assert [p.fact_id for p in back.envelope.order] == [p.fact_id for p in r.envelope.order]


def test_connector_chain_anchor_connector_anchor():
    """SPEC-025 §2.6 / §4: A and D are anchors with no edge; B bridges them. docs/reference/pipeline.md §6: connectors
    never take positions 1-2; A and D (equal CDR, both critical) are the primacy block, B follows it.

    Vectors: A = a*A' + b*q, D = a*D' + b*q, B = B' with b = 0.56, a = sqrt(1 - 0.56^2) = 0.828493;
    A'.D' = 0.30, A'.B' = D'.B' = 0.78 (q orthogonal to A', D', B').
    cos(A, B) = cos(D, B) = 0.828493 * 0.78 = 0.646225 (edges); cos(A, D) = 0.686400 * 0.30 + 0.3136
    = 0.519520 (no edge). relevance: A, D 0.56 (gated in), B 0 (gated out, a connector candidate).
    bridge(B) = 1 pair * (0.646225 + 0.646225) / 2 = 0.646225; score = 0.646225 * 1 * 1 * max(0, 0.30).
    """
    g = np.array([[1, 0.3, 0.78], [0.3, 1, 0.78], [0.78, 0.78, 1]])
    low = np.linalg.cholesky(g)
    b = 0.56
    a = np.sqrt(1 - b * b)
    q = np.array([0, 0, 0, 1.0])
    vec = {"A": np.append(a * low[0], b), "D": np.append(a * low[1], b), "B": np.append(low[2], 0.0)}
    facts = [
        fact("A", "pods receive new IPs when rescheduled", modified_at="2026-05-01"),
        fact("D", "stale DNS caches delay endpoint propagation", modified_at="2026-05-01"),
        fact("B", "services track pod endpoints through label selectors", modified_at="2026-05-01"),
    ]
    corpus = make_corpus(facts, np.array([vec["A"], vec["D"], vec["B"]]))
    r = run_pipeline(corpus, make_scenario(q, now=NOW))
    assert [p.fact_id for p in r.envelope.order] == ["A", "D", "B"]
    assert [p.role for p in r.envelope.order] == ["anchor", "anchor", "connector"]
    assert r.envelope.order[2].bridges_anchor == "A"
    conn = r.cdgr.connectors
    i = conn.idx.tolist().index(2)
    assert conn.bridge_value[i] == pytest.approx(0.646225, abs=1e-5)
    assert conn.connector_score[i] == pytest.approx(0.646225 * 0.30, abs=1e-5)
    assert r.headers["CRP-Context-Connectors-Included"] == "1/3"
    assert r.headers["CRP-Context-Bridge-Score"] == "0.65"
    assert r.headers["CRP-Context-Facts-Used"] == "3/3"
    out = {o.fact_id: o for o in r.outcomes}
    assert out["B"].role == "connector" and out["B"].in_envelope
    assert out["B"].reason == "connector: bridge value 0.646 (bridges A-D)"
    rep = {f["fact_id"]: f for f in run_report(r)["facts"]}
    assert rep["B"]["bridge_value"] == pytest.approx(0.646225, abs=1e-5)
    assert rep["B"]["bridged_pairs"] == [["A", "D"]] and rep["B"]["passed_gate"] is False
    assert rep["A"]["bridge_value"] is None


def test_unchosen_connector_candidate_is_a_candidate_not_gated():
    """The relevance gate applies to stage-1 candidates only (docs/reference/pipeline.md §1); a connector candidate
    that only the graph walk found, and that was not chosen, has role "candidate" (SPEC-025 §2.5).

    Same geometry as the chain test plus C = A' (an edge to A and to B, none to D). candidate_k = 2
    so stage 1 returns only A and D (relevance 0.56); B and C come from the graph walk. A fact budget
    of 3 leaves 2 anchors and one connector slot, so one of B / C is chosen and the other is not.
    """
    from crp_core.config import CRPConfig

    g = np.array([[1, 0.3, 0.78], [0.3, 1, 0.78], [0.78, 0.78, 1]])
    low = np.linalg.cholesky(g)
    b = 0.56
    a = np.sqrt(1 - b * b)
    q = np.array([0, 0, 0, 1.0])
    vecs = np.array(
        [np.append(a * low[0], b), np.append(a * low[1], b), np.append(low[2], 0.0), np.append(low[0], 0.0)]
    )
    facts = [
        fact("A", "pods receive new IPs when rescheduled", modified_at="2026-05-01"),
        fact("D", "stale DNS caches delay endpoint propagation", modified_at="2026-05-01"),
        fact("B", "services track pod endpoints through label selectors", modified_at="2026-05-01"),
        fact("C", "rescheduled pods are placed on another node", modified_at="2026-05-01"),
    ]
    corpus = make_corpus(facts, vecs)
    r = run_pipeline(corpus, make_scenario(q, now=NOW), CRPConfig(candidate_k=2, envelope_fact_budget=3))
    assert sorted(corpus.kb.facts[int(i)].fact_id for i in r.candidates.idx) == ["A", "D"]
    conn = r.cdgr.connectors
    assert sorted(corpus.kb.facts[int(i)].fact_id for i in conn.idx) == ["B", "C"]
    out = {o.fact_id: o for o in r.outcomes}
    roles = sorted((out["B"].role, out["C"].role))
    assert roles == ["candidate", "connector"]  # never "gated": connectors are not gated
    unchosen = "B" if out["B"].role == "candidate" else "C"
    assert not out[unchosen].in_envelope
    assert {f["fact_id"]: f["role"] for f in run_report(r)["facts"]}[unchosen] == "candidate"


def test_report_fact_columns_read_each_fact_from_its_own_stage_table():
    """The report's ``facts`` come from :func:`crp_core.report.fact_columns`: each factor from the CDR
    table of the fact's own stage (stage 2, or stage 3 for a connector candidate stage 2 did not score),
    the connector fields from the connector table, the recency fields from the run's recency table.
    Checked against plain per-fact lookups on the chain geometry (A, D from stage 1; B, C from the walk)."""
    from crp_core.report import fact_columns

    g = np.array([[1, 0.3, 0.78], [0.3, 1, 0.78], [0.78, 0.78, 1]])
    low = np.linalg.cholesky(g)
    b = 0.56
    a = np.sqrt(1 - b * b)
    vecs = np.array(
        [np.append(a * low[0], b), np.append(a * low[1], b), np.append(low[2], 0.0), np.append(low[0], 0.0)]
    )
    facts = [
        fact("A", "pods receive new IPs when rescheduled", modified_at="2026-05-01"),
        fact("D", "stale DNS caches delay endpoint propagation", modified_at="2025-01-01"),
        fact(
            "B",
            "services track pod endpoints through label selectors",
            modified_at="2026-05-01",
            source_type="community_forum",
        ),
        fact("C", "rescheduled pods are placed on another node", modified_at="2024-05-01"),
    ]
    corpus = make_corpus(facts, vecs)
    r = run_pipeline(
        corpus, make_scenario(np.array([0, 0, 0, 1.0]), now=NOW), CRPConfig(candidate_k=2, envelope_fact_budget=3)
    )
    cols = fact_columns(r)
    rows = run_report(r)["facts"]
    assert list(rows[0]) == list(cols)  # the rows are the columns read across, in the same field order
    assert [[row[k] for row in rows] for k in cols] == list(cols.values())
    cdr, conn, ccdr, rec = r.cdr, r.cdgr.connectors, r.cdgr.connector_cdr, r.recency
    kb = corpus.kb
    at = {int(x): i for i, x in enumerate(cdr.idx)}
    at_conn = {int(x): i for i, x in enumerate(conn.idx)}
    at_rec = {int(x): i for i, x in enumerate(rec.idx)}
    stage3 = 0
    for k, fid in enumerate(cols["fact_id"]):
        row = kb.index_of(fid)
        table, i = (cdr, at[row]) if row in at else (ccdr, at_conn[row])
        stage3 += table is ccdr
        for name in ("relevance", "novelty", "recency_factor", "importance_weight", "cdr_score"):
            assert cols[name][k] == float(getattr(table, name)[i]), (fid, name)
        c = at_conn.get(row)
        assert cols["connector_candidate"][k] is (c is not None)
        assert cols["bridge_value"][k] == (None if c is None else float(conn.bridge_value[c]))
        assert cols["hop_distance"][k] == (None if c is None else int(conn.hop_distance[c]))
        j = at_rec[row]
        assert cols["age_days"][k] == float(rec.age_days[j]) and cols["ttl_source"][k] == rec.ttl_source[j]
        assert cols["found_by"][k] == (["graph"] if table is ccdr else list(r.candidates.found_by[at[row]]))
        assert cols["source_type"][k] == kb.facts[row].source_type
    assert stage3 == 2  # B and C: scored by stage 3 alone
    assert cols["bridged_pairs"][cols["fact_id"].index("B")] == [["A", "D"]]


def test_a_connector_reason_names_three_bridged_pairs_and_counts_the_rest():
    """A connector bridging many anchor pairs read as a wall of ids in every reason (the Story's hover, the
    breakdown table); the reason names the first three in the stage's order and counts the rest, the run JSON
    keeps every pair."""
    from crp_core.outcomes import BRIDGED_NAMED, bridged_pairs_text

    facts = [fact(x) for x in "ABCDE"]
    pairs = [(0, 1), (0, 2), (1, 3), (2, 4), (3, 4)]
    assert BRIDGED_NAMED == 3
    assert bridged_pairs_text(facts, pairs[:1]) == "A-B"
    assert bridged_pairs_text(facts, pairs[:3]) == "A-B, A-C, B-D"
    assert bridged_pairs_text(facts, pairs[:4]) == "A-B, A-C, B-D and 1 more anchor pair"
    assert bridged_pairs_text(facts, pairs) == "A-B, A-C, B-D and 2 more anchor pairs"
