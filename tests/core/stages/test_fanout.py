"""Stage 5 fan-out (SPEC-027 §1, docs/reference/pipeline.md §5): branch isolation, naive race, fan-in, steps, report.

Tiny corpora with explicit vectors over an orthonormal basis e0..e5 (every fact: importance 1.0,
ttl "none" so recency 1.0, no prior outputs so n-gram penalty 0; CDR = relevance-ish x novelty).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import numpy as np
import pytest

import crp_core.stages.branches as branches_module
from crp_core.config import CRPConfig
from crp_core.corpus.prepared import Corpus, embed_scenario
from crp_core.errors import SnapshotMutationError
from crp_core.factors.coverage import CoverageSet, CoverageSnapshot
from crp_core.factors.recency import compute_recency
from crp_core.headers import PARTITIONS as PARTITIONS_HEADER
from crp_core.model import Addressed, Fact, KnowledgeBase, Scenario, SubQuery
from crp_core.report import fanout_report
from crp_core.stages.fanout import cross_branch_dedup, run_fanout

NOW = datetime(2026, 6, 1, tzinfo=UTC)
E = np.eye(6)


def _kb(facts: dict[str, np.ndarray]) -> tuple[KnowledgeBase, np.ndarray]:
    kb = KnowledgeBase(
        facts=tuple(
            Fact(
                fact_id=fid,
                content=f"fact {fid} text",
                source_type="official_documentation",
                importance_weight=1.0,
                ttl_kind="timeless",
                ingested_at=NOW,
                modified_at=NOW,
            )
            for fid in facts
        )
    )
    return kb, np.stack(list(facts.values())).astype(np.float32)


def _scenario(subs: dict[str, np.ndarray], addressed: dict[str, float], width: int) -> Scenario:
    return Scenario(
        query="q",
        query_embedding=tuple(float(x) for x in E[0] + E[1]),
        now=NOW,
        sub_queries=tuple(
            SubQuery(id=k, text=f"sub-query {k}", embedding=tuple(float(x) for x in v)) for k, v in subs.items()
        ),
        addressed=tuple(Addressed(id=k, depth_weight=w, window=1) for k, w in addressed.items()),
        fanout_width=width,
    )


def _run(facts, subs, addressed, width, config, **kw):
    kb, vecs = _kb(facts)
    corpus = Corpus.from_vectors(kb, vecs, "test", config)
    scenario = _scenario(subs, addressed, width)
    vectors = embed_scenario(scenario, corpus)
    pool = np.arange(len(kb), dtype=np.int64)
    recency = compute_recency(kb, pool, NOW, config)
    result = run_fanout(corpus, scenario, vectors, pool, recency, frozenset(), config, **kw)
    return corpus, result


# Two topics: X (q0, q1) and Y (q2, q3), interleaved so that round-robin mixes them; C is covered.
TOPIC_SUBS = {"q0": E[0], "q1": E[0] + 0.1 * E[2], "q2": E[1], "q3": E[1] + 0.1 * E[3], "C": E[5]}
TOPIC_FACTS = {
    "x1": E[0],
    "x2": E[0] + 0.2 * E[5],  # leans on the covered topic C
    "x3": E[0] + 0.3 * E[2],
    "y1": E[1],
    "y2": E[1] + 0.4 * E[3],
    "y3": E[1] + 0.2 * E[5],
    "z": 0.6 * E[0] + 0.8 * E[1],  # passes both topics' gates
}
TOPIC_CFG = CRPConfig().replace(envelope_fact_budget=6)  # 2 branches: max(3, 6 // 2) = 3 facts each


@pytest.fixture(scope="module")
def topics():
    return _run(TOPIC_FACTS, TOPIC_SUBS, {"C": 0.9}, 2, TOPIC_CFG)


def _branch_score(corpus, branch, fid, field="cdr_score"):
    return float(getattr(branch.cdr, field)[branch.cdr.position(corpus.kb.index_of(fid))])


def test_partitions_follow_topics(topics):
    _, res = topics
    # ResidualSet order is q0 q1 q2 q3; k-means on the embeddings groups them by topic
    assert res.partitioned.partitions == (("q0", "q1"), ("q2", "q3"))
    assert res.rule == "k-means" and res.width == 2


def test_naive_assignment_is_round_robin(topics):
    _, res = topics
    # ResidualSet = (q0, q1, q2, q3): branch 0 gets positions 0, 2; branch 1 positions 1, 3 (topics mixed)
    assert res.naive.partitions == (("q0", "q2"), ("q1", "q3"))


def test_branch_scoring_uses_only_its_partition(topics):
    corpus, res = topics
    b0, b1 = res.partitioned.branches
    assert b0.sub_queries == ("q0", "q1") and b1.sub_queries == ("q2", "q3")
    rows0 = {corpus.kb.facts[int(r)].fact_id for r in b0.cdr.idx}
    rows1 = {corpus.kb.facts[int(r)].fact_id for r in b1.cdr.idx}
    # Y facts have cosine 0 with q0/q1: gated out of branch 0 (and X facts out of branch 1)
    assert rows0 == {"x1", "x2", "x3", "z"}
    assert rows1 == {"y1", "y2", "y3", "z"}
    assert not set(b0.selected) & {"y1", "y2", "y3"}
    # z: relevance_b over q0,q1 = max(0.6, 0.6 / sqrt(1.01) = 0.5970) = 0.6; residual pull over the
    # partition only = 0.6 (over the whole ResidualSet it would be 0.8, cos(z, q2))
    assert _branch_score(corpus, b0, "z", "relevance") == pytest.approx(0.6, abs=1e-6)
    assert _branch_score(corpus, b0, "z", "residual_pull") == pytest.approx(0.6, abs=1e-6)
    assert _branch_score(corpus, b1, "z", "residual_pull") == pytest.approx(0.8, abs=1e-6)
    # x2 = (e0 + 0.2 e5)/sqrt(1.04): relevance 1/sqrt(1.04) = 0.9805807; coverage_score against C (the one
    # entry) = 0.2/sqrt(1.04) = 0.1961161 -> novelty 0.8038839;
    # CDR = 1/sqrt(1.04) * (1 - 0.2/sqrt(1.04)) = 0.9805807 - 0.2/1.04 = 0.9805807 - 0.1923077 = 0.7882730
    assert _branch_score(corpus, b0, "x2", "novelty") == pytest.approx(0.8038839, abs=1e-6)
    assert _branch_score(corpus, b0, "x2") == pytest.approx(0.7882730, abs=1e-6)
    # x3 = (e0 + 0.3 e2)/sqrt(1.09), q1 = (e0 + 0.1 e2)/sqrt(1.01): cos = 1.03 / sqrt(1.09 * 1.01) = 0.9816650
    assert _branch_score(corpus, b0, "x3") == pytest.approx(0.9816650, abs=1e-6)
    # branch 0: x1 1.0 > x3 0.98167 > x2 0.78827 > z 0.6; branch 1: y1 1.0 > y2 0.96082 > z 0.8 > y3 0.78827
    # (y2: cos with q3 = 1.04 / sqrt(1.16 * 1.01) = 0.9608236)
    assert b0.selected == ("x1", "x3", "x2")
    assert b1.selected == ("y1", "y2", "z")
    assert _branch_score(corpus, b1, "y2") == pytest.approx(0.9608236, abs=1e-6)


def test_naive_duplicates_where_partitioned_has_none(topics):
    corpus, res = topics
    assert res.partitioned.duplicates == ()
    assert res.partitioned.merged == ("x1", "x3", "x2", "y1", "y2", "z")
    n0, n1 = res.naive.branches
    # every naive branch passes every fact through its mixed-topic gate and pulls towards the whole
    # ResidualSet: effective relevance = max over q0..q3, so both rank x1 = y1 = 1.0 > x3 0.98167
    assert n0.selected == ("x1", "y1", "x3") and n1.selected == ("x1", "y1", "x3")
    assert _branch_score(corpus, n0, "z", "residual_pull") == pytest.approx(0.8, abs=1e-6)
    dups = {(d.fact_ids, d.branches) for d in res.naive.duplicates}
    # three facts chosen twice, plus x1 ~ x3 across branches: cos = 1/sqrt(1.09) = 0.9578 > 0.92
    assert dups == {(("x1",), (0, 1)), (("y1",), (0, 1)), (("x3",), (0, 1)), (("x1", "x3"), (0, 1))}
    near = [d for d in res.naive.duplicates if len(d.fact_ids) == 2][0]
    assert near.similarity == pytest.approx(0.9578263, abs=1e-6)
    assert res.naive.merged == ("x1", "y1")  # x3 dropped: linked to the higher-scoring x1


def test_coverage_depth_after_merge(topics):
    _, res = topics
    # addressed (C) + ResidualSet (q0 q1 q2 q3) = 1 + 4
    assert res.partitioned.coverage_depth == 5
    assert res.naive.coverage_depth == 5
    assert res.partitioned.branches[0].coverage_additions == ("q0", "q1")
    assert res.partitioned.branches[1].coverage_additions == ("q2", "q3")


# ---- fan-in dedup: a same-fact duplicate and a cos > 0.92 pair -----------------------------------------
DEDUP_SUBS = {"qa": E[0], "qb": E[1]}
DEDUP_FACTS = {
    "a1": E[0],
    "w1": E[0] + 0.8 * E[1],
    "w": E[0] + E[1],
    "b1": E[1],
    "w2": 0.8 * E[0] + E[1],
}


def test_fanin_dedup_same_fact_and_near_pair():
    corpus, res = _run(DEDUP_FACTS, DEDUP_SUBS, {}, 2, CRPConfig())
    run = res.partitioned
    assert run.partitions == (("qa",), ("qb",))
    assert res.rule == "one sub-query per partition"
    # empty Coverage Set: novelty 1, residual pull 0 (SPEC-024 §2.7), CDR = relevance_b.
    # branch qa: a1 1.0 > w1 1/sqrt(1.64) = 0.78087 > w 0.70711 > w2 0.8/sqrt(1.64) = 0.62470 (all >= 0.55)
    # budget max(3, 20 // 2) = 10 -> all four pass and are chosen; make it 3 to get a sharp cut:
    assert [b.selected for b in run.branches] == [("a1", "w1", "w", "w2"), ("b1", "w2", "w", "w1")]
    corpus, res = _run(DEDUP_FACTS, DEDUP_SUBS, {}, 2, CRPConfig().replace(envelope_fact_budget=2))
    run = res.partitioned
    assert [b.selected for b in run.branches] == [("a1", "w1", "w"), ("b1", "w2", "w")]
    got = {(d.fact_ids, d.branches): d.similarity for d in run.duplicates}
    # w in both branches; cos(w1, w) = 1.8 / sqrt(2 * 1.64) = 0.9938837; cos(w1, w2) = 1.6 / 1.64 = 0.9756098;
    # cos(w, w2) = 0.9938837; a1/b1 pairs stay below 0.92 (0.78087, 0.70711, 0.62470, 0)
    assert set(got) == {(("w",), (0, 1)), (("w1", "w"), (0, 1)), (("w1", "w2"), (0, 1)), (("w", "w2"), (0, 1))}
    assert got[(("w",), (0, 1))] == 1.0
    assert got[(("w1", "w"), (0, 1))] == pytest.approx(0.9938837, abs=1e-6)
    assert got[(("w1", "w2"), (0, 1))] == pytest.approx(0.9756098, abs=1e-6)
    # kept once: by score a1 = b1 = 1.0, w1 = w2 = 0.78087 (w1 first), w 0.70711; w2 and w link to w1
    assert run.merged == ("a1", "w1", "b1")
    assert run.coverage_depth == 2


def test_same_branch_near_pair_is_not_a_cross_branch_duplicate():
    # x1 and x3 (cos 0.9578) are both chosen by partitioned branch 0 only: no duplicate reported
    corpus, res = _run(TOPIC_FACTS, TOPIC_SUBS, {"C": 0.9}, 2, TOPIC_CFG)
    dups, merged = cross_branch_dedup(corpus, res.partitioned.branches[:1], TOPIC_CFG)
    assert dups == () and merged == ("x1", "x3", "x2")


def test_threshold_comes_from_config():
    # raise fanin_dedup_similarity above every near pair: only the same-fact duplicate remains
    cfg = CRPConfig().replace(envelope_fact_budget=2, fanin_dedup_similarity=0.995)
    _, res = _run(DEDUP_FACTS, DEDUP_SUBS, {}, 2, cfg)
    assert [d.fact_ids for d in res.partitioned.duplicates] == [("w",)]
    assert res.partitioned.merged == ("a1", "w1", "w", "b1", "w2")


# ---- snapshot discipline (SPEC-027 §1.5) -----------------------------------------------------------------
def test_branches_receive_a_read_only_snapshot(monkeypatch):
    received, scored_with = [], []
    real = branches_module.score_cdr  # what a branch scores with (stage 2)

    def spy(*args, **kwargs):
        scored_with.append(kwargs["coverage"])
        return real(*args, **kwargs)

    monkeypatch.setattr(branches_module, "score_cdr", spy)
    _run(TOPIC_FACTS, TOPIC_SUBS, {"C": 0.9}, 2, TOPIC_CFG, branch_probe=lambda b, snap: received.append((b, snap)))
    assert [b for b, _ in received] == [0, 1]
    snaps = [s for _, s in received]
    assert all(isinstance(s, CoverageSnapshot) for s in snaps)
    assert snaps[0] is not snaps[1]  # one snapshot per branch
    # partitioned branches score against exactly the snapshot they received; naive against the shared set
    assert scored_with[0] is snaps[0] and scored_with[1] is snaps[1]
    assert all(isinstance(c, CoverageSet) for c in scored_with[2:]) and scored_with[2] is scored_with[3]
    snap = snaps[0]
    assert snap.ids == ("C",)
    entry = snap.entries[0]
    attempts = [
        lambda: setattr(snap, "entries", ()),
        lambda: snap.append(entry),
        lambda: snap.extend([entry]),
        lambda: snap.insert(0, entry),
        lambda: snap.remove(entry),
        lambda: snap.pop(),
        lambda: snap.clear(),
        lambda: snap.__setitem__(0, entry),
        lambda: snap.__delitem__(0),
        lambda: snap.__iadd__([entry]),
        lambda: delattr(snap, "entries"),
        lambda: snap.embeddings.__setitem__((0, 0), 0.5),
        lambda: snap.embeddings.fill(0.0),
        lambda: snap.depth_weights.__setitem__(0, 0.1),
        lambda: snap.embeddings.setflags(write=True),
        lambda: np.copyto(snap.embeddings, 0.0),
        lambda: np.add(snap.embeddings, 1, out=snap.embeddings),
        lambda: setattr(entry, "depth_weight", 0.1),
        lambda: entry.embedding.__setitem__(0, 9.0),
    ]
    for attempt in attempts:
        with pytest.raises(SnapshotMutationError):
            attempt()
    assert snap.ids == ("C",) and float(snap.depth_weights[0]) == 0.9  # unchanged


def test_inactive_fanout_returns_none():
    kb, vecs = _kb(TOPIC_FACTS)
    corpus = Corpus.from_vectors(kb, vecs, "test", TOPIC_CFG)
    pool = np.arange(len(kb))
    for width, addressed in (
        (1, {"C": 0.9}),
        (0, {"C": 0.9}),
        (3, {k: 0.9 for k in TOPIC_SUBS}),
    ):  # all addressed: empty ResidualSet
        scenario = _scenario(TOPIC_SUBS, addressed, width)
        vectors = embed_scenario(scenario, corpus)
        assert (
            run_fanout(
                corpus, scenario, vectors, pool, compute_recency(kb, pool, NOW, TOPIC_CFG), frozenset(), TOPIC_CFG
            )
            is None
        )
    report = fanout_report(None, {"CRP-Context-Coverage-Depth": "1", PARTITIONS_HEADER: "2"})
    assert report["active"] is False and PARTITIONS_HEADER not in report["headers"]


def test_width_argument_overrides_scenario_and_pool_filters_unretrievable():
    kb, vecs = _kb(TOPIC_FACTS)
    kb = kb.with_statuses({"x1": "DELETED"})
    corpus = Corpus.from_vectors(kb, vecs, "test", TOPIC_CFG)
    scenario = _scenario(TOPIC_SUBS, {"C": 0.9}, 0)
    vectors = embed_scenario(scenario, corpus)
    pool = np.arange(len(kb))
    # recency given for part of the pool only: the rest is computed with `now`
    res = run_fanout(
        corpus, scenario, vectors, pool, compute_recency(kb, pool[:2], NOW, TOPIC_CFG), frozenset(), TOPIC_CFG, width=2
    )
    assert res is not None and res.width == 2
    assert all("x1" not in b.selected for b in res.partitioned.branches + res.naive.branches)
    assert res.partitioned.branches[0].selected == ("x3", "x2", "z")


# ---- steps for the stepper ---------------------------------------------------------------------------------
def test_partitioned_steps(topics):
    _, res = topics
    steps = res.steps
    assert [s.kind for s in steps] == [
        "parent",
        "partition",
        "snapshot",
        "snapshot",
        "retrieval",
        "retrieval",
        "additions",
        "additions",
        "merge",
        "dedup",
    ]
    assert [s.branch for s in steps] == [None, None, 0, 1, 0, 1, 0, 1, None, None]
    assert [s.index for s in steps] == list(range(10))
    assert steps[0].coverage == ("C",) and steps[0].added == ("C",)
    assert steps[1].detail["partitions"] == [["q0", "q1"], ["q2", "q3"]] and steps[1].detail["rule"] == "k-means"
    assert all(s.coverage == ("C",) and s.added == () for s in steps[2:6])  # snapshots and reads: parent only
    assert steps[2].detail["read_only"] is True
    assert steps[4].facts == ("x1", "x3", "x2") and steps[5].facts == ("y1", "y2", "z")
    z = [r for r in steps[5].detail["scores"] if r["fact_id"] == "z"][0]
    assert z["relevance"] == pytest.approx(0.8, abs=1e-6) and z["residual_pull"] == pytest.approx(0.8, abs=1e-6)
    # branch-local additions: branch 1 does not see branch 0's entries
    assert steps[6].coverage == ("C", "q0", "q1") and steps[6].added == ("q0", "q1")
    assert steps[7].coverage == ("C", "q2", "q3") and steps[7].added == ("q2", "q3")
    assert steps[8].coverage == ("C", "q0", "q1", "q2", "q3")
    assert steps[8].added == ("q0", "q1", "q2", "q3")  # the fan-in union, against the parent lane
    assert steps[8].detail["coverage_depth"] == 5
    assert steps[9].facts == res.partitioned.merged and steps[9].detail["duplicates"] == []
    for s in steps:  # `added` = this step's coverage minus the step it is compared with
        base = set(steps[s.detail["since_step"]].coverage) if s.detail["since_step"] is not None else set()
        assert set(s.added) == set(s.coverage) - base
        if s.kind != "merge":  # the literal previous step gives the same difference
            prev = set(steps[s.index - 1].coverage) if s.index else set()
            assert set(s.added) == set(s.coverage) - prev


def test_naive_steps_mirror_the_race(topics):
    _, res = topics
    steps = res.naive_steps
    assert [(s.kind, s.branch, s.detail["time"]) for s in steps] == [
        ("parent", None, "T0"),
        ("retrieval", 0, "T1"),
        ("retrieval", 1, "T1"),
        ("additions", 0, "T2"),
        ("additions", 1, "T2"),
        ("dedup", None, "Result"),
    ]
    assert steps[1].coverage == steps[2].coverage == ("C",)  # both read the same shared set
    assert steps[1].detail["chosen_by_other_branches"] == {"x1": [1], "y1": [1], "x3": [1]}
    assert steps[3].coverage == ("C", "q0", "q2") and steps[4].coverage == ("C", "q0", "q2", "q1", "q3")
    assert len(steps[5].detail["duplicates"]) == 4
    for s in steps:
        prev = set(steps[s.index - 1].coverage) if s.index else set()
        assert set(s.added) == set(s.coverage) - prev


# ---- report (docs/reference/reports.md) ------------------------------------------------------------------------------
def test_report(topics):
    _, res = topics
    rep = fanout_report(res, {"CRP-Context-Coverage-Depth": "1"})
    assert rep["headers"] == {PARTITIONS_HEADER: "2", "CRP-Context-Coverage-Depth": "1"}
    assert list(rep["headers"])[0] == PARTITIONS_HEADER
    assert rep["partitions"] == [["q0", "q1"], ["q2", "q3"]]
    assert rep["branches"][1] == {
        "branch": 1,
        "sub_queries": ["q2", "q3"],
        "selected": ["y1", "y2", "z"],
        "roles": {"y1": "anchor", "y2": "anchor", "z": "anchor"},
        "coverage_additions": ["q2", "q3"],
    }
    assert rep["fan_in"] == {
        "duplicates": [],
        "dedup": True,
        "duplicates_removed_at_fan_in": 0,
        "duplicates_reaching_model": 0,
        "merged": ["x1", "x3", "x2", "y1", "y2", "z"],
        "coverage_depth": 5,
    }
    naive = rep["naive"]
    assert naive["partitions"] == [["q0", "q2"], ["q1", "q3"]]
    # the race has no fan-in dedup: every duplicate reaches the model
    x1 = {"fact_ids": ["x1"], "branches": [0, 1], "similarity": 1.0, "kept": "x1", "removed_at_fan_in": False}
    x3 = {"fact_ids": ["x3"], "branches": [0, 1], "similarity": 1.0, "kept": None, "removed_at_fan_in": False}
    assert x1 in naive["fan_in"]["duplicates"] and x3 in naive["fan_in"]["duplicates"]
    n = len(naive["fan_in"]["duplicates"])
    assert (naive["fan_in"]["dedup"], naive["fan_in"]["duplicates_reaching_model"]) == (False, n)
    assert naive["fan_in"]["duplicates_removed_at_fan_in"] == 0
    text = json.dumps(rep, allow_nan=False)
    assert json.dumps(fanout_report(res, {"CRP-Context-Coverage-Depth": "1"}), allow_nan=False) == text
