"""What a run builds on first read: an audit event's data (``support.frozen.DeferredData``, the plain
dict ``stages.contradictions.audit.conflict_event_data`` gives) and the per-fact outcomes
(``support.frozen.DeferredTuple``, the tuple ``outcomes.fact_outcomes`` gives). Both read, compare, copy
and pickle as what they stand for."""

from __future__ import annotations

import copy
import json
import pickle

from crp_core.support.frozen import DeferredData, DeferredTuple
from tests.support.paths import REPO_ROOT


def test_deferred_data_builds_once_on_first_read_and_behaves_as_its_dict():
    calls = []

    def build():
        calls.append(1)
        return {"fact_a": "F1", "fact_b": "F2", "kept": ["F1"], "margin": 0.25}

    d = DeferredData(build)
    assert calls == []
    assert d["fact_a"] == "F1" and d.get("missing") is None and len(d) == 4
    assert list(d) == ["fact_a", "fact_b", "kept", "margin"]
    assert calls == [1]
    assert d == build() and build() == d and d == DeferredData(build) and d != {"fact_a": "F1"}
    assert calls == [1, 1, 1, 1]  # the two comparisons' own dicts; ``d`` itself built once
    clone = pickle.loads(pickle.dumps(d))
    assert type(clone) is dict and clone == d
    assert copy.deepcopy(d) == d and json.loads(json.dumps(dict(d))) == d
    assert {k: v for k, v in d.items()} == build()


def test_pipeline_audit_events_equal_the_report_shape(tmp_path):

    from crp_core.config import CRPConfig
    from crp_core.corpus.prepared import embed_scenario, prepare_corpus
    from crp_core.io.ckf import load_ckf
    from crp_core.io.scenario import load_scenario
    from crp_core.pipeline import run_pipeline
    from crp_core.stages.contradictions.audit import conflict_event_data

    sample = REPO_ROOT / "sample_ckf"
    corpus = prepare_corpus(load_ckf(sample / "knowledge_base.jsonl"), config=CRPConfig(), cache_dir=tmp_path)
    scenario = load_scenario(sample / "scenarios" / "etcd_upgrade.json")
    result = run_pipeline(corpus, scenario, CRPConfig(), vectors=embed_scenario(scenario, corpus))
    events = [e for e in result.resolution.audit if e.event.startswith("CONTRADICTION_")]
    arbitrated = [p for p in result.resolution.pairs if not p.skipped]
    assert events and len(events) == len(arbitrated)
    for e, p in zip(events, arbitrated, strict=True):
        want = conflict_event_data(p, roles=dict(e.data["roles"]))
        assert dict(e.data) == want
        assert pickle.loads(pickle.dumps(e)) == e


def test_deferred_tuple_builds_once_on_first_read_and_behaves_as_its_tuple():
    calls = []

    def build():
        calls.append(1)
        return ("a", "b", "c")

    t = DeferredTuple(build)
    assert calls == []
    assert len(t) == 3 and t[0] == "a" and t[-1] == "c" and t[1:] == ("b", "c") and list(t) == ["a", "b", "c"]
    assert "b" in t and t.index("c") == 2 and t.count("a") == 1
    assert calls == [1]
    assert t == ("a", "b", "c") and ("a", "b", "c") == t and t != ("a",) and t == DeferredTuple(build)
    assert t != ["a", "b", "c"]  # a tuple, not a list
    clone = pickle.loads(pickle.dumps(t))
    assert type(clone) is tuple and clone == t and copy.deepcopy(t) == t


def test_pipeline_outcomes_are_fact_outcomes_built_when_read(tmp_path):

    import numpy as np

    from crp_core.config import CRPConfig
    from crp_core.corpus.prepared import embed_scenario, prepare_corpus
    from crp_core.io.ckf import load_ckf
    from crp_core.io.scenario import load_scenario
    from crp_core.outcomes import fact_outcomes
    from crp_core.pipeline import run_pipeline

    sample = REPO_ROOT / "sample_ckf"
    corpus = prepare_corpus(load_ckf(sample / "knowledge_base.jsonl"), config=CRPConfig(), cache_dir=tmp_path)
    scenario = load_scenario(sample / "scenarios" / "gdpr_breach_response.json")
    r = run_pipeline(corpus, scenario, CRPConfig(), vectors=embed_scenario(scenario, corpus))
    assert isinstance(r.outcomes, DeferredTuple) and not r.outcomes.built  # not built by the run
    roles = {int(a): "anchor" for a in np.concatenate([r.cdgr.anchors, r.cdgr.extra_anchors]).tolist()}
    roles.update({int(c): "connector" for c in r.cdgr.selected_connectors.tolist()})
    want = fact_outcomes(
        corpus,
        r.candidates,
        r.cdr,
        r.cdgr,
        r.resolution,
        r.envelope,
        roles,
        guarded={f.loser: f.message for f in r.known_conflicts},
    )
    assert r.outcomes == want and len(r.outcomes) == len(want) > 0
    assert pickle.loads(pickle.dumps(r.outcomes)) == want


def test_pipeline_graph_edges_are_listed_when_read(tmp_path):
    """Stage 3's edges among the selected facts are for drawing: the run leaves them unbuilt, and read they
    are ``edges_among`` of the anchors, extra anchors and selected connectors."""

    import numpy as np

    from crp_core.config import CRPConfig
    from crp_core.corpus.prepared import embed_scenario, prepare_corpus
    from crp_core.io.ckf import load_ckf
    from crp_core.io.scenario import load_scenario
    from crp_core.pipeline import run_pipeline
    from crp_core.stages.graph_walk import edges_among

    sample = REPO_ROOT / "sample_ckf"
    corpus = prepare_corpus(load_ckf(sample / "knowledge_base.jsonl"), config=CRPConfig(), cache_dir=tmp_path)
    scenario = load_scenario(sample / "scenarios" / "etcd_upgrade.json")
    r = run_pipeline(corpus, scenario, CRPConfig(), vectors=embed_scenario(scenario, corpus))
    edges = r.cdgr.graph_edges
    assert isinstance(edges, DeferredTuple) and not edges.built  # not built by the run
    rows = np.concatenate([r.cdgr.anchors, r.cdgr.extra_anchors, r.cdgr.selected_connectors])
    want = edges_among(corpus.graph(CRPConfig()).matrix, rows)
    assert edges == want and len(edges) > 0
    assert pickle.loads(pickle.dumps(edges)) == want


def test_pipeline_conflict_pairs_and_dropped_pairs_are_built_when_read():
    """Stage 4's pair records and audit events and stage 6's dropped pairs are read by the report and the
    dashboard, never by a stage: a run on 20 tied anchors (190 pairs, one tie group cut by the budget) leaves
    them unbuilt, and read they agree with what the run kept of them (the tied rows, the counts, the group)."""
    from crp_core.corpus.prepared import embed_scenario
    from crp_core.pipeline import run_pipeline
    from tests.support.tie_worlds import tied_cluster

    world = tied_cluster()
    scenario = world.scenario.replace(fanout_width=0)
    r = run_pipeline(world.corpus, scenario, world.config, vectors=embed_scenario(scenario, world.corpus))
    res, env = r.resolution, r.envelope
    lazy = (res.pairs, res.audit, res.notes, env.dropped_pairs)
    assert all(isinstance(x, DeferredTuple) and not x.built for x in lazy)
    assert r.headers["CRP-Context-Conflicts-Resolved"] == "153; unresolved=153"
    assert all(not x.built for x in lazy)  # the headers read the counts stage 4 kept
    index = world.corpus.kb.index_of
    tied = [(index(p.fact_a), index(p.fact_b)) for p in res.pairs if p.tied and not p.skipped]
    assert len(res.pairs) == 190 and res.tied_rows.tolist() == [list(t) for t in tied]
    assert res.detected == sum(1 for p in res.pairs if not p.skipped) == 190 == res.unresolved
    assert all(p.fact_a < p.fact_b for p in res.pairs) and len(res.audit) == 190 and len(res.notes) == 190
    (group,) = env.tie_groups
    left = set(group.left_out)
    want = [(a, b) for a, b in group.pairs if a in left or b in left]
    assert sorted(tuple(sorted((p.fact_a, p.fact_b))) for p in env.dropped_pairs) == want and len(want) == 190 - 153
    assert pickle.loads(pickle.dumps(env.dropped_pairs)) == tuple(env.dropped_pairs)
