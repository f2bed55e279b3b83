"""Stage 3 keeps a similarity graph's walk per anchor set (crp_core.stages.cdgr.WALKS_KEPT): a rerun reads the
same walk back, and the stage's result is the one a fresh walk gives."""

from __future__ import annotations

import numpy as np
import pytest

import crp_core.stages.cdgr as cdgr
from crp_core.corpus.prepared import embed_scenario
from crp_core.pipeline import run_pipeline
from tests.support.tie_worlds import tied_cluster


def _stage3(world, vectors):
    return run_pipeline(world.corpus, world.scenario.replace(fanout_width=0), world.config, vectors=vectors).cdgr


def _same(a, b) -> None:
    ca, cb = a.connectors, b.connectors
    for name in ("idx", "hop_distance", "mean_path_weight", "bridge_value", "connector_score", "selected"):
        x, y = getattr(ca, name), getattr(cb, name)
        assert x.dtype == y.dtype and np.array_equal(x, y, equal_nan=True), name
    assert tuple(ca.touched_anchors) == tuple(cb.touched_anchors)
    assert tuple(ca.bridged_pairs) == tuple(cb.bridged_pairs)
    assert np.array_equal(a.selected_connectors, b.selected_connectors)


def test_a_rerun_reads_the_walk_back_and_matches_a_fresh_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    world = tied_cluster(n=120, dim=32)
    vectors = embed_scenario(world.scenario, world.corpus)
    first = _stage3(world, vectors)
    again = _stage3(world, vectors)
    # the walk's arrays are the kept ones (read-only, shared), the result equal
    assert again.connectors.idx is first.connectors.idx or np.shares_memory(again.connectors.idx, first.connectors.idx)
    assert not first.connectors.bridge_value.flags.writeable
    _same(first, again)
    monkeypatch.setattr(cdgr, "WALKS_KEPT", 0)  # every run walks
    fresh = _stage3(world, vectors)
    assert not np.shares_memory(fresh.connectors.idx, first.connectors.idx)
    _same(first, fresh)


def test_another_anchor_set_walks_again() -> None:
    world = tied_cluster(n=120, dim=32)
    vectors = embed_scenario(world.scenario, world.corpus)
    first = _stage3(world, vectors)
    fewer = run_pipeline(
        world.corpus,
        world.scenario.replace(fanout_width=0),
        world.config.replace(envelope_fact_budget=world.config.envelope_fact_budget - 6),
        vectors=vectors,
    ).cdgr
    assert 0 < fewer.anchors.size < first.anchors.size
    assert not np.shares_memory(fewer.connectors.idx, first.connectors.idx)
