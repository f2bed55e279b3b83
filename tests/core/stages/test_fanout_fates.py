"""What becomes of each fan-in duplicate (SPEC-027 §1.6): the partitioned run's fan-in dedup removes the
extra copies of every duplicate (none reaches the model at any width), the naive race has no fan-in dedup
(every duplicate reaches the model); the two counts add up to the one duplicate count every view shows."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crp_core.config import CRPConfig
from crp_core.corpus.prepared import Corpus, prepare_corpus
from crp_core.factors.recency import compute_recency
from crp_core.io.ckf import load_ckf
from crp_core.io.scenario import load_scenario
from crp_core.pipeline import run_pipeline
from crp_core.records import BranchResult, Duplicate, FanoutRun
from crp_core.stages.cdr import score_cdr
from crp_core.stages.fanout import cross_branch_dedup
from crp_core.stages.fanout_steps import dedup_title
from tests.support.fanout_worlds import NOW, fanout_world
from tests.support.paths import REPO_ROOT

SAMPLE = REPO_ROOT / "sample_ckf"


def _branches(seed: int, n_branches: int, corpus: Corpus, config: CRPConfig) -> list[BranchResult]:
    rng = np.random.default_rng(seed)
    rec = compute_recency(corpus.kb, np.arange(30), NOW, config)
    out = []
    for b in range(n_branches):
        rows = rng.choice(30, int(rng.integers(0, 10)), replace=False)
        cdr = score_cdr(
            corpus,
            rows,
            rng.choice([0.2, 0.5, 0.9], rows.size),
            coverage=None,
            residual_vectors=None,
            blacklist=frozenset(),
            recency=rec,
            config=config,
        )
        chosen = tuple(corpus.kb.facts[int(r)].fact_id for r in rows)
        out.append(BranchResult(branch=b, sub_queries=(f"s{b}",), cdr=cdr, selected=chosen, coverage_additions=()))
    return out


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n_branches=st.integers(2, 5), dedup=st.sampled_from([0.0, 0.6, 0.95]))
def test_each_duplicate_is_removed_at_fan_in_only_by_a_dedup_run(seed, n_branches, dedup):
    kb, fvec, _, _, _ = fanout_world(seed, 30, 1, 0)
    config = CRPConfig().replace(fanin_dedup_similarity=dedup)
    corpus = Corpus.from_vectors(kb, fvec, "test", config)
    branches = _branches(seed, n_branches, corpus, config)
    with_dedup, merged = cross_branch_dedup(corpus, branches, config)
    without, merged_naive = cross_branch_dedup(corpus, branches, config, fan_in_dedup=False)
    assert merged == merged_naive
    assert [(d.fact_ids, d.kept) for d in with_dedup] == [(d.fact_ids, d.kept) for d in without]
    kept = set(merged)
    for d in with_dedup:
        named_kept = [f for f in d.fact_ids if f in kept]
        assert len(named_kept) <= 1  # the union never keeps two facts of one duplicate
        assert d.kept == (named_kept[0] if named_kept else None)
        assert d.removed_at_fan_in
    assert not any(d.removed_at_fan_in for d in without)
    run = FanoutRun("partitioned", (), tuple(branches), with_dedup, merged, 0)
    race = FanoutRun("naive", (), tuple(branches), without, merged, 0, fan_in_dedup=False)
    assert (run.removed_at_fan_in, run.reaching_model) == (len(with_dedup), 0)
    assert (race.removed_at_fan_in, race.reaching_model) == (0, len(without))


def test_dedup_titles_name_both_counts():
    dups = (Duplicate(("a",), (0, 1), 1.0, kept="a", removed_at_fan_in=True),)
    run = FanoutRun("partitioned", (), (), dups, ("a",), 3)
    assert dedup_title(run) == "Cross-branch dedup: 1 duplicate(s), 1 removed at fan-in, 0 reaching the model"
    race = FanoutRun("naive", (), (), (Duplicate(("a",), (0, 1), 1.0, kept="a"),), ("a",), 3, fan_in_dedup=False)
    assert dedup_title(race) == "Result: 1 duplicate(s) across branches, 1 reaching the model (no fan-in dedup)"


@pytest.fixture(scope="module")
def sample_corpus(tmp_path_factory):
    return prepare_corpus(load_ckf(SAMPLE / "knowledge_base.jsonl"), cache_dir=tmp_path_factory.mktemp("cache"))


@pytest.mark.parametrize(
    ("name", "width", "naive", "partitioned"),
    [
        ("payments_api_migration", 3, 7, 0),
        ("payments_api_migration", 4, 6, 1),
        ("gdpr_breach_response", 5, 2, 2),
        ("ai_act_compliance", 5, 6, 3),
    ],
)
def test_sample_duplicates_reach_the_model_only_in_the_race(sample_corpus, name, width, naive, partitioned):
    """The issue's figures: at width 4-5 the partitioned run has duplicates too, all removed at fan-in."""
    scenario = load_scenario(SAMPLE / "scenarios" / f"{name}.json").replace(fanout_width=width)
    fan = run_pipeline(sample_corpus, scenario, CRPConfig()).fanout
    assert fan is not None
    assert (fan.naive.duplicate_count, fan.naive.reaching_model, fan.naive.removed_at_fan_in) == (naive, naive, 0)
    assert (fan.partitioned.duplicate_count, fan.partitioned.removed_at_fan_in) == (partitioned, partitioned)
    assert fan.partitioned.reaching_model == 0
    dedup = fan.steps[-1]
    assert (
        dedup.kind == "dedup" and [d["removed_at_fan_in"] for d in dedup.detail["duplicates"]] == [True] * partitioned
    )
